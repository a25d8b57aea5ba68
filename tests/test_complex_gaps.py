# complex64 ops that once raised NotImplementedError on webgpu while CPU computes them: the logical
# ops (a complex value is true when either part is non-zero, NaN included), count_nonzero, and
# var/std (+ _mean), whose result is real: var(z) = var(z.real) + var(z.imag). Everything against
# CPU: values, out=, in-place, non-contiguous and conjugated inputs, broadcasting, CPU's errors.
import pytest
import torch
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

C64 = torch.complex64


def special(n=40, seed=0):
    """Complex values with zero, -0, NaN, inf and subnormal parts, and whole zeros, among random ones."""
    g = torch.Generator().manual_seed(seed)
    re = torch.randn(n, generator=g)
    im = torch.randn(n, generator=g)
    vals = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-40, -1e-45, 1.0]
    for i, v in enumerate(vals):
        re[i] = v
        im[i] = 0.0
        im[len(vals) + i] = v
        re[len(vals) + i] = -0.0 if i % 2 else 0.0
    re[-4:] = 0.0
    im[-4:] = -0.0
    return torch.complex(re, im)


def cplx(*shape, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(*shape, generator=g), torch.randn(*shape, generator=g))


def sparse_cplx(*shape, seed=2):
    """Complex values with many zeros and some parts zero, so the truth of each value varies."""
    z = cplx(*shape, seed=seed)
    g = torch.Generator().manual_seed(seed + 100)
    re_zero = torch.rand(*shape, generator=g) < 0.4
    im_zero = torch.rand(*shape, generator=g) < 0.4
    return torch.complex(z.real.masked_fill(re_zero, 0.0), z.imag.masked_fill(im_zero, -0.0))


def same(got, want):
    assert got.device.type == "webgpu"
    got = got.cpu()
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert torch.equal(got, want)


# ---- logical_and / logical_or / logical_xor / logical_not ------------------------------------------

BINARY = (torch.logical_and, torch.logical_or, torch.logical_xor)


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_logical_binary_values(op):
    a = special()
    b = special().flip(0)
    same(op(a.to(DEV), b.to(DEV)), op(a, b))
    same(op(a.to(DEV), a.to(DEV)), op(a, a))
    # conjugate and negative views
    same(op(a.to(DEV).conj(), b.to(DEV)), op(a.conj(), b))
    same(op(torch._neg_view(a.to(DEV)), b.to(DEV).conj()), op(torch._neg_view(a), b.conj()))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", (torch.float32, torch.bool, torch.int64, torch.float16))
def test_logical_binary_mixed(op, other):
    a = special()
    g = torch.Generator().manual_seed(5)
    r = (torch.randn(a.numel(), generator=g) * (torch.rand(a.numel(), generator=g) < 0.5)).to(other)
    same(op(a.to(DEV), r.to(DEV)), op(a, r))
    same(op(r.to(DEV), a.to(DEV)), op(r, a))
    # a 0-dim CPU tensor as the other operand
    for s in (torch.tensor(0.0), torch.tensor(2.0), torch.tensor(0j), torch.tensor(complex(0.0, float("nan")))):
        same(op(a.to(DEV), s), op(a, s))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_logical_binary_broadcast_noncontig(op):
    a = sparse_cplx(6, 1, 5)
    b = sparse_cplx(4, 1, seed=7)
    same(op(a.to(DEV), b.to(DEV)), op(a, b))
    x = sparse_cplx(8, 10, seed=3)
    y = sparse_cplx(10, 8, seed=4)
    xd, yd = x.to(DEV), y.to(DEV)
    same(op(xd[1::2, ::3], yd.t()[1::2, ::3]), op(x[1::2, ::3], y.t()[1::2, ::3]))
    same(op(xd.t(), yd), op(x.t(), y))
    f = torch.randn(8, 10)
    same(op(xd[:, 2:7], f.to(DEV)[:, 2:7]), op(x[:, 2:7], f[:, 2:7]))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dt", (torch.bool, torch.float32, torch.int32, C64))
def test_logical_binary_out(op, dt):
    a = sparse_cplx(5, 6)
    b = sparse_cplx(6, seed=9)
    want = torch.empty(0, dtype=dt)
    op(a, b, out=want)
    got = torch.empty(0, dtype=dt, device=DEV)
    r = op(a.to(DEV), b.to(DEV), out=got)
    assert r is got
    same(got, want)
    # a strided out
    want = torch.zeros(6, 5, dtype=dt)
    op(a, b, out=want.t())
    got = torch.zeros(6, 5, dtype=dt, device=DEV)
    op(a.to(DEV), b.to(DEV), out=got.t())
    same(got, want)


