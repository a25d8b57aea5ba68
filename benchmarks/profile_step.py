"""GPU time per kernel of a training step, from the timestamps the GPU writes around each dispatch
(torch_webgpu._C._kernel_timing; works on torch versions whose profiler has no PrivateUse1 hook).
Prints the kernels (pipeline keys, shortened) with their share of the step's GPU time: what to
speed up first (issue 17's "measure first").

    python benchmarks/profile_step.py [cnn|cnn_amp|gpt2|gpt2_fwd|gpt2_fwd_amp|<op>] [--steps 5] [--top 20]

The single-op workloads (fft, matvec, mm128, mm16, layer_norm, layer_norm_bwd, softmax, conv, conv16) are
benchmarks/run.py's rows; for them the wall time per call is printed too, so that GPU time and
the CPU's per-call cost can be told apart.
"""

import argparse
import os
import re
import sys
import time
from collections import defaultdict

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run
from probe_host import recording_cpu_ns

import torch_webgpu  # noqa: F401
from torch_webgpu import _C


def short(key):
    """A pipeline key without its parameter hash and compiled-in constants."""
    key = key.split("|")[0]
    key = re.sub(r":(ga|gb):(\w+):.*", r":\1:\2", key, flags=re.S)
    return key.replace("\n", " ")[:90]


