# Matrix products against CPU: the tiled kernel around its tile edges (medium, large and small-M
# tiles, split-K), the mat-vec kernel (rows and columns shapes, split-K), the integer kernel (exact,
# wrap-around, int64), transposed / offset / stepped operands, every broadcasting case of matmul,
# beta/alpha (beta=0 ignores NaN), in-place and out=, empty sizes, composites, gradients, errors.
import os

import pytest
import torch
from webgpu_env import DEV

g = torch.Generator().manual_seed(0)


def rnd(*shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(*shape, generator=g).to(dtype)
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, generator=g).to(dtype)
    if dtype == torch.int64:
        return torch.randint(-(2**40), 2**40, shape, generator=g)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000) + 1, shape, generator=g).to(dtype)


def tol(dtype, k=64):
    if dtype == torch.float32:
        return dict(rtol=1e-4, atol=1e-4 * max(1.0, k**0.5))
    if dtype == torch.float16:
        return dict(rtol=1e-2, atol=1e-2 * max(1.0, k**0.5))
    return dict(rtol=2e-2, atol=4e-2 * max(1.0, k**0.5))


def check(fn, *xs, k=64):
    c = fn(*xs)
    d = fn(*[x.to(DEV) if isinstance(x, torch.Tensor) else x for x in xs])
    assert d.device.type == DEV
    d = d.cpu()
    assert d.dtype == c.dtype and d.shape == c.shape, (d.dtype, c.dtype, d.shape, c.shape)
    if c.is_floating_point():
        torch.testing.assert_close(d, c, equal_nan=True, **tol(c.dtype, k))
    else:
        assert torch.equal(d, c)


# --------------------------------------------------------------------------- the tiled kernel

# (M, K, N) around the 64x64x16 tile's edges and the 16x128 small-M tile's (tall narrow products run transposed).
EDGE_SHAPES = [
    (1, 1, 2),
    (2, 1, 2),
    (3, 5, 7),
    (15, 16, 17),
    (64, 16, 64),
    (65, 17, 63),
    (63, 33, 129),
    (130, 31, 66),
    (16, 40, 131),
    (17, 9, 128),
    (5, 100, 4),
    (130, 40, 7),
]  # last: tall, narrow


@pytest.mark.parametrize("mkn", EDGE_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mm_edges(mkn):
    M, K, N = mkn
    check(torch.mm, rnd(M, K), rnd(K, N), k=K)


def test_mm_large_tile():
    # >= 120 tiles of 128x128 selects the large configuration: scalar loads (N not a multiple of 4),
    # then vec4 loads and stores everywhere, with a vec4-read bias.
    check(torch.mm, rnd(1410, 20), rnd(20, 1410), k=20)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0.5), rnd(1408), rnd(1408, 20), rnd(20, 1408), k=20)


def test_mm_huge_tile():
    # >= 256 tiles of 128x256 select the huge configuration (512 invocations): ragged edges in both
    # dimensions with scalar loads, then aligned vec4 operands with a bias.
    check(torch.mm, rnd(2049, 12), rnd(12, 4097), k=12)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0.5), rnd(4096), rnd(2048, 12), rnd(12, 4096), k=12)


@pytest.mark.parametrize("layout", ["tn", "nt", "tt", "offset", "stepped", "expanded"])
def test_mm_layouts(layout):
    M, K, N = 67, 45, 70
    if layout == "tn":
        check(lambda a, b: a.t() @ b, rnd(K, M), rnd(K, N), k=K)
    elif layout == "nt":
        check(lambda a, b: a @ b.t(), rnd(M, K), rnd(N, K), k=K)
    elif layout == "tt":
        check(lambda a, b: a.t() @ b.t(), rnd(K, M), rnd(N, K), k=K)
    elif layout == "offset":  # storage offsets that break vec4 alignment
        check(lambda a, b: torch.mm(a[1:, 3:], b[2:, 1:]), rnd(M + 1, K + 3), rnd(K + 2, N + 1), k=K)
    elif layout == "stepped":
        check(lambda a, b: torch.mm(a[::2, ::3], b[::2, 1::2]), rnd(2 * M, 3 * K), rnd(2 * K, 2 * N), k=K)
    else:  # stride-0 operands
        check(lambda a, b: torch.mm(a.expand(M, K), b.expand(K, N)), rnd(1, K), rnd(K, 1), k=K)


def test_mm_split_k():
    check(torch.mm, rnd(50, 3000), rnd(3000, 40), k=3000)  # few tiles, long K
    check(torch.mm, rnd(8, 2048), rnd(2048, 300), k=2048)  # small M


