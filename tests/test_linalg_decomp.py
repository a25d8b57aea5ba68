# Dense factorizations and solves (csrc/ops/linalg_decomp.cpp) against CPU, with the CPU fallback
# off: OpInfo's float32 samples of every entry these kernels serve (values and, where the entry
# supports it, gradients), then hand cases: singular and non-positive-definite inputs (info, errors
# raised like CPU), pivoting order, batched / broadcast / non-contiguous operands, out= tensors of
# other layouts, empty sizes, left/right and adjoint solves, refused dtypes.
import os

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")

import pytest  # noqa: E402
import torch  # noqa: E402
from linalg_samples import DEV, assert_same, check_opinfo_samples  # noqa: E402

import torch_webgpu  # noqa: E402,F401

g = torch.Generator().manual_seed(0)

ENTRIES = [
    "linalg.lu_factor",
    "linalg.lu_factor_ex",
    "lu",
    "linalg.lu_solve",
    "lu_solve",
    "linalg.solve",
    "linalg.solve_ex",
    "linalg.inv",
    "linalg.inv_ex",
    "linalg.det",
    "linalg.slogdet",
    "logdet",
    "linalg.cholesky",
    "linalg.cholesky_ex",
    "cholesky",
    "linalg.solve_triangular",
    "triangular_solve",
    "linalg.tensorinv",
    "linalg.tensorsolve",
    "lu_unpack",
    "linalg.lu",
    "cholesky_solve",
    "cholesky_inverse",
]


@pytest.mark.parametrize("name", ENTRIES)
def test_opinfo_samples(name):
    check_opinfo_samples(name, g, grad_samples=3)


def rnd(*shape):
    return torch.randn(*shape, generator=g)


def spd(*shape):
    a = rnd(*shape)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1])


def test_lu_factor_pivots_info_singular():
    a = torch.tensor([[0.0, 2.0, 1.0], [0.0, 4.0, 3.0], [0.0, 1.0, 5.0]])  # first column zero
    b = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2, zero pivot later
    c = torch.tensor([[1.0, 3.0, 3.0], [-2.0, 3.0, 3.0], [2.0, 3.0, 3.0]])  # tie in magnitude: first row wins
    for m in (a, b, c, torch.zeros(4, 4)):
        lu_c, piv_c, info_c = torch.linalg.lu_factor_ex(m)
        lu_d, piv_d, info_d = torch.linalg.lu_factor_ex(m.to(DEV))
        assert torch.equal(piv_d.cpu(), piv_c) and piv_d.dtype == torch.int32
        assert torch.equal(info_d.cpu(), info_c)
        torch.testing.assert_close(lu_d.cpu(), lu_c)
    assert int(torch.linalg.lu_factor_ex(a.to(DEV))[2]) == 1
    with pytest.raises(RuntimeError, match=r"lu_factor_ex: U\[1,1\] is zero"):  # CPU's error
        torch.linalg.lu_factor_ex(a.to(DEV), check_errors=True)
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        torch.linalg.lu_factor(a.to(DEV))
    with pytest.raises(RuntimeError, match="without pivoting"):
        torch.linalg.lu_factor(rnd(3, 3).to(DEV), pivot=False)


def test_lu_factor_nonfinite_pivoting():
    # LAPACK's pivot search (reference isamax, what CPU does for small matrices; its blocked path
    # for larger ones may pick a NaN instead): a NaN below the diagonal never wins, one on it does
    nan, inf = float("nan"), float("inf")
    cols = [
        [nan, 1.0, 2.0],
        [1.0, nan, 3.0],
        [1.0, 3.0, nan],
        [nan, nan, 1.0],
        [inf, nan, 1.0],
        [1.0, nan, inf],
        [1.0, inf, nan],
        [0.0, nan, 0.0],
    ]
    for col in cols:
        a = torch.eye(3)
        a[:, 0] = torch.tensor(col)
        c, d = torch.linalg.lu_factor_ex(a), torch.linalg.lu_factor_ex(a.to(DEV))
        assert torch.equal(d[1].cpu(), c[1]) and torch.equal(d[2].cpu(), c[2]), col
        # global memory (a 66x66 matrix): the same choices as in workgroup memory
        big = torch.block_diag(a, torch.eye(63))
        d2 = torch.linalg.lu_factor_ex(big.to(DEV))
        assert torch.equal(d2[1].cpu()[:3], c[1]) and torch.equal(d2[2].cpu(), c[2]), col
    spd_nan = torch.eye(3)
    spd_nan[1, 1] = nan
    assert int(torch.linalg.cholesky_ex(spd_nan.to(DEV))[1]) == 2
    spd_neg = torch.eye(3)
    spd_neg[2, 2] = -0.0
    assert int(torch.linalg.cholesky_ex(spd_neg.to(DEV))[1]) == 3


