"""Side-by-side speed of torch-webgpu and torch on a reference device (CUDA if present, else CPU).
Every figure is measured on both devices in the same run; a new figure is one new row in BENCHMARKS.

    python benchmarks/run.py [--compare cuda|cpu] [--out FILE] [--only SUBSTRING] [--json FILE]
                             [--doc docs/benchmarks.md] [--render JSON --doc FILE] [--smoke]

Each row checks its result against CPU before timing it. Float32 matmuls and convolutions on CUDA run
with TF32 off.
"""

import argparse
import contextlib
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable, Optional

# A benchmark of the CPU fallback would measure copies, not kernels: make missing ops an error.
os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")
# --smoke (inherited by reference children through the environment): the rows that read it run
# small sizes once, to check on a slow adapter that they run and agree with CPU; not a measurement.
SMOKE = os.environ.get("TORCH_WEBGPU_BENCH_SMOKE") == "1"

import torch  # noqa: E402

# A reference-only child process (see measure_in_child) runs without torch_webgpu: PyTorch keeps one
# accelerator per process, and with PrivateUse1 registered CUDA's autograd engine loses its streams
# (torch 2.11: "opt_ready_stream && opt_parent_stream" assert in engine.cpp on a CUDA backward).
_REF_CHILD = os.environ.get("TORCH_WEBGPU_BENCH_REF_CHILD") == "1"
if not _REF_CHILD:
    import torch_webgpu  # noqa: E402,F401


# ----------------------------------------------------------------------------- devices


def synchronize(dev: torch.device) -> None:
    if dev.type == "webgpu":
        torch.webgpu.synchronize()
    elif dev.type == "cuda":
        torch.cuda.synchronize(dev)
    # cpu: ops have finished when they return


def empty_cache(dev: torch.device) -> None:
    if dev.type == "webgpu":
        torch.webgpu.empty_cache()
    elif dev.type == "cuda":
        torch.cuda.empty_cache()


def stream_counters() -> Optional[dict]:
    fn = getattr(getattr(torch_webgpu, "_C", None), "_stream_counters", None)
    if fn is None:
        return None
    try:
        return dict(fn())
    except Exception:
        return None


def counter_delta(before: Optional[dict], after: Optional[dict]) -> Optional[dict]:
    if before is None or after is None:
        return None
    return {k: after[k] - before.get(k, 0) for k in after if isinstance(after[k], (int, float))}


class CheckFailed(AssertionError):
    pass


# ----------------------------------------------------------------------------- benchmarks
# Each function takes a device, runs its own warm-up, checks its result against CPU and returns
# one number in the row's unit.


def tiny_add_chain(dev: torch.device, n: int = 2000, repeats: int = 5) -> float:
    """Per-op cost of n dependent adds on 4 floats: launch/record overhead, not arithmetic."""
    y = torch.ones(4, device=dev)

    def chain():
        x = torch.zeros(4, device=dev)
        synchronize(dev)
        t0 = time.perf_counter()
        for _ in range(n):
            x = x + y
        synchronize(dev)
        return time.perf_counter() - t0, x

    chain()  # warm-up: pipelines, allocator cache, lazy init
    times = []
    for _ in range(repeats):
        t, x = chain()
        times.append(t)
        got = x.cpu()
        if not torch.equal(got, torch.full((4,), float(n))):
            raise CheckFailed(f"chain of {n} adds gave {got.tolist()}, expected {float(n)}")
    return statistics.median(times) / n * 1e6


def scalar_add_chain(dev: torch.device, n: int = 2000, repeats: int = 5) -> float:
    """Per-op cost of n dependent `x = x + 1` (a Python scalar operand) on 4 floats."""

    def chain():
        x = torch.zeros(4, device=dev)
        synchronize(dev)
        t0 = time.perf_counter()
        for _ in range(n):
            x = x + 1
        synchronize(dev)
        return time.perf_counter() - t0, x

    chain()
    times = []
    for _ in range(repeats):
        t, x = chain()
        times.append(t)
        if not torch.equal(x.cpu(), torch.full((4,), float(n))):
            raise CheckFailed(f"chain of {n} scalar adds gave {x.cpu().tolist()}")
    return statistics.median(times) / n * 1e6


def add_bandwidth(dev: torch.device, n: int = 1 << 26, warmup: int = 3, iters: int = 20) -> float:
    """torch.add(a, b, out=c) on n float32: 2 reads + 1 write per element."""
    gen = torch.Generator().manual_seed(0)
    a_cpu = torch.randn(n, generator=gen)
    b_cpu = torch.randn(n, generator=gen)
    a, b = a_cpu.to(dev), b_cpu.to(dev)
    c = torch.empty(n, device=dev)
    t = timed(dev, lambda: torch.add(a, b, out=c), iters, warmup)
    got = c.cpu()
    if not torch.equal(got, a_cpu + b_cpu):
        bad = (got != a_cpu + b_cpu).nonzero()
        raise CheckFailed(f"add out= differs from CPU at {bad.numel()} elements, first {bad[:4].flatten().tolist()}")
    del a, b, c
    return 3 * 4 * n / t / 1e9


def sum_bandwidth(dev: torch.device, n: int = 1 << 26, warmup: int = 3, iters: int = 20) -> float:
    """Full float32 sum of n elements: one read per element, GB/s of input."""
    gen = torch.Generator().manual_seed(1)
    a_cpu = torch.randn(n, generator=gen)
    a = a_cpu.to(dev)
    t = timed(dev, lambda: a.sum(), iters, warmup)
    s = a.sum()
    got, want = s.cpu().double().item(), a_cpu.double().sum().item()
    if abs(got - want) > 1e-3 * max(1.0, abs(want)) + 0.5:
        raise CheckFailed(f"sum gave {got}, float64 reference {want}")
    del a
    return 4 * n / t / 1e9


