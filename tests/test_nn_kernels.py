"""Every kernel variant of the NN op families (pool, upsample, unpool, fold, grid_sample,
embedding_bag, distance, pad, norm, softmax, nll) run once against CPU, values and gradients: each
variant assembles its own WGSL and named parameters (a parameter the kernel does not read, or one it
reads and the launch does not set, raises at pipeline build), including the variants the other files
reach only through OpInfo's samples (weight-only norms, every cdist p, divisor_override, integer
pools, nll's weight and reductions)."""

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu  # noqa: F401


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def check(f, *inputs, grad=True, nograd=(), tol=1e-4):
    """f on webgpu against f on CPU: the outputs and the gradients of every floating input."""

    def leaves(device):
        return [
            t.detach().to(device).requires_grad_(grad and t.is_floating_point() and i not in nograd)
            if isinstance(t, torch.Tensor)
            else t
            for i, t in enumerate(inputs)
        ]

    cin, win = leaves("cpu"), leaves(DEV)
    yc, yw = f(*cin), f(*win)
    yc, yw = (yc, yw) if isinstance(yc, tuple) else ((yc,), (yw,))
    for a, b in zip(yw, yc):
        assert a.device.type == DEV
        torch.testing.assert_close(a.cpu(), b, atol=tol, rtol=tol)
    if not grad:
        return
    outs = [i for i, y in enumerate(yc) if y.is_floating_point() and y.requires_grad]
    gs = [torch.randn(yc[i].shape) for i in outs]
    ps = [i for i, t in enumerate(cin) if isinstance(t, torch.Tensor) and t.requires_grad]
    gc = torch.autograd.grad([yc[i] for i in outs], [cin[i] for i in ps], gs)
    gw = torch.autograd.grad([yw[i] for i in outs], [win[i] for i in ps], [g.to(DEV) for g in gs])
    for a, b in zip(gw, gc):
        torch.testing.assert_close(a.cpu(), b, atol=tol, rtol=tol)


X4, X5 = (2, 3, 9, 8), (2, 2, 5, 6, 7)


@pytest.mark.parametrize(
    "case", ["max2d", "max3d", "adaptive_max", "avg", "avg_divisor", "avg3d_pad", "adaptive_avg", "adaptive_avg3d"]
)
def test_pools(case):
    x4, x5 = torch.randn(X4), torch.randn(X5)
    f, x = {
        "max2d": (lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2, return_indices=True), x4),
        "max3d": (lambda x: F.max_pool3d(x, 2, return_indices=True), x5),
        "adaptive_max": (lambda x: F.adaptive_max_pool2d(x, (4, 3), return_indices=True), x4),
        "avg": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), x4),
        "avg_divisor": (lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=5), x4),
        "avg3d_pad": (lambda x: F.avg_pool3d(x, 2, padding=1, count_include_pad=True), x5),
        "adaptive_avg": (lambda x: F.adaptive_avg_pool2d(x, (4, 5)), x4),
        "adaptive_avg3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 4, 5)), x5),
    }[case]
    check(f, x)


def test_integer_pools():
    x = torch.randint(-50, 50, (2, 3, 6, 6))
    check(lambda x: F.max_pool2d(x, 2), x, grad=False)
    check(lambda x: F.avg_pool2d(x, 2), x, grad=False)


@pytest.mark.parametrize(
    "mode, align",
    [
        ("nearest", None),
        ("nearest-exact", None),
        ("bilinear", False),
        ("bilinear", True),
        ("bicubic", False),
        ("bicubic", True),
    ],
)
def test_interpolate(mode, align):
    check(lambda x: F.interpolate(x, size=(13, 5), mode=mode, align_corners=align), torch.randn(X4))


def test_interpolate_trilinear_and_bytes():
    check(lambda x: F.interpolate(x, scale_factor=1.7, mode="trilinear"), torch.randn(X5))
    check(
        lambda x: F.interpolate(x, scale_factor=2), torch.randint(0, 255, (1, 2, 3, 4), dtype=torch.uint8), grad=False
    )


def test_unpool_unfold_fold():
    o, i = F.max_pool2d(torch.randn(X4), 2, return_indices=True)
    check(lambda a, b: F.max_unpool2d(a, b, 2), o, i)
    check(lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), torch.randn(X4))
    check(lambda x: F.fold(x, (7, 8), (2, 2), padding=1), torch.randn(2, 12, 72))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample(mode):
    g2, g3 = torch.rand(2, 4, 5, 2) * 2.2 - 1.1, torch.rand(2, 3, 4, 5, 3) * 2.2 - 1.1
    for pad in ["zeros", "border", "reflection"]:
        check(
            lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=pad, align_corners=False),
            torch.randn(X4),
            g2,
            tol=1e-3,
        )
    check(lambda a, b: F.grid_sample(a, b, align_corners=True), torch.randn(X5), g3, nograd=(0,), tol=1e-3)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    idx, off = torch.randint(0, 10, (7,)), torch.tensor([0, 2, 2, 5])
    check(
        lambda w: F.embedding_bag(idx.to(w.device), w, off.to(w.device), mode=mode, padding_idx=3), torch.randn(10, 4)
    )
    if mode == "sum":
        check(
            lambda w, p: F.embedding_bag(idx.to(w.device), w, off.to(w.device), mode="sum", per_sample_weights=p),
            torch.randn(10, 4),
            torch.rand(7),
        )


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, float("inf"), 1.5])
def test_distances(p):
    check(
        lambda u, v: torch.cdist(u, v, p=p, compute_mode="donot_use_mm_for_euclid_dist"),
        torch.randn(2, 5, 4),
        torch.randn(2, 6, 4),
        tol=1e-3,
    )
    check(lambda u: F.pdist(u, p=p), torch.randn(6, 4), tol=1e-3)


def test_pad_backward():
    check(lambda x: F.pad(x, (2, 3), mode="reflect"), torch.randn(2, 3, 7))
    check(lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), torch.randn(X4))
    check(lambda x: F.pad(x, (2, 1, 1, 2, 0, 1), mode="replicate"), torch.randn(X5))


@pytest.mark.parametrize("affine", ["", "w", "wb"])
def test_norms(affine):
    def params(n):
        return [torch.randn(n) for _ in affine]

    check(lambda x, *p: F.layer_norm(x, (8,), *p), torch.randn(X4), *params(8))
    check(lambda x, *p: F.layer_norm(x, (1100,), *p), torch.randn(3, 1100), *params(1100), tol=1e-3)
    check(lambda x, *p: F.group_norm(x, 2, *p), torch.randn(2, 4, 5, 3), *params(4))


@pytest.mark.parametrize("dim, size", [(-1, X4), (1, X4), (-1, (3, 1500))])
def test_softmax(dim, size):
    check(lambda x: torch.softmax(x, dim), torch.randn(size))
    check(lambda x: torch.log_softmax(x, dim), torch.randn(size))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll(reduction):
    t = torch.randint(0, 5, (6,))
    t[1] = -100
    x = torch.randn(6, 5).log_softmax(1)
    check(lambda x: F.nll_loss(x, t.to(x.device), reduction=reduction), x)
    check(lambda x, w: F.nll_loss(x, t.to(x.device), w, reduction=reduction), x, torch.rand(5), nograd=(1,))
    t2 = torch.randint(0, 3, (2, 4, 5))
    check(lambda x: F.nll_loss(x, t2.to(x.device), reduction=reduction), torch.randn(2, 3, 4, 5))