@pytest.mark.parametrize("name", ("logical_and_", "logical_or_", "logical_xor_"))
def test_logical_binary_inplace(name):
    a = sparse_cplx(4, 6)
    b = sparse_cplx(6, seed=11)
    want = a.clone()
    getattr(want, name)(b)
    got = a.to(DEV)
    getattr(got, name)(b.to(DEV))
    same(got, want)  # complex64 ones and zeros
    f = torch.randn(4, 6)
    want = f.clone()
    getattr(want, name)(b)
    got = f.to(DEV)
    getattr(got, name)(b.to(DEV))
    same(got, want)


def test_logical_not():
    a = special()
    same(torch.logical_not(a.to(DEV)), torch.logical_not(a))
    same(torch.logical_not(a.to(DEV).conj()), torch.logical_not(a.conj()))
    x = sparse_cplx(7, 9)
    xd = x.to(DEV)
    same(torch.logical_not(xd.t()[::2, 1::3]), torch.logical_not(x.t()[::2, 1::3]))
    for dt in (torch.bool, torch.float32, torch.int64, C64):
        want = torch.empty(0, dtype=dt)
        torch.logical_not(x, out=want)
        got = torch.empty(0, dtype=dt, device=DEV)
        torch.logical_not(xd, out=got)
        same(got, want)
    want = x.clone().logical_not_()
    got = x.to(DEV).logical_not_()
    same(got, want)


def test_logical_errors_as_cpu():
    a = sparse_cplx(3, 4)
    b = sparse_cplx(5)
    with pytest.raises(RuntimeError) as cpu_err:
        torch.logical_and(a, b)
    with pytest.raises(RuntimeError) as dev_err:
        torch.logical_and(a.to(DEV), b.to(DEV))
    assert str(dev_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]
    # a bool in-place target cannot hold a broadcast result either
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        sparse_cplx(4).logical_or_(a)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        sparse_cplx(4).to(DEV).logical_or_(a.to(DEV))


# ---- count_nonzero ---------------------------------------------------------------------------------


def test_count_nonzero_values():
    a = special()
    assert torch.count_nonzero(a.to(DEV)).item() == torch.count_nonzero(a).item()
    same(torch.count_nonzero(a.to(DEV)), torch.count_nonzero(a))
    same(torch.count_nonzero(a.to(DEV).conj()), torch.count_nonzero(a.conj()))


@pytest.mark.parametrize("dim", (None, 0, 1, -1, 2, (0, 2), (1, -1), (0, 1, 2), ()))
def test_count_nonzero_dims(dim):
    x = sparse_cplx(4, 6, 5)
    xd = x.to(DEV)
    args = () if dim is None else (dim,)
    same(torch.count_nonzero(xd, *args), torch.count_nonzero(x, *args))
    # non-contiguous
    same(
        torch.count_nonzero(xd.transpose(0, 2)[:, 1::2], *args), torch.count_nonzero(x.transpose(0, 2)[:, 1::2], *args)
    )


def test_count_nonzero_empty_and_scalar():
    e = torch.empty(0, 3, dtype=C64)
    same(torch.count_nonzero(e.to(DEV)), torch.count_nonzero(e))
    same(torch.count_nonzero(e.to(DEV), 0), torch.count_nonzero(e, 0))
    for v in (0j, 1j, complex(float("nan"), 0.0)):
        s = torch.tensor(v, dtype=C64)
        same(torch.count_nonzero(s.to(DEV)), torch.count_nonzero(s))


def test_count_nonzero_errors_as_cpu():
    x = sparse_cplx(3, 4)
    for dim, exc in ((3, IndexError), ((0, 0), RuntimeError)):
        with pytest.raises(exc) as cpu_err:
            torch.count_nonzero(x, dim)
        with pytest.raises(exc) as dev_err:
            torch.count_nonzero(x.to(DEV), dim)
        assert str(dev_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


# ---- var / std / var_mean / std_mean ---------------------------------------------------------------

TOL = {"rtol": 1e-5, "atol": 1e-5}
VAR_OPS = (torch.var, torch.std)
MEAN_OPS = (torch.var_mean, torch.std_mean)


def close(got, want):
    assert got.device.type == "webgpu"
    got = got.cpu()
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, equal_nan=True, **TOL)


DIMS = (None, 0, -1, (0, 2), (1,), (-1, 0, 1))


