"""torch.special's Bessel, Airy and orthogonal-polynomial functions against PyTorch's CPU results:
wide argument ranges with the branch points of each approximation, zeros, signed zeros, +-inf, NaN,
integer and bool inputs (promoted to float32), non-contiguous inputs and outputs, out=, broadcasting,
scalar arguments, and the errors CPU raises. (The OpInfo sweep, tests/test_opinfo.py, covers the
entries' own samples.)"""

import math

import pytest
import torch
from webgpu_env import DEV, TINY, flushes_subnormal_operands

import torch_webgpu  # noqa: F401

S = torch.special

# name -> (atol, rtol): OpInfo's float32 tolerances for these entries (precisionOverride /
# toleranceOverride), with the harness's rtol floor of 1e-5.
UNARY = {
    "airy_ai": (1e-3, 1e-5),
    "bessel_j0": (1e-4, 1e-5),
    "bessel_j1": (1e-4, 1e-5),
    "bessel_y0": (1e-4, 1e-5),
    "bessel_y1": (1e-4, 1e-5),
    "modified_bessel_i0": (1e-3, 1e-5),
    "modified_bessel_i1": (1e-3, 1e-5),
    "modified_bessel_k0": (1e-3, 1e-5),
    "modified_bessel_k1": (1e-3, 1e-5),
    "scaled_modified_bessel_k0": (1e-3, 1e-3),
    "scaled_modified_bessel_k1": (1e-3, 1e-3),
    "spherical_bessel_j0": (1e-3, 1e-3),
}
POLY = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]
INT_DTYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]

# Each approximation's branch points (j/y: 5; i: 8; k: 2; airy: -2.09, 2.09, 8.32, 103.892;
# spherical j0: 0.5; j0: 1e-5) and their float32 neighbours, signed zeros, tiny and huge values.
_EDGES = [
    0.0,
    -0.0,
    1e-5,
    0.5,
    2.0,
    2.09,
    5.0,
    8.0,
    8.3203353,
    103.892,
    1e-30,
    1e-38,
    1e-45,
    0.99999994,
    1.0000001,
    88.7,
    89.0,
    1e3,
    1e4,
    123456.7,
    1e10,
    1e20,
    3e38,
]


def _x():
    edges = torch.tensor(_EDGES, dtype=torch.float32)
    near = torch.cat([torch.nextafter(edges, torch.tensor(math.inf)), torch.nextafter(edges, torch.tensor(-math.inf))])
    grid = torch.linspace(-40, 40, 4001)
    logs = torch.logspace(-8, 30, 400)
    pos = torch.cat([edges, near, grid, logs])
    special = torch.tensor([math.inf, -math.inf, math.nan])
    x = torch.cat([pos, -pos, special]).float()
    if flushes_subnormal_operands():  # such an adapter reads them as zero (webgpu_env)
        x = x[~((x != 0) & (x.abs() < TINY))]
    return x


