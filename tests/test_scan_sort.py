"""Scans and order ops against CPU: cumsum, cumprod, cummax, cummin, logcumsumexp, sort, argsort,
msort, topk, kthvalue, median, nanmedian, mode, unique, unique_consecutive, searchsorted, bucketize,
histc, bincount. Every dtype the device holds, any dim, non-contiguous inputs, out=, NaN, duplicates
(stability), empty and 0-dim inputs, and rows long enough for the multi-pass paths (scan: more than
one 1024-element tile, and more than 1024 tiles; sort: rows past one 1024-pair tile)."""

import pytest
import torch
from webgpu_env import DTYPES

import torch_webgpu  # noqa: F401

W = "webgpu"
NAN = float("nan")
ALL = list(DTYPES)
FLOATS = [torch.float32, torch.float16, torch.bfloat16]


def make(shape, dtype, nan=False, seed=0, scale=4.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * scale
    if dtype == torch.uint8:
        x = x.abs()
    x = x.to(dtype)
    if nan and dtype.is_floating_point and x.numel():
        x.view(-1)[::7] = NAN
    return x


def same(a, b):
    """Exact equality (NaN equals NaN), dtype and shape included."""
    b = b.cpu()
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if a.is_floating_point():
        assert torch.equal(a.isnan(), b.isnan())
        a, b = a.nan_to_num(0.0), b.nan_to_num(0.0)
    assert torch.equal(a, b), (a, b)


def close(a, b, rtol, atol):
    b = b.cpu()
    assert a.dtype == b.dtype and a.shape == b.shape
    torch.testing.assert_close(b.float(), a.float(), rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------- scans


@pytest.mark.parametrize("dtype", ALL)
def test_cumsum_cumprod_dtypes(dtype):
    x = make((6, 37), dtype)
    for dim in (0, 1, -1):
        for f in (torch.cumsum, torch.cumprod):
            a, b = f(x, dim), f(x.to(W), dim)
            if dtype.is_floating_point and f is torch.cumprod:
                continue  # products of randn overflow/underflow: checked on tame values below
            if dtype.is_floating_point:
                close(a, b, 2e-2, 2e-2)
            else:
                same(a, b)  # integer inputs accumulate in int64 (wrapping) like CPU


def test_cumprod_float_and_dtype_arg():
    x = 1 + make((5, 300), torch.float32, scale=0.01)
    close(torch.cumprod(x, 1), torch.cumprod(x.to(W), 1), 1e-4, 1e-5)
    xi = make((4, 9), torch.int8)
    same(torch.cumsum(xi, 1, dtype=torch.int8), torch.cumsum(xi.to(W), 1, dtype=torch.int8))
    same(torch.cumsum(xi, 1, dtype=torch.float32), torch.cumsum(xi.to(W), 1, dtype=torch.float32))
    xh = make((3, 50), torch.float16, scale=1)
    close(torch.cumsum(xh, 1), torch.cumsum(xh.to(W), 1), 1e-2, 5e-2)


def test_cumsum_long_rows_multipass():
    # 5000: 5 tiles (one carry level); 1.1M: over 1024 tiles (two levels of tile totals).
    x = make((3, 5000), torch.int64)
    same(torch.cumsum(x, 1), torch.cumsum(x.to(W), 1))
    ones = torch.ones(1_100_000, dtype=torch.int32)
    same(torch.cumsum(ones, 0), torch.cumsum(ones.to(W), 0))
    xf = make((2, 4000), torch.float32)
    close(torch.cumsum(xf, 1), torch.cumsum(xf.to(W), 1), 1e-4, 1e-3)
    # along dim 0 of a wide tensor: a non-last dim
    xd = make((3000, 3), torch.int32)
    same(torch.cumsum(xd, 0), torch.cumsum(xd.to(W), 0))


def test_cumsum_noncontig_out_inplace_edge():
    x = make((8, 10), torch.float32)
    xt = x.t()[::2]
    close(torch.cumsum(xt, 1), torch.cumsum(x.to(W).t()[::2], 1), 1e-5, 1e-5)
    out = torch.empty(10, 8, device=W).t()
    torch.cumsum(x.to(W), 1, out=out)
    close(torch.cumsum(x, 1), out, 1e-5, 1e-5)
    y = x.clone().to(W)
    y.cumsum_(0)
    close(x.cumsum(0), y, 1e-5, 1e-5)
    s = torch.tensor(3.5)
    same(torch.cumsum(s, 0), torch.cumsum(s.to(W), 0))
    e = torch.empty(0, 4)
    same(torch.cumsum(e, 0), torch.cumsum(e.to(W), 0))
    with pytest.raises(IndexError):
        torch.cumsum(x.to(W), 2)


@pytest.mark.parametrize("dtype", ALL)
def test_cummax_cummin(dtype):
    # duplicates (ties take the later index) and NaN (propagates, a later NaN takes over)
    x = make((5, 40), dtype, nan=True, scale=2)
    if not dtype.is_floating_point:
        x = x.clamp(-3, 3) if dtype != torch.bool else x
    for dim in (0, 1):
        for f in (torch.cummax, torch.cummin):
            a, b = f(x, dim), f(x.to(W), dim)
            same(a.values, b.values)
            same(a.indices, b.indices)


def test_cummax_long_and_out():
    x = make((2, 3000), torch.float32, nan=False).round()
    x[1, 2500] = NAN
    for f in (torch.cummax, torch.cummin):
        a, b = f(x, 1), f(x.to(W), 1)
        same(a.values, b.values)
        same(a.indices, b.indices)
    v = torch.empty(0, device=W)
    i = torch.empty(0, dtype=torch.long, device=W)
    torch.cummax(x.to(W), 1, out=(v, i))
    same(torch.cummax(x, 1).indices, i)
    s = torch.tensor(2.0)
    a, b = torch.cummin(s, 0), torch.cummin(s.to(W), 0)
    same(a.values, b.values)
    same(a.indices, b.indices)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp(dtype):
    x = make((4, 2500), dtype, scale=3)
    x[0, 5] = float("inf")
    x[1, 7] = -float("inf")
    x[2, 9] = NAN
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    close(torch.logcumsumexp(x.float(), 1).to(dtype), torch.logcumsumexp(x.to(W), 1), tol, tol)
    close(torch.logcumsumexp(x.float(), 0).to(dtype), torch.logcumsumexp(x.to(W), 0), tol, tol)
    with pytest.raises(NotImplementedError):
        torch.logcumsumexp(torch.ones(3, dtype=torch.int64, device=W), 0)


# ---------------------------------------------------------------- sort family


@pytest.mark.parametrize("dtype", ALL)
def test_sort_stable_dtypes(dtype):
    x = make((6, 33), dtype, nan=True, scale=2).to(dtype)
    if not dtype.is_floating_point:
        x = (x % 4) if dtype != torch.bool else x  # many duplicates
    for dim in (0, 1):
        for desc in (False, True):
            a = torch.sort(x, dim=dim, descending=desc, stable=True)
            for stable in (True, False):
                b = torch.sort(x.to(W), dim=dim, descending=desc, stable=stable)
                same(a.values, b.values)
                same(a.indices, b.indices)
            same(
                torch.argsort(x, dim=dim, descending=desc, stable=True),
                torch.argsort(x.to(W), dim=dim, descending=desc),
            )


def test_sort_signed_zero_and_specials():
    x = torch.tensor([0.0, -0.0, NAN, float("inf"), -float("inf"), -0.0, 0.0, 1.0, NAN, -1.0])
    for desc in (False, True):
        a = torch.sort(x, descending=desc, stable=True)
        b = torch.sort(x.to(W), descending=desc)
        same(a.values, b.values)
        same(a.indices, b.indices)
    xl = torch.tensor([2**62, -(2**62), 5, -(2**63), 2**63 - 1, 5, -1, 0])
    a, b = torch.sort(xl, stable=True), torch.sort(xl.to(W))
    same(a.values, b.values)
    same(a.indices, b.indices)


@pytest.mark.parametrize("n", [1023, 1025, 5000, 70000])
def test_sort_long_rows_multipass(n):
    x = make((2, n), torch.float32, nan=True).round()  # duplicates + NaN over several tiles
    for desc in (False, True):
        a = torch.sort(x, dim=1, descending=desc, stable=True)
        b = torch.sort(x.to(W), dim=1, descending=desc)
        same(a.values, b.values)
        same(a.indices, b.indices)


def test_sort_int64_long_row():
    x = (make((1, 3000), torch.float32) * 1e9).to(torch.int64) // 1000
    a, b = torch.sort(x, stable=True), torch.sort(x.to(W))
    same(a.values, b.values)
    same(a.indices, b.indices)


def test_sort_noncontig_out_edge():
    x = make((10, 12), torch.float32)
    a = torch.sort(x.t()[1::2], dim=0, stable=True)
    b = torch.sort(x.to(W).t()[1::2], dim=0)
    same(a.values, b.values)
    same(a.indices, b.indices)
    v = torch.empty(0, device=W)
    i = torch.empty(0, dtype=torch.long, device=W)
    torch.sort(x.to(W), 1, out=(v, i))
    same(torch.sort(x, dim=1, stable=True).indices, i)
    same(torch.msort(x), torch.msort(x.to(W)))
    s = torch.tensor(1.5)
    a, b = torch.sort(s), torch.sort(s.to(W))
    same(a.values, b.values)
    same(a.indices, b.indices)
    e = torch.empty(3, 0)
    a, b = torch.sort(e, 1), torch.sort(e.to(W), 1)
    same(a.values, b.values)
    same(a.indices, b.indices)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != torch.bool])
