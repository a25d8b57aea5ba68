"""Where a webgpu tensor meets PyTorch's Python machinery: printing, fork safety, multiprocessing
queues and torch.compile's default backend. Each hook is installed once, at import.
"""

import os
import warnings

import torch

from . import _C

# --- printing ----------------------------------------------------------------------------------
# PyTorch's formatter measures values on the tensor's own device in float64 (float32 only for
# MPS/XPU-without-fp64/MAIA), which WebGPU lacks. As torch does for xla/lazy/mtia, the contents of
# a webgpu tensor are formatted from a CPU copy; the suffixes (device='webgpu:0', dtype,
# requires_grad, grad_fn) still come from the webgpu tensor. A summarised tensor is copied whole:
# the formatter indexes the full shape.


def _install_printing():
    import torch._tensor_str as ts

    original = ts._tensor_str
    if getattr(original, "_webgpu", False):
        return

    def _tensor_str(self, indent):
        if self.device.type == "webgpu":
            self = self.cpu()
        return original(self, indent)

    _tensor_str._webgpu = True
    ts._tensor_str = _tensor_str


# --- fork --------------------------------------------------------------------------------------
# Dawn's device and threads do not survive fork(): a child forked after the parent created a
# device is marked, and every device use there raises (csrc/core/core.h) instead of hanging.

_parent_has_device = False
_parent_device_count = 0


def _before_fork():
    global _parent_has_device, _parent_device_count
    _parent_has_device = not _C._in_bad_fork() and _C._devices_created() > 0
    if _parent_has_device:
        _parent_device_count = _C._device_count()


def _after_fork_in_child():
    if _parent_has_device:
        _C._set_bad_fork()


def _install_fork_hooks():
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


# --- multiprocessing ---------------------------------------------------------------------------
# torch.multiprocessing shares CPU tensors through shared memory and CUDA tensors through CUDA IPC.
# WebGPU has no IPC: a webgpu tensor put on a multiprocessing queue travels through the CPU (shared
# memory would tie the sender's lifetime to the receiver's; the bytes are pickled inline) and is
# rebuilt on the same webgpu device index by the receiver.


def _host_bytes(cpu):
    """The bytes of a CPU tensor, in a plain bytes object: pickled inline, so the sender may exit
    before the receiver reads them (shared memory would tie the two lifetimes)."""
    flat = cpu.contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def _from_host_bytes(data, dtype, shape):
    if not data:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).view(dtype).reshape(shape)


def _rebuild_webgpu_tensor(cls, data, dtype, shape, device, requires_grad):
    t = _from_host_bytes(data, dtype, shape).to(device)
    if cls is torch.nn.Parameter:
        return torch.nn.Parameter(t, requires_grad=requires_grad)
    t.requires_grad_(requires_grad)
    return t


def _rebuild_webgpu_storage(data, device):
    return _from_host_bytes(data, torch.uint8, (len(data),)).to(device).untyped_storage()


def _install_reductions():
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing  # noqa: F401  (registers torch's own reducers first)
    from torch.nn.parameter import Parameter

    for cls in (torch.Tensor, Parameter):
        base = ForkingPickler._extra_reducers.get(cls)
        if base is None or getattr(base, "_webgpu", False):
            continue

        def reduce(t, base=base):
            if t.device.type != "webgpu":
                return base(t)
            if t.requires_grad and not t.is_leaf:
                return base(t)  # torch's reducer raises its "non-leaf tensor" error
            torch.utils.hooks.warn_if_has_hooks(t)
            cls_ = torch.nn.Parameter if isinstance(t, torch.nn.Parameter) else torch.Tensor
            return (
                _rebuild_webgpu_tensor,
                (cls_, _host_bytes(t.detach().cpu()), t.dtype, tuple(t.shape), str(t.device), t.requires_grad),
            )

        reduce._webgpu = True
        ForkingPickler.register(cls, reduce)

    base = ForkingPickler._extra_reducers.get(torch.UntypedStorage)
    if base is not None and not getattr(base, "_webgpu", False):

        def reduce_storage(s, base=base):
            if s.device.type != "webgpu":
                return base(s)
            cpu = torch.empty(0, dtype=torch.uint8).set_(s.cpu())
            return (_rebuild_webgpu_storage, (_host_bytes(cpu), str(s.device)))

        reduce_storage._webgpu = True
        ForkingPickler.register(torch.UntypedStorage, reduce_storage)


