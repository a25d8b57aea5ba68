# uint16/uint32/uint64 and the float8 dtypes on the device (docs/design.md, "Dtype storage"): storage
# and copies in every layout, conversions to and from every stored dtype bit-exact against CPU's casts
# (float8 exhaustively: all 256 codes, and float32 inputs at every rounding boundary), item/print,
# the ops CPU computes for them, the errors of those it does not.
import pytest
import torch
from webgpu_env import DEV, DTYPES

import torch_webgpu  # noqa: F401

UINTS = (torch.uint16, torch.uint32, torch.uint64)
FP8 = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)
NEW = UINTS + FP8
# A signed integer dtype of the same width: CPU computes references of raw moves through it.
SAME_WIDTH = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def name(d):
    return str(d)[6:]


def as_bits(t):
    return t.view(SAME_WIDTH[t.element_size()])


def assert_bits(ref, out):
    out = out.cpu()
    assert ref.dtype == out.dtype, (ref.dtype, out.dtype)
    assert ref.shape == out.shape, (ref.shape, out.shape)
    if ref.dtype.is_floating_point and ref.element_size() >= 2:
        ref, out = ref.view(SAME_WIDTH[ref.element_size()]), out.view(SAME_WIDTH[out.element_size()])
    elif ref.dtype in NEW:
        ref, out = as_bits(ref), as_bits(out)
    assert torch.equal(ref, out), (ref, out)


