# float64 on the webgpu device: storage and copies (bit-exact), conversions to and from every stored
# dtype (as CPU casts), printing, from_numpy, IEEE binary64 arithmetic bit-identical to CPU on random
# bit patterns (subnormals, inf, NaN, signed zeros, huge/tiny exponents, rounding ties), the CPU stub
# fallback for float64 ops without a kernel, and the TORCH_WEBGPU_FLOAT64=0 guard.
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from webgpu_env import DEV, native_env

import torch_webgpu  # noqa: F401
from torch_webgpu.fallback import fallback_counts, fallback_enabled, reset_fallback_counts

F64 = torch.float64

SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    3.5,
    0.1,
    -0.7,
    1e300,
    -1e300,
    1e-300,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    float("inf"),
    float("-inf"),
    float("nan"),
    2.0**53,
    2.0**53 + 2,
    -(2.0**63),
    2.0**62,
    2147483647.0,
    -2147483648.0,
    255.9,
    -1.9,
    65504.0,
    65520.0,
    3.4028234663852886e38,
    3.4028235677973366e38,
    1.401298464324817e-45,
    7.006492321624085e-46,
    7.006492321624087e-46,
    1.1754943508222875e-38,
    1 + 2.0**-24,
    1 + 2.0**-24 + 2.0**-52,
    1 + 3 * 2.0**-24,
]


def bits(t):
    return t.contiguous().view(torch.int64)