def fft_1m(dev: torch.device, n: int = 1 << 20, iters: int = 20) -> float:
    """torch.fft.fft of one complex64 signal of n = 2^20 points: GFLOP/s at the usual 5 n log2(n)."""
    gen = torch.Generator().manual_seed(9)
    x_cpu = torch.complex(torch.randn(n, generator=gen), torch.randn(n, generator=gen))
    x = x_cpu.to(dev)
    t = timed(dev, lambda: torch.fft.fft(x), iters)
    want = cpu_reference("fft_1m", lambda: torch.fft.fft(x_cpu))
    got = torch.view_as_real(torch.fft.fft(x).cpu())
    scale = torch.view_as_real(want).abs().max().item()
    check_close("fft 2^20", got, torch.view_as_real(want), rtol=1e-4, atol=1e-5 * scale)
    return 5 * n * math.log2(n) / t / 1e9


def _spd(n: int, batch: Optional[int], seed: int) -> torch.Tensor:
    """Well-conditioned symmetric positive-definite float32 matrices: G G^T / n + I."""
    gen = torch.Generator().manual_seed(seed)
    shape = (batch, n, n) if batch else (n, n)
    g = torch.randn(shape, generator=gen)
    return g @ g.mT / n + torch.eye(n)


def solve_batched(dev: torch.device, batch: int = 4096, n: int = 32, iters: int = 20) -> float:
    """torch.linalg.solve of `batch` float32 systems n x n, one right-hand side each (LU with partial
    pivoting, then the two triangular solves): GFLOP/s at 2/3 n^3 + 2 n^2 per system."""
    if SMOKE:
        batch, iters = 64, 1
    gen = torch.Generator().manual_seed(10)
    # randn + 2 sqrt(n) I: condition numbers below 10 (with sqrt(n) I some of 4096 reach 4e4, and
    # CPU's own float32 answer is then 0.45 from float64's)
    a_cpu = torch.randn(batch, n, n, generator=gen) + 2 * n**0.5 * torch.eye(n)
    b_cpu = torch.randn(batch, n, generator=gen)
    a, b = a_cpu.to(dev), b_cpu.to(dev)
    t = timed(dev, lambda: torch.linalg.solve(a, b), iters)
    want = cpu_reference(("solve", batch, n), lambda: torch.linalg.solve(a_cpu.double(), b_cpu.double()))
    check_close(f"linalg.solve {batch}x{n}x{n}", torch.linalg.solve(a, b), want, rtol=1e-3, atol=1e-4)
    return batch * (2 / 3 * n**3 + 2 * n**2) / t / 1e9


def cholesky_large(dev: torch.device, n: int = 4096, iters: int = 5) -> float:
    """torch.linalg.cholesky of one float32 n x n SPD matrix: GFLOP/s at n^3 / 3."""
    if SMOKE:
        n, iters = 512, 1
    a_cpu = _spd(n, None, 11)
    a = a_cpu.to(dev)
    t = timed(dev, lambda: torch.linalg.cholesky(a), iters, warmup=1)
    want = cpu_reference(("cholesky", n), lambda: torch.linalg.cholesky(a_cpu.double()))
    check_close(f"linalg.cholesky {n}x{n}", torch.linalg.cholesky(a), want, rtol=1e-3, atol=1e-4)
    return n**3 / 3 / t / 1e9


# Timed rounds per figure (TORCH_WEBGPU_BENCH_ROUNDS, default 3): the best round counts, on both
# devices alike. One round per figure let rows bound by the host's CPU move by 2x between runs of
# the same build on the GPU machines (BatchNorm2d 0.402x and 1.07x, stop 45).
ROUNDS = max(1, int(os.environ.get("TORCH_WEBGPU_BENCH_ROUNDS", "3")))


def timed(dev: torch.device, fn: Callable[[], object], iters: int, warmup: int = 2) -> float:
    """Seconds per call of fn on dev, wall clock between synchronisations (warm-up excluded): the
    best of ROUNDS rounds of `iters` calls."""
    for _ in range(warmup):
        fn()
    synchronize(dev)
    best = math.inf
    for _ in range(1 if SMOKE else ROUNDS):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        synchronize(dev)
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


_CPU_REFERENCE = {}


def cpu_reference(key, fn):
    """A CPU result computed once per run (several devices check against it)."""
    if key not in _CPU_REFERENCE:
        _CPU_REFERENCE[key] = fn()
    return _CPU_REFERENCE[key]


