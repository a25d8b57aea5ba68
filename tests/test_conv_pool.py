# Convolution, pooling and interpolation against CPU: forward and gradients (input, weight, bias),
# every float dtype, strides/padding/dilation/groups, transposed, 1d/2d/3d, non-contiguous inputs,
# multi-workgroup tiles and the split-K weight gradient, integer pools, NaN, empty inputs, errors.
import copy

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
TOL = {torch.float32: 2e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}


def _leaf(t, dtype, dev):
    return t.detach().to(dtype).to(dev).requires_grad_(t.is_floating_point())


def compare(fn, *inputs, dtype=torch.float32, grad=True, tol=None):
    """fn on CPU and webgpu; half types are checked against a float32 CPU computation of the same
    (rounded) inputs, so CPU's own half rounding is not the yardstick. Gradients likewise."""
    tol = tol or TOL.get(dtype, 0)
    ref_dtype = torch.float32 if dtype in FLOATS else dtype
    rounded = [t.detach().to(dtype) for t in inputs]
    cpu = [_leaf(t, ref_dtype, "cpu") if t.is_floating_point() else t.clone() for t in rounded]
    dev = [_leaf(t, dtype, DEV) if t.is_floating_point() else t.to(DEV) for t in rounded]
    a = fn(*cpu)
    b = fn(*dev)
    a0, b0 = (a[0], b[0]) if isinstance(a, tuple) else (a, b)
    assert b0.device.type == DEV and b0.dtype == (dtype if a0.is_floating_point() else a0.dtype)
    assert b0.shape == a0.shape
    if a0.is_floating_point():
        torch.testing.assert_close(b0.cpu().float(), a0.float(), atol=tol, rtol=tol, equal_nan=True)
    else:
        assert torch.equal(b0.cpu(), a0)
    if isinstance(a, tuple):  # indices
        assert torch.equal(b[1].cpu(), a[1])
    if grad and a0.is_floating_point() and a0.numel():
        g = torch.randn(a0.shape, generator=torch.Generator().manual_seed(7)).to(dtype)
        a0.backward(g.to(ref_dtype))
        b0.backward(g.to(DEV))
        for c, d in zip(cpu, dev):
            if c.requires_grad:
                scale = max(1.0, c.grad.abs().max().item())
                torch.testing.assert_close(d.grad.cpu().float(), c.grad.float(), atol=tol * scale, rtol=tol)


def rnd(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ---- convolution ----

CONV = {
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), (2, 4, 19), (6, 4, 3), 6),
    "conv1d_same_dil": (lambda x, w, b: F.conv1d(x, w, b, padding="same", dilation=2), (3, 4, 17), (5, 4, 4), 5),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), (2, 3, 9, 10), (8, 3, 3, 3), 8),
    "conv2d_stride_dil_groups": (
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
        (2, 6, 9, 11),
        (4, 3, 3, 2),
        4,
    ),
    "conv2d_depthwise": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=6), (2, 6, 7, 7), (12, 1, 3, 3), 12),
    "conv2d_valid_1x1": (lambda x, w, b: F.conv2d(x, w, b, padding="valid"), (1, 5, 4, 6), (7, 5, 1, 1), 7),
    "conv3d": (lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1), (2, 3, 5, 6, 4), (4, 3, 2, 3, 2), 4),
    "conv_transpose1d": (
        lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, dilation=2, padding=1),
        (2, 4, 10),
        (4, 5, 4),
        5,
    ),
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2),
        (2, 4, 7, 6),
        (4, 3, 3, 3),
        6,
    ),
    "conv_transpose2d_plain": (lambda x, w, b: F.conv_transpose2d(x, w, b), (1, 3, 5, 5), (3, 2, 2, 2), 2),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", list(CONV))
def test_conv(name, dtype):
    fn, xs, ws, nb = CONV[name]
    compare(fn, rnd(*xs, seed=1), rnd(*ws, seed=2), rnd(nb, seed=3), dtype=dtype)


