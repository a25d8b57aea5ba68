# Reductions against CPU: every path of the kernel (one invocation per output, one workgroup per
# row, rows split over workgroups), dims/keepdim/dtype=/out=, NaN, empty inputs, every dtype.
import pytest
import torch
from webgpu_env import DEV, DTYPES

g = torch.Generator().manual_seed(0)


def check(fn, *xs, tol=1e-4):
    c = fn(*xs)
    d = fn(*[x.to(DEV) for x in xs]).cpu()
    assert d.dtype == c.dtype and d.shape == c.shape, (d.dtype, c.dtype, d.shape, c.shape)
    if c.is_floating_point():
        torch.testing.assert_close(d, c, rtol=tol, atol=tol, equal_nan=True)
    else:
        assert torch.equal(d, c)


X = torch.randn(37, 53, 11, generator=g)
CASES = {
    "sum_all": lambda t: t.sum(),
    "sum_d1": lambda t: t.sum(1),
    "sum_d0_keep": lambda t: t.sum(0, keepdim=True),
    "sum_d02": lambda t: t.sum((0, 2)),
    "sum_neg": lambda t: t.sum(-1),
    "mean_d2": lambda t: t.mean(2),
    "mean_all": lambda t: t.mean(),
    "amax_d1": lambda t: t.amax(1),
    "amin_d01": lambda t: t.amin((0, 1)),
    "nansum_d1": lambda t: t.nansum(1),
    "sum_transposed": lambda t: t.transpose(0, 2).sum(1),
    "sum_sliced": lambda t: t[1::2, ::3].sum((0, 2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_float32_cases(name):
    check(CASES[name], X)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_types(dtype):
    check(lambda t: t.sum(1), X.to(dtype), tol=2e-2)
    check(lambda t: t.mean((0, 2)), X.to(dtype), tol=2e-2)
    check(lambda t: t.amax(2), X.to(dtype))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool], ids=str)
def test_integer_and_bool(dtype):
    hi = 2 if dtype == torch.bool else 100
    lo = 0 if dtype in (torch.bool, torch.uint8) else -100
    x = torch.randint(lo, hi, (30, 41), generator=g).to(dtype)
    check(lambda t: t.sum(1), x)
    check(lambda t: t.sum(), x)
    check(lambda t: t.any(0), x)
    check(lambda t: t.all(1), x)
    if dtype != torch.bool:
        check(lambda t: t.amax(0), x)
        check(lambda t: t.amin(1), x)
        check(lambda t: t[:, :6].prod(1), x)


def test_int64_exact():
    x = torch.randint(-(2**40), 2**40, (3000,), generator=g)
    check(lambda t: t.sum(), x)
    check(lambda t: t.view(30, 100).sum(0), x)
    check(lambda t: t.amax(), x)


def test_prod_and_dtype_argument():
    check(lambda t: t.prod(2), X[:, :, :5])
    check(lambda t: t.prod(), X[:2, :2, :3])
    check(lambda t: t.sum(dtype=torch.float32), torch.randint(0, 5, (10, 10), generator=g))


@pytest.mark.parametrize("shape,dim", [((3_000_000,), None), ((30, 100_000), 1), ((100_000, 3), 0), ((5000, 257), 1)])
def test_large_and_split_rows(shape, dim):
    x = torch.randn(*shape, generator=g)
    fn = (lambda t: t.sum()) if dim is None else (lambda t: t.sum(dim))
    check(fn, x, tol=1e-3)
    check((lambda t: t.amax()) if dim is None else (lambda t: t.amax(dim)), x)


def test_nan_and_empty():
    x = torch.tensor([1.0, float("nan"), 3.0])
    check(lambda t: t.amax(), x)
    check(lambda t: t.amin(), x)
    check(lambda t: t.nansum(), x)
    check(lambda t: t.sum(), x)
    check(lambda t: t.sum(), torch.zeros(0))
    check(lambda t: t.sum(0), torch.zeros(0, 3))
    check(lambda t: t.prod(0), torch.zeros(0, 3))
    check(lambda t: t.mean(0), torch.zeros(0, 3))


def test_out_and_determinism():
    d = X.to(DEV)
    out = torch.empty(53, device=DEV)
    torch.sum(d, (0, 2), out=out)
    torch.testing.assert_close(out.cpu(), X.sum((0, 2)), rtol=1e-4, atol=1e-4)
    big = torch.randn(2_000_000, generator=g).to(DEV)
    assert torch.equal(big.sum().cpu(), big.sum().cpu())


# ---- max/min with indices, argmax/argmin, aminmax -------------------------------------------------


def check_multi(fn, *xs, tol=1e-4):
    c = fn(*xs)
    d = fn(*[x.to(DEV) for x in xs])
    cs, ds = (c, d) if isinstance(c, tuple) else ((c,), (d,))
    assert len(cs) == len(ds)
    for a, b in zip(cs, ds):
        b = b.cpu()
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        if a.is_floating_point():
            torch.testing.assert_close(b, a, rtol=tol, atol=tol, equal_nan=True)
        else:
            assert torch.equal(b, a), (b, a)


ALL = list(DTYPES)


def sample(dtype, shape, lo=-4, hi=5):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.randint(lo, hi, shape, generator=g) / 2).to(dtype)  # many ties: first-index rule
    lo = 0 if dtype == torch.uint8 else lo
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_max_min_with_indices(dtype):
    x = sample(dtype, (13, 29, 7))
    check_multi(lambda t: t.max(), x)
    check_multi(lambda t: t.min(), x)
    check_multi(lambda t: t.max(1), x)
    check_multi(lambda t: t.min(0, keepdim=True), x)
    check_multi(lambda t: t.max(-1), x)
    check_multi(lambda t: t.transpose(0, 2).min(1), x)  # non-contiguous
    check_multi(lambda t: torch.aminmax(t), x)
    check_multi(lambda t: torch.aminmax(t, dim=1, keepdim=True), x)
    if dtype != torch.bool:
        check_multi(lambda t: t.argmax(), x)
        check_multi(lambda t: t.argmin(1), x)
        check_multi(lambda t: t.argmax(0, keepdim=True), x)
        check_multi(lambda t: t[:, ::2].argmin(2), x)