# --- torch.compile -----------------------------------------------------------------------------
# torch.compile's default backend (Inductor) compiles graphs on webgpu with torch_webgpu._inductor:
# pointwise and reduction nodes become generated WGSL kernels, matmul/convolution/attention stay
# calls to the eager kernels (docs/design.md, "torch.compile"). A graph the WGSL generator cannot
# compile runs with the eager kernels (a warning names why). If Inductor itself cannot be set up for
# webgpu (a torch whose Inductor lacks what the backend needs), graphs on webgpu run with
# backend="aot_eager" instead, with a one-time warning. TORCH_WEBGPU_COMPILE=aot_eager forces that.
# CPU graphs still go to Inductor unchanged.

_compile_warned = False


def _graph_uses_webgpu(gm, inputs):
    def on_webgpu(v):
        return isinstance(v, torch.Tensor) and v.device.type == "webgpu"

    if any(on_webgpu(x) for x in inputs):
        return True
    for node in getattr(getattr(gm, "graph", None), "nodes", ()):
        for key in ("val", "example_value"):
            vals = node.meta.get(key)
            for v in vals if isinstance(vals, (list, tuple)) else (vals,):
                if on_webgpu(v):
                    return True
    return False


def _aot_eager(model_, inputs_, why):
    global _compile_warned
    if not _compile_warned:
        _compile_warned = True
        warnings.warn(
            f'torch.compile: {why}; graphs on webgpu run with backend="aot_eager" instead (same results, '
            'no kernel fusion). Pass backend="aot_eager" to torch.compile to silence this warning.',
            stacklevel=3,
        )
    from torch._dynamo.backends.debugging import aot_eager

    return aot_eager(model_, inputs_)


def _install_compile_backend():
    wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
    if wrapper is None or getattr(wrapper.__call__, "_webgpu", False):
        return
    original = wrapper.__call__

    def __call__(self, model_, inputs_, **kwargs):
        if not _graph_uses_webgpu(model_, inputs_):
            return original(self, model_, inputs_, **kwargs)
        if os.environ.get("TORCH_WEBGPU_COMPILE", "") == "aot_eager":
            return _aot_eager(model_, inputs_, "TORCH_WEBGPU_COMPILE=aot_eager")
        try:
            from ._inductor import compile_fx_webgpu, register

            register()
        except Exception as e:  # noqa: BLE001  (an Inductor without the registration hooks we use)
            return _aot_eager(model_, inputs_, f"Inductor cannot generate code for webgpu here ({e})")
        return compile_fx_webgpu(model_, inputs_, config_patches=getattr(self, "config", None))

    __call__._webgpu = True
    wrapper.__call__ = __call__


class _ScaleAsDouble:
    """What ``scale.double()`` stands for inside ``GradScaler.unscale_`` on webgpu (no float64 there):
    the chain ``.reciprocal().float()`` gives the correctly rounded float32 ``1/scale`` (what the float64
    reciprocal rounded to float32 is), computed on the device by ``webgpu::_amp_inv_scale``."""

    def __init__(self, t, inverted=False):
        self._t, self._inverted = t, inverted

    def reciprocal(self):
        if self._inverted:
            raise RuntimeError("torch_webgpu: unexpected use of the GradScaler scale as float64")
        return _ScaleAsDouble(torch.ops.webgpu._amp_inv_scale(self._t), True)

    def float(self):
        return self._t if self._inverted else self._t.clone()

    def __getattr__(self, name):
        raise RuntimeError(
            f"torch_webgpu: GradScaler.unscale_ used scale.double().{name}; webgpu has no float64 and supports "
            "only scale.double().reciprocal().float() there (this torch's GradScaler is not one it knows)"
        )


class _GradScalerF64Mode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if (
            func is torch.Tensor.double
            and len(args) == 1
            and not kwargs
            and isinstance(args[0], torch.Tensor)
            and args[0].device.type == "webgpu"
            and args[0].dtype == torch.float32
            and args[0].numel() == 1
        ):
            return _ScaleAsDouble(args[0])
        return func(*args, **(kwargs or {}))


def _install_grad_scaler():
    """GradScaler.unscale_ takes ``inv_scale = scale.double().reciprocal().float()`` (CUDA's exact
    reciprocal) for every device but MPS. On a webgpu scaler that expression is served by the mode
    above, so the scaler stays on the device without host synchronisation and gives CUDA's inv_scale."""
    cls = torch.amp.GradScaler
    if getattr(cls.unscale_, "_webgpu", False):
        return
    original = cls.unscale_

    def unscale_(self, optimizer):
        if getattr(self, "_enabled", False) and torch.device(self._device).type == "webgpu":
            with _GradScalerF64Mode():
                return original(self, optimizer)
        return original(self, optimizer)

    unscale_._webgpu = True
    unscale_.__doc__ = original.__doc__
    cls.unscale_ = unscale_


def install():
    _install_printing()
    _install_fork_hooks()
    _install_reductions()
    _install_compile_backend()
    _install_grad_scaler()
