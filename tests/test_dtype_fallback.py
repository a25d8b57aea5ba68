"""Ops whose webgpu kernels have no way for a float64 or complex64 operand: with the CPU fallback on
(the default) they run on the CPU and give CPU's results, as an operator with no webgpu kernel at all
does (ops/register.h, the guarded registrations; ops/float64.h, the stub guard); with it off they raise
NotImplementedError naming the op. Each case is compared with CPU's own result."""

import warnings

import pytest
import torch
from webgpu_env import DEV

import torch_webgpu  # noqa: F401
from torch_webgpu.fallback import fallback_counts, fallback_enabled, reset_fallback_counts

C64, F64 = torch.complex64, torch.float64


def _c(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(*shape, generator=g), torch.randn(*shape, generator=g))


def _mat(n=4, seed=0, dtype=C64):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(2, n, n, generator=g, dtype=F64) + n * torch.eye(n, dtype=F64)
    if dtype == C64:
        a = torch.complex(a, torch.randn(2, n, n, generator=g, dtype=F64) * 0.3).to(C64)
    return a.to(dtype)


def _cases():
    x, m = _c(5, 6), _mat()
    xf, mf = torch.randn(5, 6, dtype=F64), _mat(dtype=F64)
    logp = torch.randn(7, 2, 5, dtype=F64).log_softmax(2)
    return [
        # complex64: pointwise (stubs), reductions and ops registered directly
        ("sin c64", lambda t: t.sin(), x, 1e-5),
        ("tanh c64", lambda t: torch.tanh(t), x, 1e-5),
        ("sin_ c64", lambda t: t.clone().sin_(), x, 1e-5),
        ("sin out c64", lambda t: torch.sin(t, out=torch.empty_like(t)), x, 1e-5),
        ("asinh strided c64", lambda t: t.t().asinh(), x, 1e-5),
        ("prod c64", lambda t: t.prod(1), x, 1e-4),
        ("logsumexp c64", lambda t: torch.logsumexp(t, 1), x, 1e-5),
        ("logcumsumexp c64", lambda t: torch.logcumsumexp(t, 0), x, 1e-5),
        ("vector_norm c64", lambda t: torch.linalg.vector_norm(t, 3, 1), x, 1e-5),
        ("det c64", torch.linalg.det, m, 1e-4),
        (
            "slogdet c64",
            lambda t: torch.stack(torch.linalg.slogdet(t)[:1] + (torch.linalg.slogdet(t)[1].to(C64),)),
            m,
            1e-4,
        ),
        ("inv c64", torch.linalg.inv, m, 1e-4),
        ("svdvals c64", torch.linalg.svdvals, m, 1e-4),
        ("cholesky c64", lambda t: torch.linalg.cholesky(t @ t.mH), m, 1e-4),
        ("matrix_exp c64", torch.linalg.matrix_exp, m * 0.1, 1e-4),
        ("renorm c64", lambda t: torch.renorm(t, 2, 0, 1.0), x, 1e-5),
        ("scatter_add c64", lambda t: t.scatter_add(0, (torch.arange(6) % 5).view(1, 6).to(t.device), t[:1]), x, 1e-5),
        ("unfold c64", lambda t: torch.nn.functional.unfold(t.view(1, 1, 5, 6), 2), x, 0),
        ("matrix_power c64", lambda t: torch.linalg.matrix_power(t, 0), m, 0),
        # factories (registered as plain function pointers)
        ("linspace c64", lambda t: torch.linspace(0, 1 + 2j, 5, device=t.device), x, 1e-6),
        ("eye c64", lambda t: torch.eye(3, 4, dtype=C64, device=t.device), x, 0),
        # float64: ops registered directly whose kernels are float32/half only
        ("logcumsumexp f64", lambda t: t.logcumsumexp(1), xf, 1e-12),
        ("matrix_exp f64", torch.linalg.matrix_exp, mf * 0.1, 1e-12),
        (
            "nll_loss f64",
            lambda t: torch.nn.functional.nll_loss(t, (torch.arange(5) % 6).to(t.device)),
            xf.log_softmax(1),
            1e-12,
        ),
        (
            "multi_margin_loss f64",
            lambda t: torch.nn.functional.multi_margin_loss(t, (torch.arange(5) % 6).to(t.device)),
            xf,
            1e-12,
        ),
        (
            "ctc_loss f64",
            lambda t: torch.nn.functional.ctc_loss(t, torch.tensor([[1, 2], [3, 3]]).to(t.device), [7, 6], [2, 2]),
            logp,
            1e-10,
        ),
        ("histc f64", lambda t: torch.histc(t, 5, -1, 1), xf, 0),
        # convolution_overrideable, which CPU does not have: the kernel runs CPU's at::convolution itself
        (
            "conv2d f64",
            lambda t: torch.nn.functional.conv2d(
                t.view(1, 2, 3, 5), t.view(3, 2, 5)[:, :, :3].reshape(2, 1, 3, 3), groups=2
            ),
            xf,
            1e-12,
        ),
        (
            "conv_transpose1d f64",
            lambda t: torch.nn.functional.conv_transpose1d(
                t.view(1, 5, 6), t[:, :4].reshape(5, 2, 2), t[0, :2], stride=2
            ),
            xf,
            1e-12,
        ),
        (
            "interpolate antialias f64",
            lambda t: torch.nn.functional.interpolate(t.view(1, 1, 5, 6), size=(3, 4), mode="bicubic", antialias=True),
            xf,
            1e-12,
        ),
        (
            "segment_reduce f64",
            lambda t: torch.segment_reduce(t.view(-1), "max", lengths=torch.tensor([4, 0, 26]).to(t.device)),
            xf,
            0,
        ),
        ("histogram f64", lambda t: torch.histogram(t.view(-1), 4, weight=t.view(-1).abs())[0], xf, 1e-12),
        ("histogramdd f64", lambda t: torch.histogramdd(t.view(15, 2), [3, 2])[0], xf, 0),
        # a stub whose CPU kernel keeps the integer exponent (its CPU iterator does not promote)
        ("ldexp f64", lambda t: torch.ldexp(t, (torch.arange(6) * 300 - 900).to(t.device)), xf, 0),
        (
            "bincount int8 weights",
            lambda t: torch.bincount(torch.tensor([0, 2, 2, 5]).to(t.device), t),
            torch.tensor([1, -2, 3, 4], dtype=torch.int8),
            0,
        ),
    ]


