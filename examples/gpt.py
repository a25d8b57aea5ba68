"""A GPT-style decoder (token + position embeddings, pre-LayerNorm blocks of causal self-attention
and a GELU MLP, tied output head) in plain torch.nn, used by tests/test_models.py and the GPT-2-shape
benchmark. Training a tiny one on `webgpu` for a few Adam steps:

    python examples/gpt.py [--steps N] [--device webgpu]
"""

import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab: int = 50257, d: int = 768, heads: int = 12, layers: int = 12, ctx: int = 1024):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        for e in (self.tok, self.pos):
            nn.init.normal_(e.weight, std=0.02)  # GPT-2's initialisation: logits start near zero

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.tok.weight.t()  # tied head


def train_steps(
    device,
    steps: int = 15,
    vocab: int = 97,
    d: int = 64,
    heads: int = 4,
    layers: int = 2,
    ctx: int = 32,
    batch: int = 4,
    lr: float = 3e-3,
    seed: int = 0,
    progress: bool = False,
):
    """Adam steps on two fixed random token batches from a seeded CPU initialisation; returns the losses."""
    from tqdm import tqdm

    torch.manual_seed(seed)
    model = GPT(vocab, d, heads, layers, ctx).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed + 1)
    data = torch.randint(0, vocab, (2, batch, ctx + 1), generator=g)  # two batches, alternating
    losses = []
    for s in tqdm(range(steps), desc=f"train on {device}", unit="step", disable=not progress):
        x, y = data[s % 2, :, :-1].to(device), data[s % 2, :, 1:].to(device)
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main(argv=None) -> int:
    import torch_webgpu  # noqa: F401

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--device", default="webgpu")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    losses = train_steps(a.device, a.steps, progress=True)
    print(
        f"{a.device}: {a.steps} Adam steps in {time.perf_counter() - t0:.1f} s; losses "
        + " ".join(f"{v:.4f}" for v in losses)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
