"""Inference with an MNIST-style MLP (Linear, ReLU, Linear, argmax) on `webgpu`: the model is
trained briefly on the CPU on scikit-learn's digits (8x8 images, flattened), moved to the device
with `.to("webgpu")`, and its predictions are checked against the CPU's.

    python examples/mlp_inference.py
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_webgpu  # noqa: F401


def make_mlp(seed: int = 0, steps: int = 200):
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):  # full-batch training on the CPU: this example is about inference
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model.eval(), x, y


def main() -> int:
    model, x, y = make_mlp()
    with torch.no_grad():
        cpu_pred = model(x).argmax(1)
        dev_model = model.to("webgpu")
        pred = dev_model(x.to("webgpu")).argmax(1).cpu()
    acc = (pred == y).float().mean().item()
    agree = (pred == cpu_pred).float().mean().item()
    print(
        f"webgpu predictions: accuracy {acc * 100:.1f}% on {len(y)} digits, {agree * 100:.2f}% identical to the CPU's"
    )
    return 0 if agree > 0.99 else 1


if __name__ == "__main__":
    sys.exit(main())