def test_topk(dtype):
    # distinct values so CPU's order is unambiguous
    n = 40 if dtype not in (torch.int8, torch.uint8) else 25
    x = torch.randperm(5 * n, generator=torch.Generator().manual_seed(0)) - (60 if dtype == torch.int8 else 0)
    x = x.view(5, n).to(dtype)
    for dim in (0, 1):
        for largest in (True, False):
            k = 3
            a, b = torch.topk(x, k, dim, largest), torch.topk(x.to(W), k, dim, largest)
            same(a.values, b.values)
            same(a.indices, b.indices)
    xl = torch.randperm(6000, generator=torch.Generator().manual_seed(3)).float()
    a, b = torch.topk(xl, 50), torch.topk(xl.to(W), 50)
    same(a.values, b.values)
    same(a.indices, b.indices)
    with pytest.raises(RuntimeError, match="out of range"):
        torch.topk(x.to(W), 100, 1)


def test_topk_nan_and_out():
    x = torch.tensor([[1.0, NAN, 3.0, 2.0], [4.0, 0.0, NAN, -1.0]])
    a, b = torch.topk(x, 2), torch.topk(x.to(W), 2)
    same(a.values, b.values)
    same(a.indices, b.indices)
    v = torch.empty(0, device=W)
    i = torch.empty(0, dtype=torch.long, device=W)
    torch.topk(x.to(W), 1, largest=False, out=(v, i))
    same(torch.topk(x, 1, largest=False).values, v)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int32, torch.uint8])
