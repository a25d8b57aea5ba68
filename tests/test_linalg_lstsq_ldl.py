# torch.linalg.lstsq (csrc/ops/linalg_lstsq.cpp) and ldl_factor(_ex) / ldl_solve (csrc/ops/linalg_ldl.cpp)
# against CPU with the CPU fallback off: OpInfo's float32 samples (values, and gradients where the entry
# has them), then hand cases: every lstsq driver's outputs (which are filled, shapes, empty sizes, the
# vector case, broadcasting, rank-deficient and zero matrices, gels' full-rank error), Bunch-Kaufman
# pivots and LD equal to CPU's (1x1 and 2x2 blocks, singular info), solves, out=, bad input errors.
import os

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")

import pytest  # noqa: E402
import torch  # noqa: E402
from linalg_samples import DEV, TOL, check_opinfo_samples, to_dev  # noqa: E402

import torch_webgpu  # noqa: E402,F401

g = torch.Generator().manual_seed(0)
DRIVERS = ("gels", "gelsy", "gelsd", "gelss")

ENTRIES = [
    "linalg.lstsq",
    "linalg.lstsq.grad_oriented",
    "linalg.ldl_factor",
    "linalg.ldl_factor_ex",
    "linalg.ldl_solve",
]


@pytest.mark.parametrize("name", ENTRIES)
def test_opinfo_samples(name):
    check_opinfo_samples(name, g, grad_samples=6)


def rnd(*shape):
    return torch.randn(*shape, generator=g)


# ---- lstsq ---------------------------------------------------------------------------------------


def lstsq_both(a, b, **kw):
    c = torch.linalg.lstsq(a, b, **kw)
    d = torch.linalg.lstsq(a.to(DEV), b.to(DEV), **kw)
    return d, c


def check_lstsq(d, c, tol=TOL):
    for name in ("solution", "residuals", "rank", "singular_values"):
        x, y = getattr(d, name), getattr(c, name)
        assert x.device.type == DEV
        assert x.dtype == y.dtype and x.shape == y.shape, (name, x.dtype, y.dtype, x.shape, y.shape)
        if name == "rank":
            assert torch.equal(x.cpu(), y), name
        else:
            torch.testing.assert_close(x.cpu(), y, **tol)


@pytest.mark.parametrize("driver", DRIVERS + (None,))
@pytest.mark.parametrize(
    "sa,sb",
    [
        ((5, 3), (5, 2)),
        ((3, 5), (3, 2)),
        ((4, 4), (4, 3)),
        ((2, 6, 3), (2, 6, 4)),
        ((2, 3, 6), (2, 3, 1)),
        ((5, 2), (5,)),  # vector case
        ((2, 5, 2), (2, 5)),  # batched vectors
        ((2, 1, 5, 3), (1, 3, 5, 2)),  # broadcast batch
        ((1, 4, 3), (4, 2)),  # CPU batches a matrix other with input's batch dims
    ],
)
def test_lstsq_drivers(driver, sa, sb):
    a, b = rnd(*sa), rnd(*sb)
    kw = {} if driver is None else dict(driver=driver)
    check_lstsq(*lstsq_both(a, b, **kw))


