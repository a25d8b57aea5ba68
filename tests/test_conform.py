"""Behaviour that PyTorch's own device-generic tests (test_indexing, test_shape_ops, test_view_ops,
test_sort_and_select, run against the webgpu device) found different from CPU: error types and
messages, deprecation warnings, and float64 sampling. Each test states CPU's behaviour by running it.
The CPU fallback is off."""

import warnings

import pytest
import torch
from webgpu_env import DEV

import torch_webgpu  # noqa: F401


def raised(f):
    try:
        f()
    except Exception as e:  # the type and message are what is compared
        return type(e), str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("fn", [torch.unique, torch.unique_consecutive])
@pytest.mark.parametrize("shape,dim", [((5, 0, 0), 1), ((5, 0, 0), 2), ((0, 3, 0), 0), ((5, 0, 5), 2), ((4, 0, 3), 1)])
def test_unique_dim_zero_sized(fn, shape, dim):
    # CPU: an empty selected dim is fine only when it is the one zero-sized dim
    x = torch.ones(shape)

    def run(t):
        return fn(t, dim=dim, return_inverse=True, return_counts=True)

    want = raised(lambda: run(x))
    assert raised(lambda: run(x.to(DEV))) == want
    if want is None:
        for p, q in zip(run(x), run(x.to(DEV)), strict=True):
            assert p.shape == q.shape and p.dtype == q.dtype


@pytest.mark.parametrize("size,step", [(3, 0), (-1, 1), (3, -2)])
def test_unfold_backward_errors_as_cpu(size, step):
    g = torch.randn(2, 3)
    want = raised(lambda: torch.ops.aten.unfold_backward(g, [6], 0, size, step))
    assert want is not None
    assert raised(lambda: torch.ops.aten.unfold_backward(g.to(DEV), [6], 0, size, step)) == want


@pytest.mark.parametrize("accumulate", [True, False])
def test_uint8_mask_index_put_warns_as_cpu(accumulate):
    def count(device):
        mask = torch.tensor([1, 0, 1, 0, 0], dtype=torch.uint8, device=device)
        y = torch.ones(5, 4, device=device)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y.index_put_((mask,), y[mask] * 2, accumulate=accumulate)
        return y.cpu(), sum("uint8 is now deprecated" in str(x.message) for x in w)

    (yc, nc), (yd, nd) = count("cpu"), count(DEV)
    assert nc == 2 and nd == nc
    torch.testing.assert_close(yd, yc)


def test_float64_normal_and_uniform_on_device():
    n = 40000
    torch.webgpu.manual_seed(3)
    a = torch.randn(n, device=DEV, dtype=torch.float64)
    torch.webgpu.manual_seed(3)
    b = torch.randn(n, device=DEV, dtype=torch.float64)
    assert a.dtype == torch.float64 and a.device.type == DEV
    torch.testing.assert_close(a.cpu(), b.cpu(), rtol=0, atol=0)  # the device generator drives it
    c = a.cpu()
    assert abs(c.mean().item()) < 0.05 and abs(c.var().item() - 1) < 0.05
    # mean and std applied in float64: a large mean keeps the samples' spread
    x = torch.empty(n, device=DEV, dtype=torch.float64).normal_(1e10, 2.0).cpu() - 1e10
    assert abs(x.mean().item()) < 0.1 and abs(x.std().item() - 2) < 0.1
    # non-contiguous destination
    t = torch.zeros(200, 300, device=DEV, dtype=torch.float64).t()
    t.normal_(-1.0, 0.5)
    assert abs(t.cpu().mean().item() + 1) < 0.05
    u = torch.empty(n, device=DEV, dtype=torch.float64).uniform_(-2, 3).cpu()
    assert u.min().item() >= -2 and u.max().item() < 3
    assert abs(u.mean().item() - 0.5) < 0.05 and abs(u.var().item() - 25 / 12) < 0.1
    r = torch.rand(7, 5, device=DEV, dtype=torch.float64).cpu()
    assert r.min().item() >= 0 and r.max().item() < 1
    # tensor mean/std forms
    m = torch.normal(torch.full((n,), 4.0, dtype=torch.float64, device=DEV), 0.5).cpu()
    assert m.dtype == torch.float64 and abs(m.mean().item() - 4) < 0.05


def test_float64_exponential_names_float64():
    # no float64 kernel: with the fallback off it is the fallback's NotImplementedError, not CPU's
    # "dtype must be a floating point" error (float64 is one)
    with pytest.raises(NotImplementedError, match="float64"):
        torch.empty(10, device=DEV, dtype=torch.float64).exponential_()