def test_lu_factor_rectangular_batched_large():
    for shape in [(5, 3), (3, 5), (2, 3, 70, 70), (4, 1, 1), (0, 3, 3), (2, 0, 4)]:
        a = rnd(*shape)
        assert_same(torch.linalg.lu_factor_ex(a.to(DEV)), torch.linalg.lu_factor_ex(a))
    # the trailing dims of a 130x130 matrix (more rows than the 64 invocations of a workgroup)
    a = rnd(130, 130)
    lu, piv = torch.linalg.lu_factor(a.to(DEV))
    P, L, U = torch.lu_unpack(lu.cpu(), piv.cpu())
    torch.testing.assert_close(P @ L @ U, a, rtol=1e-4, atol=1e-4)
    assert torch.equal(piv.cpu(), torch.linalg.lu_factor(a)[1])


def test_batch_past_one_grid_dimension():
    # 65537 matrices: the grid folds into 2D (the kernels rebuild each matrix index from it)
    a = 0.4 * torch.rand(65537, 2, 2, generator=g) - 0.2 + torch.eye(2)  # diagonally dominant
    d = a.to(DEV)
    assert_same(torch.linalg.lu_factor_ex(d), torch.linalg.lu_factor_ex(a))
    s = a @ a.mT
    assert_same(torch.linalg.cholesky_ex(s.to(DEV)), torch.linalg.cholesky_ex(s))
    b = rnd(65537, 2, 1)
    assert_same(torch.linalg.solve(d, b.to(DEV)), torch.linalg.solve(a, b))


def test_noncontiguous_and_out_layouts():
    a = rnd(3, 6, 6)[:, ::2, ::2]  # strided
    assert_same(torch.linalg.lu_factor_ex(a.to(DEV)), torch.linalg.lu_factor_ex(a))
    at = rnd(4, 4, 6).permute(2, 0, 1)  # batch dim innermost in memory
    ad = rnd(4, 4, 6).to(DEV).permute(2, 0, 1)
    ad.copy_(at.to(DEV))
    assert_same(torch.linalg.det(ad), torch.linalg.det(at))
    # out= tensors of the wrong layout / size are resized or written through
    LU = torch.empty(0, device=DEV)
    piv = torch.empty(7, dtype=torch.int32, device=DEV)
    info = torch.empty(0, dtype=torch.int32, device=DEV)
    m = rnd(2, 4, 4)
    torch.linalg.lu_factor_ex(m.to(DEV), out=(LU, piv, info))
    assert_same((LU, piv, info), torch.linalg.lu_factor_ex(m))
    LU2 = torch.empty(2, 4, 4, device=DEV)  # row-major out
    piv2 = torch.empty(2, 4, dtype=torch.int32, device=DEV)
    torch.linalg.lu_factor_ex(m.to(DEV), out=(LU2, piv2, torch.empty(2, dtype=torch.int32, device=DEV)))
    assert_same((LU2, piv2), torch.linalg.lu_factor(m))
    x = torch.empty(3, 3, device=DEV).t()
    torch.linalg.solve(m[0].to(DEV), rnd(4, 3).to(DEV) * 0 + 1, out=torch.empty(4, 3, device=DEV))
    b = rnd(4, 3)
    torch.linalg.solve_triangular(m[0].to(DEV).triu(), b.to(DEV), upper=True, out=x)
    assert_same(x, torch.linalg.solve_triangular(m[0].triu(), b, upper=True))
    inv = torch.empty(2, 4, 4, device=DEV)[:, :, :]
    torch.linalg.inv(m.to(DEV), out=inv)
    assert_same(inv, torch.linalg.inv(m))
    with pytest.raises(RuntimeError, match="dtype"):
        torch.linalg.inv(m.to(DEV), out=torch.empty(2, 4, 4, dtype=torch.int32, device=DEV))


