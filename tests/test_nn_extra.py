"""grid_sample, unfold/fold, embedding_bag, max_unpool, channel_shuffle, renorm and cross against CPU:
forward values and gradients through autograd, every float dtype the device holds, the modes and
edge cases the kernels branch on (align_corners, padding modes, out-of-range grid points, empty bags,
padding_idx, repeated unpool indices), non-contiguous inputs, and the errors CPU raises. Half types
are compared with a float32 CPU computation of the same (rounded) inputs."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
TOL = {
    torch.float32: dict(atol=1e-4, rtol=1e-4),
    torch.float16: dict(atol=2e-2, rtol=2e-2),
    torch.bfloat16: dict(atol=6e-2, rtol=6e-2),
}


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _leaf(t, device, dtype, grad):
    if not isinstance(t, torch.Tensor):
        return t
    t = t.detach().to(device)
    if t.is_floating_point():
        t = t.to(dtype)
    return t.requires_grad_(grad and t.is_floating_point())


def check(f, *inputs, dtype=torch.float32, grad=True, tol=None, nograd=()):
    """f on webgpu (inputs in dtype) against f on CPU (the same rounded inputs, in float32), values
    and the gradients of every floating input."""
    tol = tol or TOL[dtype]
    rounded = [t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
    cin = [_leaf(t, "cpu", torch.float32, grad and i not in nograd) for i, t in enumerate(rounded)]
    win = [_leaf(t, DEV, dtype, grad and i not in nograd) for i, t in enumerate(rounded)]
    yc, yw = f(*cin), f(*win)
    assert yw.device.type == DEV and yw.shape == yc.shape
    torch.testing.assert_close(yw.cpu().float(), yc.detach().float(), equal_nan=True, **tol)
    if not grad:
        return
    ps = [i for i, t in enumerate(cin) if isinstance(t, torch.Tensor) and t.requires_grad]
    g = torch.randn(yc.shape).to(dtype)
    gc = torch.autograd.grad(yc, [cin[i] for i in ps], g.float())
    gw = torch.autograd.grad(yw, [win[i] for i in ps], g.to(DEV))
    for i, a, b in zip(ps, gw, gc):
        assert a.dtype == dtype, (i, a.dtype)
        torch.testing.assert_close(a.cpu().float(), b.float(), equal_nan=True, **tol, msg=lambda m: f"grad {i}: {m}")


def raises_like_cpu(f, *inputs):
    """f raises on webgpu the exception type it raises on CPU (it must raise on CPU)."""
    with pytest.raises(Exception) as cpu:
        f(*inputs)
    moved = [t.to(DEV) if isinstance(t, torch.Tensor) else t for t in inputs]
    with pytest.raises(cpu.type):
        f(*moved)
        torch.webgpu.synchronize()


# ---- grid_sample ------------------------------------------------------------------------------------


def _grid(shape, spread=1.3):
    # Points beyond [-1, 1] (spread > 1) exercise the padding modes.
    return (torch.rand(shape) * 2 - 1) * spread


@pytest.mark.parametrize(
    "mode,padding,align",
    list(itertools.product(["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True])),
)
def test_grid_sample_2d_modes(mode, padding, align):
    x, g = torch.randn(2, 3, 5, 7), _grid((2, 4, 6, 2))
    f = lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding, align_corners=align)  # noqa: E731
    # nearest has no grid gradient (CPU's is zero); bicubic's coefficients are cubic in the grid.
    check(f, x, g, tol=dict(atol=2e-4, rtol=2e-4))


@pytest.mark.parametrize(
    "mode,padding,align",
    list(itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"], [False, True])),
)
def test_grid_sample_3d_modes(mode, padding, align):
    x, g = torch.randn(2, 2, 3, 4, 5), _grid((2, 3, 2, 4, 3))
    check(
        lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding, align_corners=align),
        x,
        g,
        tol=dict(atol=2e-4, rtol=2e-4),
    )


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_dtypes_and_noncontiguous(mode, dtype):
    # Half types: CPU (and CUDA) compute the coordinates in the half type, rounding every operation;
    # webgpu does the same, so the comparison is with CPU in the same dtype.
    x = torch.randn(2, 6, 9, 3).permute(0, 1, 3, 2)[:, ::2].to(dtype)  # non-contiguous input
    g = _grid((2, 4, 5, 2)).transpose(1, 2).to(dtype)  # non-contiguous grid
    for padding, align in (("zeros", False), ("reflection", True), ("border", False)):
        f = lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding, align_corners=align)  # noqa: E731
        xc, gc = x.clone().requires_grad_(), g.clone().requires_grad_()
        xw, gw = x.to(DEV).requires_grad_(), g.to(DEV).requires_grad_()
        yc, yw = f(xc, gc), f(xw, gw)
        assert yw.dtype == dtype
        torch.testing.assert_close(yw.cpu(), yc, **TOL[dtype])
        go = torch.randn(yc.shape).to(dtype)
        (dxc,) = torch.autograd.grad(yc, xc, go)
        (dxw,) = torch.autograd.grad(yw, xw, go.to(DEV))
        torch.testing.assert_close(
            dxw.cpu(), dxc, **(TOL[dtype] if dtype == torch.float32 else dict(atol=5e-2, rtol=5e-2))
        )


def test_grid_sample_far_and_exact_points():
    # Far outside the input, exactly on borders and corners, and on pixel centres.
    x = torch.randn(1, 2, 4, 5)
    pts = torch.tensor([-1.0, 1.0, 0.0, -5.0, 7.5, 1e4, -1e4, 0.25, -0.75, 3.0])
    g = torch.stack(torch.meshgrid(pts, pts.flip(0), indexing="ij"), -1).unsqueeze(0)
    for mode, padding, align in itertools.product(
        ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True]
    ):
        f = lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding, align_corners=align)  # noqa: E731
        check(f, x, g, grad=False)
        check(f, x, g, nograd=(1,))  # input gradient only: the grid's has kinks on these exact points


def test_grid_sample_single_pixel_and_empty():
    check(
        lambda a, b: F.grid_sample(a, b, padding_mode="reflection", align_corners=True),
        torch.randn(1, 2, 1, 1),
        _grid((1, 3, 3, 2)),
    )
    check(
        lambda a, b: F.grid_sample(a, b, align_corners=False), torch.randn(2, 3, 4, 4), _grid((2, 0, 3, 2)), grad=False
    )
    x = torch.randn(0, 3, 4, 4, device=DEV)
    assert F.grid_sample(x, torch.zeros(0, 2, 2, 2, device=DEV), align_corners=False).shape == (0, 3, 2, 2)


def test_grid_sample_backward_input_only():
    # output_mask (False, True) and (True, False): the grid or the input alone requires grad.
    x, g = torch.randn(2, 3, 5, 5), _grid((2, 3, 3, 2))
    f = lambda a, b: F.grid_sample(a, b, align_corners=True)  # noqa: E731
    check(f, x, g, nograd=(0,))
    check(f, x, g, nograd=(1,))


def test_grid_sample_errors():
    x, g = torch.randn(1, 2, 3, 3), torch.rand(1, 2, 2, 2)
    raises_like_cpu(lambda a, b: torch.grid_sampler_2d(a, b, 0, 0, False), x, torch.rand(2, 2, 2, 2))
    raises_like_cpu(lambda a, b: torch.grid_sampler_2d(a, b, 0, 0, False), x, torch.rand(1, 2, 2, 3))
    raises_like_cpu(lambda a, b: torch.grid_sampler_3d(a, b, 0, 0, False), x, g)
    raises_like_cpu(
        lambda a, b: torch.grid_sampler_3d(a, b, 2, 0, False), torch.rand(1, 1, 2, 2, 2), torch.rand(1, 1, 1, 1, 3)
    )
    raises_like_cpu(lambda a, b: torch.grid_sampler_2d(a, b, 0, 0, False), torch.rand(1, 2, 0, 3), g)
    raises_like_cpu(lambda a, b: torch.grid_sampler_2d(a, b, 0, 0, False), x, g.half())


# ---- unfold / fold ----------------------------------------------------------------------------------

FOLD_CASES = [  # kernel, dilation, padding, stride
    ((2, 3), 1, 0, 1),
    ((3, 3), (2, 1), (1, 2), (2, 1)),
    ((1, 1), 1, 0, 1),
    ((4, 2), 1, (2, 0), (3, 2)),
    ((2, 2), 2, 1, 3),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k,d,p,s", FOLD_CASES)
def test_unfold_fold(k, d, p, s, dtype):
    x = torch.randn(2, 3, 7, 8)
    check(lambda a: F.unfold(a, k, dilation=d, padding=p, stride=s), x, dtype=dtype)
    cols = F.unfold(x, k, dilation=d, padding=p, stride=s)
    check(lambda a: F.fold(a, (7, 8), k, dilation=d, padding=p, stride=s), torch.randn_like(cols), dtype=dtype)
    # unbatched
    check(lambda a: F.unfold(a, k, dilation=d, padding=p, stride=s), x[0], dtype=dtype)
    check(lambda a: F.fold(a, (7, 8), k, dilation=d, padding=p, stride=s), torch.randn_like(cols[0]), dtype=dtype)


def test_unfold_fold_noncontiguous_out_and_ints():
    x = torch.randn(2, 8, 3, 7).transpose(1, 2)[..., ::2]
    check(lambda a: F.unfold(a, (2, 2), padding=1), x)
    c = torch.randn(2, 12, 8).transpose(1, 2).contiguous().transpose(1, 2)
    check(lambda a: F.fold(a, (5, 6), (2, 3), stride=(1, 2)), c)
    xb = torch.randint(0, 2, (2, 3, 5, 4)).bool()
    assert torch.equal(
        torch._C._nn.im2col(xb.to(DEV), (2, 2), (1, 1), (1, 0), (2, 1)).cpu(),
        torch._C._nn.im2col(xb, (2, 2), (1, 1), (1, 0), (2, 1)),
    )
    raises_like_cpu(lambda a: torch._C._nn.im2col(a, (2, 2), (1, 1), (1, 0), (2, 1)), xb.to(torch.uint8))
    out = torch.full((2, 12, 99), 5.0, device=DEV)
    torch._C._nn.im2col(x.to(DEV), (2, 2), (1, 1), (1, 1), (1, 1), out=out)
    torch.testing.assert_close(out.cpu(), F.unfold(x, (2, 2), padding=1))


def test_unfold_fold_errors():
    raises_like_cpu(lambda a: F.unfold(a, (9, 9)), torch.randn(1, 2, 4, 4))
    raises_like_cpu(lambda a: F.unfold(a, (2, 2), stride=0), torch.randn(1, 2, 4, 4))
    raises_like_cpu(lambda a: F.fold(a, (4, 4), (2, 2)), torch.randn(1, 7, 9))
    raises_like_cpu(lambda a: F.fold(a, (4, 4), (2, 2)), torch.randn(1, 8, 10))


# ---- embedding_bag ----------------------------------------------------------------------------------


def _bags(n, num_weights, offsets):
    return torch.randint(0, num_weights, (n,)), torch.tensor(offsets)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_modes(mode, dtype):
    w = torch.randn(10, 5)
    idx, offs = _bags(9, 10, [0, 2, 2, 5, 9])  # bags 1 and 4 are empty
    check(lambda ww: F.embedding_bag(idx.to(ww.device), ww, offs.to(ww.device), mode=mode), w, dtype=dtype)
    check(
        lambda ww: F.embedding_bag(idx.to(ww.device), ww, offs.to(ww.device), mode=mode, include_last_offset=True),
        w,
        dtype=dtype,
    )
    # 2-D input (bags of equal length), padding_idx (skipped, and not counted by mean)
    i2 = torch.tensor([[1, 3, 3], [3, 3, 3], [0, 9, 2]])
    check(lambda ww: F.embedding_bag(i2.to(ww.device), ww, mode=mode, padding_idx=3), w, dtype=dtype)


@pytest.mark.parametrize("mode", ["sum", "max"])
def test_embedding_bag_short_last_offset(mode):
    # include_last_offset with a last offset short of the indices' end: CPU's sum stops the last bag
    # at that offset while its max runs it to the end (mean divides such a sum by the count to the
    # end, which webgpu does not reproduce). Values only: CPU's weight gradient for the indices past
    # that offset holds uninitialised memory.
    w = torch.randn(10, 5)
    idx, offs = _bags(9, 10, [0, 2, 5, 6])
    check(
        lambda ww: F.embedding_bag(idx.to(ww.device), ww, offs.to(ww.device), mode=mode, include_last_offset=True),
        w,
        grad=False,
    )


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_bag_per_sample_weights_and_freq(dtype):
    w, psw = torch.randn(8, 4), torch.randn(7)
    idx, offs = torch.tensor([1, 2, 1, 7, 1, 0, 2]), torch.tensor([0, 3, 3, 6])
    check(
        lambda ww, p: F.embedding_bag(
            idx.to(ww.device), ww, offs.to(ww.device), mode="sum", per_sample_weights=p, padding_idx=7
        ),
        w,
        psw,
        dtype=dtype,
    )
    for mode in ("sum", "mean"):
        # scale_grad_by_freq divides by each index's own frequency, as CUDA does and CPU's sparse path;
        # CPU's dense path divides by the frequency of another index (the i-th in sorted order).
        f = lambda ww, sparse=False: F.embedding_bag(
            idx.to(ww.device),
            ww,
            offs.to(ww.device),
            mode=mode,  # noqa
            scale_grad_by_freq=True,
            sparse=sparse,
        )
        check(f, w, dtype=dtype, grad=False)
        g = torch.randn(4, 4).to(dtype)
        ends = offs.tolist()[1:] + [len(idx)]
        ref = torch.zeros(8, 4)
        for b, (s0, e0) in enumerate(zip(offs.tolist(), ends)):
            for i in idx[s0:e0].tolist():
                ref[i] += g[b].float() / (e0 - s0 if mode == "mean" else 1) / (idx == i).sum()
        ww = w.to(dtype).to(DEV).requires_grad_()
        got = torch.autograd.grad(f(ww), ww, g.to(DEV))[0]
        torch.testing.assert_close(got.cpu().float(), ref, **TOL[dtype])


def test_embedding_bag_int32_noncontiguous_module():
    w = torch.randn(6, 10)[:, ::2]  # non-contiguous weight
    idx, offs = torch.tensor([5, 0, 0, 2], dtype=torch.int32), torch.tensor([0, 1], dtype=torch.int32)
    check(lambda ww: F.embedding_bag(idx.to(ww.device), ww, offs.to(ww.device), mode="max"), w)
    m = torch.nn.EmbeddingBag(6, 3, mode="mean")
    mw = torch.nn.EmbeddingBag(6, 3, mode="mean").to(DEV)
    mw.load_state_dict(m.state_dict())
    torch.testing.assert_close(mw(idx.to(DEV), offs.to(DEV)).cpu(), m(idx, offs))
    # no indices at all: every bag empty
    r = F.embedding_bag(
        torch.zeros(0, dtype=torch.long, device=DEV), w.to(DEV), torch.zeros(3, dtype=torch.long, device=DEV)
    )
    assert torch.equal(r.cpu(), torch.zeros(3, 5))


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_max_norm_renorms_rows_in_place(dtype):
    w = (torch.randn(7, 5) * 3).to(dtype)
    idx, offs = torch.tensor([1, 4, 1, 6, 0]), torch.tensor([0, 2])
    for p in (2.0, 1.0):
        wc, ww = w.clone(), w.to(DEV)
        yc = F.embedding_bag(idx, wc, offs, max_norm=1.5, norm_type=p)
        yw = F.embedding_bag(idx.to(DEV), ww, offs.to(DEV), max_norm=1.5, norm_type=p)
        torch.testing.assert_close(ww.cpu(), wc, **TOL[dtype])  # the rows named are renormed, the rest kept
        torch.testing.assert_close(yw.cpu(), yc, **TOL[dtype])
        assert not torch.equal(wc, w)
        ew = F.embedding(idx.to(DEV), w.to(DEV).clone(), max_norm=0.5)
        torch.testing.assert_close(ew.cpu(), F.embedding(idx, w.clone(), max_norm=0.5), **TOL[dtype])


def test_embedding_bag_bad_indices_and_offsets_raise():
    w = torch.randn(10, 3)
    for idx, offs in ([[1, 10], [0, 1]], [[1, -1], [0, 1]], [[1, 2], [1, 1]], [[1, 2], [0, 3]], [[1, 2, 3], [0, 2, 1]]):
        raises_like_cpu(lambda i, o, ww: F.embedding_bag(i, ww, o), torch.tensor(idx), torch.tensor(offs), w)
    # the device stays usable afterwards
    i, o = torch.tensor([1, 2]), torch.tensor([0, 1])
    torch.testing.assert_close(F.embedding_bag(i.to(DEV), w.to(DEV), o.to(DEV)).cpu(), F.embedding_bag(i, w, o))
    raises_like_cpu(
        lambda i, o, ww: F.embedding_bag(i, ww, o, mode="mean", per_sample_weights=torch.ones_like(ww[:2, 0])), i, o, w
    )
    raises_like_cpu(lambda i, o, ww: F.embedding_bag(i, ww, o), i.float(), o, w)


# ---- max_unpool -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool(dims, dtype):
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[dims]
    unpool = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[dims]
    x = torch.randn((2, 3) + (6, 5, 4)[:dims])
    _, ind = pool(x, 2, stride=2, return_indices=True)
    v = torch.randn(ind.shape)
    check(lambda a: unpool(a, ind.to(a.device), 2, stride=2, output_size=x.shape[2:]), v, dtype=dtype)


def test_max_unpool_repeated_indices_last_wins():
    # CPU writes a plane's inputs in order: the last input naming an output element wins. On a GPU
    # (as with CUDA) inputs naming one element race and any of them may win: there each element
    # must hold one of its candidates; on a CPU adapter (lavapipe, CI), CPU's exact result.
    v = torch.arange(2 * 12, dtype=torch.float32).reshape(2, 1, 3, 4)
    ind = torch.tensor([0, 5, 5, 0, 3, 3, 3, 1, 0, 2, 5, 5]).reshape(1, 1, 3, 4).repeat(2, 1, 1, 1)
    ref = F.max_unpool2d(v, ind, 2)
    out = F.max_unpool2d(v.to(DEV), ind.to(DEV), 2).cpu()
    flat_v, flat_i, flat_o = v.reshape(2, -1), ind.reshape(2, -1), out.reshape(2, -1)
    for n in range(2):
        for e in range(flat_o.shape[1]):
            cands = flat_v[n][flat_i[n] == e]
            assert (flat_o[n, e] == 0 and cands.numel() == 0) or bool((cands == flat_o[n, e]).any()), (n, e)
    if torch.webgpu.info()["adapter_type"] == "cpu":
        assert torch.equal(out, ref)
        # a non-contiguous input, and the gradient (a gather)
        check(lambda a: F.max_unpool2d(a, ind.to(a.device), 2), v.transpose(2, 3).contiguous().transpose(2, 3))


def test_max_unpool_errors():
    v = torch.randn(1, 1, 2, 2)
    raises_like_cpu(lambda a, i: F.max_unpool2d(a, i, 2), v, torch.tensor([0, 1, 2, 16]).reshape(1, 1, 2, 2))
    raises_like_cpu(lambda a, i: F.max_unpool2d(a, i, 2), v, torch.tensor([0, -1, 2, 3]).reshape(1, 1, 2, 2))
    raises_like_cpu(lambda a, i: F.max_unpool2d(a, i, 2), v, torch.zeros(1, 1, 2, 2, dtype=torch.int32))
    raises_like_cpu(lambda a, i: F.max_unpool2d(a, i, 2), v, torch.zeros(1, 1, 2, 3, dtype=torch.long))
    raises_like_cpu(lambda a, i: F.max_unpool3d(a, i, 2), torch.randn(1, 1, 1, 2, 2), torch.full((1, 1, 1, 2, 2), 64))
    # still usable
    i = torch.tensor([0, 1, 6, 7]).reshape(1, 1, 2, 2)
    assert torch.equal(F.max_unpool2d(v.to(DEV), i.to(DEV), 2).cpu(), F.max_unpool2d(v, i, 2))


# ---- channel_shuffle, renorm, cross -----------------------------------------------------------------


def test_channel_shuffle():
    for dt in FLOATS + [torch.int64, torch.uint8, torch.bool]:
        x = torch.randint(0, 2, (2, 6, 3, 2)).to(dt) if dt == torch.bool else torch.randn(2, 6, 3, 2).mul(9).to(dt)
        for t in (x, x.transpose(2, 3), x.contiguous(memory_format=torch.channels_last)):
            assert torch.equal(F.channel_shuffle(t.to(DEV), 3).cpu(), F.channel_shuffle(t, 3))
    raises_like_cpu(lambda a: F.channel_shuffle(a, 4), torch.randn(2, 6, 3))
    raises_like_cpu(lambda a: F.channel_shuffle(a, 2), torch.randn(2, 6))


@pytest.mark.parametrize("dtype", FLOATS)
def test_renorm(dtype):
    x = torch.randn(4, 5, 3) * 3
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 2.5), (3.5, -1, 0.5), (2, 2, 100.0)):
        # float32's backward: ATen's renorm_backward asks linalg_vector_norm for the accumulate type,
        # float64 on a PrivateUse1 device (CPU's rule), which the device cannot hold.
        check(lambda a: torch.renorm(a, p, dim, maxnorm), x, dtype=dtype, grad=dtype != torch.float32)
    xw = x.to(DEV).to(dtype)
    y = xw.clone().renorm_(2, 0, 1.0)
    torch.testing.assert_close(y.cpu().float(), torch.renorm(x.to(dtype).float(), 2, 0, 1.0), **TOL[dtype])
    out = torch.empty(0, device=DEV, dtype=dtype)
    torch.renorm(xw.transpose(0, 2), 2, 1, 1.0, out=out)
    torch.testing.assert_close(
        out.cpu().float(), torch.renorm(x.to(dtype).float().transpose(0, 2), 2, 1, 1.0), **TOL[dtype]
    )
    raises_like_cpu(lambda a: torch.renorm(a, -1, 0, 1.0), x)
    raises_like_cpu(lambda a: torch.renorm(a, 2, 0, 1.0), x[0, 0])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_cross(dtype):
    a, b = torch.randn(4, 3, 2) * 5, torch.randn(4, 3, 2) * 5
    if dtype.is_floating_point:
        check(lambda x, y: torch.linalg.cross(x, y, dim=1), a, b, dtype=dtype)
        check(lambda x, y: torch.cross(x, y, dim=1), a.transpose(0, 2).contiguous().transpose(0, 2), b[:1], dtype=dtype)
        return
    ai, bi = a.to(dtype), b.to(dtype)
    assert torch.equal(torch.linalg.cross(ai.to(DEV), bi.to(DEV), dim=1).cpu(), torch.linalg.cross(ai, bi, dim=1))
    out = torch.empty(0, dtype=dtype, device=DEV)
    torch.linalg.cross(ai.to(DEV).transpose(0, 1), bi.to(DEV).transpose(0, 1), dim=0, out=out)
    assert torch.equal(out.cpu(), torch.linalg.cross(ai.transpose(0, 1), bi.transpose(0, 1), dim=0))
    raises_like_cpu(lambda x, y: torch.linalg.cross(x, y, dim=2), ai, bi)


# ---- interpolate bicubic ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize(
    "size,scale", [((9, 13), None), ((3, 2), None), ((1, 1), None), (None, (2.5, 0.7)), (None, (1.0, 3.0))]
)
def test_interpolate_bicubic(size, scale, align, dtype):
    x = torch.randn(2, 3, 5, 6)
    check(
        lambda a: F.interpolate(a, size=size, scale_factor=scale, mode="bicubic", align_corners=align), x, dtype=dtype
    )


def test_interpolate_bicubic_noncontiguous_and_single_pixel():
    check(lambda a: F.interpolate(a, size=(7, 4), mode="bicubic"), torch.randn(2, 4, 6, 5).transpose(2, 3))
    check(lambda a: F.interpolate(a, size=(5, 3), mode="bicubic", align_corners=True), torch.randn(1, 2, 1, 1))
    check(
        lambda a: F.interpolate(a, scale_factor=0.5, mode="bicubic", recompute_scale_factor=False),
        torch.randn(1, 2, 9, 8),
    )


# ---- cdist / pdist ----------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, float("inf")])
def test_cdist(p):
    x1, x2 = torch.randn(2, 4, 5), torch.randn(3, 1, 6, 5)  # broadcast batch dims
    x2[0, 0, 1] = x1[1, 2]  # a zero distance
    for mode in ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"):
        check(
            lambda a, b: torch.cdist(a, b, p=p, compute_mode=mode),
            x1,
            x2,
            tol=dict(atol=2e-4, rtol=2e-4),
            grad=p != 0.5,
        )  # p < 1: the gradient is singular at 0
    check(
        lambda a, b: torch.cdist(a, b, p=p),
        x1.transpose(1, 2).contiguous().transpose(1, 2),
        x2[0],
        tol=dict(atol=2e-4, rtol=2e-4),
        grad=False,
    )


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 1.5, float("inf")])
def test_pdist(p):
    x = torch.randn(6, 4)
    x[3] = x[1]
    check(lambda a: F.pdist(a, p=p), x, tol=dict(atol=2e-4, rtol=2e-4))
    check(lambda a: F.pdist(a, p=p), torch.randn(1, 3), grad=False)


def test_cdist_pdist_errors():
    raises_like_cpu(lambda a, b: torch.cdist(a, b), torch.randn(3, 4), torch.randn(3, 5))
    raises_like_cpu(lambda a, b: torch.cdist(a, b, p=-1), torch.randn(3, 4), torch.randn(3, 4))
    raises_like_cpu(lambda a: F.pdist(a), torch.randn(3, 4, 2))


# --- weight norm (ATen's _weight_norm calls _weight_norm_interface off the CPU) ---


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", FLOATS)
def test_weight_norm_interface(dim, dtype):
    v, g = torch.randn(6, 4, 3), torch.rand(*[s if i == dim else 1 for i, s in enumerate((6, 4, 3))]) + 0.5
    if dim == -1:  # the norm over all of v (weight_norm(dim=None))
        g = torch.tensor(1.7)
    check(lambda v, g: torch._weight_norm(v, g, dim), v, g, dtype=dtype)
    w, n = torch._weight_norm_interface(v.to(DEV).to(dtype), g.to(DEV).to(dtype), dim)
    assert n.dtype == (torch.float32 if dtype == torch.float16 else dtype)  # CUDA keeps half norms in float
    if dim in (0, 2):  # CPU's interface takes the first or last dim only (ours any)
        wc, nc = torch._weight_norm_interface(v.to(dtype).float(), g.to(dtype).float(), dim)
        torch.testing.assert_close(n.float().cpu(), nc, **TOL[dtype])
        torch.testing.assert_close(w.float().cpu(), wc, **TOL[dtype])


def test_weight_norm_module_trains_like_cpu():
    """The weight-normed positional convolution of wav2vec2-style models (dim=2), forward and backward."""
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(8, 8, 5, padding=2, groups=2), dim=2)
    convd = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(8, 8, 5, padding=2, groups=2), dim=2)
    convd.load_state_dict(conv.state_dict())
    convd.to(DEV)
    x = torch.randn(2, 8, 20)
    conv(x).square().sum().backward()
    convd(x.to(DEV)).square().sum().backward()
    for p, q in zip(conv.parameters(), convd.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-4, rtol=1e-4)


def test_weight_norm_interface_bad_dim():
    with pytest.raises(RuntimeError, match="out of range"):
        torch._weight_norm_interface(torch.randn(3, 4, device=DEV), torch.randn(3, 1, device=DEV), 5)