def check_close(name: str, got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> None:
    got = got.detach().float().cpu()
    want = want.detach().float()
    if not torch.allclose(got, want, rtol=rtol, atol=atol):
        err = (got - want).abs().max().item()
        raise CheckFailed(f"{name}: max abs difference {err:.3g} from the CPU result (rtol {rtol}, atol {atol})")


def add_f16_bandwidth(dev: torch.device, n: int = 1 << 26) -> float:
    """torch.add(a, b, out=c) on n float16: 2 reads + 1 write per element."""
    gen = torch.Generator().manual_seed(2)
    a_cpu, b_cpu = torch.randn(n, generator=gen).half(), torch.randn(n, generator=gen).half()
    a, b = a_cpu.to(dev), b_cpu.to(dev)
    c = torch.empty(n, device=dev, dtype=torch.half)
    t = timed(dev, lambda: torch.add(a, b, out=c), 20, 3)
    want = cpu_reference("add_f16", lambda: (a_cpu.float() + b_cpu.float()).half())
    if not torch.equal(c.cpu(), want):
        raise CheckFailed("f16 add differs from CPU")
    return 3 * 2 * n / t / 1e9


def _matmul_flops(dev, m, k, n, dtype, batch=None, iters=10, rtol=2e-3, atol=2e-3) -> float:
    gen = torch.Generator().manual_seed(3)
    shape_a = (batch, m, k) if batch else (m, k)
    shape_b = (batch, k, n) if batch else (k, n)
    a_cpu = torch.randn(shape_a, generator=gen).to(dtype)
    b_cpu = torch.randn(shape_b, generator=gen).to(dtype)
    a, b = a_cpu.to(dev), b_cpu.to(dev)
    out = torch.matmul(a, b)
    want = cpu_reference(("mm", m, k, n, dtype, batch), lambda: torch.matmul(a_cpu.float(), b_cpu.float()))
    scale = max(1.0, k**0.5)
    check_close(f"matmul {shape_a}x{shape_b}", out, want, rtol, atol * scale * (20 if dtype != torch.float32 else 1))
    t = timed(dev, lambda: torch.matmul(a, b), iters)
    return 2.0 * m * n * k * (batch or 1) / t / 1e12


def matmul_4096_f32(dev):
    return _matmul_flops(dev, 4096, 4096, 4096, torch.float32, iters=10)


def matmul_4096_f16(dev):
    return _matmul_flops(dev, 4096, 4096, 4096, torch.float16, iters=10)


def matmul_small(dev):
    return _matmul_flops(dev, 128, 768, 768, torch.float32, iters=50)


def matmul_small_f16(dev):
    return _matmul_flops(dev, 128, 768, 768, torch.float16, iters=50)


def linear_f16(dev, tokens: int = 2048, d_in: int = 4096, d_out: int = 4096) -> float:
    """F.linear with bias in f16 (x @ W^T + b: a transposed operand and the addmm epilogue)."""
    g = torch.Generator().manual_seed(7)
    x_cpu = torch.randn(tokens, d_in, generator=g).half()
    w_cpu = (torch.randn(d_out, d_in, generator=g) * d_in**-0.5).half()
    b_cpu = torch.randn(d_out, generator=g).half()
    x, w, b = x_cpu.to(dev), w_cpu.to(dev), b_cpu.to(dev)
    f = lambda: torch.nn.functional.linear(x, w, b)  # noqa: E731
    want = cpu_reference("linear_f16", lambda: torch.nn.functional.linear(x_cpu.float(), w_cpu.float(), b_cpu.float()))
    check_close("linear f16", f(), want, 4e-3, 4e-3)
    t = timed(dev, f, 10)
    return 2.0 * tokens * d_in * d_out / t / 1e12


def matvec_4096(dev):
    return _matmul_flops(dev, 1, 4096, 4096, torch.float32, iters=50)


def linear_matvec_4096(dev, k: int = 4096, n: int = 4096, iters: int = 50) -> float:
    """F.linear of one token (1 x 4096) by a 4096 x 4096 weight: the mat-vec of every LLM decoding step
    (the weight's rows contiguous along k, unlike x @ W's)."""
    gen = torch.Generator().manual_seed(3)
    x_cpu, w_cpu = torch.randn(1, k, generator=gen), torch.randn(n, k, generator=gen)
    x, w = x_cpu.to(dev), w_cpu.to(dev)
    want = cpu_reference("linear_mv", lambda: torch.nn.functional.linear(x_cpu, w_cpu))
    check_close("linear mat-vec", torch.nn.functional.linear(x, w), want, 1e-4, 2e-3 * k**0.5)
    t = timed(dev, lambda: torch.nn.functional.linear(x, w), iters)
    return 2.0 * n * k / t / 1e12


def bmm_batched(dev):
    return _matmul_flops(dev, 128, 64, 128, torch.float32, batch=96, iters=50)


def softmax_bandwidth(dev, rows: int = 4096, cols: int = 4096) -> float:
    """softmax over the last dim of a 4096x4096 float32: GB/s of one read + one write."""
    x_cpu = torch.randn(rows, cols, generator=torch.Generator().manual_seed(4))
    x = x_cpu.to(dev)
    check_close("softmax", torch.softmax(x, -1), cpu_reference("softmax", lambda: torch.softmax(x_cpu, -1)), 1e-5, 1e-6)
    t = timed(dev, lambda: torch.softmax(x, -1), 20)
    return 2 * 4 * rows * cols / t / 1e9


def layernorm_bandwidth(dev, rows: int = 4096, cols: int = 4096) -> float:
    """layer_norm (weight, bias) over the last dim of 4096x4096 float32: GB/s of one read + one write."""
    g = torch.Generator().manual_seed(5)
    x_cpu, w_cpu, b_cpu = (
        torch.randn(rows, cols, generator=g),
        torch.randn(cols, generator=g),
        torch.randn(cols, generator=g),
    )
    x, w, b = x_cpu.to(dev), w_cpu.to(dev), b_cpu.to(dev)
    f = lambda: torch.nn.functional.layer_norm(x, (cols,), w, b)  # noqa: E731
    want = cpu_reference("layernorm", lambda: torch.nn.functional.layer_norm(x_cpu, (cols,), w_cpu, b_cpu))
    check_close("layer_norm", f(), want, 1e-4, 1e-4)
    t = timed(dev, f, 20)
    return 2 * 4 * rows * cols / t / 1e9


def conv2d_flops(dev, dtype=torch.float32) -> float:
    """conv2d 3x3, padding 1: batch 32, 64 -> 64 channels, 64x64 (TFLOP/s)."""
    g = torch.Generator().manual_seed(6)
    x_cpu, w_cpu = torch.randn(32, 64, 64, 64, generator=g), torch.randn(64, 64, 3, 3, generator=g) * 0.05
    x_cpu, w_cpu = x_cpu.to(dtype), w_cpu.to(dtype)
    x, w = x_cpu.to(dev), w_cpu.to(dev)
    f = lambda: torch.nn.functional.conv2d(x, w, padding=1)  # noqa: E731
    want = cpu_reference(("conv2d", dtype), lambda: torch.nn.functional.conv2d(x_cpu.float(), w_cpu.float(), padding=1))
    tol = 1e-3 if dtype == torch.float32 else 2e-2
    check_close("conv2d", f(), want, tol, tol)
    t = timed(dev, f, 10)
    return 2.0 * 32 * 64 * 64 * 64 * 64 * 9 / t / 1e12


def conv2d_f16_flops(dev) -> float:
    return conv2d_flops(dev, torch.float16)


def conv2d_backward_flops(dev) -> float:
    """The input and weight gradients of conv2d_flops's convolution (f32, TFLOP/s), through
    aten.convolution_backward (no autograd: CUDA and webgpu in one process)."""
    g = torch.Generator().manual_seed(7)
    x_cpu, w_cpu = torch.randn(32, 64, 64, 64, generator=g), torch.randn(64, 64, 3, 3, generator=g) * 0.05
    go_cpu = torch.randn(32, 64, 64, 64, generator=g)
    x, w, go = x_cpu.to(dev), w_cpu.to(dev), go_cpu.to(dev)
    args = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])
    f = lambda: torch.ops.aten.convolution_backward(go, x, w, None, *args)[:2]  # noqa: E731
    want = cpu_reference(
        "conv2d_backward", lambda: torch.ops.aten.convolution_backward(go_cpu, x_cpu, w_cpu, None, *args)[:2]
    )
    got = f()
    check_close("conv2d input gradient", got[0], want[0], 1e-3, 1e-3)
    # sums of 131072 products of order 1 (CUDA is 0.07 from CPU on entries near 300)
    check_close("conv2d weight gradient", got[1], want[1], 1e-3, 0.2)
    t = timed(dev, f, 10)
    return 2 * 2.0 * 32 * 64 * 64 * 64 * 64 * 9 / t / 1e12


