# float32 accuracy of the exponential and logarithm family, pow and what builds on them
# (wgsl/lib/pointwise.wgsl, f64.wgsl's f_pow_acc), measured in ulps of CPU's float32 result over
# wide ranges: CPU's libm (and CUDA's) is within an ulp or two everywhere, where WGSL's builtins may be
# off by 2^-21 absolute near 1 (log), by 3 + 2|x| ulp (exp), and 2^(y log2 x) in float32 by |y log2 x|
# ulps (pow). The bounds are a few ulps; the builtins-based kernels exceeded them by 30x to 10^6x.
import os

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import torch_webgpu  # noqa: E402,F401
from webgpu_env import TINY, flushes_subnormal_operands  # noqa: E402

DEV = "webgpu"
N = 1 << 16


def ulps(got, want):
    """Largest |got - want| in units of want's float32 spacing, over finite nonzero want (NaN, inf and
    zero results must match exactly)."""
    got = got.cpu()
    special = ~torch.isfinite(want) | (want == 0)
    assert torch.equal(got[special].isnan(), want[special].isnan())
    same = ~want[special].isnan()
    assert torch.equal(got[special][same], want[special][same])
    w = want[~special]
    spacing = (torch.nextafter(w.abs(), torch.tensor(float("inf"))) - w.abs()).double()
    return ((got[~special].double() - w.double()).abs() / spacing).max().item()