@pytest.mark.parametrize("driver", DRIVERS)
def test_lstsq_noncontiguous_and_rcond(driver):
    a = rnd(3, 4, 6).mT  # (3, 6, 4) transposed
    b = rnd(3, 6, 4)[..., ::2]  # strided columns
    check_lstsq(*lstsq_both(a, b, driver=driver))
    if driver != "gels":
        # rank-deficient: a duplicated column, and a rank-1 matrix; rcond decides the rank as CPU's.
        # CPU's gelsy estimates the rank from an incremental condition estimate, and for about 1 in 125
        # random 6x3 matrices with a duplicated column it calls the rank 1 where the singular values
        # (e.g. 4.0, 2.5, 1.9e-7) say 2, as webgpu's SVD-based rank does; for the same fixed matrix it
        # did so in one CI run of four (its rounding depends on more than the inputs). The reference
        # for a duplicated column is therefore CPU's SVD-based gelsd (gelsy's solution is also the
        # minimum-norm one).
        own = torch.Generator().manual_seed(1)
        r = torch.randn(6, 3, generator=own)
        r[:, 2] = r[:, 0]
        b1 = torch.randn(6, 2, generator=own)
        d = torch.linalg.lstsq(r.to(DEV), b1.to(DEV), driver=driver)
        c = torch.linalg.lstsq(r, b1, driver="gelsd" if driver == "gelsy" else driver)
        assert int(d.rank) == int(c.rank) == 2
        torch.testing.assert_close(d.solution.cpu(), c.solution, **TOL)
        ones = torch.ones(5, 3)
        d, c = lstsq_both(ones, b1[:5], driver=driver)
        assert int(d.rank) == int(c.rank) == 1
        torch.testing.assert_close(d.solution.cpu(), c.solution, **TOL)
        if driver != "gelsy":  # gelsy's rank comes from its own condition estimate (see the report)
            d, c = lstsq_both(a, b, driver=driver, rcond=0.5)
            assert torch.equal(d.rank.cpu(), c.rank)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("sa,sb", [((0, 3), (0, 2)), ((3, 0), (3, 2)), ((0, 4, 2), (0, 4, 2)), ((4, 2), (4, 0))])
def test_lstsq_empty(driver, sa, sb):
    if driver in ("gelsd", "gelss") and sb[-1] == 0:
        pytest.skip("CPU's LAPACK (MKL) rejects nrhs = 0 for gelsd/gelss")
    check_lstsq(*lstsq_both(rnd(*sa), rnd(*sb), driver=driver))


@pytest.mark.parametrize("driver", DRIVERS)
def test_lstsq_zero_matrix(driver):
    for shape in ((4, 3), (3, 4), (2, 4, 3)):
        b = rnd(*shape[:-1], 2)
        check_lstsq(*lstsq_both(torch.zeros(shape), b, driver=driver))


def test_lstsq_gels_rank_deficient_error():
    a = rnd(4, 3)
    a[:, 2] = 0
    with pytest.raises(torch.linalg.LinAlgError, match=r"does not have full rank \(error code: 3\)"):
        torch.linalg.lstsq(a, rnd(4, 2), driver="gels")
    with pytest.raises(torch.linalg.LinAlgError, match=r"does not have full rank \(error code: 3\)"):
        torch.linalg.lstsq(a.to(DEV), rnd(4, 2).to(DEV), driver="gels")
    ab = torch.stack([rnd(4, 3), a])
    with pytest.raises(torch.linalg.LinAlgError, match=r"Batch element 1.*error code: 3"):
        torch.linalg.lstsq(ab.to(DEV), rnd(2, 4, 2).to(DEV), driver="gels")


def test_lstsq_out():
    a, b = rnd(2, 6, 3), rnd(2, 6, 2)
    c = torch.linalg.lstsq(a, b, driver="gelsd")
    outs = (
        torch.empty(0, device=DEV),
        torch.empty(0, device=DEV),
        torch.empty(0, dtype=torch.int64, device=DEV),
        torch.empty(0, device=DEV),
    )
    r = torch.linalg.lstsq(a.to(DEV), b.to(DEV), driver="gelsd", out=outs)
    assert r[0].data_ptr() == outs[0].data_ptr()
    check_lstsq(r, c)


def test_lstsq_errors():
    cases = [
        (rnd(3), rnd(3), {}),  # input must be 2-d
        (rnd(3, 3), torch.tensor(1.0), {}),  # other at least 1-d
        (rnd(3, 3), rnd(4, 2), {}),  # row mismatch
        (rnd(4, 3), rnd(2, 4, 2), {}),  # other has more dims
        (rnd(2, 4, 3), rnd(4, 2), {}),  # CPU broadcasts (2,) with (4,)
        (rnd(2, 1, 5, 3), rnd(3, 5, 2), {}),
        (rnd(3, 3), rnd(3, 2), dict(driver="foo")),
        (rnd(3, 3), rnd(3, 2).to(torch.float16), {}),  # dtype mismatch
        (rnd(3, 3).to(torch.float16), rnd(3, 2).to(torch.float16), {}),  # CPU: float and double only
        (rnd(3, 3).to(torch.int32), rnd(3, 2).to(torch.int32), {}),
    ]
    for a, b, kw in cases:
        with pytest.raises(Exception) as ec:
            torch.linalg.lstsq(a, b, **kw)
        with pytest.raises(type(ec.value)) as ed:
            torch.linalg.lstsq(a.to(DEV), b.to(DEV), **kw)
        assert str(ec.value).split("\n")[0][:40] == str(ed.value).split("\n")[0][:40], (ec.value, ed.value)


