"""Compiled against eager on webgpu, per call: wall time and the Stream's counters (dispatches,
bind-group misses, copies, uploads, readbacks, waits, submits), for small versions of
benchmarks/run.py's three torch.compile rows (issue 16): what a compiled call costs beyond its kernels.

    python benchmarks/probe_compile.py [gelu|cnn|gpt2 ...] [--iters N] [--profile] [--full]

--profile prints cProfile's top functions of the compiled calls (the Python side of the wrapper and
the launcher); --full uses run.py's sizes (slow on a CPU adapter), --tiny sizes at which the GPU's work is negligible
(what a call costs the CPU: Dynamo's guards, the wrappers, the launches).
"""

import argparse
import cProfile
import os
import pstats
import sys
import time

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
import run

import torch_webgpu
from torch_webgpu._inductor import runtime as wrt

TINY = False  # --tiny: sizes at which the GPU work is negligible (the CPU's cost per call)

KEYS = (
    "dispatches",
    "bind_groups_created",
    "copies",
    "uploads",
    "readbacks",
    "waits",
    "submits",
    "pipeline_compiles",
)


def counters():
    return dict(torch_webgpu._C._stream_counters())


def per_call(fn, iters, profile=False):
    """(seconds per call, counters per call, generated launches per call) of fn over iters calls
    after two warm-up calls."""
    dev = torch.device("webgpu")
    for _ in range(2):
        fn()
    run.synchronize(dev)
    c0, l0 = counters(), wrt.launches
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    for _ in range(iters):
        fn()
    run.synchronize(dev)
    if prof:
        prof.disable()
    t = (time.perf_counter() - t0) / iters
    c1 = counters()
    d = {k: (c1[k] - c0[k]) / iters for k in KEYS}
    return t, d, (wrt.launches - l0) / iters, prof


def kernel_times(fn, top, iters=3):
    """GPU time per kernel (timestamps around each dispatch), generated kernels named by their
    wrapper name and kind (reduction or pointwise, workgroup count of the last launch)."""
    from collections import defaultdict

    names = {}
    orig = wrt.WGSLKernel.__call__

    def spy(k, groups, *args):
        kind = "red" if "workgroupBarrier" in k.source else ("ser" if "for (var r0_" in k.source else "pw")
        names[k.key] = f"{k.name} {kind} groups={groups}"
        if k._vec4:
            names[k._vec4[0]] = names[k.key] + " vec4"
        return orig(k, groups, *args)

    wrt.WGSLKernel.__call__ = spy
    try:
        torch_webgpu._C._take_kernel_times()
        torch_webgpu._C._kernel_timing(True)
        for _ in range(iters):
            fn()
        torch.webgpu.synchronize()
        torch_webgpu._C._kernel_timing(False)
        times = torch_webgpu._C._take_kernel_times()
    finally:
        wrt.WGSLKernel.__call__ = orig
    per = defaultdict(lambda: [0, 0])
    for key, ns in times:
        k = key.split("|")[0]
        k = names.get(k[len("wgsl:") :], k) if k.startswith("wgsl:") else k[:70].replace("\n", " ")
        per[k][0] += ns
        per[k][1] += 1
    total = sum(v[0] for v in per.values())
    print(f"    {len(times) / iters:.0f} dispatches, {total / iters / 1e6:.2f} ms GPU per call")
    for k, (ns, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"    {100 * ns / total:5.1f}% {ns / iters / 1e6:8.3f} ms {n / iters:5.1f}x  {k}")


def gelu(full):
    n = 1 << (24 if full else (4 if TINY else 20))
    dev = "webgpu"
    x, w, b = (torch.randn(n, device=dev) for _ in range(3))

    def f(x, w, b):
        return torch.nn.functional.gelu(x * w + b) * 0.5

    cf = torch.compile(f)
    torch.testing.assert_close(cf(x, w, b).cpu(), f(x, w, b).cpu(), rtol=1e-5, atol=1e-5)
    out = torch.empty(n, device=dev)
    return {
        "eager": lambda: f(x, w, b),
        "compiled": lambda: cf(x, w, b),
        "add (one pass)": lambda: torch.add(x, w, out=out),
    }


def cnn(full):
    dev = torch.device("webgpu")
    batch, size = (32, 64) if full else ((1, 16) if TINY else (4, 32))
    model, opt, x, y, _ = run.cnn_setup(dev, batch, size)
    loss_fn = torch.compile(lambda x, y: torch.nn.functional.cross_entropy(model(x), y))

    def step(lf):
        return run.train_step(model, opt, x, y, lf)

    # Inductor's channels-last layout optimisation, as before it was turned off for webgpu graphs
    loss_cl = torch.compile(
        lambda x, y: torch.nn.functional.cross_entropy(model(x), y), options={"layout_optimization": True}
    )
    return {
        "eager": step(lambda x, y: torch.nn.functional.cross_entropy(model(x), y)),
        "compiled": step(loss_fn),
        "compiled, NHWC": step(loss_cl),
    }


def gpt2(full):
    import gpt

    dev = "webgpu"
    torch.manual_seed(0)
    if full:
        model, tokens = gpt.GPT(50257, 768, 12, 12, 1024).eval(), 128
    else:
        model, tokens = gpt.GPT(1000, 128, 4, 2, 128).eval(), (8 if TINY else 64)
    model = model.to(dev)
    idx = torch.randint(0, model.tok.weight.shape[0], (1, tokens)).to(dev)
    cm = torch.compile(model)

    def fwd(m):
        def s():
            with torch.no_grad():
                return m(idx)

        return s

    return {"eager": fwd(model), "compiled": fwd(cm)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", nargs="*", default=["gelu", "cnn", "gpt2"])
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: the per-call CPU cost")
    ap.add_argument("--kernels", type=int, default=0, help="print the N kernels of most GPU time per call")
    a = ap.parse_args()
    global TINY
    TINY = a.tiny
    for row in a.rows:
        fns = {"gelu": gelu, "cnn": cnn, "gpt2": gpt2}[row](a.full)
        for name, fn in fns.items():
            t, d, launches, prof = per_call(fn, a.iters, a.profile and name == "compiled")
            cs = " ".join(f"{k}={v:g}" for k, v in d.items())
            print(f"{row:5s} {name:15s} {t * 1e3:9.2f} ms/call  generated={launches:g}  {cs}", flush=True)
            if prof:
                pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            if a.kernels:
                kernel_times(fn, a.kernels)


if __name__ == "__main__":
    main()
