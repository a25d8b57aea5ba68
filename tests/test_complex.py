# complex64 on the device (docs/design.md, "Dtype storage"): storage and copies bit-exact in every
# layout, the views (view_as_real/complex, .real/.imag, conj and neg bits), torch.complex/polar,
# item/print, conversions to and from every stored dtype as CPU casts, the complex rows of pointwise
# ops, sum/mean, matmul; complex128 and complex32 refused. Everything against CPU.
import subprocess
import sys
import warnings

import pytest
import torch
from webgpu_env import DEV, native_env

import torch_webgpu  # noqa: F401

C64 = torch.complex64
REAL = (
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
)


def special(n=64, seed=0):
    """Complex values with NaN/inf/-0/subnormal parts among random ones."""
    g = torch.Generator().manual_seed(seed)
    re = torch.randn(n, generator=g) * 3
    im = torch.randn(n, generator=g) * 3
    vals = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-40, -1e-45, 3.4e38, 1.0, -1.0]
    for i, v in enumerate(vals):
        re[i] = v
        im[len(vals) - 1 - i] = v
    return torch.complex(re, im)


def bits(t):
    t = t.cpu().resolve_conj().resolve_neg()
    return (torch.view_as_real(t) if t.is_complex() else t).contiguous().view(torch.int32)


def same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    assert torch.equal(bits(a), bits(b))


def test_roundtrip_bit_exact():
    x = special()
    same_bits(x.to(DEV).cpu(), x)
    y = x.reshape(8, 8)
    same_bits(y.to(DEV).t().contiguous().cpu(), y.t().contiguous())
    same_bits(y.to(DEV)[1::2, ::3].cpu(), y[1::2, ::3])
    # odd element offsets and strided destinations
    d = torch.zeros(8, 8, dtype=C64, device=DEV)
    d[:, 1::2] = y[:, :4]
    ref = torch.zeros(8, 8, dtype=C64)
    ref[:, 1::2] = y[:, :4]
    same_bits(d.cpu(), ref)
    same_bits(y.to(DEV)[3].clone().cpu(), y[3])


def test_device_to_device_and_raw_ops():
    x = special(60).reshape(3, 4, 5)
    xd = x.to(DEV)
    same_bits(xd.permute(2, 0, 1).contiguous().cpu(), x.permute(2, 0, 1).contiguous())
    same_bits(torch.cat([xd, xd[:, :2]], 1).cpu(), torch.cat([x, x[:, :2]], 1))
    same_bits(torch.stack([xd, xd], 0).cpu(), torch.stack([x, x], 0))
    same_bits(xd.flip(0, 2).cpu(), x.flip(0, 2))
    idx = torch.tensor([2, 0, 1, 1])
    same_bits(xd[idx.to(DEV)].cpu(), x[idx])
    same_bits(xd.index_select(1, idx.to(DEV)).cpu(), x.index_select(1, idx))
    gi = torch.randint(0, 5, (3, 4, 7))
    same_bits(torch.gather(xd, 2, gi.to(DEV)).cpu(), torch.gather(x, 2, gi))
    m = torch.rand(3, 4, 5) > 0.5
    same_bits(torch.where(m.to(DEV), xd, xd.flip(0)).cpu(), torch.where(m, x, x.flip(0)))
    same_bits(xd.roll(2, 1).cpu(), x.roll(2, 1))
    v = torch.tensor(1.5 - 2j, dtype=C64)
    same_bits(xd.masked_fill(m.to(DEV), v).cpu(), x.masked_fill(m, v))
    f = torch.empty(4, 3, dtype=C64, device=DEV).fill_(2 - 3j)
    same_bits(f.cpu(), torch.full((4, 3), 2 - 3j, dtype=C64))
    z = xd.clone().zero_()
    same_bits(z.cpu(), torch.zeros_like(x))


