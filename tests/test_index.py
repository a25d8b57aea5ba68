# Indexing against CPU: gather/scatter (every reduction, duplicates), advanced indexing (x[idx],
# x[mask], several broadcast index tensors with slices and None, index_put_ with accumulate),
# index_select/add/copy/fill/reduce, take/put_, masked_select/scatter, nonzero, embedding and its
# backward; every dtype, non-contiguous operands, negative indices, empty tensors, and the
# device-side bounds check (an error raised at the next synchronisation, nothing written).
import pytest
import torch
from webgpu_env import DEV, DTYPES

g = torch.Generator().manual_seed(0)

ALL = list(DTYPES)
NUM = [d for d in ALL if d != torch.bool]


def rand(shape, dtype):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    lo = 0 if dtype == torch.uint8 else -9
    return torch.randint(lo, 10, shape, generator=g).to(dtype)


def dev(x):
    return x.to(DEV) if isinstance(x, torch.Tensor) else x


def check(fn, *xs, tol=None):
    c = fn(*xs)
    d = fn(*[dev(x) for x in xs])
    if isinstance(c, (tuple, list)):
        for a, b in zip(c, d):
            same(b.cpu(), a, tol)
    else:
        same(d.cpu(), c, tol)


def same(d, c, tol=None):
    assert d.dtype == c.dtype and d.shape == c.shape, (d.dtype, c.dtype, d.shape, c.shape)
    if c.is_floating_point():
        t = tol if tol is not None else (2e-2 if c.dtype in (torch.float16, torch.bfloat16) else 1e-5)
        torch.testing.assert_close(d, c, rtol=t, atol=t, equal_nan=True)
    else:
        assert torch.equal(d, c), (d, c)


def noncontig(x):
    """The same values through a transposed, stepped view."""
    big = torch.zeros((x.shape[-1] * 2,) + tuple(x.shape[:-1]), dtype=x.dtype)
    v = big[::2].movedim(0, -1)
    v.copy_(x)
    return v


# ---- gather / scatter ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_gather_dtypes(dtype):
    x = rand((6, 7, 5), dtype)
    i = torch.randint(0, 7, (4, 5, 3), generator=g)
    check(lambda x, i: torch.gather(x, 1, i), x, i)
    check(lambda x, i: torch.gather(x, -1, i.clamp(max=4)), x, i)
    check(lambda x, i: torch.gather(x, 1, i), noncontig(x), noncontig(i))


def test_gather_out_large_empty_zero_dim():
    x = torch.randn(300, 700, generator=g)
    i = torch.randint(0, 300, (500, 700), generator=g)
    check(lambda x, i: torch.gather(x, 0, i), x, i)
    out = torch.empty(0)
    check(lambda x, i: torch.gather(x, 0, i, out=out.to(x.device)), x, i)
    check(lambda x, i: torch.gather(x, 0, i), x, torch.empty(0, 700, dtype=torch.long))
    check(lambda x, i: torch.gather(x, 0, i), torch.tensor(3.5), torch.tensor(0))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_scatter_src_value(dtype):
    x = rand((5, 8), dtype)
    src = rand((5, 8), dtype)
    # a permutation per column: no duplicates, so the result is defined
    i = torch.stack([torch.randperm(5, generator=g) for _ in range(8)], 1)[:4]
    check(lambda x, i, s: x.scatter(0, i, s), x, i, src)
    check(lambda x, i, s: x.clone().scatter_(0, i, s), noncontig(x), i, noncontig(src))
    check(lambda x, i: x.scatter(0, i, 1), x, i)


@pytest.mark.parametrize("dtype", NUM + [torch.bool], ids=str)
def test_scatter_add_duplicates(dtype):
    x = rand((7, 30), dtype)
    src = rand((200, 30), dtype)
    i = torch.randint(0, 7, (200, 30), generator=g)
    # ~29 updates per slot added through atomics: the rounding order of half-type sums varies run to run
    # (bfloat16's 8-bit mantissa makes that up to a few ulps of a sum near 5).
    half_tol = 3e-1 if dtype == torch.bfloat16 else 5e-2
    check(
        lambda x, i, s: x.scatter_add(0, i, s),
        x,
        i,
        src,
        tol=half_tol if dtype in (torch.float16, torch.bfloat16) else 1e-4,
    )
    check(
        lambda x, i, s: x.scatter_add(1, i.T.clamp(max=29).contiguous()[:, :7].T.contiguous()[:7], s[:7]),
        x,
        i,
        src,
        tol=5e-2,
    )


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", NUM, ids=str)
def test_scatter_reduce(dtype, reduce):
    x = rand((6, 5), dtype)
    src = rand((20, 5), dtype)
    if reduce == "prod" and dtype.is_floating_point:
        src = src.abs() * 0.5 + 0.75
    i = torch.randint(0, 6, (20, 5), generator=g)
    tol = 5e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4
    for inc in (True, False):
        check(lambda x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=inc), x, i, src, tol=tol)
    check(
        lambda x, i, s: x.scatter_reduce(1, i.T[:, :4].contiguous() % 5, s.T[:, :4], reduce),
        noncontig(x),
        i,
        src,
        tol=tol,
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int8], ids=str)
def test_scatter_reduce_legacy(dtype):
    x = rand((6, 5), dtype)
    src = rand((20, 5), dtype)
    i = torch.randint(0, 6, (20, 5), generator=g)
    check(lambda x, i, s: x.scatter(0, i, s, reduce="add"), x, i, src)
    check(lambda x, i, s: x.scatter(0, i, s, reduce="multiply"), x, i, src)
    check(lambda x, i: x.scatter(0, i, 2, reduce="add"), x, i)
    check(lambda x, i: x.scatter(0, i, 3, reduce="multiply"), x, i)