@pytest.mark.parametrize("name", ["conv2d_stride_dil_groups", "conv_transpose2d", "conv1d"])
def test_conv_int64_exact(name):
    fn, xs, ws, nb = CONV[name]
    r = [torch.randint(-60, 60, s, generator=torch.Generator().manual_seed(i)) for i, s in enumerate((xs, ws, (nb,)))]
    compare(fn, *r, dtype=torch.int64)


def test_conv_no_bias_and_noncontiguous():
    x = rnd(2, 10, 12, 3, seed=4).permute(0, 3, 1, 2)  # channels-last-like strides
    w = rnd(5, 3, 3, 3, seed=5)[:, :, :, :]
    compare(lambda x, w: F.conv2d(x, w, None, padding=1), x, w)
    base = rnd(3, 4, 30, seed=6)
    compare(lambda x, w: F.conv1d(x[1:, :, ::2], w), base, rnd(6, 4, 3, seed=7))


def test_conv_multi_tile_and_split_k():
    # M = 4*24*24 outputs (many 64-row tiles), 80 output channels (two column tiles), K = 48*9,
    # and the weight gradient reduces over 2304 pixels: the split-K path.
    x, w, b = rnd(4, 48, 24, 24, seed=8), rnd(80, 48, 3, 3, seed=9), rnd(80, seed=10)
    compare(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b, tol=1e-3)


def test_conv_module_training_step():
    torch.manual_seed(0)
    m = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 4, 3),
        torch.nn.AdaptiveAvgPool2d(1),
    )
    md = copy.deepcopy(m).to(DEV)
    x = rnd(2, 3, 12, 12, seed=11)
    m(x).sum().backward()
    md(x.to(DEV)).sum().backward()
    for p, q in zip(m.parameters(), md.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-4, rtol=1e-4)


def test_conv_empty_and_errors():
    out = F.conv2d(torch.empty(0, 3, 5, 5, device=DEV), torch.randn(4, 3, 3, 3).to(DEV))
    assert out.shape == (0, 4, 3, 3)
    with pytest.raises(RuntimeError):  # channel mismatch, ATen's own check
        F.conv2d(torch.randn(1, 2, 5, 5).to(DEV), torch.randn(4, 3, 3, 3).to(DEV))
    with pytest.raises(RuntimeError):  # kernel larger than the padded input
        F.conv2d(torch.randn(1, 3, 2, 2).to(DEV), torch.randn(4, 3, 3, 3).to(DEV))
    with pytest.raises((RuntimeError, NotImplementedError)):  # CPU: not implemented for 'Int'
        F.conv2d(
            torch.ones(1, 3, 5, 5, dtype=torch.int32, device=DEV), torch.ones(4, 3, 3, 3, dtype=torch.int32, device=DEV)
        )


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float16), (torch.float16, torch.float32)])
def test_conv_weight_dtype_mismatch_raises_like_cpu(transposed, dtypes):
    """An input and a weight of different dtypes: CPU and CUDA raise (ATen checks only the bias before
    the backend); webgpu once computed in the input's dtype."""
    xd, wd = dtypes
    f = F.conv_transpose2d if transposed else F.conv2d
    x, w = torch.randn(1, 3, 6, 6, dtype=xd), torch.randn(3, 3, 3, 3, dtype=wd)
    with pytest.raises(RuntimeError):
        f(x, w)
    with pytest.raises(RuntimeError, match="weight type"):
        f(x.to(DEV), w.to(DEV))


# ---- pooling ----

