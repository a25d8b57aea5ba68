"""SVD, symmetric eigendecomposition and Householder QR on webgpu (csrc/ops/linalg_jacobi.cpp,
csrc/ops/linalg_qr.cpp) against CPU: values, reconstructions, orthogonality, batches,
non-contiguous inputs, out= variants, empty inputs, errors. Singular vectors and eigenvectors are
compared through gauge-invariant quantities (they are unique only up to sign)."""

import pytest
import torch

import torch_webgpu  # noqa: F401

D = "webgpu"
F32 = {"atol": 2e-5, "rtol": 2e-5}


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=gen(seed))


def eye_like(x):
    return torch.eye(x.shape[-1]).expand((*x.shape[:-2], x.shape[-1], x.shape[-1]))


def orth_err(Q):
    """max |Q^T Q - I| over Q's columns."""
    return (Q.mT @ Q - eye_like(Q)).abs().max().item() if Q.numel() else 0.0


# ---- SVD

SVD_SHAPES = [
    (3, 3),
    (5, 3),
    (3, 5),
    (1, 4),
    (4, 1),
    (2, 4, 4),
    (3, 5, 2),
    (2, 3, 2, 6),
    (10, 10),
    (0, 3),
    (3, 0),
    (0, 3, 3),
]


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_cpu(shape, full):
    a = randn(*shape)
    U, S, Vh = (t.cpu() for t in torch.linalg.svd(a.to(D), full_matrices=full))
    U0, S0, Vh0 = torch.linalg.svd(a, full_matrices=full)
    assert U.shape == U0.shape
    assert S.shape == S0.shape
    assert Vh.shape == Vh0.shape
    torch.testing.assert_close(S, S0, **F32)
    k = S.shape[-1]
    torch.testing.assert_close((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], a, **F32)
    # the singular vectors up to sign (the samples' singular values are distinct)
    torch.testing.assert_close(U[..., :k].abs(), U0[..., :k].abs(), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(Vh[..., :k, :].abs(), Vh0[..., :k, :].abs(), atol=1e-4, rtol=1e-4)
    assert orth_err(U) < 1e-5
    assert orth_err(Vh.mT) < 1e-5
    if full:  # complete bases, so U U^T = I too
        assert orth_err(U.mT) < 1e-5
        assert orth_err(Vh) < 1e-5


@pytest.mark.parametrize("n", [64, 256])
def test_svd_large(n):
    a = randn(n, n, seed=n)
    U, S, Vh = (t.cpu() for t in torch.linalg.svd(a.to(D)))
    S0 = torch.linalg.svdvals(a)
    torch.testing.assert_close(S, S0, atol=1e-4 * S0[0].item(), rtol=1e-4)
    torch.testing.assert_close(U @ torch.diag(S) @ Vh, a, atol=1e-4 * S0[0].item(), rtol=0)
    assert orth_err(U) < 1e-4
    assert orth_err(Vh.mT) < 1e-4


def test_svd_rank_deficient_completes_bases():
    # rank 2: U's columns for the zero singular values still make an orthonormal basis
    a = randn(6, 2) @ randn(2, 5, seed=1)
    for full in (False, True):
        U, S, Vh = (t.cpu() for t in torch.linalg.svd(a.to(D), full_matrices=full))
        torch.testing.assert_close(S, torch.linalg.svdvals(a), **F32)
        assert orth_err(U) < 1e-5
        assert orth_err(Vh.mT) < 1e-5
        torch.testing.assert_close(U[:, :5] @ torch.diag(S) @ Vh[:5], a, **F32)
    z = torch.zeros(4, 3)
    U, S, Vh = (t.cpu() for t in torch.linalg.svd(z.to(D), full_matrices=True))
    assert torch.equal(S, torch.zeros(3))
    assert orth_err(U) < 1e-6
    assert orth_err(Vh) < 1e-6


def test_svd_noncontiguous_and_out():
    base = randn(3, 6, 8)
    a = base[:, ::2, 1::2].mT  # (3, 4, 3), strided
    U, S, Vh = torch.linalg.svd(a.to(D), full_matrices=False)
    torch.testing.assert_close(S.cpu(), torch.linalg.svdvals(a), **F32)
    torch.testing.assert_close((U * S.unsqueeze(-2) @ Vh).cpu(), a, **F32)
    wa = base.to(D)[:, ::2, 1::2].mT
    torch.testing.assert_close(torch.linalg.svdvals(wa).cpu(), torch.linalg.svdvals(a), **F32)
    # out=: wrong sizes are resized; a non-contiguous out is written through its strides
    outs = (torch.empty(0, device=D), torch.empty(0, device=D), torch.empty(0, device=D))
    r = torch.linalg.svd(a.to(D), full_matrices=False, out=outs)
    assert all(x is y for x, y in zip(r, outs, strict=False))
    torch.testing.assert_close(outs[1].cpu(), torch.linalg.svdvals(a), **F32)
    s_out = torch.zeros(3, 6, device=D)[:, ::2]
    torch.linalg.svdvals(a.to(D), out=s_out)
    torch.testing.assert_close(s_out.cpu(), torch.linalg.svdvals(a), **F32)


def test_svd_users():
    a = randn(2, 5, 4)
    w = a.to(D)
    torch.testing.assert_close(torch.linalg.pinv(w).cpu(), torch.linalg.pinv(a), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(torch.linalg.matrix_norm(w, "nuc").cpu(), torch.linalg.matrix_norm(a, "nuc"), **F32)
    torch.testing.assert_close(torch.linalg.matrix_norm(w, 2).cpu(), torch.linalg.matrix_norm(a, 2), **F32)
    torch.testing.assert_close(torch.linalg.cond(w).cpu(), torch.linalg.cond(a), atol=1e-4, rtol=1e-4)
    r = randn(6, 2) @ randn(2, 5, seed=3)
    assert torch.linalg.matrix_rank(r.to(D)).item() == torch.linalg.matrix_rank(r).item() == 2


def test_svd_backward():
    a = randn(4, 3)

    def f(x):
        U, S, Vh = torch.linalg.svd(x, full_matrices=False)
        return (U @ Vh).sum() + S.pow(2).sum()

    x0 = a.clone().requires_grad_()
    f(x0).backward()
    x1 = a.to(D).requires_grad_()
    f(x1).backward()
    torch.testing.assert_close(x1.grad.cpu(), x0.grad, atol=1e-4, rtol=1e-4)


def test_svd_errors_as_cpu():
    for bad in (torch.randn(3), torch.randn(3, 3, dtype=torch.float16)):
        with pytest.raises(Exception) as cpu:
            torch.linalg.svd(bad)
        with pytest.raises(type(cpu.value)):
            torch.linalg.svd(bad.to(D))
    with pytest.raises(RuntimeError, match="dtype"):
        torch.linalg.svd(torch.randn(3, 3, device=D), out=(torch.empty(0, device=D, dtype=torch.int32),) * 3)


# ---- eigh


@pytest.mark.parametrize(
    "shape", [(1, 1), (3, 3), (5, 5), (2, 4, 4), (2, 3, 6, 6), (10, 10), (0, 0), (0, 3, 3)], ids=str
)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_cpu(shape, uplo):
    a = randn(*shape)  # not symmetric: only the UPLO triangle may be read
    L, V = (t.cpu() for t in torch.linalg.eigh(a.to(D), UPLO=uplo))
    L0, V0 = torch.linalg.eigh(a, UPLO=uplo)
    torch.testing.assert_close(L, L0, **F32)
    torch.testing.assert_close(V.abs(), V0.abs(), atol=1e-4, rtol=1e-4)
    sym = (a.triu() + a.triu(1).mT) if uplo == "U" else (a.tril() + a.tril(-1).mT)
    torch.testing.assert_close(V @ torch.diag_embed(L) @ V.mT, sym, **F32)
    assert orth_err(V) < 1e-5
    torch.testing.assert_close(torch.linalg.eigvalsh(a.to(D), UPLO=uplo).cpu(), L0, **F32)


@pytest.mark.parametrize("n", [64, 256])
def test_eigh_large(n):
    a = randn(n, n, seed=n)
    a = a + a.mT
    L, V = (t.cpu() for t in torch.linalg.eigh(a.to(D)))
    L0 = torch.linalg.eigvalsh(a)
    scale = L0.abs().max().item()
    torch.testing.assert_close(L, L0, atol=1e-5 * scale, rtol=0)
    torch.testing.assert_close(V @ torch.diag(L) @ V.mT, a, atol=1e-4 * scale, rtol=0)
    assert orth_err(V) < 1e-4


def test_eigh_repeated_and_out_and_backward():
    q, _ = torch.linalg.qr(randn(5, 5))
    a = q @ torch.diag(torch.tensor([1.0, 1.0, 2.0, 2.0, -3.0])) @ q.T
    L, V = (t.cpu() for t in torch.linalg.eigh(a.to(D)))
    torch.testing.assert_close(L, torch.tensor([-3.0, 1.0, 1.0, 2.0, 2.0]), **F32)
    assert orth_err(V) < 1e-5
    outs = (torch.empty(0, device=D), torch.empty(0, device=D))
    r = torch.linalg.eigh(a.to(D), out=outs)
    assert r[0] is outs[0]
    assert r[1] is outs[1]
    torch.testing.assert_close(outs[0].cpu(), L, **F32)
    b = randn(4, 4)
    b = b + b.T
    x0 = b.clone().requires_grad_()
    x1 = b.to(D).requires_grad_()
    for x in (x0, x1):
        w, v = torch.linalg.eigh(x)
        (w.sum() + (v.abs() ** 2 * torch.arange(4.0, device=x.device)).sum()).backward()
    torch.testing.assert_close(x1.grad.cpu(), x0.grad, atol=1e-4, rtol=1e-4)


def test_eigh_errors_as_cpu():
    for bad in (torch.randn(3, 4), torch.randn(3)):
        with pytest.raises(Exception) as cpu:
            torch.linalg.eigh(bad)
        with pytest.raises(type(cpu.value)):
            torch.linalg.eigh(bad.to(D))


# ---- QR

QR_SHAPES = [(3, 3), (5, 3), (3, 5), (1, 1), (2, 4, 3), (2, 3, 3, 5), (10, 10), (0, 3), (3, 0), (0, 2, 2)]


@pytest.mark.parametrize("shape", QR_SHAPES, ids=str)
def test_geqrf_matches_lapack(shape):
    a = randn(*shape)
    QR, tau = (t.cpu() for t in torch.geqrf(a.to(D)))
    QR0, tau0 = torch.geqrf(a)
    torch.testing.assert_close(QR, QR0, **F32)
    torch.testing.assert_close(tau, tau0, **F32)
    if shape[-2] >= shape[-1]:  # householder_product's Q from the reflectors
        got = torch.linalg.householder_product(QR.to(D), tau.to(D)).cpu()
        torch.testing.assert_close(got, torch.linalg.householder_product(QR0, tau0), **F32)


@pytest.mark.parametrize("shape", QR_SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_cpu(shape, mode):
    a = randn(*shape)
    Q, R = (t.cpu() for t in torch.linalg.qr(a.to(D), mode=mode))
    Q0, R0 = torch.linalg.qr(a, mode=mode)
    assert Q.shape == Q0.shape
    assert R.shape == R0.shape
    torch.testing.assert_close(R, R0, **F32)
    torch.testing.assert_close(Q, Q0, **F32)
    if mode != "r":
        torch.testing.assert_close(Q @ R, a, **F32)
        assert orth_err(Q) < 1e-5


def test_qr_large_noncontig_out():
    for n in (64, 256):
        a = randn(n, n, seed=n)
        Q, R = (t.cpu() for t in torch.linalg.qr(a.to(D)))
        torch.testing.assert_close(Q @ R, a, atol=1e-4, rtol=1e-4)
        assert orth_err(Q) < 1e-4
        torch.testing.assert_close(R, torch.linalg.qr(a)[1], atol=1e-3, rtol=1e-3)
    base = randn(2, 8, 10)
    a = base[:, 1::2, ::3]  # (2, 4, 4), strided
    Q, R = torch.linalg.qr(base.to(D)[:, 1::2, ::3])
    Q0, R0 = torch.linalg.qr(a)
    torch.testing.assert_close(Q.cpu(), Q0, **F32)
    torch.testing.assert_close(R.cpu(), R0, **F32)
    Qo, Ro = torch.zeros(2, 4, 8, device=D)[..., ::2], torch.empty(0, device=D)
    r = torch.linalg.qr(a.to(D), out=(Qo, Ro))
    assert r[0] is Qo
    assert r[1] is Ro
    torch.testing.assert_close(Qo.cpu(), Q0, **F32)
    torch.testing.assert_close(Ro.cpu(), R0, **F32)
    # torch.qr (some) and backward
    x0, x1 = a.clone().requires_grad_(), a.to(D).requires_grad_()
    for x in (x0, x1):
        q, r = torch.qr(x)
        (q.sum() + (r * r).sum()).backward()
    torch.testing.assert_close(x1.grad.cpu(), x0.grad, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_and_householder_product(left, transpose):
    a = randn(2, 5, 3)
    QR, tau = torch.geqrf(a)
    c = randn(2, 5, 4) if left else randn(2, 4, 5)
    expected = torch.ormqr(QR, tau, c, left=left, transpose=transpose)
    got = torch.ormqr(QR.to(D), tau.to(D), c.to(D), left=left, transpose=transpose)
    torch.testing.assert_close(got.cpu(), expected, **F32)
    out = torch.empty(0, device=D)
    torch.ormqr(QR.to(D), tau.to(D), c.to(D).mT.contiguous().mT, left=left, transpose=transpose, out=out)
    torch.testing.assert_close(out.cpu(), expected, **F32)
    torch.testing.assert_close(
        torch.linalg.householder_product(QR.to(D), tau[..., :2].to(D)).cpu(),
        torch.linalg.householder_product(QR, tau[..., :2]),
        **F32,
    )


def test_qr_errors_as_cpu():
    cases = [
        lambda d: torch.geqrf(torch.randn(3, device=d)),
        lambda d: torch.linalg.qr(torch.randn(3, 3, device=d), mode="bad"),
        lambda d: torch.linalg.householder_product(torch.randn(3, 4, device=d), torch.randn(2, device=d)),
        lambda d: torch.linalg.householder_product(torch.randn(4, 3, device=d), torch.randn(4, device=d)),
        lambda d: torch.ormqr(torch.randn(4, 3, device=d), torch.randn(3, device=d), torch.randn(3, 2, device=d)),
        lambda d: torch.ormqr(torch.randn(4, 3, device=d), torch.randn(3, device=d).int(), torch.randn(4, 2, device=d)),
    ]
    for f in cases:
        with pytest.raises(Exception) as cpu:
            f("cpu")
        with pytest.raises(type(cpu.value)):
            f(D)


# ---- matrix_exp


@pytest.mark.parametrize(
    "shape,scale", [((1, 1), 1.0), ((3, 3), 1.0), ((2, 4, 4), 3.0), ((5, 5), 20.0), ((64, 64), 0.3), ((0, 3, 3), 1.0)]
)
def test_matrix_exp_matches_cpu(shape, scale):
    a = randn(*shape) * scale
    r = torch.linalg.matrix_exp(a.to(D)).cpu()
    e = torch.linalg.matrix_exp(a)
    assert r.shape == e.shape
    big = e.abs().max().item() if e.numel() else 1.0
    torch.testing.assert_close(r, e, atol=1e-5 * big, rtol=1e-5)


def test_matrix_exp_noncontig_grad_errors():
    base = randn(2, 6, 6)
    a = base[:, ::2, 1::2].mT
    torch.testing.assert_close(
        torch.linalg.matrix_exp(base.to(D)[:, ::2, 1::2].mT).cpu(), torch.linalg.matrix_exp(a), **F32
    )
    x0, x1 = a.clone().requires_grad_(), a.to(D).requires_grad_()
    for x in (x0, x1):
        (torch.linalg.matrix_exp(x) * torch.arange(3.0, device=x.device)).sum().backward()
    torch.testing.assert_close(x1.grad.cpu(), x0.grad, atol=1e-4, rtol=1e-4)
    for bad in (torch.randn(3, 4), torch.randn(3)):
        with pytest.raises(Exception) as cpu:
            torch.linalg.matrix_exp(bad)
        with pytest.raises(type(cpu.value)):
            torch.linalg.matrix_exp(bad.to(D))
