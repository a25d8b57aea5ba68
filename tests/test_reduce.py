# Reductions against CPU: every path of the kernel (one invocation per output, one workgroup per
# row, rows split over workgroups), dims/keepdim/dtype=/out=, NaN, empty inputs, every dtype.
import pytest
import torch

DEV = "webgpu"
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
    x = torch.randint(-2**40, 2**40, (3000,), generator=g)
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