POOL = {
    "max2d": lambda x: F.max_pool2d(x, 3, 2, 1, dilation=(1, 2), ceil_mode=True, return_indices=True),
    "max2d_plain": lambda x: F.max_pool2d(x, 2),
    "max1d": lambda x: F.max_pool1d(x.flatten(2), 4, 3, 2),
    "max3d": lambda x: F.max_pool3d(x.unsqueeze(2).expand(-1, -1, 3, -1, -1), 2, (1, 2, 2), 1),
    "avg2d": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    "avg2d_incl_pad": lambda x: F.avg_pool2d(x, (2, 3), (1, 2), (1, 1)),
    "avg2d_divisor": lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=5),
    "avg1d": lambda x: F.avg_pool1d(x.flatten(2), 5, 2, 2),
    "avg3d": lambda x: F.avg_pool3d(x.unsqueeze(2), (1, 2, 2)),
    "adaptive_avg2d": lambda x: F.adaptive_avg_pool2d(x, (4, 5)),
    "adaptive_avg2d_up": lambda x: F.adaptive_avg_pool2d(x, (13, 3)),
    "adaptive_avg1d": lambda x: F.adaptive_avg_pool1d(x.flatten(2), 7),
    "adaptive_max2d": lambda x: F.adaptive_max_pool2d(x, (4, 5), return_indices=True),
    "adaptive_max1d": lambda x: F.adaptive_max_pool1d(x.flatten(2), 6),
    "adaptive_avg3d": lambda x: F.adaptive_avg_pool3d(x.unsqueeze(2), (1, 3, 4)),
    "adaptive_max3d": lambda x: F.adaptive_max_pool3d(x.unsqueeze(2), (1, 3, 4)),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", list(POOL))
def test_pool(name, dtype):
    compare(POOL[name], rnd(2, 3, 9, 11, seed=12), dtype=dtype)


@pytest.mark.parametrize("dtype", (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8), ids=str)
def test_max_pool_integers(dtype):
    x = torch.randint(-120, 120, (2, 3, 9, 11), generator=torch.Generator().manual_seed(13))
    if dtype == torch.uint8:
        x = x.abs()
    compare(POOL["max2d"], x, dtype=dtype)


def test_avg_pool_int64():
    x = torch.randint(-1000, 1000, (2, 3, 9, 11), generator=torch.Generator().manual_seed(14))
    compare(lambda x: F.avg_pool2d(x, 3, 2, 1), x, dtype=torch.int64)
    compare(lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=-4), x, dtype=torch.int64)


def test_pool_nan_noncontiguous_large():
    x = rnd(1, 2, 6, 6, seed=15)
    x[0, 0, 1, 1] = float("nan")
    x[0, 1, 4, 5] = float("nan")
    compare(lambda x: F.max_pool2d(x, 2, return_indices=True), x, grad=False)
    compare(lambda x: F.adaptive_max_pool2d(x, 3, return_indices=True), x, grad=False)
    y = rnd(2, 9, 11, 3, seed=16).permute(0, 3, 1, 2)
    compare(POOL["max2d"], y)
    compare(POOL["avg2d"], y)
    big = rnd(4, 16, 40, 40, seed=17)  # > 256 outputs and inputs: many workgroups
    compare(lambda x: F.max_pool2d(x, 3, 2, 1), big)
    compare(lambda x: F.avg_pool2d(x, 3, 2, 1), big)


def test_pool_3d_input_and_errors():
    compare(lambda x: F.max_pool2d(x, 2), rnd(3, 6, 6, seed=18))
    compare(lambda x: F.adaptive_avg_pool2d(x, 1), rnd(2, 3, 7, 5, seed=19))
    with pytest.raises(RuntimeError):  # pad larger than half the kernel
        F.max_pool2d(torch.randn(1, 1, 5, 5).to(DEV), 2, padding=2)
    with pytest.raises(RuntimeError):  # output size would be empty
        F.avg_pool2d(torch.randn(1, 1, 2, 2).to(DEV), 3)
    with pytest.raises((RuntimeError, NotImplementedError)):  # CPU: not implemented for 'Int'
        F.avg_pool2d(torch.ones(1, 1, 4, 4, dtype=torch.int32, device=DEV), 2)


# ---- interpolation ----

