"""Inductor for the webgpu device: registration, and the compile entry that torch.compile's default
backend uses for graphs on webgpu (torch_webgpu/_integration.py).

compile_fx_webgpu runs Inductor's compile_fx with an inner compiler that, per graph (forward and
backward separately), generates WGSL kernels; where the generator cannot express a node (int64
buffers, an op without a WGSL form, ...) that graph runs with the eager kernels instead (the
aten graph AOT autograd produced, as backend="aot_eager" would), with a warning naming the reason.
TORCH_WEBGPU_COMPILE_STRICT=1 raises instead (tests).
"""

import contextlib
import logging
import os
import warnings

import torch

_registered = False


def _device_op_overrides():
    from torch._inductor.codegen.common import DeviceOpOverrides

    class WebGPUDeviceOpOverrides(DeviceOpOverrides):
        def import_get_raw_stream_as(self, name):
            return f"def {name}(idx): return 0"

        def set_device(self, device_idx):
            return f"torch.webgpu.set_device({device_idx})"

        def synchronize(self):
            return "torch.webgpu.synchronize()"

        def device_guard(self, device_idx):
            return f"torch.webgpu.device({device_idx})"

    return WebGPUDeviceOpOverrides()


def _device_interface():
    from collections import namedtuple

    from torch._dynamo.device_interface import DeviceInterface

    class WebGPUInterface(DeviceInterface):
        @staticmethod
        def is_available():
            return torch.webgpu.is_available()

        @staticmethod
        def device_count():
            return torch.webgpu.device_count()

        @staticmethod
        def current_device():
            return torch.webgpu.current_device()

        @staticmethod
        def set_device(device):
            torch.webgpu.set_device(device)

        @staticmethod
        def synchronize(device=None):
            torch.webgpu.synchronize(device)

        @staticmethod
        def is_bf16_supported(including_emulation=False):
            return True

        @classmethod
        def is_dtype_supported(cls, dtype, including_emulation=False):
            return dtype not in (torch.float64, torch.complex64, torch.complex128)

        @staticmethod
        def get_compute_capability(device=None):
            return ""

        class Worker:
            @staticmethod
            def get_device_properties(device=None):
                # Inductor sizes split reductions by this count (the partial sums of one reduction).
                return namedtuple("WebGPUProperties", ["multi_processor_count"])(64)

            @staticmethod
            def current_device():
                return torch.webgpu.current_device()

    return WebGPUInterface


def register():
    """Registers the WGSL scheduling and the Python wrapper for the "webgpu" device (idempotent)."""
    global _registered
    if _registered:
        return
    from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen

    from .wgsl import WGSLScheduling

    register_backend_for_device("webgpu", WGSLScheduling, PythonWrapperCodegen)
    register_device_op_overrides("webgpu", _device_op_overrides())
    from torch._dynamo.device_interface import register_interface_for_device

    register_interface_for_device("webgpu", _device_interface())
    _register_eager_lowerings()
    _registered = True


_warned = set()


def _warn_fallback(reason):
    if reason in _warned:
        return
    _warned.add(reason)
    warnings.warn(
        "torch.compile on webgpu: a graph runs with the eager kernels (no generated WGSL) because the "
        f"WGSL code generator cannot compile it: {reason}",
        stacklevel=3,
    )


class _QuietCodegenErrors:
    """Inductor's scheduler logs a failed kernel's whole IR at CRITICAL before re-raising; here that
    failure means "run this graph on the eager kernels", which _warn_fallback reports in one line."""

    def __enter__(self):
        self.log = logging.getLogger("torch._inductor.scheduler")
        self.level = self.log.level
        self.log.setLevel(logging.CRITICAL + 1)

    def __exit__(self, *exc):
        self.log.setLevel(self.level)


def _copy_graph_module(gm):
    g = torch.fx.Graph()
    out = g.graph_copy(gm.graph, {})
    g.output(out)
    return torch.fx.GraphModule(gm, g)


def _strict():
    return os.environ.get("TORCH_WEBGPU_COMPILE_STRICT", "0") not in ("", "0")


def _reason(e):
    """Why Inductor could not compile a webgpu graph: the code generator's NotImplementedError where
    there is one, else the error itself (an Inductor of another version failing inside our hooks,
    say): the graph then runs on the eager kernels rather than failing the program."""
    first = e
    while e is not None:
        if isinstance(e, NotImplementedError):
            return str(e) or type(e).__name__
        e = e.__cause__ or e.__context__
    return f"{type(first).__name__}: {str(first).splitlines()[0] if str(first) else ''}"