def _examples():
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    if here not in sys.path:
        sys.path.insert(0, here)


def gpt2_forward(dev, tokens: int = 128, amp: bool = False) -> float:
    """GPT-2-small-shaped forward (12 layers, d=768, 12 heads, vocab 50257, 128 tokens, batch 1):
    forwards per second, logits checked against CPU (amp: under torch.autocast(device, float16),
    checked against CPU float32 with a half-precision tolerance)."""
    _examples()
    import gpt

    torch.manual_seed(0)
    model = gpt.GPT(50257, 768, 12, 12, 1024).eval()
    idx_cpu = torch.randint(0, 50257, (1, tokens), generator=torch.Generator().manual_seed(7))
    want = cpu_reference("gpt2", lambda: model(idx_cpu).detach())
    model = model.to(dev)
    idx = idx_cpu.to(dev)
    ctx = (lambda: torch.autocast(dev.type, dtype=torch.float16)) if amp else contextlib.nullcontext
    with torch.no_grad(), ctx():
        check_close("gpt2 logits", model(idx), want, *((5e-2, 5e-2) if amp else (1e-3, 2e-3)))
        t = timed(dev, lambda: model(idx), 10)
    return 1.0 / t


def gpt2_forward_amp(dev) -> float:
    return gpt2_forward(dev, amp=True)


def train_step(model, opt, x, y, loss_fn=None):
    """One training step as the rows time it: the loss (loss_fn(x, y), e.g. a compiled one; by default
    the forward and cross-entropy, logits flattened to rows), zero_grad(set_to_none=True), backward,
    the optimiser's step; returns the loss."""

    def step():
        if loss_fn is not None:
            loss = loss_fn(x, y)
        else:
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out.flatten(0, out.dim() - 2), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


def cnn_setup(dev, batch: int, size: int):
    """The CNN rows' model (a small VGG-style CNN with batch norm), its SGD optimiser and a batch of
    RGB images on `dev`, and the first step's loss on CPU: (model, opt, x, y, want)."""
    nn = torch.nn

    def block(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]

    torch.manual_seed(0)
    model = nn.Sequential(
        *block(3, 32),
        *block(32, 64),
        *block(64, 128),
        *block(128, 256),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(256, 10),
    )
    g = torch.Generator().manual_seed(8)
    x_cpu, y_cpu = torch.randn(batch, 3, size, size, generator=g), torch.randint(0, 10, (batch,), generator=g)
    want = cpu_reference("cnn", lambda: torch.nn.functional.cross_entropy(model(x_cpu), y_cpu).detach())
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, opt, x_cpu.to(dev), y_cpu.to(dev), want


def cnn_train_step(dev, batch: int = 32, size: int = 64, amp: bool = False) -> float:
    """A training step (forward, cross-entropy, backward, SGD with momentum) of a small VGG-style CNN
    with batch norm on 32 RGB 64x64 images: steps per second; the first step's loss is checked
    against CPU (amp: autocast float16 and a GradScaler, as a CUDA AMP loop is written)."""
    model, opt, x, y, want = cnn_setup(dev, batch, size)

    if not amp:
        step = train_step(model, opt, x, y)
        check_close("cnn first loss", step(), want, 1e-4, 1e-4)
        return 1.0 / timed(dev, step, 10)

    scaler = torch.amp.GradScaler(dev.type)

    def amp_step():
        with torch.autocast(dev.type, dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    check_close("cnn first loss (amp)", amp_step(), want, 2e-2, 2e-2)
    return 1.0 / timed(dev, amp_step, 10)


def cnn17_model():
    """Issue 17's CNN (on the CPU, seeded): conv 3->64, 64->64 with batch norm, max-pool, conv 64->128
    with batch norm, adaptive average pool, linear."""
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1),
        nn.BatchNorm2d(128),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, 10),
    )