def test_max_min_nan_and_ties():
    x = torch.tensor(
        [
            [1.0, 3.0, 3.0, float("nan"), 2.0, float("nan")],
            [-1.0, -1.0, 0.0, 0.0, -1.0, 0.0],
            [float("-inf")] * 6,
            [float("inf"), 1.0, float("inf"), 0.0, 0.0, -0.0],
        ]
    )
    for f in (
        lambda t: t.max(1),
        lambda t: t.min(1),
        lambda t: t.argmax(1),
        lambda t: t.argmin(1),
        lambda t: t.max(),
        lambda t: t.argmax(),
        lambda t: t.argmin(),
        lambda t: t.max(0),
        lambda t: torch.aminmax(t, dim=1),
    ):
        check_multi(f, x)


@pytest.mark.parametrize("shape,dim", [((300_001,), 0), ((3, 70_001), 1), ((70_001, 3), 0), ((513, 1031), 1)])
def test_argmax_long_rows(shape, dim):
    x = torch.randn(*shape, generator=g)
    x.view(-1)[x.numel() // 2] = 50.0  # the maximum, twice: the first one wins
    x.view(-1)[x.numel() - 2] = 50.0
    check_multi(lambda t: t.argmax(dim), x)
    check_multi(lambda t: t.max(dim), x)
    check_multi(lambda t: t.argmin(dim), x)
    x.view(-1)[7] = float("nan")
    check_multi(lambda t: t.max(dim), x)
    check_multi(lambda t: t.argmin(), x)


def test_max_min_out_and_errors():
    x = torch.randn(5, 6, generator=g)
    d = x.to(DEV)
    v, i = torch.empty(0, device=DEV), torch.empty(0, dtype=torch.long, device=DEV)
    torch.max(d, 1, out=(v, i))
    cv, ci = x.max(1)
    assert torch.equal(v.cpu(), cv) and torch.equal(i.cpu(), ci)
    o = torch.empty(0, dtype=torch.long, device=DEV)
    torch.argmax(d, 0, out=o)
    assert torch.equal(o.cpu(), x.argmax(0))
    mn, mx = torch.empty(0, device=DEV), torch.empty(0, device=DEV)
    torch.aminmax(d, dim=0, out=(mn, mx))
    assert torch.equal(mn.cpu(), x.amin(0)) and torch.equal(mx.cpu(), x.amax(0))
    e = torch.zeros(0, 3)
    for f in (
        lambda t: t.max(),
        lambda t: t.argmax(),
        lambda t: t.max(0),
        lambda t: torch.aminmax(t),
        lambda t: t.argmin(0),
    ):
        with pytest.raises(Exception) as cpu_err:
            f(e)
        with pytest.raises(type(cpu_err.value)):
            f(e.to(DEV))
    with pytest.raises(IndexError):
        d.max(2)
    check_multi(lambda t: t.max(0), torch.tensor(3.0))  # 0-dim
    check_multi(lambda t: t.argmax(), torch.tensor(3.0))
    check_multi(lambda t: t.max(1), torch.zeros(0, 4))  # empty outputs, non-empty rows


# ---- var / std (+ _mean), nanmean, count_nonzero, logsumexp, norms --------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_var_std(dtype):
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    x = X.to(dtype)
    for f in (
        lambda t: t.var(),
        lambda t: t.std(1),
        lambda t: t.var((0, 2), keepdim=True),
        lambda t: t.std(0, correction=0),
        lambda t: t.var(2, correction=3),
        lambda t: torch.var_mean(t, 1),
        lambda t: torch.std_mean(t, (0, 1), correction=0, keepdim=True),
        lambda t: torch.var_mean(t),
        lambda t: t.transpose(0, 2)[::2].std(1),
        lambda t: t.var(1, unbiased=False),
    ):
        check_multi(f, x, tol=tol)


def test_var_stable_and_edge_cases():
    # Large mean, small spread: a one-pass sum of squares would lose everything.
    x = (torch.randn(4, 5000, generator=g) * 1e-2 + 1e4).float()
    c = x.double().var(1).float()
    d = x.to(DEV).var(1).cpu()
    torch.testing.assert_close(d, c, rtol=1e-2, atol=1e-6)
    big = torch.randn(2_000_003, generator=g) * 3 + 5  # split rows (partials folded by Chan's formula)
    torch.testing.assert_close(big.to(DEV).var().cpu(), big.double().var().float(), rtol=1e-4, atol=1e-4)
    check_multi(lambda t: torch.std_mean(t), big)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        check_multi(lambda t: t.var(1), torch.randn(3, 1, generator=g))  # one element: NaN
        check_multi(lambda t: t.var(1, correction=5), torch.randn(3, 4, generator=g))  # inf
        check_multi(lambda t: t.var(0), torch.zeros(0, 3))
        check_multi(lambda t: torch.var_mean(t, 0), torch.zeros(0, 3))
        check_multi(lambda t: t.std(), torch.tensor(2.0), tol=1e-4)
    check_multi(lambda t: t.var(1), torch.tensor([[1.0, float("nan"), 2.0], [1.0, 2.0, 4.0]]))
    # An infinite element gives NaN, as CPU's Welford step (not inf), wherever it falls among the rows.
    inf = torch.tensor([[1.0, float("inf"), 2.0], [float("-inf"), 2.0, 4.0], [1.0, 2.0, float("inf")], [1, 2, 3]])
    for c in (0, 1):
        check_multi(lambda t, c=c: t.var(1, correction=c), inf)
        check_multi(lambda t, c=c: torch.std_mean(t, 1, correction=c), inf)
        check_multi(lambda t, c=c: t.var(correction=c), inf)
    out = torch.empty(0, device=DEV)
    torch.std(X.to(DEV), 1, out=out)
    torch.testing.assert_close(out.cpu(), X.std(1), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="floating point"):
        torch.ones(3, dtype=torch.long, device=DEV).var()


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_count_nonzero_nanmean(dtype):
    x = sample(dtype, (9, 17, 5), lo=-1, hi=2)
    check_multi(lambda t: torch.count_nonzero(t), x)
    check_multi(lambda t: torch.count_nonzero(t, (0, 2)), x)
    check_multi(lambda t: torch.count_nonzero(t.transpose(0, 1), 1), x)
    if dtype.is_floating_point:
        y = x.clone()
        y[0, :3] = float("nan")
        check_multi(lambda t: t.nanmean(1), y, tol=1e-2)
        check_multi(lambda t: t.nanmean(), y, tol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_logsumexp(dtype):
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    x = (X * 30).to(dtype)  # exp overflows without the max shift
    check_multi(lambda t: torch.logsumexp(t, 1), x, tol=tol)
    check_multi(lambda t: torch.logsumexp(t, (0, 2), keepdim=True), x, tol=tol)
    y = torch.tensor([[float("-inf")] * 3, [float("inf"), 1.0, 2.0], [1.0, float("nan"), 0.0]]).to(dtype)
    check_multi(lambda t: torch.logsumexp(t, 1), y)
    check_multi(lambda t: torch.logsumexp(t, 1), torch.randint(0, 5, (4, 6), generator=g))  # integers -> float


@pytest.mark.parametrize("ord", [2, 1, float("inf"), float("-inf"), 0, 3.5, -1.5, 0.5])
def test_vector_norm(ord):
    x = X.clone()
    x[0, 0, :4] = 0.0
    for f in (
        lambda t: torch.linalg.vector_norm(t, ord),
        lambda t: torch.linalg.vector_norm(t, ord, dim=1),
        lambda t: torch.linalg.vector_norm(t, ord, dim=(0, 2), keepdim=True),
        lambda t: torch.linalg.vector_norm(t.transpose(0, 1), ord, dim=-1),
    ):
        check_multi(f, x, tol=1e-3)
    check_multi(lambda t: torch.linalg.vector_norm(t, ord, dim=1), x.half(), tol=2e-2)
    check_multi(lambda t: torch.linalg.vector_norm(t, ord, dim=1, dtype=torch.float32), x.bfloat16(), tol=2e-2)


def test_norm_variants_and_grad():
    check_multi(lambda t: torch.norm(t), X)
    check_multi(lambda t: torch.norm(t, p=1, dim=1), X)
    check_multi(lambda t: torch.norm(t, p=float("inf"), dim=(0, 2), keepdim=True), X)
    check_multi(lambda t: torch.norm(t, p=3, dim=1, dtype=torch.float32), X.half(), tol=2e-2)
    out = torch.empty(0, device=DEV)
    torch.norm(X.to(DEV), 2, dim=1, out=out)
    torch.testing.assert_close(out.cpu(), torch.norm(X, 2, dim=1), rtol=1e-4, atol=1e-4)
    check_multi(lambda t: torch.linalg.vector_norm(t, 2, dim=1), torch.zeros(3, 0))
    for ord in (2, 1, float("inf"), 3.0):
        a = X[:4, :5, :6].clone().requires_grad_()
        b = a.detach().to(DEV).requires_grad_()
        torch.linalg.vector_norm(a, ord, dim=1).sum().backward()
        torch.linalg.vector_norm(b, ord, dim=1).sum().backward()
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-4)
    a = X[:4, :5].clone().requires_grad_()
    b = a.detach().to(DEV).requires_grad_()
    a.std(1).sum().backward()
    b.std(1).sum().backward()
    torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-4)


