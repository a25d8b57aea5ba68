"""The OpInfo conformance harness: run PyTorch's own op samples on CPU and on webgpu and compare.

Shared by tests/test_opinfo.py (pytest) and tools/gen_ops_md.py (docs/ops.md). How "native" is
decided: each sample runs on webgpu with the CPU fallback off. The dispatcher sends an operator with
no webgpu kernel to the fallback, which then raises NotImplementedError naming it; a native kernel
that refuses a dtype raises NotImplementedError naming webgpu too. Either way that sample is
"fallback", read from the dispatcher at run time, not from a hand-kept list, and it works for
composite ops (whose pieces may or may not be native) as well as for direct kernels.

Per (entry, dtype, variant) the samples give a Result: passed / fallback / unsupported / failures.
An entry is native for a dtype when at least one sample ran natively. If others reached a missing
kernel it is "partial": its native samples must still match (a mismatch fails), but the case is
reported (skip in pytest, "partial" in docs/ops.md) rather than passed, so a pass means every sample
ran on a webgpu kernel.
"""

import collections
import dataclasses
import os
import random
import re
import unittest
import zlib

import numpy
import torch
import torch.utils._pytree as pytree
from known_failures import KNOWN_FAILURES
from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
from torch.testing._internal.common_methods_invocations import op_db
from webgpu_env import DEV as DEVICE
from webgpu_env import COMPLEX_DTYPES, DTYPES, UINT_FP8_DTYPES

import torch_webgpu  # noqa: F401  (registers the device and torch.ops.webgpu)
from torch_webgpu.fallback import fallback_enabled

# Dtypes the webgpu device holds: the compute dtypes, emulated float64, the unsigned and float8
# types (few ops), complex64 as pairs of float32.
ALL_DTYPES = DTYPES + (torch.float64,) + UINT_FP8_DTYPES + COMPLEX_DTYPES

# TORCH_WEBGPU_OPINFO=full: every dtype, every reference sample. Default (CI): a bounded subset that
# still visits every entry: four dtypes that cover the kernel families, at most a few samples each.
FULL = os.environ.get("TORCH_WEBGPU_OPINFO", "").lower() == "full"
CI_DTYPES = (torch.float32, torch.float16, torch.int64, torch.bool)
# Emulated float64 in the CI subset for a few entries only (its kernels are slow on lavapipe).
CI_F64_ENTRIES = (
    "add",
    "mul",
    "sqrt",
    "exp",
    "log",
    "where",
    "clamp",
    "eq",
    "sum",
    "amax",
    "argmax",
    "var",
    "cumsum",
    "sort",
)
CI_MAX_SAMPLES = 4
MODE_DTYPES = ALL_DTYPES if FULL else CI_DTYPES
MODE_MAX_SAMPLES = None if FULL else CI_MAX_SAMPLES

VARIANTS = ("op", "noncontig", "inplace", "out", "grad")  # per dtype; "errors" is per entry

# Comparison tolerances (atol, rtol). float32 keeps a little headroom over assert_close's defaults
# (1e-5, 1.3e-6) for GPU summation order; half types compare a kernel that may compute in half
# precision against a CPU that computes in float32 and rounds once. Integers and bool are exact.
DEFAULT_TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}

# Half-precision gradients: a broadcast input's gradient is a sum of rounded half products, whose
# cancellation CPU and GPU round differently (addcmul float16: 0.035 on 0.21). Gross errors still show.
HALF_GRAD_TOL = (5e-2, 5e-2)

