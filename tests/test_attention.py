# scaled_dot_product_attention against CPU: the fused kernel (forward, dQ/dK/dV and mask gradients)
# over head dims 32/64/80/128 and odd head dims, sequence lengths that are not multiples of the
# blocks, batch/heads, causal (also L != S), bool and float masks with broadcasting, scale,
# non-contiguous (transposed) inputs, half types; plus the routing: which inputs take the fused path.
import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

FUSED = int(torch.nn.attention.SDPBackend.OVERRIDEABLE)
TOL = {torch.float32: 2e-5, torch.float16: 3e-3, torch.bfloat16: 2e-2}


def gen(seed):
    return torch.Generator().manual_seed(seed)


def run_case(
    B,
    H,
    L,
    S,
    E,
    EV,
    dtype=torch.float32,
    causal=False,
    mask=None,
    scale=None,
    grad=True,
    transpose_inputs=False,
    mask_grad=False,
    HK=None,
):
    HK = HK or H
    gqa = {"enable_gqa": True} if HK != H else {}
    q = torch.randn(B, H, L, E, generator=gen(1))
    k = torch.randn(B, HK, S, E, generator=gen(2))
    v = torch.randn(B, HK, S, EV, generator=gen(3))
    go = torch.randn(B, H, L, EV, generator=gen(4))
    outs = []
    for dev in ("cpu", DEV):
        # Half inputs are rounded once; the CPU reference then computes in float32.
        ref_dt = torch.float32 if dev == "cpu" else dtype
        ts = []
        for t in (q, k, v):
            t = t.to(dtype).to(ref_dt)
            if transpose_inputs:  # (B, L, H, E) storage seen as (B, H, L, E), as attention layers do
                t = t.transpose(1, 2).contiguous().to(dev).transpose(1, 2)
            else:
                t = t.to(dev)
            ts.append(t.detach().requires_grad_(grad))
        m = None
        if mask is not None:
            m = mask.to(ref_dt) if mask.is_floating_point() else mask
            m = m.to(dev).detach().requires_grad_(mask_grad)
        if dev == DEV:  # the fused kernel, not ATen's math path
            assert torch._fused_sdp_choice(*ts, attn_mask=m, is_causal=causal, scale=scale, **gqa) == FUSED
        o = F.scaled_dot_product_attention(*ts, attn_mask=m, is_causal=causal, scale=scale, **gqa)
        grads = []
        if grad:
            o.backward(go.to(dtype).to(ref_dt).to(dev))
            grads = [t.grad for t in ts] + ([m.grad] if mask_grad else [])
        outs.append((o, grads))
    (oc, gc), (od, gd) = outs
    tol = TOL[dtype]
    assert od.device.type == DEV and od.dtype == dtype and od.shape == oc.shape
    torch.testing.assert_close(od.cpu().float(), oc.float(), atol=tol, rtol=tol)
    for a, b in zip(gd, gc):
        s = max(1.0, b.abs().max().item())
        torch.testing.assert_close(a.cpu().float(), b.float(), atol=tol * s, rtol=tol)