@pytest.mark.parametrize("name,f,x,tol", _cases(), ids=[c[0] for c in _cases()])
def test_runs_on_the_cpu_as_cpu(name, f, x, tol):
    want = f(x)
    reset_fallback_counts()
    with fallback_enabled(True), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = f(x.to(DEV))
    assert got.device.type == DEV
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want, rtol=tol, atol=tol)
    assert sum(fallback_counts().values()) >= 1, "not through the fallback"
    assert any("runs on the CPU" in str(m.message) for m in w)
    # with the fallback off, the kernel's own refusal reaches the caller
    with fallback_enabled(False), pytest.raises(NotImplementedError):
        f(x.to(DEV))


def test_gradient_through_the_fallback():
    # autograd sits above the fallback: sin's backward (cos, conj, mul) also on complex64
    x = _c(4, 3, seed=2)
    a = x.clone().requires_grad_()
    d = x.to(DEV).requires_grad_()
    with fallback_enabled(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (d.sin().abs() ** 2).sum().backward()
    (a.sin().abs() ** 2).sum().backward()
    torch.testing.assert_close(d.grad.cpu(), a.grad, rtol=1e-5, atol=1e-5)


def test_float64_convolution_gradients():
    # convolution_backward_overrideable: CPU's at::convolution_backward on copies, every output of the mask
    g = torch.Generator().manual_seed(3)
    x, w, b = (torch.randn(*s, dtype=F64, generator=g) for s in ((2, 4, 7, 6), (6, 2, 3, 3), (6,)))
    want = [t.clone().requires_grad_() for t in (x, w, b)]
    got = [t.to(DEV).requires_grad_() for t in (x, w, b)]
    with fallback_enabled(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ts in (want, got):
            torch.nn.functional.conv2d(*ts, stride=(2, 1), padding=1, groups=2).square().sum().backward()
    for a, e in zip(got, want):
        torch.testing.assert_close(a.grad.cpu(), e.grad, rtol=1e-12, atol=1e-12)
        assert a.grad.dtype == F64 and a.grad.device.type == DEV


def test_float64_complex64_conversions_are_native():
    # CPU's casts: the real part converts, the imaginary part is zero (or dropped, with CPU's warning)
    x = torch.tensor([1.5, -2.25, 1e300, float("nan"), 3e-40], dtype=F64)
    z = _c(5, seed=4)
    reset_fallback_counts()

    def same(a, b):
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)

    with fallback_enabled(False):
        same(x.to(DEV).to(C64).cpu(), x.to(C64))
        same(x.to(DEV).cfloat()[1:].cpu(), x.cfloat()[1:])
        same(x.to(DEV)[::2].to(C64).conj().resolve_conj().cpu(), x[::2].to(C64).conj().resolve_conj())
        with warnings.catch_warnings():  # (CPU's "discards the imaginary part", warned once per process)
            warnings.simplefilter("ignore")
            got = z.to(DEV).to(F64).cpu()
        same(got, z.real.to(F64))
        out = torch.zeros(5, dtype=C64, device=DEV)
        out.copy_(x.to(DEV).view(5, 1).expand(5, 1)[:, 0])
        same(out.cpu(), x.to(C64))
        # (through the fallback before: the float64 operand's conversion had no kernel)
        assert torch.equal(torch.logical_and(z.to(DEV), x.to(DEV)).cpu(), torch.logical_and(z, x))
    assert sum(fallback_counts().values()) == 0


def test_other_refusals_are_not_hidden():
    # a float16 ctc_loss has no kernel here and none on CPU: CPU's own error, fallback on or off
    logp = torch.randn(7, 2, 5).log_softmax(2).half()
    with fallback_enabled(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((NotImplementedError, RuntimeError)):
            torch.nn.functional.ctc_loss(logp.to(DEV), torch.tensor([[1, 2], [3, 3]]).to(DEV), [7, 6], [2, 2])


def test_embedding_bag_float64_gradients_keep_float64():
    # the backward kernels accumulated in float32 whatever the dtype: a float64 gradient lost digits
    g = torch.Generator().manual_seed(5)
    w = torch.randn(10, 5, dtype=F64, generator=g)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 3])
    psw = torch.rand(8, dtype=F64, generator=g)
    for mode, weights in (("sum", psw), ("mean", None), ("sum", None)):
        a = w.clone().requires_grad_()
        pa = None if weights is None else weights.clone().requires_grad_()
        torch.nn.functional.embedding_bag(idx, a, off, mode=mode, per_sample_weights=pa).pow(2).sum().backward()
        d = w.to(DEV).requires_grad_()
        pd = None if weights is None else weights.to(DEV).requires_grad_()
        with fallback_enabled(True), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = torch.nn.functional.embedding_bag(idx.to(DEV), d, off.to(DEV), mode=mode, per_sample_weights=pd)
            out.pow(2).sum().backward()
        torch.testing.assert_close(d.grad.cpu(), a.grad, rtol=1e-12, atol=1e-12)
        if weights is not None:
            torch.testing.assert_close(pd.grad.cpu(), pa.grad, rtol=1e-12, atol=1e-12)