# Per-entry tolerances beyond the defaults and the OpInfo's own overrides, with the reason:
# {("op name", torch.float32): ((atol, rtol), "why")}. Keep it short; every row is a claim.
_BN_BF16 = (
    "bfloat16 batch norm: CPU rounds its per-channel affine terms (alpha = invstd * weight, "
    "beta = bias - mean * alpha) to bfloat16 on its non-contiguous path and keeps them in float on "
    "the contiguous one; webgpu keeps them in float: outputs differ by up to 8 bfloat16 ulps"
)
TOLERANCES = {
    ("native_batch_norm", torch.bfloat16): ((7e-2, 1.6e-2), _BN_BF16),
    ("_native_batch_norm_legit", torch.bfloat16): ((7e-2, 1.6e-2), _BN_BF16),
    ("_batch_norm_with_update", torch.bfloat16): ((7e-2, 1.6e-2), _BN_BF16),
    ("nn.functional.batch_norm", torch.bfloat16): ((7e-2, 1.6e-2), _BN_BF16),
    ("nn.functional.instance_norm", torch.bfloat16): ((7e-2, 1.6e-2), _BN_BF16),
    ("nn.functional.interpolate.bicubic", torch.float32): (
        (5e-4, 1e-4),
        "345x456 -> 270x270: CPU forms the source coordinate scale * (o + 0.5) - 0.5 as a fused "
        "multiply-add and lavapipe's WGSL fma is unfused; the outputs differ by up to 3.6e-4 (as bilinear's)",
    ),
    ("nn.functional.ctc_loss", torch.float32): (
        (1e-4, 1e-4),
        "the gradient is exp(lp) - exp(lcab + nll - lp), two nearly equal terms after 50 steps of "
        "log-sum-exp: CPU's float32 gradients are up to 1.2e-4 from a float64 reference on these "
        "samples and ours as far; the two differ by up to 4.7e-5",
    ),
    ("nn.functional.interpolate.bilinear", torch.float32): (
        (5e-4, 1e-4),
        "345x456 -> 270x270: float32 source coordinates round differently from CPU's; both are "
        "3.0e-4 from a float64 reference",
    ),
}
# grid_sample's 345x456 reference samples (values up to 255): float32 source coordinates round apart; CPU
# and webgpu are each up to 9.3e-3 from a float64 reference and differ by up to 7.8e-3 (reflection).
TOLERANCES[("nn.functional.grid_sample", torch.float32)] = ((1e-2, 1e-4), "float32 coordinates on 345x456 images")
# grid_sampler_2d/3d float32 gradients on the H100 (not lavapipe): the bicubic grid gradient (16 weighted
# terms per channel) 3.2e-5 off CPU's in 1 of 520 elements (NVIDIA fuses the products into fma), and the
# 3-d input gradient, a sum over every grid point that samples a voxel, 2.7e-5 off in 3 of 480480 (another
# summation order). PyTorch's own MPS gradient tolerances for these entries are 2e-5 and 1e-3 absolute.
for _name in ("grid_sampler_2d", "grid_sampler_3d"):
    TOLERANCES[(_name, torch.float32)] = ((1e-4, 1e-4), "float32 gradient sums in another order, fused products")
# lstsq's gradient is PyTorch's formula over pinv (an SVD): on OpInfo's samples CPU's float32 gradients
# are up to 1.2e-4 from a float64 reference and ours up to 1.4e-4; the two differ by up to 2.3e-4.
for _name in ("linalg.lstsq", "linalg.lstsq.grad_oriented"):
    TOLERANCES[(_name, torch.float32)] = ((3e-4, 1e-4), "gradients through pinv: float32 SVD rounding")
# hfft2 over three dims (5x6x7 -> 5x6x12): sums of 360 terms of magnitude up to ~60, in another order
# than pocketfft's (Stockham, Bluestein), differ by up to 4.6e-5 absolute: float32 FFT rounding.
for _dt in (torch.complex64, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool):
    TOLERANCES[("fft.hfft2", _dt)] = ((1e-4, 1e-4), "float32 FFT rounding over 360 points (another summation order)")

# OpInfo tests whose skips (DecorateInfo(unittest.skip(...), "TestCommon", test)) we honour per
# variant. test_compare_cpu is PyTorch's own "device vs CPU" test: its skips mark entries whose
# output is not comparable across devices (random ops, undefined outputs) and apply to every variant.
_OPINFO_TESTS = {
    "op": ("test_compare_cpu",),
    "noncontig": ("test_compare_cpu", "test_noncontiguous_samples"),
    "inplace": ("test_compare_cpu",),
    "out": ("test_compare_cpu", "test_out"),
    "grad": ("test_compare_cpu",),
    "errors": ("test_errors",),
}


def full_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def entries():
    """Every op_db entry, in op_db order, with a unique name."""
    seen = set()
    for op in op_db:
        name = full_name(op)
        if name not in seen:
            seen.add(name)
            yield op


def has_variant(op, dtype, variant):
    """Whether the entry has this variant at all for dtype (else its case is not generated)."""
    if variant == "inplace":
        return op.inplace_variant is not None
    if variant == "out":
        return op.supports_out
    if variant == "grad":
        return op.supports_autograd and dtype in op.supported_backward_dtypes("cpu")
    return True


def known_failure(name, dtype, variant):
    """The reason listed in tests/known_failures.py for (entry, dtype, variant), or None."""
    for d in (dtype, "*"):
        for v in (variant, "*"):
            if (name, d, v) in KNOWN_FAILURES:
                return KNOWN_FAILURES[(name, d, v)]
    return None