def _binding_limit():
    """The adapter's maxStorageBufferBindingSize (bytes): the largest buffer one binding can hold."""
    global _BINDING_LIMIT
    if _BINDING_LIMIT is None:
        _BINDING_LIMIT = int(torch.webgpu.info().get("limits", {}).get("maxStorageBufferBindingSize", 1 << 27))
    return _BINDING_LIMIT


_BINDING_LIMIT = None


def _check_operand_sizes(example_inputs):
    """Generated kernels bind each operand's buffer whole, while the eager kernels split operands past
    the adapter's binding limit (128 MiB on lavapipe: GPT-2's 154 MB embedding table, say). A graph
    with such an input is refused here, at compile time, and so runs on the eager kernels (or raises
    this clear error with TORCH_WEBGPU_COMPILE_STRICT=1) instead of failing at its first launch."""
    limit = _binding_limit()
    for x in example_inputs:
        if not isinstance(x, torch.Tensor) or x.device.type != "webgpu":
            continue
        try:  # a fake input's storage size; symbolic sizes (dynamic shapes) are not checked here
            nbytes = x.untyped_storage().nbytes()
            nbytes = int(nbytes) if isinstance(nbytes, int) else None
        except Exception:  # noqa: BLE001
            nbytes = None
        if nbytes is not None and nbytes > limit:
            raise NotImplementedError(
                f"an input of {nbytes} bytes (shape {list(x.shape)}, {x.dtype}) is past this adapter's "
                f"storage binding limit of {limit} bytes, and generated kernels bind operands whole"
            )


def compile_fx_webgpu(model, example_inputs, config_patches=None):
    register()
    from torch._inductor import config as inductor_config
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    def inner_compile(gm, example_inputs, **kwargs):
        eager = _copy_graph_module(gm)
        quiet = _QuietCodegenErrors() if not _strict() else contextlib.nullcontext()
        try:
            # the backward graph compiles at the first backward call, outside compile_fx: patch again
            with inductor_config.patch(patches), quiet:
                _check_operand_sizes(example_inputs)
                return compile_fx_inner(gm, example_inputs, **kwargs)
        except Exception as e:  # noqa: BLE001
            if _strict():
                raise
            reason = _reason(e)
            _warn_fallback(reason)

            def run(args):
                return torch.fx.Interpreter(eager).boxed_run(args)

            run._boxed_call = True
            return run

    patches = dict(config_patches or {})
    # Kernel sources are not part of Inductor's cache keys for an out-of-tree device: compile anew.
    patches.setdefault("fx_graph_cache", False)
    # Random ops stay calls to the eager RNG kernels (same streams as eager).
    patches.setdefault("fallback_random", True)
    # Value ranges of every intermediate: int64 values are computed in 32 bits where these bound them.
    patches.setdefault("compute_all_bounds", True)
    patches["triton.cudagraphs"] = False  # mode="reduce-overhead": no CUDA graphs on webgpu
    # No channels-last layout optimization: the eager convolutions take NCHW (a channels-last operand
    # is copied back to contiguous inside conv), so Inductor's conversions of inputs, weights and
    # conv outputs to channels-last were pure copies, twice per conv and step (the CNN training step
    # of benchmarks/probe_compile.py: 112 dispatches per step with it, 74 without).
    patches.setdefault("layout_optimization", False)
    # Horizontal fusion of kernels over the same range that read the same buffers at different
    # places (Inductor's default asks for 10 bytes read in common at the same index): at the sizes a
    # dispatch's host cost decides, one kernel beats several. The q, k and v of a fused qkv
    # projection (each copied into the layout attention wants, with the projection's split-K sum
    # and bias) become one kernel instead of three.
    patches.setdefault("score_fusion_memory_threshold", 0)
    patches.setdefault("aggressive_fusion", True)
    with inductor_config.patch(patches):
        return compile_fx(model, example_inputs, inner_compile=inner_compile, decompositions=_decompositions())


# Ops that stay calls to the eager kernels instead of being decomposed: training batch_norm, whose
# eager kernels are per-channel passes (wgsl/kernels/batch_norm.wgsl: 5 dispatches for forward and
# backward) where the decomposition's reductions and [C]-sized pointwise kernels took many more.
# Evaluation-mode batch_norm stays decomposed: it is pointwise and fuses with its neighbours.
_EAGER_OPS = (
    "native_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_functional",
    "_batch_norm_with_update",
    "_batch_norm_with_update_functional",
    "native_batch_norm_backward",
    "batch_norm_backward",
)


def _eager_overloads():
    for name in _EAGER_OPS:
        packet = getattr(torch.ops.aten, name, None)
        if packet is not None:
            yield from (getattr(packet, o) for o in packet.overloads())