def test_float64_no_kernel_error_names_the_op():
    # the error names the op ("index"), not the kernel's cache key ("index:2:1pS4tuk")
    x = torch.zeros(3, 4, dtype=torch.float64, device=DEV)
    src = torch.ones(2, 4, dtype=torch.float64, device=DEV)
    with pytest.raises(NotImplementedError, match=r"^webgpu: index: no float64 kernel"):
        x.index_reduce_(0, torch.tensor([0, 1], device=DEV), src, "amax")


def test_float64_random_integers_on_device():
    # randint / random_ in float64: the int64 draw converted, as CPU's kernel does
    a = torch.randint(-5, 7, (20000,), dtype=torch.float64, device=DEV).cpu()
    assert a.dtype == torch.float64 and torch.equal(a, a.round())
    assert a.min().item() == -5 and a.max().item() == 6 and abs(a.mean().item() - 0.5) < 0.1
    b = torch.empty(20000, dtype=torch.float64, device=DEV).random_().cpu()  # [0, 2**53]
    assert b.min().item() >= 0 and b.max().item() <= 2**53 and abs(b.mean().item() / 2**52 - 1) < 0.05
    c = torch.empty(4, 3, dtype=torch.float64, device=DEV).t().random_(3, 5).cpu()
    assert set(c.unique().tolist()) <= {3.0, 4.0}


def test_float64_nonzero_as_cpu():
    x = torch.tensor([[0.0, -0.0, 1.5], [float("nan"), 5e-324, 0.0], [-2.0, float("inf"), 0.0]], dtype=torch.float64)
    for t in (x, x.t(), x[:, ::2]):
        torch.testing.assert_close(torch.nonzero(t.to(DEV)).cpu(), torch.nonzero(t), rtol=0, atol=0)
        for p, q in zip(torch.nonzero(t.to(DEV), as_tuple=True), torch.nonzero(t, as_tuple=True), strict=True):
            torch.testing.assert_close(p.cpu(), q, rtol=0, atol=0)


# --- parameter dtypes of the norms, index dtypes (bad-input probes against CPU) ---

F = torch.nn.functional
NORMS = {
    "layer_norm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b),
    "group_norm": lambda x, w, b: F.group_norm(x, 2, w, b),
    "batch_norm": lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "xd, wd, ok",
    [
        (
            torch.float32,
            torch.float16,
            False,
        ),  # CPU: "mixed dtype (CPU): expect parameter to have scalar type of Float"
        (torch.float32, torch.bfloat16, False),
        (torch.float16, torch.bfloat16, False),
        (torch.bfloat16, torch.float32, True),  # a half input with float parameters: CPU's mixed mode
        (torch.float16, torch.float16, True),
    ],
)
def test_norm_parameter_dtypes_as_cpu(norm, xd, wd, ok):
    f = NORMS[norm]
    x, w, b = torch.randn(3, 4, 6).to(xd), torch.randn(4 if norm != "layer_norm" else 6), torch.randn(1)
    w = w.to(wd)
    b = torch.randn(w.shape).to(wd)
    if not ok:
        with pytest.raises(RuntimeError):
            f(x, w, b)
        with pytest.raises(RuntimeError, match="parameters to have dtype"):
            f(x.to(DEV), w.to(DEV), b.to(DEV))
        return
    want = f(x, w, b)
    got = f(x.to(DEV), w.to(DEV), b.to(DEV))
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want, atol=2e-2, rtol=2e-2)


def test_index_select_float_index_raises_runtime_error_as_cpu():
    x, i = torch.randn(3, 2), torch.tensor([1.0])
    with pytest.raises(RuntimeError, match="int32 or int64"):
        x.index_select(0, i)
    with pytest.raises(RuntimeError, match="int32 or int64"):
        x.to(DEV).index_select(0, i.to(DEV))