def test_views_real_imag():
    x = special(12).reshape(3, 4)
    xd = x.to(DEV)
    same_bits(torch.view_as_real(xd).cpu(), torch.view_as_real(x))
    r = torch.randn(3, 4, 2)
    same_bits(torch.view_as_complex(r.to(DEV)).cpu(), torch.view_as_complex(r))
    assert torch.equal(xd.real.cpu(), x.real, equal_nan=True) if False else True
    torch.testing.assert_close(xd.real.cpu(), x.real, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(xd.imag.cpu(), x.imag, equal_nan=True, rtol=0, atol=0)
    # writes through the views reach the complex tensor
    xd.real[0] = 7.0
    xd.imag[:, 1] = -5.0
    x.real[0] = 7.0
    x.imag[:, 1] = -5.0
    same_bits(xd.cpu(), x)
    # view_as_real of a transposed tensor, and its errors
    same_bits(torch.view_as_real(xd.t()).cpu(), torch.view_as_real(x.t()))
    with pytest.raises(RuntimeError):
        torch.view_as_complex(torch.randn(3, 3, device=DEV))
    with pytest.raises(RuntimeError):
        torch.view_as_real(xd.conj())


def test_conj_and_neg_bits():
    x = special(20).reshape(4, 5)
    xd = x.to(DEV)
    c = xd.conj()
    assert c.is_conj()
    same_bits(c.cpu(), x.conj())
    same_bits(c.resolve_conj().cpu(), x.conj().resolve_conj())
    same_bits(torch.conj_physical(xd).cpu(), torch.conj_physical(x))
    y = xd.clone()
    y.conj_physical_()
    same_bits(y.cpu(), torch.conj_physical(x))
    # imag of a conjugate is a negative view
    im = c.imag
    assert im.is_neg()
    torch.testing.assert_close(im.cpu().resolve_neg(), x.conj().imag.resolve_neg(), equal_nan=True, rtol=0, atol=0)
    # copies into a conjugate view, and conversions of conjugates
    d = torch.zeros(4, 5, dtype=C64, device=DEV)
    d.conj().copy_(xd)
    same_bits(d.cpu(), x.conj().resolve_conj())
    dc = torch.zeros(4, 5, dtype=C64, device=DEV).conj()
    dc.copy_(x)  # host -> conjugate device view
    same_bits(dc.resolve_conj().cpu(), x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.testing.assert_close(c.to(torch.float32).cpu(), x.conj().to(torch.float32), equal_nan=True)


def test_complex_polar_item_print():
    re, im = torch.randn(3, 1), torch.randn(1, 4)
    same_bits(torch.complex(re.to(DEV), im.to(DEV)).cpu(), torch.complex(re, im))
    out = torch.empty(0, dtype=C64, device=DEV)
    torch.complex(re.to(DEV), im.to(DEV), out=out)
    same_bits(out.cpu(), torch.complex(re, im))
    with pytest.raises(RuntimeError):
        torch.complex(re.to(DEV), im.to(DEV).to(torch.int32))
    a, t = torch.rand(5, 3), torch.randn(5, 3) * 4
    torch.testing.assert_close(torch.polar(a.to(DEV), t.to(DEV)).cpu(), torch.polar(a, t), rtol=2e-6, atol=1e-6)
    z = torch.tensor([1.5 - 2.25j], dtype=C64)
    assert z.to(DEV).item() == z.item()
    assert isinstance(z.to(DEV)[0].item(), complex)
    s = str(special(12)[:6].to(DEV))
    assert "webgpu" in s and "j" in s


@pytest.mark.parametrize("dt", REAL, ids=str)
def test_real_to_complex(dt):
    if dt.is_floating_point:
        x = (torch.randn(40) * 100).to(dt)
        x[:4] = torch.tensor([float("nan"), float("inf"), -0.0, 1e-40]).to(dt)
    elif dt == torch.bool:
        x = torch.rand(40) > 0.5
    else:
        info = torch.iinfo(dt)
        x = torch.randint(info.min, info.max, (40,), dtype=torch.int64).to(dt)
        x[0], x[1] = info.min, info.max
    same_bits(x.to(DEV).to(C64).cpu(), x.to(C64))
    same_bits(x.to(DEV)[::2].to(C64).cpu(), x[::2].to(C64))  # strided source


@pytest.mark.parametrize("dt", REAL, ids=str)
def test_complex_to_real(dt):
    z = torch.complex(torch.randn(40) * 60, torch.randn(40))
    z[:6] = torch.tensor([0j, complex(0, 1), complex(-0.0, 0), complex(float("nan"), 0), 1e-40 + 0j, 0 - 1e-44j])
    if not dt.is_floating_point and dt != torch.bool:
        info = torch.iinfo(dt)
        z.real.clamp_(max(info.min, -1e6), min(info.max, 1e6))  # CPU's out-of-range casts are undefined
        z[3] = 1 + 0j
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU's warning comes once per process: test_complex_to_real_warns
        got = z.to(DEV).to(dt).cpu()
        ref = z.to(dt)
    if dt.is_floating_point:
        torch.testing.assert_close(got, ref, equal_nan=True, rtol=0, atol=0)
    else:
        assert torch.equal(got, ref), (got, ref)


def test_complex_to_real_warns():
    code = (
        "import warnings, torch, torch_webgpu\n"
        "z = torch.ones(3, dtype=torch.complex64, device='webgpu')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    z.to(torch.float32); z.to(torch.int32)\n"
        "print(sum('discards the imaginary part' in str(x.message) for x in w))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=native_env(), timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "1", out.stderr


def test_refused_complex_dtypes():
    for dt in (torch.complex128, torch.complex32):
        with pytest.raises(TypeError, match="complex64 is supported"):
            torch.zeros(3, dtype=dt, device=DEV)
        with pytest.raises(TypeError, match="complex64 is supported"):
            torch.zeros(3, dtype=dt).to(DEV)


def _cplx(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(*shape, generator=g), torch.randn(*shape, generator=g))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary(op):
    a, b = _cplx(4, 5), _cplx(5, seed=1)
    f = getattr(torch, op)
    torch.testing.assert_close(f(a.to(DEV), b.to(DEV)).cpu(), f(a, b))
    # non-contiguous, real operand, Python scalars, out= and in-place
    torch.testing.assert_close(f(a.to(DEV).t(), b.to(DEV)[:4]).cpu(), f(a.t(), b[:4]))
    r = torch.randn(4, 5)
    torch.testing.assert_close(f(a.to(DEV), r.to(DEV)).cpu(), f(a, r))
    torch.testing.assert_close(f(r.to(DEV), a.to(DEV)).cpu(), f(r, a))
    for s in (2.5, 3, 1.5 - 0.5j):
        torch.testing.assert_close(f(a.to(DEV), s).cpu(), f(a, s))
    out = torch.empty(4, 5, dtype=C64, device=DEV)
    f(a.to(DEV), b.to(DEV), out=out)
    torch.testing.assert_close(out.cpu(), f(a, b))
    x = a.to(DEV)
    getattr(x, op + "_")(b.to(DEV))
    torch.testing.assert_close(x.cpu(), f(a, b))


def test_add_alpha_and_division_edge_cases():
    a, b = _cplx(30), _cplx(30, seed=2)
    torch.testing.assert_close(torch.add(a.to(DEV), b.to(DEV), alpha=2 - 1j).cpu(), torch.add(a, b, alpha=2 - 1j))
    torch.testing.assert_close(torch.sub(a.to(DEV), b.to(DEV), alpha=0.5).cpu(), torch.sub(a, b, alpha=0.5))
    b[:3] = torch.tensor([0j, 1e-30 + 1e30j, 1e30 + 1e-30j])
    torch.testing.assert_close((a.to(DEV) / b.to(DEV)).cpu(), a / b, equal_nan=True)


def test_unary_and_compare():
    a = _cplx(6, 7)
    ad = a.to(DEV)
    torch.testing.assert_close((-ad).cpu(), -a)
    torch.testing.assert_close(torch.exp(ad).cpu(), torch.exp(a), rtol=3e-6, atol=1e-6)
    torch.testing.assert_close(ad.abs().cpu(), a.abs())
    assert ad.abs().dtype == torch.float32
    torch.testing.assert_close(ad.angle().cpu(), a.angle())
    torch.testing.assert_close(torch.reciprocal(ad).cpu(), torch.reciprocal(a))
    torch.testing.assert_close((ad.conj() * ad).cpu(), a.conj() * a)
    b = a.clone()
    b[::2] = 0
    assert torch.equal((ad == b.to(DEV)).cpu(), a == b)
    assert torch.equal((ad != b.to(DEV)).cpu(), a != b)
    assert torch.equal((ad == a[0, 0].item()).cpu(), a == a[0, 0].item())


def test_special_values_grid():
    """Every pair of special parts (NaN, +-inf, -0, huge, 1, 0.5): NaN positions and values as CPU."""
    v = [float("nan"), float("inf"), -float("inf"), 1.0, -0.0, 3e38, 0.5]
    z = torch.complex(torch.tensor([a for a in v for b in v]), torch.tensor([b for a in v for b in v]))
    a, b = z.repeat(len(z)), z.repeat_interleave(len(z))
    ad, bd = a.to(DEV), b.to(DEV)
    for f in (torch.add, torch.sub):
        torch.testing.assert_close(f(ad, bd).cpu(), f(a, b), equal_nan=True)
    # A product's part, a*c - b*d or a*d + b*c: an adapter may fuse it into one fma (NVIDIA's driver
    # does, as nvcc does for CUDA's complex product), keeping one of the two products unrounded, so
    # huge * huge + inf is inf where CPU's two rounded products give inf - inf = NaN. Each part must
    # be CPU's value or one of the two fused ones.
    got = torch.mul(ad, bd).cpu()
    w = [t.double() for t in (a.real, a.imag, b.real, b.imag)]

    def forms(p, q):  # p + q with both products rounded (CPU), or either one kept exact
        r = lambda t: t.float().double()  # noqa: E731
        return [(r(p) + r(q)).float(), (p + r(q)).float(), (r(p) + q).float()]

    for part, cands in ((got.real, forms(w[0] * w[2], -(w[1] * w[3]))), (got.imag, forms(w[0] * w[3], w[1] * w[2]))):
        ok = torch.zeros_like(part, dtype=torch.bool)
        for c in cands:
            ok |= torch.isclose(part, c, equal_nan=True)
        assert bool(ok.all()), (part[~ok], [c[~ok] for c in cands])
    cpu = torch.mul(a, b)
    torch.testing.assert_close(forms(w[0] * w[2], -(w[1] * w[3]))[0], cpu.real, equal_nan=True)
    torch.testing.assert_close(forms(w[0] * w[3], w[1] * w[2])[0], cpu.imag, equal_nan=True)
    torch.testing.assert_close(torch.exp(z.to(DEV)).cpu(), torch.exp(z), equal_nan=True, rtol=3e-6, atol=0)
    nz = z[z != 0]  # 1 / 0: WGSL's 0 / 0 is not NaN on every driver (lavapipe gives 0)
    torch.testing.assert_close(torch.reciprocal(nz.to(DEV)).cpu(), torch.reciprocal(nz), equal_nan=True)
    torch.testing.assert_close((2 - z.to(DEV)).cpu(), 2 - z, equal_nan=True)


def test_silu():
    # x / (1 + e^-x) in complex arithmetic, as CPU: random values and the special-value grid
    F = torch.nn.functional
    a = _cplx(1000) * 5
    torch.testing.assert_close(F.silu(a.to(DEV)).cpu(), F.silu(a), rtol=2e-6, atol=1e-6)
    v = [float("nan"), float("inf"), -float("inf"), 1.0, -0.0, 3e38, 0.5, -100.0]
    z = torch.complex(torch.tensor([a for a in v for b in v]), torch.tensor([b for a in v for b in v]))
    torch.testing.assert_close(F.silu(z.to(DEV)).cpu(), F.silu(z), equal_nan=True, rtol=2e-6, atol=1e-6)
    out = torch.empty(0, dtype=torch.complex64, device=DEV)
    torch.ops.aten.silu.out(a.to(DEV), out=out)
    torch.testing.assert_close(out.cpu(), F.silu(a), rtol=2e-6, atol=1e-6)


def test_sum_mean():
    a = _cplx(5, 6, 7)
    ad = a.to(DEV)
    torch.testing.assert_close(ad.sum().cpu(), a.sum(), rtol=1e-5, atol=1e-5)
    for dims in ((0,), (1, 2), (-1,)):
        torch.testing.assert_close(ad.sum(dims).cpu(), a.sum(dims), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(ad.mean(dims, keepdim=True).cpu(), a.mean(dims, keepdim=True))
    torch.testing.assert_close(ad.permute(2, 0, 1).sum(1).cpu(), a.permute(2, 0, 1).sum(1), rtol=1e-5, atol=1e-5)


def test_matmul():
    a, b = _cplx(7, 5), _cplx(5, 3, seed=1)
    torch.testing.assert_close((a.to(DEV) @ b.to(DEV)).cpu(), a @ b, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.mm(a.to(DEV).conj(), b.to(DEV)).cpu(), a.conj() @ b, rtol=1e-5, atol=1e-5)
    A, B = _cplx(2, 4, 6), _cplx(2, 6, 3, seed=3)
    torch.testing.assert_close(torch.bmm(A.to(DEV), B.to(DEV)).cpu(), torch.bmm(A, B), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(
        (A.to(DEV).transpose(1, 2) @ A.to(DEV)).cpu(), A.transpose(1, 2) @ A, rtol=1e-5, atol=1e-5
    )


def test_dot_vdot_nonzero():
    a, b = _cplx(9), _cplx(9, seed=4)
    torch.testing.assert_close(torch.dot(a.to(DEV), b.to(DEV)).cpu(), torch.dot(a, b), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.vdot(a.to(DEV), b.to(DEV)).cpu(), torch.vdot(a, b), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(
        torch.vdot(a.to(DEV).conj(), b.to(DEV)).cpu(), torch.vdot(a.conj(), b), rtol=1e-5, atol=1e-5
    )
    z = torch.tensor([0j, 1j, -0.0 + 0j, 2 + 0j, complex(float("nan"), 0), 1e-40 + 0j], dtype=C64)
    assert torch.equal(z.to(DEV).nonzero().cpu(), z.nonzero())
    assert torch.equal(z.to(DEV).to(torch.bool).cpu(), z.to(torch.bool))


def test_unsupported_op_is_a_clear_error():
    a = _cplx(4).to(DEV)
    with pytest.raises(NotImplementedError, match="complex64"):
        torch.sin(a)
    with pytest.raises(NotImplementedError, match="complex64"):
        torch.log(a)


def test_autograd_through_complex():
    a = _cplx(4, 3).requires_grad_()
    ad = a.detach().to(DEV).requires_grad_()
    (a * a.conj()).real.sum().backward()
    (ad * ad.conj()).real.sum().backward()
    torch.testing.assert_close(ad.grad.cpu(), a.grad)
