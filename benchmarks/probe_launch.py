"""GPU time (timestamp events) of one large pointwise kernel launched three ways: eager
(`torch.add(out=)`), a torch.compile-generated WGSL kernel, and a hand-written kernel through the
same launch entry the generated code uses (`_C._launch_wgsl`). Separates the kernel's own speed from
the launch path and the CPU's recording time (issue 16's fused pointwise row).

    python benchmarks/probe_launch.py [--n 16777216]
"""

import argparse
import time

import torch
import torch.nn.functional as F

import torch_webgpu  # noqa: F401
from torch_webgpu import _C


def gpu_us(fn, iters=20):
    fn()
    torch.webgpu.synchronize()
    a, b = torch.webgpu.Event(enable_timing=True), torch.webgpu.Event(enable_timing=True)
    t0 = time.perf_counter()
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    t1 = time.perf_counter()
    b.synchronize()
    t2 = time.perf_counter()
    return a.elapsed_time(b) * 1e3 / iters, (t1 - t0) * 1e6 / iters, (t2 - t0) * 1e6 / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    n = ap.parse_args().n
    x, w, b = (torch.randn(n, device="webgpu") for _ in range(3))
    out = torch.empty_like(x)
    src = (
        "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>, "
        "@builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
        "  let i = i32(linear_id(wid, nwg, lid, 256u));\n"
        f"  if (i >= {n}) {{ return; }}\n"
        "  b2[u32(P_off(2u) + i)] = b0[u32(P_off(0u) + i)] * b1[u32(P_off(1u) + i)];\n}\n"
    )

    def raw():
        rows = [(x, "f32", False), (w, "f32", False), (out, "f32", True)]
        _C._launch_wgsl(
            "probe_raw_mul", src, rows, [("off", "i32s", [0, 0, 0])], (n + 255) // 256, "", ["pointwise"], ""
        )

    cg = torch.compile(lambda x, w, b: F.gelu(x * w + b) * 0.5)
    cm = torch.compile(lambda x, w: x * w)
    cases = {
        "eager add out= (3 x 4n bytes)": (lambda: torch.add(x, w, out=out), 12 * n),
        "eager mul (3 x 4n bytes)": (lambda: x * w, 12 * n),
        "raw _launch_wgsl mul (3 x 4n)": (raw, 12 * n),
        "compiled x * w (3 x 4n)": (lambda: cm(x, w), 12 * n),
        "compiled gelu chain (4 x 4n)": (lambda: cg(x, w, b), 16 * n),
    }
    for name, (fn, nbytes) in cases.items():
        g, rec, wall = gpu_us(fn)
        print(
            f"{name:34s} GPU {g:8.1f} us ({nbytes / g / 1e3:6.0f} GB/s)  recorded {rec:7.1f} us  wall {wall:7.1f} us",
            flush=True,
        )


if __name__ == "__main__":
    main()
