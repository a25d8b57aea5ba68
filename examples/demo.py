"""torch-webgpu's demo: trains a small CNN on scikit-learn's digits data set (8x8 images of handwritten
digits; it ships with scikit-learn, nothing is downloaded) on the `webgpu` device, prints the test
accuracy, then runs the same seeded training on the CPU and prints both times and how closely the
two loss curves agree.

    python examples/demo.py [--epochs N] [--no-cpu]

The functions here are also what tests/test_models.py trains.
"""

import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_webgpu  # noqa: F401  (registers the `webgpu` device)


def load_digits_split(test_size: int = 300, seed: int = 0):
    """(x_train, y_train, x_test, y_test) as CPU tensors: images 1x8x8 scaled to [0, 1]."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    x, y = x[perm], y[perm]
    return x[test_size:], y[test_size:], x[:test_size], y[:test_size]


class DigitsCNN(nn.Module):
    """conv-BN-ReLU, conv-ReLU-maxpool, conv-ReLU, global average pool, two linear layers."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.conv3 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.conv3(x))
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def train(device, epochs: int = 12, batch: int = 64, lr: float = 2e-3, seed: int = 0, progress: bool = False):
    """Trains DigitsCNN on `device` from a seeded CPU initialisation with a seeded batch order.
    Returns (per-epoch mean losses, test accuracy, seconds)."""
    x_tr, y_tr, x_te, y_te = load_digits_split()
    torch.manual_seed(seed)
    model = DigitsCNN().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x_tr, y_tr, x_te, y_te = (t.to(device) for t in (x_tr, y_tr, x_te, y_te))
    order = torch.Generator().manual_seed(seed + 1)
    n = len(y_tr)
    steps = (n + batch - 1) // batch
    losses = []
    t0 = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=order).to(device)
        total = torch.zeros((), device=device)
        for s in range(steps):
            idx = perm[s * batch:(s + 1) * batch]
            loss = F.cross_entropy(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()
            if progress:
                done = epoch * steps + s + 1
                bar = "#" * (30 * done // (epochs * steps))
                print(f"\r[{bar:<30}] epoch {epoch + 1}/{epochs} step {s + 1}/{steps}", end="", file=sys.stderr)
        losses.append(total.item() / steps)
        if progress:
            print(f"\r[{'#' * (30 * (epoch + 1) // epochs):<30}] epoch {epoch + 1}/{epochs} "
                  f"loss {losses[-1]:.4f}      ", end="", file=sys.stderr)
    model.eval()
    with torch.no_grad():
        acc = (model(x_te).argmax(1) == y_te).float().mean().item()
    seconds = time.perf_counter() - t0
    if progress:
        print(file=sys.stderr)
    return losses, acc, seconds


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Train a small CNN on the digits data set on webgpu.")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--no-cpu", action="store_true", help="skip the CPU run used for comparison")
    args = p.parse_args(argv)

    info = torch_webgpu.info()
    print(f"webgpu adapter: {info['adapter']} ({info['backend']})")
    losses, acc, sec = train("webgpu", epochs=args.epochs, progress=True)
    print(f"webgpu: test accuracy {acc * 100:.1f}%, final loss {losses[-1]:.4f}, {sec:.1f} s")
    if not args.no_cpu:
        cpu_losses, cpu_acc, cpu_sec = train("cpu", epochs=args.epochs)
        worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, cpu_losses))
        print(f"cpu:    test accuracy {cpu_acc * 100:.1f}%, final loss {cpu_losses[-1]:.4f}, {cpu_sec:.1f} s")
        print(f"loss curves: largest relative difference per epoch {worst:.2e}")
    return 0 if acc >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