def test_scatter_add_large_float_atomic():
    # many collisions on few destinations: CAS loops under contention
    src = torch.rand(100000, generator=g)
    i = torch.randint(0, 13, (100000,), generator=g)
    check(lambda z, s, i: z.scatter_add(0, i, s), torch.zeros(13), src, i, tol=1e-3)
    si = torch.randint(-1000, 1000, (100000,), generator=g) * (2**40)
    check(lambda z, s, i: z.scatter_add(0, i, s), torch.zeros(13, dtype=torch.long), si, i)


# ---- advanced indexing -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_getitem_dtypes(dtype):
    x = rand((6, 7, 5), dtype)
    idx = torch.tensor([0, -1, 3, 3, -6])
    check(lambda x, i: x[i], x, idx)
    check(lambda x, i: x[:, i.clamp(min=-7)], noncontig(x), idx)
    m = torch.rand(6, 7, generator=g) > 0.5
    check(lambda x, m: x[m], x, m)


def test_getitem_forms():
    x = torch.randn(6, 7, 5, 4, generator=g)
    a = torch.tensor([[0, 2], [5, -1]])
    b = torch.tensor([1, -2])
    check(lambda x, a, b: x[a, b], x, a, b)  # broadcast index tensors
    check(lambda x, a, b: x[:, a, b], x, a.clamp(max=4), b)  # after a slice
    check(lambda x, a, b: x[a, :, b], x, a, b)  # non-adjacent: dims go first
    check(lambda x, a: x[None, 1:, a, ..., 2], x, a.clamp(max=4))
    check(lambda x, a: x[a.to(torch.int32)], x, a)
    check(lambda x: x[torch.tensor([], dtype=torch.long)], x)
    check(lambda x: x[x > 0], x)
    check(lambda x: x[x[:, :, 0, 0] > 0], x)
    # CPU index tensors on a webgpu tensor
    xd = x.to(DEV)
    same(xd[a].cpu(), x[a])
    same(xd[x[..., 0, 0] > 0].cpu(), x[x[..., 0, 0] > 0])


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_setitem_and_index_put(dtype):
    x = rand((6, 7), dtype)
    v = rand((3, 7), dtype)
    idx = torch.tensor([0, -1, 2])

    def put(x, i, v):
        x = x.clone()
        x[i] = v
        return x

    check(put, x, idx, v)
    check(put, noncontig(x), idx, noncontig(v))
    check(lambda x, i: put(x, i, x[0, 0].item()), x, idx)
    m = torch.rand(6, 7, generator=g) > 0.5
    check(lambda x, m: put(x, m, x[1, 1].item()), x, m)
    check(lambda x, m, v: put(x, m, v[0, 0]), x, m, v)


@pytest.mark.parametrize("dtype", NUM, ids=str)
def test_index_put_accumulate_duplicates(dtype):
    x = rand((6, 7), dtype)
    v = rand((40, 7), dtype)
    idx = torch.randint(-6, 6, (40,), generator=g)
    tol = 6e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4
    check(lambda x, i, v: x.clone().index_put_((i,), v, accumulate=True), x, idx, v, tol=tol)
    j = torch.randint(0, 7, (40,), generator=g)
    check(lambda x, i, j, v: x.clone().index_put_((i, j), v[:, 0], accumulate=True), x, idx, j, v, tol=tol)

    def iadd(x, j):
        x = x.clone()
        x[:, j] += 1
        return x

    check(iadd, x, j[:5].unique())