def _close(actual, expected, atol, rtol, what):
    torch.testing.assert_close(
        actual.cpu(), expected, atol=atol, rtol=rtol, equal_nan=True, msg=lambda m: f"{what}: {m}"
    )


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_wide_range(name):
    f = getattr(S, name)
    x = _x()
    atol, rtol = UNARY[name]
    if name == "airy_ai":
        # Far out on the negative axis Ai oscillates with phase z = (2/3)|x|^1.5 (2e7 radians at
        # -1.2e5): one float32 ulp of z, or of the sqrt that makes it, moves the value by up to its
        # envelope |x|^-1/4 / sqrt(pi), so CPU's value there is as much rounding as ours (NVIDIA's sqrt
        # is not correctly rounded). There each result must lie within 8 ulps of phase of CPU's.
        far = x < -1e3
        got, want = f(x[far].to(DEV)).cpu(), f(x[far])
        envelope = x[far].abs() ** -0.25 / math.sqrt(math.pi)
        phase_ulps = (2 / 3) * x[far].abs() ** 1.5 * 2.0**-23
        near = (got - want).abs() <= atol + envelope * torch.clamp(8 * phase_ulps, max=2)
        assert torch.equal(got.isnan(), want.isnan()) and (near | want.isnan()).all(), name
        x = x[~far]
    _close(f(x.to(DEV)), f(x), atol, rtol, name)
    # Signs of zeros and infinities exactly (assert_close treats -0.0 == 0.0).
    got, want = f(x.to(DEV)).cpu(), f(x)
    special = (want == 0) | want.isinf()
    assert torch.equal(torch.signbit(got[special]), torch.signbit(want[special])), name
    assert torch.equal(got[special], want[special]), name


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_unary_integer_inputs(name, dtype):
    f = getattr(S, name)
    if dtype == torch.bool:
        x = torch.tensor([True, False, True])
    else:
        info = torch.iinfo(dtype)
        x = torch.cat([torch.arange(max(info.min, -60), min(info.max, 60) + 1), torch.tensor([info.min, info.max])]).to(
            dtype
        )
    want = f(x)
    got = f(x.to(DEV))
    assert got.dtype == want.dtype == torch.float32
    atol, rtol = UNARY[name]
    _close(got, want, atol, rtol, f"{name} {dtype}")


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_noncontiguous_and_out(name):
    f = getattr(S, name)
    atol, rtol = UNARY[name]
    base = torch.linspace(-12, 12, 6 * 8).reshape(6, 8)
    x = base.t()[::2, 1:]  # transposed, stepped and offset
    xw = base.to(DEV).t()[::2, 1:]
    assert not xw.is_contiguous()
    _close(f(xw), f(x), atol, rtol, name + " non-contiguous")
    # out=: an empty tensor is resized; a strided view is written in place.
    out = torch.empty(0, device=DEV)
    r = f(xw, out=out)
    assert r is out and out.shape == x.shape
    _close(out, f(x), atol, rtol, name + " out=")
    big = torch.full((8, 6), 7.0, device=DEV)
    view = big[::2, 1:]  # (4, 5), the shape of x, not contiguous
    f(xw, out=view)
    want = torch.full((8, 6), 7.0)
    want[::2, 1:] = f(x)
    _close(big, want, atol, rtol, name + " out= strided view")


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_unary_half_refused_like_cpu(name, dtype):
    f = getattr(S, name)
    x = torch.ones(3, dtype=dtype)
    with pytest.raises(NotImplementedError):
        f(x)
    with pytest.raises(NotImplementedError, match=name.replace("special_", "")):
        f(x.to(DEV))


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_out_dtype_errors_like_cpu(name):
    f = getattr(S, name)
    x = torch.linspace(0.5, 3, 4)
    for bad in (torch.empty(4, dtype=torch.int64), torch.empty(4, dtype=torch.bool)):
        with pytest.raises(RuntimeError):
            f(x, out=bad)
        with pytest.raises(RuntimeError):
            f(x.to(DEV), out=bad.to(DEV))


# ---- polynomials ---------------------------------------------------------------------------------


def _poly_x(name):
    # Around each family's special points (|x| = 1; x = 0, 1/2 and 1 for the shifted ones), inside
    # and outside [-1, 1], big values, +-inf and NaN.
    grid = torch.linspace(-3, 3, 241)
    pts = torch.tensor(
        [
            0.0,
            -0.0,
            0.5,
            1.0,
            -1.0,
            0.99999994,
            -0.99999994,
            1.0000001,
            -1.0000001,
            5e-8,
            1e-3,
            0.49999997,
            0.50000006,
            7.5,
            -9.25,
            1e3,
            -1e3,
            1e20,
            math.inf,
            -math.inf,
            math.nan,
        ]
    )
    return torch.cat([grid, pts]).float()


_NS = [
    -3.0,
    -1.0,
    -0.5,
    0.0,
    0.7,
    1.0,
    1.9,
    2.0,
    3.0,
    4.0,
    5.0,
    6.0,
    7.0,
    8.0,
    9.0,
    10.0,
    12.0,
    16.0,
    25.0,
    128.0,
    129.0,
    math.nan,
    math.inf,
    -math.inf,
    1e19,
    -1e19,
]


# CPU's kernels are built with floating-point contraction: the recurrences' steps a * b - c * d are
# fused multiply-adds. webgpu asks for the same fma(), which an adapter may compute as a multiply and
# an add (Vulkan allows it; lavapipe does), and the recurrences' cancellations magnify that one
# rounding: Hermite H_7(-2.65) differs by 2e-5 relative, H_12(0.95) by 1.6e-5. Against the exact
# values both are off by that much.
POLY_TOL = 5e-5