INTERP = {
    "nearest_x2": dict(scale_factor=2, mode="nearest"),
    "nearest_size": dict(size=(5, 13), mode="nearest"),
    "nearest_frac_scale": dict(scale_factor=(1.7, 0.6), mode="nearest"),
    "nearest_exact": dict(size=(11, 4), mode="nearest-exact"),
    "bilinear_scale": dict(scale_factor=2.3, mode="bilinear"),
    "bilinear_align": dict(size=(5, 13), mode="bilinear", align_corners=True),
    "bilinear_down": dict(size=(4, 3), mode="bilinear", align_corners=False),
    "bilinear_one": dict(size=(1, 1), mode="bilinear", align_corners=True),
    "bilinear_given_scale": dict(scale_factor=(0.5, 3.5), mode="bilinear", recompute_scale_factor=False),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", list(INTERP))
def test_interpolate_2d(name, dtype):
    compare(lambda x: F.interpolate(x, **INTERP[name]), rnd(2, 3, 7, 9, seed=20), dtype=dtype)


def test_interpolate_1d_3d_uint8_noncontiguous():
    x1 = rnd(2, 3, 10, seed=21)
    compare(lambda x: F.interpolate(x, scale_factor=1.5), x1)
    compare(lambda x: F.interpolate(x, size=23, mode="nearest-exact"), x1)
    compare(lambda x: F.interpolate(x, size=23, mode="linear"), x1)
    compare(lambda x: F.interpolate(x, size=4, mode="linear", align_corners=True), x1)
    x3 = rnd(1, 2, 3, 4, 5, seed=22)
    compare(lambda x: F.interpolate(x, size=(5, 3, 7), mode="trilinear"), x3)
    compare(lambda x: F.interpolate(x, size=(5, 3, 7)), x3)
    u8 = torch.randint(0, 255, (2, 3, 7, 9), generator=torch.Generator().manual_seed(23)).to(torch.uint8)
    compare(lambda x: F.interpolate(x, size=(5, 13)), u8, dtype=torch.uint8)
    nc = rnd(2, 7, 9, 3, seed=24).permute(0, 3, 1, 2)
    compare(lambda x: F.interpolate(x, scale_factor=4, mode="bilinear"), nc)
    compare(lambda x: F.upsample_nearest(x, scale_factor=3), nc)
    compare(lambda x: F.upsample_bilinear(x, size=(10, 4)), nc)


def test_interpolate_errors():
    with pytest.raises((RuntimeError, ValueError)):
        F.interpolate(torch.randn(1, 1, 4, 4).to(DEV), size=(0, 3))
    with pytest.raises((RuntimeError, NotImplementedError)):  # CPU: not implemented for 'Int'
        F.interpolate(torch.ones(1, 1, 4, 4, dtype=torch.int32, device=DEV), scale_factor=2, mode="bilinear")


@pytest.mark.parametrize(
    "shape, kw, scatter",
    [
        ((2, 3, 8, 10), dict(kernel_size=2), True),
        ((2, 3, 9, 11), dict(kernel_size=3, stride=3, padding=1, ceil_mode=True), True),
        ((1, 2, 4, 6, 6), dict(kernel_size=2), True),  # 3-d
        ((2, 3, 9, 9), dict(kernel_size=3, stride=2), False),  # overlapping windows: the gather
        ((2, 3, 9, 9), dict(kernel_size=2, stride=2, dilation=2), False),  # dilated span 3 > stride
    ],
)
def test_max_pool_backward_disjoint_windows_scatter(shape, kw, scatter):
    """max_pool backward where the windows cannot overlap is a zero fill and one write per output
    (ops/pool.cpp max_backward_scatter); overlapping or dilated windows keep the gather. Ties (a
    constant region) must still credit only the index the forward chose."""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(shape, generator=g)
    x[..., :2, :2] = 1.0  # ties inside a window
    pool = F.max_pool2d if len(shape) == 4 else F.max_pool3d
    xc = x.clone().requires_grad_()
    y = pool(xc, **kw)
    go = torch.randn(y.shape, generator=g)
    y.backward(go)
    xd = x.to(DEV).requires_grad_()
    yd = pool(xd, **kw)
    yd.backward(go.to(DEV))
    torch.testing.assert_close(yd.cpu(), y)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)
    if scatter:
        assert any(k.startswith("pool:max_bwd_scatter") for k in torch_webgpu._C._pipeline_keys(-1))


