"""One rank of tests/test_distributed.py, started by torchrun (python -m torch.distributed.run).

    distributed_worker.py collectives BACKEND OUT   checks every collective on webgpu (and CPU) tensors
    distributed_worker.py ddp BACKEND OUT           DDP training of examples/gpt.py's GPT; rank 0 also
                                                    trains the same model alone on the global batch
    distributed_worker.py fsdp BACKEND OUT          the same with FSDP2 (fully_shard per block and model)

Each rank writes OUT.<rank> (a torch.save'd dict) for the test to compare.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))


def collectives(rank, ws):
    R = {}
    for dt in (torch.float32, torch.float16, torch.int64):
        base = (torch.arange(6) + 1).to(dt)
        for op in ("SUM", "MAX", "MIN", "PRODUCT") + (("AVG",) if dt.is_floating_point else ()):
            t = (base * (rank + 1)).to(DEV)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            R[f"all_reduce/{op}/{dt}"] = t.cpu()
        # A strided view of a larger tensor: only the view's elements take part.
        big = torch.zeros(4, 6, dtype=dt, device=DEV)
        view = big[1::2, ::2]
        view.copy_(torch.full((2, 3), rank + 2, dtype=dt))
        dist.all_reduce(view)
        R[f"all_reduce/strided/{dt}"] = big.cpu()
        b = torch.full((5,), rank + 7, dtype=dt, device=DEV)
        dist.broadcast(b, src=1)
        R[f"broadcast/{dt}"] = b.cpu()
        outs = [torch.empty(3, dtype=dt, device=DEV) for _ in range(ws)]
        dist.all_gather(outs, torch.full((3,), rank * 10, dtype=dt, device=DEV))
        R[f"all_gather/{dt}"] = torch.stack([o.cpu() for o in outs])
        flat = torch.empty(ws * 2, dtype=dt, device=DEV)
        dist.all_gather_into_tensor(flat, torch.full((2,), rank + 1, dtype=dt, device=DEV))
        R[f"all_gather_into_tensor/{dt}"] = flat.cpu()
        rs = torch.empty(2, dtype=dt, device=DEV)
        dist.reduce_scatter_tensor(rs, (torch.arange(2 * ws) + 10 * rank).to(dt).to(DEV))
        R[f"reduce_scatter_tensor/{dt}"] = rs.cpu()
        rsl = torch.empty(3, dtype=dt, device=DEV)
        dist.reduce_scatter(rsl, [torch.full((3,), r + rank, dtype=dt, device=DEV) for r in range(ws)])
        R[f"reduce_scatter/{dt}"] = rsl.cpu()
        red = torch.full((2,), rank + 1, dtype=dt, device=DEV)
        dist.reduce(red, dst=0)
        if rank == 0:
            R[f"reduce/{dt}"] = red.cpu()
    # Point to point.
    if rank == 0:
        dist.send(torch.tensor([1.5, 2.5], device=DEV), dst=1)
    else:
        r = torch.zeros(2, device=DEV)
        dist.recv(r, src=0)
        R["recv"] = r.cpu()
    # CPU tensors in the same group.
    c = torch.ones(3) * (rank + 1)
    dist.all_reduce(c)
    R["cpu_all_reduce"] = c
    # Objects (pickled through tensors on the group's device).
    objs = [None] * ws
    dist.all_gather_object(objs, {"rank": rank})
    R["all_gather_object"] = objs
    dist.barrier()
    return R


def ddp(rank, ws, fsdp=False):
    """DDP (or FSDP2's fully_shard when `fsdp`) training of examples/gpt.py's GPT; rank 0 also
    trains the same model alone on the global batch."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
    from gpt import GPT
    from torch.nn.parallel import DistributedDataParallel as DDP

    vocab, d, heads, layers, ctx, per_rank, steps = 61, 32, 2, 2, 16, 2, 4
    g = torch.Generator().manual_seed(1)
    data = torch.randint(0, vocab, (steps, ws * per_rank, ctx + 1), generator=g)

    def run(model, opt, rows):
        losses = []
        for s in range(steps):
            batch = data[s, rows]
            x, y = batch[:, :-1].to(DEV), batch[:, 1:].to(DEV)
            loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses).cpu()

    # SGD, not Adam: Adam divides by the gradient's own size, so the gradient of the key bias
    # (zero in exact arithmetic: softmax ignores a per-row shift) would turn summation-order noise
    # into full-size steps, in DDP and alone alike but differently.
    torch.manual_seed(0)
    model = GPT(vocab, d, heads, layers, ctx).to(DEV)
    if fsdp:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(DEV, (ws,))
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        wrapped = fully_shard(model, mesh=mesh)
    else:
        wrapped = DDP(model, bucket_cap_mb=0.05)  # several buckets
    opt = torch.optim.SGD(wrapped.parameters(), lr=0.1, momentum=0.9)
    losses = run(wrapped, opt, slice(rank * per_rank, (rank + 1) * per_rank))
    # FSDP2 holds a shard per rank (DTensors): gather the full parameters to compare.
    full = {k: (v.full_tensor() if hasattr(v, "full_tensor") else v) for k, v in model.state_dict().items()}
    R = {"losses": losses, "params": {k: v.detach().cpu() for k, v in full.items()}}
    if rank == 0:
        torch.manual_seed(0)
        alone = GPT(vocab, d, heads, layers, ctx).to(DEV)
        opt1 = torch.optim.SGD(alone.parameters(), lr=0.1, momentum=0.9)
        R["alone_losses"] = run(alone, opt1, slice(0, ws * per_rank))
        R["alone_params"] = {k: v.detach().cpu() for k, v in alone.state_dict().items()}
    dist.barrier()
    return R


def main():
    mode, backend, out = sys.argv[1:4]
    dist.init_process_group(backend)
    rank, ws = dist.get_rank(), dist.get_world_size()
    torch.webgpu.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.webgpu.device_count())
    R = collectives(rank, ws) if mode == "collectives" else ddp(rank, ws, fsdp=mode == "fsdp")
    R["backend"] = dist.get_backend()
    # Which transport the webgpu group's all_reduce took: shared memory or gloo's sockets.
    R["shm"] = torch_webgpu.distributed._LAST._shm is not None
    # Whether the shared memory served as device buffers (host-mapped-pointer) or went through staging.
    R["imported"] = (
        torch_webgpu.distributed._LAST._shm is not None
        and torch_webgpu.distributed._LAST._shm._imports.get(
            torch.device("webgpu", torch.webgpu.current_device()), False
        )
    )
    # How many all-reduces were deferred into the backward pass (DDP's buckets), and how many of
    # those finished at a later bucket's call rather than at the end of the pass.
    deferred = torch_webgpu.distributed._LAST._deferred
    R["deferred"] = (deferred.started, deferred.ready_early) if deferred is not None else (0, 0)
    torch.save(R, f"{out}.{rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
