"""Issue 14, "the first hour of a PyTorch user": ops that fell back to the CPU or refused float32 inputs
in the first models people run (Hugging Face generate(), torchvision's ViT), sin/cos of large
arguments, deterministic scatters, unique(dim=0) with NaN rows. Every result is compared with
PyTorch's CPU result, and with the OpInfo samples where op_db has an entry (run with the fallback
off, so a pass means native kernels only)."""
import math
import os
import sys

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # works under --import-mode=importlib

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opinfo_support as H  # noqa: E402
import torch_webgpu  # noqa: E402,F401

W = "webgpu"
FLOATS = [torch.float32, torch.float16, torch.bfloat16]
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def same(a, b):
    """Exact equality with CPU (NaN equals NaN), dtype and shape included."""
    a = a.cpu()
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert torch.equal(a, b) if not a.is_floating_point() else torch.allclose(a, b, 0, 0, equal_nan=True), (a, b)


def opinfo_passes(name, dtypes, variants=("op", "noncontig", "out"), sample_filter=None):
    """Every OpInfo sample of entry `name` for these dtypes and variants runs natively and matches CPU."""
    op = next(o for o in H.entries() if H.full_name(o) == name)
    ran = 0
    for dtype in H.dtypes_for(op, dtypes):
        for variant in variants:
            if not H.has_variant(op, dtype, variant):
                continue
            r = H.run_variant(op, dtype, variant, max_samples=None)
            if r.skip_reason:
                continue
            assert r.status == "pass", f"{name} {dtype} {variant}: {r.status}: " + (
                r.describe_failure() or r.describe_partial() if r.native else ", ".join(r.fallback))
            ran += 1
    assert ran, f"{name}: no OpInfo case ran"


# ---- 1. isin, _native_multi_head_attention ----------------------------------------------------------

def test_isin_opinfo():
    opinfo_passes("isin", FLOATS + INTS)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("n_test", [3, 400])  # the per-element scan and the sorting path
def test_isin_overloads(dtype, n_test):
    g = torch.Generator().manual_seed(n_test)
    e = (torch.randn(6, 9, generator=g) * 5).to(dtype)
    t = (torch.randn(n_test, generator=g) * 5).to(dtype)
    if dtype.is_floating_point:
        e[0, :3] = float("nan")
        t[:1] = float("nan")
        e[1, 0], t[-1] = -0.0, 0.0
    for invert in (False, True):
        for assume_unique in (False, True):
            kw = dict(invert=invert, assume_unique=assume_unique)
            same(torch.isin(e.to(W), t.to(W), **kw), torch.isin(e, t, **kw))
            # non-contiguous elements and test elements, out= (non-contiguous too)
            same(torch.isin(e.to(W).t(), t.to(W)[::2], **kw), torch.isin(e.t(), t[::2], **kw))
            out = torch.ones(9, 12, dtype=torch.bool, device=W)[:, ::2]
            r = torch.isin(e.to(W).t(), t.to(W), **kw, out=out)
            assert r is out
            same(out, torch.isin(e.t(), t, **kw))
            # Tensor_Scalar and Scalar_Tensor
            s = e[2, 3].item()
            same(torch.isin(e.to(W), s, **kw), torch.isin(e, s, **kw))
            same(torch.isin(s, t.to(W), **kw), torch.isin(s, t, **kw))
            o = torch.ones((), dtype=torch.bool, device=W)
            torch.isin(s, t.to(W), **kw, out=o)
            same(o, torch.isin(s, t, **kw))


def test_isin_mixed_dtypes_and_empty():
    e, t = torch.arange(-5, 5, dtype=torch.int32), torch.tensor([1.0, 2.5, -3.0], dtype=torch.float16)
    same(torch.isin(e.to(W), t.to(W)), torch.isin(e, t))
    same(torch.isin(e.to(W), t.to(W).to(torch.int64)), torch.isin(e, t.to(torch.int64)))
    same(torch.isin(torch.empty(0, 3, device=W), t.to(W).float()), torch.isin(torch.empty(0, 3), t.float()))
    same(torch.isin(e.to(W), torch.empty(0, dtype=torch.int32, device=W)), torch.isin(e, torch.empty(0, dtype=torch.int32)))
    with pytest.raises(RuntimeError, match="isin"):
        torch.isin(torch.ones(2, dtype=torch.bool, device=W), torch.ones(2, dtype=torch.bool, device=W))


