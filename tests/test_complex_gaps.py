# complex64 ops that once raised NotImplementedError on webgpu while CPU computes them: the logical
# ops (a complex value is true when either part is non-zero, NaN included), count_nonzero, and
# var/std (+ _mean), whose result is real: var(z) = var(z.real) + var(z.imag). Everything against
# CPU: values, out=, in-place, non-contiguous and conjugated inputs, broadcasting, CPU's errors.
import pytest
import torch
from webgpu_env import DEV, TINY, flushes_subnormal_operands

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


def adapter_normal(z):
    """z without the values that have a subnormal part, on an adapter whose arithmetic reads subnormal
    operands as zero (NVIDIA's; webgpu_env, docs/design.md "Subnormals"); z itself elsewhere."""
    if not flushes_subnormal_operands():
        return z
    sub = lambda p: (p != 0) & (p.abs() < TINY)  # noqa: E731
    return z[~(sub(z.real) | sub(z.imag))]


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


# ---- pow / lerp / logaddexp ------------------------------------------------------------------------

# Transcendental results (exp, log, atan2 in float32 on the device, glibc's cpowf/clogf on CPU) agree
# within float32 rounding of each step; a result's error grows with |b log a|, kept moderate here.
FTOL = {"rtol": 2e-5, "atol": 2e-5}


def fclose(got, want, **tol):
    assert got.device.type == "webgpu"
    got = got.cpu()
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, equal_nan=True, **(tol or FTOL))


def moderate(*shape, seed=3, scale=1.5):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(*shape, generator=g) * scale, torch.randn(*shape, generator=g) * scale)


def test_pow_tensor_tensor():
    a, b = moderate(300, seed=3), moderate(300, seed=4, scale=1.0)
    da, db = a.to(DEV), b.to(DEV)
    fclose(torch.pow(da, db), torch.pow(a, b))
    fclose(da**db, a**b)
    # real exponent tensors and real bases promote to complex64
    r = torch.randn(300)
    fclose(torch.pow(da, r.to(DEV)), torch.pow(a, r))
    fclose(torch.pow(r.abs().to(DEV) + 0.1, db), torch.pow(r.abs() + 0.1, b))
    # broadcasting, non-contiguous and conjugated operands
    col, row = a[:20].reshape(20, 1), b[:15].reshape(1, 15)
    fclose(torch.pow(col.to(DEV), row.to(DEV)), torch.pow(col, row))
    m = a[:200].reshape(20, 10)
    fclose(torch.pow(m.to(DEV).t(), m.to(DEV).t().flip(0) * 0.3), torch.pow(m.t(), m.t().flip(0) * 0.3))
    fclose(torch.pow(da.conj(), db), torch.pow(a.conj(), b))
    # in place and out=
    y = da.clone()
    y.pow_(db)
    fclose(y, a**b)
    out = torch.empty_like(da)
    torch.pow(da, db, out=out)
    fclose(out, a**b)


def test_pow_special_values():
    # 0 ** z through log 0 = -inf (glibc's cpowf): zero for Re z > 0 exponents, NaN parts elsewhere
    # as CPU's; z ** 0 = 1 and z ** 1 = z (ATen fills / copies for scalar exponents).
    z = torch.tensor([0j, complex(-0.0, 0.0), 1 + 0j, -1 + 0j, 1j, -2 + 0j, 2 + 3j, -0.5 - 0.5j], dtype=C64)
    e = torch.tensor([2 + 0j, 0.5 + 1j, 3 + 0j, 0.5 + 0j, 2 + 0j, 1 / 3 + 0j, -1 + 0j, 2 - 1j], dtype=C64)
    fclose(torch.pow(z.to(DEV), e.to(DEV)), torch.pow(z, e))
    x = special()
    x = x[torch.isfinite(x.real) & torch.isfinite(x.imag)]
    for s in (0, 1, 0.0, 1.0, 0j, 1 + 0j):
        fclose(torch.pow(x.to(DEV), s), torch.pow(x, s))
    nz = adapter_normal(x[x != 0])
    # the product / root / reciprocal forms, subnormal and signed-zero parts included (1 / (z * z) of
    # a subnormal z is 1 / 0 = (inf, NaN), as CPU's)
    for s in (2, 3, -1, -2, 0.5, -0.5, 3.0 + 0j):
        fclose(torch.pow(nz.to(DEV), s), torch.pow(nz, s), rtol=1e-4, atol=1e-5)
    # exp(b log z) for other exponents; subnormal bases are left out (float32 log of a subnormal on
    # the device is not CPU's clogf)
    normal = nz[(nz.abs() > 1e-37)]
    for s in (2.5, -1.5, 1j, 2 - 1j):
        fclose(torch.pow(normal.to(DEV), s), torch.pow(normal, s), rtol=1e-4, atol=1e-5)
    # the exponents CPU special-cases also at zero bases
    zero = torch.zeros(3, dtype=C64)
    for s in (2, 3, 0.5):
        fclose(torch.pow(zero.to(DEV), s), torch.pow(zero, s))


