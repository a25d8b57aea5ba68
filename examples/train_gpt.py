"""Mixed-precision training of a small GPT-style decoder (examples/gpt.py) on `webgpu`, written as a
CUDA AMP loop with only the device string changed: `torch.autocast("webgpu", dtype=torch.float16)`
around the forward pass and `torch.amp.GradScaler("webgpu")` around backward and the optimizer step.
The same seeded loop then runs in float32 on the CPU for reference.

    python examples/train_gpt.py [--steps N] [--dtype float16|bfloat16] [--no-cpu]

The data is synthetic and learnable, so the loss has somewhere to go: each sequence starts at a random
token and every next token is (5 * token + 3) mod vocab.
"""

import argparse
import contextlib
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from tqdm import tqdm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt import GPT  # noqa: E402  (examples/gpt.py)

import torch_webgpu  # noqa: E402,F401  (registers `webgpu`; `import torch` alone does too once installed)

# The closeness figure: the largest per-step difference between the mixed-precision webgpu losses and
# the float32 CPU losses, divided by the CPU's first loss.
TOLERANCE = 5e-2


def batches(steps: int, batch: int, ctx: int, vocab: int, seed: int):
    """`steps` (input, target) pairs of token sequences following next = (5 * token + 3) % vocab."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        seq = torch.empty(batch, ctx + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(0, vocab, (batch,), generator=g)
        for i in range(ctx):
            seq[:, i + 1] = (5 * seq[:, i] + 3) % vocab
        yield seq[:, :-1], seq[:, 1:]


def train(
    device,
    steps: int,
    amp_dtype=None,
    vocab: int = 128,
    d: int = 64,
    heads: int = 4,
    layers: int = 2,
    ctx: int = 32,
    batch: int = 8,
    lr: float = 1e-2,
    seed: int = 0,
    progress: bool = True,
):
    """AdamW steps from a seeded CPU initialisation; with `amp_dtype`, under autocast with a GradScaler.
    Returns (losses, seconds, scaler or None)."""
    torch.manual_seed(seed)
    model = GPT(vocab, d, heads, layers, ctx).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scaler = torch.amp.GradScaler(device) if amp_dtype is not None else None
    losses = []
    t0 = time.perf_counter()
    bar = tqdm(
        batches(steps, batch, ctx, vocab, seed + 1),
        total=steps,
        unit="step",
        disable=not progress,
        desc=f"{device} {'amp ' + str(amp_dtype).replace('torch.', '') if amp_dtype else 'float32'}",
    )
    for s, (x, y) in enumerate(bar):
        x, y = x.to(device), y.to(device)
        opt.zero_grad(set_to_none=True)
        amp = torch.autocast(device, dtype=amp_dtype) if amp_dtype is not None else contextlib.nullcontext()
        with amp:
            loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)  # skipped when a gradient is inf or NaN
            scaler.update()
        else:
            loss.backward()
            opt.step()
        losses.append(loss.detach())
        if (s + 1) % 10 == 0 or s + 1 == steps:  # reading a loss waits for the device: not every step
            bar.set_postfix(loss=f"{losses[-1].item():.4f}")
    losses = [v.item() for v in losses]
    return losses, time.perf_counter() - t0, scaler


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Mixed-precision training of a small GPT on webgpu.")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    p.add_argument("--no-cpu", action="store_true", help="skip the float32 CPU run used for comparison")
    a = p.parse_args(argv)
    dtype = getattr(torch, a.dtype)

    info = torch_webgpu.info()
    print(f"webgpu adapter: {info['adapter']} ({info['backend']}, {info['adapter_type']})")
    if info["adapter_type"] == "cpu":
        print(
            "note: this adapter is a CPU emulation of a GPU (as in CI): results are real, speed is not the point here"
        )
    print(
        f'amp: torch.autocast("webgpu", dtype=torch.{a.dtype}) and torch.amp.GradScaler("webgpu"), AdamW, '
        f"{a.steps} steps"
    )
    losses, sec, scaler = train("webgpu", a.steps, dtype)
    print(
        f"webgpu amp {a.dtype}: loss {losses[0]:.4f} -> {losses[-1]:.4f}, {sec:.1f} s "
        f"(including the first-use compilation of its kernels); grad scale {scaler.get_scale():g}"
    )
    ok = math.isfinite(losses[-1]) and losses[-1] < losses[0]
    if not ok:
        print("the webgpu loss did not fall", file=sys.stderr)
    if not a.no_cpu:
        cpu, cpu_sec, _ = train("cpu", a.steps)
        print(f"cpu float32: loss {cpu[0]:.4f} -> {cpu[-1]:.4f}, {cpu_sec:.1f} s")
        # Half-precision matmul inputs round differently from float32, so the curves are close, not equal.
        c = max(abs(x - y) for x, y in zip(losses, cpu)) / abs(cpu[0])
        within = c <= TOLERANCE
        print(
            f"loss curves: largest per-step difference {c:.1e} of the first step's loss "
            f"(tolerance {TOLERANCE:.0e}): {'OK' if within else 'TOO FAR APART'}"
        )
        ok = ok and within
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