def test_kthvalue_median(dtype):
    x = make((7, 31), dtype)
    for dim in (0, 1):
        for keepdim in (False, True):
            a, b = torch.kthvalue(x, 4, dim, keepdim), torch.kthvalue(x.to(W), 4, dim, keepdim)
            same(a.values, b.values)
            a, b = torch.median(x, dim, keepdim), torch.median(x.to(W), dim, keepdim)
            same(a.values, b.values)
            a, b = torch.nanmedian(x, dim, keepdim), torch.nanmedian(x.to(W), dim, keepdim)
            same(a.values, b.values)
    same(torch.median(x), torch.median(x.to(W)))
    with pytest.raises(RuntimeError, match="out of range"):
        torch.kthvalue(x.to(W), 40, 1)


def test_median_nan_and_long():
    x = torch.tensor([[1.0, NAN, 3.0, NAN, 2.0], [4.0, 1.0, 1.0, 4.0, 2.0], [NAN, NAN, 5.0, 6.0, 7.0]])
    a, b = torch.median(x, 1), torch.median(x.to(W), 1)
    same(a.values, b.values)
    same(a.indices, b.indices)  # the first NaN
    a, b = torch.nanmedian(x, 1), torch.nanmedian(x.to(W), 1)
    same(a.values, b.values)
    same(torch.nanmedian(x), torch.nanmedian(x.to(W)))
    same(torch.median(x), torch.median(x.to(W)))
    xl = torch.randperm(5001, generator=torch.Generator().manual_seed(1)).float().view(1, -1)
    a, b = torch.median(xl, 1), torch.median(xl.to(W), 1)
    same(a.values, b.values)
    same(a.indices, b.indices)
    same(torch.median(torch.empty(0)), torch.median(torch.empty(0, device=W)))
    with pytest.raises(IndexError):
        torch.median(torch.empty(2, 0, device=W), 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int16, torch.uint8, torch.bool])
