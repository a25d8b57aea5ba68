"""Several webgpu devices in one process: `webgpu:N` per adapter (Dawn's enumeration), chosen and
ordered by TORCH_WEBGPU_VISIBLE_DEVICES. CI's machine has one adapter, so these tests make two
devices on it ("0,0": two WGPUDevices, which share no memory, exactly like two GPUs) in a
subprocess, since the adapter list is read once per process."""

import subprocess
import sys
import textwrap

import pytest
import torch
from webgpu_env import native_env

import torch_webgpu  # noqa: F401

TWO_DEVICES = textwrap.dedent(r"""
    import torch, torch_webgpu
    import torch.nn.functional as F

    assert torch.webgpu.device_count() == 2, torch.webgpu.device_count()
    assert torch.accelerator.device_count() == 2
    g = torch.Generator().manual_seed(0)
    c = torch.randn(5, 7, generator=g)

    # Placement and ops on the second device.
    x = c.to("webgpu:1")
    assert x.device == torch.device("webgpu", 1), x.device
    y = (x * 2 + 1).relu().sum(1)
    assert y.device.index == 1
    torch.testing.assert_close(y.cpu(), (c * 2 + 1).relu().sum(1))

    # Copies between devices: contiguous, strided source and destination, with a dtype change.
    z = x.to("webgpu:0")
    assert z.device.index == 0 and torch.equal(z.cpu(), c)
    assert torch.equal(x[::2, 1:].to("webgpu:0").cpu(), c[::2, 1:])
    assert torch.equal(x.to("webgpu:0", torch.float16).cpu(), c.half())
    dst = torch.zeros(7, 5, device="webgpu:0")
    dst.t().copy_(x)
    assert torch.equal(dst.cpu(), c.t())
    i = torch.arange(10, device="webgpu:0")
    assert torch.equal(i.to("webgpu:1").cpu(), torch.arange(10))

    # Copies of 1 MiB and more go through host memory both devices use as a buffer, where the
    # adapter can (host-mapped-pointer), in 32 MiB chunks: several chunks, storage offsets at both
    # ends, sub-word dtypes, a strided source, into a view.
    for dt, n in [(torch.float32, (40 << 20) // 4 + 5), (torch.float16, (1 << 20) + 6), (torch.uint8, 3 << 20)]:
        h = (torch.randn(n, generator=g) * 50).to(dt)
        d0 = h.to("webgpu:0")
        for src, want in [(d0, h), (d0[2:], h[2:]), (d0[4:], h[4:])]:
            assert torch.equal(src.to("webgpu:1").cpu(), want), (dt, n)
        into = torch.zeros(n + 4, dtype=dt, device="webgpu:1")
        into[4:].copy_(d0)
        assert torch.equal(into.cpu(), torch.cat([torch.zeros(4, dtype=dt), h]))
    wide = torch.randn(1024, 512, generator=g)
    assert torch.equal(wide.to("webgpu:1").t().to("webgpu:0").cpu(), wide.t())

    # Current device: context manager, set_device, factories without an index.
    assert torch.webgpu.current_device() == 0
    with torch.webgpu.device(1):
        assert torch.webgpu.current_device() == 1
        assert torch.ones(3, device="webgpu").device.index == 1
    assert torch.webgpu.current_device() == 0
    torch.webgpu.set_device(1)
    assert torch.empty(2, device="webgpu").device.index == 1
    torch.webgpu.set_device(0)

    # Memory is counted per device.
    before = torch.webgpu.memory_allocated(0)
    big = torch.empty(1 << 20, device="webgpu:1")
    assert torch.webgpu.memory_allocated(1) >= 4 << 20
    assert torch.webgpu.memory_allocated(0) == before
    del big

    # A module on device 1, forward and backward, against CPU.
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(7, 4), torch.nn.GELU(), torch.nn.Linear(4, 2))
    mw = torch.nn.Sequential(torch.nn.Linear(7, 4), torch.nn.GELU(), torch.nn.Linear(4, 2))
    mw.load_state_dict(m.state_dict())
    mw.to("webgpu:1")
    assert all(p.device.index == 1 for p in mw.parameters())
    m(c).square().sum().backward()
    mw(x).square().sum().backward()
    for p, q in zip(m.parameters(), mw.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-5, rtol=1e-5)

    # Operands on two devices are refused, as CUDA refuses them.
    a0, a1 = torch.ones(3, 3, device="webgpu:0"), torch.ones(3, 3, device="webgpu:1")
    for name, f in [("add", lambda: a0 + a1), ("mm", lambda: a0 @ a1), ("cat", lambda: torch.cat([a0, a1])),
                    ("index_select", lambda: a0.index_select(0, torch.tensor([0], device="webgpu:1"))),
                    ("where", lambda: torch.where(a0 > 0, a0, a1)), ("copy_", lambda: a0.add_(a1))]:
        try:
            f()
        except RuntimeError as e:
            assert "device" in str(e), (name, e)
        else:
            raise AssertionError(name + " accepted operands on two devices")

    # Both devices stay usable, and synchronize takes either.
    torch.webgpu.synchronize(0)
    torch.webgpu.synchronize(1)
    assert torch.webgpu.info(1)["adapter"] == torch.webgpu.info(0)["adapter"]
    try:
        torch.ones(1, device="webgpu:2")
    except RuntimeError as e:
        assert "webgpu" in str(e), e
    else:
        raise AssertionError("webgpu:2 accepted")
    print("OK")
""")


def _run(code, visible, **extra):
    env = native_env(TORCH_WEBGPU_VISIBLE_DEVICES=visible, **extra)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)


# Copies between devices through imported host memory (the default where the adapter can) and
# through a CPU tensor (TORCH_WEBGPU_PEER_BOUNCE=0, the path of adapters that cannot).
@pytest.mark.parametrize("bounce", ["1", "0"])
def test_two_devices_on_one_adapter(bounce):
    p = _run(TWO_DEVICES, "0,0", TORCH_WEBGPU_PEER_BOUNCE=bounce)
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout[-2000:] + p.stderr[-4000:]


def test_visible_devices_selects_and_hides():
    code = "import torch, torch_webgpu; print(torch.webgpu.device_count(), torch.webgpu.is_available())"
    n = torch.webgpu.device_count()
    p = _run(code, "0")
    assert p.returncode == 0 and p.stdout.split() == ["1", "True"], p.stderr
    # Like CUDA_VISIBLE_DEVICES: the list ends at the first index that names no adapter.
    p = _run(code, f"0,{n + 5},0")
    assert p.returncode == 0 and p.stdout.split() == ["1", "True"], p.stderr
    p = _run(code, str(n + 5))
    assert p.returncode == 0 and p.stdout.split() == ["0", "False"], p.stderr
    p = _run("import torch, torch_webgpu; torch.ones(1, device='webgpu')", str(n + 5))
    assert p.returncode != 0 and "TORCH_WEBGPU_VISIBLE_DEVICES" in p.stderr, p.stderr[-2000:]


def test_every_adapter_is_a_device():
    # Without the variable, every adapter Dawn enumerates (GPUs first; a CPU adapter only when no GPU
    # is present), each a device; info() names it.
    n = torch.webgpu.device_count()
    assert n >= 1
    names = [torch.webgpu.info(i)["adapter"] for i in range(n)]
    assert all(names)
    types = [torch.webgpu.info(i)["adapter_type"] for i in range(n)]
    if any(t != "cpu" for t in types):
        assert "cpu" not in types
