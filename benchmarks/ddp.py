"""Several GPUs: DDP training throughput and all_reduce bandwidth, webgpu next to CUDA (issue 18).

    python benchmarks/ddp.py --gpus 2 [--compare cuda] [--json OUT.json]

runs each measurement as its own ``torchrun`` job (one process per GPU) and prints a table:

- DDP training of a GPT-2-small-shaped model (examples/gpt.py: 12 layers, d=768, vocab 50257) with
  AdamW, on 1 GPU and on N GPUs with the same per-GPU batch. Throughput is tokens/s over all ranks;
  scaling is N-GPU throughput over 1-GPU throughput (weak scaling, as DDP is usually reported).
- all_reduce of a 100 MB float32 tensor between the N GPUs: bus bandwidth (size / time * 2(N-1)/N,
  the convention of nccl-tests), for our ``"webgpu"`` process group and for NCCL on CUDA.

A job (one rank each) is ``python benchmarks/ddp.py --job train|allreduce --device webgpu|cuda``
under torchrun; rank 0 prints one JSON line starting with ``RESULT``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _setup(device_type: str):
    import torch
    import torch.distributed as dist

    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device_type == "webgpu":
        import torch_webgpu  # noqa: F401

        torch.webgpu.set_device(local)
        dist.init_process_group("webgpu")
    else:
        torch.cuda.set_device(local)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        dist.init_process_group("nccl")
    return torch.device(device_type, local), dist


def _sync(dev):
    import torch

    getattr(torch, dev.type).synchronize()


def job_allreduce(device_type: str, mb: float, iters: int) -> dict:
    import torch

    dev, dist = _setup(device_type)
    n = int(mb * 1e6) // 4
    t = torch.ones(n, device=dev)
    for _ in range(3):
        dist.all_reduce(t)
    _sync(dev)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t)
    _sync(dev)
    sec = (time.perf_counter() - start) / iters
    ws = dist.get_world_size()
    # Every element has been summed 3 + iters times over ws ranks, starting from 1.
    want = float(ws) ** (3 + iters)
    got = t[:8].cpu()
    ok = bool(torch.allclose(got, torch.full_like(got, want), rtol=1e-5))
    bus = n * 4 / sec * 2 * (ws - 1) / ws / 1e9
    # The pieces of a staged collective: device -> host and host -> device copies of the operand.
    host = torch.empty(n, pin_memory=device_type == "cuda")
    _sync(dev)
    start = time.perf_counter()
    for _ in range(3):
        host.copy_(t)
    _sync(dev)
    d2h = (time.perf_counter() - start) / 3
    start = time.perf_counter()
    for _ in range(3):
        t.copy_(host)
    _sync(dev)
    h2d = (time.perf_counter() - start) / 3
    dist.destroy_process_group()
    gbs = lambda sec: n * 4 / sec / 1e9  # noqa: E731
    return {"ms": sec * 1e3, "busbw_GBs": bus, "ok": ok, "world": ws, "d2h_GBs": gbs(d2h), "h2d_GBs": gbs(h2d)}


def job_train(device_type: str, batch: int, seq: int, steps: int, vocab: int = 50257, accum: int = 1) -> dict:
    import torch
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import gpt

    dev, dist = _setup(device_type)
    rank, ws = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = gpt.GPT(vocab, 768, 12, 12, 1024).to(dev)
    model = DDP(model) if ws > 1 else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1 + rank)
    losses = []

    def micro(sync: bool):
        idx = torch.randint(0, vocab, (batch, seq + 1), generator=g).to(dev)
        with contextlib.nullcontext() if sync or ws == 1 else model.no_sync():
            logits = model(idx[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))
            (loss / accum).backward()
        return loss

    def step():
        # `accum` micro-batches per optimizer step; DDP reduces gradients after the last one only.
        for i in range(accum):
            loss = micro(i == accum - 1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss)

    for _ in range(2):
        step()
    _sync(dev)
    if ws > 1:
        dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(dev)
    sec = (time.perf_counter() - start) / steps
    last = float(losses[-1].item())
    if dist.is_initialized():
        dist.destroy_process_group()
    return {"step_ms": sec * 1e3, "tokens_s": batch * seq * accum * ws / sec, "loss": last, "world": ws, "accum": accum}


def run_job(nproc: int, args: list, logs=None, env_extra=None) -> dict:
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}", "--master-port=29511"]
    cmd += [os.path.abspath(__file__)] + args
    env = dict(os.environ, **(env_extra or {}))
    if "webgpu" not in args:
        # PyTorch makes a registered PrivateUse1 backend the current accelerator
        # (torch.accelerator), ahead of CUDA: the CUDA jobs must not load ours.
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if logs:
        os.makedirs(logs, exist_ok=True)
        name = (
            "_".join(a.strip("-") for a in args[:4] + args[-2:])
            + f"_{nproc}{'_'.join([''] + list(env_extra or []))}.log"
        )
        with open(os.path.join(logs, name), "w") as f:
            f.write(p.stdout + "\n--- stderr ---\n" + p.stderr)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    sys.stderr.write(p.stdout[-3000:] + p.stderr[-6000:])
    return {"error": f"exit {p.returncode}"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--job", choices=["train", "allreduce"])
    ap.add_argument("--device", default="webgpu")
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--compare", default=None, help="also measure this device type (cuda)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--accum", default="1", help="micro-batches per optimizer step, e.g. 1,4 (a row each)")
    ap.add_argument("--vocab", type=int, default=50257, help="smaller only for a quick check on a CPU adapter")
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--only", default="train,allreduce")
    ap.add_argument("--json", default=None)
    ap.add_argument("--logs", default=None, help="a folder for each job's output")
    a = ap.parse_args(argv)
    if a.job:
        if a.job == "train":
            r = job_train(a.device, a.batch, a.seq, a.steps, a.vocab, int(a.accum))
        else:
            r = job_allreduce(a.device, a.mb, a.iters)
        if int(os.environ.get("RANK", "0")) == 0:
            print("RESULT " + json.dumps(r), flush=True)
        return 0

    devices = ["webgpu"] + ([a.compare] if a.compare else [])
    out = {"gpus": a.gpus, "batch": a.batch, "seq": a.seq, "vocab": a.vocab, "mb": a.mb}
    for d in devices:
        for accum in (int(x) for x in a.accum.split(",") if "train" in a.only):
            common = ["--job", "train", "--device", d, "--batch", str(a.batch), "--seq", str(a.seq)]
            common += ["--steps", str(a.steps), "--vocab", str(a.vocab), "--accum", str(accum)]
            one = run_job(1, common, a.logs)
            many = run_job(a.gpus, common, a.logs)
            key = f"{d}/train" + (f"/accum{accum}" if accum > 1 else "")
            out[f"{key}/1"] = one
            out[f"{key}/{a.gpus}"] = many
            if "tokens_s" in one and "tokens_s" in many:
                out[f"{key}/scaling"] = many["tokens_s"] / one["tokens_s"]
            print(key, "1 GPU:", one, flush=True)
            print(key, f"{a.gpus} GPUs:", many, "scaling", out.get(f"{key}/scaling"), flush=True)
        if "allreduce" in a.only:
            args = ["--job", "allreduce", "--device", d, "--mb", str(a.mb), "--iters", str(a.iters)]
            r = run_job(a.gpus, args, a.logs)
            out[f"{d}/allreduce"] = r
            print(d, "all_reduce:", r, flush=True)
            if d == "webgpu":  # the same through gloo's sockets instead of shared memory
                r = run_job(a.gpus, args, a.logs, {"TORCH_WEBGPU_DIST_SHM": "0"})
                out[f"{d}/allreduce_gloo"] = r
                print(d, "all_reduce through gloo:", r, flush=True)
    print(json.dumps(out, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
