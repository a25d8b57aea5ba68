"""Bandwidth-bound kernels one by one (issue 17: row kernels, mat-vec; issue 16: a compiled pointwise
chain), each checked against CPU, for comparing kernel variants chosen by environment variables
(TORCH_WEBGPU_ROW_CACHE, TORCH_WEBGPU_ROW_SUBGROUPS, TORCH_WEBGPU_GEMV, TORCH_WEBGPU_COMPILE_VEC4)
in separate processes, and CUDA's figure for the same case.

    python benchmarks/probe_bw.py --device webgpu [--only softmax,matvec] [--tag label]

Prints one line per case: the tag, the case, GB/s (bytes a kernel must move at least, over the wall
time per call between synchronisations, as benchmarks/run.py measures), the time per call, and the
time per call until the last call returned (the CPU's recording time: when it is close to the time
per call, the case is bound by the CPU, not by the GPU).
"""

import argparse
import time

import torch
import torch.nn.functional as F


def timed(fn, iters):
    """Seconds per call between synchronisations, and per call until the last call returned."""
    for _ in range(3):
        fn()
    torch.accelerator.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    t1 = time.perf_counter()
    torch.accelerator.synchronize()
    return (time.perf_counter() - t0) / iters, (t1 - t0) / iters


def check(name, got, want, rtol, atol):
    got = got.detach().float().cpu()
    if not torch.allclose(got, want.float(), rtol=rtol, atol=atol):
        err = (got - want.float()).abs().max().item()
        print(f"CHECK FAILED {name}: max abs difference {err:.3g}", flush=True)


def cases(dev):
    g = torch.Generator().manual_seed(5)

    def rnd(*shape):
        c = torch.randn(*shape, generator=g)
        return c, c.to(dev)

    def softmax(rows, cols):
        xc, x = rnd(rows, cols)
        check("softmax", torch.softmax(x, -1), torch.softmax(xc, -1), 1e-5, 1e-6)
        return lambda: torch.softmax(x, -1), 2 * 4 * rows * cols

    def log_softmax(rows, cols):
        xc, x = rnd(rows, cols)
        check("log_softmax", torch.log_softmax(x, -1), torch.log_softmax(xc, -1), 1e-5, 1e-5)
        return lambda: torch.log_softmax(x, -1), 2 * 4 * rows * cols

    def softmax_bwd(rows, cols):
        gc, gr = rnd(rows, cols)
        xc, x = rnd(rows, cols)
        yc, y = torch.softmax(xc, -1), torch.softmax(x, -1)
        want = torch._softmax_backward_data(gc, yc, -1, torch.float32)
        check("softmax_bwd", torch._softmax_backward_data(gr, y, -1, torch.float32), want, 1e-4, 1e-6)
        return lambda: torch._softmax_backward_data(gr, y, -1, torch.float32), 3 * 4 * rows * cols

    def layer_norm(rows, cols):
        xc, x = rnd(rows, cols)
        wc, w = rnd(cols)
        bc, b = rnd(cols)
        check("layer_norm", F.layer_norm(x, (cols,), w, b), F.layer_norm(xc, (cols,), wc, bc), 1e-4, 1e-4)
        return lambda: F.layer_norm(x, (cols,), w, b), 2 * 4 * rows * cols

    def layer_norm_bwd(rows, cols):
        xc, x = rnd(rows, cols)
        wc, w = rnd(cols)
        gc, gr = rnd(rows, cols)
        mean, rstd = x.mean(-1, keepdim=True), torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
        meanc, rstdc = xc.mean(-1, keepdim=True), torch.rsqrt(xc.var(-1, unbiased=False, keepdim=True) + 1e-5)
        mask = [True, False, False]
        want = torch.ops.aten.native_layer_norm_backward(gc, xc, (cols,), meanc, rstdc, wc, None, mask)[0]

        def run():
            return torch.ops.aten.native_layer_norm_backward(gr, x, (cols,), mean, rstd, w, None, mask)[0]

        check("layer_norm_bwd", run(), want, 1e-3, 1e-3)
        return run, 3 * 4 * rows * cols

    def matvec_cols(k, n):  # x @ W: W contiguous along the output
        xc, x = rnd(1, k)
        wc, w = rnd(k, n)
        check("matvec_cols", x @ w, xc @ wc, 1e-3, 1e-3)
        return lambda: x @ w, 4 * k * n

    def matvec_rows(k, n):  # F.linear: W's rows contiguous along k (decoding)
        xc, x = rnd(1, k)
        wc, w = rnd(n, k)
        check("matvec_rows", F.linear(x, w), F.linear(xc, wc), 1e-3, 1e-3)
        return lambda: F.linear(x, w), 4 * k * n

    def total_sum(n):
        xc, x = rnd(n)
        check("sum", x.sum(), xc.sum(), 1e-4, 1e-2)
        return lambda: x.sum(), 4 * n

    def add(n):
        x, y = rnd(n)[1], rnd(n)[1]
        out = torch.empty_like(x)
        return lambda: torch.add(x, y, out=out), 3 * 4 * n

    def gelu_chain(n):
        xc, x = rnd(n)
        wc, w = rnd(n)
        bc, b = rnd(n)

        def f(x, w, b):
            return F.gelu(x * w + b) * 0.5

        cf = torch.compile(f)
        check("gelu_chain", cf(x, w, b), f(xc, wc, bc), 1e-5, 1e-5)
        return lambda: cf(x, w, b), 4 * 4 * n

    return {
        "softmax 4096x4096": lambda: softmax(4096, 4096),
        "softmax 1536x128": lambda: softmax(1536, 128),
        "log_softmax 4096x4096": lambda: log_softmax(4096, 4096),
        "softmax_bwd 4096x4096": lambda: softmax_bwd(4096, 4096),
        "layer_norm 4096x4096": lambda: layer_norm(4096, 4096),
        "layer_norm 128x768": lambda: layer_norm(128, 768),
        "layer_norm 8192x8192": lambda: layer_norm(8192, 8192),
        "layer_norm_bwd 4096x4096": lambda: layer_norm_bwd(4096, 4096),
        "matvec x@W 4096x4096": lambda: matvec_cols(4096, 4096),
        "matvec linear 4096->4096": lambda: matvec_rows(4096, 4096),
        "matvec linear 768->3072": lambda: matvec_rows(768, 3072),
        "matvec linear 4096->11008": lambda: matvec_rows(4096, 11008),
        "sum 2^26": lambda: total_sum(1 << 26),
        "add 2^24": lambda: add(1 << 24),
        "compiled gelu chain 2^24": lambda: gelu_chain(1 << 24),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="webgpu")
    ap.add_argument("--only", default="")
    ap.add_argument("--tag", default="")
    ap.add_argument("--iters", type=int, default=30)
    a = ap.parse_args()
    if a.device == "webgpu":
        import torch_webgpu  # noqa: F401
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device(a.device)
    tag = a.tag or a.device
    for name, make in cases(dev).items():
        if a.only and not any(s in name for s in a.only.split(",")):
            continue
        try:
            fn, nbytes = make()
            t, cpu = timed(fn, a.iters)
            print(
                f"{tag}\t{name}\t{nbytes / t / 1e9:.0f} GB/s\t{t * 1e6:.1f} us\t(recorded in {cpu * 1e6:.1f} us)",
                flush=True,
            )
        except Exception as e:
            print(f"{tag}\t{name}\tERROR {type(e).__name__}: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    main()
