"""torch.histogram and torch.histogramdd on webgpu against CPU (ops/sort.cpp: the PrivateUse1 stubs
under ATen's device-generic front ends): bin counts, explicit and inferred ranges, bin-edge tensors
(uneven, repeated edges), samples on edges and outside, NaN, weights, density, out=, empty input,
and CPU's errors."""

import pytest
import torch
from webgpu_env import DEV


def _cmp(fn, *args, exact=True, **kw):
    def move(v):
        if isinstance(v, torch.Tensor):
            return v.to(DEV)
        if isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor):
            return [t.to(DEV) for t in v]
        return v

    want = fn(*args, **kw)
    got = fn(*[move(a) for a in args], **{k: move(v) for k, v in kw.items()})
    want = [want[0], *want[1]] if isinstance(want[1], (list, tuple)) else list(want)
    got = [got[0], *got[1]] if isinstance(got[1], (list, tuple)) else list(got)
    for w, g in zip(want, got):
        assert g.device.type == DEV
        if exact:
            torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0, equal_nan=True)
        else:
            torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("bins", [1, 7, 100, 3000])
@pytest.mark.parametrize("rng", [None, (-1.0, 2.0)])
def test_histogram_bin_count(bins, rng):
    torch.manual_seed(0)
    x = torch.randn(1000)
    x[:5] = torch.tensor([-1.0, 2.0, 0.5, 1.5, 7.0])  # edges, inside, outside
    if rng is not None:  # (a NaN sample makes the inferred range non-finite: an error, as on CPU)
        x[3] = float("nan")
    _cmp(torch.histogram, x, bins=bins, range=rng)
    _cmp(torch.histogram, x, bins=bins, range=rng, density=True, exact=False)


def test_histogram_edges_tensor():
    torch.manual_seed(1)
    x = torch.rand(500) * 4 - 1
    x[:4] = torch.tensor([0.0, 0.5, 3.0, -1.0])
    edges = torch.tensor([-1.0, 0.0, 0.0, 0.5, 2.0, 3.0])  # uneven, one repeated edge
    _cmp(torch.histogram, x, edges)
    w = torch.rand(500)
    _cmp(torch.histogram, x, edges, weight=w, exact=False)
    _cmp(torch.histogram, x, edges, weight=w, density=True, exact=False)


def test_histogram_out_and_noncontiguous():
    x = torch.randn(40, 30).t()  # non-contiguous
    hist, edges = torch.empty(0, device=DEV), torch.empty(0, device=DEV)
    r = torch.histogram(x.to(DEV), bins=9, out=(hist, edges))
    want = torch.histogram(x, bins=9)
    assert r[0] is hist and r[1] is edges
    torch.testing.assert_close(hist.cpu(), want[0], rtol=0, atol=0)
    torch.testing.assert_close(edges.cpu(), want[1], rtol=0, atol=0)


@pytest.mark.parametrize("bins", [[3, 4], [1, 1, 1], [5, 2, 6]])
def test_histogramdd(bins):
    torch.manual_seed(2)
    x = torch.randn(6, 50, len(bins))  # every leading index is a sample
    _cmp(torch.histogramdd, x, bins=bins)
    _cmp(torch.histogramdd, x, bins=bins, weight=torch.rand(6, 50), density=True, exact=False)
    rng = [v for _ in bins for v in (-1.0, 1.0)]
    _cmp(torch.histogramdd, x, bins=bins, range=rng)
    edges = [torch.sort(torch.randn(b + 1))[0] for b in bins]
    _cmp(torch.histogramdd, x, bins=edges)


def test_empty_input():
    _cmp(torch.histogram, torch.empty(0), bins=4)
    _cmp(torch.histogramdd, torch.empty(0, 2), bins=[2, 3])


def test_errors_match_cpu():
    x = torch.randn(10)
    cases = [
        (torch.histogram, (x,), {"bins": 0}),
        (torch.histogram, (x,), {"bins": 3, "range": (2.0, 1.0)}),
        (torch.histogram, (x,), {"bins": 3, "range": (0.0, float("inf"))}),
        (torch.histogram, (x, torch.tensor([0.0, 1.0], dtype=torch.int64)), {}),
        (torch.histogramdd, (x.reshape(5, 2),), {"bins": [2]}),
        (torch.histogram, (torch.tensor([1.0, float("nan")]),), {"bins": 3}),
    ]
    for fn, args, kw in cases:
        with pytest.raises(Exception) as cpu:
            fn(*args, **kw)
        with pytest.raises(type(cpu.value)) as dev:
            fn(*[a.to(DEV) for a in args], **kw)
        assert str(dev.value).splitlines()[0] == str(cpu.value).splitlines()[0]