# ---- memory format: a channels-last input gives a channels-last result, as on CPU and CUDA ----------

_CL_X = torch.randn(2, 4, 8, 8, generator=torch.Generator().manual_seed(7)).contiguous(
    memory_format=torch.channels_last
)
_CL_X3 = torch.randn(2, 4, 4, 6, 6, generator=torch.Generator().manual_seed(8)).contiguous(
    memory_format=torch.channels_last_3d
)
_CL_W = torch.randn(6, 4, 3, 3, generator=torch.Generator().manual_seed(9))
_CL_CASES = {
    "max_pool2d": (_CL_X, lambda t: F.max_pool2d(t, 2)),
    "max_pool2d indices": (_CL_X, lambda t: F.max_pool2d(t, 2, return_indices=True)[1]),
    "avg_pool2d": (_CL_X, lambda t: F.avg_pool2d(t, 2)),
    "adaptive_avg_pool2d": (_CL_X, lambda t: F.adaptive_avg_pool2d(t, 3)),
    "adaptive_max_pool2d": (_CL_X, lambda t: F.adaptive_max_pool2d(t, 3)),
    "conv2d": (_CL_X, lambda t: F.conv2d(t, _CL_W.to(t.device), padding=1)),
    "conv2d channels-last weight": (
        _CL_X.contiguous(),
        lambda t: F.conv2d(t, _CL_W.to(t.device).contiguous(memory_format=torch.channels_last)),
    ),
    "batch_norm train": (_CL_X, lambda t: F.batch_norm(t, None, None, training=True)),
    "batch_norm eval": (
        _CL_X,
        lambda t: F.batch_norm(t, torch.zeros(4, device=t.device), torch.ones(4, device=t.device), training=False),
    ),
    "bilinear": (_CL_X, lambda t: F.interpolate(t, scale_factor=2, mode="bilinear")),
    "nearest": (_CL_X, lambda t: F.interpolate(t, size=(5, 11))),
    "bicubic": (_CL_X, lambda t: F.interpolate(t, scale_factor=1.5, mode="bicubic", align_corners=True)),
    "max_pool3d": (_CL_X3, lambda t: F.max_pool3d(t, 2)),
    "avg_pool3d (contiguous on CPU too)": (_CL_X3, lambda t: F.avg_pool3d(t, 2)),
    "trilinear": (_CL_X3, lambda t: F.interpolate(t, scale_factor=2, mode="trilinear")),
    "max_pool3d unbatched slice": (_CL_X3[1], lambda t: F.max_pool3d(t, 2)),
    "max_pool3d unbatched slice indices": (_CL_X3[1], lambda t: F.max_pool3d(t, 2, return_indices=True)[1]),
    "adaptive_max_pool3d unbatched slice": (_CL_X3[1], lambda t: F.adaptive_max_pool3d(t, 2)),
    "group_norm": (_CL_X, lambda t: F.group_norm(t, 2)),
    "group_norm affine": (_CL_X, lambda t: F.group_norm(t, 2, torch.ones(4, device=t.device) * 2, None)),
    "layer_norm (contiguous on CPU too)": (_CL_X, lambda t: F.layer_norm(t, (8,))),
    "reflection_pad2d": (_CL_X, lambda t: F.pad(t, (1, 2, 3, 1), mode="reflect")),
    "replication_pad2d": (_CL_X, lambda t: F.pad(t, (1, 2, 3, 1), mode="replicate")),
    "reflection_pad3d": (_CL_X3, lambda t: F.pad(t, (1, 2, 1, 1, 2, 1), mode="reflect")),
    "replication_pad3d": (_CL_X3, lambda t: F.pad(t, (1, 2, 1, 1, 2, 1), mode="replicate")),
    "circular pad (contiguous on CPU too)": (_CL_X, lambda t: F.pad(t, (1, 1, 1, 1), mode="circular")),
}


