"""Generates docs/ops.md, the op support table, from a real run of the OpInfo harness.

Every op_db entry, every webgpu dtype: its samples run on CPU and on webgpu with the fallback off
(tests/opinfo_support.py), in every variant the entry has (function, noncontiguous, in-place, out=,
gradients).
Entries run in a worker process; one that hangs past --timeout or crashes the worker is recorded as
such and the worker restarts at the next entry.

Usage (from outside the source tree, against the installed package):
    python /path/to/repo/tools/gen_ops_md.py [--samples 2] [--timeout 120] [--out docs/ops.md]
"""

import argparse
import collections
import datetime
import json
import os
import queue
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, "tests")

SYMBOL = {
    "pass": "✓",
    "fail": "✗",
    "partial": "◐",
    "fallback": "CPU",
    "unsupported": "—",
    "n/a": "·",
    "timeout": "⏱",
    "crash": "💥",
}
LEGEND = [
    ("✓", "native: every sample of every variant ran on webgpu kernels and matched CPU"),
    ("✗", "native and failing: some variant gives a wrong result or error (✗* is listed in tests/known_failures.py)"),
    ("◐", "partial: some samples ran natively and matched, others reached an operator with no webgpu kernel"),
    ("CPU", "no webgpu kernel: runs through the CPU fallback (an error with TORCH_WEBGPU_FALLBACK=0)"),
    ("—", "unsupported dtype: the op itself does not support this dtype (on CPU)"),
    ("·", "not measured: no sample applies on webgpu (e.g. each needs float64), or OpInfo skips the comparison"),
    ("⏱ / 💥", "the entry timed out / crashed the worker"),
]


# ---- worker: runs entries from --start, one JSON line each ----------------------------------------


def worker(start, samples):
    sys.path.insert(0, TESTS)
    import warnings

    warnings.simplefilter("ignore")
    import opinfo_support as H
    import torch  # noqa: F401

    for index, op in enumerate(H.entries()):
        if index < start:
            continue
        name = H.full_name(op)
        print(json.dumps({"index": index, "name": name, "started": True}), flush=True)
        cells = {}
        cpu_dtypes = op.supported_dtypes("cpu")
        for dtype in H.ALL_DTYPES:
            dn = H.dtype_name(dtype)
            if dtype not in cpu_dtypes:
                cells[dn] = {"status": "unsupported"}
                continue
            variants, fallback_ops, failures, skipped = {}, set(), [], None
            for variant in H.VARIANTS:
                r = H.run_variant(op, dtype, variant, max_samples=samples)
                if r.skip_reason and variant == "op":
                    skipped = r.skip_reason
                if r.skip_reason and variant != "op":
                    continue
                variants[variant] = r.status if not r.skip_reason else "n/a"
                fallback_ops.update(r.fallback_ops() or [k.split(": ", 1)[-1][:60] for k in r.fallback])
                failures += [f"{variant}: {f.splitlines()[0][:300]}" for f in r.failures]
                if variant == "op" and not r.native:
                    break  # not native for this dtype: the other variants reach the same missing kernel
            cells[dn] = {
                "status": combine(variants),
                "variants": variants,
                "fallback_ops": sorted(fallback_ops),
                "failures": failures[:2],
                "skipped": skipped,
                "known": H.known_failure(name, dn, "*") or any(H.known_failure(name, dn, v) for v in variants),
            }
        errors = "n/a"
        if any(c["status"] in ("pass", "fail", "partial") for c in cells.values()):
            errors = H.run_errors(op).status
        print(json.dumps({"index": index, "name": name, "cells": cells, "errors": errors}), flush=True)


def combine(variants):
    """One status for a (entry, dtype) cell from its variants' statuses."""
    s = set(variants.values())
    for status in ("fail", "partial"):
        if status in s:
            return status
    if "pass" in s:
        return "pass"
    if "fallback" in s:
        return "fallback"
    return "n/a"


# ---- parent: drives workers with a per-entry timeout, writes the table -----------------------------