def test_mm_same_operand_and_aliasing_out():
    a = rnd(40, 40)
    check(lambda x: x @ x.t(), a, k=40)
    d = a.to(DEV)
    torch.mm(d, d, out=d)  # out aliases both operands: written through a temporary
    torch.testing.assert_close(d.cpu(), a @ a, **tol(torch.float32, 40))


def test_tile_shapes_from_environment():
    old = os.environ.get("TORCH_WEBGPU_MATMUL_TILES")
    os.environ["TORCH_WEBGPU_MATMUL_TILES"] = "M=32x32x8x4x4,S=16x32x8x4x4"
    try:
        check(torch.mm, rnd(70, 37), rnd(37, 45), k=37)
        check(torch.mm, rnd(9, 37), rnd(37, 45), k=37)
        # a tile needing more workgroup memory than the adapter has falls back to one that fits
        os.environ["TORCH_WEBGPU_MATMUL_TILES"] = "M=128x128x256x8x8"
        check(torch.mm, rnd(70, 37), rnd(37, 45), k=37)
        os.environ["TORCH_WEBGPU_MATMUL_TILES"] = "M=32x32x6x4x4"
        with pytest.raises(RuntimeError, match="TORCH_WEBGPU_MATMUL_TILES"):
            torch.mm(rnd(70, 37).to(DEV), rnd(37, 45).to(DEV))
    finally:
        if old is None:
            os.environ.pop("TORCH_WEBGPU_MATMUL_TILES", None)
        else:
            os.environ["TORCH_WEBGPU_MATMUL_TILES"] = old


# --------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_types(dtype):
    check(torch.mm, rnd(33, 70, dtype=dtype), rnd(70, 65, dtype=dtype), k=70)
    check(lambda a, b: a.t() @ b, rnd(70, 33, dtype=dtype), rnd(70, 65, dtype=dtype), k=70)
    check(torch.mv, rnd(33, 300, dtype=dtype), rnd(300, dtype=dtype), k=300)
    check(torch.dot, rnd(500, dtype=dtype), rnd(500, dtype=dtype), k=500)
    check(
        lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2),
        rnd(20, dtype=dtype),
        rnd(9, 30, dtype=dtype),
        rnd(30, 20, dtype=dtype),
        k=30,
    )
    check(torch.bmm, rnd(3, 9, 30, dtype=dtype), rnd(3, 30, 20, dtype=dtype), k=30)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8], ids=str)
def test_integers_exact(dtype):
    # Products overflow the narrow types: CPU wraps, so must we.
    check(torch.mm, rnd(19, 37, dtype=dtype), rnd(37, 21, dtype=dtype))
    check(lambda a, b: a.t() @ b, rnd(37, 19, dtype=dtype), rnd(37, 21, dtype=dtype))
    check(torch.mv, rnd(19, 37, dtype=dtype), rnd(37, dtype=dtype))
    check(torch.dot, rnd(100, dtype=dtype), rnd(100, dtype=dtype))
    check(
        lambda c, a, b: torch.addmm(c, a, b, beta=3, alpha=-2),
        rnd(21, dtype=dtype),
        rnd(19, 37, dtype=dtype),
        rnd(37, 21, dtype=dtype),
    )
    check(torch.bmm, rnd(2, 5, 7, dtype=dtype), rnd(2, 7, 3, dtype=dtype))


def test_int64_beyond_32_bits():
    a = torch.tensor([[2**40 + 3, -(2**35)], [7, 2**62]])
    b = torch.tensor([[2**20 + 1, 5], [-3, 2]])
    check(torch.mm, a, b)


def test_bool_refused_like_cpu():
    a = torch.ones(3, 3, dtype=torch.bool)
    with pytest.raises(RuntimeError):
        torch.mm(a, a)
    with pytest.raises(RuntimeError):
        torch.mm(a.to(DEV), a.to(DEV))


# --------------------------------------------------------------------------- mat-vec