def test_lstsq_backward():
    for driver in DRIVERS:
        for shape in ((5, 3), (3, 5), (2, 4, 4)):
            a = rnd(*shape).requires_grad_()
            b = rnd(*shape[:-1], 2).requires_grad_()
            ad, bd = to_dev(a), to_dev(b)
            x = torch.linalg.lstsq(a, b, driver=driver).solution
            xd = torch.linalg.lstsq(ad, bd, driver=driver).solution
            w = rnd(*x.shape)
            gc = torch.autograd.grad(x, (a, b), w)
            gd = torch.autograd.grad(xd, (ad, bd), w.to(DEV))
            for p, q in zip(gd, gc):
                torch.testing.assert_close(p.cpu(), q, rtol=1e-2, atol=1e-2)


# ---- LDL -----------------------------------------------------------------------------------------


def sym(*shape):
    a = rnd(*shape)
    return a + a.mT


def ldl_both(a, **kw):
    return torch.linalg.ldl_factor_ex(a.to(DEV), **kw), torch.linalg.ldl_factor_ex(a, **kw)


def check_ldl(d, c):
    assert torch.equal(d.pivots.cpu(), c.pivots), (d.pivots, c.pivots)
    assert d.pivots.dtype == torch.int32 and d.info.dtype == torch.int32
    assert torch.equal(d.info.cpu(), c.info)
    torch.testing.assert_close(d.LD.cpu(), c.LD, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 17, 40, 50])
def test_ldl_factor_random(n):
    for seed in range(4):
        torch.manual_seed(seed)
        a = torch.randn(n, n)
        check_ldl(*ldl_both(a + a.mT))
        check_ldl(*ldl_both(a + a.mT, hermitian=True))


def test_ldl_factor_pivot_kinds():
    cases = [
        torch.tensor([[0.0, 1.0], [1.0, 0.0]]),  # 2x2 block at once
        torch.tensor([[1e-3, 2.0, 0.5], [2.0, 1e-3, 1.0], [0.5, 1.0, 3.0]]),
        torch.tensor([[1.0, 5.0, 0.0], [5.0, 2.0, 4.0], [0.0, 4.0, 1.0]]),  # interchange then 1x1 (kp = imax)
        torch.tensor([[4.0, 1.0, 2.0], [1.0, 9.0, 0.5], [2.0, 0.5, 7.0]]),  # no pivoting
        torch.diag(torch.tensor([3.0, -2.0, 1.0, -5.0])),
        torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 2.0], [1.0, 2.0, 0.0]]),
    ]
    for a in cases:
        check_ldl(*ldl_both(a))


def test_ldl_factor_singular_info():
    cases = [
        torch.zeros(3, 3),
        torch.tensor([[1.0, 2, 3], [2, 4, 6], [3, 6, 9]]),  # rank 1: info 2
        torch.tensor([[2.0, 1.0, 0.0], [1.0, 0.5, 0.0], [0.0, 0.0, 3.0]]),
    ]
    for a in cases:
        d, c = ldl_both(a)
        check_ldl(d, c)
        assert int(d.info) > 0
    batch = torch.stack([sym(3, 3), cases[1]])
    check_ldl(*ldl_both(batch))
    with pytest.raises(RuntimeError):  # CPU raises for info > 0 too (its message is an internal assert)
        torch.linalg.ldl_factor(cases[1])
    with pytest.raises(RuntimeError):
        torch.linalg.ldl_factor(cases[1].to(DEV))