def test_solves_left_right_adjoint_broadcast():
    A = rnd(3, 1, 5, 5) + 3 * torch.eye(5)
    B = rnd(4, 5, 2)
    LU, piv = torch.linalg.lu_factor(A)
    LUd, pivd = LU.to(DEV), piv.to(DEV)
    for left in (True, False):
        for adjoint in (False, True):
            Bx = B if left else B.mT
            assert_same(
                torch.linalg.lu_solve(LUd, pivd, Bx.to(DEV), left=left, adjoint=adjoint),
                torch.linalg.lu_solve(LU, piv, Bx, left=left, adjoint=adjoint),
            )
        assert_same(
            torch.linalg.solve(A.to(DEV), (B if left else B.mT).to(DEV), left=left),
            torch.linalg.solve(A, B if left else B.mT, left=left),
        )
    v = rnd(5)
    assert_same(torch.linalg.solve(A[0, 0].to(DEV), v.to(DEV)), torch.linalg.solve(A[0, 0], v))
    T = rnd(2, 5, 5)
    for upper in (True, False):
        for left in (True, False):
            for unit in (True, False):
                Tt = (T.triu() if upper else T.tril()) + 4 * torch.eye(5)
                Bx = rnd(2, 5, 3) if left else rnd(2, 3, 5)
                assert_same(
                    torch.linalg.solve_triangular(Tt.to(DEV), Bx.to(DEV), upper=upper, left=left, unitriangular=unit),
                    torch.linalg.solve_triangular(Tt, Bx, upper=upper, left=left, unitriangular=unit),
                )
        for tr in (True, False):
            Bx = rnd(3, 2, 5, 4)
            assert_same(
                torch.triangular_solve(Bx.to(DEV), T.to(DEV), upper=upper, transpose=tr),
                torch.triangular_solve(Bx, T, upper=upper, transpose=tr),
            )


def test_singular_errors_and_info():
    s = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    z = torch.zeros(3, 3)
    for m in (s, z):
        with pytest.raises(torch.linalg.LinAlgError):
            torch.linalg.inv(m.to(DEV))
        with pytest.raises(torch.linalg.LinAlgError):
            torch.linalg.solve(m.to(DEV), rnd(m.shape[0], 1).to(DEV))
        _, info = torch.linalg.inv_ex(m.to(DEV))
        assert torch.equal(info.cpu(), torch.linalg.inv_ex(m)[1])
        assert_same(torch.linalg.det(m.to(DEV)), torch.linalg.det(m))
        assert_same(torch.linalg.slogdet(m.to(DEV)), torch.linalg.slogdet(m))  # sign 0, -inf
    batch = torch.stack([torch.eye(2), s])
    with pytest.raises(torch.linalg.LinAlgError, match="Batch element 1"):
        torch.linalg.inv(batch.to(DEV))
    assert_same(torch.logdet(-torch.eye(3).to(DEV)), torch.logdet(-torch.eye(3)))  # NaN


def test_cholesky_info_upper_batched():
    A = spd(3, 6, 6)
    for upper in (False, True):
        assert_same(torch.linalg.cholesky_ex(A.to(DEV), upper=upper), torch.linalg.cholesky_ex(A, upper=upper))
    big = spd(70, 70)
    assert_same(torch.linalg.cholesky(big.to(DEV)), torch.linalg.cholesky(big), dict(rtol=1e-3, atol=1e-3))
    bad = A.clone()
    bad[1, 3, 3] = -100.0
    _, info = torch.linalg.cholesky_ex(bad.to(DEV))
    assert info.cpu().tolist() == torch.linalg.cholesky_ex(bad)[1].tolist() == [0, 4, 0]
    with pytest.raises(torch.linalg.LinAlgError, match="not positive-definite"):
        torch.linalg.cholesky(bad.to(DEV))
    nan = A[0].clone()
    nan[0, 0] = float("nan")
    assert int(torch.linalg.cholesky_ex(nan.to(DEV))[1]) == 1
    assert torch.linalg.cholesky(torch.empty(0, 0).to(DEV)).shape == (0, 0)
    # upper triangle of the input is ignored (lower) / lower ignored (upper)
    junk = A[0] + torch.triu(torch.full((6, 6), 7.0), 1)
    assert_same(torch.linalg.cholesky(junk.to(DEV)), torch.linalg.cholesky(junk))


