"""multi_margin_loss and multilabel_margin_loss (ops/loss_margin.cpp) against CPU: values and
gradients for every reduction, p, margin, weight, vector and batched inputs, non-contiguous
inputs, targets that stop at a negative entry, and out-of-range targets."""

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

g = torch.Generator().manual_seed(0)


def both(fn, x, *args, **kw):
    xc = x.clone().requires_grad_()
    xd = x.to(DEV).requires_grad_()
    want = fn(xc, *args, **kw)
    got = fn(
        xd,
        *[a.to(DEV) if isinstance(a, torch.Tensor) else a for a in args],
        **{k: v.to(DEV) if isinstance(v, torch.Tensor) else v for k, v in kw.items()},
    )
    torch.testing.assert_close(got.cpu(), want.detach(), rtol=1e-5, atol=1e-5)
    go = torch.randn(want.shape, generator=g)
    want.backward(go)
    got.backward(go.to(DEV))
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin(reduction, p, weighted):
    x = torch.randn(7, 6, generator=g)
    y = torch.randint(0, 6, (7,), generator=g)
    w = torch.rand(6, generator=g) if weighted else None
    both(F.multi_margin_loss, x, y, p=p, margin=0.7, weight=w, reduction=reduction)
    both(F.multi_margin_loss, x.t().contiguous().t(), y, p=p, weight=w, reduction=reduction)  # non-contiguous
    both(F.multi_margin_loss, x[0], y[:1], p=p, weight=w, reduction=reduction)  # a vector


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin(reduction):
    x = torch.randn(5, 6, generator=g)
    t = torch.tensor(
        [
            [3, 0, -1, 1, 1, 1],  # stops at the -1
            [5, 4, 3, 2, 1, 0],  # every class a target
            [-1, 2, 2, 2, 2, 2],  # no target
            [1, 1, -1, 0, 0, 0],  # repeated target
            [0, 2, 4, -1, -1, -1],
        ]
    )
    both(F.multilabel_margin_loss, x, t, reduction=reduction)
    both(F.multilabel_margin_loss, x.t().contiguous().t(), t, reduction=reduction)
    both(F.multilabel_margin_loss, x[0], t[0], reduction=reduction)
    _, is_t = torch.ops.aten.multilabel_margin_loss_forward(x.to(DEV), t.to(DEV), 1)
    torch.testing.assert_close(is_t.cpu(), torch.ops.aten.multilabel_margin_loss_forward(x, t, 1)[1])


def test_out_of_range_targets_raise():
    x = torch.randn(3, 4, device=DEV)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, torch.tensor([0, 4, 1], device=DEV))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, torch.tensor([0, -1, 1], device=DEV))
    # multilabel: every entry in [-1, 4), also past the first -1, as CPU checks.
    for t in ([[0, 4, -1, 0]] * 3, [[0, -1, 9, 9]] * 3, [[0, -2, 1, 1]] * 3):
        with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
            F.multilabel_margin_loss(x, torch.tensor(t, device=DEV))


def test_half_is_refused_like_cpu():
    x = torch.randn(3, 4, device=DEV).half()
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        F.multi_margin_loss(x, torch.tensor([0, 1, 2], device=DEV))