@pytest.mark.parametrize(
    "make",
    [
        lambda d: torch.arange(10, dtype=torch.float64, device=d),
        lambda d: torch.arange(-3.7, 11.2, 0.1, dtype=torch.float64, device=d),
        lambda d: torch.arange(1e300, 1.0000000001e300, 1e289, dtype=torch.float64, device=d),
        lambda d: torch.arange(0, 1e-310, 3e-312, dtype=torch.float64, device=d),  # subnormals
        lambda d: torch.arange(5, -5, -0.3, dtype=torch.float64, device=d),
        lambda d: torch.range(-1, 1, 0.25, dtype=torch.float64, device=d),
        lambda d: torch.linspace(-2.5, 1e3 / 3, 1001, dtype=torch.float64, device=d),
        lambda d: torch.linspace(1.0, 1.0 + 2**-40, 7, dtype=torch.float64, device=d),
        lambda d: torch.linspace(3, 4, 1, dtype=torch.float64, device=d),
    ],
)
def test_float64_sequences_as_cpu(make):
    # arange / range / linspace in float64: double values on the device, not float32 ones widened
    # (0.1 steps and large magnitudes show the difference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch.range is deprecated
        want, got = make("cpu"), make(DEV)
    assert got.dtype == torch.float64
    assert got.device.type == DEV
    torch.testing.assert_close(got.cpu(), want, rtol=1e-15, atol=1e-323)  # subnormals: one ulp


def test_float64_arange_out_noncontiguous():
    want = torch.arange(0.5, 6.5, 0.5, dtype=torch.float64)
    buf = torch.zeros(12, 2, dtype=torch.float64, device=DEV)
    torch.arange(0.5, 6.5, 0.5, out=buf[:, 1])
    torch.testing.assert_close(buf[:, 1].cpu(), want, rtol=0, atol=0)
    assert torch.count_nonzero(buf[:, 0]).item() == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
@pytest.mark.parametrize("shape,dim", [((6,), None), ((9, 7), 0), ((9, 7), 1), ((5, 6, 7), (0, 2)), ((40, 300), 1)])
def test_nansum_keeps_nan_from_opposite_infinities(dtype, shape, dim):
    # NaN elements count as zero, but inf + -inf in a partial sum stays NaN (CPU, NumPy): the device
    # used to drop NaN partials too, turning such sums into 0, inf or -inf. (CPU's vectorised path for
    # rows of thousands of float elements drops them as well and returns 0; rows here stay short.)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(shape, generator=g).to(dtype) * 40
    u = torch.rand(shape, generator=g)
    x[u < 0.15] = float("nan")
    x[(u >= 0.15) & (u < 0.25)] = float("inf")
    x[(u >= 0.25) & (u < 0.35)] = float("-inf")
    x.view(-1)[:3] = torch.tensor([float("inf"), float("nan"), float("-inf")], dtype=dtype)
    kw = {} if dim is None else {"dim": dim}
    want = torch.nansum(x, **kw)
    got = torch.nansum(x.to(DEV), **kw).cpu()
    assert want.isnan().any()  # the case under test occurs
    torch.testing.assert_close(got, want, equal_nan=True, atol=1e-2, rtol=1e-2)
    y = torch.tensor([float("nan"), 1.0, float("nan"), 2.5], dtype=dtype)  # NaN elements still skipped
    torch.testing.assert_close(torch.nansum(y.to(DEV)).cpu(), torch.nansum(y))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int8, torch.uint8, torch.float64, torch.float32])
def test_histc_checks_range_before_dtype_as_cpu(dtype):
    x = torch.tensor([1.0, 2.0, 3.0]).to(dtype)
    want = raised(lambda: torch.histc(x, bins=4, min=5, max=1))
    assert want is not None
    assert "max must be larger than min" in want[1]
    assert raised(lambda: torch.histc(x.to(DEV), bins=4, min=5, max=1)) == want


@pytest.mark.parametrize(
    "x_ty,v_ty,i_ty",
    [
        (torch.uint8, torch.int8, torch.long),
        (torch.float32, torch.float64, torch.long),
        (torch.int8, torch.int8, torch.int16),
        (torch.float32, torch.float32, torch.float64),
    ],
)
def test_mode_out_dtype_errors_as_cpu(x_ty, v_ty, i_ty):
    def run(d):
        x = torch.ones(10, device=d, dtype=x_ty)
        v = torch.ones(10, device=d, dtype=v_ty)
        i = torch.ones(10, device=d, dtype=i_ty)
        return raised(lambda: torch.mode(x, -1, True, out=(v, i)))

    want = run("cpu")
    assert want is not None
    assert run(DEV) == want