def cnn17_train_step(dev, batch: int = 32) -> float:
    """Issue 17's CNN training step: conv 3->64 and 64->64 at 64x64 with batch norm, max-pool, conv
    64->128 with batch norm, adaptive average pool, linear; batch 32, SGD with momentum (steps/s; the
    first loss checked against CPU)."""
    model = cnn17_model()
    g = torch.Generator().manual_seed(9)
    x_cpu, y_cpu = torch.randn(batch, 3, 64, 64, generator=g), torch.randint(0, 10, (batch,), generator=g)
    want = cpu_reference("cnn17", lambda: torch.nn.functional.cross_entropy(model(x_cpu), y_cpu).detach())
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = train_step(model, opt, x_cpu.to(dev), y_cpu.to(dev))
    check_close("cnn17 first loss", step(), want, 1e-4, 1e-4)
    return 1.0 / timed(dev, step, 10)


def batchnorm_train(dev, shape=(32, 64, 64, 64)) -> float:
    """BatchNorm2d in training mode (running statistics updated), forward and backward on
    32x64x64x64 f32: iterations per second; the input gradient checked against CPU."""
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(shape[1])
    g = torch.Generator().manual_seed(10)
    x_cpu, gy_cpu = torch.randn(*shape, generator=g), torch.randn(*shape, generator=g)

    def grad_of(m, x, gy):
        x = x.detach().requires_grad_(True)
        m(x).backward(gy)
        return x.grad

    want = cpu_reference("bn_train", lambda: grad_of(torch.nn.BatchNorm2d(shape[1]), x_cpu, gy_cpu))
    bn = bn.to(dev)
    x, gy = x_cpu.to(dev).requires_grad_(True), gy_cpu.to(dev)
    check_close("batch norm input gradient", grad_of(bn, x, gy), want, 1e-3, 1e-4)

    def it():
        x.grad = None
        bn(x).backward(gy)

    return 1.0 / timed(dev, it, 20)


def gpt2_train_setup(dev, batch: int = 4, tokens: int = 128):
    """A GPT-2-small-shaped model (examples/gpt.py) with AdamW on a batch of token ids (predicting the
    ids themselves): the training step on `dev` and the first step's loss on CPU."""
    _examples()
    import gpt

    torch.manual_seed(0)
    model = gpt.GPT(50257, 768, 12, 12, 1024)
    idx_cpu = torch.randint(0, 50257, (batch, tokens), generator=torch.Generator().manual_seed(11))
    want = cpu_reference(
        "gpt2_train",
        lambda: torch.nn.functional.cross_entropy(model(idx_cpu).flatten(0, 1), idx_cpu.flatten()).detach(),
    )
    model = model.to(dev)
    idx = idx_cpu.to(dev)
    return train_step(model, torch.optim.AdamW(model.parameters(), lr=1e-4), idx, idx), want


def gpt2_train_step(dev) -> float:
    """A GPT-2-small-shaped training step (batch 4 x 128 tokens, cross-entropy, AdamW): steps per
    second; the first loss checked against CPU."""
    step, want = gpt2_train_setup(dev)
    check_close("gpt2 first training loss", step(), want, 1e-3, 1e-3)
    return 1.0 / timed(dev, step, 5)


def cnn_train_step_amp(dev) -> float:
    return cnn_train_step(dev, amp=True)


def int_mm_4096(dev, n: int = 4096) -> float:
    """torch._int_mm (int8 x int8 -> int32) of n^3: TOP/s; exact against CPU."""
    g = torch.Generator().manual_seed(9)
    a_cpu = torch.randint(-128, 128, (n, n), generator=g, dtype=torch.int8)
    b_cpu = torch.randint(-128, 128, (n, n), generator=g, dtype=torch.int8)
    a, b = a_cpu.to(dev), b_cpu.to(dev)
    got = torch._int_mm(a, b).cpu()
    # CPU's own _int_mm over 4096^3 takes minutes: check a slice of rows exactly.
    rows = slice(0, 64)
    want = cpu_reference("int_mm", lambda: torch._int_mm(a_cpu[rows].contiguous(), b_cpu))
    if not torch.equal(got[rows], want):
        raise CheckFailed("_int_mm: differs from the CPU result")
    t = timed(dev, lambda: torch._int_mm(a, b), 10)
    return 2.0 * n**3 / t / 1e12


def compiled_cnn_step(dev, batch: int = 32, size: int = 64):
    """The compiled CNN row's step (the loss under torch.compile; backward and SGD eager) and the
    first step's CPU loss: (step, want)."""
    model, opt, x, y, want = cnn_setup(dev, batch, size)
    loss_fn = torch.compile(lambda x, y: torch.nn.functional.cross_entropy(model(x), y))
    return train_step(model, opt, x, y, loss_fn), want


