"""Half-precision GEMM on subgroup matrices (tensor cores), ops/linalg.cpp sg_gemm.

The plan tests run on any adapter: the planner is a pure function of an adapter's subgroup-matrix
configs and limits (here the H200's, as Dawn reports them). The kernel tests need an adapter with an
f16 subgroup-matrix config (NVIDIA with a current Dawn); CI's lavapipe has none, so there they check
that f16 products take the FMA kernels and stay right, and the subgroup-matrix tests skip. They ran
on the GPU machine (see the closing note of the tensor-core issue).
"""

import os
import subprocess
import sys

import pytest
import torch
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

_C = torch_webgpu._C

# What Dawn reports on an H200 (NVIDIA Vulkan driver): f16 -> f32/f16 and i8 -> i32 configs, subgroup 32.
H200 = [
    dict(component="f16", result="f32", M=16, N=16, K=16, min_subgroup_size=32, max_subgroup_size=32),
    dict(component="f16", result="f16", M=16, N=16, K=16, min_subgroup_size=32, max_subgroup_size=32),
    dict(component="f16", result="f32", M=16, N=8, K=16, min_subgroup_size=32, max_subgroup_size=32),
    dict(component="f16", result="f32", M=16, N=8, K=8, min_subgroup_size=32, max_subgroup_size=32),
    dict(component="i8", result="i32", M=16, N=16, K=32, min_subgroup_size=32, max_subgroup_size=32),
]
LIMITS = dict(wg_storage=49152, max_invocations=1024)


def plan(configs, M, N, K, dtype=torch.float16, batch=1, has_f16=True, **limits):
    lim = dict(LIMITS, **limits)
    return _C._sg_gemm_plan(configs, has_f16, lim["wg_storage"], lim["max_invocations"], dtype, batch, M, N, K)


def info():
    return torch.webgpu.info()


def has_sg():
    i = info()
    return "chromium-experimental-subgroup-matrix" in i["features"] and any(
        c["component"] == "f16" and c["result"] == "f32" for c in i["subgroup_matrix_configs"]
    )


# ----------------------------------------------------------------------------- the plan


def test_plan_large_square_uses_matrix_units():
    p = plan(H200, 4096, 4096, 4096)
    assert p["use"] == "1", p
    assert p["config"] == "16x16x16" and p["subgroup"] == "32"
    assert p["tile"] == "256x128x32" and p["splits"] == "1"
    assert p["stage"] == "2"  # two result matrices staged per round: 30 KiB of tiles + 16 KiB fit 48 KiB
    assert int(p["workgroups"]) == 16 * 32


def test_plan_short_products_avoid_padded_tiles():
    # A convolution's GEMM form: 32 images of W [64 x 576] @ columns [576 x 4096]. 256-row tiles
    # would do 4x the work; the narrow class (64 x 128 in 8 subgroups of 64 x 16) fits M exactly.
    p = plan(H200, 64, 4096, 576, batch=32)
    assert p["use"] == "1" and p["tile"] == "64x128x32" and p["subgroups"] == "1x8", p
    # 128 rows: the medium class (4 subgroups of 32 x 64).
    p = plan(H200, 128, 4096, 576, batch=32)
    assert p["use"] == "1" and p["tile"] == "64x128x32" and p["subgroups"] == "2x2", p
    # 4096^3 keeps the large class; 4096 x 96 (padding 128/96 > 1.25) does not.
    assert plan(H200, 4096, 4096, 4096)["tile"] == "256x128x32"
    assert plan(H200, 4096, 96, 4096)["tile"] != "256x128x32"


def test_plan_small_problem_takes_small_tiles_and_split_k():
    p = plan(H200, 128, 768, 768)
    assert p["use"] == "1" and p["tile"].startswith("32x32"), p
    # Few tiles and a long K: split-K fills the GPU.
    q = plan(H200, 64, 64, 8192)
    assert q["use"] == "1" and int(q["splits"]) > 1, q


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.int8])
def test_plan_other_dtypes_keep_fma(dtype):
    p = plan(H200, 1024, 1024, 1024, dtype=dtype)
    assert p["use"] == "0" and "float16" in p["why"]


def test_plan_needs_configs_f16_and_fixed_subgroups():
    assert plan([], 1024, 1024, 1024)["use"] == "0"
    assert plan(H200, 1024, 1024, 1024, has_f16=False)["why"] == "no shader-f16"
    varying = [dict(H200[0], min_subgroup_size=16, max_subgroup_size=64)]
    assert plan(varying, 1024, 1024, 1024)["use"] == "0"
    only_int = [H200[4]]
    assert plan(only_int, 1024, 1024, 1024)["use"] == "0"