def run_all(samples, timeout, limit=None):
    results, start = {}, 0
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--start", str(start), "--samples", str(samples)]
        env = dict(os.environ, TORCH_WEBGPU_FALLBACK="0")
        p = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=os.path.dirname(REPO)
        )  # never the repo root: its torch_webgpu/ would shadow
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in p.stdout] + [lines.put(None)], daemon=True).start()
        current, finished = None, False
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                p.kill()
                results[current["index"]] = {**current, "cells": {}, "errors": "timeout", "broken": "timeout"}
                print(f"  {current['name']}: timed out after {timeout}s", file=sys.stderr)
                start = current["index"] + 1
                break
            if line is None:
                p.wait()
                if current is not None and current["index"] not in results:
                    results[current["index"]] = {**current, "cells": {}, "errors": "crash", "broken": "crash"}
                    print(f"  {current['name']}: crashed the worker (rc {p.returncode})", file=sys.stderr)
                    start = current["index"] + 1
                else:
                    finished = True
                break
            if not line.startswith("{"):
                continue  # something a sample function printed
            rec = json.loads(line)
            if rec.get("started"):
                current = rec
                if limit is not None and rec["index"] >= limit:
                    p.kill()
                    finished = True
                    break
                continue
            results[rec["index"]] = rec
            if len(results) % 50 == 0:
                print(f"  {len(results)} entries", file=sys.stderr)
        if finished:
            return [results[i] for i in sorted(results)]