def dtypes_for(op, dtypes=None):
    """The dtypes of `dtypes` (default: the mode's) that both the CPU entry and webgpu support."""
    cpu = op.supported_dtypes("cpu")
    mode = MODE_DTYPES
    if not FULL and op.name.startswith("fft."):
        mode = CI_DTYPES + COMPLEX_DTYPES  # the FFT entries: complex64 is their own dtype
    if not FULL and full_name(op) in CI_F64_ENTRIES:
        mode = mode + (torch.float64,)
    return [d for d in (dtypes or mode) if d in cpu]


# ---- OpInfo metadata -------------------------------------------------------------------------------


def _active(di, test, dtype):
    return di.is_active("TestCommon", test, DEVICE, dtype, {})


def opinfo_skip(op, variant, dtype=None):
    """The OpInfo's reason to skip this variant on a device (see _OPINFO_TESTS), or None."""
    for di in op.decorators:
        if not hasattr(di, "is_active"):
            continue
        for test in _OPINFO_TESTS[variant]:
            if di.test_name is None or not _active(di, test, dtype):
                continue
            for dec in di.decorators:
                if "skip" in getattr(dec, "__qualname__", ""):
                    return f"OpInfo skips TestCommon.{test} for {full_name(op)}"
                # An expected failure of test_errors on every device means the error inputs are
                # wrong, not a device: they do not raise on CPU either.
                if test == "test_errors" and dec is unittest.expectedFailure:
                    return f"OpInfo expects TestCommon.{test} to fail for {full_name(op)} on every device"
    return None


def tolerance(op, dtype, result_dtype=None):
    """(atol, rtol) for comparing a result of dtype result_dtype (default: dtype) of a sample of
    dtype: the defaults for the result dtype; for a floating sample, raised to any OpInfo override for
    TestCommon on a GPU-like device and to TOLERANCES. Integer and bool results compare exactly."""
    result_dtype = result_dtype or dtype
    if not (result_dtype.is_floating_point or result_dtype.is_complex):
        return 0.0, 0.0
    if result_dtype.itemsize == 1:  # float8: assert_close compares them bitwise only
        return 0.0, 0.0
    atol, rtol = DEFAULT_TOL.get(result_dtype, DEFAULT_TOL[torch.float32])
    if not (dtype.is_floating_point or dtype.is_complex):
        if (full_name(op), dtype) in TOLERANCES:  # an integer sample with a floating result
            (a, r), _ = TOLERANCES[(full_name(op), dtype)]
            return max(atol, a), max(rtol, r)
        return atol, rtol
    for di in op.decorators:
        if not hasattr(di, "is_active") or di.cls_name not in (None, "TestCommon"):
            continue
        if di.device_type not in (None, "cuda", DEVICE) or (di.dtypes is not None and dtype not in di.dtypes):
            continue
        for dec in di.decorators:
            if isinstance(dec, toleranceOverride) and dtype in dec.d:
                atol, rtol = max(atol, dec.d[dtype].atol), max(rtol, dec.d[dtype].rtol)
            elif isinstance(dec, precisionOverride) and dtype in dec.d:
                atol = max(atol, dec.d[dtype])
    if (full_name(op), dtype) in TOLERANCES:
        (a, r), _ = TOLERANCES[(full_name(op), dtype)]
        atol, rtol = max(atol, a), max(rtol, r)
    return atol, rtol


# The samples of the last few (entry, dtype): the variants of one (entry, dtype) run back to back.
# Unbounded, full mode's reference inputs over every dtype fill 20+ GB.
_SAMPLE_CACHE = collections.OrderedDict()
_SAMPLE_CACHE_SIZE = 8


def seed_everything(seed):
    # The CPU generator only: torch.manual_seed would also queue a lazy seeding call (with a stack
    # trace) for CUDA, XPU and MTIA each time, which costs milliseconds and grows without bound.
    torch.random.default_generator.manual_seed(seed)
    random.seed(seed)
    numpy.random.seed(seed % 2**32)


def _raw_inputs(op, dtype):
    # OpInfo's sample_inputs()/reference_inputs()/error_inputs() wrap these generators in a tracker
    # that calls inspect.stack() (reading source files for every frame) to find the running test:
    # over 100 ms each under pytest. The generators themselves are all we need.
    if FULL and op.reference_inputs_func is not None:
        return op.reference_inputs_func(op, "cpu", dtype, False)
    return op.sample_inputs_func(op, "cpu", dtype, False)


