"""The implicit-GEMM convolutions (ops/conv.cpp implicit_*: the register-tiled GEMM kernel with
operands gathered by wgsl/kernels/conv_gather.wgsl): forward, input gradient and weight gradient,
transposed convolutions, groups, 1-d to 3-d, strides, padding and dilation, the float dtypes,
against CPU and against the direct kernel (TORCH_WEBGPU_CONV_IMPLICIT=0)."""

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

CASES = [
    # (input shape, weight shape, kwargs)
    ((2, 3, 9, 7), (8, 3, 3, 3), dict(padding=1)),
    ((2, 16, 10, 11), (32, 16, 3, 3), dict(stride=2, padding=1)),
    ((1, 32, 8, 8), (32, 16, 3, 3), dict(padding=2, dilation=2, groups=2)),  # a GEMM per group
    ((3, 5, 6, 5), (17, 5, 2, 3), dict(stride=(1, 2), padding=(0, 1))),  # ragged tiles
    ((2, 16, 12, 12), (16, 16, 1, 1), dict()),  # 1x1
    ((3, 2, 33), (4, 2, 5), dict(stride=3, padding=2)),  # 1-d
    ((1, 2, 4, 6, 6), (3, 2, 3, 3, 3), dict(padding=1, stride=(1, 2, 1))),  # 3-d
    ((2, 4, 5, 7), (6, 4, 5, 5), dict(padding=4, dilation=(1, 2))),  # padding wider than the input
]


def conv(x, w, b, kw):
    return {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[x.dim()](x, w, b, **kw)


def tconv(x, w, b, kw):
    return {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[x.dim()](x, w, b, **kw)


def implicit_ran(kind, width):
    """Whether a gathered GEMM of this kind ran on an input of this width (the geometry is in the key)."""
    return any(f":{kind}:" in k and f"const X2: u32 = {width}u;" in k for k in torch_webgpu._C._pipeline_keys(-1))


def run(f, x, w, b, dtype, transposed=False, kw=None):
    """f's output and its input, weight and bias gradients on CPU (float32) and webgpu (dtype)."""
    out = []
    for dev, dt in (("cpu", torch.float32), (DEV, dtype)):
        xd = x.detach().to(dev, dt).requires_grad_()
        wd = w.detach().to(dev, dt).requires_grad_()
        bd = b.detach().to(dev, dt).requires_grad_() if b is not None else None
        y = f(xd, wd, bd, kw)
        go = torch.randn(y.shape, generator=torch.Generator().manual_seed(1)).to(dt).to(dev)
        y.backward(go)
        out.append([t.detach().cpu().float() for t in (y, xd.grad, wd.grad) + ((bd.grad,) if bd is not None else ())])
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_implicit_forward_and_gradients_match_cpu(case, dtype, monkeypatch):
    monkeypatch.setenv("TORCH_WEBGPU_CONV_POINTWISE", "0")  # 1x1 forwards are plain GEMMs otherwise
    xs, ws, kw = CASES[case]
    g = torch.Generator().manual_seed(case)
    x = torch.randn(xs, generator=g)
    w = torch.randn(ws, generator=g) * 0.3
    b = torch.randn(ws[0], generator=g)
    want, got = run(conv, x, w, b, dtype, kw=kw)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=3e-2, atol=6e-2)
    for name, a, e in zip(("output", "input grad", "weight grad", "bias grad"), got, want):
        scale = max(1.0, e.abs().max().item())
        torch.testing.assert_close(a / scale, e / scale, **tol, msg=lambda m, name=name: f"{name}: {m}")
    for kind in ("gb:forward", "gb:input_grad", "ga:weight_grad"):
        assert implicit_ran(kind, xs[-1]), kind


@pytest.mark.parametrize(
    "case", [c for c in range(len(CASES)) if CASES[c][2].get("stride", 1) in (1, (1, 1), (1, 1, 1))]
)
def test_input_grad_as_flipped_convolution(case, monkeypatch):
    # A stride-1 convolution's input gradient as the forward convolution of the output gradient with
    # flipped, channel-swapped weights (the route half convolutions take on matrix units), forced on
    # for float32 so that the geometry (groups, dilation, padding, 1-3 d) is checked on any adapter.
    monkeypatch.setenv("TORCH_WEBGPU_CONV_GRAD_AS_CONV", "1")
    xs, ws, kw = CASES[case]
    g = torch.Generator().manual_seed(case)
    x, w, b = torch.randn(xs, generator=g), torch.randn(ws, generator=g) * 0.3, torch.randn(ws[0], generator=g)
    want, got = run(conv, x, w, b, torch.float32, kw=kw)
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "xs, ws, kw",
    [
        ((2, 8, 5, 6), (8, 4, 3, 3), dict(stride=2, padding=1, output_padding=1)),
        ((1, 32, 4, 4), (32, 16, 3, 3), dict(stride=(2, 1), padding=(1, 0), groups=2, dilation=(1, 2))),
        ((2, 3, 7), (3, 5, 4), dict(stride=3)),
    ],
)
def test_implicit_transposed_matches_cpu(xs, ws, kw):
    g = torch.Generator().manual_seed(2)
    x, w, b = torch.randn(xs, generator=g), torch.randn(ws, generator=g) * 0.3, torch.randn(ws[1] * kw.get("groups", 1))
    want, got = run(tconv, x, w, b, torch.float32, kw=kw)
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)