@pytest.mark.parametrize("E", [32, 64, 80, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_head_dims(E, causal):
    run_case(2, 2, 37, 29 if not causal else 37, E, E, causal=causal)


@pytest.mark.parametrize("L,S", [(1, 1), (5, 70), (70, 5), (16, 32), (33, 17)])
def test_lengths(L, S):
    run_case(1, 2, L, S, 32, 32)


def test_causal_rectangular_and_scale():
    run_case(1, 2, 24, 40, 64, 64, causal=True, scale=0.3)
    run_case(1, 1, 40, 24, 16, 16, causal=True)


def test_odd_head_dims():
    run_case(2, 1, 9, 13, 7, 24)
    run_case(1, 2, 19, 11, 48, 3)


def test_masks():
    g = gen(5)
    run_case(2, 2, 17, 21, 32, 32, mask=torch.randn(17, 21, generator=g))
    run_case(2, 2, 17, 21, 32, 32, mask=torch.rand(2, 1, 17, 21, generator=g) > 0.3)
    run_case(2, 2, 17, 21, 32, 32, mask=torch.randn(2, 2, 17, 21, generator=g), mask_grad=True)
    run_case(2, 2, 17, 21, 32, 32, mask=torch.randn(1, 2, 1, 21, generator=g), mask_grad=True)


def test_fully_masked_rows_are_zero():
    mask = torch.ones(6, 9, dtype=torch.bool)
    mask[2] = False
    q, k, v = (torch.randn(1, 1, n, 8, generator=gen(i)) for i, n in ((6, 6), (7, 9), (8, 9)))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out = F.scaled_dot_product_attention(q.to(DEV), k.to(DEV), v.to(DEV), attn_mask=mask.to(DEV)).cpu()
    torch.testing.assert_close(out, torch.nan_to_num(ref, nan=0.0), atol=1e-5, rtol=1e-5)
    assert torch.all(out[0, 0, 2] == 0)


def test_transposed_inputs():
    run_case(2, 4, 23, 23, 64, 64, transpose_inputs=True, causal=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_types(dtype):
    run_case(1, 2, 24, 40, 64, 64, dtype=dtype)
    run_case(1, 2, 33, 33, 80, 80, dtype=dtype, causal=True)


def test_many_blocks():
    run_case(1, 1, 130, 150, 32, 32, causal=False)


def test_backend_choice():
    q = torch.randn(1, 2, 8, 16).to(DEV)
    choice = torch._fused_sdp_choice(q, q, q)
    assert choice == FUSED
    assert torch._fused_sdp_choice(q, q, q, dropout_p=0.5) == int(torch.nn.attention.SDPBackend.MATH)
    big = torch.randn(1, 1, 4, 160).to(DEV)
    assert torch._fused_sdp_choice(big, big, big) == int(torch.nn.attention.SDPBackend.MATH)
    q3 = torch.randn(2, 8, 16).to(DEV)
    assert torch._fused_sdp_choice(q3, q3, q3) == int(torch.nn.attention.SDPBackend.MATH)


def test_fused_op_direct_and_errors():
    q = torch.randn(1, 2, 8, 16)
    out = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q.to(DEV), q.to(DEV), q.to(DEV))
    torch.testing.assert_close(out[0].cpu(), F.scaled_dot_product_attention(q, q, q), atol=1e-5, rtol=1e-5)
    assert out[1].shape == (1, 2, 8) and out[1].dtype == torch.float32
    with pytest.raises(RuntimeError):  # mismatched head dims of query and key: ATen's own check
        F.scaled_dot_product_attention(q.to(DEV), torch.randn(1, 2, 8, 8).to(DEV), q.to(DEV))


def test_causal_and_mask_together():
    # CPU applies both (the causal mask and the additive one); so does the fused kernel.
    run_case(1, 2, 11, 11, 16, 16, causal=True, mask=torch.randn(11, 11, generator=gen(6)))


def test_grouped_query_attention():
    run_case(2, 6, 19, 23, 32, 32, HK=2)
    run_case(1, 4, 21, 21, 64, 64, HK=1, causal=True)
    run_case(1, 4, 21, 30, 16, 16, HK=2, mask=torch.randn(21, 30, generator=gen(11)), mask_grad=True)


def test_math_path_gqa_and_dropout():
    """GQA without enable_gqa's fused support (3-d inputs), and dropout take ATen's math path (composite ops of other op families). Where
    those are not native yet, the fallback being off makes this a NotImplementedError naming the op."""
    q = torch.randn(4, 6, 8, generator=gen(9))
    kv = torch.randn(2, 6, 8, generator=gen(10))
    try:
        out = F.scaled_dot_product_attention(q.to(DEV), kv.to(DEV), kv.to(DEV), enable_gqa=True).cpu()
    except NotImplementedError as e:
        pytest.skip(f"math path needs ops not native yet: {e}")
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True), atol=1e-5, rtol=1e-5)
    ones = torch.ones(1, 1, 64, 8).to(DEV)
    d = F.scaled_dot_product_attention(ones, ones, ones, dropout_p=0.5).cpu()
    # Every output row is a (rescaled) mean of kept ones: values are 0 or around 2 * kept fraction * 1.
    assert torch.isfinite(d).all() and 0.5 < d.mean().item() < 1.5


@pytest.mark.parametrize("heads_per_kv", [1, 2])
def test_output_in_query_layout_without_copy(heads_per_kv):
    """The query of a fused qkv projection (a [B, L, 3D] block split and viewed as [B, H, L, E]): the
    kernel writes the output straight into the query's memory layout, [B, L, H, EV] underneath (what the
    op's meta function plans for compiled graphs), so `o.transpose(1, 2).reshape(B, L, H * EV)` is a view
    and the call is one dispatch (the output was written contiguous and copied, two dispatches)."""
    import torch_webgpu

    B, L, H, E = 2, 19, 4, 16
    HK = H // heads_per_kv
    qkv = torch.randn(B, L, (H + 2 * HK) * E, generator=gen(21))
    sizes = [H * E, HK * E, HK * E]

    def attn(x):
        q, k, v = x.split(sizes, dim=2)
        q, k, v = (z.view(B, L, z.shape[-1] // E, E).transpose(1, 2) for z in (q, k, v))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=heads_per_kv > 1)

    want = attn(qkv)
    x = qkv.to(DEV)
    torch.webgpu.synchronize()
    before = torch_webgpu._C._stream_counters()["dispatches"]
    o = attn(x)
    assert torch_webgpu._C._stream_counters()["dispatches"] - before == 1
    assert o.shape == (B, H, L, E)
    assert o.stride() == (L * H * E, E, H * E, 1)
    assert o.transpose(1, 2).is_contiguous()
    torch.testing.assert_close(o.cpu(), want, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("rows", ["16", "8", "4"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("E,EV", [(64, 64), (40, 24), (128, 96)])
def test_forward_row_blocks(monkeypatch, rows, causal, E, EV):
    """Every forward workgroup shape (ROWS x LANES = 16x8, 8x16, 4x32; the default picks by how many
    workgroups a problem makes), with ragged query and key blocks, head dims that the lanes do not
    divide, and the backward reading the forward's log-sum-exp."""
    monkeypatch.setenv("TORCH_WEBGPU_SDPA_ROWS", rows)
    run_case(2, 3, 45, 45 if causal else 70, E, EV, causal=causal)


@pytest.mark.parametrize("H,L", [(16, 256), (16, 128), (12, 128), (2, 37)])
def test_forward_default_row_blocks(H, L):
    """The shapes that pick 16, 8 and 4 rows a workgroup by themselves (256 workgroups or more)."""
    run_case(1, H, L, L, 64, 64, causal=True, grad=False)
    run_case(1, H, L, L, 64, 64, mask=torch.rand(L, L) > 0.3, grad=False)