def test_mode(dtype):
    # short rows: CPU's sort is an insertion sort there, so the index (last of the run) is defined
    x = torch.randint(0, 4, (9, 12), generator=torch.Generator().manual_seed(2)).to(dtype)
    a, b = torch.mode(x, 1), torch.mode(x.to(W), 1)
    same(a.values, b.values)
    same(a.indices, b.indices)
    # long rows: values only (CPU's index among equal elements follows its unstable sort)
    xl = torch.randint(0, 50, (3, 3000), generator=torch.Generator().manual_seed(3)).to(dtype)
    same(torch.mode(xl, 1).values, torch.mode(xl.to(W), 1).values)
    same(torch.mode(xl, 0, keepdim=True).values, torch.mode(xl.to(W), 0, keepdim=True).values)


# ---------------------------------------------------------------- unique, search, histograms


@pytest.mark.parametrize("dtype", ALL)
def test_unique(dtype):
    x = make((5, 60), dtype, nan=False, scale=3)
    if dtype.is_floating_point:
        x = x.round()
        x.view(-1)[1::13] = -0.0
    for f in (
        lambda t: torch.unique(t, return_inverse=True, return_counts=True),
        lambda t: torch.unique(t, sorted=True, return_inverse=True),
        lambda t: torch.unique_consecutive(t, return_inverse=True, return_counts=True),
    ):
        a, b = f(x), f(x.to(W))
        for p, q in zip(a, b):
            same(p, q)
    xs = x.view(-1)[:0]
    a, b = torch.unique(xs, return_counts=True), torch.unique(xs.to(W), return_counts=True)
    same(a[0], b[0])
    same(a[1], b[1])


def test_unique_nan_long():
    x = torch.tensor([2.0, NAN, -0.0, 0.0, NAN, 1.0, 2.0])
    a, b = torch.unique(x, return_counts=True), torch.unique(x.to(W), return_counts=True)
    same(a[0], b[0])
    same(a[1], b[1])
    xl = torch.randint(0, 700, (5000,), generator=torch.Generator().manual_seed(4))
    a = torch.unique(xl, return_inverse=True, return_counts=True)
    b = torch.unique(xl.to(W), return_inverse=True, return_counts=True)
    for p, q in zip(a, b):
        same(p, q)
    xc = torch.randint(0, 3, (4000,), generator=torch.Generator().manual_seed(5))
    a = torch.unique_consecutive(xc, return_inverse=True, return_counts=True)
    b = torch.unique_consecutive(xc.to(W), return_inverse=True, return_counts=True)
    for p, q in zip(a, b):
        same(p, q)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_unique_dim_nan_negzero(dtype):
    """unique(dim) orders rows with NaN as CPU does: CPU's row comparator ties NaN with everything
    (so NaN rows land mid-order and equal rows need not be adjacent), and among rows equal up to
    -0.0 == 0.0 its sort picks which one is kept. Values, inverse and counts match bitwise (sign of
    zero included) for sizes on both sides of the introsort's insertion-sort threshold."""

    def check(x, d):
        a = torch.unique(x, dim=d, return_inverse=True, return_counts=True)
        b = torch.unique(x.to(W), dim=d, return_inverse=True, return_counts=True)
        for p, q in zip(a, b):
            same(p, q)
        assert torch.equal(torch.signbit(a[0]), torch.signbit(b[0].cpu()))

    check(
        torch.tensor(
            [
                [1.0, NAN],
                [0.0, 2.0],
                [1.0, NAN],
                [-0.0, 2.0],
                [NAN, 0.0],
                [0.0, 1.0],
                [1.0, 2.0],
                [0.0, 2.0],
                [NAN, NAN],
                [NAN, NAN],
            ],
            dtype=dtype,
        ),
        0,
    )
    check(torch.tensor([[-0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [-0.0, 1.0]], dtype=dtype), 0)  # no NaN, -0.0 only
    g = torch.Generator().manual_seed(12)
    for n in (7, 16, 17, 40, 300):
        x = torch.randint(0, 3, (n, 3), generator=g).to(dtype)
        x[torch.rand(n, 3, generator=g) < 0.1] = NAN
        x[torch.rand(n, 3, generator=g) < 0.15] = -0.0
        check(x, 0)
        check(x.t().contiguous(), 1)
    x = torch.randint(0, 2, (2, 30, 2), generator=g).to(dtype)
    x[0, ::7, 1] = NAN
    x[1, ::5, 0] = -0.0
    check(x, 1)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != torch.bool])