def random_f64(n, seed):
    """Random binary64 values: raw 64-bit patterns (every exponent), subnormals, values near 1 and near
    the float32 rounding boundaries, and the special values."""
    g = np.random.default_rng(seed)
    raw = g.integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64, endpoint=True).view(np.float64)
    sub = (g.integers(0, 2**52, size=n // 4, dtype=np.int64) | (g.integers(0, 2, size=n // 4) << 63)).view(np.float64)
    near1 = g.uniform(-4, 4, size=n // 4)
    # float32 values plus exactly half an ulp (ties) and half an ulp plus or minus one binary64 ulp.
    f = g.standard_normal(n // 4).astype(np.float32).astype(np.float64)
    half = np.abs(f) * 2.0**-24
    ties = np.concatenate([f + half, np.nextafter(f + half, np.inf), np.nextafter(f + half, -np.inf)])
    out = np.concatenate([np.array(SPECIAL), raw, sub, near1, ties, near1 * 1e-310, near1 * 1e307])
    return torch.from_numpy(out)


def assert_same_bits(got, want, nan_any=True):
    """got (webgpu) equals want (CPU) bit for bit; NaNs match any NaN when nan_any (NaN payloads of
    results are not specified across CPU code paths: CPU's vectorised float64 -> bfloat16 gives 0xffff
    for a NaN where its scalar tail gives 0x7fc0)."""
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.is_floating_point and nan_any:
        both = torch.isnan(got) & torch.isnan(want)
        g = torch.where(both, torch.zeros_like(got), got)
        w = torch.where(both, torch.zeros_like(want), want)
        assert torch.isnan(got).eq(torch.isnan(want)).all()
        got, want = g, w
    if got.dtype in (F64, torch.float32, torch.float16, torch.bfloat16):
        ib = {F64: torch.int64, torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
        gb, wb = got.view(ib[got.dtype]), want.view(ib[want.dtype])
        bad = (gb != wb).nonzero()
        assert bad.numel() == 0, (
            f"{bad.shape[0]} differ, first at {bad[0].tolist()}: {got[tuple(bad[0])]!r} vs {want[tuple(bad[0])]!r}"
        )
    else:
        assert torch.equal(got, want)


# ---- storage and copies ----------------------------------------------------------------------------


def test_from_numpy_roundtrip_bits():
    a = np.random.default_rng(0).integers(-(2**63), 2**63 - 1, size=1001, dtype=np.int64).view(np.float64)
    t = torch.from_numpy(a).to(DEV)
    assert t.dtype == F64 and t.device.type == DEV
    assert np.array_equal(t.cpu().numpy().view(np.int64), a.view(np.int64))  # NaN payloads too
    u = torch.from_numpy(np.random.rand(3, 4)).to(DEV)
    assert torch.equal(u.cpu(), torch.from_numpy(u.cpu().numpy()))


def test_factories_item_and_print():
    x = torch.tensor([1.5, -2.25, 1e-310], dtype=F64, device=DEV)
    assert x[1].item() == -2.25 and x[2].item() == 1e-310
    assert torch.zeros(3, dtype=F64, device=DEV).cpu().eq(0).all()
    assert torch.full((2, 3), 0.1, dtype=F64, device=DEV).cpu().eq(0.1).all()
    e = torch.empty(2, 5, dtype=F64, device=DEV)
    assert e.dtype == F64 and e.element_size() == 8
    t = torch.from_numpy(np.random.rand(3, 4)).to(DEV)
    s = str(t)
    assert "device='webgpu:0'" in s and "dtype=torch.float64" in s
    assert str(t.cpu()).split("]]")[0] == s.split("]]")[0]
    print(torch.tensor([float("nan"), float("inf"), 1e-300, 3.0], dtype=F64, device=DEV))


def test_copies_all_layouts():
    base = random_f64(600, 1)[:600].reshape(20, 30)
    d = base.to(DEV)
    assert_same_bits(d.clone(), base, nan_any=False)
    assert_same_bits(d.t().contiguous(), base.t().contiguous(), nan_any=False)
    assert_same_bits(d[::2, 1::3], base[::2, 1::3], nan_any=False)
    assert_same_bits(d[3:7].reshape(-1), base[3:7].reshape(-1), nan_any=False)
    # device -> device into strided destinations
    dst = torch.zeros(30, 20, dtype=F64, device=DEV)
    dst.t().copy_(d)
    assert_same_bits(dst, base.t().contiguous(), nan_any=False)
    nc = torch.zeros(20, 60, dtype=F64, device=DEV)[:, ::2]
    nc.copy_(d)
    assert_same_bits(nc, base, nan_any=False)
    # host -> strided device destination
    nc2 = torch.zeros(20, 60, dtype=F64, device=DEV)[:, 1::2]
    nc2.copy_(base)
    assert_same_bits(nc2, base, nan_any=False)
    # broadcast copy and fill
    row = torch.zeros(4, 30, dtype=F64, device=DEV)
    row.copy_(d[5])
    assert_same_bits(row, base[5].expand(4, 30), nan_any=False)
    row.fill_(-0.0)
    assert_same_bits(row, torch.full((4, 30), -0.0, dtype=F64), nan_any=False)


def test_raw_movers():
    base = random_f64(600, 2)[:600].reshape(20, 30)
    d = base.to(DEV)
    for f in (
        lambda x: torch.cat([x, x[:3]], 0),
        lambda x: torch.cat([x[:, :5], x[:, 7:]], 1),
        lambda x: torch.stack([x[1], x[4]]),
        lambda x: x.flip(0),
        lambda x: x.flip(1),
        lambda x: x.roll(3, 1),
        lambda x: x.tril(),
        lambda x: x.triu(2),
        lambda x: torch.nn.functional.pad(x, (1, 2, 3, 0)),
        lambda x: x.unsqueeze(0).expand(2, 20, 30).contiguous(),
        lambda x: x.t()[3:9].contiguous(),
    ):
        assert_same_bits(f(d), f(base), nan_any=False)
    # cat across dtypes converts as CPU does
    i = torch.arange(30, dtype=torch.int64)
    assert_same_bits(torch.cat([d[0], i.to(DEV)]), torch.cat([base[0], i]), nan_any=False)


# ---- conversions -----------------------------------------------------------------------------------

OTHER = (
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
)


@pytest.mark.parametrize("dtype", OTHER, ids=str)
def test_convert_from_f64(dtype):
    x = random_f64(4000, 3)
    if not dtype.is_floating_point and dtype != torch.bool:
        # In range of the destination (out-of-range float -> int casts are undefined in C++).
        lo, hi = (-(2.0**63), 2.0**63) if dtype in (torch.int64, torch.uint8) else (-(2.0**31), 2.0**31)
        x = x[torch.isfinite(x) & (x > lo) & (x < hi)]
        x = torch.cat([x, x * 1e-3, x * 1e-9, torch.tensor([-1.9, 255.9, 300.7, 70000.5, -129.5], dtype=F64)])
        x = x[(x > lo) & (x < hi)]
    want = x.to(dtype)
    got = x.to(DEV).to(dtype)
    assert_same_bits(got, want)
    # strided source, into a strided destination
    xs = x[: (x.numel() // 2) * 2].reshape(-1, 2)
    dst = torch.empty(2, xs.shape[0], dtype=dtype, device=DEV).t()
    dst.copy_(xs.to(DEV))
    assert_same_bits(dst, xs.to(dtype))


def _values_of(dtype, n=3000):
    g = torch.Generator().manual_seed(4)
    if dtype == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_floating_point:
        ib = torch.int32 if dtype == torch.float32 else torch.int16
        info = torch.iinfo(ib)
        r = torch.randint(info.min, info.max, (n,), generator=g, dtype=torch.int64).to(ib).view(dtype)
        return r
    info = torch.iinfo(dtype)
    r = torch.randint(info.min, info.max, (n,), generator=g, dtype=dtype)
    return torch.cat([r, torch.tensor([info.min, info.max, 0, 1, -1 if info.min < 0 else 2], dtype=dtype)])


@pytest.mark.parametrize("dtype", OTHER, ids=str)
def test_convert_to_f64(dtype):
    x = _values_of(dtype)
    assert_same_bits(x.to(DEV).to(F64), x.to(F64), nan_any=dtype != torch.float32)
    if dtype == torch.float32:  # NaN payloads are kept (quieted), as the CPU's cvtss2sd
        assert_same_bits(x.to(DEV).to(F64), x.to(F64), nan_any=False)


def test_int64_to_f64_rounding():
    # > 53-bit integers round to nearest even
    v = torch.tensor(
        [2**53 + 1, 2**53 + 3, -(2**53) - 1, 2**63 - 1, -(2**63), 2**62 + 2**9, 2**62 + 2**9 + 1], dtype=torch.int64
    )
    g = torch.randint(-(2**63), 2**63 - 1, (2000,), dtype=torch.int64)
    v = torch.cat([v, g, g >> 7, g >> 20])
    assert_same_bits(v.to(DEV).to(F64), v.to(F64))


# ---- arithmetic bit-identity ----------------------------------------------------------------------


def pairs(n=3000, seed=5):
    a = random_f64(n, seed)
    b = random_f64(n, seed + 100)[: a.numel()]
    b = b[torch.randperm(b.numel(), generator=torch.Generator().manual_seed(seed))]
    # cancellation and near ties: b close to +-a
    ai = a.view(torch.int64)
    near = (ai + torch.randint(-3, 4, ai.shape)).view(F64)
    a = torch.cat([a, a, a, a])
    b = torch.cat([b, -near, near, near * 0.5])
    return a, b


BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "div_trunc": lambda x, y: torch.div(x, y, rounding_mode="trunc"),
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "copysign": torch.copysign,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "logical_and": torch.logical_and,
    "logical_xor": torch.logical_xor,
    "add_alpha": lambda x, y: torch.add(x, y, alpha=0.3),
    "div_floor": lambda x, y: torch.div(x, y, rounding_mode="floor"),
    "fmod": torch.fmod,
    "remainder": torch.remainder,
    "heaviside": torch.heaviside,
    "nextafter": torch.nextafter,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_bits(name):
    f = BINARY[name]
    a, b = pairs()
    if name in ("fmax", "fmin"):
        # glibc's fmax/fmin (CPU's scalar path) return NaN for a signalling NaN, its vector path the
        # other operand: quiet NaNs only.
        a, b = (torch.where(torch.isnan(t), torch.full_like(t, float("nan")), t) for t in (a, b))
    if name in ("maximum", "minimum"):
        # Which zero maximum(0.0, -0.0) returns differs between CPU's vector loop (the second) and its
        # scalar tail (the first): compare with zeros made positive.
        f0 = f

        def f(x, y):
            r = f0(x, y)
            return torch.where(r == 0, torch.zeros_like(r), r)

    ref = IEEE_REM.get(name, f)
    da, db = a.to(DEV), b.to(DEV)
    assert_same_bits(f(da, db), ref(a, b))
    # non-contiguous operands and a broadcast CPU scalar
    n = b[1::3].numel()
    assert_same_bits(f(da[::3][:n], db[1::3]), ref(a[::3][:n], b[1::3]))
    s = torch.tensor(0.1, dtype=F64)
    assert_same_bits(f(da, s), ref(a, s))


UNARY = {
    "abs": torch.abs,
    "neg": torch.neg,
    "sign": torch.sign,
    "reciprocal": torch.reciprocal,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "trunc": torch.trunc,
    "round": torch.round,
    "round_dec": lambda x: torch.round(x, decimals=2),
    "frac": torch.frac,
    "isnan": torch.isnan,
    "isinf": torch.isinf,
    "isfinite": torch.isfinite,
    "signbit": torch.signbit,
    "isposinf": torch.isposinf,
    "logical_not": torch.logical_not,
    "clamp": lambda x: torch.clamp(x, -2.0, 3.0),
    "clamp_min": lambda x: torch.clamp(x, min=0.0),
    "clamp_max": lambda x: torch.clamp(x, max=-0.0),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_bits(name):
    f = UNARY[name]
    x = random_f64(4000, 6)
    x = torch.cat([x, x * 0.5 + 0.25, torch.arange(-10, 10) * 0.5])
    assert_same_bits(f(x.to(DEV)), f(x))
    assert_same_bits(f(x.to(DEV)[1::2]), f(x[1::2]))


def test_sqrt_correctly_rounded():
    # CPU's float64 sqrt (SLEEF on AVX512 builds) is not always correctly rounded (0x3ff0000010000001
    # gives ...7fffffe, the exact root is ...7fffffe.8000003): the device's is, like NumPy's.
    x = random_f64(4000, 6)
    x = torch.cat([x, x * 0.5 + 0.25, torch.tensor([0x3FF0000010000001], dtype=torch.int64).view(F64)])
    got = torch.sqrt(x.to(DEV)).cpu()
    with np.errstate(invalid="ignore"):
        exact = torch.from_numpy(np.sqrt(x.numpy()))
    assert_same_bits(got, exact)
    cpu = torch.sqrt(x)
    ok = torch.isnan(cpu) | ((got.view(torch.int64) - cpu.view(torch.int64)).abs() <= 1)
    assert ok.all()


def test_inplace_out_and_ternary():
    a, b = pairs(800, 7)
    c = random_f64(800, 8)[: a.numel()]
    c = torch.cat([c] * (a.numel() // c.numel() + 1))[: a.numel()]
    da, db, dc = a.to(DEV), b.to(DEV), c.to(DEV)
    y = da.clone()
    y.mul_(db)
    assert_same_bits(y, a * b)
    out = torch.empty_like(da)
    torch.add(da, db, out=out)
    assert_same_bits(out, a + b)
    assert_same_bits(torch.where(da > db, da, dc), torch.where(a > b, a, c))
    assert_same_bits(torch.addcmul(da, db, dc, value=0.5), torch.addcmul(a, b, c, value=0.5))
    assert_same_bits(torch.addcdiv(da, db, dc, value=2.0), torch.addcdiv(a, b, c, value=2.0))
    assert_same_bits(torch.clamp(da, db, dc), torch.clamp(a, b, c))
    assert_same_bits(da.masked_fill(db > 0, -0.0), a.masked_fill(b > 0, -0.0))
    # mixed dtypes promote to float64
    i = torch.randint(-1000, 1000, a.shape, dtype=torch.int32)
    f = torch.randn(a.shape)
    assert_same_bits(da + i.to(DEV), a + i)
    assert_same_bits(f.to(DEV) * da, f * a)
    assert_same_bits(da / 3, a / 3)


def _ieee(op):
    """CPU's fmod / remainder with its vectorised loop's one quirk undone: SLEEF's fmod gives NaN where
    a / b overflows (|a| huge, |b| tiny), CPU's scalar loop (std::fmod) and NumPy the exact value.
    The device gives the exact value everywhere; elsewhere this is CPU's result unchanged."""

    def f(a, b):
        a, b = torch.as_tensor(a, dtype=F64), torch.as_tensor(b, dtype=F64)
        want = op(a, b)
        x, y = torch.broadcast_tensors(a, b)
        with np.errstate(all="ignore"):
            m = torch.from_numpy(np.fmod(x.numpy(), y.numpy()))
        if op is torch.remainder:
            m = torch.where((m != 0) & ((y < 0) != (m < 0)), m + y, m)
        quirk = torch.isnan(want) & ~torch.isnan(m)
        assert ((x / y).abs()[quirk] == float("inf")).all()  # only where the quotient overflows
        return torch.where(quirk, m, want)

    return f


IEEE_REM = {"fmod": _ieee(torch.fmod), "remainder": _ieee(torch.remainder)}


def _with_zeros(t):
    """t with exact zeros of both signs and some repeated values mixed in (zero divisors, x == y)."""
    t = t.clone()
    t[::17] = 0.0
    t[5::23] = -0.0
    return t


def test_division_family_scalars_inplace_out():
    # fmod / remainder / floor division: CPU scalars on either side, zero divisors, in place and out=,
    # broadcasting (a row against a column) and non-contiguous operands, bit for bit.
    a, b = pairs(600, 11)
    a, b = _with_zeros(a), _with_zeros(b)
    da, db = a.to(DEV), b.to(DEV)
    fmod, remainder = IEEE_REM["fmod"], IEEE_REM["remainder"]
    for s in (1.5, -0.75, 0.0, -0.0, 1e-310, float("inf"), float("nan"), 3):
        assert_same_bits(torch.fmod(da, s), fmod(a, s))
        assert_same_bits(torch.remainder(da, s), remainder(a, s))
        assert_same_bits(torch.remainder(s, db), remainder(s, b))
        assert_same_bits(da // s, a // s)
        assert_same_bits(torch.div(da, s, rounding_mode="floor"), torch.div(a, s, rounding_mode="floor"))
    assert_same_bits(da // db, a // b)
    assert_same_bits(torch.floor_divide(da, db), torch.floor_divide(a, b))
    assert_same_bits(da % db, remainder(a, b))
    for name in ("fmod", "remainder", "floor_divide"):
        want = IEEE_REM.get(name, getattr(torch, name))(a, b)
        y = da.clone()
        getattr(y, name + "_")(db)
        assert_same_bits(y, want)
        out = torch.empty_like(da)
        getattr(torch, name)(da, db, out=out)
        assert_same_bits(out, want)
    y = da.clone()
    y.div_(db, rounding_mode="floor")
    assert_same_bits(y, torch.div(a, b, rounding_mode="floor"))
    col, row = a[:40].reshape(40, 1), b[:30].reshape(1, 30)
    for f in (torch.fmod, torch.remainder, torch.floor_divide, torch.heaviside, torch.nextafter):
        ref = IEEE_REM.get(f.__name__, f)
        assert_same_bits(f(col.to(DEV), row.to(DEV)), ref(col, row))
        n = b[1::3].numel()
        assert_same_bits(f(da[::3][:n], db[1::3]), ref(a[::3][:n], b[1::3]))
        m = a[:200].reshape(20, 10)
        assert_same_bits(f(m.to(DEV).t(), m.to(DEV).t().flip(0)), ref(m.t(), m.t().flip(0)))
    # mixed dtypes promote to float64 first
    i = torch.randint(-7, 8, a.shape, dtype=torch.int32)
    assert_same_bits(torch.fmod(da, i.to(DEV)), fmod(a, i.to(F64)))
    assert_same_bits(torch.remainder(i.to(DEV), da), remainder(i.to(F64), a))


def test_heaviside_nextafter_inplace_out():
    a, b = pairs(400, 12)
    a = _with_zeros(a)
    da, db = a.to(DEV), b.to(DEV)
    for name in ("heaviside", "nextafter"):
        y = da.clone()
        getattr(y, name + "_")(db)
        assert_same_bits(y, getattr(torch, name)(a, b))
        out = torch.empty_like(da)
        getattr(torch, name)(da, db, out=out)
        assert_same_bits(out, getattr(torch, name)(a, b))
    # nextafter steps across zero, the subnormals and the largest finite value
    x = torch.tensor([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, float("inf"), -1.0, 1.0], dtype=F64)
    y = torch.tensor([-0.0, 1.0, 0.0, 1.0, float("inf"), 0.0, float("-inf"), 1.0], dtype=F64)
    assert_same_bits(torch.nextafter(x.to(DEV), y.to(DEV)), torch.nextafter(x, y), nan_any=False)
    assert_same_bits(torch.heaviside(x.to(DEV), y.to(DEV)), torch.heaviside(x, y), nan_any=False)


@pytest.mark.parametrize("weight", [0.3, -0.25, 0.5, 0.75, 1.0, 2.5, -3.0, float("nan"), "tensor"])
def test_lerp_bits(weight):
    # CPU's lerp: |w| < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w), each one fused multiply-add.
    a, b = pairs(500, 13)
    if weight == "tensor":
        w = torch.cat([torch.rand(a.numel() // 2, dtype=F64) * 3 - 1, random_f64(a.numel(), 14)])[: a.numel()]
        dw = w.to(DEV)
    else:
        w = dw = weight
    da, db = a.to(DEV), b.to(DEV)
    assert_same_bits(torch.lerp(da, db, dw), torch.lerp(a, b, w))
    y = da.clone()
    y.lerp_(db, dw)
    assert_same_bits(y, torch.lerp(a, b, w))
    out = torch.empty_like(da)
    torch.lerp(da, db, dw, out=out)
    assert_same_bits(out, torch.lerp(a, b, w))
    # non-contiguous and broadcast operands. CPU's strided (scalar) loop and its vector loop differ in
    # the sign of a zero result (w = 1, a = 0, b = -0: (w - 1) * (b - a) + b is -0, b - (b - a) * (1 - w)
    # is +0); the device follows the vector loop, so zeros compare without their sign here.
    n = b[1::3].numel()
    ws = w[2::3][: n - 1] if weight == "tensor" else w
    dws = dw[2::3][: n - 1] if weight == "tensor" else dw
    got = torch.lerp(da[::3][: n - 1], db[1::3][: n - 1], dws)
    want = torch.lerp(a[::3][: n - 1], b[1::3][: n - 1], ws)
    assert_same_bits(got.cpu() + 0.0, want + 0.0)
    col, row = a[:40].reshape(40, 1), b[:30].reshape(1, 30)
    wc = w[:30].reshape(1, 30) if weight == "tensor" else w
    dwc = wc.to(DEV) if weight == "tensor" else wc
    assert_same_bits(torch.lerp(col.to(DEV), row.to(DEV), dwc).cpu() + 0.0, torch.lerp(col, row, wc) + 0.0)


@pytest.mark.parametrize("e", [2, 3, -1, -2, 2.0, -0.5])
def test_pow_special_exponents_bits(e):
    # the exponents CPU's pow_tensor_scalar kernel special-cases: x * x, x * x * x, 1 / x,
    # 1 / (x * x), 1 / sqrt(x); torch.square is pow(x, 2).
    x = random_f64(3000, 15)
    x = torch.cat([x, torch.arange(-10, 10) * 0.5])
    dx = x.to(DEV)
    want = torch.pow(x, e)
    if e == -0.5:
        # 1 / sqrt(x) with a correctly rounded sqrt (NumPy's; CPU's SLEEF sqrt may be one ulp off,
        # see test_sqrt_correctly_rounded)
        with np.errstate(invalid="ignore", divide="ignore"):
            want = torch.from_numpy(1.0 / np.sqrt(x.numpy()))
        assert_same_bits(torch.rsqrt(dx), want)
    assert_same_bits(torch.pow(dx, e), want)
    assert_same_bits(torch.pow(dx[1::3], e), want[1::3])
    y = dx.clone()
    y.pow_(e)
    assert_same_bits(y, want)
    if e == 2:
        assert_same_bits(torch.square(dx), torch.square(x))
    # other exponents still run CPU's kernel through the stub fallback (off here: an error)
    with pytest.raises(NotImplementedError, match="fallback is off"):
        torch.pow(dx, 2.5)


def test_hypot_within_one_ulp():
    # correctly rounded on the device; CPU's (SLEEF's vector hypot, glibc's scalar one) is within
    # 0.5001 ulp, so the two differ by at most one ulp.
    a, b = pairs(1500, 16)
    a = _with_zeros(a)
    got = torch.hypot(a.to(DEV), b.to(DEV)).cpu()
    want = torch.hypot(a, b)
    assert torch.isnan(got).eq(torch.isnan(want)).all()
    ok = torch.isnan(want) | ((got.view(torch.int64) - want.view(torch.int64)).abs() <= 1)
    assert ok.all(), (a[~ok][:4], b[~ok][:4], got[~ok][:4], want[~ok][:4])
    # exact cases are exact: Pythagorean triples, a zero operand, infinities beat NaN
    x = torch.tensor([3.0, 5.0, 0.0, -0.0, float("inf"), float("nan"), 1e-320, 2.0**600], dtype=F64)
    y = torch.tensor([4.0, -12.0, -7.5, 0.0, float("nan"), float("-inf"), 0.0, 2.0**600], dtype=F64)
    assert_same_bits(torch.hypot(x.to(DEV), y.to(DEV)), torch.hypot(x, y), nan_any=False)
    out = torch.empty(8, dtype=F64, device=DEV)
    torch.hypot(x.to(DEV), y.to(DEV), out=out)
    assert_same_bits(out, torch.hypot(x, y), nan_any=False)


def test_backward_through_native_ops():
    a = torch.randn(50, dtype=F64, requires_grad=True)
    b = torch.randn(50, dtype=F64, requires_grad=True)
    da = a.detach().to(DEV).requires_grad_()
    db = b.detach().to(DEV).requires_grad_()
    ya = (a * b - a / (b * b + 1)).abs()
    yd = (da * db - da / (db * db + 1)).abs()
    g = torch.randn(50, dtype=F64)
    ya.backward(g)
    yd.backward(g.to(DEV))
    assert_same_bits(da.grad, a.grad)
    assert_same_bits(db.grad, b.grad)


# ---- exp, log and what is built on them ----------------------------------------------------------


def ulps_apart(got, want):
    """Units in the last place between two float64 tensors (0 where equal or both NaN)."""
    d = (got.view(torch.int64) - want.view(torch.int64)).abs()
    d[(got == want) | (torch.isnan(got) & torch.isnan(want))] = 0
    return d


TRANSCENDENTAL = {"exp": 1, "exp2": 1, "expm1": 2, "log": 1, "log2": 2, "log10": 2, "log1p": 2, "sigmoid": 3}
TRANSCENDENTAL.update(tanh=2, sinh=2, cosh=2)


@pytest.mark.parametrize("name", sorted(TRANSCENDENTAL))
def test_transcendentals_within_ulps_of_cpu(name):
    # Native (the fallback is off here), within a few ulps of CPU's results, which are themselves
    # within about 1 ulp of exact: special values, subnormals, the overflow and underflow edges, and
    # random values of every scale. sinh and cosh stop short of 709.78, where CPU overflows early.
    g = torch.Generator().manual_seed(len(name))
    edges = [709.78, 709.79, -745.13, -745.14, -708.5, 710.0, 1e-20, -1e-20, 22.0, 23.0, 0.49, 0.51, 1000.0, -40.5]
    x = torch.cat(
        [torch.tensor(SPECIAL + edges, dtype=F64)]
        + [torch.randn(3000, dtype=F64, generator=g) * s for s in (1e-8, 0.3, 3, 30, 300)]
        + [torch.exp(torch.rand(3000, dtype=F64, generator=g) * 1400 - 700)]
    )
    if name in ("sinh", "cosh"):
        x = x[~(x.abs() > 709.5)]
    f = getattr(torch, name)
    with np.errstate(all="ignore"):
        want = f(x)
    if name == "log1p":
        # CPU's log1p of a subnormal is 0 or off in the 14th digit (1e-310 -> 1.00000000000005e-310);
        # the exact result rounds to x itself, as math.log1p gives.
        sub = (x != 0) & (x.abs() < 2.2250738585072014e-308)
        want = torch.where(sub, x, want)
    got = f(x.to(DEV)).cpu()
    assert got.dtype == F64
    u = ulps_apart(got, want)
    assert u.max().item() <= TRANSCENDENTAL[name], (name, x[u.argmax()].item(), got[u.argmax()].item())
    zeros = want == 0  # signed zeros as CPU's (expm1(-0) is -0, not -0 + 0)
    assert torch.equal(torch.signbit(got[zeros]), torch.signbit(want[zeros])), name


ACTIVATIONS = {
    "silu": torch.nn.functional.silu,
    "mish": torch.nn.functional.mish,
    "elu": lambda x: torch.nn.functional.elu(x, alpha=0.7),
    "celu": lambda x: torch.nn.functional.celu(x, alpha=1.3),
    "selu": torch.nn.functional.selu,
    "softplus": lambda x: torch.nn.functional.softplus(x, beta=2.0, threshold=5.0),
    "logit": lambda x: torch.logit(torch.sigmoid(x)),
    "logit_eps": lambda x: torch.logit(torch.sigmoid(x), eps=0.1),
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_and_their_gradients(name):
    # float64 activations and their backward rows natively (the fallback is off here), against CPU.
    x = torch.cat(
        [torch.randn(400, dtype=F64, generator=torch.Generator().manual_seed(3)) * 4, torch.tensor([0.0, -0.0])]
    )
    f = ACTIVATIONS[name]
    xc = x.clone().requires_grad_(True)
    xd = x.to(DEV).requires_grad_(True)
    yc, yd = f(xc), f(xd)
    g = torch.randn(x.shape, dtype=F64, generator=torch.Generator().manual_seed(4))
    yc.backward(g)
    yd.backward(g.to(DEV))
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), rtol=1e-14, atol=1e-300)
    assert torch.equal(torch.signbit(yd.detach().cpu()[-1]), torch.signbit(yc.detach()[-1])), "f(-0)"
    # 1 - tanh^2 and the like cancel where the function saturates: an ulp of the output there is a
    # large relative difference of the gradient, not an absolute one
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-13, atol=1e-15)


def test_softmax_log_softmax_logsumexp():
    # CPU's formulas over the device's float64 ops: forward and backward along every dim, rows of
    # -inf, +inf and NaN, a 0-dim input, empty rows, and logsumexp over several dims.
    g = torch.Generator().manual_seed(9)
    x = torch.randn(5, 6, 7, dtype=F64, generator=g) * 10
    x[0, 0, :] = float("-inf")
    x[1, 1, 2] = float("inf")
    x[2, 2, 3] = float("nan")
    for dim in (0, 1, 2, -1):
        for f in (torch.softmax, torch.log_softmax):
            xc = x.clone().requires_grad_(True)
            xd = x.to(DEV).requires_grad_(True)
            yc, yd = f(xc, dim), f(xd, dim)
            torch.testing.assert_close(yd.detach().cpu(), yc.detach(), rtol=1e-14, atol=1e-15, equal_nan=True)
            gr = torch.randn(x.shape, dtype=F64, generator=g)
            yc.backward(gr)
            yd.backward(gr.to(DEV))
            torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-13, atol=1e-14, equal_nan=True)
        for keep in (False, True):
            want = torch.logsumexp(x, dim, keep)
            torch.testing.assert_close(
                torch.logsumexp(x.to(DEV), dim, keep).cpu(), want, rtol=1e-14, atol=0, equal_nan=True
            )
    torch.testing.assert_close(torch.logsumexp(x.to(DEV), (0, 2)).cpu(), torch.logsumexp(x, (0, 2)), equal_nan=True)
    s = torch.tensor(1.5, dtype=F64)
    assert torch.softmax(s.to(DEV), 0).item() == 1.0 and torch.log_softmax(s.to(DEV), 0).item() == 0.0
    e = torch.empty(3, 0, dtype=F64)
    assert torch.softmax(e.to(DEV), 1).shape == (3, 0)
    assert torch.equal(torch.logsumexp(e.to(DEV), 1).cpu(), torch.logsumexp(e, 1))
    # softmax in float64 of a float32 input (OpInfo's softmax.with_dtype)
    xf = torch.randn(4, 9, generator=g)
    torch.testing.assert_close(
        torch.softmax(xf.to(DEV), 1, dtype=F64).cpu(), torch.softmax(xf, 1, dtype=F64), rtol=1e-14, atol=1e-15
    )


def test_sinh_cosh_finite_past_exp_overflow():
    # sinh and cosh stay finite up to 710.47 (CPU's vectorised kernels overflow from 709.78; Python's
    # math module, like CUDA, does not): against math.sinh / math.cosh.
    x = torch.tensor([709.79, 710.0, 710.4, -710.4, 710.5], dtype=F64)
    for name in ("sinh", "cosh"):
        got = getattr(torch, name)(x.to(DEV)).cpu()
        for v, r in zip(x.tolist(), got.tolist()):
            try:
                want = getattr(math, name)(v)
            except OverflowError:
                want = math.copysign(math.inf, v) if name == "sinh" else math.inf
            assert r == want or abs(r - want) <= 4e-16 * abs(want), (name, v, r, want)


# ---- the stub fallback and the guard --------------------------------------------------------------


def test_fallback_warns_for_transcendental():
    x = torch.rand(5, dtype=F64)
    d = x.to(DEV)
    with pytest.raises(NotImplementedError, match="fallback is off"):
        torch.sin(d)
    reset_fallback_counts()
    with fallback_enabled(True), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = torch.sin(d)
        y2 = torch.sin(d)
    assert y.device.type == DEV and y.dtype == F64
    assert torch.equal(y.cpu(), torch.sin(x)) and torch.equal(y2.cpu(), torch.sin(x))
    msgs = [str(m.message) for m in w if "runs on the CPU" in str(m.message)]
    assert len(msgs) == 1 and "sin" in msgs[0]
    assert fallback_counts().get("sin (float64)") == 2


def test_fallback_reduction_and_comparison_shapes():
    x = torch.randn(6, 7, dtype=F64)
    d = x.to(DEV)
    with fallback_enabled(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.testing.assert_close(d.sum(1).cpu(), x.sum(1), rtol=1e-13, atol=1e-13)
        assert torch.equal(d.amax(0).cpu(), x.amax(0))
        assert torch.equal(d.argmax(1).cpu(), x.argmax(1))
        # a reduction stub without a float64 row (p-norms other than 0, 1, 2, inf) runs on the CPU
        torch.testing.assert_close(torch.linalg.vector_norm(d, 3, 1).cpu(), torch.linalg.vector_norm(x, 3, 1))
        # registered directly, not through a stub: its kernel's refusal hands the call to the CPU fallback
        torch.testing.assert_close(d.logcumsumexp(1).cpu(), x.logcumsumexp(1), rtol=1e-13, atol=1e-13)
        assert torch.equal(torch.atan2(d, d.flip(0)).cpu(), torch.atan2(x, x.flip(0)))
        m = torch.randn(6, 7, dtype=F64)
        assert_same_bits(torch.pow(d, m.to(DEV)), torch.pow(x, m))


def test_float64_guard_off():
    code = (
        "import torch, torch_webgpu\n"
        "try:\n"
        "    torch.zeros(2, dtype=torch.float64, device='webgpu')\n"
        "except TypeError as e:\n"
        "    assert 'float64 is not supported' in str(e), e\n"
        "    print('refused')\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=native_env(TORCH_WEBGPU_FLOAT64="0"), capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert "refused" in r.stdout


# ---- matmul ------------------------------------------------------------------------------------------


def _k_order_mm(a, b):
    """a @ b with each product rounded and the sum taken in k order from +0, as the device does."""
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=F64)
    for k in range(a.shape[1]):
        acc = acc + a[:, k : k + 1] * b[k : k + 1, :]
    return acc


@pytest.mark.parametrize("mkn", [(5, 7, 3), (33, 40, 17), (1, 9, 4), (6, 9, 1), (16, 16, 16)])
def test_mm_fixed_order(mkn):
    m, k, n = mkn
    g = torch.Generator().manual_seed(m * 100 + k)
    a = torch.randn(m, k, generator=g, dtype=F64) * torch.logspace(-3, 3, k, dtype=F64)
    b = torch.randn(k, n, generator=g, dtype=F64)
    got = a.to(DEV) @ b.to(DEV)
    assert_same_bits(got, _k_order_mm(a, b), nan_any=False)
    torch.testing.assert_close(got.cpu(), a @ b, rtol=1e-13, atol=1e-13)
    # transposed operand (read through its strides) and out=
    out = torch.empty(m, n, dtype=F64, device=DEV)
    torch.mm(a.t().contiguous().to(DEV).t(), b.to(DEV), out=out)
    assert_same_bits(out, _k_order_mm(a, b), nan_any=False)


def test_bmm_addmm_matmul_backward():
    g = torch.Generator().manual_seed(9)
    a = torch.randn(3, 5, 7, generator=g, dtype=F64)
    b = torch.randn(3, 7, 4, generator=g, dtype=F64)
    c = torch.randn(5, 4, generator=g, dtype=F64)
    torch.testing.assert_close(torch.bmm(a.to(DEV), b.to(DEV)).cpu(), torch.bmm(a, b), rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(
        torch.addmm(c.to(DEV), a[0].to(DEV), b[0].to(DEV), beta=0.5, alpha=2.0).cpu(),
        torch.addmm(c, a[0], b[0], beta=0.5, alpha=2.0),
        rtol=1e-13,
        atol=1e-13,
    )
    x = a[1].clone().requires_grad_()
    dx = a[1].to(DEV).requires_grad_()
    (x @ b[1]).backward(torch.ones(5, 4, dtype=F64))
    (dx @ b[1].to(DEV)).backward(torch.ones(5, 4, dtype=F64, device=DEV))
    torch.testing.assert_close(dx.grad.cpu(), x.grad, rtol=1e-13, atol=1e-13)


# ---- reductions, scans and sorting (native float64) ----------------------------------------------


def ulps(got, want):
    """Distance in units of the last place between two float64 tensors (-0.0 and +0.0 are 0 apart);
    NaN must be NaN in both and infinities equal."""
    got = got.cpu()
    assert got.dtype == want.dtype == F64
    assert got.shape == want.shape
    assert torch.isnan(got).eq(torch.isnan(want)).all()
    fin = torch.isfinite(want)
    assert torch.equal(got[~fin & ~torch.isnan(want)], want[~fin & ~torch.isnan(want)])

    def ordered(t):
        b = t.contiguous().view(torch.int64)
        return torch.where(b < 0, -(b & 0x7FFFFFFFFFFFFFFF), b)

    return (ordered(got[fin]) - ordered(want[fin])).abs().max().item() if fin.any() else 0


def special_grid(rows, cols, seed):
    """rows x cols of binary64 values from random_f64: raw patterns (every exponent, NaN, inf),
    subnormals, signed zeros, huge and tiny values."""
    v = random_f64(rows * cols, seed)[: rows * cols]
    return v[torch.randperm(rows * cols, generator=torch.Generator().manual_seed(seed))].reshape(rows, cols)


def exact_sum(x, dim=None):
    """The correctly rounded sum over dim (math.fsum per row): what any summation order approximates."""
    dims = list(range(x.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    keep = [k for k in range(x.dim()) if k not in dims]
    rows = x.permute(keep + dims).reshape(-1, math.prod(x.shape[k] for k in dims))
    out = torch.tensor([math.fsum(r) for r in rows.tolist()], dtype=F64)
    return out.reshape([x.shape[k] for k in keep])


def positive(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g, dtype=F64) * torch.logspace(-3, 3, shape[-1], dtype=F64)


# Shapes that take the engine's one-invocation, lane-group and vectorised kernels, split rows
# (partials folded by a second pass) and reductions over several dims.
RED_SHAPES = [((7, 13), 1), ((7, 13), 0), ((3, 5000), 1), ((70000,), 0), ((6, 300, 4), (0, 2)), ((2000, 9), 0)]


@pytest.mark.parametrize("shape,dim", RED_SHAPES, ids=str)
def test_sum_mean_prod_within_ulps(shape, dim):
    x = positive(shape, 11)
    d = x.to(DEV)
    # a few ulps from the exact sum (a fixed tree of lanes and partials), and so from CPU's
    assert ulps(d.sum(dim), exact_sum(x, dim)) <= 4
    assert ulps(d.sum(dim), x.sum(dim)) <= 8
    assert ulps(d.sum(), exact_sum(x)) <= 4
    assert ulps(d.mean(dim, keepdim=True), x.mean(dim, keepdim=True)) <= 8
    assert ulps(d.nansum(dim), x.nansum(dim)) <= 8
    # products: each step rounds (half an ulp), so two orders differ by up to the row's length in ulps
    p = 1 + (x - 0.5) * 1e-3
    pd = dim if isinstance(dim, int) else 0
    assert ulps(p.to(DEV).prod(pd), p.prod(pd)) <= shape[pd]
    # non-contiguous input and a strided out=
    t = torch.stack([x, -x], -1).to(DEV)[..., 0]  # every other element
    assert not t.is_contiguous()
    out = torch.full((2, *x.sum(dim).shape), 7.0, dtype=F64, device=DEV)[1]
    torch.sum(t, dim, out=out)
    assert ulps(out, x.sum(dim)) <= 8
    # mixed signs: within a few ulps of sum(|x|), the bound of any summation order
    m = x * torch.where(torch.rand(shape, generator=torch.Generator().manual_seed(3)) < 0.5, -1.0, 1.0).to(F64)
    err = (m.to(DEV).sum(dim).cpu() - m.sum(dim)).abs()
    assert (err <= 16 * 2.0**-52 * x.sum(dim)).all()


def test_sums_exact_on_integers_and_special_values():
    # integer-valued doubles below 2^53 sum exactly in any order: bit-identical
    x = torch.randint(-(2**40), 2**40, (9, 3000), generator=torch.Generator().manual_seed(2)).to(F64)
    assert_same_bits(x.to(DEV).sum(1), x.sum(1), nan_any=False)
    assert_same_bits(x.to(DEV).sum(), x.sum(), nan_any=False)
    # NaN and infinities propagate as on CPU (finite values kept below overflow, which would make
    # the result depend on the order); subnormals and signed zeros take part
    s = special_grid(40, 57, 5)
    s = torch.where(torch.isfinite(s) & (s.abs() > 1e290), s * 1e-20, s)
    d = s.to(DEV)
    for dim in (0, 1):
        for f in (torch.sum, torch.nansum, torch.mean):
            assert ulps(f(d, dim), f(s, dim)) <= 1e15, f  # NaN/inf positions and values
            assert (
                (f(d, dim).cpu() - f(s, dim)).abs().nan_to_num(0).le(1e-12 * s.abs().nan_to_num(0, 0, 0).sum(dim)).all()
            )
        # products of specials and values near 1 (no overflow or underflow)
        g = torch.Generator().manual_seed(dim)
        near1 = 1 + (torch.rand(s.shape, generator=g, dtype=F64) - 0.5) * 1e-2
        q = torch.where(torch.isfinite(s) & (s != 0), near1 * s.sign(), s)
        assert ulps(q.to(DEV).prod(dim), q.prod(dim)) <= q.shape[dim]
    z = torch.full((3, 5), -0.0, dtype=F64)
    assert_same_bits(z.to(DEV).sum(1), z.sum(1), nan_any=False)
    assert_same_bits(z.to(DEV).sum(), z.sum(), nan_any=False)
    tiny = torch.full((1000,), 5e-324, dtype=F64)  # subnormal sums are exact
    assert_same_bits(tiny.to(DEV).sum(), tiny.sum(), nan_any=False)
    big = torch.tensor([1.7976931348623157e308, 1.7976931348623157e308, -1.7976931348623157e308], dtype=F64)
    assert_same_bits(big.to(DEV).sum(), big.sum(), nan_any=False)  # overflow to inf: (a + b) + c


def test_float32_accumulates_in_float64():
    x = torch.randn(5, 4001, generator=torch.Generator().manual_seed(4)) * 1e3
    d = x.to(DEV)
    assert d.sum(1, dtype=F64).dtype == F64
    assert ulps(d.sum(1, dtype=F64), x.sum(1, dtype=F64)) <= 8
    assert ulps(d.sum(dtype=F64), x.sum(dtype=F64)) <= 8
    assert ulps(d.mean(0, dtype=F64), x.mean(0, dtype=F64)) <= 8
    assert ulps(d.cumsum(1, dtype=F64)[:, :1000], x.cumsum(1, dtype=F64)[:, :1000]) == 0
    i = torch.randint(-1000, 1000, (7, 33), generator=torch.Generator().manual_seed(5))
    assert_same_bits(i.to(DEV).sum(1, dtype=F64), i.sum(1, dtype=F64), nan_any=False)


@pytest.mark.parametrize("shape,dim", [((40, 57), 1), ((40, 57), 0), ((3, 3000), 1), ((5000,), 0)], ids=str)
def test_extremes_bit_identical(shape, dim):
    s = special_grid(shape[0], shape[1] if len(shape) > 1 else 1, 7).reshape(shape)
    if len(shape) == 1:
        s = s.clone()
    d = s.to(DEV)
    for f in (torch.argmax, torch.argmin):
        assert torch.equal(f(d, dim).cpu(), f(s, dim)), f
        assert torch.equal(f(d).cpu(), f(s)), f
    for f in (torch.max, torch.min):
        v, i = f(d, dim)
        vw, iw = f(s, dim)
        assert_same_bits(v, vw)
        assert torch.equal(i.cpu(), iw)
        out_v = torch.empty(0, dtype=F64, device=DEV)
        out_i = torch.empty(0, dtype=torch.int64, device=DEV)
        f(d, dim, keepdim=True, out=(out_v, out_i))
        assert_same_bits(out_v, vw.unsqueeze(dim))
    # amax/amin and max()/min(): the extreme value (CPU's own sign of a zero among +-0 ties depends
    # on its vector path, so zeros compare as equal); NaN wins
    for f in (torch.amax, torch.amin):
        got, want = f(d, dim).cpu(), f(s, dim)
        assert torch.isnan(got).eq(torch.isnan(want)).all()
        ok = torch.isnan(want) | (got == want)
        assert ok.all()
    assert torch.equal(torch.isnan(d.max().cpu()), torch.isnan(s.max()))
    # without NaN: rows of finite values, infinities and subnormals
    f = torch.where(torch.isnan(s), torch.zeros_like(s), s)
    df = f.to(DEV)
    assert_same_bits(df.amax(dim).abs(), f.amax(dim).abs(), nan_any=False)
    assert_same_bits(df.amin(dim).abs(), f.amin(dim).abs(), nan_any=False)
    assert torch.equal(df.argmax(dim).cpu(), f.argmax(dim))
    mn, mx = torch.aminmax(df, dim=dim)
    assert torch.equal(mn.cpu(), f.amin(dim))
    assert torch.equal(mx.cpu(), f.amax(dim))
    # non-contiguous
    nc = d.transpose(0, -1) if d.dim() > 1 else d[::3]
    ncw = s.transpose(0, -1) if s.dim() > 1 else s[::3]
    assert torch.equal(nc.argmax(0).cpu(), ncw.argmax(0))
    assert_same_bits(nc.max(0).values, ncw.max(0).values)


def test_ties_and_signed_zeros_pick_the_first():
    x = torch.tensor([[0.0, -0.0, 0.0], [-0.0, 0.0, -0.0], [1.0, 1.0, -1.0], [-5e-324, 5e-324, 0.0]], dtype=F64)
    d = x.to(DEV)
    for f in (torch.max, torch.min):
        v, i = f(d, 1)
        vw, iw = f(x, 1)
        assert_same_bits(v, vw, nan_any=False)
        assert torch.equal(i.cpu(), iw)
    assert torch.equal(d.argmax(1).cpu(), x.argmax(1))
    assert torch.equal(d.argmin(1).cpu(), x.argmin(1))


def test_logical_reductions_and_counts():
    s = special_grid(40, 57, 8)
    s[3] = 0.0
    s[4, ::2] = -0.0
    s[4, 1::2] = 0.0
    s[5] = 5e-324
    d = s.to(DEV)
    for dim in (0, 1):
        assert torch.equal(d.any(dim).cpu(), s.any(dim))
        assert torch.equal(d.all(dim).cpu(), s.all(dim))
        assert torch.equal(torch.count_nonzero(d, dim).cpu(), torch.count_nonzero(s, dim))
    assert torch.equal(d.any().cpu(), s.any())
    assert torch.equal(d.all().cpu(), s.all())
    assert torch.equal(torch.count_nonzero(d).cpu(), torch.count_nonzero(s))


@pytest.mark.parametrize("correction", [0, 1, 2.5, 60])
def test_var_std(correction):
    x = torch.randn(6, 50, 7, generator=torch.Generator().manual_seed(6), dtype=F64) * 1e5 + 3e5
    d = x.to(DEV)
    for dim in (1, (0, 2), None):
        for keepdim in (False, True):
            for f in (torch.var, torch.std):
                got, want = (
                    f(d, dim, correction=correction, keepdim=keepdim),
                    f(x, dim, correction=correction, keepdim=keepdim),
                )
                torch.testing.assert_close(got.cpu(), want, rtol=1e-13, atol=0)
            for f in (torch.var_mean, torch.std_mean):
                (g1, g2), (w1, w2) = (
                    f(d, dim, correction=correction, keepdim=keepdim),
                    f(x, dim, correction=correction, keepdim=keepdim),
                )
                torch.testing.assert_close(g1.cpu(), w1, rtol=1e-13, atol=0)
                torch.testing.assert_close(g2.cpu(), w2, rtol=1e-15, atol=0)
    out = torch.empty(0, dtype=F64, device=DEV)
    torch.var(d.transpose(0, 1), 0, out=out)
    torch.testing.assert_close(out.cpu(), x.transpose(0, 1).var(0), rtol=1e-13, atol=0)
    # NaN and infinities give NaN as on CPU (finite values below 1e150: their squares do not overflow,
    # where CPU's Welford and two passes would overflow differently)
    s = special_grid(40, 57, 9)
    s = torch.where(torch.isfinite(s) & (s.abs() > 1e150), s * 1e-160, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.isnan(s.to(DEV).var(1).cpu()).eq(torch.isnan(s.var(1))).all()
        one = torch.tensor([[2.0]], dtype=F64)
        assert_same_bits(one.to(DEV).var(1), one.var(1))  # N - correction = 0: NaN
        torch.testing.assert_close(x.to(DEV).float().var(1).cpu(), x.float().var(1), rtol=1e-5, atol=0)


@pytest.mark.parametrize("ord", [0, 1, 2, float("inf"), float("-inf")])
def test_vector_norms(ord):
    x = torch.randn(9, 700, generator=torch.Generator().manual_seed(10), dtype=F64)
    x[2, 5] = 0.0
    d = x.to(DEV)
    for dim in (1, 0, None):
        got, want = torch.linalg.vector_norm(d, ord, dim), torch.linalg.vector_norm(x, ord, dim)
        exact = ord in (0, float("inf"), float("-inf"))
        assert ulps(got, want) <= (0 if exact else 16)
        if ord == 1:
            assert ulps(got, exact_sum(x.abs(), dim)) <= 4
        if ord == 2:
            assert ulps(got, exact_sum(x * x, dim).sqrt()) <= 4
    assert ulps(torch.norm(d, ord, 1), torch.norm(x, ord, 1)) <= 8
    s = special_grid(20, 31, 12)
    got, want = torch.linalg.vector_norm(s.to(DEV), ord, 1).cpu(), torch.linalg.vector_norm(s, ord, 1)
    assert torch.isnan(got).eq(torch.isnan(want)).all()
    assert torch.equal(got[torch.isinf(want)], want[torch.isinf(want)])


def test_dot_vdot_mv():
    g = torch.Generator().manual_seed(13)
    a, b = torch.randn(300, generator=g, dtype=F64), torch.randn(300, generator=g, dtype=F64)
    m = torch.randn(20, 300, generator=g, dtype=F64)
    torch.testing.assert_close(torch.dot(a.to(DEV), b.to(DEV)).cpu(), torch.dot(a, b), rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(torch.vdot(a.to(DEV), b.to(DEV)).cpu(), torch.vdot(a, b), rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(torch.mv(m.to(DEV), a.to(DEV)).cpu(), torch.mv(m, a), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("n", [1, 5, 16, 17, 700, 1024, 2500])
def test_scans(n):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(6, n, generator=g, dtype=F64)
    d = x.to(DEV)
    # rows up to 1024 scan in CPU's order: bit-identical; longer ones within a few ulps of the row's size
    if n <= 1024:
        assert_same_bits(d.cumsum(1), x.cumsum(1), nan_any=False)
        assert_same_bits(d.cumprod(1), x.cumprod(1), nan_any=False)
    else:
        err = (d.cumsum(1).cpu() - x.cumsum(1)).abs()
        assert (err <= 64 * 2.0**-52 * x.abs().cumsum(1)).all()
        p = 1 + x * 1e-4
        assert ulps(p.to(DEV).cumprod(1), p.cumprod(1)) <= 64
    for f in (torch.cummax, torch.cummin):
        v, i = f(d, 1)
        vw, iw = f(x, 1)
        assert_same_bits(v, vw, nan_any=False)
        assert torch.equal(i.cpu(), iw)
    # along dim 0 (non-contiguous rows) and out=
    out = torch.empty(0, dtype=F64, device=DEV)
    torch.cumsum(d.t(), 1, out=out)
    assert_same_bits(out, x.t().cumsum(1), nan_any=False)


def test_scans_special_values():
    s = special_grid(30, 41, 14)
    d = s.to(DEV)
    for dim in (0, 1):
        assert_same_bits(d.cumsum(dim), s.cumsum(dim))
        assert_same_bits(d.cumprod(dim), s.cumprod(dim))
        for f in (torch.cummax, torch.cummin):
            v, i = f(d, dim)
            vw, iw = f(s, dim)
            assert_same_bits(v, vw)
            assert torch.equal(i.cpu(), iw)
    z = torch.tensor([-0.0, -0.0, 0.0, -0.0], dtype=F64)
    assert_same_bits(z.to(DEV).cumsum(0), z.cumsum(0), nan_any=False)
    assert_same_bits(z.to(DEV).cummax(0).values, z.cummax(0).values, nan_any=False)
    assert torch.equal(z.to(DEV).cummin(0).indices.cpu(), z.cummin(0).indices)


@pytest.mark.parametrize("n", [57, 1500])
def test_sort_total_order(n):
    s = special_grid(12, n, 15)
    s[0, : n // 2] = 0.0
    s[0, n // 2 :] = -0.0  # ties: a stable sort keeps their order
    s[1, ::3] = float("nan")
    d = s.to(DEV)
    for desc in (False, True):
        v, i = torch.sort(d, dim=1, descending=desc, stable=True)
        vw, iw = torch.sort(s, dim=1, descending=desc, stable=True)
        assert_same_bits(v, vw)
        assert torch.equal(i.cpu(), iw)
        assert torch.equal(torch.argsort(d, dim=1, descending=desc, stable=True).cpu(), iw)
    v, i = torch.sort(d.t(), 0)
    vw, iw = torch.sort(s.t(), dim=0, stable=True)
    assert_same_bits(v, vw)
    assert torch.equal(i.cpu(), iw)


def test_topk_kthvalue_median():
    g = torch.Generator().manual_seed(16)
    x = torch.randn(8, 301, generator=g, dtype=F64)  # distinct values: the indices are unique
    x[1, 7] = float("nan")
    x[2, :] = float("inf")
    d = x.to(DEV)
    for largest in (True, False):
        v, i = torch.topk(d, 10, 1, largest=largest)
        vw, iw = torch.topk(x, 10, 1, largest=largest)
        assert_same_bits(v, vw)
        assert torch.equal(i.cpu()[[0, 1, 3]], iw[[0, 1, 3]])
    v, i = torch.kthvalue(d, 17, 1)
    vw, iw = torch.kthvalue(x, 17, 1)
    assert_same_bits(v, vw)
    assert torch.equal(i.cpu()[[0, 1, 3]], iw[[0, 1, 3]])
    for f in (torch.median, torch.nanmedian):
        v, i = f(d, 1)
        vw, iw = f(x, 1)
        assert_same_bits(v, vw)
        assert torch.equal(i.cpu()[[0, 1, 3]], iw[[0, 1, 3]])
        assert_same_bits(f(d), f(x))


def test_unique_searchsorted_bucketize():
    x = torch.tensor([3.0, -0.0, 0.0, float("nan"), 1e-310, 3.0, float("-inf"), 1e-310, float("nan"), -2.5], dtype=F64)
    d = x.to(DEV)
    u, inv, cnt = torch.unique(d, return_inverse=True, return_counts=True)
    uw, invw, cntw = torch.unique(x, return_inverse=True, return_counts=True)
    assert_same_bits(u, uw)
    assert torch.equal(inv.cpu(), invw)
    assert torch.equal(cnt.cpu(), cntw)
    y = torch.tensor([1.0, 1.0, -0.0, 0.0, 2.0, 2.0, 1e300], dtype=F64)
    uc, cc = torch.unique_consecutive(y.to(DEV), return_counts=True)
    ucw, ccw = torch.unique_consecutive(y, return_counts=True)
    assert_same_bits(uc, ucw)
    assert torch.equal(cc.cpu(), ccw)
    b = torch.tensor([-1e300, -1.0, -5e-324, 0.0, 5e-324, 1.0, 1.0, 2.5, 1e300, float("inf")], dtype=F64)
    v = torch.tensor(
        [[-float("inf"), -1.0, -0.0, 0.0, 5e-324, 1.0, 1.0000000000000002, 3.0, float("inf"), float("nan")]], dtype=F64
    )
    for right in (False, True):
        assert torch.equal(
            torch.searchsorted(b.to(DEV), v.to(DEV), right=right).cpu(), torch.searchsorted(b, v, right=right)
        )
        assert torch.equal(torch.bucketize(v.to(DEV), b.to(DEV), right=right).cpu(), torch.bucketize(v, b, right=right))
    # float32 values against float64 boundaries promote to float64
    v32 = torch.tensor([1.0, 1.0000001, -0.5], dtype=torch.float32)
    assert torch.equal(torch.searchsorted(b.to(DEV), v32.to(DEV)).cpu(), torch.searchsorted(b, v32))


def test_isin():
    x = torch.tensor([3.0, -0.0, 0.0, float("nan"), 5e-324, float("-inf"), 1e300, -2.5, 1.0000000000000002], dtype=F64)
    t = torch.tensor([0.0, float("nan"), 5e-324, float("-inf"), 1.0, -2.5], dtype=F64)
    for invert in (False, True):
        assert torch.equal(torch.isin(x.to(DEV), t.to(DEV), invert=invert).cpu(), torch.isin(x, t, invert=invert))
    big = torch.arange(400, dtype=F64) * 0.5  # a large test set: ATen's sorting path (unique, sort)
    assert torch.equal(torch.isin(x.to(DEV), big.to(DEV)).cpu(), torch.isin(x, big))
    i32 = torch.tensor([0, 3, -2], dtype=torch.int32)  # promoted to float64
    assert torch.equal(torch.isin(i32.to(DEV), x.to(DEV)).cpu(), torch.isin(i32, x))
    assert torch.equal(torch.isin(-0.0, t.to(DEV)).cpu(), torch.isin(-0.0, t))
