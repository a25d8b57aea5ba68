"""torch.distributed on webgpu tensors (torch_webgpu/distributed.py): two processes on this machine's
adapter, started by torchrun, check every collective against its definition and train examples/gpt.py's
GPT under DistributedDataParallel against the same model trained alone on the global batch."""

import os
import socket
import subprocess
import sys

import pytest
import torch
import torch.distributed as dist
from webgpu_env import native_env

import torch_webgpu  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
WS = 2


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(mode, backend, tmp, shm=True, imported="1"):
    out = os.path.join(tmp, "r")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc-per-node={WS}",
        "--master-addr=127.0.0.1",
        f"--master-port={_free_port()}",
        os.path.join(HERE, "distributed_worker.py"),
        mode,
        backend,
        out,
    ]
    env = native_env(OMP_NUM_THREADS="1", TORCH_WEBGPU_DIST_SHM="1" if shm else "0", TORCH_WEBGPU_DIST_IMPORT=imported)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-6000:]
    return [torch.load(f"{out}.{r}", weights_only=False) for r in range(WS)]


def test_backend_registered():
    assert "webgpu" in dist.Backend.backend_list
    assert dist.Backend.default_device_backend_map["webgpu"] == "webgpu"


def _imports():
    # Whether this adapter can use host memory as a device buffer (the shared memory's default path).
    return torch_webgpu._C._host_import_alignment() > 0


# all_reduce between ranks of one host goes through shared memory, which the GPU reads and writes
# itself where the adapter can (host-mapped-pointer) or through staging copies
# (TORCH_WEBGPU_DIST_IMPORT=0); TORCH_WEBGPU_DIST_SHM=0 keeps it on gloo's sockets (the path between
# hosts). All three are checked.
@pytest.mark.parametrize(
    "backend,shm,imported", [("webgpu", True, "1"), ("webgpu", True, "0"), ("cpu:gloo,webgpu:webgpu", False, "1")]
)
def test_collectives(backend, shm, imported, tmp_path):
    res = _torchrun("collectives", backend, str(tmp_path), shm, imported)
    assert [r["backend"] for r in res] == [backend] * WS
    assert [r["shm"] for r in res] == [shm] * WS
    assert [r["imported"] for r in res] == [shm and imported == "1" and _imports()] * WS
    for dt in (torch.float32, torch.float16, torch.int64):
        base = (torch.arange(6) + 1).to(dt)
        per_rank = [base * (r + 1) for r in range(WS)]
        want = {
            "SUM": sum(per_rank),
            "MAX": per_rank[-1],
            "MIN": per_rank[0],
            "PRODUCT": per_rank[0] * per_rank[1],
        }
        if dt.is_floating_point:
            want["AVG"] = sum(per_rank) / WS
        big = torch.zeros(4, 6, dtype=dt)
        big[1::2, ::2] = sum(r + 2 for r in range(WS))
        gathered = torch.stack([torch.full((3,), r * 10, dtype=dt) for r in range(WS)])
        flat = torch.cat([torch.full((2,), r + 1, dtype=dt) for r in range(WS)])
        rs_in = sum((torch.arange(2 * WS) + 10 * r).to(dt) for r in range(WS))
        for rank, R in enumerate(res):
            for op, w in want.items():
                torch.testing.assert_close(R[f"all_reduce/{op}/{dt}"], w.to(dt), msg=f"{op} {dt}")
            assert torch.equal(R[f"all_reduce/strided/{dt}"], big)
            assert torch.equal(R[f"broadcast/{dt}"], torch.full((5,), 1 + 7, dtype=dt))
            assert torch.equal(R[f"all_gather/{dt}"], gathered)
            assert torch.equal(R[f"all_gather_into_tensor/{dt}"], flat)
            assert torch.equal(R[f"reduce_scatter_tensor/{dt}"], rs_in[2 * rank : 2 * rank + 2])
            assert torch.equal(R[f"reduce_scatter/{dt}"], torch.full((3,), sum(rank + r for r in range(WS)), dtype=dt))
        assert torch.equal(res[0][f"reduce/{dt}"], torch.full((2,), sum(r + 1 for r in range(WS)), dtype=dt))
    assert torch.equal(res[1]["recv"], torch.tensor([1.5, 2.5]))
    for R in res:
        assert torch.equal(R["cpu_all_reduce"], torch.full((3,), float(sum(range(1, WS + 1)))))
        assert R["all_gather_object"] == [{"rank": r} for r in range(WS)]