@pytest.mark.parametrize("name", list(_CL_CASES))
def test_channels_last_results_keep_cpus_memory_format(name):
    x, f = _CL_CASES[name]
    want = f(x)
    got = f(x.to(DEV))
    assert got.stride() == want.stride(), (got.stride(), want.stride())
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)
    # and the gradient keeps the input's format too
    if want.is_floating_point():
        a, b = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
        f(a).square().sum().backward()
        f(b).square().sum().backward()
        assert b.grad.stride() == a.grad.stride(), (b.grad.stride(), a.grad.stride())
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-4)


def test_gemm_grid_folded_past_65535_workgroups_leaves_no_zeros():
    # A 1x1 convolution with one output channel and 2897^2 outputs needs 65540 GEMM workgroups: the
    # grid folds into two rows, and its spare workgroups stored zeros over the first tiles (a race:
    # a different count each run, up to millions of elements). Several runs, against CPU.
    g = torch.Generator().manual_seed(11)
    x, w = torch.randn(1, 1, 2897, 2897, generator=g), torch.randn(1, 1, 1, 1, generator=g)
    want = F.conv2d(x, w)
    xd, wd = x.to(DEV), w.to(DEV)
    for _ in range(3):
        torch.testing.assert_close(F.conv2d(xd, wd).cpu(), want, rtol=1e-5, atol=1e-5)
    a, b = torch.randn(3, 5, generator=g), torch.randn(5, 16 * 2**19 + 300, generator=g)
    torch.testing.assert_close((a.to(DEV) @ b.to(DEV)).cpu(), a @ b, rtol=1e-4, atol=1e-4)


def test_implicit_gemm_grid_folded_past_65535_workgroups():
    # The implicit-GEMM convolution's grid is splits x groups x tiles: 70000 groups of one tile each
    # fold into two rows of 65535 workgroups, whose spares took split-K part 1 (an empty k range)
    # of a wrapped group and stored the bias alone (or zeros) over its outputs.
    g = torch.Generator().manual_seed(12)
    G = 70000
    x, w, b = torch.randn(1, G, 2, 2, generator=g), torch.randn(G, 1, 1, 1, generator=g), torch.randn(G, generator=g)
    got = F.conv2d(x.to(DEV), w.to(DEV), b.to(DEV), groups=G).cpu()
    torch.testing.assert_close(got, F.conv2d(x, w, b, groups=G), rtol=1e-5, atol=1e-5)
    x, w = torch.randn(1, 2 * G, 2, 1, generator=g), torch.randn(G, 2, 1, 1, generator=g)
    got = F.conv2d(x.to(DEV), w.to(DEV), groups=G).cpu()
    torch.testing.assert_close(got, F.conv2d(x, w, groups=G), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "pool,shape",
    [
        (lambda t: F.adaptive_avg_pool1d(t, 0), (1, 2, 4)),
        (lambda t: F.adaptive_avg_pool2d(t, 0), (1, 2, 4, 4)),
        (lambda t: F.adaptive_avg_pool3d(t, 0), (1, 2, 4, 4, 4)),
        (lambda t: F.adaptive_max_pool2d(t, 0), (1, 2, 4, 4)),
        (lambda t: F.adaptive_max_pool3d(t, 0), (1, 2, 4, 4, 4)),
    ],
)
def test_adaptive_pool_backward_of_empty_output_raises_like_cpu(pool, shape):
    # output_size 0 makes an empty result; its backward is CPU's error, not an all-zero gradient.
    for dev in ("cpu", DEV):
        x = torch.randn(shape, device=dev, requires_grad=True)
        y = pool(x)
        assert y.numel() == 0
        with pytest.raises(RuntimeError, match="Expected grad_output to have non-zero size for non-batch dimensions"):
            y.sum().backward()