def random_bits(dt, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    size = torch.empty((), dtype=dt).element_size()
    return torch.randint(-128, 128, (n * size,), dtype=torch.int8, generator=g).view(dt)


# ---- storage and copies ---------------------------------------------------------------------


@pytest.mark.parametrize("dt", NEW, ids=name)
@pytest.mark.parametrize("n", [1, 3, 7, 33, 1000])
def test_roundtrip(dt, n):
    x = random_bits(dt, n)
    assert_bits(x, x.to(DEV))
    assert x.to(DEV).dtype == dt


@pytest.mark.parametrize("dt", NEW, ids=name)
def test_strided_copies(dt):
    x = random_bits(dt, 6 * 35, seed=1).reshape(6, 35)
    d = x.to(DEV)
    assert_bits(x[1:, 3::2], d[1:, 3::2])  # offset + strided download
    assert_bits(x.t().contiguous(), d.t().contiguous())
    assert_bits(x.clone(), d.clone())
    # strided destination on the device, from the host and from the device
    dst_c = torch.zeros(6, 70, dtype=torch.uint8).view(dt) if dt in FP8 else torch.zeros(6, 70, dtype=dt)
    dst_d = dst_c.to(DEV)
    dst_c[:, 1::2] = x
    dst_d[:, 1::2] = x
    assert_bits(dst_c, dst_d)
    dst_d2 = torch.zeros_like(dst_c).to(DEV)
    dst_d2[:, 1::2] = d
    assert_bits(dst_c, dst_d2)
    # device -> device, overlapping an offset view of the same storage
    e = d.clone().flatten()
    e[1:100].copy_(e[50:149].clone())
    r = x.clone().flatten()
    r[1:100] = r[50:149].clone()
    assert_bits(r, e)


@pytest.mark.parametrize("dt", NEW, ids=name)
def test_raw_moving_ops(dt):
    x = random_bits(dt, 5 * 13, seed=2).reshape(5, 13)
    y = random_bits(dt, 5 * 13, seed=3).reshape(5, 13)
    d, e = x.to(DEV), y.to(DEV)
    b = as_bits  # CPU reference through the same-width signed type (CPU lacks some of these)

    def back(t):
        return t.view(dt)

    assert_bits(back(torch.cat([b(x), b(y)], 1)), torch.cat([d, e], 1))
    assert_bits(back(torch.stack([b(x), b(y)])), torch.stack([d, e]))
    assert_bits(back(b(x).flip(1)), d.flip(1))
    assert_bits(back(b(x).roll(3, 1)), d.roll(3, 1))
    idx = torch.tensor([4, 0, 2, 2])
    assert_bits(back(b(x).index_select(0, idx)), d.index_select(0, idx.to(DEV)))
    gi = torch.randint(0, 13, (5, 7), generator=torch.Generator().manual_seed(4))
    assert_bits(back(b(x).gather(1, gi)), d.gather(1, gi.to(DEV)))
    assert_bits(back(b(x)[:, ::3]), d[:, ::3].contiguous())
    assert_bits(back(b(x)[idx]), d[idx.to(DEV)])
    si = torch.tensor([[3, 1, 0]])
    assert_bits(back(b(x).scatter(1, si, b(y)[:1, :3])), d.scatter(1, si.to(DEV), e[:1, :3]))
    cond = torch.rand(5, 13, generator=torch.Generator().manual_seed(5)) > 0.5
    assert_bits(back(torch.where(cond, b(x), b(y))), torch.where(cond.to(DEV), d, e))
    # masked_fill with a value of the dtype (its CPU cast), and the pad fill
    v = 7 if dt in UINTS else 1.5
    ref = torch.where(cond, torch.tensor(v).to(dt).view(b(x).dtype), b(x)).view(dt)
    assert_bits(ref, d.masked_fill(cond.to(DEV), v))
    padded = torch.nn.functional.pad(d, (1, 2))
    assert_bits(back(torch.nn.functional.pad(b(x), (1, 2))), padded)


@pytest.mark.parametrize("dt", NEW, ids=name)
def test_fill_and_factories(dt):
    for v in [0, 1, 3] + ([255, 65535, 2**32 - 1, 2**62 + 5] if dt in UINTS else [0.3, -2.75, 100.0]):
        if (dt is torch.uint16 and v > 65535) or (dt is torch.uint32 and v > 2**32 - 1):
            continue
        assert_bits(torch.full((5,), v, dtype=dt), torch.full((5,), v, dtype=dt, device=DEV))
        t = torch.zeros(7, dtype=dt, device=DEV)
        t[1::2] = v
        r = torch.zeros(7, dtype=dt)
        r[1::2] = v
        assert_bits(r, t)
    assert_bits(torch.ones(3, dtype=dt), torch.ones(3, dtype=dt, device=DEV))


@pytest.mark.parametrize("dt", NEW, ids=name)
def test_item_and_print(dt):
    vals = {
        torch.uint16: [0, 65535, 40000],
        torch.uint32: [0, 2**32 - 1, 2**31 + 3],
        torch.uint64: [0, 2**64 - 1, 2**63 + 7],
    }
    x = torch.tensor(vals[dt], dtype=dt) if dt in UINTS else torch.tensor([0.5, -448.0, 3.25]).to(dt)
    d = x.to(DEV)
    for i in range(3):
        assert d[i].item() == x[i].item() or (x[i].float().isnan() and d[i].float().isnan().item())
    printed = " ".join(repr(d).split()).replace(" device='webgpu:0',", "")
    assert printed == " ".join(repr(x).split())


# ---- conversions ------------------------------------------------------------------------------

FLOAT_VALUES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.5,
    3.5,
    -2.5,
    255.0,
    256.0,
    65535.0,
    65535.5,
    65536.0,
    70000.0,
    -70000.0,
    2.0**31,
    2.0**31 - 128,
    3e9,
    2.0**32,
    2.0**32 + 512,
    2.0**63,
    2.0**63 - 2**39,
    2.0**64,
    1e20,
    -1e20,
    -3e9,
    -(2.0**63),
    float("nan"),
    float("inf"),
    -float("inf"),
    1e-3,
    448.0,
    460.0,
    464.0,
    470.0,
    480.0,
    57344.0,
    61440.0,
    65520.0,
    240.0,
    248.0,
    2.0**-10,
    2.0**-17,
    1e-40,
]


def values(dt):
    if dt in FP8:
        return torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dt)
    if dt.is_floating_point:
        return torch.tensor(FLOAT_VALUES).to(dt)
    if dt is torch.bool:
        return torch.tensor([True, False, True])
    info = torch.iinfo(dt)
    hi = 2**64 - 1 if dt is torch.uint64 else info.max
    base = [0, 1, 2, 7, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 2**24 + 1, 2**31 - 1, 2**31, 2**32 - 1]
    base += [2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 2**40 + 1, 2**64 - 1, -1, -2, -128, -32768, -(2**31), -(2**63)]
    kept = [v for v in base if info.min <= v <= hi]
    if dt is torch.uint64:
        return torch.tensor(kept, dtype=torch.uint64)
    return torch.tensor(kept, dtype=torch.int64).to(dt)