def test_gradients():
    A = (rnd(2, 4, 4) + 3 * torch.eye(4)).requires_grad_()
    Ad = A.detach().to(DEV).requires_grad_()
    for fn in (
        torch.linalg.det,
        lambda x: torch.linalg.slogdet(x)[1],
        torch.linalg.inv,
        lambda x: torch.linalg.solve(x, torch.ones(4, 2, device=x.device)),
        lambda x: torch.linalg.cholesky(x @ x.mT),
    ):
        c = fn(A)
        d = fn(Ad)
        w = torch.randn(c.shape, generator=g)
        (gc,) = torch.autograd.grad(c, A, w)
        (gd,) = torch.autograd.grad(d, Ad, w.to(DEV))
        torch.testing.assert_close(gd.cpu(), gc, rtol=1e-3, atol=1e-3)


def test_lu_unpack_and_linalg_lu():
    for shape in [(4, 4), (6, 3), (3, 6), (2, 5, 5), (2, 0, 3)]:
        a = rnd(*shape)
        LU, piv = torch.linalg.lu_factor(a)
        assert_same(torch.lu_unpack(LU.to(DEV), piv.to(DEV)), torch.lu_unpack(LU, piv))
        assert_same(torch.linalg.lu(a.to(DEV)), torch.linalg.lu(a))
    # pivots that move rows more than once
    piv = torch.tensor([3, 3, 3], dtype=torch.int32)
    LU = rnd(3, 3)
    assert_same(torch.lu_unpack(LU.to(DEV), piv.to(DEV)), torch.lu_unpack(LU, piv))
    P = torch.empty(0, device=DEV)
    L = torch.empty(0, device=DEV)
    U = torch.empty(3, 3, device=DEV).t()
    torch.lu_unpack(LU.to(DEV), piv.to(DEV), out=(P, L, U))
    assert_same((P, L, U), torch.lu_unpack(LU, piv))
    F = torch.linalg.cholesky(spd(2, 4, 4))
    B = rnd(3, 1, 4, 2)
    for upper in (False, True):
        Fx = F.mT if upper else F
        assert_same(torch.cholesky_solve(B.to(DEV), Fx.to(DEV), upper=upper), torch.cholesky_solve(B, Fx, upper=upper))
        assert_same(torch.cholesky_inverse(Fx.to(DEV), upper=upper), torch.cholesky_inverse(Fx, upper=upper))


def test_refused_inputs():
    with pytest.raises(RuntimeError, match="square"):
        torch.linalg.inv(rnd(3, 4).to(DEV))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        torch.linalg.solve_triangular(rnd(3, 3).to(DEV), rnd(4, 2).to(DEV), upper=True)
    with pytest.raises(RuntimeError):
        torch.linalg.det(torch.ones(2, 2, dtype=torch.float16, device=DEV))
    with pytest.raises(RuntimeError, match="device"):
        torch.linalg.solve(rnd(3, 3).to(DEV), rnd(3, 1))


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: torch.linalg.det(t(torch.empty(0, 0))),
        lambda t: torch.linalg.det(t(torch.empty(3, 0, 0))),
        lambda t: torch.linalg.slogdet(t(torch.empty(2, 0, 0))),
        lambda t: torch.linalg.inv(t(torch.empty(2, 0, 0))),
        lambda t: torch.linalg.solve(t(torch.eye(3)), t(torch.empty(3, 0))),
        lambda t: torch.linalg.solve_triangular(t(torch.eye(3)), t(torch.empty(3, 0)), upper=True),
        lambda t: torch.linalg.solve_triangular(t(torch.empty(0, 3, 3)), t(torch.empty(0, 3, 2)), upper=True),
        lambda t: torch.linalg.lu(t(torch.empty(0, 3))),
        lambda t: torch.cholesky_inverse(t(torch.empty(0, 0))),
        lambda t: torch.linalg.det(t(torch.tensor([[2.0]]))),
    ],
)
def test_empty_and_tiny(fn):
    assert_same(fn(lambda x: x.to(DEV)), fn(lambda x: x))