def compile_rows() -> list:
    """Rows for torch.compile (issue 16): on webgpu, Inductor with the generated-WGSL backend; on the
    reference device, its own default (Triton on CUDA, C++ on CPU). Each first call compiles (in the
    warm-up); results are checked against CPU eager."""

    def fused_pointwise(dev, n: int = 1 << 24) -> float:
        g = torch.Generator().manual_seed(11)
        x_cpu, w_cpu, b_cpu = (torch.randn(n, generator=g) for _ in range(3))

        def f(x, w, b):
            return torch.nn.functional.gelu(x * w + b) * 0.5

        cf = torch.compile(f)
        x, w, b = x_cpu.to(dev), w_cpu.to(dev), b_cpu.to(dev)
        check_close(
            "compiled gelu chain", cf(x, w, b), cpu_reference("gelu_chain", lambda: f(x_cpu, w_cpu, b_cpu)), 1e-5, 1e-5
        )
        t = timed(dev, lambda: cf(x, w, b), 20, warmup=3)
        return 4 * 4 * n / t / 1e9  # three inputs read, one output written

    def gpt2(dev, tokens: int = 128) -> float:
        _examples()
        import gpt

        torch.manual_seed(0)
        model = gpt.GPT(50257, 768, 12, 12, 1024).eval()
        idx_cpu = torch.randint(0, 50257, (1, tokens), generator=torch.Generator().manual_seed(7))
        want = cpu_reference("gpt2", lambda: model(idx_cpu).detach())
        model = model.to(dev)
        cm = torch.compile(model)
        idx = idx_cpu.to(dev)
        with torch.no_grad():
            check_close("compiled gpt2 logits", cm(idx), want, 1e-3, 2e-3)
            t = timed(dev, lambda: cm(idx), 10)
        return 1.0 / t

    def cnn(dev, batch: int = 32, size: int = 64) -> float:
        step, want = compiled_cnn_step(dev, batch, size)
        check_close("compiled cnn first loss", step(), want, 1e-4, 1e-4)
        return 1.0 / timed(dev, step, 10)

    return [
        Bench("torch.compile: gelu(x * w + b) * scale, 2^24 f32", "GB/s", True, fused_pointwise),
        Bench("torch.compile: GPT-2-small forward, 128 tokens", "fwd/s", True, gpt2),
        Bench("torch.compile: CNN training step, batch 32, 64x64", "step/s", True, cnn, ref_in_child=True),
    ]


@dataclass
class Bench:
    name: str
    unit: str
    higher_is_better: bool  # False for times; the ratio is oriented so that > 1 means webgpu is faster
    fn: Callable[[torch.device], float]
    goal: Optional[float] = None  # the ratio the project aims for (issue 7), where one is set
    ref_in_child: bool = False  # a CUDA reference with autograd runs in a process without torch_webgpu


BENCHMARKS = [
    Bench("add chain: 2000 dependent adds, f32[4]", "us/op", False, tiny_add_chain, goal=1.0),
    Bench("add chain: 2000 dependent x = x + 1 (Python scalar), f32[4]", "us/op", False, scalar_add_chain, goal=1.0),
    Bench("add bandwidth: 2^26 f32, out=", "GB/s", True, add_bandwidth, goal=0.9),
    Bench("sum: 2^26 f32, full reduction", "GB/s", True, sum_bandwidth, goal=0.8),
    Bench("add bandwidth: 2^26 f16, out=", "GB/s", True, add_f16_bandwidth),
    Bench("matmul 4096^3 f32", "TFLOP/s", True, matmul_4096_f32, goal=0.75),
    Bench("matmul 4096^3 f16", "TFLOP/s", True, matmul_4096_f16, goal=0.3),
    Bench("matmul 128x768x768 f16", "TFLOP/s", True, matmul_small_f16, goal=0.3),
    Bench("linear 2048x4096 -> 4096 f16, bias", "TFLOP/s", True, linear_f16, goal=0.3),
    Bench("matmul 128x768x768 f32", "TFLOP/s", True, matmul_small, goal=0.8),
    Bench("matvec 1x4096x4096 f32", "TFLOP/s", True, matvec_4096, goal=0.8),
    Bench("linear 1x4096 -> 4096 f32 (decoding mat-vec)", "TFLOP/s", True, linear_matvec_4096),
    Bench("bmm 96x(128x64x128) f32", "TFLOP/s", True, bmm_batched),
    Bench("softmax 4096x4096 f32", "GB/s", True, softmax_bandwidth, goal=0.9),
    Bench("layer_norm 4096x4096 f32", "GB/s", True, layernorm_bandwidth, goal=0.9),
    Bench(
        "BatchNorm2d training forward + backward, 32x64x64x64 f32",
        "it/s",
        True,
        batchnorm_train,
        goal=0.7,
        ref_in_child=True,
    ),
    Bench("conv2d 3x3 32x64x64x64 f32", "TFLOP/s", True, conv2d_flops, goal=0.6),
    Bench("conv2d 3x3 32x64x64x64 f16", "TFLOP/s", True, conv2d_f16_flops, goal=0.3),
    Bench("conv2d 3x3 32x64x64x64 f32 backward (input + weight)", "TFLOP/s", True, conv2d_backward_flops, goal=0.5),
    Bench("int_mm 4096^3 int8 -> int32", "TOP/s", True, int_mm_4096, goal=0.3),
    Bench("fft 2^20 complex64", "GFLOP/s", True, fft_1m, goal=0.3),
    Bench("linalg.solve 4096 x (32x32) f32, batched", "GFLOP/s", True, solve_batched, goal=0.3),
    Bench("linalg.cholesky 4096x4096 f32", "GFLOP/s", True, cholesky_large, goal=0.3),
    Bench("GPT-2-small forward, 128 tokens", "fwd/s", True, gpt2_forward, goal=0.8),
    Bench("GPT-2-small forward, 128 tokens, autocast f16", "fwd/s", True, gpt2_forward_amp, goal=0.8),
    Bench("CNN training step, batch 32, 64x64", "step/s", True, cnn_train_step, goal=0.7, ref_in_child=True),
    Bench(
        "CNN training step (issue 17's: 3 convs, batch norm), batch 32, 64x64",
        "step/s",
        True,
        cnn17_train_step,
        goal=0.5,
        ref_in_child=True,
    ),
    Bench(
        "GPT-2-small training step, batch 4 x 128, AdamW", "step/s", True, gpt2_train_step, goal=0.6, ref_in_child=True
    ),
    Bench(
        "CNN training step, AMP (autocast f16 + GradScaler)",
        "step/s",
        True,
        cnn_train_step_amp,
        goal=0.5,
        ref_in_child=True,
    ),
]
BENCHMARKS += compile_rows()


