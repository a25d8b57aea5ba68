"""Survey: which ops work when their operands span more than one storage binding.

Runs each case below in a child interpreter with TORCH_WEBGPU_MAX_BINDING lowered (65536 by
default), on inputs of ~1-4 MB, forward and (where there is one) backward, and compares with CPU.
Prints one line per case: PASS, RAISE (the message), WRONG (the largest difference) or CRASH.

    python tools/large_operands_survey.py [--limit BYTES] [-k SUBSTRING ...]

A crashing case is reported and the child restarted with the cases after it.
"""

import argparse
import os
import re
import subprocess
import sys

CHILD = r"""
import sys, traceback
import torch, torch_webgpu
import torch.nn.functional as F
D = "webgpu"
g = torch.Generator().manual_seed(0)

def r(*s):
    return torch.randn(s, generator=g)

def ri(hi, *s):
    return torch.randint(0, hi, s, generator=g)

def run(fn, *args, grad=True, tol=(1e-4, 1e-4)):
    # fn(*args) on CPU and on webgpu; float args require grad; backward with a random cotangent.
    ca = [a.clone().requires_grad_(grad) if (torch.is_tensor(a) and a.is_floating_point()) else a for a in args]
    da = [a.detach().to(D).requires_grad_(grad) if (torch.is_tensor(a) and a.is_floating_point()) else
          (a.to(D) if torch.is_tensor(a) else a) for a in args]
    yc, yd = fn(*ca), fn(*da)
    yc = yc if isinstance(yc, (tuple, list)) else (yc,)
    yd = yd if isinstance(yd, (tuple, list)) else (yd,)
    worst = 0.0
    for c, d in zip(yc, yd):
        torch.testing.assert_close(d.detach().cpu(), c.detach(), atol=tol[0], rtol=tol[1], equal_nan=True)
    if grad:
        outs = [(c, d) for c, d in zip(yc, yd) if c.requires_grad]
        cots = [r(*c.shape) for c, _ in outs]
        torch.autograd.backward([c for c, _ in outs], cots)
        torch.autograd.backward([d for _, d in outs], [t.to(D) for t in cots])
        for c, d in zip(ca, da):
            if torch.is_tensor(c) and c.requires_grad:
                torch.testing.assert_close(d.grad.cpu(), c.grad, atol=tol[0] * 10, rtol=tol[1] * 10, equal_nan=True)

X4 = r(16, 32, 32, 32)  # 2 MB, planes of 4 KB, images of 128 KB
X5 = r(4, 16, 8, 16, 16)  # 2 MB, planes of 8 KB
CASES = {
    "max_pool2d": lambda: run(lambda x: F.max_pool2d(x, 3, 2, 1), X4),
    "max_pool2d_indices": lambda: run(lambda x: F.max_pool2d(x, 2, return_indices=True)[0], X4),
    "avg_pool2d": lambda: run(lambda x: F.avg_pool2d(x, 3, 2, 1), X4),
    "adaptive_avg_pool2d": lambda: run(lambda x: F.adaptive_avg_pool2d(x, (7, 9)), X4),
    "adaptive_max_pool2d": lambda: run(lambda x: F.adaptive_max_pool2d(x, (7, 9)), X4),
    "max_pool3d": lambda: run(lambda x: F.max_pool3d(x, 3, 2, 1), X5),
    "avg_pool3d": lambda: run(lambda x: F.avg_pool3d(x, 2), X5),
    "adaptive_avg_pool3d": lambda: run(lambda x: F.adaptive_avg_pool3d(x, (3, 5, 6)), X5),
    "adaptive_max_pool3d": lambda: run(lambda x: F.adaptive_max_pool3d(x, (3, 5, 6)), X5),
    "max_pool1d": lambda: run(lambda x: F.max_pool1d(x, 3, 2), r(16, 64, 512)),
    "avg_pool1d": lambda: run(lambda x: F.avg_pool1d(x, 3, 2), r(16, 64, 512)),
    "lp_pool2d": lambda: run(lambda x: F.lp_pool2d(x, 2, 2), X4, tol=(1e-3, 1e-3)),
    "upsample_nearest2d": lambda: run(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), X4),
    "upsample_bilinear2d": lambda: run(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), X4),
    "upsample_bilinear2d_ac": lambda: run(lambda x: F.interpolate(x, size=(90, 70), mode="bilinear",
                                                                align_corners=True), X4),
    "upsample_bicubic2d": lambda: run(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), X4),
    "upsample_nearest1d": lambda: run(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), r(16, 64, 512)),
    "upsample_linear1d": lambda: run(lambda x: F.interpolate(x, scale_factor=2, mode="linear"), r(16, 64, 512)),
    "upsample_nearest3d": lambda: run(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), X5),
    "upsample_trilinear3d": lambda: run(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"), X5),
    "upsample_nearest_exact2d": lambda: run(lambda x: F.interpolate(x, size=(50, 70), mode="nearest-exact"), X4),
    "pixel_shuffle": lambda: run(lambda x: F.pixel_shuffle(x, 2), X4),
    "sdpa": lambda: run(F.scaled_dot_product_attention, r(32, 4, 64, 32), r(32, 4, 64, 32), r(32, 4, 64, 32),
                        tol=(1e-4, 1e-3)),
    "sdpa_causal": lambda: run(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                               r(32, 4, 64, 32), r(32, 4, 64, 32), r(32, 4, 64, 32), tol=(1e-4, 1e-3)),
    "sdpa_mask": lambda: run(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                             r(16, 4, 64, 32), r(16, 4, 64, 32), r(16, 4, 64, 32), r(16, 4, 64, 64),
                             tol=(1e-4, 1e-3)),
    "one_hot": lambda: run(lambda i: F.one_hot(i, 100), ri(100, 5000), grad=False),
    "embedding": lambda: run(lambda i, w: F.embedding(i, w), ri(10000, 64, 32), r(10000, 64)),
    "embedding_bag_sum": lambda: run(lambda i, w: F.embedding_bag(i, w, mode="sum"), ri(10000, 64, 32), r(10000, 64)),
    "embedding_bag_mean": lambda: run(lambda i, o, w: F.embedding_bag(i, w, o, mode="mean"),
                                      ri(10000, 2048), torch.arange(0, 2048, 16), r(10000, 64)),
    "embedding_bag_max": lambda: run(lambda i, w: F.embedding_bag(i, w, mode="max"), ri(10000, 64, 32), r(10000, 64)),
    "softmax_last": lambda: run(lambda x: F.softmax(x, -1), r(512, 1024)),
    "softmax_dim0": lambda: run(lambda x: F.softmax(x, 0), r(512, 1024)),
    "softmax_dim1_4d": lambda: run(lambda x: F.softmax(x, 1), X4),
    "log_softmax_last": lambda: run(lambda x: F.log_softmax(x, -1), r(512, 1024)),
    "log_softmax_dim0": lambda: run(lambda x: F.log_softmax(x, 0), r(512, 1024)),
    "softmax_one_long_row": lambda: run(lambda x: F.softmax(x, -1), r(2, 300000)),
    "layer_norm": lambda: run(lambda x, w, b: F.layer_norm(x, (1024,), w, b), r(512, 1024), r(1024), r(1024),
                              tol=(1e-4, 1e-3)),
    "layer_norm_long_row": lambda: run(lambda x: F.layer_norm(x, (300000,)), r(2, 300000), tol=(1e-4, 1e-3)),
    "group_norm": lambda: run(lambda x, w, b: F.group_norm(x, 4, w, b), X4, r(32), r(32), tol=(1e-4, 1e-3)),
    "batch_norm_train": lambda: run(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), X4, r(32),
                                    r(32), tol=(1e-4, 1e-3)),
    "instance_norm": lambda: run(lambda x: F.instance_norm(x), X4, tol=(1e-4, 1e-3)),
    "rms_norm": lambda: run(lambda x, w: F.rms_norm(x, (1024,), w), r(512, 1024), r(1024), tol=(1e-4, 1e-3)),
    "cross_entropy": lambda: run(lambda x, t: F.cross_entropy(x, t), r(512, 1000), ri(1000, 512)),
    "cross_entropy_probs": lambda: run(lambda x, t: F.cross_entropy(x, t.softmax(-1)), r(512, 1000), r(512, 1000)),
    "cross_entropy_smooth": lambda: run(lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), r(512, 1000),
                                        ri(1000, 512)),
    "cross_entropy_2d": lambda: run(lambda x, t: F.cross_entropy(x, t), r(16, 21, 32, 32), ri(21, 16, 32, 32)),
    "nll_loss_none": lambda: run(lambda x, t: F.nll_loss(x, t, reduction="none"), r(512, 1000), ri(1000, 512)),
    "mse_loss": lambda: run(lambda a, b: F.mse_loss(a, b), r(512, 1024), r(512, 1024)),
    "bce_logits": lambda: run(lambda a, b: F.binary_cross_entropy_with_logits(a, b), r(512, 1024),
                              torch.rand(512, 1024, generator=g)),
    "kl_div": lambda: run(lambda a, b: F.kl_div(a, b, reduction="batchmean"), r(512, 1024).log_softmax(-1),
                          r(512, 1024).softmax(-1)),
    "cat_dim0": lambda: run(lambda a, b: torch.cat([a, b]), r(300, 1024), r(200, 1024)),
    "cat_dim1": lambda: run(lambda a, b: torch.cat([a, b], 1), r(512, 700), r(512, 300)),
    "stack": lambda: run(lambda a, b: torch.stack([a, b], 1), r(512, 700), r(512, 700)),
    "index_select": lambda: run(lambda x, i: x.index_select(0, i), r(1000, 1024), ri(1000, 700)),
    "index_select_dim1": lambda: run(lambda x, i: x.index_select(1, i), r(1000, 1024), ri(1024, 700)),
    "gather": lambda: run(lambda x, i: x.gather(1, i), r(512, 1024), ri(1024, 512, 900)),
    "scatter": lambda: run(lambda x, i, s: x.scatter(1, i, s), r(512, 1024),
                           torch.stack([torch.randperm(1024, generator=g)[:600] for _ in range(512)]), r(512, 600)),
    "scatter_add": lambda: run(lambda x, i, s: x.scatter_add(1, i, s), r(512, 1024), ri(1024, 512, 900), r(512, 900),
                               tol=(1e-4, 1e-4)),
    "index_add": lambda: run(lambda x, i, s: x.index_add(0, i, s), r(1000, 1024), ri(1000, 700), r(700, 1024)),
    "advanced_index": lambda: run(lambda x, i: x[i], r(1000, 1024), ri(1000, 700)),
    "index_put": lambda: run(lambda x, i, v: x.index_put((i,), v, accumulate=True), r(1000, 1024), ri(1000, 700),
                             r(700, 1024)),
    "masked_select": lambda: run(lambda x: x[x > 0], r(512, 1024)),
    "sort": lambda: run(lambda x: torch.sort(x, dim=-1, stable=True)[0], r(512, 1024)),
    "sort_dim0": lambda: run(lambda x: torch.sort(x, dim=0, stable=True)[0], r(512, 1024)),
    "argsort": lambda: run(lambda x: torch.argsort(x, dim=-1, stable=True), r(512, 1024), grad=False),
    "topk": lambda: run(lambda x: torch.topk(x, 10, -1)[0], r(512, 1024)),
    "topk_dim0": lambda: run(lambda x: torch.topk(x, 10, 0)[0], r(512, 1024)),
    "sdpa_one_entry_past_limit": lambda: run(F.scaled_dot_product_attention, r(1, 8, 256, 64), r(1, 8, 256, 64),
                                             r(1, 8, 256, 64), tol=(1e-4, 1e-3)),
    "max_pool2d_one_plane_past_limit": lambda: run(lambda x: F.max_pool2d(x, 2), r(2, 2, 256, 256)),
    "sort_one_long_row": lambda: run(lambda x: torch.sort(x)[0], r(300000)),
    "cumsum": lambda: run(lambda x: torch.cumsum(x, -1), r(512, 1024), tol=(1e-3, 1e-4)),
    "cumsum_dim0": lambda: run(lambda x: torch.cumsum(x, 0), r(512, 1024), tol=(1e-3, 1e-4)),
    "cumprod": lambda: run(lambda x: torch.cumprod(x, -1), torch.rand(512, 1024, generator=g) + 0.5,
                           tol=(1e-4, 1e-3)),
    "logcumsumexp": lambda: run(lambda x: torch.logcumsumexp(x, -1), r(512, 1024), tol=(1e-4, 1e-4)),
    "cummax": lambda: run(lambda x: torch.cummax(x, -1)[0], r(512, 1024)),
    "sum_dim": lambda: run(lambda x: x.sum(1), r(512, 1024), tol=(1e-4, 1e-4)),
    "sum_dim0": lambda: run(lambda x: x.sum(0), r(512, 1024), tol=(1e-4, 1e-4)),
    "mean_dim": lambda: run(lambda x: x.mean((2, 3)), X4),
    "max_dim": lambda: run(lambda x: x.max(1)[0], r(512, 1024)),
    "argmax_dim": lambda: run(lambda x: x.argmax(0), r(512, 1024), grad=False),
    "var_dim": lambda: run(lambda x: x.var(1), r(512, 1024), tol=(1e-4, 1e-4)),
    "norm_dim": lambda: run(lambda x: x.norm(dim=1), r(512, 1024), tol=(1e-4, 1e-4)),
    "logsumexp_dim": lambda: run(lambda x: x.logsumexp(1), r(512, 1024), tol=(1e-4, 1e-4)),
    "prod_dim": lambda: run(lambda x: x.prod(1), torch.rand(512, 1024, generator=g) + 0.5, tol=(1e-4, 1e-3)),
    "unfold_im2col": lambda: run(lambda x: F.unfold(x, 3, padding=1), r(16, 8, 32, 32)),
    "fold_col2im": lambda: run(lambda x: F.fold(x, (32, 32), 3, padding=1), r(16, 72, 1024)),
    "grid_sample": lambda: run(lambda x, gr: F.grid_sample(x, gr, align_corners=False), X4,
                               torch.rand(16, 24, 24, 2, generator=g) * 2 - 1, tol=(1e-4, 1e-3)),
    "pad_reflect": lambda: run(lambda x: F.pad(x, (2, 2, 2, 2), mode="reflect"), X4),
    "repeat": lambda: run(lambda x: x.repeat(2, 1), r(512, 1024)),
    "repeat_interleave": lambda: run(lambda x: x.repeat_interleave(2, 0), r(512, 1024)),
    "where": lambda: run(lambda x, y: torch.where(x > 0, x, y), r(512, 1024), r(512, 1024)),
    "bmm": lambda: run(torch.bmm, r(16, 128, 256), r(16, 256, 128), tol=(1e-3, 1e-4)),
    "linear": lambda: run(F.linear, r(512, 1024), r(600, 1024), r(600), tol=(1e-3, 1e-4)),
    "conv2d": lambda: run(lambda x, w: F.conv2d(x, w, padding=1), r(64, 8, 32, 32), r(8, 8, 3, 3) * 0.1,
                          tol=(1e-3, 1e-3)),
    "dropout_eval": lambda: run(lambda x: F.dropout(x, 0.5, training=False), X4),
    "gelu": lambda: run(F.gelu, X4),
    "bincount": lambda: run(lambda i: torch.bincount(i, minlength=100), ri(100, 600000), grad=False),
    "histc": lambda: run(lambda x: torch.histc(x, 100), r(600000), grad=False),
    "unique": lambda: run(lambda i: torch.unique(i), ri(100000, 600000), grad=False),
    "kthvalue": lambda: run(lambda x: torch.kthvalue(x, 5, -1)[0], r(512, 1024)),
    "median_dim": lambda: run(lambda x: torch.median(x, -1)[0], r(512, 1024)),
    "ctc_loss": lambda: run(lambda lp, t: F.ctc_loss(lp, t, [200] * 16, [50] * 16), r(200, 16, 100).log_softmax(-1),
                            ri(99, 16, 50) + 1, tol=(1e-3, 1e-3)),
}

names = sys.argv[1:]
for name in names:
    print("START", name, flush=True)
    try:
        CASES[name]()
        print("RESULT", name, "PASS", flush=True)
    except AssertionError as e:
        msg = " ".join(str(e).split())
        print("RESULT", name, "WRONG", msg[:300], flush=True)
    except Exception as e:
        msg = " ".join(str(e).split("\n")[0].split())
        print("RESULT", name, "RAISE", type(e).__name__ + ": " + msg[:300], flush=True)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=1 << 16)
    ap.add_argument("-k", nargs="*", default=[])
    a = ap.parse_args()
    env = dict(os.environ, TORCH_WEBGPU_MAX_BINDING=str(a.limit), TORCH_WEBGPU_FALLBACK="0")
    names = re.findall(r'^    "(\w+)":', CHILD, re.M)
    if a.k:
        names = [n for n in names if any(k in n for k in a.k)]
    results = {}
    while names:
        p = subprocess.run([sys.executable, "-c", CHILD, *names], env=env, capture_output=True, text=True)
        started = None
        for line in p.stdout.splitlines():
            if line.startswith("START "):
                started = line.split()[1]
            elif line.startswith("RESULT "):
                _, n, status, *rest = [*line.split(" ", 3), ""]
                results[n] = (status, rest[0] if rest else "")
                print(f"{n:28s} {status:6s} {results[n][1]}", flush=True)
                started = None
        if started is None:
            if p.returncode != 0:
                print("child failed:", p.stderr[-2000:])
            break
        results[started] = ("CRASH", (p.stderr.strip().splitlines() or ["?"])[-1][:300])
        print(f"{started:28s} CRASH  {results[started][1]}", flush=True)
        names = names[names.index(started) + 1 :]
    counts = {}
    for s, _ in results.values():
        counts[s] = counts.get(s, 0) + 1
    print("summary:", counts)


if __name__ == "__main__":
    main()
