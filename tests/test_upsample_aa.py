# Separable interpolation (csrc/ops/upsample_sep.cpp) against CPU, fallback off: uint8 bilinear/bicubic
# (with and without antialias, align_corners, scale factors, both of CPU's uint8 kernels: <= 4 channels
# and more) equal to CPU's bit for bit; float32 antialiased bilinear/bicubic forward and backward,
# downsampling and upsampling, non-contiguous and channels-last inputs; OpInfo samples of
# _upsample_bilinear2d_aa and the uint8 interpolate samples; dtype errors of CPU's type.
import os

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

import torch_webgpu  # noqa: E402,F401

DEV = "webgpu"
g = torch.Generator().manual_seed(0)
OPS = {(o.name + ("." + o.variant_test_name if o.variant_test_name else "")): o for o in op_db}


def u8(*shape):
    return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)


def rnd(*shape):
    return torch.randn(*shape, generator=g)


def cpu_or_none(f, x):
    try:
        return f(x)
    except RuntimeError:  # CPU's AVX uint8 kernel asserts on some 1x1 outputs; nothing to compare to
        return None


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("aa", [False, True])
@pytest.mark.parametrize("channels", [1, 3, 5])
def test_uint8_exact(mode, aa, channels):
    for hw in [(8, 9), (16, 5), (7, 7), (32, 20)]:
        x = u8(2, channels, *hw)
        for size in [(5, 4), (13, 17), (3, 30), (hw[0], 11), (2, 1)]:
            for align in (False, True):

                def f(t):
                    return F.interpolate(t, size=size, mode=mode, antialias=aa, align_corners=align)

                c = cpu_or_none(f, x)
                if c is None:
                    continue
                if channels > 4 and size[1] == 1:
                    # CPU's generic uint8 kernel (> 4 channels) gives every row of a width-1 output the
                    # first row's weights; its AVX kernel (<= 4 channels) does not: compare with that one.
                    c = torch.cat([f(x[:, i : i + 3].contiguous()) for i in range(0, channels, 3)], 1)
                d = f(x.to(DEV))
                assert d.dtype == torch.uint8 and d.shape == c.shape
                assert torch.equal(d.cpu(), c), (hw, size, align, (d.cpu().int() - c.int()).abs().max())


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("aa", [False, True])
def test_uint8_scale_factor_layouts(mode, aa):
    x = u8(1, 3, 10, 13)
    for sf in (0.3, 1.7, 2.0, 0.5, (0.6, 1.3)):
        for rsf in (False, True):

            def f(t):
                return F.interpolate(t, scale_factor=sf, mode=mode, antialias=aa, recompute_scale_factor=rsf)

            assert torch.equal(f(x.to(DEV)).cpu(), f(x))
    # channels-last and strided inputs, a larger image (CPU's typical use)
    big = u8(2, 3, 61, 47)
    for t in (big.contiguous(memory_format=torch.channels_last), big[:, :, ::2, 1:]):

        def f(t):
            return F.interpolate(t, size=(23, 31), mode=mode, antialias=aa)

        assert torch.equal(f(t.to(DEV)).cpu(), f(t))
    # same size: a copy; one dimension unchanged: one pass
    for size in [(61, 47), (61, 20), (30, 47)]:
        assert torch.equal(
            F.interpolate(big.to(DEV), size=size, mode=mode, antialias=aa).cpu(),
            F.interpolate(big, size=size, mode=mode, antialias=aa),
        )


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_float_antialias_forward_backward(mode):
    cases = [((2, 3, 17, 23), (5, 7)), ((1, 2, 6, 5), (13, 11)), ((1, 1, 9, 9), (9, 3)), ((2, 2, 30, 8), (7, 20))]
    for shape, size in cases:
        for align in (False, True):
            x = rnd(*shape).requires_grad_()
            xd = x.detach().to(DEV).requires_grad_()
            c = F.interpolate(x, size=size, mode=mode, antialias=True, align_corners=align)
            d = F.interpolate(xd, size=size, mode=mode, antialias=True, align_corners=align)
            torch.testing.assert_close(d.cpu(), c, rtol=1e-4, atol=1e-5)
            w = rnd(*c.shape)
            (gc,) = torch.autograd.grad(c, x, w)
            (gd,) = torch.autograd.grad(d, xd, w.to(DEV))
            torch.testing.assert_close(gd.cpu(), gc, rtol=1e-4, atol=1e-5)
    x = rnd(2, 3, 20, 24)
    for t in (x.contiguous(memory_format=torch.channels_last), x[:, :, ::2, 1::2], x.transpose(2, 3)):
        for sf in (0.4, 2.5):
            c = F.interpolate(t, scale_factor=sf, mode=mode, antialias=True)
            d = F.interpolate(t.to(DEV), scale_factor=sf, mode=mode, antialias=True)
            torch.testing.assert_close(d.cpu(), c, rtol=1e-4, atol=1e-5)


