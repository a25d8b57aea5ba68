"""Side-by-side speed of torch-webgpu and torch on a reference device (CUDA if present, else CPU).
Every figure is measured on both devices in the same run; a new figure is one new row in BENCHMARKS.

    python benchmarks/run.py [--compare cuda|cpu] [--out FILE] [--only SUBSTRING]
"""

import argparse
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable, Optional

# A benchmark of the CPU fallback would measure copies, not kernels: make missing ops an error.
os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")

import torch  # noqa: E402
import torch_webgpu  # noqa: E402


# ----------------------------------------------------------------------------- devices


def synchronize(dev: torch.device) -> None:
    if dev.type == "webgpu":
        torch.webgpu.synchronize()
    elif dev.type == "cuda":
        torch.cuda.synchronize(dev)
    # cpu: ops have finished when they return


def empty_cache(dev: torch.device) -> None:
    if dev.type == "webgpu":
        torch.webgpu.empty_cache()
    elif dev.type == "cuda":
        torch.cuda.empty_cache()


def stream_counters() -> Optional[dict]:
    fn = getattr(getattr(torch_webgpu, "_C", None), "_stream_counters", None)
    if fn is None:
        return None
    try:
        return dict(fn())
    except Exception:
        return None


def counter_delta(before: Optional[dict], after: Optional[dict]) -> Optional[dict]:
    if before is None or after is None:
        return None
    return {k: after[k] - before.get(k, 0) for k in after if isinstance(after[k], (int, float))}


class CheckFailed(AssertionError):
    pass


# ----------------------------------------------------------------------------- benchmarks
# Each function takes a device, runs its own warm-up, checks its result against CPU and returns
# one number in the row's unit.


def tiny_add_chain(dev: torch.device, n: int = 2000, repeats: int = 5) -> float:
    """Per-op cost of n dependent adds on 4 floats: launch/record overhead, not arithmetic."""
    y = torch.ones(4, device=dev)

    def chain():
        x = torch.zeros(4, device=dev)
        synchronize(dev)
        t0 = time.perf_counter()
        for _ in range(n):
            x = x + y
        synchronize(dev)
        return time.perf_counter() - t0, x

    chain()  # warm-up: pipelines, allocator cache, lazy init
    times = []
    for _ in range(repeats):
        t, x = chain()
        times.append(t)
        got = x.cpu()
        if not torch.equal(got, torch.full((4,), float(n))):
            raise CheckFailed(f"chain of {n} adds gave {got.tolist()}, expected {float(n)}")
    return statistics.median(times) / n * 1e6


def add_bandwidth(dev: torch.device, n: int = 1 << 26, warmup: int = 3, iters: int = 20) -> float:
    """torch.add(a, b, out=c) on n float32: 2 reads + 1 write per element."""
    gen = torch.Generator().manual_seed(0)
    a_cpu = torch.randn(n, generator=gen)
    b_cpu = torch.randn(n, generator=gen)
    a, b = a_cpu.to(dev), b_cpu.to(dev)
    c = torch.empty(n, device=dev)
    for _ in range(warmup):
        torch.add(a, b, out=c)
    synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(iters):
        torch.add(a, b, out=c)
    synchronize(dev)
    t = (time.perf_counter() - t0) / iters
    got = c.cpu()
    if not torch.equal(got, a_cpu + b_cpu):
        bad = (got != a_cpu + b_cpu).nonzero()
        raise CheckFailed(f"add out= differs from CPU at {bad.numel()} elements, first {bad[:4].flatten().tolist()}")
    del a, b, c
    return 3 * 4 * n / t / 1e9


def sum_bandwidth(dev: torch.device, n: int = 1 << 26, warmup: int = 3, iters: int = 20) -> float:
    """Full float32 sum of n elements: one read per element, GB/s of input."""
    gen = torch.Generator().manual_seed(1)
    a_cpu = torch.randn(n, generator=gen)
    a = a_cpu.to(dev)
    for _ in range(warmup):
        s = a.sum()
    synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(iters):
        s = a.sum()
    synchronize(dev)
    t = (time.perf_counter() - t0) / iters
    got, want = s.cpu().double().item(), a_cpu.double().sum().item()
    if abs(got - want) > 1e-3 * max(1.0, abs(want)) + 0.5:
        raise CheckFailed(f"sum gave {got}, float64 reference {want}")
    del a
    return 4 * n / t / 1e9


@dataclass
class Bench:
    name: str
    unit: str
    higher_is_better: bool  # False for times; the ratio is oriented so that > 1 means webgpu is faster
    fn: Callable[[torch.device], float]


BENCHMARKS = [
    Bench("add chain: 2000 dependent adds, f32[4]", "us/op", False, tiny_add_chain),
    Bench("add bandwidth: 2^26 f32, out=", "GB/s", True, add_bandwidth),
    Bench("sum: 2^26 f32, full reduction", "GB/s", True, sum_bandwidth),
]


# ----------------------------------------------------------------------------- running


