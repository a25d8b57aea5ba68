"""Tile-shape sweep of the half-precision subgroup-matrix GEMM (ops/linalg.cpp sg_gemm).

    python benchmarks/probe_sg.py [--tiles L=2x4x4x2x32,...] [--shapes 4096x4096x4096,...] [--iters N]

For each tile setting (TORCH_WEBGPU_MATMUL_SG_TILES, read at every call) and each MxNxK shape it checks
the webgpu result against CUDA's (when present, else CPU in float32) and prints TFLOP/s, with
cuBLAS's in the same process for the ratio. A tuning aid: the figures that count are benchmarks/run.py's.
"""

import argparse
import os
import time

import torch

import torch_webgpu  # noqa: F401

DEFAULT_TILES = [
    "",  # the built-in size classes
    "L=4x2x2x4x32",
    "L=2x2x4x4x32",
    "L=2x2x4x4x64",
    "L=2x4x4x4x32",
    "L=4x2x4x4x16",
    "L=4x2x4x2x32",
    "L=2x4x4x2x32",
]


def timed(fn, sync, iters):
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) / iters


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tiles", default=None, help="comma-separated settings, ';' between settings")
    p.add_argument("--shapes", default="4096x4096x4096,128x768x768,2048x4096x4096t")
    p.add_argument("--iters", type=int, default=10)
    args = p.parse_args()
    tiles = args.tiles.split(";") if args.tiles else DEFAULT_TILES
    cuda = torch.cuda.is_available()
    print(torch.webgpu.info()["adapter"], "| cuda:", torch.cuda.get_device_name() if cuda else None)
    for shape in args.shapes.split(","):
        bt = shape.endswith("t")  # B given transposed (as F.linear's weight)
        M, N, K = (int(v) for v in shape.rstrip("t").split("x"))
        g = torch.Generator().manual_seed(0)
        a = torch.randn(M, K, generator=g).half()
        b = (
            (torch.randn(N, K, generator=g) * K**-0.5).half()
            if bt
            else (torch.randn(K, N, generator=g) * K**-0.5).half()
        )
        flops = 2.0 * M * N * K
        if cuda:
            ac, bc = a.cuda(), b.cuda()
            f = (lambda: ac @ bc.t()) if bt else (lambda: ac @ bc)
            want = f().float().cpu()
            t_ref = timed(f, torch.cuda.synchronize, args.iters)
            print(f"{shape}: cuBLAS {flops / t_ref / 1e12:.1f} TFLOP/s")
        else:
            want = a.float() @ (b.float().t() if bt else b.float())
            t_ref = None
        aw, bw = a.to("webgpu"), b.to("webgpu")
        fw = (lambda: aw @ bw.t()) if bt else (lambda: aw @ bw)
        for setting in tiles:
            os.environ["TORCH_WEBGPU_MATMUL_SG_TILES"] = setting
            try:
                got = fw().float().cpu()
                err = (got - want).abs().max().item()
                t = timed(fw, torch.webgpu.synchronize, args.iters)
                ratio = f" ({t_ref / t:.3f}x)" if t_ref else ""
                print(f"  {setting or 'default':16s} {flops / t / 1e12:7.1f} TFLOP/s{ratio}  max err {err:.3g}")
            except Exception as e:  # a setting that does not fit or compile: say so, go on
                print(f"  {setting or 'default':16s} failed: {str(e).splitlines()[0][:200]}")
    os.environ.pop("TORCH_WEBGPU_MATMUL_SG_TILES", None)


if __name__ == "__main__":
    main()