def test_mv_dot_vdot():
    check(torch.mv, rnd(100, 37), rnd(37))
    check(torch.mv, rnd(37, 100).t(), rnd(37))  # columns shape
    check(lambda a, v: torch.mv(a[::2, 1::3], v[::2]), rnd(60, 90), rnd(60))  # strided, scalar loads
    check(torch.mv, rnd(30, 8192), rnd(8192), k=8192)  # split-K
    check(torch.mv, rnd(8192, 30).t(), rnd(8192), k=8192)
    check(torch.dot, rnd(100000), rnd(100000), k=100000)
    check(lambda x, y: torch.dot(x[::3], y[::2]), rnd(3000), rnd(2000), k=1000)
    check(torch.vdot, rnd(77), rnd(77))
    check(lambda a, b: a @ b, rnd(1, 300), rnd(300, 1001), k=300)  # M == 1
    check(lambda x, w: torch.nn.functional.linear(x, w), rnd(1, 300), rnd(1001, 300), k=300)  # M == 1, B^T
    check(torch.bmm, rnd(4, 1, 50), rnd(4, 50, 33), k=50)  # batched M == 1
    check(torch.bmm, rnd(4, 33, 50), rnd(4, 50, 1), k=50)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_mv_unrolled_and_split(dtype):
    # Lengths past the unrolled loops' reach in each size class (rows: 16..256 invocations per row;
    # columns), ragged tails, split-K parts of problems over 2^20 products, addmv's beta.
    for k in (200, 1000, 1999, 4100):
        check(lambda x, w: torch.nn.functional.linear(x, w), rnd(1, k, dtype=dtype), rnd(300, k, dtype=dtype), k=k)
        check(lambda a, b: a @ b, rnd(1, k, dtype=dtype), rnd(k, 260, dtype=dtype), k=k)
    check(
        lambda x, w: torch.nn.functional.linear(x, w),
        rnd(2, 4096, dtype=dtype)[:1],
        rnd(640, 4096, dtype=dtype),
        k=4096,
    )
    check(lambda a, b: a @ b, rnd(1, 4096, dtype=dtype), rnd(4096, 512, dtype=dtype), k=4096)
    check(
        lambda c, a, v: torch.addmv(c, a, v, beta=0.5, alpha=2),
        rnd(700, dtype=dtype),
        rnd(700, 3000, dtype=dtype),
        rnd(3000, dtype=dtype),
        k=3000,
    )


def test_gemv_and_int_gemm_grid_folded_past_65535_workgroups():
    # Grids past 65535 workgroups fold into rows of 65535 and the last row's spare workgroups run
    # too. The mat-vec kernel's spares took a split-K part past the last (an empty k range) and
    # stored alpha * 0 over real outputs of a wrapped batch (a race: thousands of zeros), and the
    # integer GEMM's wrote past its output (over the next batches of the destination's storage).
    check(torch.bmm, rnd(70000, 1, 3), rnd(70000, 3, 5), k=3)  # batched M == 1, 70000 workgroups
    check(torch.bmm, rnd(70000, 5, 3), rnd(70000, 3, 1), k=3)  # batched N == 1
    check(torch.mv, rnd(65535 * 16 + 17, 3), rnd(3), k=3)  # 16 rows per workgroup
    a, b = rnd(70000, 3, 5, dtype=torch.int32), rnd(70000, 5, 4, dtype=torch.int32)
    big = torch.full((2 * 70000, 3, 4), 5, dtype=torch.int32, device=DEV)
    torch.bmm(a.to(DEV), b.to(DEV), out=big[:70000])
    want = torch.cat([torch.bmm(a, b), torch.full((70000, 3, 4), 5, dtype=torch.int32)])
    assert torch.equal(big.cpu(), want)


@pytest.mark.parametrize("strip", ["1", "0"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mv_column_strips(strip, dtype, monkeypatch):
    # x @ W with W contiguous along the outputs: narrow strips (4 or 16 invocations across, the
    # whole of k in one workgroup, no split-K) where they give enough workgroups, else 64 across
    # with split-K (TORCH_WEBGPU_GEMV_STRIP=0 forces those); ragged J, batches, addmm's beta.
    monkeypatch.setenv("TORCH_WEBGPU_GEMV_STRIP", strip)
    check(lambda a, b: a @ b, rnd(1, 4096, dtype=dtype), rnd(4096, 4096, dtype=dtype), k=4096)
    check(lambda a, b: a @ b, rnd(1, 1000, dtype=dtype), rnd(1000, 4099, dtype=dtype), k=1000)
    check(torch.bmm, rnd(3, 1, 2000, dtype=dtype), rnd(3, 2000, 1030, dtype=dtype), k=2000)
    # x's block 16-byte aligned but k ragged: rows past the last whole block of 4 (the block path's tail)
    for k in (1999, 4097, 7):
        check(lambda a, b: a[:, :k] @ b, rnd(1, k + 4 - k % 4, dtype=dtype), rnd(k, 300, dtype=dtype), k=k)
    check(
        lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2),
        rnd(2050, dtype=dtype),
        rnd(1, 1500, dtype=dtype),
        rnd(1500, 2050, dtype=dtype),
        k=1500,
    )


# --------------------------------------------------------------------------- beta / alpha / out / in-place / empty


def test_addmm_beta_alpha():
    c, a, b = rnd(70, 90), rnd(70, 40), rnd(40, 90)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=-2), c, a, b)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=-2), rnd(90), a, b)  # bias broadcast
    check(lambda c, a, b: torch.addmm(c, a, b, beta=1.5), rnd(70, 1), a, b)
    check(lambda c, a, b: torch.addmm(c, a, b, alpha=0), c, a, b)
    nan = torch.full((70, 90), float("nan"))
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0), nan, a, b)  # beta=0 ignores NaN
    check(lambda c, a, b: torch.addmv(c, a, b, beta=0), torch.full((70,), float("nan")), a, rnd(40))
    check(
        lambda c, a, b: torch.baddbmm(c, a, b, beta=0), torch.full((3, 7, 9), float("nan")), rnd(3, 7, 5), rnd(3, 5, 9)
    )