def test_plan_tiny_and_limits():
    assert plan(H200, 8, 1024, 1024)["use"] == "0"  # smaller than one matrix: FMA small-M path
    assert plan(H200, 1024, 1024, 1024, wg_storage=4096)["use"] == "0"
    # A smaller workgroup-memory budget still fits the small tiles (single-buffered if need be).
    p = plan(H200, 4096, 4096, 4096, wg_storage=16384)
    assert p["use"] == "1" and p["tile"] != "128x128x32", p


def test_plan_picks_16x8_when_it_is_the_only_config():
    p = plan([H200[2]], 1024, 1024, 1024)
    assert p["use"] == "1" and p["config"] == "16x8x16", p


def _plan_in_subprocess(env_extra):
    code = (
        "import torch, torch_webgpu\n"
        f"print(torch_webgpu._C._sg_gemm_plan({H200!r}, True, 49152, 1024, torch.float16, 1, 4096, 4096, 4096))"
    )
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_plan_env_off_and_tile_override():
    r = _plan_in_subprocess({"TORCH_WEBGPU_MATMUL_SG": "0"})
    assert r.returncode == 0, r.stderr
    assert "'use': '0'" in r.stdout and "TORCH_WEBGPU_MATMUL_SG=0" in r.stdout
    r = _plan_in_subprocess({"TORCH_WEBGPU_MATMUL_SG_TILES": "L=2x2x4x4x64"})
    assert r.returncode == 0, r.stderr
    assert "'tile': '128x128x64'" in r.stdout, r.stdout
    code = (
        "import torch, torch_webgpu\n"
        f"print(torch_webgpu._C._sg_gemm_plan({H200!r}, True, 49152, 1024, torch.float16, 32, 64, 4096, 576))"
    )
    env = dict(os.environ, TORCH_WEBGPU_MATMUL_SG_TILES="N=1x4x4x2x32")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "'subgroups': '1x4'" in r.stdout, r.stdout + r.stderr  # the narrow class's override
    r = _plan_in_subprocess({"TORCH_WEBGPU_MATMUL_SG_TILES": "L=2x2x4x4x10"})
    assert r.returncode != 0 and "TORCH_WEBGPU_MATMUL_SG_TILES" in r.stderr


# ----------------------------------------------------------------------------- results

SHAPES = [
    # (batch, M, N, K)
    (None, 256, 256, 256),
    (None, 128, 768, 768),
    (None, 100, 72, 40),  # ragged in every dimension
    (None, 17, 33, 9),  # K shorter than one matrix step
    (None, 512, 384, 2048),  # split-K candidate
    (3, 64, 80, 96),  # batched
]


def _operands(batch, M, N, K, seed=0, a_t=False, b_t=False):
    g = torch.Generator().manual_seed(seed)
    sa = (batch, M, K) if batch else (M, K)
    sb = (batch, K, N) if batch else (K, N)
    a = torch.randn(sa, generator=g).half()
    b = (torch.randn(sb, generator=g) * K**-0.5).half()
    if a_t:  # same values, column-major storage
        a = a.transpose(-1, -2).contiguous().transpose(-1, -2)
    if b_t:
        b = b.transpose(-1, -2).contiguous().transpose(-1, -2)
    return a, b


def _ref(a, b):
    return torch.matmul(a.float(), b.float())


def _close(got, want):
    # One f16 rounding of an f32-accumulated sum: within an ulp or two of f16 at the value.
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("a_t,b_t", [(False, False), (True, False), (False, True), (True, True)])
def test_f16_matmul_matches_cpu(shape, a_t, b_t):
    batch, M, N, K = shape
    a, b = _operands(batch, M, N, K, a_t=a_t, b_t=b_t)
    out = torch.matmul(a.to(DEV), b.to(DEV))
    assert out.dtype == torch.float16
    _close(out, _ref(a, b))