# ---- the contiguous vectorised path -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_vectorised_rows(dtype):
    # Rows long enough for 16-byte loads, starting at every alignment (row length 4099 is odd), split
    # into parts or not.
    x = sample(dtype, (6, 4099 * 4 + 3), lo=-2, hi=3)
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    if dtype == torch.bool:
        check_multi(lambda t: t[:, 1:].reshape(-1)[: 6 * 4099 * 4].view(24, 4099).any(1), x)
        check_multi(lambda t: t[:, 2:].all(1), x)
        check_multi(lambda t: t.sum(1), x)
        check_multi(lambda t: torch.count_nonzero(t[:, 3:], 1), x)
        return
    check_multi(lambda t: torch.count_nonzero(t[:, 3:], 1), x)
    check_multi(lambda t: t[:, 1:].reshape(-1)[: 6 * 4099 * 4].view(24, 4099).sum(1), x, tol=tol)
    check_multi(lambda t: t[:, 3:].sum(1), x, tol=tol)
    check_multi(lambda t: t.view(-1)[5:].sum(), x, tol=tol)
    check_multi(lambda t: t.amax(1), x)
    check_multi(lambda t: t[:, 1:].argmin(1), x)


def test_many_short_rows_and_determinism():
    for n in (17, 40, 100, 300, 1000):
        x = torch.randn(2000, n, generator=g)
        check_multi(lambda t: t.sum(1), x)
        check_multi(lambda t: t.max(1), x)
        check_multi(lambda t: t.std(1), x)
    big = torch.randn(1 << 22, generator=g).to(DEV)
    a = big.sum().cpu()
    for _ in range(3):
        assert torch.equal(big.sum().cpu(), a)
    assert torch.equal(big.var().cpu(), big.var().cpu())


