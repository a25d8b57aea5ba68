"""Copies between two webgpu devices (`x.to("webgpu:1")`), GB/s by size: through host memory both
devices import as a buffer (the default where the adapter can) or, with TORCH_WEBGPU_PEER_BOUNCE=0,
through a CPU tensor (a read, then an upload). With --cuda, CUDA's device-to-device copy for reference.

    python benchmarks/probe_peer.py [--mib 64,256] [--reps 5] [--cuda]
"""

import argparse
import os
import statistics
import time

import torch

import torch_webgpu  # noqa: F401


def rate(copy, sync, nbytes, reps):
    copy()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        copy()
        sync()
        ts.append(time.perf_counter() - t0)
    return nbytes / statistics.median(ts) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", default="64,256")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cuda", action="store_true")
    args = ap.parse_args()
    assert torch.webgpu.device_count() >= 2, "needs two webgpu devices (TORCH_WEBGPU_VISIBLE_DEVICES=0,0 on one)"
    path = "staged" if os.environ.get("TORCH_WEBGPU_PEER_BOUNCE") == "0" else "imported host memory"
    for mib in (int(m) for m in args.mib.split(",")):
        n = mib << 20
        x = torch.randn(n // 4, device="webgpu:0")
        y = torch.empty(n // 4, device="webgpu:1")
        gbs = rate(lambda: y.copy_(x), lambda: torch.webgpu.synchronize(1), n, args.reps)
        assert torch.equal(y.cpu(), x.cpu())
        line = f"{mib} MiB webgpu:0 -> webgpu:1 ({path}): {gbs:.1f} GB/s"
        if args.cuda and torch.cuda.device_count() >= 2:
            a = torch.randn(n // 4, device="cuda:0")
            b = torch.empty(n // 4, device="cuda:1")
            line += f"; cuda:0 -> cuda:1 {rate(lambda: b.copy_(a), lambda: torch.cuda.synchronize(1), n, args.reps):.1f} GB/s"
        print(line, flush=True)


if __name__ == "__main__":
    main()
