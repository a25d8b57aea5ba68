"""Probe of the full float32 sum and add (benchmarks/run.py's bandwidth rows): where their time goes
and how it depends on what ran before. A tuning aid, not a goal check; figures are printed next to
torch on the reference device measured in the same process.

    python benchmarks/probe_sum.py [--compare cuda|cpu] [--n LOG2] [--timeline FILE]
                                   [--variants VAR=VALUE[,VAR=VALUE] ...]

Prints GB/s of input (sum) or of all operands (add) per timing window of 20 calls, in scenarios:
  - fresh: right after the upload, three windows, then one window of 200;
  - idle: the same tensor after one second without GPU work;
  - realloc: the cache emptied and the input uploaded again into a new buffer (no idle time);
  - after rows: after run.py's chain and add rows, each followed by emptying the cache;
  - record: the CPU time to record 20 calls (nothing waits) against the whole window;
  - variants: each environment setting (e.g. TORCH_WEBGPU_REDUCE_VEC=4:16:1024; commas between
    variables, colons for commas inside a value) in a child process: fresh windows.
--timeline writes each window's start and end (time.time()) to FILE, to line up with a clock log.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")
import torch  # noqa: E402

import torch_webgpu  # noqa: E402,F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as suite  # noqa: E402

TIMELINE = []


def windows(dev, fn, nbytes, iters, count, label):
    """GB/s of `count` timing windows of `iters` calls of fn each."""
    out = []
    for i in range(count):
        suite.synchronize(dev)
        t0 = time.perf_counter()
        w0 = time.time()
        for _ in range(iters):
            fn()
        rec = time.perf_counter() - t0
        suite.synchronize(dev)
        dt = time.perf_counter() - t0
        TIMELINE.append((f"{dev.type} {label} {i} record {rec * 1e3:.2f} ms", w0, time.time()))
        out.append(nbytes / (dt / iters) / 1e9)
    return out


class Case:
    def __init__(self, dev, n, op):
        gen = torch.Generator().manual_seed(1)
        self.dev, self.op, self.n = dev, op, n
        self.a_cpu = torch.randn(n, generator=gen)
        self.b_cpu = torch.randn(n, generator=gen)
        self.upload()

    def upload(self):
        self.a = self.a_cpu.to(self.dev)
        if self.op == "add":
            self.b = self.b_cpu.to(self.dev)
            self.c = torch.empty(self.n, device=self.dev)

    def drop(self):
        self.a = self.b = self.c = None
        suite.synchronize(self.dev)
        suite.empty_cache(self.dev)

    def call(self):
        if self.op == "sum":
            self.s = self.a.sum()
        else:
            torch.add(self.a, self.b, out=self.c)

    def nbytes(self):
        return self.n * 4 * (1 if self.op == "sum" else 3)

    def run(self, iters, count, label):
        return windows(self.dev, self.call, self.nbytes(), iters, count, label)

    def check(self):
        if self.op == "sum":
            got, want = self.s.cpu().double().item(), self.a_cpu.double().sum().item()
            if abs(got - want) > 1e-3 * max(1.0, abs(want)) + 0.5:
                raise suite.CheckFailed(f"sum gave {got}, float64 reference {want}")
        elif not torch.equal(self.c.cpu(), self.a_cpu + self.b_cpu):
            raise suite.CheckFailed("add differs from CPU")


def probe(dev, n, op, full=True):
    c = Case(dev, n, op)
    c.run(3, 1, "warmup")
    res = {"fresh": c.run(20, 3, "fresh"), "fresh200": c.run(200, 1, "fresh200")}
    c.check()
    if not full:
        return res
    time.sleep(1.0)
    res["idle"] = c.run(20, 3, "idle")
    c.drop()
    c.upload()
    res["realloc"] = c.run(20, 3, "realloc")
    # Which part of a reallocation costs: another upload kept in the cache, or freed with it.
    x = c.a_cpu.to(dev)
    del x
    res["upload_kept"] = c.run(20, 3, "upload_kept")
    x = c.a_cpu.to(dev)
    del x
    suite.synchronize(dev)
    suite.empty_cache(dev)
    res["upload_freed"] = c.run(20, 3, "upload_freed")
    x = torch.empty(n, device=dev).fill_(1.0)
    del x
    suite.synchronize(dev)
    suite.empty_cache(dev)
    res["device_freed"] = c.run(20, 3, "device_freed")
    suite.synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(20):
        c.call()
    rec = time.perf_counter() - t0
    suite.synchronize(dev)
    res["record_us"] = rec / 20 * 1e6
    res["total_us"] = (time.perf_counter() - t0) / 20 * 1e6
    c.check()
    c.drop()
    if dev.type == "webgpu":
        suite.tiny_add_chain(dev)
        suite.empty_cache(dev)
        suite.add_bandwidth(dev, n)
        suite.empty_cache(dev)
        c.upload()
        res["after_rows"] = c.run(20, 6, "after_rows")
        c.check()
    return res


def fmt(xs):
    return " ".join(f"{x:6.0f}" for x in xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--n", type=int, default=26)
    ap.add_argument("--variants", nargs="*", default=[])
    ap.add_argument("--timeline")
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    n = 1 << args.n
    wg = torch.device("webgpu")
    if args.child:
        for op in ("sum", "add"):
            r = probe(wg, n, op, full=False)
            print("CHILD", op, statistics.median(r["fresh"]), r["fresh200"][0])
        c = Case(wg, n, "sum")
        c.run(3, 1, "warmup")
        c.drop()
        c.upload()
        print("CHILD realloc", " ".join(f"{x:.0f}" for x in c.run(20, 3, "realloc")))
        return
    ref = torch.device(args.compare)
    refs = {}
    for op in ("sum", "add"):
        rr = probe(ref, n, op, full=ref.type != "cpu")
        r = probe(wg, n, op)
        refs[op] = rr
        print(f"--- {op}, n = 2^{args.n}, GB/s; windows of 20 calls unless said")
        for k in ("fresh", "fresh200", "idle", "realloc", "upload_kept", "upload_freed", "device_freed", "after_rows"):
            if k in r:
                print(f"{k:12s} webgpu {fmt(r[k]):24s}  {args.compare} {fmt(rr.get(k, []))}")
        print(
            f"record / total us per call: webgpu {r['record_us']:.1f} / {r['total_us']:.1f}"
            + (f"   {args.compare} {rr['record_us']:.1f} / {rr['total_us']:.1f}" if "record_us" in rr else "")
        )
    if args.timeline:
        with open(args.timeline, "w") as f:
            for label, a, b in TIMELINE:
                stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(a)) + f".{int(a % 1 * 1000):03d}"
                f.write(f"{stamp} {(b - a) * 1e3:8.2f} ms {label}\n")
    for v in args.variants:
        env = dict(os.environ)
        for kv in v.split(","):
            k, _, val = kv.partition("=")
            env[k] = val.replace(":", ",")
        out = subprocess.run(
            [sys.executable, __file__, "--child", "--n", str(args.n)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        lines = [ln.split() for ln in out.stdout.splitlines() if ln.startswith("CHILD")]
        realloc = [ln[2:] for ln in lines if ln[1] == "realloc"]
        lines = [ln for ln in lines if ln[1] != "realloc"]
        if len(lines) != 2:
            print(f"variant {v}: failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
            continue
        cells = []
        for _, op, w20, w200 in lines:
            r20 = float(w20) / statistics.median(refs[op]["fresh"])
            r200 = float(w200) / refs[op]["fresh200"][0]
            cells.append(f"{op} {float(w20):5.0f} {float(w200):5.0f} = {r20:.3f}x/{r200:.3f}x")
        print(f"variant {v:36s} " + "   ".join(cells) + f"   realloc {' '.join(realloc[0]) if realloc else '-'}")


if __name__ == "__main__":
    main()
