"""torch.segment_reduce and its backward on webgpu against CPU (ops/segment_reduce.cpp): every
reduction, lengths and offsets, int32/int64 index tensors, batched lengths along an inner axis,
empty segments, `initial`, unsafe lengths that do not cover the axis, NaN, ties and zeros in the
backward, half dtypes (CPU rounds every step in the dtype), and CPU's errors."""

import pytest
import torch
from webgpu_env import DEV

REDS = ["max", "mean", "min", "sum", "prod"]


def _both(data, reduce, grad=True, **kw):
    """segment_reduce on CPU and webgpu (kw tensors moved along); values and gradients."""
    outs = []
    for dev in ("cpu", DEV):
        x = data.detach().to(dev).requires_grad_(grad)
        k = {n: (v.to(dev) if isinstance(v, torch.Tensor) else v) for n, v in kw.items()}
        y = torch.segment_reduce(x, reduce, **k)
        g = None
        if grad:
            (gx,) = torch.autograd.grad(y, x, torch.arange(y.numel(), dtype=y.dtype, device=dev).reshape(y.shape) - 3)
            g = gx.cpu()
        outs.append((y.detach().cpu(), g))
    return outs


def _check(data, reduce, grad=True, exact=True, **kw):
    # prod's gradient divides (grad * out / x): WGSL's float32 division may be 2.5 ulp off on a GPU
    # (NVIDIA's is), so prod compares within float tolerance there; lavapipe divides exactly.
    exact = exact and not (reduce == "prod" and data.dtype == torch.float32 and grad)
    (y0, g0), (y1, g1) = _both(data, reduce, grad, **kw)
    tol = {} if exact else {"rtol": 1e-5, "atol": 1e-6}
    torch.testing.assert_close(y1, y0, equal_nan=True, **({"rtol": 0, "atol": 0} if exact else tol))
    if grad:
        torch.testing.assert_close(g1, g0, equal_nan=True, **({"rtol": 0, "atol": 0} if exact else tol))


@pytest.mark.parametrize("reduce", REDS)
@pytest.mark.parametrize("initial", [None, 2.5])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_lengths_and_offsets(reduce, initial, index_dtype):
    torch.manual_seed(0)
    data = torch.randn(10, 3)
    lengths = torch.tensor([3, 0, 4, 1, 2], dtype=index_dtype)
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0).to(index_dtype)])
    _check(data, reduce, lengths=lengths, initial=initial, exact=reduce != "mean")
    _check(data, reduce, offsets=offsets, initial=initial, exact=reduce != "mean")


@pytest.mark.parametrize("reduce", REDS)
def test_batched_inner_axis(reduce):
    torch.manual_seed(1)
    data = torch.randn(3, 7, 4)
    lengths = torch.tensor([[2, 0, 5], [1, 3, 3], [7, 0, 0]])
    _check(data, reduce, lengths=lengths, axis=1, initial=1.0, exact=reduce != "mean")
    # A non-contiguous input.
    _check(torch.randn(4, 7, 3).transpose(0, 2), reduce, lengths=lengths, axis=1, exact=reduce != "mean")


@pytest.mark.parametrize("reduce", REDS)
def test_unsafe_short_lengths_and_nan(reduce):
    data = torch.tensor([1.0, float("nan"), 3.0, -2.0, 5.0, 0.0, 4.0, 4.0])
    # Lengths covering only part of the axis (unsafe): the rest takes no part.
    _check(data, reduce, lengths=torch.tensor([2, 0, 3]), unsafe=True, exact=reduce != "mean")


@pytest.mark.parametrize("reduce", ["max", "min", "prod"])
def test_backward_ties_and_zeros(reduce):
    # Ties share a positive gradient (CPU divides only positive ones); zeros take prod's exclusive path.
    data = torch.tensor([4.0, 4.0, 1.0, 0.0, 2.0, 0.0, -1.0, -1.0, 3.0])
    _check(data, reduce, lengths=torch.tensor([3, 2, 1, 3]))
    _check(data, reduce, lengths=torch.tensor([3, 2, 1, 3]), initial=3.0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduce", REDS)
def test_half_dtypes_round_per_step(dtype, reduce):
    torch.manual_seed(2)
    data = (torch.randn(40) * 30).to(dtype)
    _check(data, reduce, lengths=torch.tensor([13, 0, 20, 7]))


def test_empty_segments_defaults():
    data = torch.randn(4)
    for reduce in REDS:
        _check(data, reduce, grad=False, lengths=torch.tensor([0, 4, 0]))


def test_errors_match_cpu():
    data = torch.randn(5)
    for kw in (
        {"lengths": torch.tensor([2, -1, 4])},
        {"lengths": torch.tensor([2, 2])},
        {"lengths": torch.tensor([[2, 3]]), "axis": 0},
    ):
        with pytest.raises(RuntimeError) as cpu:
            torch.segment_reduce(data, "sum", **kw)
        with pytest.raises(RuntimeError) as dev:
            torch.segment_reduce(
                data.to(DEV), "sum", **{k: (v.to(DEV) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
            )
        assert str(dev.value).splitlines()[0] == str(cpu.value).splitlines()[0]
    # A reduction CPU does not know, and integer data: the same exception type and message as CPU.
    for args in ((data, "median"), (torch.arange(5), "sum")):
        with pytest.raises(Exception) as cpu:
            torch.segment_reduce(*args, lengths=torch.tensor([5]))
        with pytest.raises(type(cpu.value)) as dev:
            torch.segment_reduce(args[0].to(DEV), args[1], lengths=torch.tensor([5]).to(DEV))
        if args[1] == "median":
            assert str(dev.value) == str(cpu.value)
        else:
            assert "not implemented for 'Long'" in str(dev.value) and "segment_reduce" in str(dev.value)