@pytest.mark.parametrize("s", [2, 3, -1, -2, 0.5, -0.5, 2.5, -0.7, 1j, 1.5 - 0.5j, 0, 1])
def test_pow_tensor_scalar(s):
    a = moderate(50, 7, seed=5, scale=1.0)
    da = a.to(DEV)
    fclose(torch.pow(da, s), torch.pow(a, s), rtol=1e-4, atol=1e-5)
    fclose(torch.pow(da.t(), s), torch.pow(a.t(), s), rtol=1e-4, atol=1e-5)
    y = da.clone()
    y.pow_(s)
    fclose(y, torch.pow(a, s), rtol=1e-4, atol=1e-5)
    out = torch.empty_like(da)
    torch.pow(da, s, out=out)
    fclose(out, torch.pow(a, s), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("s", [2.0, 0.5, -1.5, 1j, 2 - 1j])
def test_pow_scalar_tensor(s):
    e = moderate(60, seed=6, scale=1.0)
    fclose(torch.pow(s, e.to(DEV)), torch.pow(s, e), rtol=1e-4, atol=1e-5)
    fclose(s ** e.to(DEV), s**e, rtol=1e-4, atol=1e-5)
    out = torch.empty(60, dtype=C64, device=DEV)
    torch.pow(s, e.to(DEV), out=out)
    fclose(out, torch.pow(s, e), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("w", [0.3, -0.2, 0.5, 0.9, 2.0, 0.3 + 0.3j, 0.1 - 0.6j, "tensor", "real_tensor"])
def test_lerp(w):
    a, b = moderate(40, 5, seed=8), moderate(40, 5, seed=9)
    if w == "tensor":
        wt = moderate(40, 5, seed=10, scale=0.6)
    elif w == "real_tensor":
        # CPU requires the weight's dtype to be the inputs'
        wt = torch.complex(torch.rand(40, 5) * 2 - 0.5, torch.zeros(40, 5))
    else:
        wt = w
    dw = wt.to(DEV) if isinstance(wt, torch.Tensor) else wt
    da, db = a.to(DEV), b.to(DEV)
    fclose(torch.lerp(da, db, dw), torch.lerp(a, b, wt))
    y = da.clone()
    y.lerp_(db, dw)
    fclose(y, torch.lerp(a, b, wt))
    out = torch.empty_like(da)
    torch.lerp(da, db, dw, out=out)
    fclose(out, torch.lerp(a, b, wt))
    # non-contiguous, conjugated and broadcast operands
    ws = wt.t() if isinstance(wt, torch.Tensor) else wt
    dws = dw.t() if isinstance(wt, torch.Tensor) else dw
    fclose(torch.lerp(da.t(), db.t().conj(), dws), torch.lerp(a.t(), b.t().conj(), ws))
    row = b[:1]
    fclose(torch.lerp(da, row.to(DEV), dw), torch.lerp(a, row, wt))


def test_lerp_errors_as_cpu():
    a = moderate(4)
    for f in (
        lambda t: torch.lerp(t, t, t.real),  # weight of another dtype
        lambda t: torch.lerp(t, t.real, 0.5),  # end of another dtype
    ):
        with pytest.raises(RuntimeError) as cpu_err:
            f(a)
        with pytest.raises(RuntimeError) as dev_err:
            f(a.to(DEV))
        assert str(dev_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


def test_logaddexp():
    a, b = moderate(300, seed=11, scale=3.0), moderate(300, seed=12, scale=3.0)
    da, db = a.to(DEV), b.to(DEV)
    fclose(torch.logaddexp(da, db), torch.logaddexp(a, b))
    fclose(torch.logaddexp(da, da), torch.logaddexp(a, a))
    # close real parts (log1p's small-argument branch) and far ones
    fclose(torch.logaddexp(da, da + 1e-3), torch.logaddexp(a, a + 1e-3))
    # far real parts: exp(min - max) below float32's normal range. CPU's complex64 log1p gives NaN for
    # a subnormal argument (its complex128 gives max, as the device); compare those with complex128.
    far = torch.logaddexp(a, b * 20)
    exact = torch.logaddexp(a.to(torch.complex128), (b * 20).to(torch.complex128)).to(C64)
    cpu_nan = torch.isnan(far) & ~torch.isnan(exact)
    assert ((a.real - (b * 20).real).abs()[cpu_nan] > 87).all()
    fclose(torch.logaddexp(da, db * 20), torch.where(cpu_nan, exact, far))
    col, row = a[:20].reshape(20, 1), b[:15].reshape(1, 15)
    fclose(torch.logaddexp(col.to(DEV), row.to(DEV)), torch.logaddexp(col, row))
    fclose(torch.logaddexp(da[::2], db[1::2].conj()), torch.logaddexp(a[::2], b[1::2].conj()))
    out = torch.empty_like(da)
    torch.logaddexp(da, db, out=out)
    fclose(out, torch.logaddexp(a, b))
    # infinities and NaN as CPU's helper: NaN anywhere gives NaN, equal -inf real parts keep min
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([complex(-inf, 0), complex(-inf, 1), complex(inf, 0), complex(nan, 0), complex(0, nan), 1 + 1j])
    y = torch.tensor(
        [complex(-inf, 0), complex(-inf, 2), complex(1, 0), complex(1, 0), complex(1, 0), complex(-inf, 0)]
    )
    x, y = x.to(C64), y.to(C64)
    fclose(torch.logaddexp(x.to(DEV), y.to(DEV)), torch.logaddexp(x, y))


# ---- cumsum / cumprod ------------------------------------------------------------------------------


@pytest.mark.parametrize("op", (torch.cumsum, torch.cumprod), ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((5, 9), 1), ((5, 9), 0), ((3, 4, 6), -1), ((2, 3000), 1)], ids=str)
def test_cumsum_cumprod(op, shape, dim):
    # CPU accumulates complex64 in complex128; the device in float32 pairs: within float32 rounding.
    x = moderate(*shape, seed=13, scale=1.0)
    if op is torch.cumprod:
        # unit-modulus-ish factors keep long products finite
        x = x / x.abs().clamp_min(1e-3) * (1 + 0.01 * moderate(*shape, seed=14))
    tol = {"rtol": 1e-4, "atol": 1e-4} if shape[-1] >= 1000 else {}
    fclose(op(x.to(DEV), dim), op(x, dim), **tol)
    fclose(op(x.to(DEV).conj(), dim), op(x.conj(), dim), **tol)
    out = torch.empty_like(x.to(DEV))
    op(x.to(DEV), dim, out=out)
    fclose(out, op(x, dim), **tol)
    y = x.to(DEV).clone()
    getattr(y, op.__name__ + "_")(dim)
    fclose(y, op(x, dim), **tol)
    if x.dim() > 1:
        fclose(op(x.to(DEV).transpose(0, -1), dim), op(x.transpose(0, -1), dim), **tol)


def test_cumsum_cumprod_dtype_special_and_backward():
    r = torch.randn(4, 6)
    fclose(torch.cumsum(r.to(DEV), 1, dtype=C64), torch.cumsum(r, 1, dtype=C64))
    fclose(torch.cumprod(r.to(DEV), 0, dtype=C64), torch.cumprod(r, 0, dtype=C64))
    s = special(16)
    fclose(torch.cumsum(s.to(DEV), 0), torch.cumsum(s, 0))
    z = torch.tensor([1 + 1j, 0j, 2 - 1j, 3j], dtype=C64)
    fclose(torch.cumprod(z.to(DEV), 0), torch.cumprod(z, 0))
    # autograd: cumprod's backward (no zeros, and one zero) and cumsum's
    for x in (moderate(6, seed=15), z):
        xc = x.clone().requires_grad_()
        xd = x.to(DEV).requires_grad_()
        g = moderate(x.numel(), seed=16)
        torch.cumprod(xc, 0).backward(g)
        torch.cumprod(xd, 0).backward(g.to(DEV))
        fclose(xd.grad, xc.grad, rtol=1e-4, atol=1e-4)
    xc = moderate(5, 4, seed=17).requires_grad_()
    xd = xc.detach().to(DEV).requires_grad_()
    g = moderate(5, 4, seed=18)
    torch.cumsum(xc, 1).backward(g)
    torch.cumsum(xd, 1).backward(g.to(DEV))
    fclose(xd.grad, xc.grad)
    with pytest.raises(NotImplementedError) as cpu_err:
        torch.cummax(z, 0)
    with pytest.raises(NotImplementedError):
        torch.cummax(z.to(DEV), 0)
    assert "cummax" in str(cpu_err.value)


# ---- index_put_ with accumulate=True -----------------------------------------------------------------


def test_index_put_accumulate():
    x = moderate(10, 4, seed=19)
    v = moderate(6, 4, seed=20)
    idx = torch.tensor([0, 3, 0, 9, 3, 0])
    for accumulate in (True, False):
        want = x.clone().index_put_((idx,), v if accumulate else v[:1].expand(6, 4), accumulate=accumulate)
        got = x.to(DEV).index_put_(
            (idx.to(DEV),), (v if accumulate else v[:1].expand(6, 4)).to(DEV), accumulate=accumulate
        )
        fclose(got, want, rtol=1e-6, atol=1e-6)
    # out of place, negative indices, two index tensors, a broadcast value, a bool mask, x[idx] += v
    i2 = torch.tensor([1, -1, 1, 2])
    j2 = torch.tensor([0, 3, 0, -4])
    fclose(
        torch.index_put(x.to(DEV), (i2.to(DEV), j2.to(DEV)), v[0].to(DEV), accumulate=True),
        torch.index_put(x, (i2, j2), v[0], accumulate=True),
    )
    fclose(
        x.to(DEV).index_put((i2.to(DEV),), v[1].to(DEV), accumulate=True),
        x.index_put((i2,), v[1], accumulate=True),
    )
    mask = x.real > 0
    vm = moderate(int(mask.sum()), seed=21)
    fclose(x.to(DEV).index_put((mask.to(DEV),), vm.to(DEV), accumulate=True), x.index_put((mask,), vm, accumulate=True))
    # a conjugated value, non-contiguous destinations, and many collisions (atomic float sums)
    y = x.t().contiguous().t()
    yd = y.to(DEV)
    assert not yd.is_contiguous()
    fclose(
        yd.index_put_((i2.to(DEV),), v[:4].to(DEV).conj(), accumulate=True),
        y.clone().index_put_((i2,), v[:4].conj(), accumulate=True),
    )
    v2 = moderate(4, 10, seed=24)
    fclose(
        x.to(DEV).t().index_put_((j2.to(DEV),), v2.to(DEV), accumulate=True),
        x.clone().t().index_put_((j2,), v2, accumulate=True),
    )
    big = torch.randint(0, 5, (3000,))
    vb = moderate(3000, seed=22)
    fclose(
        torch.zeros(5, dtype=C64, device=DEV).index_put_((big.to(DEV),), vb.to(DEV), accumulate=True),
        torch.zeros(5, dtype=C64).index_put_((big,), vb, accumulate=True),
        rtol=1e-4,
        atol=1e-4,
    )


def test_index_put_accumulate_errors_as_cpu():
    x = moderate(5)
    cases = (
        (
            IndexError,
            lambda t: t.index_put_((torch.tensor([5]).to(t.device),), moderate(1).to(t.device), accumulate=True),
        ),
        (
            RuntimeError,
            lambda t: t.index_put_((torch.tensor([1]).to(t.device),), torch.ones(1, device=t.device), accumulate=True),
        ),
    )
    for exc, f in cases:
        with pytest.raises(exc):
            f(x.clone())
        with pytest.raises(exc):
            _then_sync(f, x.to(DEV))


def _then_sync(f, t):
    f(t)
    torch.webgpu.synchronize()  # a device index check raises at the next synchronisation


def test_sqrt_rsqrt():
    # csqrtf: the principal root, the branch cut on the negative reals follows the sign of the
    # imaginary zero; C99's infinite cases.
    inf, nan = float("inf"), float("nan")
    v = [complex(-4, 0), complex(-4, -0.0), complex(0, 0), complex(-0.0, 0), complex(4, -0.0), complex(0, 2)]
    v += [
        complex(inf, 1),
        complex(-inf, 1),
        complex(1, inf),
        complex(nan, inf),
        complex(-inf, nan),
        complex(1e38, 3e38),
    ]
    v += [complex(1e-40, 1e-41), complex(-3e-39, 0.5)]
    z = torch.cat([torch.tensor(v, dtype=C64), moderate(200, seed=23)])
    fclose(torch.sqrt(z.to(DEV)), torch.sqrt(z), rtol=1e-5, atol=1e-6)
    fclose(torch.pow(z.to(DEV), 0.5), torch.pow(z, 0.5), rtol=1e-5, atol=1e-6)
    nz = adapter_normal(z[z != 0])
    fclose(torch.rsqrt(nz.to(DEV)), torch.rsqrt(nz), rtol=1e-5, atol=1e-6)
    y = z.to(DEV)
    y.sqrt_()
    fclose(y, torch.sqrt(z), rtol=1e-5, atol=1e-6)
    # the sign of zero parts matters on the cut: compare the signs of the parts too
    got = torch.sqrt(z[:6].to(DEV)).cpu()
    want = torch.sqrt(z[:6])
    assert torch.equal(torch.signbit(got.imag), torch.signbit(want.imag))


def test_index_add():
    x = moderate(10, 4, seed=25)
    v = moderate(6, 4, seed=26)
    idx = torch.tensor([0, 3, 0, 9, 3, 0])
    for alpha in (1, 2.5, 1 - 1j):
        fclose(x.to(DEV).index_add(0, idx.to(DEV), v.to(DEV), alpha=alpha), x.index_add(0, idx, v, alpha=alpha))
    # dim 1, in place on a non-contiguous destination, a conjugated source, out=
    v1 = moderate(10, 3, seed=27)
    i1 = torch.tensor([3, 0, 3])
    y = x.t().contiguous().t()
    fclose(y.to(DEV).index_add_(1, i1.to(DEV), v1.to(DEV).conj()), y.clone().index_add_(1, i1, v1.conj()))
    out = torch.empty(10, 4, dtype=C64, device=DEV)
    torch.index_add(x.to(DEV), 0, idx.to(DEV), v.to(DEV), out=out)
    fclose(out, x.index_add(0, idx, v))
    # an index out of range: RuntimeError, as CPU's
    with pytest.raises(RuntimeError, match="out of"):
        x.clone().index_add_(0, torch.tensor([10]), v[:1])
    with pytest.raises(RuntimeError, match="out of"):
        _then_sync(lambda t: t.index_add_(0, torch.tensor([10]).to(DEV), v[:1].to(DEV)), x.to(DEV))