def uniform(lo, hi, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(N, generator=g) * (hi - lo) + lo


UNARY = [
    # (name, function, low, high, bound in ulps)
    ("exp", torch.exp, -87.0, 88.5, 2),
    ("exp_subnormal", torch.exp, -103.0, -87.5, 2),
    ("exp2", torch.exp2, -149.0, 127.9, 2),
    ("expm1", torch.expm1, -5.0, 5.0, 2),
    ("expm1_tiny", torch.expm1, -1e-3, 1e-3, 2),
    ("log", torch.log, 1e-3, 1e4, 2),
    ("log_near_1", torch.log, 0.9, 1.1, 4),
    ("log_tiny", torch.log, 1e-44, 1e-36, 2),
    ("log2", torch.log2, 0.5, 2.0, 4),
    ("log10", torch.log10, 1e-3, 1e4, 3),
    ("log1p", torch.log1p, -0.9, 10.0, 4),
    ("log1p_tiny", torch.log1p, -1e-3, 1e-3, 3),
    ("sinh", torch.sinh, -88.5, 88.5, 3),
    ("cosh", torch.cosh, -88.5, 88.5, 3),
    ("tanh", torch.tanh, -10.0, 10.0, 3),
    ("tanh_small", torch.tanh, -0.1, 0.1, 3),
    ("sigmoid", torch.sigmoid, -80.0, 20.0, 5),
    ("asinh", torch.asinh, -10.0, 10.0, 4),
    ("atanh", torch.atanh, -0.99, 0.99, 4),
    ("acosh", torch.acosh, 1.0, 10.0, 5),
    ("erfc", torch.erfc, -3.0, 9.0, 8),
    ("softplus", F.softplus, -15.0, 15.0, 5),
    ("logsigmoid", F.logsigmoid, -15.0, 80.0, 5),
    ("silu", F.silu, -80.0, 20.0, 5),
]


@pytest.mark.parametrize("name,fn,lo,hi,bound", UNARY, ids=[u[0] for u in UNARY])
def test_unary_ulps(name, fn, lo, hi, bound):
    x = uniform(lo, hi, seed=len(name))
    if 0.0 <= lo < TINY and flushes_subnormal_operands():
        x = x.clamp_min(TINY)  # normal inputs only on such adapters (log_tiny)
    assert ulps(fn(x.to(DEV)), fn(x)) <= bound


@pytest.mark.parametrize("fn", [torch.sinh, torch.cosh])
def test_sinh_cosh_near_overflow(fn):
    # e^|x| / 2 is finite up to |x| = 89.415 (as CUDA's and NumPy's float32 sinh/cosh give); CPU's
    # vectorised kernels overflow from e^|x| itself past 88.72, so the reference is float64's
    x = torch.cat([uniform(88.72, 89.41, 7), -uniform(88.72, 89.41, 8), torch.tensor([89.42, -89.5, 100.0])])
    want = fn(x.double()).float()
    assert want[:-3].isfinite().all() and want[-3:].isinf().all()
    assert ulps(fn(x.to(DEV)), want) <= 3


@pytest.mark.parametrize(
    "xlo,xhi,ylo,yhi",
    [
        (0.0, 1e4, -4.0, 4.0),  # results up to 1e16 and down to 1e-16
        (1.0, 3.0, 0.0, 120.0),  # large exponents: y log2 x up to 190 (overflow included)
        (1e-3, 1.0, -12.0, 12.0),
        (0.5, 2.0, -300.0, 300.0),  # underflow to subnormals and zero
    ],
)
def test_pow_tensor_ulps(xlo, xhi, ylo, yhi):
    x, y = uniform(xlo, xhi, 1), uniform(ylo, yhi, 2)
    assert ulps(torch.pow(x.to(DEV), y.to(DEV)), torch.pow(x, y)) <= 2


@pytest.mark.parametrize("e", [1.5, -1.5, 2.5, 7.0, -3.0, 0.25, 1.0 / 3.0, 37.5])
def test_pow_scalar_exponent_ulps(e):
    x = uniform(0.0, 1e3, 3)
    assert ulps(torch.pow(x.to(DEV), e), torch.pow(x, e)) <= 2
    # negative bases with integral exponents keep their sign; with others they are NaN, as CPU's
    xn = -x[:64]
    torch.testing.assert_close(torch.pow(xn.to(DEV), e).cpu(), torch.pow(xn, e), rtol=2.5e-7, atol=0, equal_nan=True)


def test_pow_edges_match_cpu():
    v = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, float("inf"), float("-inf"), float("nan"), 1e-45, 3e38]
    v = torch.tensor(v[:-2] + v[-1:] if flushes_subnormal_operands() else v)  # 1e-45: a subnormal operand
    x, y = torch.meshgrid(v, v, indexing="ij")
    got, want = torch.pow(x.to(DEV), y.to(DEV)).cpu(), torch.pow(x, y)
    if flushes_subnormal_operands():  # and subnormal results of plain arithmetic (3e38^-1)
        want = torch.where(want.abs() < TINY, want * 0.0, want)
    torch.testing.assert_close(got, want, rtol=2.5e-7, atol=0, equal_nan=True)
    # signs of zeros and infinities as well
    finite0 = (got == 0) | got.isinf()
    assert torch.equal(got[finite0].signbit(), torch.pow(x, y)[finite0].signbit())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_round_the_accurate_result(dtype):
    # computed in float32 and rounded once: equal to CPU's (which also computes in float32) but for ties
    x = uniform(-8.0, 8.0, 5).to(dtype)
    for fn in (torch.exp, torch.tanh, torch.expm1):
        got, want = fn(x.to(DEV)).cpu().float(), fn(x).float()
        assert (got != want).float().mean().item() < 0.002, fn
    p = uniform(0.0, 8.0, 6).to(dtype)
    got, want = torch.pow(p.to(DEV), x.to(DEV)).cpu().float(), torch.pow(p, x).float()
    assert (got != want).float().mean().item() < 0.002


@pytest.mark.parametrize("n", [1, 2, 4])
def test_polygamma_near_poles(n):
    # the Hurwitz zeta's (k + q)^-x terms: float32 pow with a small integral exponent (repeated
    # squaring) keeps polygamma near its poles within a few ulps of CPU's
    # (away from polygamma's zeros, where the sum cancels and CPU's own result has no precision left)
    x = torch.cat([uniform(-0.01, -0.001, 9), uniform(0.001, 0.01, 10)])
    assert ulps(torch.polygamma(n, x.to(DEV)), torch.polygamma(n, x)) <= 16