def _register_eager_lowerings():
    """Explicit fallback lowerings for _EAGER_OPS. Without them Inductor creates implicit ones when it
    meets these ops (which _decompositions leaves undecomposed), and with the environment variable CI
    set (as CI systems do) its implicit make_fallback refuses any op that has a decomposition: every
    graph with a training batch_norm then failed to compile. The layout constraints are the ones the
    implicit path would pick (contiguous inputs for backward ops). Other devices never reach these
    lowerings: their graphs are decomposed with Inductor's full table before lowering."""
    from torch._inductor import lowering as L
    from torch._library.utils import get_layout_constraint_tag

    for op in _eager_overloads():
        if op in L.lowerings:
            continue
        if "backward" in op.name():
            constraint = L.require_contiguous
        else:
            constraint = L.tag_to_layout_constraint(get_layout_constraint_tag(op, with_default=True))
        L.make_fallback(op, layout_constraint=constraint, warn=False, override_decomp=True)


def _split_k_parts(M, N, K):
    """How many parts of K the eager GEMM engine would sum for an f32 [M, K] @ [K, N]
    (engines/gemm.cpp, tiled_gemm with its default tiles: split-K when the output's tiles are fewer
    than half of 256 workgroups, parts of at least 64), made an even split (K divisible by it, parts a
    multiple of 4 elements); 0 where it would not split, or the shape takes another kernel (mat-vec)."""
    if M <= 1 or N <= 1 or K < 128:
        return 0

    def tiles(bm, bn):
        return -(-M // bm) * -(-N // bn)

    if M <= 16:
        t = tiles(16, 128)
    elif tiles(128, 128) >= 120:
        t = tiles(128, 128)
    else:
        t = tiles(64, 64)
    if t * 2 >= 256:
        return 0
    for s in range(min(-(-256 // t), K // 64), 1, -1):
        if K % s == 0 and (K // s) % 4 == 0:
            return s
    return 0


def _split_k_mm(a, b):
    """a @ b as the sum of its split-K parts, where the eager engine would split K: one batched GEMM
    writes the parts ([parts, M, N], the batch reading strided slices of a and b: no copies) and the
    sum is pointwise adds over the parts, which Inductor fuses with what follows (bias, gelu,
    residual add, even the next layer_norm's reduction) into one generated kernel. The eager engine
    sums the parts in an epilogue dispatch of its own, which no generated kernel could take in.
    None where the engine would not split (or sizes are symbolic)."""
    if a.device.type != "webgpu" or a.dim() != 2 or b.dim() != 2:
        return None
    if a.dtype != torch.float32 or b.dtype != torch.float32:
        return None
    M, K = a.shape
    N = b.shape[1]
    if not all(type(x) is int for x in (M, K, N)):
        return None
    s = _split_k_parts(M, N, K)
    if not s:
        return None
    p = torch.ops.aten.bmm(a.unflatten(1, (s, K // s)).transpose(0, 1), b.unflatten(0, (s, K // s)))
    out = p[0]
    for i in range(1, s):
        out = out + p[i]
    return out


def _mm_decomposition(fallback):
    def mm(a, b, *args, **kwargs):
        if not args and not kwargs:
            out = _split_k_mm(a, b)
            if out is not None:
                return out
        return fallback(a, b, *args, **kwargs) if fallback is not None else NotImplemented

    return mm


def _addmm_decomposition(fallback):
    def addmm(c, a, b, *args, beta=1, alpha=1, **kwargs):
        if not args and not kwargs:
            out = _split_k_mm(a, b)
            if out is not None:
                if alpha != 1:
                    out = out * alpha
                if beta == 0:  # addmm's rule: with beta 0, c (NaN and inf included) is not read
                    return out
                return out + (c if beta == 1 else c * beta)
        return fallback(c, a, b, *args, beta=beta, alpha=alpha, **kwargs) if fallback is not None else NotImplemented

    return addmm


def _decompositions():
    from torch._inductor.decomposition import select_decomp_table

    table = dict(select_decomp_table())
    eager = set(_eager_overloads())
    table = {op: fn for op, fn in table.items() if op not in eager}
    # GEMMs the eager engine splits along K: the parts' sum becomes part of the generated epilogue
    # (_split_k_mm). TORCH_WEBGPU_COMPILE_SPLIT_K=0 leaves them extern calls with the engine's epilogue.
    if os.environ.get("TORCH_WEBGPU_COMPILE_SPLIT_K", "1") != "0":
        aten = torch.ops.aten
        table[aten.mm.default] = _mm_decomposition(table.get(aten.mm.default))
        table[aten.addmm.default] = _addmm_decomposition(table.get(aten.addmm.default))
    return table
