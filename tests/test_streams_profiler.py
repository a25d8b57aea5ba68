# Issue 14, "the first hour of a PyTorch user": streams and events (torch.Stream, torch.Event,
# torch.accelerator, torch.webgpu.*), lazy initialisation, RNG state of all devices, pinned memory
# and the profiler's GPU kernel times.
import json
import os
import subprocess
import sys

import pytest
import torch
from webgpu_env import DEV as DEVICE

import torch_webgpu  # noqa: F401


def _has_timestamps():
    return "timestamp-query" in torch_webgpu.info()["features"]


def _run(code):
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


# ---- 1. streams and events ----------------------------------------------------------------------


def test_torch_stream_and_event_on_webgpu():
    s = torch.Stream(device=DEVICE)
    assert s.device.type == DEVICE
    x = torch.randn(256, 256)
    with torch.webgpu.stream(s):
        assert torch.webgpu.current_stream() == s
        assert torch.accelerator.current_stream() == s
        y = (x.to(DEVICE) @ x.to(DEVICE)).relu()
        e = torch.Event(device=DEVICE)
        e.record()
    assert torch.webgpu.current_stream() == torch.webgpu.default_stream()
    e.synchronize()
    assert e.query()
    assert s.query()
    s.synchronize()
    torch.testing.assert_close(y.cpu(), (x @ x).relu(), rtol=1e-4, atol=1e-4)


def test_event_elapsed_time_from_gpu_timestamps():
    if not _has_timestamps():
        pytest.skip("adapter has no timestamp-query")
    a = torch.randn(512, 512, device=DEVICE)
    start, end = torch.Event(device=DEVICE, enable_timing=True), torch.Event(device=DEVICE, enable_timing=True)
    start.record()
    for _ in range(5):
        a = a @ a
        a = a / a.norm()
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert 0.0 < ms < 60_000.0
    # Back to back: a small interval, not negative.
    e1, e2 = torch.webgpu.Event(enable_timing=True), torch.webgpu.Event(enable_timing=True)
    e1.record()
    e2.record()
    e2.synchronize()
    assert isinstance(e1, torch.webgpu.Event) and not isinstance(torch.Event(device="cpu"), torch.webgpu.Event)
    assert 0.0 <= e1.elapsed_time(e2) < ms


def test_elapsed_time_needs_timing_events():
    e1, e2 = torch.Event(device=DEVICE), torch.Event(device=DEVICE)
    e1.record()
    e2.record()
    with pytest.raises((RuntimeError, ValueError), match="enable_timing"):
        e1.elapsed_time(e2)


def test_torch_webgpu_stream_api():
    s1, s2 = torch.webgpu.Stream(), torch.webgpu.Stream()
    assert isinstance(s1, torch.Stream) and isinstance(s1, torch.webgpu.Stream) and s1 != s2
    assert s1.device == torch.device(DEVICE, 0)
    x = torch.ones(1000, device=DEVICE)
    with torch.webgpu.stream(s1):
        y = x * 2
        ev = s1.record_event()
    assert isinstance(ev, torch.Event)
    s2.wait_event(ev)
    s2.wait_stream(s1)
    torch.webgpu.current_stream().wait_stream(s2)
    with torch.webgpu.stream(s2):
        z = y + 1
    assert torch.equal(z.cpu(), torch.full((1000,), 3.0))
    ev2 = torch.webgpu.Event()
    ev2.record(s2)
    ev2.wait()
    ev2.synchronize()
    assert ev2.query()
    torch.webgpu.set_stream(s2)
    assert torch.webgpu.current_stream() == s2
    torch.webgpu.set_stream(torch.webgpu.default_stream())
    assert torch.webgpu.current_stream().stream_id == 0


def test_accelerator_functions():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == DEVICE
    assert torch.accelerator.device_count() == torch.webgpu.device_count() >= 1
    assert torch.accelerator.current_device_index() == 0
    torch.accelerator.set_device_index(0)
    x = torch.randn(64, device=DEVICE) * 3
    torch.accelerator.synchronize()
    s = torch.accelerator.current_stream()
    assert s.device.type == DEVICE
    assert s.query()
    with torch.accelerator.device_index(0):
        assert (x.cpu().abs() >= 0).all()


# ---- 2. lazy initialisation ---------------------------------------------------------------------


