"""Matrix-multiply speed of torch-webgpu against a reference device, measured in the same run.

    python benchmarks/bench_matmul.py [--compare cuda|cpu] [--out FILE] [--quick]
                                      [--dtype float32|float16|bfloat16] [--tiles SPEC] [--iters N]

Each shape is first computed on both devices and compared (relative Frobenius error), then timed:
warm-up (the webgpu pipeline compiles there), then `iters` products between two synchronisations.
TF32 is off on CUDA so float32 is compared with float32. --tiles sets TORCH_WEBGPU_MATMUL_TILES
(e.g. "L=128x128x16x8x8,M=64x64x16x4x4,S=16x128x16x4x4": BMxBNxBKxTMxTN for large, medium and
small-M problems) to tune the tiled kernel per adapter. --quick uses small shapes (runs on a CPU
Vulkan driver, reference cpu). --out writes one JSON object per shape.
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--compare",
        choices=["cuda", "cpu"],
        default=None,
        help="reference device (default: cuda when available, else cpu)",
    )
    p.add_argument("--out", default=None, help="write results as JSON lines to FILE")
    p.add_argument("--quick", action="store_true", help="small shapes (CPU reference, CPU Vulkan driver)")
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--tiles", default=None, help="TORCH_WEBGPU_MATMUL_TILES for this run")
    p.add_argument("--iters", type=int, default=None, help="timed products per shape")
    p.add_argument("--only", default=None, help="run shapes whose name contains this")
    return p.parse_args()


args = parse()
if args.tiles is not None:
    os.environ["TORCH_WEBGPU_MATMUL_TILES"] = args.tiles

import torch  # noqa: E402

import torch_webgpu  # noqa: E402,F401

# (name, batch or None, M, K, N, B transposed)
FULL = [
    ("4096^3", None, 4096, 4096, 4096, False),
    ("4096^3 B^T (linear)", None, 4096, 4096, 4096, True),
    ("1024^3", None, 1024, 1024, 1024, False),
    ("128x768x768", None, 128, 768, 768, False),
    ("1x4096x4096 (decode)", None, 1, 4096, 4096, False),
    ("1x4096x4096 B^T (decode linear)", None, 1, 4096, 4096, True),
    ("16x4096x4096 (small M)", None, 16, 4096, 4096, False),
    ("bmm 32x128x64x128", 32, 128, 64, 128, False),
]
QUICK = [
    ("512^3", None, 512, 512, 512, False),
    ("256^3 B^T", None, 256, 256, 256, True),
    ("128x768x768", None, 128, 768, 768, False),
    ("1x1024x1024 (decode)", None, 1, 1024, 1024, False),
    ("8x1024x512 (small M)", None, 8, 1024, 512, False),
    ("bmm 8x64x32x64", 8, 64, 32, 64, False),
]


def sync(dev):
    if dev.type == "webgpu":
        torch.webgpu.synchronize()
    elif dev.type == "cuda":
        torch.cuda.synchronize(dev)


def operands(batch, M, K, N, bt, dtype, dev, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*((batch,) if batch else ()), M, K, generator=g).to(dtype)
    if bt:
        b = torch.randn(*((batch,) if batch else ()), N, K, generator=g).to(dtype).to(dev).transpose(-1, -2)
    else:
        b = torch.randn(*((batch,) if batch else ()), K, N, generator=g).to(dtype).to(dev)
    return a.to(dev), b


def product(a, b):
    return torch.bmm(a, b) if a.dim() == 3 else torch.mm(a, b)


def timed(a, b, dev, iters):
    for _ in range(2):
        product(a, b)
    sync(dev)
    t0 = time.perf_counter()
    for _ in range(iters):
        product(a, b)
    sync(dev)
    return (time.perf_counter() - t0) / iters


def main():
    ref = torch.device(args.compare or ("cuda" if torch.cuda.is_available() else "cpu"))
    if ref.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    wg = torch.device("webgpu")
    dtype = getattr(torch, args.dtype)
    shapes = QUICK if args.quick else FULL
    if args.only:
        shapes = [s for s in shapes if args.only in s[0]]
    out = open(args.out, "w") if args.out else None
    print(f"webgpu: {torch.webgpu.info().get('adapter', '?') if hasattr(torch.webgpu, 'info') else '?'}")
    print(
        f"reference: {ref}{' (' + torch.cuda.get_device_name(ref) + ')' if ref.type == 'cuda' else ''}, "
        f"dtype {args.dtype}, tiles {os.environ.get('TORCH_WEBGPU_MATMUL_TILES', 'default')}"
    )
    print(f"{'shape':34s} {'webgpu ms':>10s} {'TFLOP/s':>8s} {'ref ms':>10s} {'TFLOP/s':>8s} {'ratio':>6s}  rel.err")
    failed = False
    for name, batch, M, K, N, bt in shapes:
        flops = 2.0 * (batch or 1) * M * N * K
        a_w, b_w = operands(batch, M, K, N, bt, dtype, wg)
        a_r, b_r = operands(batch, M, K, N, bt, dtype, ref)
        # Check before timing: webgpu against the reference device (f32 accumulation on both).
        r_w = product(a_w, b_w).cpu().double()
        r_r = product(a_r, b_r).cpu().double()
        err = ((r_w - r_r).norm() / r_r.norm().clamp_min(1e-30)).item()
        tol = 1e-5 if dtype == torch.float32 else 1e-2
        ok = err <= tol
        if not ok:
            failed = True
        iters = args.iters or (5 if args.quick else max(5, min(500, int(2e12 / flops))))
        t_w = timed(a_w, b_w, wg, iters)
        t_r = timed(a_r, b_r, ref, iters)
        tf_w, tf_r = flops / t_w / 1e12, flops / t_r / 1e12
        print(
            f"{name:34s} {t_w * 1e3:10.3f} {tf_w:8.3f} {t_r * 1e3:10.3f} {tf_r:8.3f} {t_r / t_w:6.2f}  "
            f"{err:.1e}{'' if ok else '  MISMATCH'}",
            flush=True,
        )
        if out:
            out.write(
                json.dumps(
                    {
                        "shape": name,
                        "batch": batch or 1,
                        "M": M,
                        "K": K,
                        "N": N,
                        "b_transposed": bt,
                        "dtype": args.dtype,
                        "reference": str(ref),
                        "webgpu_ms": t_w * 1e3,
                        "webgpu_tflops": tf_w,
                        "ref_ms": t_r * 1e3,
                        "ref_tflops": tf_r,
                        "ratio": t_r / t_w,
                        "rel_err": err,
                        "ok": ok,
                        "tiles": os.environ.get("TORCH_WEBGPU_MATMUL_TILES", ""),
                    }
                )
                + "\n"
            )
        del a_w, b_w, a_r, b_r
        torch.webgpu.empty_cache() if hasattr(torch.webgpu, "empty_cache") else None
    if out:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