def spd_scaled(*shape):
    # well conditioned at any size: G G^T / n + I
    a = rnd(*shape)
    return a @ a.mT / shape[-1] + torch.eye(shape[-1])


BLOCKED_TOL = dict(rtol=1e-3, atol=1e-4)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("n", [300, 513])
def test_cholesky_blocked(n):
    # n * n > 2048: the blocked factorization (diagonal block in workgroup memory, panel trsm, GEMM update)
    # n = 513: a last block of one column. Batch of 2, lower and upper, the other triangle ignored.
    A = spd_scaled(2, n, n)
    junk = torch.triu(torch.full((n, n), 5.0), 1)
    for upper in (False, True):
        src = A + (junk.mT if upper else junk)
        L, info = torch.linalg.cholesky_ex(src.to(DEV), upper=upper)
        Lc, infoc = torch.linalg.cholesky_ex(src, upper=upper)
        assert info.cpu().tolist() == infoc.tolist() == [0, 0]
        torch.testing.assert_close(L.cpu(), Lc, **BLOCKED_TOL)
    # non-contiguous input (every other matrix of a batch, transposed) and an out= of another layout
    B = spd_scaled(4, n, n)[::2].mT
    out = torch.empty(n, n, 2, device=DEV).permute(2, 0, 1)
    torch.linalg.cholesky(B.to(DEV), out=out)
    torch.testing.assert_close(out.cpu(), torch.linalg.cholesky(B), **BLOCKED_TOL)
    assert_same(torch.cholesky(A[0].to(DEV), upper=True), torch.cholesky(A[0], upper=True), BLOCKED_TOL)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_cholesky_blocked_info_and_errors():
    # The first non-positive pivot, as the global column index, in any block; failures in later
    # blocks (after the garbage a failure leaves) never replace the first one.
    n = 300
    A = spd_scaled(4, n, n)
    A[1, 200, 200] = -50.0  # inside a later block
    A[2, 31, 31] = -50.0  # inside the first block
    A[3, 64, 64] = -50.0  # the first column of the second block
    A[3, 250, 250] = -50.0
    info = torch.linalg.cholesky_ex(A.to(DEV))[1].cpu()
    info_upper = torch.linalg.cholesky_ex(A.to(DEV), upper=True)[1].cpu()
    want = torch.linalg.cholesky_ex(A)[1]
    assert info.tolist() == info_upper.tolist() == want.tolist() == [0, 201, 32, 65]
    with pytest.raises(torch.linalg.LinAlgError) as cpu_err:
        torch.linalg.cholesky(A)
    with pytest.raises(torch.linalg.LinAlgError) as dev_err:
        torch.linalg.cholesky(A.to(DEV))
    assert str(dev_err.value) == str(cpu_err.value)
    nan = A[0].clone()
    nan[280, 280] = float("nan")
    assert int(torch.linalg.cholesky_ex(nan.to(DEV))[1]) == int(torch.linalg.cholesky_ex(nan)[1]) == 281
    with pytest.raises(torch.linalg.LinAlgError, match="order 201"):
        torch.cholesky(A[1].to(DEV))