@pytest.mark.parametrize("which", ["values", "boundaries", "sorter"])
def test_searchsorted_noncontiguous_warns_as_cpu(which):
    # CPU warns (once per program; set_warn_always makes it every time) when an operand is not
    # contiguous; the device computed the same result silently
    def run(device):
        b = torch.tensor([[1.0, 3.0, 5.0, 7.0], [2.0, 4.0, 6.0, 8.0]], device=device)
        v = torch.tensor([[0.5, 4.5, 9.0], [2.0, 7.0, 3.0]], device=device)
        s = None
        if which == "values":
            v = v.t().contiguous().t()
        elif which == "boundaries":
            b = b.t().contiguous().t()
        else:
            s = torch.arange(4, device=device).expand(2, 4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = torch.searchsorted(b, v, sorter=s)
        # the text, without the "(Triggered internally at <source file>)" that follows it
        return r.cpu(), [str(x.message).split(" (Triggered")[0] for x in w if "non-contiguous" in str(x.message)]

    prev = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        (rc, wc), (rd, wd) = run("cpu"), run(DEV)
    finally:
        torch.set_warn_always(prev)
    assert len(wc) == 1
    assert wd == wc
    torch.testing.assert_close(rd, rc)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(
    "f",
    [
        lambda t: t * 1e5,
        lambda t: t / 1e5,
        lambda t: 1e5 * t,
        lambda t: 1e5 / t,
        lambda t: t * 0.1,
        lambda t: t / 3.3,
        lambda t: t.mul(torch.tensor(1e5, dtype=torch.float64)),
        lambda t: t.clone().div_(1e5),
    ],
)
def test_reduced_float_mul_div_by_scalar_in_float32_as_cpu(dtype, f):
    # CPU multiplies and divides float16/bfloat16 by a Python number in float32; the device rounded
    # the number to the tensor's dtype first (1e5 -> inf in float16: 100 / 1e5 gave 0, 1e-5 * 1e5 inf)
    x = torch.tensor([100.0, 1e-5, -3.0, 0.7, 65000.0, 2.0**-14], dtype=dtype)
    want = f(x)
    got = f(x.to(DEV)).cpu()
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_float_trunc_division_as_cpu(dtype):
    # CPU rounds the quotient to the dtype, then truncates; the device truncated the float32 quotient
    # (float16 56672 / 31.3125: CPU 1810, the device 1809)
    g = torch.Generator().manual_seed(3)
    info = torch.finfo(dtype)
    a = (torch.rand(4096, generator=g) * 2 - 1).mul(min(info.max, 6e4)).to(dtype)
    b = (torch.rand(4096, generator=g) * 2 - 1).mul(2000).to(dtype)
    b[b == 0] = 1
    a[:2] = torch.tensor([56672.0, -26192.0], dtype=dtype)
    b[:2] = torch.tensor([31.3125, -1139.0], dtype=dtype)
    want = torch.div(a, b, rounding_mode="trunc")
    got = torch.div(a.to(DEV), b.to(DEV), rounding_mode="trunc").cpu()
    torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_integer_fmod_remainder_by_zero_as_cuda(dtype):
    # CPU raises ZeroDivisionError; a kernel cannot, and CUDA's values (PyTorch's own
    # test_fmod_remainder_by_zero_integral expects them off the CPU) are all ones: -1, 255 for uint8,
    # and for int64 2^32 - 1 where the dividend is >= 0. Nonzero divisors in the same tensor as CPU.
    lo = 0 if dtype == torch.uint8 else -9
    x = torch.arange(lo, lo + 18, dtype=dtype).reshape(3, 6)
    d = torch.zeros_like(x)
    d[0] = 4  # the first row has a divisor: CPU's values there
    for fn in (torch.fmod, torch.remainder):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(x, d)
        got = fn(x.to(DEV), d.to(DEV)).cpu()
        assert torch.equal(got[0], fn(x[0], d[0])), fn
        if dtype == torch.int64:
            want = torch.where(x[1:] >= 0, torch.tensor(2**32 - 1), torch.tensor(-1))
        else:
            want = torch.full_like(x[1:], 255 if dtype == torch.uint8 else -1)
        assert torch.equal(got[1:], want), (fn, got[1:])
        # a zero Python-number divisor too, and in place
        assert torch.equal(
            fn(x.to(DEV), 0).cpu(),
            torch.cat([want[:1], want])
            if dtype != torch.int64
            else torch.where(x >= 0, torch.tensor(2**32 - 1), torch.tensor(-1)),
        )
        y = x.to(DEV)
        getattr(y, fn.__name__ + "_")(d.to(DEV))
        assert torch.equal(y.cpu(), got)
