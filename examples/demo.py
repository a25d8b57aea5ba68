"""The smallest torch-webgpu program: tensors on the `webgpu` device, one add, checked against CPU.
Run it with `python examples/demo.py` once the package is installed (see README.md)."""

import sys

import torch
import torch_webgpu  # registers the `webgpu` device

info = torch_webgpu.info()
print(f"adapter: {info['adapter']}")
print(f"backend: {info['backend']}")

# Created directly on the device, and moved there from CPU.
a = torch.tensor([-1.5, 2.7, 1.0, 2.0], device="webgpu")
b = torch.tensor([-1.0, 0.9, 1.1, -2.1]).to("webgpu")
c = a + b
print(f"{a.device}: a + b = {c.cpu()}  (c[1].item() = {c[1].item():.4f})")

x_cpu = torch.randn(256, 256, generator=torch.Generator().manual_seed(0))
y_cpu = torch.randn(256, 256, generator=torch.Generator().manual_seed(1))
z = x_cpu.to("webgpu") + y_cpu.to("webgpu")

# float32 addition is correctly rounded on both devices, so the results must match exactly.
ok = torch.equal(c.cpu(), a.cpu() + b.cpu()) and torch.equal(z.cpu(), x_cpu + y_cpu)
print("matches CPU:", ok)
sys.exit(0 if ok else 1)