def test_import_does_not_open_the_device():
    out = _run(
        "import torch, torch_webgpu\n"
        "print('before', torch.webgpu.is_initialized())\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('driver_loaded', 'libvulkan' in maps or 'lvp' in maps)\n"
        "x = torch.ones(3, device='webgpu') + 1\n"
        "print('after', torch.webgpu.is_initialized(), x.sum().item())\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('driver_loaded_after', 'libvulkan' in maps or 'lvp' in maps)\n"
    )
    assert "before False" in out, out
    assert "driver_loaded False" in out, out
    assert "after True 6.0" in out, out
    assert "driver_loaded_after True" in out, out  # the check above can see a loaded driver


# ---- 3. RNG state of all devices, pinned memory -----------------------------------------------


def test_rng_state_all_roundtrip():
    states = torch.webgpu.get_rng_state_all()
    assert len(states) == torch.webgpu.device_count()
    a = torch.rand(100, device=DEVICE).cpu()
    torch.webgpu.set_rng_state_all(states)
    b = torch.rand(100, device=DEVICE).cpu()
    assert torch.equal(a, b)


def test_pin_memory_and_non_blocking_copy():
    t = torch.arange(10_000, dtype=torch.float32)
    assert not t.is_pinned()
    p = t.pin_memory()
    assert p.is_pinned()
    assert p[10:].is_pinned()  # a view into pinned memory
    assert torch.equal(p, t)
    d = p.to(DEVICE, non_blocking=True)
    p.fill_(-1.0)  # the upload already copied the data
    assert torch.equal(d.cpu(), t)
    back = torch.empty(10_000).pin_memory()
    back.copy_(d, non_blocking=True)
    torch.webgpu.synchronize()
    assert torch.equal(back, t)
    del p
    assert torch.empty(4).pin_memory().is_pinned()
    assert not torch.empty(4).is_pinned()


def test_dataloader_pin_memory_batches_upload_unchanged():
    """A DataLoader with pin_memory=True (batches pinned by its thread) feeding non_blocking
    uploads, as CUDA training loops are written: every batch arrives as it was."""
    data = torch.randn(64, 3, 64, 64, generator=torch.Generator().manual_seed(5))
    ds = torch.utils.data.TensorDataset(data, torch.arange(64))
    loader = torch.utils.data.DataLoader(ds, batch_size=32, pin_memory=True)
    seen = 0
    for x, i in loader:
        assert x.is_pinned()
        xd = x.to(DEVICE, non_blocking=True)
        assert torch.equal(xd.cpu(), data[i])
        seen += len(i)
    assert seen == 64


# ---- 4. the profiler --------------------------------------------------------------------------


def _small_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(DEVICE)


def test_profiler_reports_gpu_kernel_times(tmp_path):
    if not _has_timestamps():
        pytest.skip("adapter has no timestamp-query")
    from torch_webgpu import _C

    if not _C._has_kernel_profiler():
        assert tuple(int(v) for v in torch.__version__.split(".")[:2]) < (2, 12), "profiler missing on torch >= 2.12"
        pytest.skip("torch < 2.12 has no PrivateUse1 profiler registry")
    from torch.profiler import ProfilerActivity, profile

    model = _small_model()
    x = torch.randn(32, 64, device=DEVICE)
    model(x).sum().item()  # compile the kernels outside the profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        for _ in range(3):
            model(x).sum().item()
    events = prof.events()
    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.PrivateUse1]
    assert kernels, "no GPU kernel events"
    assert all(k.device_time_total >= 0 for k in kernels)
    assert sum(k.device_time_total for k in kernels) > 0
    # Kernels hang under the ops that launched them: aten::addmm has device time of its own.
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::addmm"].device_time_total > 0
    table = prof.key_averages().table(sort_by="device_time_total", row_limit=20)
    assert "WEBGPU" in table.upper() or "webgpu" in table
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    data = json.loads(trace.read_text())
    kinds = [ev for ev in data["traceEvents"] if ev.get("cat") == "kernel"]
    assert kinds and all(ev["dur"] >= 0 for ev in kinds)
    names = {k.name for k in kernels}
    assert names & {ev["name"] for ev in kinds}


def test_profiler_cpu_only_times_no_kernels():
    from torch.profiler import ProfilerActivity, profile

    model = _small_model()
    x = torch.randn(8, 64, device=DEVICE)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        model(x).sum().item()
    assert not [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]
    # Timing is off again after the profile: dispatches share one pass.
    torch.webgpu.synchronize()
    torch.webgpu.reset_stream_counters()
    model(x).sum().item()
    assert torch.webgpu.stream_counters()["submits"] <= 3