def test_ldl_factor_batched_noncontiguous_out():
    a = sym(2, 3, 6, 6)
    check_ldl(*ldl_both(a))
    nc = sym(4, 14, 14)[:, ::2, ::2]
    check_ldl(*ldl_both(nc))
    LD = torch.empty(0, device=DEV)
    piv = torch.empty(0, dtype=torch.int32, device=DEV)
    info = torch.empty(0, dtype=torch.int32, device=DEV)
    r = torch.linalg.ldl_factor_ex(a.to(DEV), out=(LD, piv, info))
    assert r.LD.data_ptr() == LD.data_ptr()
    check_ldl(r, torch.linalg.ldl_factor_ex(a))
    LD2, piv2 = torch.linalg.ldl_factor(a.to(DEV))
    c2 = torch.linalg.ldl_factor(a)
    assert torch.equal(piv2.cpu(), c2.pivots)
    torch.testing.assert_close(LD2.cpu(), c2.LD, rtol=1e-4, atol=1e-4)
    e = torch.linalg.ldl_factor_ex(torch.empty(0, 3, 3, device=DEV))
    assert e.LD.shape == (0, 3, 3) and e.pivots.shape == (0, 3) and e.info.shape == (0,)


@pytest.mark.parametrize("n", [1, 3, 6, 20])
def test_ldl_solve(n):
    a = sym(2, n, n) + 0.1 * torch.eye(n)
    b = rnd(2, n, 3)
    LD, piv = torch.linalg.ldl_factor(a)
    c = torch.linalg.ldl_solve(LD, piv, b)
    d = torch.linalg.ldl_solve(LD.to(DEV), piv.to(DEV), b.to(DEV))
    torch.testing.assert_close(d.cpu(), c, rtol=1e-3, atol=1e-3)
    # from the device's own factorization, broadcast B, non-contiguous B, out=
    LDd, pivd = torch.linalg.ldl_factor(a.to(DEV))
    bb = rnd(1, 2, n, 2)
    torch.testing.assert_close(
        torch.linalg.ldl_solve(LDd, pivd, bb.to(DEV)).cpu(), torch.linalg.ldl_solve(LD, piv, bb), rtol=1e-3, atol=1e-3
    )
    # one factorization for a batch of B (CPU's own kernel does not broadcast LD: compare with it expanded)
    want = torch.linalg.ldl_solve(LD[:1].expand(2, n, n).contiguous(), piv[:1].expand(2, n).contiguous(), b)
    got = torch.linalg.ldl_solve(LDd[:1], pivd[:1], b.to(DEV))
    torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-3)
    bn = rnd(2, 4, n).mT
    out = torch.empty(0, device=DEV)
    r = torch.linalg.ldl_solve(LDd, pivd, bn.to(DEV), out=out)
    assert r.data_ptr() == out.data_ptr()
    torch.testing.assert_close(r.cpu(), torch.linalg.ldl_solve(LD, piv, bn), rtol=1e-3, atol=1e-3)


def test_ldl_errors():
    cases = [
        (lambda t: torch.linalg.ldl_factor_ex(t), rnd(3, 4)),
        (lambda t: torch.linalg.ldl_factor_ex(t), torch.eye(3, dtype=torch.int32)),
        (lambda t: torch.linalg.ldl_factor_ex(t), torch.eye(3, dtype=torch.float16)),
        (lambda t: torch.linalg.ldl_factor_ex(t), rnd(3)),
    ]
    for f, x in cases:
        with pytest.raises(Exception) as ec:
            f(x)
        with pytest.raises(type(ec.value)):
            f(x.to(DEV))
    LD, piv = torch.linalg.ldl_factor(sym(3, 3))
    for args in ((LD, piv, rnd(4, 2)), (LD, piv[:2], rnd(3, 2)), (LD, piv.float(), rnd(3, 2))):
        with pytest.raises(Exception) as ec:
            torch.linalg.ldl_solve(*args)
        with pytest.raises(type(ec.value)):
            torch.linalg.ldl_solve(*[t.to(DEV) for t in args])
