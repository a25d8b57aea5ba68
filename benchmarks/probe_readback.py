"""Where a device -> host copy spends its time: for a few sizes, the wall time of ``t.cpu()`` and
``host.copy_(t)``, split by the Stream's counters into waiting (flush, GPU copy into the staging
buffer, map) and copying out of the mapped staging buffer; and host -> device for comparison.

    python benchmarks/probe_readback.py
"""

import time

import torch

import torch_webgpu  # noqa: F401


def counters():
    return torch.webgpu.stream_counters()


def main():
    dev = torch.device("webgpu")
    for mb in (1, 16, 100, 400):
        n = mb * (1 << 20) // 4
        t = torch.ones(n, device=dev)
        host = torch.empty(n)
        torch.webgpu.synchronize()
        host.copy_(t)  # the staging buffer exists from here on
        reps = 3
        c0 = counters()
        start = time.perf_counter()
        for _ in range(reps):
            host.copy_(t)
        wall = (time.perf_counter() - start) / reps
        c1 = counters()
        d = {k: (c1[k] - c0[k]) / reps for k in ("readbacks", "readback_bytes", "readback_wait_ns", "readback_copy_ns")}
        start = time.perf_counter()
        for _ in range(reps):
            t.copy_(host)
        torch.webgpu.synchronize()
        up = (time.perf_counter() - start) / reps
        gb = n * 4 / 1e9
        print(
            f"{mb:4d} MB  d2h {gb / wall:6.2f} GB/s ({wall * 1e3:7.2f} ms: wait {d['readback_wait_ns'] / 1e6:7.2f} ms, "
            f"memcpy {d['readback_copy_ns'] / 1e6:7.2f} ms, {d['readbacks']:.0f} readbacks)  h2d {gb / up:6.2f} GB/s",
            flush=True,
        )


if __name__ == "__main__":
    main()