def git_describe():
    try:
        head = subprocess.run(
            ["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        return "unknown"


def render(results, samples, elapsed, commit=None):
    import torch

    import torch_webgpu  # noqa: F401

    sys.path.insert(0, TESTS)
    import opinfo_support as H

    info = torch.webgpu.info()
    dtypes = [H.dtype_name(d) for d in H.ALL_DTYPES]
    short = {
        "float32": "f32",
        "float16": "f16",
        "bfloat16": "bf16",
        "int64": "i64",
        "int32": "i32",
        "int16": "i16",
        "int8": "i8",
        "uint8": "u8",
        "bool": "bool",
        "float64": "f64",
        "uint16": "u16",
        "uint32": "u32",
        "uint64": "u64",
        "float8_e4m3fn": "e4m3",
        "float8_e5m2": "e5m2",
        "float8_e4m3fnuz": "e4m3z",
        "float8_e5m2fnuz": "e5m2z",
        "complex64": "c64",
    }
    short = {d: short.get(d, d) for d in dtypes}  # a dtype without an abbreviation keeps its name

    cell_counts = collections.Counter()
    per_dtype = {d: collections.Counter() for d in dtypes}
    entry_counts = collections.Counter()
    rows = []
    for rec in results:
        statuses = []
        notes = []
        cells = []
        if rec.get("broken"):
            cells = [SYMBOL[rec["broken"]]] * len(dtypes)
            entry_counts[rec["broken"]] += 1
            rows.append(f"| `{rec['name']}` | " + " | ".join(cells) + f" | {SYMBOL[rec['broken']]} | {rec['broken']} |")
            continue
        fallback_ops, failing, skipped = set(), [], set()
        for d in dtypes:
            c = rec["cells"][d]
            st = c["status"]
            statuses.append(st)
            cell_counts[st] += 1
            per_dtype[d][st] += 1
            sym = SYMBOL[st] + ("*" if st == "fail" and c.get("known") else "")
            cells.append(sym)
            if st in ("fallback", "partial"):
                fallback_ops.update(c.get("fallback_ops", []))
            if st == "n/a" and c.get("skipped"):
                skipped.add("not compared: " + c["skipped"].replace(f" for {rec['name']}", ""))
            if st == "fail":
                bad = [v for v, s in c["variants"].items() if s == "fail"]
                failing.append(f"{short[d]}: {'/'.join(bad)}")
        if "fail" in statuses:
            entry_counts["native, failing"] += 1
        elif "pass" in statuses:
            entry_counts["native, passing"] += 1
        elif "partial" in statuses:
            entry_counts["partial"] += 1
        elif "fallback" in statuses:
            entry_counts["fallback"] += 1
        else:
            entry_counts["not measured"] += 1
        if failing:
            notes.append("fails " + "; ".join(failing))
        if fallback_ops:
            ops = sorted(fallback_ops)
            notes.append("needs " + ", ".join(f"`{o}`" for o in ops[:4]) + (" …" if len(ops) > 4 else ""))
        notes += sorted(skipped)
        err = {"pass": "✓", "fail": "✗", "partial": "✓", "fallback": "CPU", "n/a": "·"}.get(
            rec["errors"], rec["errors"]
        )
        rows.append(f"| `{rec['name']}` | " + " | ".join(cells) + f" | {err} | {'; '.join(notes)} |")

    out = []
    out.append("# Op support")
    out.append("")
    out.append(
        "Generated by `tools/gen_ops_md.py` from a real run of the OpInfo harness "
        "(`tests/opinfo_support.py`); do not edit by hand. Regenerate it in each change that adds ops."
    )
    out.append("")
    out.append(
        f"- Run: {datetime.date.today().isoformat()}, commit {commit or git_describe()}, torch {torch.__version__}, "
        f"adapter {info.get('adapter', '?')} ({info.get('backend', '?')}), {elapsed / 60:.1f} min."
    )
    out.append(
        f"- Bounded: at most {samples} sample{'s' if samples != 1 else ''} (spread over OpInfo's `sample_inputs`) per entry, dtype and "
        "variant, all with the CPU fallback off. The CI sweep (`tests/test_opinfo.py`) runs more samples on "
        "fewer dtypes, and `TORCH_WEBGPU_OPINFO=full` runs every reference sample: a ✓ here is evidence, "
        "not proof."
    )
    out.append(
        "- Variants: the function, its noncontiguous samples, the in-place variant, `out=` and gradients "
        "(floating dtypes with autograd) where the entry has them; `errors`: the entry's error inputs raise "
        "the CPU's exception type (checked for entries native in some dtype)."
    )
    out.append("")
    out.append("## Totals")
    out.append("")
    out.append(f"{len(results)} OpInfo entries.")
    out.append("")
    out.append("| entries | count |")
    out.append("| --- | --- |")
    for k in ("native, passing", "native, failing", "partial", "fallback", "not measured", "timeout", "crash"):
        if entry_counts[k]:
            out.append(f"| {k} | {entry_counts[k]} |")
    out.append("")
    out.append("An entry counts as native, passing when some dtype is ✓ and none is ✗.")
    out.append("")
    out.append("| (entry, dtype) cells | " + " | ".join(short[d] for d in dtypes) + " | all |")
    out.append("| --- |" + " --- |" * (len(dtypes) + 1))
    for st in ("pass", "fail", "partial", "fallback", "n/a", "unsupported"):
        out.append(
            f"| {SYMBOL[st]} {st} | " + " | ".join(str(per_dtype[d][st]) for d in dtypes) + f" | {cell_counts[st]} |"
        )
    out.append("")
    out.append("## Legend")
    out.append("")
    for sym, text in LEGEND:
        out.append(f"- {sym}: {text}")
    out.append("")
    out.append("## Entries")
    out.append("")
    out.append("| entry | " + " | ".join(short[d] for d in dtypes) + " | errors | notes |")
    out.append("| --- |" + " :-: |" * (len(dtypes) + 1) + " --- |")
    out.extend(rows)
    out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=2, help="samples per (entry, dtype, variant)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds one entry may take")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "ops.md"))
    ap.add_argument("--limit", type=int, default=None, help="only the first N entries (a quick look)")
    ap.add_argument("--json", default=None, help="also write the raw results here")
    ap.add_argument(
        "--commit",
        default=None,
        help="the commit the installed build was made from (default: "
        "this checkout's HEAD, marked when the tree has uncommitted changes)",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.start, args.samples)
        return
    t0 = time.time()
    results = run_all(args.samples, args.timeout, args.limit)
    text = render(results, args.samples, time.time() - t0, args.commit)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(f"wrote {args.out}: {len(results)} entries in {time.time() - t0:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