def test_addmm_split_k_with_bias():
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0.25, alpha=3), rnd(40), rnd(50, 3000), rnd(3000, 40), k=3000)


def test_inplace_and_out():
    check(lambda c, a, b: c.clone().addmm_(a, b, beta=2, alpha=0.5), rnd(30, 20), rnd(30, 10), rnd(10, 20))
    check(lambda c, a, b: c.clone().addmv_(a, b, beta=2, alpha=0.5), rnd(30), rnd(30, 10), rnd(10))
    check(lambda c, a, b: c.clone().baddbmm_(a, b, beta=2), rnd(2, 3, 4), rnd(2, 3, 5), rnd(2, 5, 4))
    check(lambda c, a, b: c.clone().addbmm_(a, b, beta=2, alpha=-1), rnd(3, 4), rnd(2, 3, 5), rnd(2, 5, 4))
    # a transposed view as the in-place target
    check(lambda c, a, b: c.clone().t().addmm_(a, b), rnd(20, 30), rnd(30, 10), rnd(10, 20))
    # out= into a non-contiguous view, and into a tensor that must be resized
    check(lambda a, b: torch.mm(a, b, out=torch.empty(9, 7, device=a.device).t()), rnd(7, 5), rnd(5, 9))
    check(lambda a, b: torch.mm(a, b, out=torch.empty(0, device=a.device)), rnd(7, 5), rnd(5, 9))
    check(lambda a, b: torch.bmm(a, b, out=torch.empty(0, device=a.device)), rnd(2, 7, 5), rnd(2, 5, 9))
    check(
        lambda a, b: torch.addbmm(torch.zeros(7, 9, device=a.device), a, b, out=torch.empty(0, device=a.device)),
        rnd(2, 7, 5),
        rnd(2, 5, 9),
    )
    check(lambda a, b: torch.dot(a, b, out=torch.empty(3, device=a.device)), rnd(5), rnd(5))
    check(lambda a, b: torch.mv(a, b, out=torch.empty(0, device=a.device)), rnd(5, 4), rnd(4))


def test_empty():
    check(torch.mm, rnd(0, 5), rnd(5, 3))
    check(torch.mm, rnd(4, 0), rnd(0, 3))  # K = 0: zeros
    check(lambda c, a, b: torch.addmm(c, a, b, beta=3), rnd(4, 3), rnd(4, 0), rnd(0, 3))  # beta * input
    check(lambda c, a, b: torch.addmv(c, a, b, beta=-2), rnd(4), rnd(4, 0), rnd(0))
    check(torch.bmm, rnd(0, 4, 5), rnd(0, 5, 3))
    check(torch.bmm, rnd(2, 4, 0), rnd(2, 0, 3))
    check(torch.dot, rnd(0), rnd(0))
    check(lambda c, a, b: torch.addbmm(c, a, b, beta=2), rnd(4, 3), rnd(0, 4, 5), rnd(0, 5, 3))


# --------------------------------------------------------------------------- matmul broadcasting and composites

MATMUL = {
    "1d@1d": ((7,), (7,)),
    "2d@1d": ((5, 7), (7,)),
    "1d@2d": ((7,), (7, 6)),
    "3d@1d": ((3, 5, 7), (7,)),
    "1d@3d": ((7,), (3, 7, 6)),
    "3d@2d": ((3, 5, 7), (7, 6)),
    "2d@3d": ((5, 7), (3, 7, 6)),
    "4d@3d_bcast": ((2, 1, 5, 7), (3, 7, 6)),
    "4d@4d_bcast": ((2, 1, 5, 7), (1, 3, 7, 6)),
}


