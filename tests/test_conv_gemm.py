"""The GEMM form of forward convolutions (ops/conv.cpp cols_gemm: the input's columns, then one
batched GEMM; on adapters with f16 subgroup matrices it is float16's default path and runs on the
matrix units). TORCH_WEBGPU_CONV_GEMM=1 takes it on any adapter, so lavapipe checks the columns,
the layout, bias and the batch chunks against CPU; =0 keeps the direct kernel."""

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

CASES = [
    # (input shape, weight shape, kwargs)
    ((2, 3, 8, 10), (5, 3, 3, 3), dict(padding=1)),
    ((1, 4, 9, 8), (6, 4, 3, 2), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2))),
    ((3, 2, 12), (4, 2, 5), dict(stride=1, padding=2)),  # 1-d
    ((1, 2, 4, 6, 6), (3, 2, 3, 3, 3), dict(padding=1)),  # 3-d
    ((2, 16, 6, 6), (32, 16, 1, 1), dict()),  # 1x1
]


@pytest.fixture
def conv_gemm(monkeypatch):
    monkeypatch.setenv("TORCH_WEBGPU_CONV_GEMM", "1")
    monkeypatch.setenv("TORCH_WEBGPU_CONV_POINTWISE", "0")  # the 1x1 case takes the columns too


def conv(x, w, b, kw):
    return {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[x.dim()](x, w, b, **kw)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("bias", [True, False])
def test_cols_gemm_matches_cpu(conv_gemm, case, dtype, bias):
    xs, ws, kw = CASES[case]
    g = torch.Generator().manual_seed(case)
    x = torch.randn(xs, generator=g).to(dtype)
    w = (torch.randn(ws, generator=g) * 0.3).to(dtype)
    b = torch.randn(ws[0], generator=g).to(dtype) if bias else None
    want = conv(x.float(), w.float(), None if b is None else b.float(), kw)
    got = conv(x.to(DEV), w.to(DEV), None if b is None else b.to(DEV), kw)
    assert got.dtype == dtype and got.shape == want.shape
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(got.cpu().float(), want, **tol)
    if got.shape[2:].numel() % 2 == 0:  # the GEMM form ran (it needs an even number of output positions)
        assert any(k.startswith("conv:cols") for k in torch_webgpu._C._pipeline_keys(-1))


def test_cols_gemm_odd_positions_and_groups_take_the_direct_kernel(conv_gemm):
    # 7x7 outputs (odd) and groups=2 cannot use the word-wise columns: the direct kernel serves them.
    x = torch.randn(1, 4, 7, 7)
    w = torch.randn(6, 2, 3, 3)
    want = F.conv2d(x, w, padding=1, groups=2)
    got = F.conv2d(x.to(DEV), w.to(DEV), padding=1, groups=2)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)


def test_cols_gemm_noncontiguous_input_and_backward(conv_gemm):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 8, 6, 3, generator=g).permute(0, 3, 1, 2)  # [2, 3, 8, 6], channels-last storage
    w = torch.randn(4, 3, 3, 3, generator=g, requires_grad=True)
    xd = x.to(DEV).requires_grad_()
    wd = w.detach().to(DEV).requires_grad_()
    xc = x.clone().requires_grad_()
    F.conv2d(xc, w, padding=1).square().sum().backward()
    F.conv2d(xd, wd, padding=1).square().sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(wd.grad.cpu(), w.grad, rtol=1e-4, atol=1e-3)


def test_cols_gemm_splits_large_batches(conv_gemm):
    # 40 channels x 9 taps x 128^2 positions x 4 bytes = 23.6 MiB of columns per image: 12 images
    # take several chunks (256 MiB, or the adapter's largest binding: 128 MiB on lavapipe).
    g = torch.Generator().manual_seed(4)
    x = torch.randn(12, 40, 128, 128, generator=g)
    w = torch.randn(8, 40, 3, 3, generator=g) * 0.1
    want = F.conv2d(x, w, padding=1)
    got = F.conv2d(x.to(DEV), w.to(DEV), padding=1)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-3)


def test_env_zero_keeps_the_direct_kernel(monkeypatch):
    monkeypatch.setenv("TORCH_WEBGPU_CONV_GEMM", "0")
    x = torch.randn(1, 3, 6, 6)
    w = torch.randn(4, 3, 3, 3)
    before = set(torch_webgpu._C._pipeline_keys(-1))
    got = F.conv2d(x.to(DEV), w.to(DEV), padding=1)
    torch.testing.assert_close(got.cpu(), F.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4)
    new = set(torch_webgpu._C._pipeline_keys(-1)) - before
    assert not any(k.startswith("conv:cols") for k in new)


# ---- 1x1 convolutions (unit stride, no padding, one group) as plain batched GEMMs -----------------

POINTWISE = [
    # (input shape, weight shape, transposed)
    ((2, 16, 6, 6), (32, 16, 1, 1), False),
    ((3, 5, 7), (4, 5, 1), False),  # 1-d
    ((2, 3, 2, 3, 4), (6, 3, 1, 1, 1), False),  # 3-d
    ((2, 1, 4, 5), (1, 1, 1, 1), False),  # one output channel: the mat-vec kernel
    ((2, 6, 5, 4), (6, 3, 1, 1), True),  # transposed: weight [Ci, Co, 1, 1]
    ((1, 1, 3, 4, 5), (1, 1, 1, 1, 1), True),
]


