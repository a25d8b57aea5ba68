# Indexing over operands larger than one storage binding (engines/index.cpp splits the work: windows
# of the indexed dim's range, pieces of the iteration shape), against CPU. The split paths run in a
# child pytest with TORCH_WEBGPU_MAX_BINDING lowering the binding limit to 64 KiB, so tensors of a
# few hundred KB take them (the limit is read once per process, at device creation); the tests named
# `real` use lavapipe's own limit (128 MiB) with a 50257 x 768 float32 embedding (GPT-2 small's).
# Inputs are built on the CPU and uploaded (host uploads bind nothing), results compared after .cpu().
import os
import re
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV, DTYPES, native_env

LIMIT = 64 << 10
CHILD = os.environ.get("TORCH_WEBGPU_MAX_BINDING") == str(LIMIT)

g = torch.Generator().manual_seed(0)

# Raw moves (gathers, assignments) hold float64 and complex64 too.
MOVE = [*DTYPES, torch.float64, torch.complex64]
ACC = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def rand(shape, dtype):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_complex:
        return torch.randn(shape, generator=g, dtype=dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    lo = 0 if dtype == torch.uint8 else -9
    return torch.randint(lo, 10, shape, generator=g).to(dtype)


def ints(n, hi, lo=0):
    return torch.randint(lo, hi, (n,), generator=g)


def same(d, c, tol=None):
    d = d.cpu()
    assert (d.dtype, d.shape) == (c.dtype, c.shape)
    if c.is_floating_point() or c.is_complex():
        t = tol if tol is not None else (2e-2 if c.dtype in (torch.float16, torch.bfloat16) else 1e-5)
        torch.testing.assert_close(d, c, rtol=t, atol=t, equal_nan=True)
    else:
        assert torch.equal(d, c)


def big(shape, dtype, layout):
    """A CPU tensor of `shape` in one of three layouts, and its device copy in the same layout."""
    if layout == "contig":
        x = rand(shape, dtype)
        return x, x.to(DEV)
    if layout == "t":  # transposed storage
        x = rand(shape[::-1], dtype)
        return x.t(), x.to(DEV).t()
    x = rand((shape[0], shape[1] * 2), dtype)  # every other column
    return x[:, ::2], x.to(DEV)[:, ::2]


@pytest.fixture(scope="module")
def gpt2_wte():
    """GPT-2 small's token embedding shape, 50257 x 768 float32 (154 MB, past lavapipe's 128 MiB)."""
    W = torch.randn(50257, 768, generator=g)
    return W, W.to(DEV)


def test_real_gathers(gpt2_wte):
    W, Wd = gpt2_wte
    idx = torch.randint(0, 50257, (4, 64), generator=g)
    idx[0, :3] = torch.tensor([0, 50256, 30000])
    i = idx.view(-1)
    same(F.embedding(idx.to(DEV), Wd), F.embedding(idx, W))
    same(Wd.index_select(0, i.to(DEV)), W.index_select(0, i))
    same(Wd[i.to(DEV) - 50257], W[i - 50257])
    same(Wd.t()[:, i.to(DEV)], W.t()[:, i])
    gi = torch.randint(0, 50257, (16, 768), generator=g)
    same(torch.gather(Wd, 0, gi.to(DEV)), torch.gather(W, 0, gi))
    t = torch.randint(-W.numel(), W.numel(), (5000,), generator=g)
    same(torch.take(Wd, t.to(DEV)), torch.take(W, t))
    with pytest.raises(IndexError, match="index 50257 is out of bounds"):
        F.embedding(torch.tensor([3, 50257]).to(DEV), Wd).cpu()


def test_real_scatters(gpt2_wte):
    W, _ = gpt2_wte
    i = torch.randint(0, 50257, (256,), generator=g)
    src = torch.randn(256, 768, generator=g)
    d = W.to(DEV)
    d.index_add_(0, i.to(DEV), src.to(DEV))
    want = W.clone().index_add_(0, i, src)
    same(d, want)
    t = torch.randint(0, W.numel(), (3000,), generator=g)
    v = torch.randn(3000, generator=g)
    d.put_(t.to(DEV), v.to(DEV), accumulate=True)
    same(d, want.put_(t, v, accumulate=True))


def test_real_embedding_backward(gpt2_wte):
    W, _ = gpt2_wte
    idx = torch.randint(0, 50257, (4, 64), generator=g)
    idx[1, :8] = 17  # duplicates accumulate
    gout = torch.randn(4, 64, 768, generator=g)
    Wd = W.to(DEV).requires_grad_()
    F.embedding(idx.to(DEV), Wd).backward(gout.to(DEV))
    Wc = W.clone().requires_grad_()
    F.embedding(idx, Wc).backward(gout)
    same(Wd.grad, Wc.grad)


if not CHILD:

    @pytest.mark.parametrize(
        "group", ["gather or child_errors", "scatter or child_masked"], ids=["gathers", "scatters"]
    )
    def test_split_paths(group):
        """This file's split tests in a child with a 64 KiB binding limit. The child prints each new
        kernel (TORCH_WEBGPU_DUMP_WGSL): index kernels with target windows (key flag `w`) must be among
        them, so the split paths did run."""
        env = native_env(TORCH_WEBGPU_MAX_BINDING=str(LIMIT), TORCH_WEBGPU_DUMP_WGSL="1")
        cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--import-mode=importlib"]
        cmd += [os.path.abspath(__file__), "-k", f"child_{group}"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, cwd=os.path.dirname(__file__))
        assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
        assert " passed" in p.stdout, p.stdout[-3000:]
        assert " failed" not in p.stdout, p.stdout[-3000:]
        assert re.search(r"^---- index:[^|\n]*w\|", p.stderr, re.M), "no windowed index kernel ran"

else:
    # ---- gathers: the indexed operand is the source ----------------------------------------------

    @pytest.mark.parametrize("dtype", MOVE, ids=str)
    def test_child_gather_embedding(dtype):
        W = rand((3001, 40), dtype)  # 3001 rows past 64 KiB at every dtype
        Wd = W.to(DEV)
        for idx in (ints(37, 3001), torch.tensor([0, 3000, 3000, 1500, 0]), ints(300, 3001).view(15, 20)):
            same(F.embedding(idx.to(DEV), Wd), F.embedding(idx, W))
        i32 = ints(64, 3001).int()
        same(F.embedding(i32.to(DEV), Wd), F.embedding(i32, W))

    @pytest.mark.parametrize("layout", ["contig", "t", "step"])
    @pytest.mark.parametrize("dtype", MOVE, ids=str)
    def test_child_gather_index_select(dtype, layout):
        x, xd = big((900, 131), dtype, layout)
        for dim in (0, 1):
            for idx in (ints(50, x.shape[dim]), ints(3, x.shape[dim]), torch.arange(x.shape[dim] - 1, -1, -1)):
                same(xd.index_select(dim, idx.to(DEV)), x.index_select(dim, idx))
        # 3-d, the middle dim, and out=
        y = rand((20, 60, 70), dtype)
        yd = y.to(DEV)
        idx = ints(33, 60)
        out = torch.empty(0, dtype=dtype, device=DEV)
        torch.index_select(yd, 1, idx.to(DEV), out=out)
        same(out, y.index_select(1, idx))

    @pytest.mark.parametrize("layout", ["contig", "t", "step"])
    @pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool], ids=str)
    def test_child_gather_advanced(dtype, layout):
        x, xd = big((700, 150), dtype, layout)
        i = torch.cat([ints(40, 700), torch.tensor([-1, -700, 699])])  # negative indices wrap first
        j = ints(43, 150, lo=-150)
        same(xd[i.to(DEV)], x[i])
        same(xd[:, j.to(DEV)], x[:, j])
        same(xd[i.to(DEV), j.to(DEV)], x[i, j])
        same(xd[i.view(-1, 1).to(DEV), j[:5].to(DEV)], x[i.view(-1, 1), j[:5]])
        same(xd[i.to(DEV), 3:100:7], x[i, 3:100:7])
        same(xd[i], x[i])  # CPU index tensor
        y = rand((30, 40, 50), dtype)
        yd = y.to(DEV)
        a, b = ints(9, 30), ints(9, 50)
        same(yd[a.to(DEV), :, b.to(DEV)], y[a, :, b])  # non-adjacent: indexed dims go first

    @pytest.mark.parametrize("dtype", MOVE, ids=str)
    def test_child_gather_gather_take(dtype):
        x = rand((500, 200), dtype)
        xd = x.to(DEV)
        for dim in (0, 1):
            idx = torch.randint(0, x.shape[dim], (60, 70), generator=g)
            same(torch.gather(xd, dim, idx.to(DEV)), torch.gather(x, dim, idx))
            it = torch.randint(0, x.shape[1 - dim], (70, 60), generator=g)  # over the transpose
            same(torch.gather(xd.t(), dim, it.to(DEV)), torch.gather(x.t(), dim, it))
            same(torch.gather(xd.t(), dim, it.t().to(DEV)), torch.gather(x.t(), dim, it.t()))
        t = torch.cat([ints(494, x.numel()), torch.tensor([-1, -x.numel(), x.numel() - 1])]).view(-1, 7)
        same(torch.take(xd, t.to(DEV)), torch.take(x, t))
        same(torch.take(xd.t(), t.to(DEV)), torch.take(x.t(), t))

    @pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
    def test_child_gather_view_in_large_block(dtype):
        # A small view inside a block past the limit is bound as a window over what the kernel
        # reaches: the rows its indices pick too, not only the restrided operand's own span.
        x = rand((3000, 40), dtype)
        xd = x.to(DEV)
        v, vd = x[1000:1060], xd[1000:1060]
        i = torch.tensor([59, 0, 31, -1, 7])
        same(vd[i.to(DEV)], v[i])
        j = torch.tensor([39, 0, -2])
        same(vd[:, j.to(DEV)], v[:, j])
        same(vd.index_select(0, i[:3].to(DEV)), v.index_select(0, i[:3]))
        same(torch.gather(vd, 0, torch.tensor([[59, 3, 0]]).to(DEV)), torch.gather(v, 0, torch.tensor([[59, 3, 0]])))
        d = x.to(DEV)
        d[1000:1060][i.to(DEV)] = torch.ones(40, dtype=dtype).to(DEV)
        e = x.clone()
        e[1000:1060][i] = torch.ones(40, dtype=dtype)
        same(d, e)

    def test_child_gather_big_index_and_output():
        # The index and output operands past the limit (a long iteration shape), a small source.
        x = rand((300,), torch.float32)
        idx = ints(40000, 300)  # 320 KB of int64
        same(x.to(DEV)[idx.to(DEV)], x[idx])
        same(x.to(DEV).index_select(0, idx.to(DEV)), x.index_select(0, idx))
        W = rand((50, 16), torch.float16)
        e = idx.view(200, 200) % 50
        same(F.embedding(e.to(DEV), W.to(DEV)), F.embedding(e, W))

    # ---- scatters: the indexed operand is the destination ----------------------------------------

    @pytest.mark.parametrize("dtype", ACC, ids=str)
    def test_child_scatter_index_add(dtype):
        tol = 0.5 if dtype in (torch.float16, torch.bfloat16) else None
        for dim, shape in ((0, (2500, 33)), (1, (33, 2500))):
            x = rand(shape, dtype)
            idx = ints(400, shape[dim])
            src = rand((400, 33) if dim == 0 else (33, 400), dtype)
            d = x.to(DEV)
            d.index_add_(dim, idx.to(DEV), src.to(DEV))
            same(d, x.clone().index_add_(dim, idx, src), tol)
        if dtype.is_floating_point:
            d = x.to(DEV)
            d.index_add_(1, idx.to(DEV), src.to(DEV), alpha=2)
            same(d, x.clone().index_add_(1, idx, src, alpha=2), tol)

    @pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int32], ids=str)
    def test_child_scatter_index_put(dtype):
        x = rand((600, 140), dtype)
        i, j = ints(300, 600, lo=-600), ints(300, 140)
        v = rand((300,), dtype)
        for acc in (False, True):
            if not acc:  # unique positions: assignment order does not matter
                i, j = torch.randperm(600, generator=g)[:300], torch.randperm(140, generator=g).repeat(3)[:300]
            d = x.to(DEV)
            d.index_put_((i.to(DEV), j.to(DEV)), v.to(DEV), accumulate=acc)
            same(d, x.clone().index_put_((i, j), v, accumulate=acc), 1e-2 if dtype == torch.float16 else None)
        d = x.to(DEV)
        rows = torch.randperm(600, generator=g)[:50]
        row = rand((1, 140), dtype)
        d[rows.to(DEV)] = row.to(DEV)
        e = x.clone()
        e[rows] = row
        same(d, e)

    @pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int16], ids=str)
    def test_child_scatter_scatter(dtype):
        x = rand((400, 300), dtype)
        for dim in (0, 1):
            idx = torch.randint(0, x.shape[dim], (50, 60), generator=g)
            src = rand((50, 60), dtype)
            d = x.to(DEV)
            d.scatter_add_(dim, idx.to(DEV), src.to(DEV))
            same(d, x.clone().scatter_add_(dim, idx, src), 0.1)
            for red in ("sum", "prod", "amax", "amin"):
                d = x.to(DEV)
                d.scatter_reduce_(dim, idx.to(DEV), src.to(DEV), red)
                same(d, x.clone().scatter_reduce_(dim, idx, src, red), 0.1)
            # unique destinations for plain assignment
            perm = torch.stack([torch.randperm(x.shape[dim], generator=g)[:50] for _ in range(60)], 1)
            if dim == 1:
                perm = torch.stack([torch.randperm(x.shape[dim], generator=g)[:60] for _ in range(50)], 0)
            d = x.to(DEV)
            d.scatter_(dim, perm.to(DEV), src.to(DEV))
            same(d, x.clone().scatter_(dim, perm, src))
            d = x.to(DEV)
            d.scatter_(dim, perm.to(DEV), 3)
            same(d, x.clone().scatter_(dim, perm, 3))

    @pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool, torch.complex64], ids=str)
    def test_child_scatter_copy_fill_put(dtype):
        x = rand((800, 90), dtype)
        rows = torch.randperm(800, generator=g)[:70]
        src = rand((70, 90), dtype)
        d = x.to(DEV)
        d.index_copy_(0, rows.to(DEV), src.to(DEV))
        same(d, x.clone().index_copy_(0, rows, src))
        cols = torch.randperm(90, generator=g)[:20]
        src = rand((800, 20), dtype)
        d = x.to(DEV)
        d.index_copy_(1, cols.to(DEV), src.to(DEV))
        same(d, x.clone().index_copy_(1, cols, src))
        if dtype != torch.complex64:
            d = x.to(DEV)
            d.index_fill_(0, rows.to(DEV), 1)
            same(d, x.clone().index_fill_(0, rows, 1))
            d = x.to(DEV)
            d.index_fill_(1, torch.tensor([-1, 0, 5]).to(DEV), 0)
            same(d, x.clone().index_fill_(1, torch.tensor([-1, 0, 5]), 0))
        flat = torch.randperm(x.numel() - 2, generator=g)[:500] + 1  # unique positions, none at the ends
        flat[:2] = torch.tensor([-1, -x.numel()])  # the last and the first element
        v = rand((500,), dtype)
        d = x.to(DEV)
        d.put_(flat.to(DEV), v.to(DEV))
        same(d, x.clone().put_(flat, v))
        if dtype in (torch.float32, torch.int64):
            dup = ints(700, x.numel())
            w = rand((700,), dtype)
            d = x.to(DEV)
            d.put_(dup.to(DEV), w.to(DEV), accumulate=True)
            same(d, x.clone().put_(dup, w, accumulate=True))

    @pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
    def test_child_scatter_embedding_backward(dtype):
        # Duplicate rows (accumulation), a padding index, and half types in CPU's exact order.
        idx = torch.cat([ints(200, 3000), torch.tensor([7, 7, 7, 2999, 0])]).view(5, 41)
        grad = rand((5, 41, 48), dtype)
        for pad in (-1, 7):
            got = torch.ops.aten.embedding_dense_backward(grad.to(DEV), idx.to(DEV), 3000, pad, False)
            want = torch.ops.aten.embedding_dense_backward(grad, idx, 3000, pad, False)
            same(got, want, 1e-2 if dtype != torch.float32 else 1e-5)

    def test_child_scatter_embedding_autograd():
        # F.embedding forward and backward end to end, scale_grad_by_freq and padding_idx too.
        W = rand((2500, 40), torch.float32)
        idx = torch.cat([ints(150, 2500), torch.tensor([3, 3, 3, 2499, 0, 0])]).view(4, 39)
        gout = rand((4, 39, 40), torch.float32)
        for kw in ({}, {"padding_idx": 3}, {"scale_grad_by_freq": True}):
            Wd = W.to(DEV).requires_grad_()
            out = F.embedding(idx.to(DEV), Wd, **kw)
            out.backward(gout.to(DEV))
            Wc = W.clone().requires_grad_()
            want = F.embedding(idx, Wc, **kw)
            want.backward(gout)
            same(out, want)
            same(Wd.grad, Wc.grad)

    @pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16], ids=str)
    def test_child_scatter_out_of_place(dtype):
        # The functional variants copy the large input first (split copies), then scatter into it.
        x = rand((1200, 50), dtype)
        xd = x.to(DEV)
        idx = ints(300, 1200)
        src = rand((300, 50), dtype)
        tol = 5e-2 if dtype == torch.float16 else None
        same(xd.index_add(0, idx.to(DEV), src.to(DEV)), x.index_add(0, idx, src), tol)
        gi = torch.randint(0, 1200, (40, 50), generator=g)
        gs = rand((40, 50), dtype)
        same(xd.scatter_add(0, gi.to(DEV), gs.to(DEV)), x.scatter_add(0, gi, gs), tol)
        for red in ("sum", "amax", "mean"):
            for inc in (True, False):
                got = xd.scatter_reduce(0, gi.to(DEV), gs.to(DEV), red, include_self=inc)
                same(got, x.scatter_reduce(0, gi, gs, red, include_self=inc), tol)
        for red in ("prod", "amin", "mean"):
            got = xd.index_reduce(0, idx.to(DEV), src.to(DEV), red, include_self=False)
            same(got, x.index_reduce(0, idx, src, red, include_self=False), tol)
        same(xd.index_fill(1, torch.tensor([0, 7]).to(DEV), 2), x.index_fill(1, torch.tensor([0, 7]), 2))
        rows = torch.randperm(1200, generator=g)[:100]
        same(xd.index_copy(0, rows.to(DEV), src[:100].to(DEV)), x.index_copy(0, rows, src[:100]))
        same(xd.index_put((idx.to(DEV),), src.to(DEV), accumulate=True), x.index_put((idx,), src, accumulate=True), tol)

    @pytest.mark.parametrize("dtype", [torch.float32, torch.int16], ids=str)
    def test_child_scatter_put_noncontig(dtype):
        x = rand((300, 400), dtype)
        flat = torch.randperm(x.numel(), generator=g)[:900]
        v = rand((900,), dtype)
        d = x.to(DEV).t()
        d.put_(flat.to(DEV), v.to(DEV))
        same(d, x.clone().t().put_(flat, v))
        dup = ints(900, x.numel())
        d = x.to(DEV).t()
        d.put_(dup.to(DEV), v.to(DEV), accumulate=True)
        same(d, x.clone().t().put_(dup, v, accumulate=True))

    # ---- nonzero and the masked ops over it: halves of a large input ----------------------------

    @pytest.mark.parametrize("dtype", [torch.bool, torch.float32], ids=str)
    def test_child_masked_nonzero(dtype):
        for shape in ((20000,), (200, 150), (1, 100, 200), (10, 1, 30, 40)):
            x = rand(shape, dtype) * (torch.rand(shape, generator=g) < 0.3)
            same(torch.nonzero(x.to(DEV)), torch.nonzero(x))
        xt = x.transpose(0, 3)
        same(torch.argwhere(xt.to(DEV)), torch.argwhere(xt))
        z = torch.zeros(200, 300, dtype=dtype)
        same(torch.nonzero(z.to(DEV)), torch.nonzero(z))

    def test_child_masked_ops():
        x = rand((400, 80), torch.float32)
        m = torch.rand(400, 80, generator=g) < 0.3
        same(x.to(DEV)[m.to(DEV)], x[m])
        same(torch.masked_select(x.to(DEV), m.to(DEV)), torch.masked_select(x, m))
        src = rand((400 * 80,), torch.float32)
        d = x.to(DEV)
        d.masked_scatter_(m.to(DEV), src.to(DEV))
        same(d, x.clone().masked_scatter_(m, src))
        d = x.to(DEV)
        d[m.to(DEV)] = 5.0
        e = x.clone()
        e[m] = 5.0
        same(d, e)

    def test_child_scatter_deterministic():
        # use_deterministic_algorithms: one invocation (index_put_) or one per slice (index_add_) in
        # CPU's order, across the split dispatches: bit-identical float sums.
        x = rand((2000, 40), torch.float32)
        idx = ints(600, 2000)
        src = rand((600, 40), torch.float32)
        torch.use_deterministic_algorithms(True)
        try:
            d = x.to(DEV)
            d.index_add_(0, idx.to(DEV), src.to(DEV))
            assert torch.equal(d.cpu(), x.clone().index_add_(0, idx, src))
            i, j = ints(300, 2000), ints(300, 40)
            v = rand((300,), torch.float32)
            d = x.to(DEV)
            d.index_put_((i.to(DEV), j.to(DEV)), v.to(DEV), accumulate=True)
            assert torch.equal(d.cpu(), x.clone().index_put_((i, j), v, accumulate=True))
            # rows wider than the limit: the single invocation's iteration is cut outermost first
            y = rand((6, 20000), torch.float32)
            r = torch.tensor([0, 3, 0, 5, 3, 0])
            w = rand((6, 20000), torch.float32)
            d = y.to(DEV)
            d.index_put_((r.to(DEV),), w.to(DEV), accumulate=True)
            assert torch.equal(d.cpu(), y.clone().index_put_((r,), w, accumulate=True))
        finally:
            torch.use_deterministic_algorithms(False)

    # ---- bad indices: reported once, from whichever window ---------------------------------------

    @pytest.mark.parametrize("where", ["first", "last"])
    def test_child_errors_reported(where):
        W = rand((3000, 40), torch.float32)
        bad = 3000 if where == "last" else -3001
        idx = torch.tensor([5, 2999, bad, 10])
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds for dimension 0 with size 3000"):
            W.to(DEV)[idx.to(DEV)].cpu()
        with pytest.raises(IndexError, match=r"index 4000 is out of bounds"):
            F.embedding(torch.tensor([1, 4000, 2]).to(DEV), W.to(DEV)).cpu()
        with pytest.raises(RuntimeError, match="index 3000 is out of bounds for dimension 0 with size 3000"):
            torch.gather(W.to(DEV), 0, torch.tensor([[0], [3000]]).to(DEV)).cpu()
        d = W.to(DEV)
        d.index_add_(0, torch.tensor([0, 3000]).to(DEV), torch.ones(2, 40).to(DEV))
        with pytest.raises(RuntimeError, match="index 3000 is out of bounds"):
            d.cpu()
        # the device is usable afterwards, and a good op still matches
        i = ints(20, 3000)
        same(W.to(DEV)[i.to(DEV)], W[i])