def cnn_step(dev, amp):
    model, opt, x, y, _ = run.cnn_setup(dev, 32, 64)
    scaler = torch.amp.GradScaler(dev.type) if amp else None

    def step():
        with torch.autocast(dev.type, dtype=torch.float16, enabled=amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        if amp:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()

    return step


def gpt2_step(dev):
    """benchmarks/run.py's GPT-2-small training step (batch 4 x 128 tokens, AdamW)."""
    return run.gpt2_train_setup(dev)[0]


def gpt2_forward_step(dev, amp):
    """benchmarks/run.py's GPT-2-small forward (128 tokens, batch 1), under autocast f16 if amp."""
    run._examples()
    import contextlib

    import gpt

    torch.manual_seed(0)
    model = gpt.GPT(50257, 768, 12, 12, 1024).eval().to(dev)
    idx = torch.randint(0, 50257, (1, 128), generator=torch.Generator().manual_seed(7)).to(dev)
    ctx = torch.autocast(dev.type, dtype=torch.float16) if amp else contextlib.nullcontext()
    ctx.__enter__()  # one autocast region for every step, as the benchmark row times it
    torch.set_grad_enabled(False)
    return lambda: model(idx)


def op_step(dev, name):
    """One of benchmarks/run.py's single-op rows as a step."""
    g = torch.Generator().manual_seed(0)
    r = lambda *shape: torch.randn(*shape, generator=g).to(dev)  # noqa: E731
    if name == "fft":
        x = torch.complex(r(1 << 20), r(1 << 20))
        return lambda: torch.fft.fft(x)
    if name == "matvec":
        a, b = r(1, 4096), r(4096, 4096)
        return lambda: a @ b
    if name == "mm128":
        a, b = r(128, 768), r(768, 768)
        return lambda: a @ b
    if name == "softmax":
        x = r(4096, 4096)
        return lambda: torch.softmax(x, -1)
    if name in ("layer_norm", "layer_norm_bwd"):
        x, w, b = r(4096, 4096), r(4096), r(4096)
        if name == "layer_norm":
            return lambda: torch.nn.functional.layer_norm(x, (4096,), w, b)
        x.requires_grad_(True), w.requires_grad_(True), b.requires_grad_(True)
        y = torch.nn.functional.layer_norm(x, (4096,), w, b)
        gy = torch.randn_like(y)
        return lambda: torch.autograd.grad(y, (x, w, b), gy, retain_graph=True)
    if name == "cholesky":
        a = torch.randn(4096, 4096, generator=g)
        a = (a @ a.T / 4096 + torch.eye(4096)).to(dev)
        return lambda: torch.linalg.cholesky(a)
    if name == "batchnorm":
        bn = torch.nn.BatchNorm2d(64).to(dev)
        x = r(32, 64, 64, 64).requires_grad_(True)
        gy = r(32, 64, 64, 64)
        return lambda: bn(x).backward(gy)
    if name in ("conv", "conv16"):
        x, w = r(32, 64, 64, 64), r(64, 64, 3, 3)
        if name == "conv16":
            x, w = x.half(), w.half()
        return lambda: torch.nn.functional.conv2d(x, w, padding=1)
    if name in ("chain", "chain_eager"):  # benchmarks/run.py's fused pointwise row (issue 16)
        x, w, b = r(1 << 24), r(1 << 24), r(1 << 24)

        def f(x, w, b):
            return torch.nn.functional.gelu(x * w + b) * 0.5

        cf = torch.compile(f) if name == "chain" else f
        return lambda: cf(x, w, b)
    if name == "mm16":
        a, b = r(4096, 4096).half(), r(4096, 4096).half()
        return lambda: a @ b
    raise SystemExit(f"unknown workload {name}")


OPS = [
    "fft",
    "matvec",
    "mm128",
    "softmax",
    "layer_norm",
    "layer_norm_bwd",
    "conv",
    "conv16",
    "mm16",
    "chain",
    "chain_eager",
    "cholesky",
    "batchnorm",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "workload",
        nargs="?",
        default="cnn",
        choices=["cnn", "cnn_amp", "cnn_compiled", "gpt2", "gpt2_fwd", "gpt2_fwd_amp", *OPS],
    )
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--host-ops", type=int, default=0, help="also list this many ATen ops by host time")
    a = ap.parse_args()
    dev = torch.device("webgpu")
    if a.workload in OPS:
        step = op_step(dev, a.workload)
    elif a.workload == "cnn_compiled":
        step = run.compiled_cnn_step(dev)[0]
    elif a.workload == "gpt2":
        step = gpt2_step(dev)
    elif a.workload.startswith("gpt2_fwd"):
        step = gpt2_forward_step(dev, a.workload.endswith("amp"))
    else:
        step = cnn_step(dev, a.workload == "cnn_amp")
    for _ in range(2):  # compile the pipelines, fill the allocator's cache
        step()
    torch.webgpu.synchronize()
    s0 = torch.webgpu.stream_counters()
    c0 = recording_cpu_ns()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    t1 = time.perf_counter()
    c1 = recording_cpu_ns()
    torch.webgpu.synchronize()
    wall = (time.perf_counter() - t0) / a.steps
    s1 = torch.webgpu.stream_counters()
    record_wall, record_cpu = (t1 - t0) / a.steps, (c1 - c0) / 1e9 / a.steps
    host = {k: (s1[k] - s0[k]) / a.steps for k in s1 if k.endswith("_ns") or k in ("submits", "bind_groups_created")}
    print(
        "per step: "
        + ", ".join(f"{k}={v / 1e3:.1f}us" if k.endswith("_ns") else f"{k}={v:.1f}" for k, v in host.items())
    )
    if a.host_ops:  # the ATen ops' host time (torch.profiler, CPU activity only)
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(a.steps):
                step()
            torch.webgpu.synchronize()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=a.host_ops))
    _C._take_kernel_times()
    _C._kernel_timing(True)
    for _ in range(a.steps):
        step()
    torch.webgpu.synchronize()
    _C._kernel_timing(False)
    times = _C._take_kernel_times()
    if not times:
        raise SystemExit("no kernel times: the adapter lacks timestamp-query")
    per = defaultdict(lambda: [0, 0])
    for name, ns in times:
        per[short(name)][0] += ns
        per[short(name)][1] += 1
    total = sum(v[0] for v in per.values())
    print(
        f"{a.workload}: {len(times) / a.steps:.0f} dispatches and {total / a.steps / 1e3:.1f} us of GPU time per step"
        f" ({wall * 1e6:.1f} us wall per step without timestamps; recording: {record_wall * 1e6:.1f} us wall,"
        f" {record_cpu * 1e6:.1f} us CPU of the recording threads)"
    )
    for name, (ns, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[: a.top]:
        print(f"{100 * ns / total:5.1f}%  {ns / a.steps / 1e3:8.1f} us/step  {n // a.steps:4d}x  {name}")


if __name__ == "__main__":
    main()