def test_f16_addmm_linear_baddbmm_activation():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(70, 96, generator=g).half()
    w = (torch.randn(48, 96, generator=g) * 0.1).half()
    bias = torch.randn(48, generator=g).half()
    _close(
        torch.nn.functional.linear(x.to(DEV), w.to(DEV), bias.to(DEV)),
        torch.nn.functional.linear(x.float(), w.float(), bias.float()),
    )
    c = torch.randn(70, 48, generator=g).half()
    got = torch.addmm(c.to(DEV), x.to(DEV), w.t().to(DEV), beta=0.5, alpha=2.0)
    _close(got, torch.addmm(c.float(), x.float(), w.float().t(), beta=0.5, alpha=2.0))
    # In place on C (C read through the output's binding).
    c_dev = c.to(DEV)
    c_dev.addmm_(x.to(DEV), w.t().to(DEV))
    _close(c_dev, torch.addmm(c.float(), x.float(), w.float().t()))
    bb1 = torch.randn(4, 33, 40, generator=g).half()
    bb2 = (torch.randn(4, 40, 24, generator=g) * 0.2).half()
    bc = torch.randn(4, 33, 24, generator=g).half()
    _close(
        torch.baddbmm(bc.to(DEV), bb1.to(DEV), bb2.to(DEV), beta=-1.0),
        torch.baddbmm(bc.float(), bb1.float(), bb2.float(), beta=-1.0),
    )
    gelu = torch.ops.aten._addmm_activation(bias.to(DEV), x.to(DEV), w.t().to(DEV), use_gelu=True)
    want = torch.nn.functional.gelu(torch.addmm(bias.float(), x.float(), w.float().t()).half().float())
    torch.testing.assert_close(gelu.cpu().float(), want, rtol=4e-3, atol=4e-3)


def test_f16_matmul_odd_offsets_and_strided_output():
    # An output view with an odd storage offset (its f16 words are shared with neighbours) and a
    # non-unit column stride: results go through the f32 scratch, neighbours stay untouched.
    a, b = _operands(None, 40, 36, 64, seed=2)
    big = torch.full((41, 80), 7.0, dtype=torch.float16, device=DEV)
    out = big[1:, 1:73:2]
    torch.mm(a.to(DEV), b.to(DEV), out=out)
    _close(out, _ref(a, b))
    rest = big.cpu().float()
    assert torch.all(rest[0] == 7.0) and torch.all(rest[1:, 0] == 7.0) and torch.all(rest[1:, 2:73:2] == 7.0)
    # Operands at odd offsets (no 16-byte loads).
    base = torch.randn(1 + 40 * 64, generator=torch.Generator().manual_seed(3)).half()
    a_odd = base[1:].view(40, 64)
    _close(torch.mm(a_odd.to(DEV)[:, :], b.to(DEV)), _ref(a_odd, b))


def test_f16_matmul_special_values():
    a, b = _operands(None, 64, 64, 64, seed=4)
    a[3, 5] = float("inf")
    a[7, 0] = float("nan")
    b[:, 9] = 0.0
    got = torch.mm(a.to(DEV), b.to(DEV)).cpu().float()
    want = _ref(a, b)
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    assert torch.equal(torch.isinf(got), torch.isinf(want))
    fin = torch.isfinite(want)
    torch.testing.assert_close(got[fin], want[fin], rtol=2e-3, atol=2e-3)


def test_kernel_choice_follows_the_adapter():
    a, b = _operands(None, 256, 256, 256, seed=5)
    torch.mm(a.to(DEV), b.to(DEV)).cpu()
    keys = _C._pipeline_keys(0)
    used_sg = any(k.startswith("matmul_sg:") for k in keys)
    assert used_sg == has_sg(), (used_sg, info()["subgroup_matrix_configs"])
    if not has_sg():
        assert any(k.startswith("matmul:") for k in keys)