def _poly_compare(name, got, want, what, tol=POLY_TOL):
    # Recurrences of degree up to 128 reach 1e38 and overflow; compare where CPU is finite, and
    # require the same non-finite values elsewhere.
    got = got.cpu()
    # Within 1.2x of the largest float, a fused and an unfused last step round to it or overflow:
    # the same sign, and the same value where both are finite.
    edge = want.isfinite() & (want.abs() > 2.8e38) & got.isinf()
    assert torch.equal(torch.sign(got[edge]), torch.sign(want[edge])), what
    fin = want.isfinite() & ~edge
    torch.testing.assert_close(got[fin], want[fin], atol=tol, rtol=tol, equal_nan=True, msg=lambda m: f"{what}: {m}")
    # A recurrence that overflows gives +-inf, then NaN a step later (inf - inf); a fused and an
    # unfused step may overflow a step apart, so CPU's inf may be webgpu's NaN. Non-finite stays
    # non-finite, and infinities that both give agree.
    nf = ~want.isfinite()
    assert not got[nf].isfinite().any(), what
    both_inf = nf & want.isinf() & got.isinf()
    assert torch.equal(got[both_inf], want[both_inf]), what


# CPU leaves the result unset (reads an uninitialised variable) for a NaN x with n >= 2 in these
# families; webgpu returns NaN there, so NaN x is compared only for the others.
_UNSET_ON_NAN = {
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
}


def _drop_unset(name, x):
    return x[~x.isnan()] if name in _UNSET_ON_NAN else x


@pytest.mark.parametrize("name", POLY)
def test_polynomial_grid(name):
    f = getattr(S, name)
    x = _drop_unset(name, _poly_x(name))
    n = torch.tensor(_NS)
    X, N = x[:, None], n[None, :]  # broadcast (len(x), len(n))
    got, want = f(X.to(DEV), N.to(DEV)).cpu(), f(X, N)
    y = 2 * X - 1 if name.startswith("shifted") else X
    # Within 1e-6 of y = +-1, acos(y) is within 1e-3 of 0 or pi, and the closed forms (n >= 5) divide
    # by sin(acos y) or sin(acos(y) / 2): one ulp of acos is then 1e-4 relative, CPU's and webgpu's
    # alike (U_9(-0.99999994): CPU -10.0027, webgpu -9.9986, exact -9.99998).
    edge = (((y.abs() - 1).abs() < 1e-6) & (N >= 5)).expand_as(want)
    _poly_compare(name, got[edge], want[edge], name + " (|y| near 1)", tol=1e-3)
    small = ((N.abs() <= 9) | N.isnan()).expand_as(want) & ~edge  # OpInfo's samples: n in [-9, 9]
    _poly_compare(name, got[small], want[small], name)
    # n = 10 ... 129 on |x| < 1 take the closed forms cos(n acos x), sin((n+1) acos x) / sin(acos x):
    # one float32 ulp of acos x (CPU's libm and webgpu's differ by about that) moves n acos x by n
    # ulps, and near x = +-1 the division by sin(acos x) magnifies it: 1e-4 at n = 128, x = -0.925,
    # for CPU's own result against the exact value as much as for webgpu's against CPU's.
    big = ~small & ~edge
    _poly_compare(name, got[big], want[big], name + " (n > 9)", tol=2e-4)


@pytest.mark.parametrize("name", POLY)
def test_polynomial_nan_x_is_nan(name):
    f = getattr(S, name)
    got = f(torch.full((6,), math.nan, device=DEV), torch.tensor([0.0, 1.0, 2.0, 3.0, 9.0, 30.0], device=DEV)).cpu()
    want = f(torch.full((6,), math.nan), torch.tensor([0.0, 1.0, 2.0, 3.0, 9.0, 30.0]))
    # n = 0 is 1 for every family (laguerre: 1 for n = 0 too); n >= 1 is NaN, where CPU defines it.
    assert got[0] == 1.0
    assert got[1:].isnan().all(), got
    if name not in _UNSET_ON_NAN:
        _poly_compare(name, got, want, name)


