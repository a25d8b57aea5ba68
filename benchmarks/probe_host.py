"""Host-side cost of recording ops (issue 17): CPU time per op while the GPU work is queued, not its
completion. Each case runs its op `--n` times between two synchronisations only; the figure is the
CPU time of the loop divided by the iterations, counted on the threads that record: the main thread
and PyTorch's autograd threads (`pt_autograd_*`, where backward runs for a non-CPU device), read from
/proc/self/task/*/schedstat. The adapter's own threads (lavapipe runs kernels on the CPU) are not
counted, and neither is their share of the wall time. The same code on CPU tensors (one intra-op
thread, so that OpenMP's spinning workers do not compete with lavapipe's) is printed for reference,
and the Stream's counters give dispatches per iteration, so composite cases also read as
us/dispatch. Linux only (schedstat).

    python benchmarks/probe_host.py [--n 2000] [--only SUBSTRING] [--cnn-batch 32 --cnn-size 64]

Columns: wall us/iter (recording loop, final synchronize excluded), the recording threads' CPU
us/iter, dispatches/iter, recording us/dispatch, and the CPU device's wall us/iter.
"""

import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")
import torch_webgpu  # noqa: F401
from torch_webgpu import _C

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (issue 17's CNN)


def recording_cpu_ns():
    """CPU time (ns) of the main thread and of PyTorch's autograd threads, from schedstat."""
    total = 0
    me = os.getpid()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
            if int(tid) != me and not comm.startswith("pt_autograd"):
                continue
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def sync(dev):
    if dev.type == "webgpu":
        torch.webgpu.synchronize()


def cases(dev, cnn_batch, cnn_size):
    """name -> (iterations scale, setup() -> step callable)"""
    c = {}

    def scalar_add():
        x = torch.zeros(4, device=dev)
        return lambda: x + 1

    def add_out():
        x, y, z = (torch.randn(4, device=dev) for _ in range(3))
        return lambda: torch.add(x, y, out=z)

    def mul_():
        x = torch.randn(4, device=dev)
        return lambda: x.mul_(0.5)

    def relu():
        x = torch.randn(4, device=dev)
        return lambda: F.relu(x)

    def sum_():
        x = torch.randn(4, device=dev)
        return lambda: x.sum()

    def conv():
        torch.manual_seed(0)
        x = torch.randn(2, 3, 8, 8, device=dev, requires_grad=True)
        w = torch.randn(4, 3, 3, 3, device=dev, requires_grad=True)

        def step():
            y = F.conv2d(x, w, padding=1)
            y.sum().backward()

        return step

    def bn():
        torch.manual_seed(0)
        m = torch.nn.BatchNorm2d(4).to(dev).train()
        x = torch.randn(2, 4, 8, 8, device=dev, requires_grad=True)

        def step():
            m(x).sum().backward()

        return step

    def sgd():
        torch.manual_seed(0)
        ps = [torch.nn.Parameter(torch.randn(16, device=dev)) for _ in range(10)]
        for p in ps:
            p.grad = torch.randn(16, device=dev)
        opt = torch.optim.SGD(ps, lr=0.01, momentum=0.9)
        opt.step()  # creates the momentum buffers
        return opt.step

    def cnn():
        model = run.cnn17_model().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = torch.randn(cnn_batch, 3, cnn_size, cnn_size, device=dev)
        y = torch.randint(0, 10, (cnn_batch,), device=dev)
        return run.train_step(model, opt, x, y)

    def fft(n):
        def setup():
            x = torch.randn(n, dtype=torch.complex64).to(dev)
            return lambda: torch.fft.fft(x)

        return setup

    c["y = x + 1 (f32[4])"] = (1, scalar_add)
    c["add(x, y, out=z)"] = (1, add_out)
    c["x.mul_(0.5)"] = (1, mul_)
    c["F.relu(x)"] = (1, relu)
    c["x.sum()"] = (1, sum_)
    c["torch.fft.fft, complex64[2^10]"] = (0.1, fft(1 << 10))
    c["torch.fft.fft, complex64[2^20]"] = (0.01, fft(1 << 20))
    c["conv2d fwd+bwd (2x3x8x8, 4 filters)"] = (0.1, conv)
    c["BatchNorm2d train fwd+bwd (2x4x8x8)"] = (0.1, bn)
    c["SGD momentum step, 10 params"] = (0.1, sgd)
    c[f"CNN train step (issue 17, batch {cnn_batch}, {cnn_size}x{cnn_size})"] = (0.01, cnn)
    return c


def measure(dev, setup, iters, repeats):
    step = setup()
    for _ in range(3):
        step()  # warm-up: pipelines, allocator, autograd
    sync(dev)
    best = None
    for _ in range(repeats):
        before = dict(_C._stream_counters()) if dev.type == "webgpu" else None
        sync(dev)
        w0, t0 = time.perf_counter(), recording_cpu_ns()
        for _ in range(iters):
            step()
        w1, t1 = time.perf_counter(), recording_cpu_ns()
        sync(dev)
        after = dict(_C._stream_counters()) if dev.type == "webgpu" else None
        disp = (after["dispatches"] - before["dispatches"]) / iters if before else 0.0
        r = ((w1 - w0) / iters * 1e6, (t1 - t0) / iters * 1e-3, disp)
        if best is None or r[1] < best[1]:
            best = r
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--cnn-batch", type=int, default=32)
    ap.add_argument("--cnn-size", type=int, default=64)
    ap.add_argument("--no-cpu", action="store_true")
    a = ap.parse_args()
    wg, cpu = torch.device("webgpu"), torch.device("cpu")
    print(f"{'case':48s} {'wall us':>9s} {'rec us':>9s} {'disp':>6s} {'us/disp':>8s} {'cpu us':>8s}")
    names = cases(wg, a.cnn_batch, a.cnn_size)
    cpu_cases = cases(cpu, a.cnn_batch, a.cnn_size)
    for name, (scale, setup) in names.items():
        if a.only and a.only not in name:
            continue
        iters = max(2, int(a.n * scale))
        w, t, d = measure(wg, setup, iters, a.repeats)
        c = float("nan")
        if not a.no_cpu:
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            c = measure(cpu, cpu_cases[name][1], iters, a.repeats)[0]
            torch.set_num_threads(threads)
        per = t / d if d else float("nan")
        print(f"{name:48s} {w:9.1f} {t:9.1f} {d:6.1f} {per:8.1f} {c:8.1f}", flush=True)


if __name__ == "__main__":
    main()