def _on_cpu(sample):
    """On a machine with CUDA, OpInfo puts some sample tensors there (`to`'s `other` tensor, which
    then means "the accelerator"): they start on the CPU like the rest, so the webgpu run moves them
    to webgpu and the reference keeps them on the CPU."""

    def back(x):
        return x.cpu() if isinstance(x, torch.Tensor) and x.device.type == "cuda" else x

    parts = (sample.input, sample.args, sample.kwargs)
    if any(isinstance(x, torch.Tensor) and x.device.type == "cuda" for x in pytree.tree_leaves(parts)):
        # (only then: tree_map would rebuild a torch.Size argument as a tuple)
        sample.input, sample.args, sample.kwargs = pytree.tree_map(back, parts)
    return sample


def samples(op, dtype, max_samples=None, seed=0):
    """CPU samples for (op, dtype): sample_inputs (reference_inputs in full mode). With max_samples,
    that many spread evenly over the list (first and last included): OpInfo lists go from plain to
    tricky (scalars, broadcasting, empty tensors), so the first few alone would miss the latter.
    Cached per (op, dtype, max_samples): the variants reuse them, and no variant mutates them."""
    key = (full_name(op), dtype, max_samples)
    if key in _SAMPLE_CACHE:
        _SAMPLE_CACHE.move_to_end(key)
    else:
        seed_everything(seed)
        all_ = [_on_cpu(s) for s in _raw_inputs(op, dtype)]
        if max_samples is not None and len(all_) > max_samples:
            if max_samples == 1:
                picks = [0]
            else:
                picks = sorted({round(i * (len(all_) - 1) / (max_samples - 1)) for i in range(max_samples)})
            all_ = [all_[i] for i in picks]
        _SAMPLE_CACHE[key] = all_
        while len(_SAMPLE_CACHE) > _SAMPLE_CACHE_SIZE:
            _SAMPLE_CACHE.popitem(last=False)
    return _SAMPLE_CACHE[key]


# ---- moving values between devices -----------------------------------------------------------------


class Unsupported(Exception):
    """The sample (or its CPU result) holds a dtype the webgpu device cannot hold."""


def _check_dtype(t):
    if t.dtype not in ALL_DTYPES:
        raise Unsupported(f"holds a {dtype_name(t.dtype)} tensor")
    if t.layout != torch.strided:
        raise Unsupported(f"holds a {t.layout} tensor")


def may_overlap(t):
    """Whether two elements of t may share memory (False is certain; True may be conservative)."""
    dims = sorted((st, n) for st, n in zip(t.stride(), t.shape) if n > 1)
    reach = 0  # the largest offset the smaller-stride dims reach
    for st, n in dims:
        if st <= reach:
            return True
        reach += st * (n - 1)
    return False