# ----------------------------------------------------------------------------- running


@dataclass
class Result:
    bench: Bench
    webgpu: Optional[float] = None
    ref: Optional[float] = None
    error: Optional[str] = None
    counters: Optional[dict] = None

    @property
    def ratio(self) -> Optional[float]:
        if self.webgpu is None or self.ref is None or self.webgpu <= 0 or self.ref <= 0:
            return None
        return self.webgpu / self.ref if self.bench.higher_is_better else self.ref / self.webgpu


def measure_in_child(bench: Bench, ref: torch.device) -> float:
    import subprocess

    # Without torch_webgpu: `import torch` alone would load it through the device-backend autoload
    # entry point, and the CUDA backward then fails as described at the top.
    env = dict(os.environ, TORCH_WEBGPU_BENCH_REF_CHILD="1", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    code = (
        f"import sys; sys.argv = ['run.py']; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
        f"import run, torch; b = [x for x in run.BENCHMARKS if x.name == {bench.name!r}][0]; "
        f"run.ref_type_tf32_off(); print('VALUE', b.fn(torch.device({str(ref)!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    for line in out.stdout.splitlines():
        if line.startswith("VALUE "):
            return float(line.split()[1])
    raise RuntimeError(f"reference child failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")


def measure(bench: Bench, webgpu: torch.device, ref: torch.device) -> Result:
    res = Result(bench)
    for dev in (ref, webgpu):
        try:
            before = stream_counters() if dev.type == "webgpu" else None
            if dev.type == "cuda" and bench.ref_in_child:
                value = measure_in_child(bench, dev)
            else:
                value = bench.fn(dev)
            if dev.type == "webgpu":
                res.webgpu = value
                res.counters = counter_delta(before, stream_counters())
            else:
                res.ref = value
        except Exception as e:  # one broken row must not hide the others
            msg = f"{dev.type}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            res.error = msg if res.error is None else f"{res.error}; {msg}"
            traceback.print_exc(file=sys.stderr)
        finally:
            empty_cache(dev)
    return res


def fmt(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def device_description(dev: torch.device) -> str:
    if dev.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(dev)})"
    if dev.type == "cpu":
        return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    return str(dev)


def header_lines(ref: torch.device) -> list:
    try:
        info = torch_webgpu.info()
        wg = f"{info.get('adapter', '?')} via {info.get('backend', '?')}"
    except Exception as e:
        wg = f"info() failed: {e}"
    return [
        f"torch {torch.__version__}, torch_webgpu {getattr(torch_webgpu, '__version__', '?')}, "
        f"python {platform.python_version()}",
        f"webgpu: {wg}",
        f"reference: {device_description(ref)}",
        "ratio: > 1 means webgpu is faster than the reference (ref/webgpu for times, webgpu/ref for throughput)",
    ]


def table_rows(results: list, ref: torch.device) -> tuple:
    head = ["benchmark", "unit", "webgpu", ref.type, "ratio"]
    rows = []
    for r in results:
        ratio = fmt(r.ratio) + "x" if r.ratio is not None else "-"
        rows.append([r.bench.name, r.bench.unit, fmt(r.webgpu), fmt(r.ref), ratio])
    return head, rows


def counters_line(r: Result) -> Optional[str]:
    if not r.counters:
        return None
    return f"{r.bench.name}: " + ", ".join(f"{k}={v}" for k, v in sorted(r.counters.items()))


def render_text(results: list, ref: torch.device) -> str:
    head, rows = table_rows(results, ref)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    )
    out = header_lines(ref) + ["", line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    counters = [c for c in map(counters_line, results) if c]
    if counters:
        out += ["", "webgpu stream counters per benchmark (all repeats, warm-up included):"]
        out += ["  " + c for c in counters]
    errors = [f"  {r.bench.name}: {r.error}" for r in results if r.error]
    if errors:
        out += ["", "errors:"] + errors
    return "\n".join(out)


def render_markdown(results: list, ref: torch.device) -> str:
    head, rows = table_rows(results, ref)
    out = [f"- {h}" for h in header_lines(ref)] + [""]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(["---", "---", "---:", "---:", "---:"]) + "|")
    out += ["| " + " | ".join(r) + " |" for r in rows]
    counters = [c for c in map(counters_line, results) if c]
    if counters:
        out += ["", "webgpu stream counters per benchmark (all repeats, warm-up included):", ""]
        out += [f"- {c}" for c in counters]
    errors = [f"- {r.bench.name}: {r.error}" for r in results if r.error]
    if errors:
        out += ["", "errors:", ""] + errors
    return "\n".join(out) + "\n"


