"""F.ctc_loss on webgpu against CPU (ops/ctc_loss.cpp, wgsl/kernels/ctc.wgsl): padded and
concatenated targets, int64 and int32, input lengths shorter than T and zero, empty targets,
impossible alignments with and without zero_infinity, a non-zero blank, non-contiguous and
unbatched log_probs, every reduction, gradients, and CPU's errors."""

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

TOL = {"rtol": 1e-4, "atol": 1e-4}  # see tests/opinfo_support.py TOLERANCES: a cancellation CPU shares


def _both(lp, targets, il, tl, **kw):
    res = []
    for dev in ("cpu", DEV):
        x = lp.detach().to(dev).requires_grad_()
        mv = lambda v: v.to(dev) if isinstance(v, torch.Tensor) else v  # noqa: E731
        loss = F.ctc_loss(x, mv(targets), mv(il), mv(tl), **kw)
        g = torch.randn(loss.shape, generator=torch.Generator().manual_seed(3)).to(dev)
        (gx,) = torch.autograd.grad(loss, x, g)
        res.append((loss.detach().cpu(), gx.cpu()))
    (l0, g0), (l1, g1) = res
    torch.testing.assert_close(l1, l0, equal_nan=True, **TOL)
    torch.testing.assert_close(g1, g0, equal_nan=True, **TOL)


def _lp(T, B, C, seed=0):
    return torch.randn(T, B, C, generator=torch.Generator().manual_seed(seed)).log_softmax(2)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("target_dtype", [torch.int64, torch.int32])
def test_padded_targets(reduction, target_dtype):
    T, B, C, S = 30, 5, 7, 9
    targets = torch.randint(1, C, (B, S), generator=torch.Generator().manual_seed(1)).to(target_dtype)
    il = torch.tensor([30, 25, 30, 12, 1])
    tl = torch.tensor([9, 4, 0, 5, 1])
    _both(_lp(T, B, C), targets, il, tl, reduction=reduction)
    _both(_lp(T, B, C), targets, il.tolist(), tl.tolist(), reduction=reduction)


def test_concatenated_targets_and_blank():
    T, B, C = 20, 4, 6
    tl = torch.tensor([3, 0, 6, 2])
    targets = torch.randint(0, C - 1, (int(tl.sum()),), generator=torch.Generator().manual_seed(2))
    _both(_lp(T, B, C), targets, torch.full((B,), T), tl, blank=C - 1)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments(zero_infinity):
    # Target longer than the input allows (repeats need blanks between them): infinite loss.
    T, C = 4, 5
    targets = torch.tensor([[1, 1, 1, 2], [1, 2, 0, 0], [3, 3, 0, 0]])
    _both(
        _lp(T, 3, C),
        targets,
        torch.tensor([4, 4, 0]),
        torch.tensor([4, 2, 2]),
        reduction="none",
        zero_infinity=zero_infinity,
    )


def test_noncontiguous_and_unbatched():
    T, B, C, S = 15, 3, 6, 4
    lp = _lp(B, T, C).transpose(0, 1)  # [T, B, C] with batch-major strides
    targets = torch.randint(1, C, (B, S), generator=torch.Generator().manual_seed(4))
    _both(lp, targets, torch.full((B,), T), torch.tensor([4, 2, 3]))
    # Unbatched: [T, C] log_probs and a 1-D target.
    _both(_lp(T, 1, C)[:, 0], targets[0], torch.tensor(T), torch.tensor(S))


def test_errors_match_cpu():
    lp = _lp(10, 2, 5)
    targets = torch.randint(1, 5, (2, 3))
    cases = [
        ((lp, targets, [10, 10], [3, 3]), {"blank": 5}),
        ((lp, targets, [11, 10], [3, 3]), {}),
        ((lp, targets, [10, 10], [3, -1]), {}),
        ((lp, targets, [10, 10], [4, 3]), {}),
        ((lp.half(), targets, [10, 10], [3, 3]), {}),
    ]
    for (x, t, il, tl), kw in cases:
        with pytest.raises(Exception) as cpu:
            F.ctc_loss(x, t, il, tl, **kw)
        with pytest.raises(type(cpu.value)) as dev:
            F.ctc_loss(x.to(DEV), t.to(DEV), il, tl, **kw)
        cm, dm = str(cpu.value).splitlines()[0], str(dev.value).splitlines()[0]
        assert dm == cm or ("not implemented for 'Half'" in dm and "not implemented for 'Half'" in cm), (dm, cm)