@pytest.mark.parametrize("name", POLY)
def test_polynomial_scalar_and_integer_arguments(name):
    f = getattr(S, name)
    x = torch.linspace(-1.5, 1.5, 31)
    xw = x.to(DEV)
    for n in (0, 1, 3, 7, 11, 2.5, -2):
        _poly_compare(name, f(xw, n), f(x, n), f"{name} n={n}")
    n = torch.arange(-2, 14)
    _poly_compare(name, f(0.3, n.to(DEV)), f(0.3, n), f"{name} x=0.3")
    for dtype in INT_DTYPES:
        xi = torch.tensor([-3, -2, -1, 0, 1, 2, 3]).to(dtype)
        ni = (
            torch.tensor([0, 1, 2, 3, 4, 5, 6]).to(dtype)
            if dtype != torch.bool
            else torch.tensor([0, 1] * 3 + [1]).bool()
        )
        want = f(xi, ni)
        got = f(xi.to(DEV), ni.to(DEV))
        assert got.dtype == want.dtype == torch.float32
        _poly_compare(name, got, want, f"{name} {dtype}")
        # mixed: float x, integer n tensor
        _poly_compare(name, f(xw[:7], ni.to(DEV)), f(x[:7], ni), f"{name} float x, {dtype} n")


@pytest.mark.parametrize("name", POLY)
def test_polynomial_noncontiguous_and_out(name):
    f = getattr(S, name)
    x = torch.linspace(-1.2, 1.2, 40).reshape(5, 8)
    n = torch.arange(0, 10, dtype=torch.float32).reshape(10, 1).expand(10, 8)
    xs, ns = x.t()[1::2], n[:5, :4].t()  # (4, 5) each: transposed, stepped, expanded
    xw, nw = x.to(DEV).t()[1::2], n.to(DEV)[:5, :4].t()
    assert not xw.is_contiguous() and not nw.is_contiguous()
    _poly_compare(name, f(xw, nw), f(xs, ns), name + " non-contiguous")
    out = torch.empty(0, device=DEV)
    assert f(xw, nw, out=out) is out
    _poly_compare(name, out, f(xs, ns), name + " out=")
    big = torch.full((8, 10), 7.0, device=DEV)
    f(xw, nw, out=big[::2, ::2])
    want = torch.full((8, 10), 7.0)
    want[::2, ::2] = f(xs, ns)
    _poly_compare(name, big, want, name + " out= strided view")
    # out= with the scalar overloads
    out = torch.empty(0, device=DEV)
    f(xw, 4, out=out)
    _poly_compare(name, out, f(xs, 4), name + " out= scalar n")


@pytest.mark.parametrize("name", POLY)
def test_polynomial_errors_like_cpu(name):
    f = getattr(S, name)
    x, n = torch.ones(3), torch.tensor([1.0, 2.0, 3.0])
    for dtype in (torch.float16, torch.bfloat16):
        with pytest.raises(NotImplementedError):
            f(x.to(dtype), n.to(dtype))
        with pytest.raises(NotImplementedError):
            f(x.to(dtype).to(DEV), n.to(dtype).to(DEV))
    with pytest.raises(RuntimeError):
        f(x, n, out=torch.empty(3, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        f(x.to(DEV), n.to(DEV), out=torch.empty(3, dtype=torch.int64, device=DEV))
    with pytest.raises(RuntimeError):  # shapes that do not broadcast
        f(torch.ones(3, device=DEV), torch.ones(4, device=DEV))
    with pytest.raises(RuntimeError):  # n on another device (not a zero-dim scalar)
        f(x.to(DEV), n)


def test_large_degree_recurrences():
    # Degrees where the closed forms do not apply (|x| >= 1, or Legendre/Laguerre anywhere) run the
    # whole recurrence, as on CPU.
    x = torch.tensor([0.3, -0.7, 0.999, 1.001, -1.001, 2.5, -0.2])
    for name, n in (
        ("legendre_polynomial_p", 1000.0),
        ("laguerre_polynomial_l", 300.0),
        ("chebyshev_polynomial_t", 200.0),
        ("hermite_polynomial_he", 60.0),
    ):
        f = getattr(S, name)
        N = torch.full_like(x, n)
        want = f(x, N)
        got = f(x.to(DEV), N.to(DEV)).cpu()
        fin = want.isfinite()
        # the rounding errors of a 1000-step recurrence add up; CPU's own FMA contraction differs too
        torch.testing.assert_close(got[fin], want[fin], atol=1e-4, rtol=1e-4)
        assert torch.equal(got[~fin].isnan(), want[~fin].isnan()), name