@pytest.mark.parametrize(
    "mode,overlap,imported", [("ddp", "1", "1"), ("ddp", "1", "0"), ("ddp", "0", "1"), ("fsdp", "1", "1")]
)
def test_ddp_matches_single_process_training(mode, overlap, imported, tmp_path, monkeypatch):
    # DDP, and FSDP2's fully_shard (sharded parameters: all_gather_into_tensor and
    # reduce_scatter_tensor through the group, on a DeviceMesh of webgpu devices). DDP's bucket
    # all-reduces finish during the rest of the backward pass (TORCH_WEBGPU_DIST_OVERLAP=1, the
    # default) or each before it returns (0); with the shared memory as device buffers or staged.
    monkeypatch.setenv("TORCH_WEBGPU_DIST_OVERLAP", overlap)
    res = _torchrun(mode, "webgpu", str(tmp_path), imported=imported)
    if mode == "ddp":
        assert [R["imported"] for R in res] == [imported == "1" and _imports()] * WS
    r0, r1 = res
    if mode == "ddp":
        started = [R["deferred"][0] for R in res]
        assert started == [0, 0] if overlap == "0" else started[0] == started[1] > 0, started
    # Both ranks hold the same model after every step (DDP's gradient averaging and broadcast).
    for k in r0["params"]:
        assert torch.equal(r0["params"][k], r1["params"][k]), k
    # And it is the model trained alone on the global batch, up to float summation order.
    for k, v in r0["alone_params"].items():
        torch.testing.assert_close(r0["params"][k], v, atol=2e-5, rtol=1e-4, msg=k)
    # The mean of the ranks' losses is the global batch's loss.
    torch.testing.assert_close((r0["losses"] + r1["losses"]) / 2, r0["alone_losses"], atol=1e-5, rtol=1e-5)
    assert r0["losses"][-1] < r0["losses"][0]


def test_group_released_at_destroy(tmp_path):
    # The private gloo group is destroyed at destroy_process_group (its worker threads joined while
    # Python is alive: a finished Work they still held, destroyed during interpreter finalization,
    # aborted the process); a later collective on the old group raises a clear error.
    code = f"""
import torch, torch.distributed as dist, torch_webgpu
store = dist.FileStore({str(tmp_path / "store")!r}, 1)
dist.init_process_group("webgpu", store=store, rank=0, world_size=1)
pg = dist.group.WORLD
objs = [None]
dist.all_gather_object(objs, {{"rank": 0}})
t = torch.ones(3, device="webgpu")
dist.all_reduce(t)
dist.barrier()
assert objs == [{{"rank": 0}}] and t.cpu().tolist() == [1.0, 1.0, 1.0]
grp = torch_webgpu.distributed._LAST
dist.destroy_process_group()
try:
    grp.allreduce([t])
except RuntimeError as e:
    assert "destroy_process_group" in str(e), e
else:
    raise AssertionError("a collective on a destroyed group ran")
# A second group in the same process, left for exit to release (no destroy_process_group).
dist.init_process_group("webgpu", store=dist.FileStore({str(tmp_path / "store2")!r}, 1), rank=0, world_size=1)
dist.all_gather_object(objs, {{"again": 1}})
dist.barrier()
print("done")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=native_env())
    assert p.returncode == 0 and "done" in p.stdout, p.stdout[-2000:] + p.stderr[-4000:]
