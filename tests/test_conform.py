"""Behaviour that PyTorch's own device-generic tests (test_indexing, test_shape_ops, test_view_ops,
test_sort_and_select, run against the webgpu device) found different from CPU: error types and
messages, deprecation warnings, and float64 sampling. Each test states CPU's behaviour by running it.
The CPU fallback is off."""

import warnings

import pytest
import torch
from webgpu_env import DEV

import torch_webgpu  # noqa: F401


def raised(f):
    try:
        f()
    except Exception as e:  # the type and message are what is compared
        return type(e), str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("fn", [torch.unique, torch.unique_consecutive])
@pytest.mark.parametrize("shape,dim", [((5, 0, 0), 1), ((5, 0, 0), 2), ((0, 3, 0), 0), ((5, 0, 5), 2), ((4, 0, 3), 1)])
def test_unique_dim_zero_sized(fn, shape, dim):
    # CPU: an empty selected dim is fine only when it is the one zero-sized dim
    x = torch.ones(shape)

    def run(t):
        return fn(t, dim=dim, return_inverse=True, return_counts=True)

    want = raised(lambda: run(x))
    assert raised(lambda: run(x.to(DEV))) == want
    if want is None:
        for p, q in zip(run(x), run(x.to(DEV)), strict=True):
            assert p.shape == q.shape and p.dtype == q.dtype


@pytest.mark.parametrize("size,step", [(3, 0), (-1, 1), (3, -2)])
def test_unfold_backward_errors_as_cpu(size, step):
    g = torch.randn(2, 3)
    want = raised(lambda: torch.ops.aten.unfold_backward(g, [6], 0, size, step))
    assert want is not None
    assert raised(lambda: torch.ops.aten.unfold_backward(g.to(DEV), [6], 0, size, step)) == want


@pytest.mark.parametrize("accumulate", [True, False])
def test_uint8_mask_index_put_warns_as_cpu(accumulate):
    def count(device):
        mask = torch.tensor([1, 0, 1, 0, 0], dtype=torch.uint8, device=device)
        y = torch.ones(5, 4, device=device)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y.index_put_((mask,), y[mask] * 2, accumulate=accumulate)
        return y.cpu(), sum("uint8 is now deprecated" in str(x.message) for x in w)

    (yc, nc), (yd, nd) = count("cpu"), count(DEV)
    assert nc == 2 and nd == nc
    torch.testing.assert_close(yd, yc)
