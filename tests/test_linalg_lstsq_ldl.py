# ldl_factor(_ex) / ldl_solve (csrc/ops/linalg_ldl.cpp) against CPU with the CPU fallback off: OpInfo's
# float32 samples, then hand cases: Bunch-Kaufman pivots and LD equal to CPU's (1x1 and 2x2 blocks,
# singular info), solves, out=, bad input errors.
import os

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")

import pytest  # noqa: E402
import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

import torch_webgpu  # noqa: E402,F401

DEV = "webgpu"
g = torch.Generator().manual_seed(0)
TOL = dict(rtol=1e-3, atol=1e-3)

ENTRIES = [
    "linalg.lstsq",
    "linalg.lstsq.grad_oriented",
    "linalg.ldl_factor",
    "linalg.ldl_factor_ex",
    "linalg.ldl_solve",
]
OPS = {(o.name + ("." + o.variant_test_name if o.variant_test_name else "")): o for o in op_db}


def to_dev(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to(DEV).requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(to_dev(y) for y in x)
    if isinstance(x, dict):
        return {k: to_dev(v) for k, v in x.items()}
    return x


def flat(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for y in x for t in flat(y)]
    return []


def assert_same(d, c, tol=TOL):
    d, c = flat(d), flat(c)
    assert len(d) == len(c)
    for a, b in zip(d, c):
        assert a.device.type == DEV
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        torch.testing.assert_close(a.cpu(), b, equal_nan=True, **tol)


@pytest.mark.parametrize("name", ENTRIES)
def test_opinfo_samples(name):
    op = OPS[name]
    n = 0
    for s in op.sample_inputs("cpu", torch.float32, requires_grad=op.supports_autograd):
        c = op(s.input, *s.args, **s.kwargs)
        di, da, dk = to_dev(s.input), to_dev(s.args), to_dev(s.kwargs)
        d = op(di, *da, **dk)
        assert_same(d, c)
        if op.supports_autograd and n < 6:
            ins_c = [t for t in flat([s.input, s.args, s.kwargs]) if t.requires_grad]
            ins_d = [t for t in flat([di, da, dk]) if t.requires_grad]
            outs_c = [t for t in flat(c) if t.requires_grad]
            outs_d = [t for t in flat(d) if t.requires_grad]
            if ins_c and outs_c:
                ws = [torch.randn(t.shape, generator=g) for t in outs_c]
                gc = torch.autograd.grad(outs_c, ins_c, ws, allow_unused=True)
                gd = torch.autograd.grad(outs_d, ins_d, [w.to(DEV) for w in ws], allow_unused=True)
                for a, b in zip(gd, gc):
                    if b is not None:
                        torch.testing.assert_close(a.cpu(), b, rtol=1e-2, atol=1e-2, equal_nan=True)
        n += 1
    assert n > 0


def rnd(*shape):
    return torch.randn(*shape, generator=g)


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