@pytest.mark.parametrize("name", list(MATMUL))
def test_matmul_broadcasting(name):
    sa, sb = MATMUL[name]
    check(torch.matmul, rnd(*sa), rnd(*sb))


def test_composites():
    check(lambda x, w, b: torch.nn.functional.linear(x, w, b), rnd(3, 4, 20), rnd(11, 20), rnd(11))
    check(lambda x, w: torch.nn.functional.linear(x, w), rnd(6, 20), rnd(11, 20))
    check(lambda a, b: torch.einsum("bij,bjk->bik", a, b), rnd(3, 7, 5), rnd(3, 5, 9))
    check(lambda a, b: torch.einsum("ij,kj->ik", a, b), rnd(7, 5), rnd(9, 5))
    check(lambda a, b: torch.tensordot(a, b, dims=([1, 2], [0, 1])), rnd(3, 7, 5), rnd(7, 5, 9))
    check(torch.outer, rnd(7), rnd(9))
    check(torch.inner, rnd(3, 7), rnd(4, 7))
    check(lambda c, a, b: torch.addr(c, a, b, beta=0.5, alpha=2), rnd(7, 9), rnd(7), rnd(9))
    check(lambda a, b, c: torch.linalg.multi_dot([a, b, c]), rnd(5, 7), rnd(7, 9), rnd(9, 3))
    check(lambda a, b, c: torch.chain_matmul(a, b, c), rnd(5, 7), rnd(7, 9), rnd(9, 3))
    check(lambda a, b: a.__rmatmul__(b), rnd(7, 6), rnd(5, 7))
    for gelu in (False, True):
        check(lambda c, a, b: torch._addmm_activation(c, a, b, beta=0.5, use_gelu=gelu), rnd(6), rnd(5, 7), rnd(7, 6))


def test_gradients():
    a, b, c = rnd(13, 17), rnd(17, 11), rnd(11)
    outs = []
    for dev in ("cpu", DEV):
        ta, tb, tc = (t.detach().clone().to(dev).requires_grad_() for t in (a, b, c))
        y = torch.addmm(tc, ta, tb, beta=0.5, alpha=2)
        z = (y * y).sum() + torch.mv(ta, tb[:, 0]).sum() + torch.matmul(ta[0], tb).sum()
        z.backward()
        outs.append([t.grad.cpu() for t in (ta, tb, tc)])
    for x, y in zip(*outs):
        torch.testing.assert_close(y, x, rtol=1e-4, atol=1e-3)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "case",
    [
        "mm_shape",
        "mm_dim",
        "mm_dtype",
        "bmm_batch",
        "dot_dim",
        "dot_size",
        "dot_dtype",
        "mv_shape",
        "addmm_self",
        "addbmm_batch",
    ],
)
def test_errors_like_cpu(case):
    f = {
        "mm_shape": lambda d: torch.mm(torch.ones(2, 3, device=d), torch.ones(4, 2, device=d)),
        "mm_dim": lambda d: torch.mm(torch.ones(2, 3, device=d), torch.ones(3, device=d)),
        "mm_dtype": lambda d: torch.mm(torch.ones(2, 3, device=d), torch.ones(3, 2, device=d, dtype=torch.int32)),
        "bmm_batch": lambda d: torch.bmm(torch.ones(2, 2, 3, device=d), torch.ones(3, 3, 2, device=d)),
        "dot_dim": lambda d: torch.dot(torch.ones(2, 3, device=d), torch.ones(6, device=d)),
        "dot_size": lambda d: torch.dot(torch.ones(3, device=d), torch.ones(4, device=d)),
        "dot_dtype": lambda d: torch.dot(torch.ones(3, device=d), torch.ones(3, device=d, dtype=torch.half)),
        "mv_shape": lambda d: torch.mv(torch.ones(2, 3, device=d), torch.ones(4, device=d)),
        "addmm_self": lambda d: torch.addmm(
            torch.ones(5, device=d), torch.ones(2, 3, device=d), torch.ones(3, 4, device=d)
        ),
        "addbmm_batch": lambda d: torch.addbmm(
            torch.ones(2, 2, device=d), torch.ones(2, 2, 3, device=d), torch.ones(3, 3, 2, device=d)
        ),
    }[case]
    with pytest.raises(RuntimeError) as cpu_err:
        f("cpu")
    with pytest.raises(type(cpu_err.value)):
        f(DEV)