@dataclass
class Result:
    bench: Bench
    webgpu: Optional[float] = None
    ref: Optional[float] = None
    error: Optional[str] = None
    counters: Optional[dict] = None

    @property
    def ratio(self) -> Optional[float]:
        if self.webgpu is None or self.ref is None or self.webgpu <= 0 or self.ref <= 0:
            return None
        return self.webgpu / self.ref if self.bench.higher_is_better else self.ref / self.webgpu


def measure(bench: Bench, webgpu: torch.device, ref: torch.device) -> Result:
    res = Result(bench)
    for dev in (ref, webgpu):
        try:
            before = stream_counters() if dev.type == "webgpu" else None
            value = bench.fn(dev)
            if dev.type == "webgpu":
                res.webgpu = value
                res.counters = counter_delta(before, stream_counters())
            else:
                res.ref = value
        except Exception as e:  # one broken row must not hide the others
            msg = f"{dev.type}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            res.error = msg if res.error is None else f"{res.error}; {msg}"
            traceback.print_exc(file=sys.stderr)
        finally:
            empty_cache(dev)
    return res


def fmt(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def device_description(dev: torch.device) -> str:
    if dev.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(dev)})"
    if dev.type == "cpu":
        return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    return str(dev)


def header_lines(ref: torch.device) -> list:
    try:
        info = torch_webgpu.info()
        wg = f"{info.get('adapter', '?')} via {info.get('backend', '?')}"
    except Exception as e:
        wg = f"info() failed: {e}"
    return [
        f"torch {torch.__version__}, torch_webgpu {getattr(torch_webgpu, '__version__', '?')}, "
        f"python {platform.python_version()}",
        f"webgpu: {wg}",
        f"reference: {device_description(ref)}",
        "ratio: > 1 means webgpu is faster than the reference "
        "(ref/webgpu for times, webgpu/ref for throughput)",
    ]


def table_rows(results: list, ref: torch.device) -> tuple:
    head = ["benchmark", "unit", "webgpu", ref.type, "ratio"]
    rows = []
    for r in results:
        ratio = fmt(r.ratio) + "x" if r.ratio is not None else "-"
        rows.append([r.bench.name, r.bench.unit, fmt(r.webgpu), fmt(r.ref), ratio])
    return head, rows


def counters_line(r: Result) -> Optional[str]:
    if not r.counters:
        return None
    return f"{r.bench.name}: " + ", ".join(f"{k}={v}" for k, v in sorted(r.counters.items()))


def render_text(results: list, ref: torch.device) -> str:
    head, rows = table_rows(results, ref)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    )
    out = header_lines(ref) + ["", line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    counters = [c for c in map(counters_line, results) if c]
    if counters:
        out += ["", "webgpu stream counters per benchmark (all repeats, warm-up included):"]
        out += ["  " + c for c in counters]
    errors = [f"  {r.bench.name}: {r.error}" for r in results if r.error]
    if errors:
        out += ["", "errors:"] + errors
    return "\n".join(out)


def render_markdown(results: list, ref: torch.device) -> str:
    head, rows = table_rows(results, ref)
    out = [f"- {h}" for h in header_lines(ref)] + [""]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(["---", "---", "---:", "---:", "---:"]) + "|")
    out += ["| " + " | ".join(r) + " |" for r in rows]
    counters = [c for c in map(counters_line, results) if c]
    if counters:
        out += ["", "webgpu stream counters per benchmark (all repeats, warm-up included):", ""]
        out += [f"- {c}" for c in counters]
    errors = [f"- {r.bench.name}: {r.error}" for r in results if r.error]
    if errors:
        out += ["", "errors:", ""] + errors
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compare", choices=["cuda", "cpu"], default=None,
                   help="reference device (default: cuda if available, else cpu)")
    p.add_argument("--out", metavar="FILE", help="also write the table as markdown to FILE")
    p.add_argument("--only", metavar="SUBSTRING", help="run only benchmarks whose name contains this")
    args = p.parse_args(argv)

    ref_type = args.compare or ("cuda" if torch.cuda.is_available() else "cpu")
    if ref_type == "cuda" and not torch.cuda.is_available():
        p.error("--compare cuda: torch.cuda.is_available() is False")
    if not torch.webgpu.is_available():
        print("torch.webgpu.is_available() is False: no WebGPU adapter (install a Vulkan driver, "
              "e.g. mesa-vulkan-drivers)", file=sys.stderr)
        return 2
    ref = torch.device(ref_type, 0) if ref_type == "cuda" else torch.device("cpu")
    webgpu = torch.device("webgpu", 0)

    benches = [b for b in BENCHMARKS if not args.only or args.only in b.name]
    if not benches:
        p.error(f"--only {args.only!r} matches no benchmark")
    results = []
    for b in benches:
        print(f"running: {b.name}", file=sys.stderr, flush=True)
        results.append(measure(b, webgpu, ref))

    print(render_text(results, ref))
    if args.out:
        with open(args.out, "w") as f:
            f.write(render_markdown(results, ref))
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