@pytest.mark.parametrize("op", VAR_OPS + MEAN_OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", (False, True))
@pytest.mark.parametrize("correction", (0, 1, 2))
def test_var_std_values(op, dim, keepdim, correction):
    x = cplx(4, 5, 6) * 3 + (1 - 2j)
    want = op(x, dim, correction=correction, keepdim=keepdim)
    got = op(x.to(DEV), dim, correction=correction, keepdim=keepdim)
    if op in MEAN_OPS:
        assert isinstance(got, tuple)
        assert len(got) == 2
        close(got[0], want[0])
        close(got[1], want[1])
        assert got[0].dtype == torch.float32
        assert got[1].dtype == C64
    else:
        close(got, want)
        assert got.dtype == torch.float32


@pytest.mark.parametrize("op", VAR_OPS + MEAN_OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("unbiased", (True, False))
def test_var_std_unbiased(op, unbiased):
    x = cplx(5, 7)
    xd = x.to(DEV)
    want, got = op(x, unbiased=unbiased), op(xd, unbiased=unbiased)
    want1, got1 = op(x, 1, unbiased, True), op(xd, 1, unbiased, True)
    if op in MEAN_OPS:
        for g, w in zip(got + got1, want + want1, strict=True):
            close(g, w)
    else:
        close(got, want)
        close(got1, want1)


@pytest.mark.parametrize("op", VAR_OPS + MEAN_OPS, ids=lambda f: f.__name__)
def test_var_std_noncontig_and_conj(op):
    x = cplx(6, 8, 5, seed=3)
    xd = x.to(DEV)
    views = (
        (xd.transpose(0, 2)[:, 1::2], x.transpose(0, 2)[:, 1::2]),
        (xd.conj(), x.conj()),
        (xd.conj()[::2, :, 1:], x.conj()[::2, :, 1:]),
        (torch._neg_view(xd), torch._neg_view(x)),
        (xd[:, :, 2], x[:, :, 2]),
    )
    for vd, v in views:
        for dim in (None, 1, (0, -1)):
            got, want = op(vd, dim), op(v, dim)
            if op in MEAN_OPS:
                close(got[0], want[0])
                close(got[1], want[1])
            else:
                close(got, want)


@pytest.mark.parametrize("op", VAR_OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dt", (torch.float32, C64))
def test_var_std_out(op, dt):
    x = cplx(4, 6)
    want = torch.empty(0, dtype=dt)
    op(x, 1, correction=0, out=want)
    got = torch.empty(0, dtype=dt, device=DEV)
    r = op(x.to(DEV), 1, correction=0, out=got)
    assert r is got
    close(got, want)
    want = torch.empty(7, dtype=dt)  # resized, as CPU
    op(x, (0, 1), keepdim=True, out=want)
    got = torch.empty(7, dtype=dt, device=DEV)
    op(x.to(DEV), (0, 1), keepdim=True, out=got)
    close(got, want)


def test_var_std_scalar_empty_and_special():
    s = torch.tensor(1 + 2j, dtype=C64)
    for op in VAR_OPS + MEAN_OPS:
        for c in (0, 1):
            with pytest.warns(UserWarning, match="degrees of freedom") if c == 1 else _nothing():
                got = op(s.to(DEV), correction=c)
            want = op(s, correction=c)
            if op in MEAN_OPS:
                close(got[0], want[0])
                close(got[1], want[1])
            else:
                close(got, want)
    e = torch.empty(0, 3, dtype=C64)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        close(torch.var(e.to(DEV), 0), torch.var(e, 0))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        got, want = torch.std_mean(e.to(DEV), 0), torch.std_mean(e, 0)
    close(got[0], want[0])
    close(got[1], want[1])
    # NaN and infinite parts give NaN where CPU's do
    x = cplx(3, 5)
    x[0, 1] = complex(float("nan"), 1.0)
    x[2, 3] = complex(0.0, float("inf"))
    x[1, 4] = complex(-float("inf"), 0.5)
    for dim in (None, 0, 1):
        close(torch.var(x.to(DEV), dim), torch.var(x, dim))
        close(torch.std_mean(x.to(DEV), dim)[0], torch.std_mean(x, dim)[0])


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_var_std_errors_as_cpu():
    x = cplx(3, 4)
    xd = x.to(DEV)
    cases = (
        (IndexError, lambda t: torch.var(t, 2)),
        (IndexError, lambda t: torch.std_mean(t, -3)),
        (RuntimeError, lambda t: torch.var(t, (0, 0))),
        (RuntimeError, lambda t: torch.std(t, 1, out=torch.empty(0, dtype=torch.int64, device=t.device))),
    )
    for exc, f in cases:
        with pytest.raises(exc) as cpu_err:
            f(x)
        with pytest.raises(exc) as dev_err:
            f(xd)
        assert str(dev_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]