def test_opinfo_upsample_aa_samples():
    for name in ("_upsample_bilinear2d_aa",):
        op = OPS[name]
        n = 0
        for s in op.sample_inputs("cpu", torch.float32, requires_grad=True):
            c = op(s.input, *s.args, **s.kwargs)
            xd = s.input.detach().to(DEV).requires_grad_()
            d = op(xd, *s.args, **s.kwargs)
            torch.testing.assert_close(d.cpu(), c, rtol=1e-4, atol=1e-5)
            w = torch.randn(c.shape, generator=g)
            (gc,) = torch.autograd.grad(c, s.input, w)
            (gd,) = torch.autograd.grad(d, xd, w.to(DEV))
            torch.testing.assert_close(gd.cpu(), gc, rtol=1e-4, atol=1e-5)
            n += 1
        assert n > 0


@pytest.mark.parametrize("name", ["nn.functional.interpolate.bilinear", "nn.functional.interpolate.bicubic"])
def test_opinfo_interpolate_uint8(name):
    op = OPS[name]
    n = 0
    for s in op.reference_inputs("cpu", torch.uint8):
        c = cpu_or_none(lambda t: op(t, *s.args, **s.kwargs), s.input)
        if c is None:
            continue
        d = op(s.input.to(DEV), *s.args, **s.kwargs)
        assert torch.equal(d.cpu(), c)
        n += 1
    assert n > 0


def test_dtype_errors():
    for dt in (torch.float16, torch.bfloat16):
        for mode in ("bilinear", "bicubic"):
            x = rnd(1, 2, 8, 8).to(dt)
            with pytest.raises(NotImplementedError):
                F.interpolate(x, size=(5, 3), mode=mode, antialias=True)
            with pytest.raises(NotImplementedError):
                F.interpolate(x.to(DEV), size=(5, 3), mode=mode, antialias=True)
    for dt in (torch.int32, torch.int8):
        x = torch.ones(1, 1, 4, 4, dtype=dt)
        with pytest.raises(Exception) as ec:
            F.interpolate(x, scale_factor=2, mode="bilinear", antialias=True)
        with pytest.raises(type(ec.value)):
            F.interpolate(x.to(DEV), scale_factor=2, mode="bilinear", antialias=True)
    x = u8(1, 1, 4, 4)
    for mode in ("linear", "trilinear"):
        xi = x[:, :, 0] if mode == "linear" else x.unsqueeze(2)
        with pytest.raises(NotImplementedError):
            F.interpolate(xi, scale_factor=2, mode=mode)
        with pytest.raises(NotImplementedError):
            F.interpolate(xi.to(DEV), scale_factor=2, mode=mode)
    with pytest.raises(ValueError):  # antialias needs a 4-d input, as on CPU
        F.interpolate(rnd(1, 2, 8).to(DEV), size=4, mode="linear", antialias=True)