def defined(x, dst):
    """Where CPU's cast of x to dst is defined behaviour (float -> integer in range)."""
    if not x.dtype.is_floating_point or dst.is_floating_point or dst is torch.bool:
        return torch.ones(x.shape, dtype=torch.bool)
    f = x.float()
    lim = {torch.int64: 2.0**63, torch.uint8: 2.0**63, torch.uint64: 2.0**64, torch.uint32: 2.0**32}.get(dst, 2.0**31)
    low = -(2.0**63) if dst in (torch.int64, torch.uint8, torch.uint64) else -(2.0**31)
    return (f < lim) & (f > low) & ~f.isnan()


STORED = DTYPES + NEW
PAIRS = [(s, d) for s in NEW for d in STORED] + [(s, d) for s in DTYPES for d in NEW]


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{name(s)}-{name(d)}" for s, d in PAIRS])
def test_conversion(src, dst):
    x = values(src)
    if src in FP8 and dst not in FP8 and not dst.is_floating_point and dst is not torch.bool:
        x = x[~x.float().isnan()]
    keep = defined(x, dst)
    ref = x.to(dst)
    out = x.to(DEV).to(dst)
    assert_bits(ref[keep], out.cpu()[keep])
    # non-contiguous source with an offset, into a strided destination
    xs = torch.stack([x, x]).t()[:, 1]
    od = torch.stack([x, x]).t().to(DEV)[:, 1].to(dst)
    assert_bits(xs.to(dst)[keep], od.cpu()[keep])


@pytest.mark.parametrize("dt", FP8, ids=name)
def test_fp8_all_codes_to_float(dt):
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dt)
    d = codes.to(DEV)
    for f in (torch.float32, torch.float16, torch.bfloat16):
        assert_bits(codes.to(f), d.to(f))


def boundary_inputs(dt):
    """float32 values at and one ulp either side of every rounding boundary of dt, and its extremes."""
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dt).float()
    v = codes[~codes.isnan()].unique()
    v = v[v >= 0]
    mids = (v[1:] + v[:-1]) / 2  # exact in float32
    top = v.max()
    step = top - v[v < top].max()
    extra = torch.tensor([top + step / 2, top + step, 2 * top, float("inf"), float("nan"), 1e-30, 1e-45, 3e38])
    pts = torch.cat([v, mids, extra])
    pts = torch.cat([pts, pts.nextafter(torch.tensor(float("inf"))), pts.nextafter(torch.tensor(0.0))])
    return torch.cat([pts, -pts])


@pytest.mark.parametrize("dt", FP8, ids=name)
def test_fp8_rounding_boundaries(dt):
    x = boundary_inputs(dt)
    assert x.numel() > 1000
    assert_bits(x.to(dt), x.to(DEV).to(dt))
    # from float16 and bfloat16 too (through float32, as CPU)
    for f in (torch.float16, torch.bfloat16):
        xf = x.to(f)
        assert_bits(xf.to(dt), xf.to(DEV).to(dt))


# ---- arithmetic -------------------------------------------------------------------------------


def uvals(dt, n=64, seed=0):
    return random_bits(dt, n, seed=seed)


@pytest.mark.parametrize("dt", UINTS, ids=name)
def test_uint_ops_cpu_has(dt):
    x, y = uvals(dt), uvals(dt, seed=1)
    y[::5] = x[::5]
    d, e = x.to(DEV), y.to(DEV)
    for op in (torch.mul, torch.eq, torch.ne, torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor):
        assert_bits(op(x, y), op(d, e))
    assert_bits(x * 3, d * 3)
    assert_bits(x == x[3].item(), d == x[3].item())
    for op in (torch.floor, torch.ceil, torch.round, torch.trunc):
        assert_bits(op(x), op(d))
    # strided operands and out=
    assert_bits(x[::2] * y[1::2], d[::2] * e[1::2])
    o = torch.empty(32, dtype=dt, device=DEV)
    torch.mul(d[::2], e[::2], out=o)
    assert_bits(x[::2] * y[::2], o)
    z = d.clone()
    z.mul_(e)
    assert_bits(x * y, z)
    # float results: exact conversions, then float32 arithmetic (within float32 tolerance)
    torch.testing.assert_close(torch.true_divide(x, 3), torch.true_divide(d, 3).cpu())
    torch.testing.assert_close(torch.true_divide(x, y), torch.true_divide(d, e).cpu())
    torch.testing.assert_close(x.sqrt(), d.sqrt().cpu())