# ---- index_* ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_index_select(dtype):
    x = rand((6, 7, 5), dtype)
    i = torch.tensor([4, 0, 0, 6, 2])
    check(lambda x, i: x.index_select(1, i), x, i)
    check(lambda x, i: x.index_select(-1, i.clamp(max=4).to(torch.int32)), noncontig(x), i)
    out = torch.empty(0, dtype=dtype)
    check(lambda x, i: torch.index_select(x, 0, i.clamp(max=5), out=out.to(x.device)), x, i)
    check(lambda x, i: x.index_select(0, i), torch.tensor(5).to(dtype), torch.tensor([0]))
    check(lambda x, i: x.index_select(0, i), x, torch.empty(0, dtype=torch.long))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_index_add_copy_fill(dtype):
    x = rand((6, 7), dtype)
    s = rand((6, 30), dtype)
    i = torch.randint(0, 7, (30,), generator=g)
    tol = 8e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4
    if dtype != torch.bool:
        check(lambda x, i, s: x.index_add(1, i, s), x, i, s, tol=tol)
        check(lambda x, i, s: x.clone().index_add_(1, i, s, alpha=2), noncontig(x), i, s, tol=tol)
    p = torch.randperm(7, generator=g)[:4]
    check(lambda x, i, s: x.index_copy(1, i, s[:, :4]), x, p, s)
    check(lambda x, i: x.index_fill(1, i, 1), x, p - 3)
    check(lambda x, i: x.clone().index_fill_(0, i, torch.tensor(0).to(x.dtype).to(x.device)), x, p[:2] - 6)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int32, torch.uint8], ids=str)
def test_index_reduce(dtype, reduce):
    x = rand((6, 5), dtype)
    s = rand((20, 5), dtype)
    i = torch.randint(0, 6, (20,), generator=g)
    tol = 5e-2 if dtype == torch.float16 else 1e-4
    for inc in (True, False):
        check(lambda x, i, s: x.index_reduce(0, i, s, reduce, include_self=inc), x, i, s, tol=tol)


# ---- take / put / masked / nonzero -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_take_put(dtype):
    x = rand((6, 7), dtype)
    i = torch.tensor([[0, -1], [40, 5]])
    check(lambda x, i: torch.take(x, i), noncontig(x), i)
    v = rand((2, 2), dtype)
    check(lambda x, i, v: x.clone().put_(i, v), x, i, v)
    check(lambda x, i, v: x.put(i, v), noncontig(x), i, v)
    # A repeated index without accumulate: which write lands is unspecified (on CUDA too), but the
    # element holds one of them and every other element is CPU's.
    d = torch.tensor([41, -1, 3])
    got = x.to(DEV).put_(d.to(DEV), v.flatten()[:3].to(DEV)).cpu()
    want = x.clone().put_(d, v.flatten()[:3])
    assert got.flatten()[41].item() in (v.flatten()[0].item(), v.flatten()[1].item())
    mask = torch.ones(42, dtype=torch.bool)
    mask[41] = False
    assert torch.equal(got.flatten()[mask], want.flatten()[mask])
    if dtype != torch.bool:
        j = torch.randint(-42, 42, (50,), generator=g)
        w = rand((50,), dtype)
        tol = 8e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4
        check(lambda x, j, w: x.clone().put_(j, w, accumulate=True), x, j, w, tol=tol)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_masked_and_nonzero(dtype):
    x = rand((6, 7, 3), dtype)
    m = torch.rand(6, 7, 3, generator=g) > 0.4
    check(lambda x, m: torch.masked_select(x, m), x, m)
    check(lambda x, m: torch.masked_select(x, m[:, :1]), noncontig(x), m)  # broadcast mask
    src = rand((200,), dtype)
    check(lambda x, m, s: x.masked_scatter(m, s), x, m, src)
    check(lambda x, m, s: x.clone().masked_scatter_(m[0], s), x, m, src)
    check(lambda x: torch.nonzero(x), x)
    check(lambda x: torch.nonzero(x), noncontig(x))
    check(lambda x: torch.argwhere(x), x)
    check(lambda x: torch.where(x != 0), x)
    check(lambda x: torch.nonzero(x, as_tuple=True), x[0])


def test_nonzero_sizes():
    for n in (0, 1, 1023, 1024, 1025, 5000):
        x = torch.rand(n, generator=g) > 0.7
        check(torch.nonzero, x)
    check(torch.nonzero, torch.rand(3, 300, 17, generator=g) > 0.5)
    check(torch.nonzero, torch.tensor(3.0))
    check(torch.nonzero, torch.tensor(0))
    check(torch.nonzero, torch.zeros(0, 3))
    out = torch.empty(0, dtype=torch.long)
    check(lambda x: torch.nonzero(x, out=out.to(x.device)), torch.rand(10, 10, generator=g) > 0.5)


