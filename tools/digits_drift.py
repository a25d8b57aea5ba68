"""How far two correct float32 runs of the digits CNN training (examples/demo.py) drift apart, on the
CPU: the plain run against runs whose initial weights differ by one rounding (2^-24 relative, per
seed), channels_last convolutions, one thread and float64, and against deliberately broken BatchNorms
(normalising with the unbiased variance; eps 1e-3). tests/test_models.py's digits tolerances come
from this table: the per-epoch mean loss relative to the plain run's, then the late losses.

    python tools/digits_drift.py [--seeds 8] [--epochs 12]
"""

import argparse
import importlib.util
import os

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("demo", os.path.join(ROOT, "examples", "demo.py"))
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)


def broken_bn(kind):
    """A BatchNorm2d forward that is wrong in one way (training mode; eval as PyTorch's)."""

    def forward(self, x):
        if not self.training:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps)
        n = x.numel() // x.shape[1]
        mean = x.mean((0, 2, 3))
        var = (x - mean.view(1, -1, 1, 1)).square().mean((0, 2, 3))
        used = var * n / (n - 1) if kind == "unbiased" else var
        eps = 1e-3 if kind == "eps" else self.eps
        with torch.no_grad():
            self.running_mean.mul_(0.9).add_(0.1 * mean)
            self.running_var.mul_(0.9).add_(0.1 * var * n / (n - 1))
        scale = (used + eps).rsqrt() * self.weight
        return (x - mean.view(1, -1, 1, 1)) * scale.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)

    return forward


def train(epochs, dtype=torch.float32, channels_last=False, ulp_seed=0, bn=None):
    x_tr, y_tr, x_te, y_te = demo.load_digits_split()
    torch.manual_seed(0)
    model = demo.DigitsCNN().to(dtype)
    if ulp_seed:
        g = torch.Generator().manual_seed(ulp_seed)
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1 + (torch.randint(0, 2, p.shape, generator=g) * 2 - 1).to(dtype) * 2.0**-24)
    if bn:
        model.bn1.forward = broken_bn(bn).__get__(model.bn1)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    x_tr, x_te = (t.to(dtype).contiguous(memory_format=fmt) for t in (x_tr, x_te))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    order = torch.Generator().manual_seed(1)
    n, batch = len(y_tr), 64
    steps = (n + batch - 1) // batch
    losses = []
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=order)
        total = torch.zeros((), dtype=dtype)
        for s in range(steps):
            idx = perm[s * batch : (s + 1) * batch]
            loss = F.cross_entropy(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()
        losses.append(total.item() / steps)
    model.eval()
    with torch.no_grad():
        acc = (model(x_te).argmax(1) == y_te).float().mean().item()
    return losses, acc


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--epochs", type=int, default=12)
    args = p.parse_args()
    ref, ref_acc = train(args.epochs)
    runs = {f"ulp seed {s}": {"ulp_seed": s} for s in range(1, args.seeds + 1)}
    runs.update({"channels_last": {"channels_last": True}, "float64": {"dtype": torch.float64}})
    broken = {"BN unbiased var": {"bn": "unbiased"}, "BN eps 1e-3": {"bn": "eps"}}
    print(f"{'run':18s} acc    relative difference per epoch (epochs 1-6) | losses, epochs 7-{args.epochs}")
    print(f"{'plain':18s} {ref_acc:.3f}  {'':62s} | " + " ".join(f"{v:.4f}" for v in ref[6:]))
    worst = [0.0] * args.epochs
    late = 0.0
    for group in (runs, broken):
        for name, kw in group.items():
            losses, acc = train(args.epochs, **kw)
            rel = [abs(a - b) / b for a, b in zip(losses, ref, strict=True)]
            if group is runs:
                worst = [max(w, r) for w, r in zip(worst, rel, strict=True)]
                late = max(late, max(losses[6:]))
            print(
                f"{name:18s} {acc:.3f}  "
                + " ".join(f"{r:9.1e}" for r in rel[:6])
                + " | "
                + " ".join(f"{v:.4f}" for v in losses[6:])
            )
        if group is runs:
            print(
                f"{'correct runs, max':18s}        "
                + " ".join(f"{w:9.1e}" for w in worst[:6])
                + f" | late max {late:.4f}"
            )


if __name__ == "__main__":
    main()