def test_searchsorted_bucketize(dtype):
    bd = torch.sort(make((37,), dtype, seed=1)).values
    x = make((4, 25), dtype, seed=2)
    for right in (False, True):
        for i32 in (False, True):
            same(
                torch.searchsorted(bd, x, right=right, out_int32=i32),
                torch.searchsorted(bd.to(W), x.to(W), right=right, out_int32=i32),
            )
            same(
                torch.bucketize(x, bd, right=right, out_int32=i32),
                torch.bucketize(x.to(W), bd.to(W), right=right, out_int32=i32),
            )
    same(torch.searchsorted(bd, x.t(), side="right"), torch.searchsorted(bd.to(W), x.to(W).t(), side="right"))


def test_searchsorted_nd_sorter_scalar_errors():
    g = torch.Generator().manual_seed(6)
    bd = torch.randn(3, 4, 20, generator=g)
    bd[0, 0, 3] = NAN
    srt = torch.argsort(bd, -1)
    v = torch.randn(3, 4, 7, generator=g)
    same(torch.searchsorted(bd, v, sorter=srt), torch.searchsorted(bd.to(W), v.to(W), sorter=srt.to(W)))
    bs = torch.sort(bd).values
    same(torch.searchsorted(bs, v, right=True), torch.searchsorted(bs.to(W), v.to(W), right=True))
    b1 = torch.tensor([1, 3, 5, 7])
    same(torch.searchsorted(b1, 3), torch.searchsorted(b1.to(W), 3))
    same(torch.bucketize(3, b1, right=True), torch.bucketize(3, b1.to(W), right=True))
    same(torch.searchsorted(b1, torch.tensor([2.5, 7.0])), torch.searchsorted(b1.to(W), torch.tensor([2.5, 7.0]).to(W)))
    out = torch.empty(0, dtype=torch.long, device=W)
    torch.searchsorted(b1.to(W), torch.tensor([4, 0]).to(W), out=out)
    same(torch.searchsorted(b1, torch.tensor([4, 0])), out)
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension"):
        torch.searchsorted(bd.to(W), torch.randn(2, 7).to(W))
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        torch.bucketize(v.to(W), bd.to(W))
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        torch.searchsorted(b1.to(W), torch.tensor([1]).to(W), sorter=torch.tensor([0, 1, 2, 9]).to(W))


@pytest.mark.parametrize("dtype", FLOATS)
def test_histc(dtype):
    # bfloat16 counts stay below 256: CPU adds ones into bfloat16 bins (in chunks), which past 256
    # rounds; webgpu counts exactly and rounds once
    x = make((3000 if dtype != torch.bfloat16 else 1000,), dtype, seed=7)
    for mn, mx in ((0, 0), (-2, 2), (-1.5, 3.25)):
        same(torch.histc(x, bins=17, min=mn, max=mx), torch.histc(x.to(W), bins=17, min=mn, max=mx))
    # past 2048 bins: one global atomic per element (section hist) instead of per-workgroup histograms
    same(torch.histc(x, bins=2500, min=-2, max=2), torch.histc(x.to(W), bins=2500, min=-2, max=2))
    xn = x.clone()
    xn[::5] = NAN
    same(torch.histc(xn, bins=10, min=-3, max=3), torch.histc(xn.to(W), bins=10, min=-3, max=3))
    same(torch.histc(x[:0], bins=4), torch.histc(x[:0].to(W), bins=4))
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        torch.histc(x.to(W), bins=0)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(x.to(W), bins=3, min=2, max=1)


