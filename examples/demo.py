"""torch-webgpu's demo: trains a small CNN on scikit-learn's digits data set (8x8 images of handwritten
digits; it ships with scikit-learn, nothing is downloaded) on the `webgpu` device, then runs the same
seeded training on the CPU, and prints both test accuracies and times, how closely the two loss curves
agree, and the path of a PNG plot of both curves.

    python examples/demo.py [--epochs N] [--plot PATH] [--no-cpu]

Needs tqdm and matplotlib (examples/requirements.txt). The functions here are also what
tests/test_models.py trains.
"""

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

import torch_webgpu  # noqa: F401  (registers `webgpu`; `import torch` alone does too once it is installed)

# The closeness figure: the largest per-epoch difference between the webgpu and CPU mean losses,
# divided by the CPU's first-epoch loss (the scale of the whole curve). Float rounding differs from
# the first step on (summation orders, fused kernels), and twelve epochs of Adam amplify it, so the
# curves are close, not equal; a wrong kernel puts whole epochs off by far more than this.
TOLERANCE = 2e-2


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
    """conv-BN-ReLU, conv-ReLU-maxpool, conv-ReLU, flatten, two linear layers."""

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
    bar = tqdm(total=epochs * steps, desc=f"train on {device}", unit="step", disable=not progress)
    t0 = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=order).to(device)
        total = torch.zeros((), device=device)
        for s in range(steps):
            idx = perm[s * batch : (s + 1) * batch]
            loss = F.cross_entropy(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()  # no .item() per step: that would wait for the device each time
            bar.update()
        losses.append(total.item() / steps)
        bar.set_postfix(epoch=f"{epoch + 1}/{epochs}", loss=f"{losses[-1]:.4f}")
    model.eval()
    with torch.no_grad():
        acc = (model(x_te).argmax(1) == y_te).float().mean().item()
    seconds = time.perf_counter() - t0
    bar.close()
    return losses, acc, seconds


def closeness(losses, reference):
    """Largest per-epoch |loss - reference| relative to the reference's first-epoch loss."""
    return max(abs(a - b) for a, b in zip(losses, reference)) / abs(reference[0])


def plot(path, losses, cpu_losses, adapter):
    """Writes the loss curves (and, with a CPU run, their per-epoch difference) to a PNG."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    epochs = range(1, len(losses) + 1)
    panels = 2 if cpu_losses else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4), squeeze=False)
    ax = axes[0][0]
    ax.plot(epochs, losses, "o-", label=f"webgpu ({adapter})")
    if cpu_losses:
        ax.plot(epochs, cpu_losses, "x--", label="cpu")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.set_title("digits CNN: loss per epoch")
    ax.legend()
    if cpu_losses:
        ax = axes[0][1]
        diff = [abs(a - b) / abs(cpu_losses[0]) for a, b in zip(losses, cpu_losses)]
        ax.plot(epochs, diff, "o-", label="|webgpu - cpu| / cpu's first-epoch loss")
        ax.axhline(TOLERANCE, color="red", linestyle=":", label=f"tolerance {TOLERANCE:.0e}")
        ax.set_ylim(0, max(TOLERANCE, max(diff)) * 1.15)
        ax.set_xlabel("epoch")
        ax.set_title("difference between the curves")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Train a small CNN on the digits data set on webgpu.")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--plot", default="demo_loss_curves.png", help="where to write the PNG of the loss curves")
    p.add_argument(
        "--min-accuracy",
        type=float,
        default=0.9,
        help="exit non-zero below this webgpu test accuracy (default 0.9, for 12 epochs)",
    )
    p.add_argument("--no-cpu", action="store_true", help="skip the CPU run used for comparison")
    args = p.parse_args(argv)

    info = torch_webgpu.info()
    print(f"webgpu adapter: {info['adapter']} ({info['backend']}, {info['adapter_type']})")
    if info["adapter_type"] == "cpu":
        print(
            "note: this adapter is a CPU emulation of a GPU (as in CI): results are real, speed is not the point here"
        )
    losses, acc, sec = train("webgpu", epochs=args.epochs, progress=True)
    print(
        f"webgpu: test accuracy {acc * 100:.1f}%, final loss {losses[-1]:.4f}, {sec:.1f} s "
        "(including the first-use compilation of its kernels)"
    )
    ok = acc >= args.min_accuracy
    cpu_losses = None
    if not args.no_cpu:
        cpu_losses, cpu_acc, cpu_sec = train("cpu", epochs=args.epochs, progress=True)
        print(f"cpu:    test accuracy {cpu_acc * 100:.1f}%, final loss {cpu_losses[-1]:.4f}, {cpu_sec:.1f} s")
        c = closeness(losses, cpu_losses)
        within = c <= TOLERANCE
        print(
            f"loss curves: largest per-epoch difference {c:.1e} of the first epoch's loss "
            f"(tolerance {TOLERANCE:.0e}): {'OK' if within else 'TOO FAR APART'}"
        )
        ok = ok and within
    path = os.path.abspath(args.plot)
    plot(path, losses, cpu_losses, info["adapter"])
    print(f"loss curves plot: {path}")
    if acc < args.min_accuracy:
        print(f"webgpu test accuracy {acc * 100:.1f}% is below {args.min_accuracy * 100:.1f}%", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