@pytest.mark.parametrize("dt", UINTS, ids=name)
@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a < b,
        lambda a, b: a >= b,
        lambda a, b: a << b,
        lambda a, b: a >> b,
        lambda a, b: torch.maximum(a, b),
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: -a,
        lambda a, b: a.clamp(1, 3),
    ],
    ids=["add", "sub", "lt", "ge", "lshift", "rshift", "maximum", "floordiv", "remainder", "neg", "clamp"],
)
def test_uint_ops_cpu_lacks_raise_as_cpu(dt, op):
    x, y = uvals(dt, 8), uvals(dt, 8, seed=1)
    with pytest.raises(NotImplementedError):
        op(x, y)
    with pytest.raises(NotImplementedError):
        op(x.to(DEV), y.to(DEV))


@pytest.mark.parametrize("dt", FP8, ids=name)
def test_fp8_ops(dt):
    x = torch.randn(40, generator=torch.Generator().manual_seed(0)).mul(8).to(dt)
    y = torch.randn(40, generator=torch.Generator().manual_seed(1)).mul(8).to(dt)
    d, e = x.to(DEV), y.to(DEV)
    assert_bits(x * y, d * e)
    assert_bits(x.abs(), d.abs())
    # every code, NaNs and -0.0 included, for abs, products and comparisons
    c = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dt)
    a, b = c.repeat_interleave(256), c.repeat(256)
    assert_bits(c.abs(), c.to(DEV).abs())
    # Products: bit-exact, except that a NaN's sign is the hardware's (NVIDIA returns a positive
    # NaN, as CUDA does, where CPU keeps the operand's sign).
    p, q = a * b, (a.to(DEV) * b.to(DEV)).cpu()
    nan = p.float().isnan()
    assert torch.equal(nan, q.float().isnan())
    assert_bits(p[~nan], q[~nan])
    assert_bits(a == b, a.to(DEV) == b.to(DEV))
    assert_bits(a != b, a.to(DEV) != b.to(DEV))
    assert_bits(x == y, d == e)
    assert_bits(x != y, d != e)
    assert_bits(x.isnan(), d.isnan())
    with pytest.raises(NotImplementedError):
        x + y
    with pytest.raises(NotImplementedError):
        d + e
    with pytest.raises(RuntimeError, match="Promotion for Float8"):
        d * torch.ones(40, device=DEV)
    # CPU has no float8 product with a one-element operand (its reduced-float scalar path)
    with pytest.raises(NotImplementedError):
        x * 3
    with pytest.raises(NotImplementedError):
        d * 3


@pytest.mark.parametrize("dt", FP8, ids=name)
def test_fp8_mm_addmm(dt):
    # integer values: every product and sum is exact in float32, so the one rounding matches bit for bit
    g = torch.Generator().manual_seed(11)
    a = torch.randint(-6, 7, (24, 40), generator=g).float().to(dt)
    b = torch.randint(-6, 7, (40, 20), generator=g).float().to(dt)
    c = torch.randint(-30, 31, (24, 20), generator=g).float().to(dt)
    ad, bd, cd = a.to(DEV), b.to(DEV), c.to(DEV)
    assert_bits(a @ b, ad @ bd)
    assert_bits(a.t().contiguous().t() @ b, ad.t().contiguous().t() @ bd)  # transposed operand
    assert_bits(torch.addmm(c, a, b, beta=0.5, alpha=2), torch.addmm(cd, ad, bd, beta=0.5, alpha=2))
    o = torch.empty(24, 20, dtype=dt, device=DEV)
    torch.mm(ad, bd, out=o)
    assert_bits(a @ b, o)
    # random values: within one float8 step of CPU (float32 sums in another order)
    x = torch.randn(16, 64, generator=g).to(dt)
    y = torch.randn(64, 8, generator=g).to(dt)
    torch.testing.assert_close((x.to(DEV) @ y.to(DEV)).cpu().float(), (x @ y).float(), rtol=0.13, atol=1e-2)
    with pytest.raises(NotImplementedError):
        torch.bmm(a[None], b[None])
    with pytest.raises(NotImplementedError):
        torch.bmm(ad[None], bd[None])