# ---- embedding ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_embedding_and_backward(dtype):
    w = torch.randn(20, 8, generator=g).to(dtype)
    idx = torch.randint(0, 20, (4, 30), generator=g)
    check(lambda w, i: torch.nn.functional.embedding(i, w), w, idx)
    tol = 5e-2 if dtype != torch.float32 else 1e-4
    for pad, freq in ((None, False), (3, False), (None, True), (5, True)):
        gr = torch.randn(4, 30, 8, generator=g).to(dtype)

        def back(w, i, gr):
            w = w.detach().clone().requires_grad_()
            torch.nn.functional.embedding(i, w, padding_idx=pad, scale_grad_by_freq=freq).backward(gr)
            return w.grad

        check(back, w, idx, gr, tol=tol)


# ---- device-side index checks ----------------------------------------------------------------------

BAD = {
    "gather": (lambda x, i: torch.gather(x, 0, i.view(1, 1).expand(1, 5)), RuntimeError),
    "scatter_add": (lambda x, i: x.scatter_add(0, i.view(1, 1).expand(1, 5), x[:1]), RuntimeError),
    "index_select": (lambda x, i: x.index_select(0, i.view(1)), IndexError),
    "getitem": (lambda x, i: x[i.view(1)], IndexError),
    "setitem": (lambda x, i: x.index_put_((i.view(1),), torch.ones(5, device=x.device)), IndexError),
    "index_put_acc": (
        lambda x, i: x.index_put_((i.view(1),), torch.ones(5, device=x.device), accumulate=True),
        IndexError,
    ),
    "embedding": (lambda x, i: torch.nn.functional.embedding(i.view(1), x), IndexError),
    "index_add": (lambda x, i: x.index_add_(0, i.view(1), x[:1].clone()), RuntimeError),
    "index_copy": (lambda x, i: x.index_copy_(0, i.view(1), x[:1].clone()), IndexError),
    "take": (lambda x, i: torch.take(x, i.view(1) * 5), IndexError),
}


@pytest.mark.parametrize("bad", [7, -7], ids=["over", "under"])
@pytest.mark.parametrize("name", list(BAD))
def test_out_of_range_raises_at_next_sync(name, bad):
    fn, exc = BAD[name]
    x = torch.arange(30.0).view(6, 5)
    with pytest.raises(exc):
        fn(x, torch.tensor(bad))  # CPU raises at once
    xd = x.to(DEV)
    keep = xd.clone()
    r = fn(xd, torch.tensor(bad).to(DEV))  # device-side check: no error yet
    with pytest.raises(exc, match=r"index -?\d+ is out of bounds"):
        (r if isinstance(r, torch.Tensor) else xd).cpu()
    # the error is reported once; the bad element was skipped, nothing else changed
    assert torch.equal(xd.cpu(), keep.cpu())
    assert xd.sum().item() == x.sum().item()


def test_error_raised_by_synchronize_and_item():
    x = torch.randn(4, 3).to(DEV)
    x.index_select(0, torch.tensor([9]).to(DEV))
    with pytest.raises(IndexError, match="index_select: index 9"):
        torch.webgpu.synchronize()
    torch.webgpu.synchronize()  # cleared
    x[torch.tensor([4]).to(DEV)]
    with pytest.raises(IndexError, match="index 4"):
        x.sum().item()
    assert x.sum().item() == pytest.approx(x.cpu().sum().item(), rel=1e-5)


def test_cpu_indices_checked_at_once():
    x = torch.randn(4, 3).to(DEV)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([0, 4])]
    with pytest.raises(IndexError):
        x[torch.tensor([0, 1]), torch.tensor([3, 0])] = 1.0
    with pytest.raises(IndexError):
        x[5]


def test_error_check_piggybacks_on_readback():
    x = torch.randn(100).to(DEV)
    i = torch.tensor([1, 2]).to(DEV)
    torch.webgpu.synchronize()
    torch.webgpu.reset_stream_counters()
    torch.webgpu.synchronize()  # nothing armed: no extra readback
    assert torch.webgpu.stream_counters()["readbacks"] == 0
    y = x[i]
    torch.webgpu.reset_stream_counters()
    y.cpu()  # the error words ride along with the data: one submit, one readback
    c = torch.webgpu.stream_counters()
    assert c["readbacks"] == 1 and c["submits"] == 1, c
    torch.webgpu.reset_stream_counters()
    torch.webgpu.synchronize()  # disarmed by that readback
    assert torch.webgpu.stream_counters()["readbacks"] == 0
    x.index_select(0, i)
    torch.webgpu.reset_stream_counters()
    torch.webgpu.synchronize()  # armed: synchronize reads the words
    assert torch.webgpu.stream_counters()["readbacks"] == 1