def histc_int_reference(x, bins, lo, hi):
    """CUDA's integer histc (CPU refuses integers): bounds truncated, the data's min and max when
    equal (widened by one when still equal), values outside [lo, hi] skipped, bin (v - lo) * bins //
    (hi - lo) in integer arithmetic, the top edge into the last bin."""
    lo, hi = int(lo), int(hi)
    if lo == hi and x.numel():
        lo, hi = int(x.min()), int(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    v = x.long().flatten()
    v = v[(v >= lo) & (v <= hi)]
    b = ((v - lo) * bins // (hi - lo)).clamp(max=bins - 1)
    return torch.bincount(b, minlength=bins).to(x.dtype)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_histc_integers_as_cuda(dtype):
    """transformers' MoE layers count tokens per expert with histc on int32 off the CPU."""
    x = torch.randint(0, 100, (3000,), generator=torch.Generator().manual_seed(9)).to(dtype)
    for bins, mn, mx in ((8, 0, 7), (17, 3, 90), (5, 0, 0), (2500, 0, 99), (3, 10.7, 20.2)):
        got = torch.histc(x.to(W)[::2], bins=bins, min=mn, max=mx)
        assert got.dtype == dtype
        same(histc_int_reference(x[::2], bins, mn, mx), got)
    same(histc_int_reference(x[:0], 4, 0, 0), torch.histc(x[:0].to(W), bins=4))
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(x.to(W), bins=3, min=2, max=1)
    if dtype == torch.int64:  # out-of-range values stay out after narrowing to 32 bits
        y = torch.tensor([2**40, -(2**40), 5, 6], dtype=dtype)
        same(histc_int_reference(y, 4, 4, 7), torch.histc(y.to(W), bins=4, min=4, max=7))
        with pytest.raises(NotImplementedError, match="32-bit"):
            torch.histc(y.to(W), bins=4, min=0, max=2**40)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_bincount(dtype):
    x = torch.randint(0, 60, (4000,), generator=torch.Generator().manual_seed(8)).to(dtype)
    same(torch.bincount(x), torch.bincount(x.to(W)))
    same(torch.bincount(x, minlength=100), torch.bincount(x.to(W), minlength=100))
    w = torch.randn(4000, generator=torch.Generator().manual_seed(9))
    close(torch.bincount(x, w), torch.bincount(x.to(W), w.to(W)), 1e-4, 1e-4)
    same(torch.bincount(x[:0], minlength=3), torch.bincount(x[:0].to(W), minlength=3))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(torch.tensor([1, -1]).to(W))
    with pytest.raises(RuntimeError, match="minlength"):
        torch.bincount(x.to(W), minlength=-1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8, torch.bool])
def test_unique_dim(dtype):
    g = torch.Generator().manual_seed(10)
    x = torch.randint(0, 2, (60, 3), generator=g).to(dtype)
    for d in (0, 1, -1):
        for f in (
            lambda t: torch.unique(t, dim=d, return_inverse=True, return_counts=True),
            lambda t: torch.unique_consecutive(t, dim=d, return_inverse=True, return_counts=True),
        ):
            a, b = f(x), f(x.to(W))
            for p, q in zip(a, b):
                same(p, q)
    xl = torch.randint(0, 3, (3000, 2), generator=g).to(dtype)  # rows past one sort tile
    a = torch.unique(xl, dim=0, return_inverse=True, return_counts=True)
    b = torch.unique(xl.to(W), dim=0, return_inverse=True, return_counts=True)
    for p, q in zip(a, b):
        same(p, q)
    e = torch.ones(4, 0, 3, dtype=dtype)
    a, b = torch.unique_consecutive(e, dim=1), torch.unique_consecutive(e.to(W), dim=1)
    same(a, b)
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        torch.unique_consecutive(e.to(W), dim=0)