def _relayout(tree, make_base, bases):
    """Each tensor of tree rebuilt over make_base(a flat tensor over its whole storage), keeping
    sizes, strides, storage offset and the storage sharing between tensors (bases memoizes)."""

    def move(x):
        if isinstance(x, torch.Tensor) and x.device.type == "meta":
            return x  # a sample's deliberately foreign-device tensor (error inputs) stays where it is
        if isinstance(x, torch.Tensor):
            _check_dtype(x)
            x = x.detach().resolve_conj().resolve_neg()
            st = x.untyped_storage()
            key = (st.data_ptr(), x.dtype)
            if key not in bases or st.data_ptr() == 0:
                flat = torch.empty(0, dtype=x.dtype).set_(st, 0, (st.nbytes() // x.element_size(),), (1,))
                bases[key] = make_base(flat)
            return bases[key].as_strided(x.shape, x.stride(), x.storage_offset())
        return x

    return pytree.tree_map(move, tree)


def to_webgpu(tree, bases=None):
    """CPU values -> webgpu, keeping each tensor's exact layout: the whole storage is copied, gaps
    included, so a kernel that ignores strides reads the gap values (NaN in noncontiguous samples),
    not the right ones; tensors sharing storage on CPU share it on webgpu."""
    return _relayout(tree, lambda flat: flat.to(DEVICE), {} if bases is None else bases)


def clone_layout(tree):
    """A CPU copy of tree's tensors, same layout and sharing, over copies of their storages."""
    return _relayout(tree, lambda flat: flat.clone(), {})


# Sample arguments that the op's contract wants on the CPU, by entry and position in args. OpInfo
# builds them with torch.tensor(...) and no device, which a CPU-generated sample cannot tell apart.
CPU_ARGS = {
    "tensor_split": (0,),  # tensor_indices_or_sections must be a CPU tensor
}


def _split(op, sample):
    keep = CPU_ARGS.get(full_name(op), ())
    return keep, (sample.input, tuple(a for i, a in enumerate(sample.args) if i not in keep), sample.kwargs)


def _join(op, sample, moved):
    keep = CPU_ARGS.get(full_name(op), ())
    inp, rest, kwargs = moved
    rest = iter(rest)
    args = tuple(a if i in keep else next(rest) for i, a in enumerate(sample.args))
    return inp, args, kwargs


def move_sample(op, sample):
    """(input, args, kwargs) of a CPU sample, on webgpu, in one move (storage shared across them
    stays shared)."""
    _, parts = _split(op, sample)
    return _retarget(*_join(op, sample, to_webgpu(parts)), DEVICE)


def _retarget(inp, args, kwargs, device):
    """Device arguments of a sample pointed at `device`. Factory entries take device= and `to`
    takes it positionally (`to('cpu', torch.float64)`); on a machine with CUDA, OpInfo adds samples
    naming 'cuda' (`new_ones(..., device='cuda')`, `to('cuda:0')`), which mean "the accelerator"."""

    def point(a):
        if isinstance(a, (str, torch.device)):
            try:
                dev = torch.device(a)
            except RuntimeError:
                return a  # a string argument that is not a device (a reduction mode, ...)
            if dev.type in ("cpu", "cuda", DEVICE):
                return device
        return a

    kwargs = {**kwargs, "device": point(kwargs["device"])} if "device" in kwargs else kwargs
    return inp, tuple(point(a) for a in args), kwargs


def cpu_copy(op, sample):
    """(input, args, kwargs) of a CPU sample, copied: the CPU reference may mutate them (in-place
    entries like zero_), and the cached sample must stay as generated."""
    _, parts = _split(op, sample)
    return _retarget(*_join(op, sample, clone_layout(parts)), "cpu")


def to_cpu(tree, where):
    """webgpu results -> CPU; a tensor result that is not on webgpu is itself a failure."""
    if not any(isinstance(x, torch.Tensor) for x in pytree.tree_leaves(tree)):
        return tree  # as is: tree_map would rebuild a torch.Size as a tuple

    def back(x):
        if isinstance(x, torch.Tensor):
            assert x.device.type == DEVICE, f"{where}: result tensor is on {x.device}, expected {DEVICE}"
            return x.cpu()
        return x

    return pytree.tree_map(back, tree)


def check_result_dtypes(tree):
    for x in pytree.tree_leaves(tree):
        if isinstance(x, torch.Tensor):
            _check_dtype(x)


# ---- running one sample ----------------------------------------------------------------------------

_NO_KERNEL = re.compile(r"operator (\S+) has no webgpu kernel|'(\S+)' with arguments from the 'webgpu'")


def classify_exception(e):
    """'fallback: <op>' for a missing kernel (or a kernel refusing this case), 'unsupported: ...' for
    a dtype the device cannot hold, None for a real error."""
    msg = str(e)
    if isinstance(e, NotImplementedError):
        # Ours name the operator; ATen's own (e.g. "convolution_overrideable not implemented", the
        # stub for devices without a convolution) do not, but mean the same: no kernel for this.
        m = _NO_KERNEL.search(msg)
        return "fallback: " + (m.group(1) or m.group(2) if m else (msg.splitlines() or [""])[0][:100])
    if isinstance(e, TypeError) and "not supported on the webgpu device" in msg:
        return "unsupported: " + msg.splitlines()[0][:120]
    return None


class Skip(Exception):
    """The sample does not apply to this variant (the CPU run itself refuses it)."""


def assert_same(actual, expected, op, dtype, where, grad=False, half=False):
    """assert_close, leaf by leaf, each with the tolerance of its own dtype (an int64 sample of sin
    gives float32 results)."""
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    assert a_spec == e_spec, f"{where}: result structure {a_spec} differs from CPU's {e_spec}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if e is None or isinstance(e, (str, torch.dtype, torch.device)):
            assert a == e or (isinstance(e, torch.device) and a.type == DEVICE), f"{where}: result {i}: {a!r} != {e!r}"
            continue
        if isinstance(e, torch.Tensor):
            atol, rtol = tolerance(op, dtype, e.dtype)
            if grad and (half or e.dtype in (torch.float16, torch.bfloat16)) and e.dtype.is_floating_point:
                atol, rtol = max(atol, HALF_GRAD_TOL[0]), max(rtol, HALF_GRAD_TOL[1])
        else:
            atol, rtol = tolerance(op, dtype, torch.float32 if isinstance(e, float) else torch.int64)
        torch.testing.assert_close(
            a, e, atol=atol, rtol=rtol, equal_nan=True, check_device=True, msg=lambda m: f"{where}: result {i}: {m}"
        )


# Ops whose index output CPU leaves unspecified among equal elements (its stable=False sort, topk,
# kthvalue and mode order ties as their std::sort/nth_element happen to; webgpu sorts stably): the
# index leaf is checked by the input values it selects (gathered along dim), not by equality.
# entry: (position of dim in args, position of keepdim in args or None, index of the index leaf).
TIE_INDEX_OPS = {
    "sort": (0, None, 1),
    "argsort": (0, None, 0),
    "topk": (1, None, 1),
    "kthvalue": (1, 2, 1),
    "mode": (0, 1, 1),
}


def align_tie_indices(op, inp, args, kwargs, actual, expected):
    """actual (on the CPU) with its index leaf replaced by CPU's when both select the same values."""
    spec = TIE_INDEX_OPS.get(full_name(op))
    if spec is None or not isinstance(inp, torch.Tensor) or inp.dim() == 0:
        return actual
    dim_pos, keep_pos, leaf = spec
    dim = args[dim_pos] if len(args) > dim_pos else kwargs.get("dim", -1)
    keepdim = True
    if keep_pos is not None:
        keepdim = args[keep_pos] if len(args) > keep_pos else kwargs.get("keepdim", False)
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves = pytree.tree_leaves(expected)
    if len(a_leaves) <= leaf or len(e_leaves) != len(a_leaves):
        return actual
    ia, ie = a_leaves[leaf], e_leaves[leaf]
    if not (
        isinstance(ia, torch.Tensor)
        and isinstance(ie, torch.Tensor)
        and ia.dtype == ie.dtype == torch.long
        and ia.shape == ie.shape
    ) or torch.equal(ia, ie):
        return actual
    dim = dim % inp.dim()
    if not keepdim:
        ia, ie = ia.unsqueeze(dim), ie.unsqueeze(dim)
    if ia.numel() and (ia.min() < 0 or ia.max() >= inp.size(dim)):
        return actual
    va, ve = inp.gather(dim, ia), inp.gather(dim, ie)
    same = (
        torch.equal(va, ve)
        if not va.is_floating_point()
        else torch.equal(torch.where(va.isnan(), 0, va), torch.where(ve.isnan(), 0, ve))
        and torch.equal(va.isnan(), ve.isnan())
    )
    if same:
        a_leaves[leaf] = e_leaves[leaf]
        return pytree.tree_unflatten(a_leaves, a_spec)
    return actual


def _call_cpu(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        raise Skip(f"CPU raises {type(e).__name__}") from e


def run_sample(op, sample, dtype, variant):
    """Runs one CPU sample on CPU and webgpu and compares; raises AssertionError (or the webgpu
    exception) on a mismatch, Skip / Unsupported when it does not apply, and lets the webgpu
    NotImplementedError of a missing kernel through (classify_exception reads it)."""
    where = f"{full_name(op)} {dtype_name(dtype)} {variant} on {sample.summary()[:300]}"
    if variant == "noncontig":
        sample = sample.noncontiguous()
    post = sample.output_process_fn_grad

    # Move first, from the pristine sample; the CPU reference then runs on its own copy.
    inp, args, kwargs = move_sample(op, sample)
    if kwargs.get("device") != DEVICE and not any(
        isinstance(x, torch.Tensor) and x.device.type == DEVICE for x in pytree.tree_leaves((inp, args, kwargs))
    ):
        raise Skip("no webgpu tensor or device in the sample (a factory call without device=)")
    c_inp, c_args, c_kwargs = cpu_copy(op, sample)

    if variant in ("op", "noncontig"):
        expected = post(_call_cpu(op, c_inp, *c_args, **c_kwargs))
        check_result_dtypes(expected)
        actual = post(op(inp, *args, **kwargs))
        actual = align_tie_indices(op, c_inp, c_args, c_kwargs, to_cpu(actual, where), expected)
        assert_same(actual, expected, op, dtype, where)

    elif variant == "inplace":
        fn = op.inplace_variant
        if not isinstance(sample.input, torch.Tensor):
            raise Skip("input is not a tensor")
        if may_overlap(sample.input):
            # e.g. strides (1, 1, 7): CPU applies the op again to an element already written, a
            # parallel kernel reads every input first; neither is wrong.
            raise Skip("in-place on an input whose elements share memory: the result depends on order")
        _call_cpu(fn, c_inp, *c_args, **c_kwargs)
        check_result_dtypes(c_inp)
        actual = fn(inp, *args, **kwargs)
        assert actual is inp, f"{where}: the in-place variant returned a new tensor, not its input"
        assert_same(to_cpu(inp, where), c_inp, op, dtype, where + " (mutated input)")

    elif variant == "out":
        result = _call_cpu(op, c_inp, *c_args, **c_kwargs)
        leaves = result if isinstance(result, (tuple, list)) else (result,)
        if not leaves or not all(isinstance(t, torch.Tensor) for t in leaves):
            raise Skip("result is not a tensor or a tuple of tensors")
        check_result_dtypes(result)

        # Out tensors of the result's shape and layout holding wrong values (7, or True), so a kernel
        # that leaves elements unwritten is caught; CPU fills its own set the same way, and a sample
        # whose out= call CPU refuses (where with Python scalars has no out overload) is skipped.
        def fresh_outs():
            return tuple(torch.full_like(t, 7) if t.dtype != torch.bool else torch.ones_like(t) for t in leaves)

        as_tuple = isinstance(result, (tuple, list))
        c_outs = fresh_outs()
        o_inp, o_args, o_kwargs = cpu_copy(op, sample)
        _call_cpu(op, o_inp, *o_args, **o_kwargs, out=c_outs if as_tuple else c_outs[0])
        outs = tuple(to_webgpu(t) for t in fresh_outs())
        out = outs if as_tuple else outs[0]
        actual = op(inp, *args, **kwargs, out=out)
        if actual is None:
            pass  # out= ops with no return (split_with_sizes_copy.out -> ()), as on CPU
        elif as_tuple:
            assert all(a is o for a, o in zip(actual, out)), f"{where}: out= variant did not return its out tensors"
        else:
            assert actual is out, f"{where}: out= variant did not return its out tensor"
        got = align_tie_indices(op, o_inp, o_args, o_kwargs, to_cpu(out, where), c_outs if as_tuple else c_outs[0])
        assert_same(got, c_outs if as_tuple else c_outs[0], op, dtype, where)

    elif variant == "grad":
        # Gradients of every floating input, for a random gradient of every differentiable output.
        def inputs_requiring_grad(tree):
            ts = [x for x in pytree.tree_leaves(tree) if isinstance(x, torch.Tensor) and x.dtype.is_floating_point]
            for t in ts:
                t.requires_grad_(True)
            return ts

        def differentiable(out):
            return [o for o in pytree.tree_leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad]

        c_ts = inputs_requiring_grad((c_inp, c_args, c_kwargs))
        w_ts = inputs_requiring_grad((inp, args, kwargs))
        if not c_ts:
            raise Skip("no floating input")
        c_outs = differentiable(post(_call_cpu(op, c_inp, *c_args, **c_kwargs)))
        if not c_outs:
            raise Skip("no differentiable output")
        gen = torch.Generator().manual_seed(0)
        grad_outs = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in c_outs]
        expected = list(_call_cpu(torch.autograd.grad, c_outs, c_ts, grad_outs, allow_unused=True))
        check_result_dtypes([g for g in expected if g is not None])
        w_outs = differentiable(post(op(inp, *args, **kwargs)))
        assert len(w_outs) == len(c_outs), f"{where}: {len(w_outs)} differentiable outputs, CPU has {len(c_outs)}"
        actual = torch.autograd.grad(w_outs, w_ts, to_webgpu(grad_outs), allow_unused=True)
        # Any half input (type-promotion samples mix them in) makes every gradient a sum of rounded
        # half products.
        half = any(t.dtype in (torch.float16, torch.bfloat16) for t in c_ts)
        assert_same(to_cpu(list(actual), where), expected, op, dtype, where + " (gradients)", grad=True, half=half)
    else:
        raise ValueError(variant)


def run_error_input(op, ei):
    """One ErrorInput: webgpu must raise the CPU's exception type."""
    s = ei.sample_input
    where = f"{full_name(op)} errors on {s.summary()[:300]}"
    inp, args, kwargs = move_sample(op, s)
    c_inp, c_args, c_kwargs = cpu_copy(op, s)
    try:
        op(c_inp, *c_args, **c_kwargs)
    except ei.error_type:
        pass
    except Exception as e:  # noqa: BLE001
        raise Skip(f"CPU raises {type(e).__name__}, not {ei.error_type.__name__}") from e
    else:
        raise Skip("CPU does not raise")
    try:
        op(inp, *args, **kwargs)
        # Device-side checks (index bounds) report at the next synchronisation, like CUDA's.
        torch.webgpu.synchronize()
    except ei.error_type:
        return
    except Exception as e:
        if classify_exception(e):
            raise
        raise AssertionError(
            f"{where}: raised {type(e).__name__}({str(e)[:200]}), expected {ei.error_type.__name__} as on CPU"
        ) from e
    raise AssertionError(f"{where}: did not raise; CPU raises {ei.error_type.__name__} ({ei.error_regex})")


# ---- results -----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Result:
    name: str
    dtype: str
    variant: str
    passed: int = 0
    fallback: dict = dataclasses.field(default_factory=dict)  # reason -> samples
    unsupported: int = 0
    skipped: int = 0
    failures: list = dataclasses.field(default_factory=list)  # messages
    skip_reason: str = None  # set when the whole variant does not apply

    @property
    def native(self):
        return self.passed > 0 or bool(self.failures)

    @property
    def partial(self):
        # An error input that reaches a missing kernel instead of its check is no wrong answer: with
        # the fallback on, the CPU raises the error. Only value variants can be partial.
        return self.variant != "errors" and self.native and bool(self.fallback)

    @property
    def status(self):
        """'pass' | 'fail' | 'partial' | 'fallback' | 'n/a'"""
        if self.failures:
            return "fail"
        if self.partial:
            return "partial"
        if self.passed:
            return "pass"
        if self.fallback:
            return "fallback"
        return "n/a"

    def fallback_ops(self):
        return sorted({r.split(": ", 1)[1] for r in self.fallback if r.startswith("fallback: aten::")})

    def describe_failure(self):
        return "\n".join(self.failures)

    def describe_partial(self):
        return (
            f"partially native: {self.passed} sample(s) ran natively, {sum(self.fallback.values())} "
            f"reached a missing kernel ({', '.join(self.fallback_ops() or self.fallback)})"
        )


def _seed(*parts):
    return zlib.crc32("/".join(parts).encode())


def run_variant(op, dtype, variant, max_samples=MODE_MAX_SAMPLES, stop_at_first_failure=True):
    """Runs (op, dtype, variant) over the samples with the fallback off; returns a Result."""
    name = full_name(op)
    r = Result(name, dtype_name(dtype), variant)
    r.skip_reason = opinfo_skip(op, variant, dtype)
    if not has_variant(op, dtype, variant):
        r.skip_reason = f"no {variant} variant for {dtype_name(dtype)}"
    if r.skip_reason:
        return r
    with fallback_enabled(False):
        for sample in samples(op, dtype, max_samples, seed=_seed(name, dtype_name(dtype))):
            try:
                run_sample(op, sample, dtype, variant)
                r.passed += 1
            except Skip:
                r.skipped += 1
            except Unsupported:
                r.unsupported += 1
            except Exception as e:  # noqa: BLE001  (every other exception is the kernel's failure)
                why = classify_exception(e)
                if why and why.startswith("unsupported"):
                    r.unsupported += 1
                elif why:
                    r.fallback[why] = r.fallback.get(why, 0) + 1
                else:
                    msg = str(e) if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
                    if not isinstance(e, AssertionError):
                        msg = f"{full_name(op)} {dtype_name(dtype)} {variant} on {sample.summary()[:300]}: " + msg
                    r.failures.append(msg)
                    if stop_at_first_failure:
                        break
    return r


def run_errors(op, max_inputs=None, stop_at_first_failure=True):
    """The entry's error_inputs on webgpu, with the fallback off; returns a Result (dtype '*')."""
    name = full_name(op)
    r = Result(name, "*", "errors")
    r.skip_reason = opinfo_skip(op, "errors")
    if r.skip_reason:
        return r
    if op.error_inputs_func is None:
        r.skip_reason = "no error_inputs"
        return r
    seed_everything(_seed(name, "errors"))
    eis = list(op.error_inputs_func(op, "cpu"))  # unwrapped: see _raw_inputs
    if not eis:
        r.skip_reason = "no error_inputs"
        return r
    with fallback_enabled(False):
        for i, ei in enumerate(eis):
            if max_inputs is not None and i >= max_inputs:
                break
            try:
                run_error_input(op, ei)
                r.passed += 1
            except Skip:
                r.skipped += 1
            except Unsupported:
                r.unsupported += 1
            except Exception as e:  # noqa: BLE001
                why = classify_exception(e)
                if why and why.startswith("unsupported"):
                    r.unsupported += 1
                elif why:
                    r.fallback[why] = r.fallback.get(why, 0) + 1
                else:
                    r.failures.append(str(e))
                    if stop_at_first_failure:
                        break
    return r