def ref_type_tf32_off() -> bool:
    """The reference runs float32 matmuls and convolutions in full float32 (no TF32), as we do."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return True


def results_json(results: list, ref: torch.device) -> dict:
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "header": header_lines(ref),
        "reference": ref.type,
        "rows": [
            {
                "name": r.bench.name,
                "unit": r.bench.unit,
                "webgpu": r.webgpu,
                "ref": r.ref,
                "ratio": r.ratio,
                "goal": r.bench.goal,
                "error": r.error,
                "counters": r.counters,
            }
            for r in results
        ],
    }


def write_doc(data: dict, path: str) -> None:
    """docs/benchmarks.md: the run's device and date, the table with goals, and a plot of the ratios."""
    png = os.path.splitext(path)[0] + ".png"
    rows = data["rows"]
    plotted = False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = [r["name"] for r in rows]
        ratios = [r["ratio"] or 0.0 for r in rows]
        fig, ax = plt.subplots(figsize=(9, 0.38 * len(rows) + 1.2))
        y = list(range(len(rows)))[::-1]
        colors = [
            "#2b8a3e"
            if r["goal"] is not None and (r["ratio"] or 0) >= r["goal"]
            else "#c92a2a"
            if r["goal"] is not None
            else "#5c7cfa"
            for r in rows
        ]
        ax.barh(y, ratios, color=colors)
        for yi, r in zip(y, rows):
            if r["goal"] is not None:
                ax.plot([r["goal"]] * 2, [yi - 0.4, yi + 0.4], color="black", linewidth=2)
        ax.axvline(1.0, color="gray", linestyle="--", linewidth=1)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.set_xlabel(f"speed relative to torch on {data['reference']} (> 1: webgpu faster; black tick: goal)")
        ax.set_title(f"torch-webgpu vs {data['reference']}, {data['date']}", fontsize=10)
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plotted = True
    except ImportError:
        pass
    ref = data["reference"]
    out = ["# Benchmarks", "", f"Run of {data['date']}, written by `python benchmarks/run.py --doc {path}`.", ""]
    out += [f"- {h}" for h in data["header"]] + [""]
    if plotted:
        out += [f"![ratios]({os.path.basename(png)})", ""]
    out += [f"| benchmark | unit | webgpu | {ref} | ratio | goal |", "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r['ratio']:.3g}x" if r["ratio"] else "-"
        goal = (
            "-" if r["goal"] is None else (f"{r['goal']}x " + ("met" if (r["ratio"] or 0) >= r["goal"] else "not met"))
        )
        out.append(f"| {r['name']} | {r['unit']} | {fmt(r['webgpu'])} | {fmt(r['ref'])} | {ratio} | {goal} |")
    errs = [r for r in rows if r["error"]]
    if errs:
        out += ["", "Errors:", ""] + [f"- {r['name']}: {r['error']}" for r in errs]
    cnt = [r for r in rows if r["counters"]]
    if cnt:
        out += ["", "webgpu stream counters per benchmark (all repeats, warm-up and checks included):", ""]
        out += [f"- {r['name']}: " + ", ".join(f"{k}={v}" for k, v in sorted(r["counters"].items())) for r in cnt]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--compare",
        choices=["cuda", "cpu"],
        default=None,
        help="reference device (default: cuda if available, else cpu)",
    )
    p.add_argument("--out", metavar="FILE", help="also write the table as markdown to FILE")
    p.add_argument("--only", metavar="SUBSTRING", help="run only benchmarks whose name contains this ('a|b': either)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument(
        "--doc",
        metavar="FILE",
        help="write the benchmark report (markdown, with a PNG plot beside "
        "it when matplotlib is present) to FILE, e.g. docs/benchmarks.md",
    )
    p.add_argument(
        "--render",
        metavar="JSON[,JSON...]",
        help="do not run: write --doc from JSON files of earlier runs (rows in the order given, the first file's header)",
    )
    p.add_argument(
        "--part",
        metavar="I/N",
        help="run only the I-th of N consecutive slices of the rows (a full run split over several jobs)",
    )
    p.add_argument(
        "--smoke",
        action="store_true",
        help="small sizes, one iteration, in the rows that support it (linalg): checks that they run, "
        "e.g. on lavapipe; the figures are not measurements",
    )
    args = p.parse_args(argv)
    if args.smoke:
        global SMOKE
        SMOKE = True
        os.environ["TORCH_WEBGPU_BENCH_SMOKE"] = "1"
    if args.render:
        if not args.doc:
            p.error("--render needs --doc")
        data = None
        for path in args.render.split(","):
            with open(path) as f:
                d = json.load(f)
            if data is None:
                data = d
            else:
                data["rows"] += d["rows"]
        write_doc(data, args.doc)
        return 0
    ref_type_tf32_off()

    ref_type = args.compare or ("cuda" if torch.cuda.is_available() else "cpu")
    if ref_type == "cuda" and not torch.cuda.is_available():
        p.error("--compare cuda: torch.cuda.is_available() is False")
    if not torch.webgpu.is_available():
        print(
            "torch.webgpu.is_available() is False: no WebGPU adapter (install a Vulkan driver, "
            "e.g. mesa-vulkan-drivers)",
            file=sys.stderr,
        )
        return 2
    ref = torch.device(ref_type, 0) if ref_type == "cuda" else torch.device("cpu")
    webgpu = torch.device("webgpu", 0)

    benches = [b for b in BENCHMARKS if not args.only or any(o in b.name for o in args.only.split("|"))]
    if args.part:
        i, n = (int(v) for v in args.part.split("/"))
        if not 1 <= i <= n:
            p.error("--part I/N needs 1 <= I <= N")
        benches = benches[(i - 1) * len(benches) // n : i * len(benches) // n]
    if not benches:
        p.error(f"--only {args.only!r} matches no benchmark")
    results = []
    for b in benches:
        print(f"running: {b.name}", file=sys.stderr, flush=True)
        results.append(measure(b, webgpu, ref))

    print(render_text(results, ref))
    data = results_json(results, ref)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    if args.doc:
        write_doc(data, args.doc)
    if args.out:
        with open(args.out, "w") as f:
            f.write(render_markdown(results, ref))
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