@pytest.mark.skipif("not has_sg()", reason="needs an adapter with f16 subgroup matrices")
def test_sg_training_step_matches_cpu():
    # A linear layer's forward and backward in f16 (the three products of a training step, two of
    # them with transposed operands) against CPU f32.
    g = torch.Generator().manual_seed(6)
    x = torch.randn(256, 512, generator=g).half()
    w = (torch.randn(384, 512, generator=g) * 0.05).half()
    xd, wd = x.to(DEV).requires_grad_(), w.to(DEV).requires_grad_()
    y = torch.nn.functional.linear(xd, wd)
    y.float().square().sum().backward()
    xc, wc = x.float().requires_grad_(), w.float().requires_grad_()
    yc = torch.nn.functional.linear(xc, wc)
    (yc.half().float().square().sum()).backward()
    _close(y, yc.detach())
    torch.testing.assert_close(xd.grad.cpu().float(), xc.grad, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(wd.grad.cpu().float(), wc.grad, rtol=1e-2, atol=1e-1)


# ----------------------------------------------------------------------------- float16 conv2d


CONVS = [
    # (N, Ci, H, W, Co, k, stride, padding, dilation, bias)
    (4, 16, 20, 20, 32, 3, 1, 1, 1, True),
    (2, 8, 17, 23, 24, 3, 2, 0, 1, False),
    (2, 16, 16, 16, 16, 5, 1, 4, 2, True),
    (8, 32, 8, 8, 48, 1, 1, 0, 1, True),
    (2, 3, 32, 32, 64, 3, 1, 1, 1, True),  # a first layer: K = 27, ragged against every tile
    (2, 64, 32, 32, 64, 3, 1, 1, 1, False),
]


@pytest.mark.parametrize("cfg", CONVS, ids=str)
def test_f16_conv2d_matches_cpu(cfg):
    # The implicit-GEMM kernel in f16 (f32 accumulation, one rounding), on every adapter.
    N, Ci, H, W, Co, k, s, p, d, bias = cfg
    g = torch.Generator().manual_seed(N * Ci + Co)
    x = torch.randn(N, Ci, H, W, generator=g).half()
    w = (torch.randn(Co, Ci, k, k, generator=g) * (Ci * k * k) ** -0.5).half()
    b = torch.randn(Co, generator=g).half() if bias else None
    got = torch.nn.functional.conv2d(
        x.to(DEV), w.to(DEV), None if b is None else b.to(DEV), stride=s, padding=p, dilation=d
    )
    want = torch.nn.functional.conv2d(
        x.float(), w.float(), None if b is None else b.float(), stride=s, padding=p, dilation=d
    )
    assert got.dtype == torch.float16 and got.shape == want.shape and got.is_contiguous()
    torch.testing.assert_close(got.cpu().float(), want, rtol=2e-3, atol=2e-3)


def _conv_operands(cfg, transposed=False):
    N, Ci, H, W, Co, k, s, p, d, bias = cfg
    g = torch.Generator().manual_seed(N * Ci + Co + k)
    x = torch.randn(N, Ci, H, W, generator=g).half()
    wshape = (Ci, Co, k, k) if transposed else (Co, Ci, k, k)
    w = (torch.randn(wshape, generator=g) * (Ci * k * k) ** -0.5).half()
    b = torch.randn(Co, generator=g).half() if bias else None
    return x, w, b


@pytest.mark.parametrize("path", ["default", "implicit", "columns"])
@pytest.mark.parametrize("cfg", CONVS, ids=str)
def test_f16_conv2d_paths_forward_and_backward(cfg, path, monkeypatch):
    # Every half convolution path, forward and both gradients, against CPU in float32 (the same f32
    # sums, one f16 rounding; gradients one per GEMM). default: on matrix units a channels-last copy
    # of the input feeds the subgroup-matrix kernel 8 channels at a time where Ci % 8 == 0
    # (conv_gather.wgsl forward_nhwc), elsewhere as columns; implicit: the FMA kernel's gathered
    # loads; columns: written out, then multiplied.
    if path != "default":
        monkeypatch.setenv("TORCH_WEBGPU_CONV_NHWC", "0")
        monkeypatch.setenv("TORCH_WEBGPU_CONV_GEMM", "0" if path == "implicit" else "1")
    N, Ci, H, W, Co, k, s, p, d, bias = cfg
    x, w, b = _conv_operands(cfg)
    xd, wd = x.to(DEV).requires_grad_(), w.to(DEV).requires_grad_()
    bd = None if b is None else b.to(DEV).requires_grad_()
    got = torch.nn.functional.conv2d(xd, wd, bd, stride=s, padding=p, dilation=d)
    xr, wr = x.float().requires_grad_(), w.float().requires_grad_()
    br = None if b is None else b.float().requires_grad_()
    want = torch.nn.functional.conv2d(xr, wr, br, stride=s, padding=p, dilation=d)
    assert got.dtype == torch.float16 and got.shape == want.shape and got.is_contiguous()
    torch.testing.assert_close(got.detach().cpu().float(), want.detach(), rtol=2e-3, atol=2e-3)
    gy = torch.randn(want.shape, generator=torch.Generator().manual_seed(1)).half()
    got.backward(gy.to(DEV))
    want.backward(gy.float())
    torch.testing.assert_close(xd.grad.cpu().float(), xr.grad, rtol=4e-3, atol=4e-3)
    torch.testing.assert_close(wd.grad.cpu().float(), wr.grad, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("cfg", CONVS[:3], ids=str)
def test_f16_conv_transpose2d_matches_cpu(cfg):
    # The transposed convolution's forward is the input-gradient form (gathered from the small side).
    N, Ci, H, W, Co, k, s, p, d, bias = cfg
    x, w, b = _conv_operands(cfg, transposed=True)
    got = torch.nn.functional.conv_transpose2d(
        x.to(DEV), w.to(DEV), None if b is None else b.to(DEV), stride=s, padding=p, dilation=d
    )
    want = torch.nn.functional.conv_transpose2d(
        x.float(), w.float(), None if b is None else b.float(), stride=s, padding=p, dilation=d
    )
    torch.testing.assert_close(got.cpu().float(), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    "groups,channels_last,offset", [(1, True, False), (2, False, False), (2, True, True), (4, False, True)]
)
def test_f16_conv2d_groups_layouts_offsets(groups, channels_last, offset):
    # The channels-last gather with groups (each group's channels a slice of every position), a
    # channels-last input (used as it is), and an input at an odd storage offset (copied to a
    # 16-byte unit first).
    g = torch.Generator().manual_seed(groups)
    Ci, Co = 16 * groups, 8 * groups
    base = torch.randn(3 * Ci * 19 * 21 + 1, generator=g).half()
    x = base[1:] if offset else base[:-1]
    x = x.view(3, Ci, 19, 21)
    w = (torch.randn(Co, Ci // groups, 3, 3, generator=g) * 0.2).half()
    b = torch.randn(Co, generator=g).half()
    xd = x.to(DEV)
    if offset:
        xd = torch.empty(x.numel() + 1, dtype=torch.half, device=DEV)[1:].view(x.shape).copy_(x)
    if channels_last:
        xd = xd.contiguous(memory_format=torch.channels_last)
    got = torch.nn.functional.conv2d(xd, w.to(DEV), b.to(DEV), padding=1, stride=(1, 2), groups=groups)
    want = torch.nn.functional.conv2d(x.float(), w.float(), b.float(), padding=1, stride=(1, 2), groups=groups)
    torch.testing.assert_close(got.cpu().float(), want, rtol=2e-3, atol=2e-3)


def test_f16_conv1d_and_conv3d_channels_last_gather():
    g = torch.Generator().manual_seed(3)
    x1, w1 = torch.randn(2, 16, 50, generator=g).half(), (torch.randn(24, 16, 5, generator=g) * 0.1).half()
    got = torch.nn.functional.conv1d(x1.to(DEV), w1.to(DEV), padding=2, dilation=2)
    torch.testing.assert_close(
        got.cpu().float(),
        torch.nn.functional.conv1d(x1.float(), w1.float(), padding=2, dilation=2),
        rtol=2e-3,
        atol=2e-3,
    )
    x3, w3 = torch.randn(2, 8, 6, 7, 9, generator=g).half(), (torch.randn(16, 8, 3, 3, 3, generator=g) * 0.1).half()
    got = torch.nn.functional.conv3d(x3.to(DEV), w3.to(DEV), padding=1, stride=(2, 1, 2))
    want = torch.nn.functional.conv3d(x3.float(), w3.float(), padding=1, stride=(2, 1, 2))
    torch.testing.assert_close(got.cpu().float(), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    "shape", [(2, 64, 64, 64), (3, 16, 19, 22), (1, 130, 70), (2, 8, 6, 7, 10), (1, 6, 5, 5)], ids=str
)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_to_positions_channels_matches_movedim(shape, dtype):
    # The half convolution's channels-last input (wgsl/kernels/transpose16.wgsl on any adapter):
    # whole and partial 64 x 64 tiles, odd sizes through the copy, bit for bit.
    x = torch.randn(shape).to(dtype)
    got = _C._to_positions_channels(x.to(DEV)).cpu()
    want = x.movedim(1, -1).reshape(shape[0], -1, shape[1])
    assert torch.equal(got.view(torch.int16), want.view(torch.int16))


def test_to_positions_channels_views_and_offsets():
    x = torch.randn(2, 16, 5, 6).half().to(DEV).contiguous(memory_format=torch.channels_last)
    assert _C._to_positions_channels(x).data_ptr() == x.data_ptr()  # already channels last: a view
    base = torch.randn(2 * 16 * 6 * 8 + 1).half()
    xd = base.to(DEV)[1:].view(2, 16, 6, 8)  # an odd first element
    assert torch.equal(_C._to_positions_channels(xd).cpu(), base[1:].view(2, 16, 48).transpose(1, 2))