def _pointwise_fn(nd, transposed):
    """F.conv{nd}d or F.conv_transpose{nd}d."""
    return (
        {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
        if transposed
        else {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    )[nd]


def _dispatched(fn):
    """fn's result and the kernels it dispatched (None where the adapter has no timestamps)."""
    if "timestamp-query" not in torch_webgpu.info()["features"]:
        return fn(), None
    torch.webgpu.synchronize()
    torch_webgpu._C._take_kernel_times()
    torch_webgpu._C._kernel_timing(True)
    try:
        r = fn()
        torch.webgpu.synchronize()
    finally:
        torch_webgpu._C._kernel_timing(False)
    return r, [k for k, _ in torch_webgpu._C._take_kernel_times()]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", range(len(POINTWISE)))
@pytest.mark.parametrize("bias", [True, False])
def test_pointwise_convolutions_are_plain_gemms(case, dtype, bias):
    xs, ws, transposed = POINTWISE[case]
    g = torch.Generator().manual_seed(case)
    x, w = torch.randn(xs, generator=g).to(dtype), torch.randn(ws, generator=g).to(dtype)
    co = ws[1] if transposed else ws[0]
    b = torch.randn(co, generator=g).to(dtype) if bias else None
    f = _pointwise_fn(len(xs) - 2, transposed)
    want = f(x.float(), w.float(), None if b is None else b.float())
    got, kernels = _dispatched(lambda: f(x.to(DEV), w.to(DEV), None if b is None else b.to(DEV)))
    assert got.dtype == dtype and got.shape == want.shape
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    torch.testing.assert_close(got.cpu().float(), want, rtol=tol, atol=tol)
    if kernels is not None:  # a plain GEMM or mat-vec: no gathered operand, no columns
        assert not any(":gb:" in k or ":ga:" in k or k.startswith("conv:") for k in kernels), kernels


def test_pointwise_convolution_layouts_and_backward():
    g = torch.Generator().manual_seed(3)
    w = torch.randn(8, 6, 1, 1, generator=g)
    for x in (
        torch.randn(2, 6, 5, 7, generator=g).contiguous(memory_format=torch.channels_last),
        torch.randn(2, 5, 7, 6, generator=g).permute(0, 3, 1, 2),  # not contiguous in any format
        torch.randn(2, 6, 10, 7, generator=g)[:, :, ::2],  # strided positions
    ):
        xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
        wc, wd = w.clone().requires_grad_(), w.to(DEV).requires_grad_()
        yc, yd = F.conv2d(xc, wc), F.conv2d(xd, wd)
        assert yd.stride() == yc.stride(), (yd.stride(), yc.stride())
        torch.testing.assert_close(yd.cpu(), yc, rtol=1e-5, atol=1e-5)
        go = torch.randn(yc.shape, generator=g)
        yc.backward(go)
        yd.backward(go.to(DEV))
        torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(wd.grad.cpu(), wc.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", range(len(POINTWISE)))
def test_pointwise_convolution_gradients(case, dtype):
    # Input and weight gradients of the 1x1 forms (plain GEMMs; the weight gradient as per-image
    # GEMMs summed where that is small, in float32) and the bias gradient, against CPU.
    xs, ws, transposed = POINTWISE[case]
    g = torch.Generator().manual_seed(10 + case)
    x, w = torch.randn(xs, generator=g).to(dtype), torch.randn(ws, generator=g).to(dtype)
    co = ws[1] if transposed else ws[0]
    b = torch.randn(co, generator=g).to(dtype)
    f = _pointwise_fn(len(xs) - 2, transposed)
    grads = []
    for dev, dt in (("cpu", torch.float32), (DEV, dtype)):
        ts = [t.detach().to(dev, dt).requires_grad_() for t in (x, w, b)]
        y = f(*ts)
        go = torch.randn(y.shape, generator=torch.Generator().manual_seed(99)).to(dev, dt)
        y.backward(go)
        grads.append([t.grad.cpu().float() for t in ts])
    tol = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 6e-2}[dtype]
    for name, got, want in zip(("input", "weight", "bias"), grads[1], grads[0]):
        scale = max(1.0, want.abs().max().item())
        torch.testing.assert_close(got / scale, want / scale, rtol=tol, atol=tol, msg=lambda m, n=name: f"{n}: {m}")


def test_pointwise_transposed_with_output_padding():
    # stride 1 allows output_padding below the dilation: the output gains positions, so it is not
    # the plain GEMM's shape (the gathered GEMM takes it), forward and backward.
    g = torch.Generator().manual_seed(5)
    x, w = torch.randn(2, 3, 4, 5, generator=g), torch.randn(3, 2, 1, 1, generator=g)
    kw = dict(stride=1, dilation=2, output_padding=1)
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    xd, wd = x.to(DEV).requires_grad_(), w.to(DEV).requires_grad_()
    yc, yd = F.conv_transpose2d(xc, wc, **kw), F.conv_transpose2d(xd, wd, **kw)
    assert yd.shape == yc.shape == (2, 2, 5, 6)
    torch.testing.assert_close(yd.cpu(), yc, rtol=1e-5, atol=1e-5)
    yc.square().sum().backward()
    yd.square().sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(wd.grad.cpu(), wc.grad, rtol=1e-4, atol=1e-4)