@pytest.mark.parametrize("dt", UINTS, ids=name)
def test_uint_random_from_to(dt):
    hi = {torch.uint16: 2**16, torch.uint32: 2**32, torch.uint64: 2**62}[dt]
    for lo, top in ((5, 100), (0, hi), (hi // 2, hi)):
        t = torch.empty(4000, dtype=dt, device=DEV).random_(lo, top).cpu()
        v = t.view(torch.int64) if dt is torch.uint64 else t.to(torch.int64)
        assert v.min().item() >= lo
        assert v.max().item() < top
        assert v.unique().numel() > 50  # not a constant
    with pytest.raises(NotImplementedError):
        torch.empty(4, dtype=dt).random_()
    with pytest.raises(NotImplementedError):
        torch.empty(4, dtype=dt, device=DEV).random_()


@pytest.mark.parametrize("dt", UINTS, ids=name)
def test_uint_reductions_and_sorts(dt):
    x = uvals(dt, 300, seed=7).reshape(3, 100)
    d = x.to(DEV)
    for f in (
        lambda t: t.sum(),
        lambda t: t.sum(1),
        lambda t: t.nansum(0),
        lambda t: t.prod(1),
        lambda t: t.cumsum(1),
        lambda t: t.cumprod(0),
        lambda t: t.any(1),
        lambda t: t.all(0),
        lambda t: t.sort(1)[0],
        lambda t: t.sort(1, descending=True)[0],
        lambda t: t.argsort(stable=True, dim=1),
        lambda t: t.flatten().unique(),
        lambda t: t[:, ::3].sum(0),  # strided input
    ):
        assert_bits(f(x), f(d))
    # into their own dtype CPU has no kernel (sum_cpu, cumsum_out_cpu, prod_out_cpu): neither has the device
    for f in (lambda t: t.sum(dtype=dt), lambda t: t.cumsum(0, dtype=dt), lambda t: t.prod(dtype=dt)):
        with pytest.raises(NotImplementedError):
            f(x)
        with pytest.raises(NotImplementedError):
            f(d)
    # values around the sign bits sort as unsigned numbers
    top = {torch.uint16: 2**15, torch.uint32: 2**31, torch.uint64: 2**63}[dt]
    v = torch.tensor([top + 1, 5, top, 0, top - 1, 2 * (top - 1) + 1], dtype=torch.uint64).to(dt)
    assert_bits(v.sort()[0], v.to(DEV).sort()[0])
    assert_bits(v.sort(descending=True)[1], v.to(DEV).sort(descending=True)[1])
    u, inv, cnt = torch.cat([v, v[:3]]).unique(return_inverse=True, return_counts=True)
    ud, invd, cntd = torch.cat([v, v[:3]]).to(DEV).unique(return_inverse=True, return_counts=True)
    assert_bits(u, ud)
    assert_bits(inv, invd)
    assert_bits(cnt, cntd)


@pytest.mark.parametrize("dt", NEW, ids=name)
def test_unlisted_kernels_raise_not_implemented(dt):
    # CPU lacks these for every new dtype; the device raises the same exception type
    x = random_bits(dt, 12, seed=9)
    for f in (
        lambda t: t.amax(),
        lambda t: t.argmax(),
        lambda t: t.topk(2),
        lambda t: t.cummax(0),
        lambda t: t.view(3, 4).trace(),
        lambda t: t.view(3, 4).tril(),
        lambda t: t.nonzero(),
    ):
        with pytest.raises(NotImplementedError):
            f(x)
        with pytest.raises(NotImplementedError):
            f(x.to(DEV))


# ---- torch._scaled_mm -------------------------------------------------------------------------


def fp8_operands(m, k, n, da=torch.float8_e4m3fn, db=torch.float8_e4m3fn, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = (torch.randn(m, k, generator=g) * 4).to(da)
    b = (torch.randn(n, k, generator=g) * 4).to(db).t()  # column-major, as CUDA requires
    return a, b


def dev_args(*ts):
    return [t.to(DEV) if isinstance(t, torch.Tensor) else t for t in ts]


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float8_e4m3fn])
@pytest.mark.parametrize("rowwise", [False, True], ids=["tensorwise", "rowwise"])
def test_scaled_mm_matches_cpu(out_dtype, rowwise):
    m, k, n = 32, 48, 16
    a, b = fp8_operands(m, k, n, db=torch.float8_e5m2)
    if rowwise:
        g = torch.Generator().manual_seed(3)
        sa, sb = torch.rand(m, 1, generator=g) + 0.5, torch.rand(1, n, generator=g) + 0.5
    else:
        sa, sb = torch.tensor(0.75), torch.tensor(1.5)
    kw = {"out_dtype": out_dtype}
    if out_dtype in (torch.bfloat16, torch.float16):
        kw["bias"] = torch.randn(n).to(out_dtype)
    if out_dtype == torch.float8_e4m3fn:
        kw["scale_result"] = torch.tensor(8.0)
    try:
        ref = torch._scaled_mm(a, b, sa, sb, **kw)
    except RuntimeError as e:  # torch 2.11's CPU _scaled_mm: per-tensor scales only
        if rowwise and "per-tensor" in str(e):
            pytest.skip("this torch's CPU _scaled_mm has no row-wise scales to compare with")
        raise
    dkw = {key: (v.to(DEV) if isinstance(v, torch.Tensor) else v) for key, v in kw.items()}
    out = torch._scaled_mm(*dev_args(a, b, sa, sb), **dkw)
    assert out.device.type == DEV
    assert out.dtype == ref.dtype
    assert out.shape == (m, n)
    tol = {torch.float32: 1e-4, torch.bfloat16: 1.6e-2, torch.float16: 1e-3, torch.float8_e4m3fn: 0.13}[out_dtype]
    torch.testing.assert_close(out.cpu().float(), ref.float(), rtol=tol, atol=tol)
    # the float32 reference of the task: (a * scale_a) @ (b * scale_b)
    if out_dtype == torch.float32:
        torch.testing.assert_close(out.cpu(), (a.float() * sa) @ (b.float() * sb), rtol=1e-4, atol=1e-4)
    # out= variant
    o = torch.empty(m, n, dtype=ref.dtype, device=DEV)
    torch._scaled_mm(*dev_args(a, b, sa, sb), out=o, **dkw)
    assert_bits(out.cpu(), o)


def test_scaled_mm_default_dtype_and_empty():
    a, b = fp8_operands(16, 32, 16)
    one = torch.tensor(1.0)
    out = torch._scaled_mm(*dev_args(a, b, one, one))
    assert out.dtype == torch.float8_e4m3fn
    torch.testing.assert_close(out.cpu().float(), torch._scaled_mm(a, b, one, one).float(), rtol=0.13, atol=0.0)
    z = torch._scaled_mm(*dev_args(a[:0], b, one, one), out_dtype=torch.float32)
    assert z.shape == (0, 16)


def test_scaled_mm_errors_as_cuda():
    a, b = fp8_operands(16, 32, 16)
    one = torch.tensor(1.0)
    ad, bd, od = dev_args(a, b, one)

    def call(*args, **kw):
        return torch._scaled_mm(*args, **kw)

    with pytest.raises(RuntimeError, match="row-major and column-major"):
        call(ad, bd.contiguous(), od, od)
    with pytest.raises(RuntimeError, match="row-major and column-major"):
        call(ad.t().contiguous().t(), bd, od, od)
    a2, b2 = fp8_operands(16, 24, 16)
    with pytest.raises(RuntimeError, match="divisible by 16"):
        call(*dev_args(a2, b2, one, one))
    a3, b3 = fp8_operands(16, 32, 24)
    with pytest.raises(RuntimeError, match="divisible by 16"):
        call(*dev_args(a3, b3, one, one))
    with pytest.raises(RuntimeError, match="must be a matrix"):
        call(ad[None], bd, od, od)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        call(ad, bd[:16], od, od)
    with pytest.raises(ValueError, match="Invalid scaling configuration"):
        call(ad, bd, torch.ones(2, device=DEV), od)
    with pytest.raises(ValueError, match="Invalid scaling configuration"):
        call(ad.float(), bd.float(), od, od)
    with pytest.raises(ValueError, match="Invalid scaling configuration"):
        call(ad, bd, od.half(), od.half())
    a5, b5 = fp8_operands(16, 32, 16, torch.float8_e5m2, torch.float8_e5m2)
    with pytest.raises(ValueError, match="two Float8_e5m2"):
        call(*dev_args(a5, b5, one, one))
    with pytest.raises(RuntimeError, match="Bias is not supported when out_dtype is set to Float32"):
        call(ad, bd, od, od, bias=torch.zeros(16, device=DEV, dtype=torch.bfloat16), out_dtype=torch.float32)
    with pytest.raises(RuntimeError, match="Bias must be size 16"):
        call(ad, bd, od, od, bias=torch.zeros(8, device=DEV, dtype=torch.bfloat16), out_dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="Bias must be BFloat16 or Half"):
        call(ad, bd, od, od, bias=torch.zeros(16, device=DEV), out_dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="scale_result must be a float scalar"):
        call(ad, bd, od, od, scale_result=torch.ones(2, device=DEV))
    with pytest.raises(RuntimeError, match="same device"):
        call(ad, bd, one, od)
