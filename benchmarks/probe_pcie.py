"""Host <-> device transfer paths of the WebGPU queue, measured with Dawn alone (wgpudawn's Python
API, no torch_webgpu): copies through map-read / map-write staging buffers, copies to and from host
memory imported as a GPU buffer (Dawn's host-mapped-pointer feature, here on a /dev/shm file as the
shared-memory all-reduce uses), a kernel reading imported host memory directly, and whether a copy
overlaps a compute dispatch recorded next to it on the one queue. With --cuda, CUDA's pinned-memory
copies of the same size for reference.

    python benchmarks/probe_pcie.py [--mib 256] [--reps 5] [--cuda] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import statistics
import time

import wgpudawn as wgpu
from wgpudawn.backends.dawn import extras

S = wgpu.BufferUsage.STORAGE
CS, CD = wgpu.BufferUsage.COPY_SRC, wgpu.BufferUsage.COPY_DST

ADD = """
@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> o: array<vec4f>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let stride = n.x * 256u;
  for (var i = g.x; i < arrayLength(&o); i += stride) { o[i] = a[i] + b[i]; }
}
"""

SPIN = """
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
override ITERS: u32 = 20000u;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u) {
  var x = f32(g.x);
  for (var i = 0u; i < ITERS; i++) { x = fma(x, 0.999999, 1e-7); }
  o[g.x] = x;
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--spin-iters", type=int, default=20000)
    ap.add_argument("--cuda", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    extras.set_instance_extras(enable_toggles=["allow_unsafe_apis"])
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    has_host = "host-mapped-pointer" in adapter.features
    dev = adapter.request_device_sync(required_features=["host-mapped-pointer"] if has_host else [])
    q = dev.queue
    res = {"adapter": adapter.info.get("device", ""), "host_mapped_pointer": has_host}
    n = args.mib << 20

    def compute_pass(pipeline, bind_group, groups):
        def rec(e):
            p = e.begin_compute_pass()
            p.set_pipeline(pipeline)
            p.set_bind_group(0, bind_group)
            p.dispatch_workgroups(groups)
            p.end()

        return rec

    def timed(record, reps=args.reps):
        ts = []
        for _ in range(reps + 1):
            enc = dev.create_command_encoder()
            record(enc)
            cb = enc.finish()
            t0 = time.perf_counter()
            q.submit([cb])
            q.on_submitted_work_done_sync()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts[1:])

    def gbs(t):
        return round(n / t / 1e9, 2)

    a = dev.create_buffer(size=n, usage=S | CS | CD)
    b = dev.create_buffer(size=n, usage=S | CS | CD)
    o = dev.create_buffer(size=n, usage=S | CS | CD)
    rd = dev.create_buffer(size=n, usage=wgpu.BufferUsage.MAP_READ | CD)
    wr = dev.create_buffer(size=n, usage=wgpu.BufferUsage.MAP_WRITE | CS)
    res["d2d copy GB/s"] = gbs(timed(lambda e: e.copy_buffer_to_buffer(a, 0, b, 0, n)))
    res["d2h staging copy GB/s"] = gbs(timed(lambda e: e.copy_buffer_to_buffer(a, 0, rd, 0, n)))
    res["h2d staging copy GB/s"] = gbs(timed(lambda e: e.copy_buffer_to_buffer(wr, 0, a, 0, n)))

    add = dev.create_compute_pipeline(
        layout="auto", compute={"module": dev.create_shader_module(code=ADD), "entry_point": "main"}
    )
    lim = dev.limits["max-storage-buffer-binding-size"]
    span = min(n, lim - lim % 256)

    def add_pass(x, y):
        bg = dev.create_bind_group(
            layout=add.get_bind_group_layout(0),
            entries=[
                {"binding": i, "resource": {"buffer": buf, "offset": 0, "size": span}}
                for i, buf in enumerate((x, y, o))
            ],
        )
        return compute_pass(add, bg, 1024)

    t = timed(add_pass(a, b))
    res["add (device operands) GB/s of one operand"] = round(span / t / 1e9, 2)

    if has_host:
        path = f"/dev/shm/probe_pcie_{os.getpid()}"
        with open(path, "wb") as f:
            f.truncate(n)
        fd = os.open(path, os.O_RDWR)
        mem = mmap.mmap(fd, n)
        os.close(fd)
        os.unlink(path)
        res["host alignment"] = extras.get_host_memory_alignment(dev)
        h = extras.create_buffer_from_host_memory(dev, memoryview(mem), usage=S | CS | CD)
        res["d2h into imported shm GB/s"] = gbs(timed(lambda e: e.copy_buffer_to_buffer(a, 0, h, 0, n)))
        res["h2d from imported shm GB/s"] = gbs(timed(lambda e: e.copy_buffer_to_buffer(h, 0, a, 0, n)))
        t = timed(add_pass(a, h))
        res["add reading imported shm GB/s of the host operand"] = round(span / t / 1e9, 2)
        # correctness of the aliasing: the GPU's write is seen by the host, and the reverse
        mem[:8] = b"\x00" * 8
        q.write_buffer(a, 0, b"abcdefgh")
        enc = dev.create_command_encoder()
        enc.copy_buffer_to_buffer(a, 0, h, 0, 256)
        q.submit([enc.finish()])
        q.on_submitted_work_done_sync()
        res["host sees the GPU's write"] = bytes(mem[:8]) == b"abcdefgh"
        mem[:8] = b"ABCDEFGH"
        enc = dev.create_command_encoder()
        enc.copy_buffer_to_buffer(h, 0, b, 0, 256)
        q.submit([enc.finish()])
        res["GPU sees the host's write"] = bytes(q.read_buffer(b, 0, 8)) == b"ABCDEFGH"

    # Does a copy overlap a compute dispatch on the one queue?
    spin = dev.create_compute_pipeline(
        layout="auto",
        compute={
            "module": dev.create_shader_module(code=SPIN),
            "entry_point": "main",
            "constants": {"ITERS": args.spin_iters},
        },
    )
    so = dev.create_buffer(size=4 << 20, usage=S | CS)
    sbg = dev.create_bind_group(
        layout=spin.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": so}}]
    )
    spin_rec = compute_pass(spin, sbg, 4096)

    def copy_rec(e):
        e.copy_buffer_to_buffer(a, 0, rd, 0, n)

    ts, tc = timed(spin_rec), timed(copy_rec)
    res["overlap: spin ms"] = round(ts * 1e3, 2)
    res["overlap: d2h copy ms"] = round(tc * 1e3, 2)
    res["overlap: spin then copy ms"] = round(timed(lambda e: (spin_rec(e), copy_rec(e))) * 1e3, 2)
    res["overlap: copy then spin ms"] = round(timed(lambda e: (copy_rec(e), spin_rec(e))) * 1e3, 2)
    if has_host:
        hc = lambda e: e.copy_buffer_to_buffer(a, 0, h, 0, n)  # noqa: E731
        res["overlap: d2h imported copy ms"] = round(timed(hc) * 1e3, 2)
        res["overlap: spin then imported copy ms"] = round(timed(lambda e: (spin_rec(e), hc(e))) * 1e3, 2)

    if args.cuda:
        import torch

        x = torch.empty(n, dtype=torch.uint8, device="cuda")
        p = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        for name, fn in (("cuda d2h pinned GB/s", lambda: p.copy_(x)), ("cuda h2d pinned GB/s", lambda: x.copy_(p))):
            ts = []
            for _ in range(args.reps + 1):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                fn()
                torch.cuda.synchronize()
                ts.append(time.perf_counter() - t0)
            res[name] = gbs(statistics.median(ts[1:]))
    for k, v in res.items():
        print(f"{k}: {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