def test_cholesky_blocked_gradient():
    n = 260
    A = spd_scaled(n, n).requires_grad_()
    Ad = A.detach().to(DEV).requires_grad_()
    w = rnd(n, n)
    (gc,) = torch.autograd.grad(torch.linalg.cholesky(A), A, w)
    (gd,) = torch.autograd.grad(torch.linalg.cholesky(Ad), Ad, w.to(DEV))
    torch.testing.assert_close(gd.cpu(), gc, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("n,nrhs", [(32, 1), (32, 32), (32, 33), (45, 3), (46, 2)])
def test_solve_small_batched(n, nrhs):
    # _linalg_solve_ex's one-dispatch path (n * n <= 2048 and n * nrhs <= 1024: one workgroup per
    # system in workgroup memory) and its neighbours that take lu_factor + lu_solve: LU, pivots, info
    # and X as CPU's, vector and matrix right-hand sides, a broadcast B, non-contiguous operands.
    # Seeded here: pivots are compared exactly, and data drawn after whichever tests ran before in
    # this worker once held a near-tie that rounding broke the other way.
    g.manual_seed(1000 * n + nrhs)
    A = rnd(40, n, n) + n**0.5 * torch.eye(n)
    B = rnd(40, n, nrhs)
    got = torch.ops.aten._linalg_solve_ex(A.to(DEV), B.to(DEV))  # result, LU, pivots, info
    want = torch.ops.aten._linalg_solve_ex(A, B)
    assert_same(got[2:], want[2:])  # pivots, info
    torch.testing.assert_close(got[1].cpu(), want[1], rtol=1e-4, atol=1e-5)  # LU
    torch.testing.assert_close(got[0].cpu(), want[0], rtol=1e-3, atol=1e-4)
    v = rnd(40, n)
    assert_same(torch.linalg.solve(A.to(DEV), v.to(DEV)), torch.linalg.solve(A, v))
    assert_same(torch.linalg.solve(A.to(DEV), B[0].to(DEV)), torch.linalg.solve(A, B[0]))  # B broadcast
    At, Bt = A.mT[::2], B[::2].mT.contiguous().mT  # strided batch, transposed matrices
    out = torch.empty(nrhs, 20, n, device=DEV).permute(1, 2, 0)
    torch.linalg.solve(At.to(DEV), Bt.to(DEV), out=out)
    torch.testing.assert_close(out.cpu(), torch.linalg.solve(At, Bt), rtol=1e-3, atol=1e-4)
    sing = A.clone()
    sing[7, :, 3] = 0.0
    info = torch.linalg.solve_ex(sing.to(DEV), B.to(DEV))[1]
    assert info.cpu().tolist() == torch.linalg.solve_ex(sing, B)[1].tolist()
    assert info[7] > 0
    with pytest.raises(torch.linalg.LinAlgError, match="Batch element 7"):
        torch.linalg.solve(sing.to(DEV), B.to(DEV))


def test_cholesky_blocked_batches():
    # batches of matrices past the workgroup copy (n = 46: one block; 130: three), batch dims that
    # do not collapse to one stride, lower and upper
    for A in (spd_scaled(30, 46, 46), spd_scaled(3, 2, 130, 130).transpose(0, 1)):
        for upper in (False, True):
            got = torch.linalg.cholesky_ex(A.to(DEV), upper=upper)
            want = torch.linalg.cholesky_ex(A, upper=upper)
            torch.testing.assert_close(got[0].cpu(), want[0], **BLOCKED_TOL)
            assert torch.equal(got[1].cpu(), want[1])


def rel_err(x, ref):
    return float((x.double() - ref).norm() / ref.norm())


@pytest.mark.parametrize("n", [64, 65, 128, 200])
def test_cholesky_blocked_inverse_path(n):
    # The blocked path solves each panel through the inverted diagonal block (a GEMM with L_D^-1):
    # on SPD matrices of condition ~1e4 (eigenvalues spread over 4 decades, so the diagonal blocks
    # are ill-conditioned too) the factor's error from float64 stays within a small multiple of CPU's
    # float32 error, and L L^T reconstructs A. n = 64: one block (factor and inverse only); 65: a
    # last block of one column; 128: two whole blocks.
    q, _ = torch.linalg.qr(rnd(n, n).double())
    A64 = q @ torch.diag(torch.logspace(0, 4, n, dtype=torch.float64)) @ q.mT
    A = A64.float()
    L64 = torch.linalg.cholesky(A.double())
    L = torch.linalg.cholesky(A.to(DEV)).cpu()
    cpu_err = rel_err(torch.linalg.cholesky(A), L64)
    assert rel_err(L, L64) <= 10 * cpu_err + 1e-6, (rel_err(L, L64), cpu_err)
    assert rel_err(L @ L.mT, A.double()) < 1e-5
    assert torch.equal(L.triu(1), torch.zeros(n, n))
    # the factorization reads A itself in its first step and never L's old contents (NaN here), in
    # either triangle and either layout of out=
    for upper in (False, True):
        for out in (torch.full((n, n), float("nan"), device=DEV), torch.full((n, n), float("nan"), device=DEV).mT):
            torch.linalg.cholesky(A.to(DEV), upper=upper, out=out)
            torch.testing.assert_close(out.cpu(), L.mT if upper else L)