def test_implicit_matches_the_direct_kernel(monkeypatch):
    # The same problem through both paths; a large enough batch that the weight gradient splits K.
    g = torch.Generator().manual_seed(5)
    x, w = torch.randn(4, 16, 20, 20, generator=g), torch.randn(24, 16, 3, 3, generator=g) * 0.2
    b = torch.randn(24, generator=g)
    _, implicit = run(conv, x, w, b, torch.float32, kw=dict(padding=1))
    monkeypatch.setenv("TORCH_WEBGPU_CONV_IMPLICIT", "0")
    _, direct = run(conv, x, w, b, torch.float32, kw=dict(padding=1))
    for a, e in zip(implicit, direct):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("split", ["0,0", "4096,7", "4096,16"])
def test_implicit_conv_split_settings(monkeypatch, split):
    # TORCH_WEBGPU_CONV_SPLIT ("target,cap"; parsed again when it changes): no split-K, and up to 7
    # or 9 parts summed by the epilogue (its four partial sums and their remainder).
    monkeypatch.setenv("TORCH_WEBGPU_CONV_SPLIT", split)
    g = torch.Generator().manual_seed(11)  # the forward's K = 64 * 9: up to 9 parts of 64
    x, w = torch.randn(2, 64, 10, 10, generator=g), torch.randn(8, 64, 3, 3, generator=g) * 0.1
    b = torch.randn(8, generator=g)
    want, got = run(conv, x, w, b, torch.float32, kw=dict(padding=1))
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)


def test_implicit_noncontiguous_and_offset_input():
    g = torch.Generator().manual_seed(9)
    big = torch.randn(3, 8, 12, 14, generator=g)
    x = big[1:, :, 1:11, ::2]  # a storage offset and a strided last dim
    w = torch.randn(5, 8, 3, 3, generator=g)
    want = F.conv2d(x, w, padding=1)
    got = F.conv2d(big.to(DEV)[1:, :, 1:11, ::2], w.to(DEV), padding=1)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)


def test_depthwise_matches_cpu():
    # groups = channels: one GEMM per group would be mostly empty tiles.
    x, w = torch.randn(2, 8, 9, 9), torch.randn(8, 1, 3, 3)
    torch.testing.assert_close(
        F.conv2d(x.to(DEV), w.to(DEV), padding=1, groups=8).cpu(),
        F.conv2d(x, w, padding=1, groups=8),
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize("stride,pad,dil", [(1, 1, 1), (2, 0, 1), (1, 2, 2)])
def test_forward_nhwc_gather_matches_positions(stride, pad, dil):
    # The half convolution's channels-last gather (conv_gather.wgsl, forward_nhwc) runs only inside
    # the subgroup-matrix GEMM on GPUs; here its section is compiled alone and every 16-byte unit it
    # returns is compared with the input position it should read (zeros in the padding).
    import pathlib

    C = torch_webgpu._C
    src = (pathlib.Path(__file__).parents[1] / "wgsl" / "kernels" / "conv_gather.wgsl").read_text()
    sec = src[src.index("//== forward_nhwc") :]
    sec = sec[: sec.index("//== ", 5)]
    H, W, K, CI = 6, 7, 3, 16
    OH, OW = (H + 2 * pad - dil * (K - 1) - 1) // stride + 1, (W + 2 * pad - dil * (K - 1) - 1) // stride + 1
    consts = ""
    for name, vals in [("X", (1, H, W)), ("Y", (1, OH, OW)), ("K", (1, K, K))]:
        consts += "".join(f"const {name}{i}: u32 = {v}u;\n" for i, v in enumerate(vals))
    for name, vals in [("S", (1, stride, stride)), ("D", (0, pad, pad)), ("L", (1, dil, dil))]:
        consts += "".join(f"const {name}{i}: i32 = {v};\n" for i, v in enumerate(vals))
    consts += f"const CI: u32 = {CI}u;\nconst XC: u32 = {CI}u;\n"
    body = (
        consts
        + "struct Tile { b: u32, k1: u32, };\nvar<private> T: Tile;\n"
        + "fn elb(e: u32) -> f32 { return 0.0; }\n"
        + src[: src.index("//== ")]
        + sec
    ).replace("Bm[", "b1[")
    body = "\n".join(line.split("//")[0] for line in body.splitlines())  # no P. names from comments
    KC, YS = K * K * CI, OH * OW
    body += (
        "\n@compute @workgroup_size(1) fn main() {\n"
        f"  T.b = 0u; T.k1 = {KC}u;\n"
        f"  for (var n = 0u; n < {YS}u; n = n + 1u) {{ for (var k = 0u; k < {KC}u; k = k + 8u) {{\n"
        f"    b0[n * {KC // 8}u + k / 8u] = gload8_b(n, k); }} }}\n}}\n"
    )
    x = torch.arange(1, H * W * CI + 1, dtype=torch.int16)  # [positions, channels], 16-bit elements
    out = torch.zeros(YS * KC, dtype=torch.int16, device=DEV)
    C._launch_wgsl(
        f"test:nhwc_gather:{stride}:{pad}:{dil}",
        body,
        [(out, "vec4<u32>", True), (x.to(DEV), "vec4<u32>", False)],
        [("b_off", "u32", 0), ("b_sb", "u32", 0)],
        1,
    )
    got = out.cpu().view(YS, K * K, CI)
    xi = x.view(H, W, CI)
    for n in range(YS):
        oh, ow = divmod(n, OW)
        for pos in range(K * K):
            kh, kw = divmod(pos, K)
            ih, iw = oh * stride - pad + kh * dil, ow * stride - pad + kw * dil
            want = xi[ih, iw] if 0 <= ih < H and 0 <= iw < W else torch.zeros(CI, dtype=torch.int16)
            assert torch.equal(got[n, pos], want), (n, pos)