def test_without_subgroups():
    # The shared-memory fold, for devices without the 'subgroups' feature.
    import os
    import subprocess
    import sys

    code = (
        "import torch, torch_webgpu\n"
        "g = torch.Generator().manual_seed(1)\n"
        "x = torch.randn(37, 5000, generator=g)\n"
        "d = x.to('webgpu')\n"
        "torch.testing.assert_close(d.sum(1).cpu(), x.sum(1), rtol=1e-4, atol=1e-4)\n"
        "torch.testing.assert_close(d.sum().cpu(), x.sum(), rtol=1e-4, atol=1e-3)\n"
        "torch.testing.assert_close(d[:, :50].sum(1).cpu(), x[:, :50].sum(1), rtol=1e-4, atol=1e-4)\n"
        "assert torch.equal(d.argmax(1).cpu(), x.argmax(1))\n"
        "torch.testing.assert_close(d.var(0).cpu(), x.var(0), rtol=1e-4, atol=1e-4)\n"
        "print('ok')\n"
    )
    env = dict(os.environ, TORCH_WEBGPU_REDUCE_NO_SUBGROUPS="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, cwd="/tmp")
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


def test_outer_reductions_split():
    # Reducing a leading dim with adjacent outputs: one invocation per (output, part), then a fold.
    x = torch.randn(3000, 1500, generator=g)
    check_multi(lambda t: t.sum(0), x, tol=1e-3)
    check_multi(lambda t: t.max(0), x)
    check_multi(lambda t: t.var(0), x)
    check_multi(lambda t: t[:, ::2].argmin(0), x)


def test_blocks_past_the_binding_limit():
    limit = torch_webgpu_limit()
    if limit > (256 << 20):
        pytest.skip("adapter binding limit too large to test cheaply")
    n = limit // 4 + 4096
    base = torch.empty(n, device=DEV)  # (a fill of the whole block would itself pass the limit)
    tail = torch.randn(3000, generator=g)
    base[n - 3000 :] = tail.to(DEV)
    torch.testing.assert_close(base[n - 3000 :].sum().cpu(), tail.sum(), rtol=1e-4, atol=1e-4)  # a window
    assert torch.equal(base[n - 3000 :].view(30, 100).argmax(1).cpu(), tail.view(30, 100).argmax(1))
    # A whole block past the limit: the reduction splits (tests/test_reduce_big.py covers the ways).
    full = torch.randn(n, generator=g)
    torch.testing.assert_close(full.to(DEV).sum().cpu().double(), full.double().sum(), rtol=1e-5, atol=1e-2)


def torch_webgpu_limit():
    import torch_webgpu

    return int(torch_webgpu.info()["limits"]["maxStorageBufferBindingSize"])


def test_torch_equal_as_cpu():
    # torch.equal natively (the CPU fallback is off in the tests): sizes, values, dtypes, NaN,
    # views, empty tensors, the same tensor, and another device.
    g = torch.Generator().manual_seed(11)
    x = torch.randn(5, 7, generator=g)
    y = x.clone()
    y[3, 4] += 1
    xn = x.clone()
    xn[0, 0] = float("nan")
    cases = [
        (x, x.clone()),
        (x, y),
        (x, x[:, :6]),
        (x, x.t().contiguous().t()),
        (x, x.double().float()),
        (x.half(), x.half()),
        (x, x.half().float()),
        (x.int(), x.int()),
        (x.int(), x.long()),
        (x > 0, x > 0),
        (xn, xn.clone()),
        (torch.empty(0, 3), torch.empty(0, 3)),
        (torch.empty(0, 3), torch.empty(3, 0)),
        (torch.tensor(2.0), torch.tensor(2.0)),
        (x[1:, ::2], y[1:, ::2]),
    ]
    for a, b in cases:
        want = torch.equal(a, b)
        assert torch.equal(a.to("webgpu"), b.to("webgpu")) == want, (a.shape, b.shape, a.dtype, b.dtype)
    d = x.to("webgpu")
    assert torch.equal(d, d)
    with pytest.raises(RuntimeError, match="same device"):
        torch.equal(d, x)