def _mha_args(B, T, D, H_, dtype, seed=0, distinct=False):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, D, generator=g).to(dtype)
    k = torch.randn(B, T, D, generator=g).to(dtype) if distinct else q
    v = torch.randn(B, T, D, generator=g).to(dtype) if distinct else q
    ws = [torch.randn(3 * D, D, generator=g) * 0.3, torch.randn(3 * D, generator=g) * 0.1,
          torch.randn(D, D, generator=g) * 0.3, torch.randn(D, generator=g) * 0.1]
    return q, k, v, [w.to(dtype) for w in ws]


def _to(x):
    return x.to(W) if isinstance(x, torch.Tensor) else x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("distinct", [False, True])
@pytest.mark.parametrize("mask_kind", [None, "attn", "padding", "full", "float_full"])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_native_multi_head_attention(dtype, distinct, mask_kind, need_weights, average):
    B, T, D, nh = 2, 5, 16, 4
    q, k, v, (w, b, pw, pb) = _mha_args(B, T, D, nh, dtype, distinct=distinct)
    mask, mask_type = None, None
    if mask_kind == "attn":
        mask, mask_type = torch.triu(torch.ones(T, T, dtype=torch.bool), 1), 0
    elif mask_kind == "padding":
        mask, mask_type = torch.tensor([[False] * 3 + [True] * 2, [True] * T]), 1  # a fully masked row: NaN, as on CPU
    elif mask_kind == "full":
        mask, mask_type = torch.rand(B, nh, T, T, generator=torch.Generator().manual_seed(1)) > 0.6, 2
    elif mask_kind == "float_full":
        mask = torch.zeros(B, nh, T, T).masked_fill(torch.rand(B, nh, T, T) > 0.6, float("-inf")).to(dtype)
        mask_type = 2
    args = [q, k, v, D, nh, w, b, pw, pb, mask, need_weights, average, mask_type]
    if not distinct:
        args_w = [q.to(W)] * 3 + [_to(a) for a in args[3:]]
    else:
        args_w = [_to(a) for a in args]
    c = torch._native_multi_head_attention(*args)
    r = torch._native_multi_head_attention(*args_w)
    tol = dict(atol=1e-5, rtol=1e-5, equal_nan=True) if dtype == torch.float32 else dict(atol=2e-3, rtol=2e-3, equal_nan=True)
    torch.testing.assert_close(r[0].cpu(), c[0], **tol)
    if c[1] is None or c[1].numel() == 0:
        assert r[1] is None or r[1].numel() == 0
    else:
        torch.testing.assert_close(r[1].cpu(), c[1], **tol)


def test_multihead_attention_module_fast_path():
    """nn.MultiheadAttention in eval (ViT's attention) takes the _native_multi_head_attention fast path."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()
    x = torch.randn(3, 7, 32)
    pad = torch.zeros(3, 7, dtype=torch.bool)
    pad[1, 5:] = True
    with torch.no_grad():
        for kw in ({}, dict(need_weights=False), dict(key_padding_mask=pad), dict(average_attn_weights=False),
                   dict(attn_mask=torch.triu(torch.ones(7, 7, dtype=torch.bool), 1))):
            c = mha(x, x, x, **kw)
            m = mha.to(W)
            r = m(x.to(W), x.to(W), x.to(W), **{n: _to(a) for n, a in kw.items()})
            mha.cpu()
            torch.testing.assert_close(r[0].cpu(), c[0], atol=1e-5, rtol=1e-5)
            if c[1] is not None:
                torch.testing.assert_close(r[1].cpu(), c[1], atol=1e-5, rtol=1e-5)


def test_native_multi_head_attention_errors():
    q, k, v, (w, b, pw, pb) = _mha_args(2, 5, 16, 4, torch.float32)
    with pytest.raises(RuntimeError, match="embed_dim"):
        torch._native_multi_head_attention(q.to(W), q.to(W), q.to(W), 12, 4, w.to(W), b.to(W), pw.to(W), pb.to(W))
    with pytest.raises(RuntimeError, match="divide evenly"):
        torch._native_multi_head_attention(q.to(W), q.to(W), q.to(W), 16, 3, w.to(W), b.to(W), pw.to(W), pb.to(W))
    with pytest.raises(RuntimeError, match="shapes to match"):
        torch._native_multi_head_attention(q.to(W), q[:, :3].to(W), q.to(W), 16, 4, w.to(W), b.to(W), pw.to(W),
                                           pb.to(W))
