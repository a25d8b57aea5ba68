"""Shape-building ops (csrc/ops/shape_ops.cpp, csrc/ops/pad.cpp) against PyTorch CPU: every dtype,
negative dims, non-contiguous inputs and outputs, empty tensors, out= and in-place, gradients, errors.
Runs with the CPU fallback off, so a pass means native kernels."""

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DTYPES

import torch_webgpu  # noqa: F401

D = "webgpu"
FLOATS = [torch.float32, torch.float16, torch.bfloat16]


def make(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 3).to(dtype)
    lo = 0 if dtype == torch.uint8 else -100
    return torch.randint(lo, 100, shape, generator=g).to(dtype)


def noncontig(t):
    """The same values as t, in a tensor whose storage is strided (every other element)."""
    base = torch.empty(t.shape + (2,), dtype=t.dtype)
    base[..., 0] = t
    return base[..., 0]


def dev(t, nc=False):
    if nc:
        base = torch.zeros(t.shape + (2,), dtype=t.dtype, device=D)
        v = base[..., 1]
        v.copy_(t)
        assert not v.is_contiguous() or v.numel() <= 1
        return v
    return t.to(D)


def same(actual, expected):
    assert actual.device.type == D
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


# ---- cat and its composites ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_dtypes_dims(dtype):
    xs = [make((3, 4, 5), dtype, s) for s in range(3)]
    for dim in (0, 1, 2, -1, -3):
        same(torch.cat([dev(x) for x in xs], dim), torch.cat(xs, dim))
        same(torch.cat([dev(x, nc=True) for x in xs], dim), torch.cat(xs, dim))
    ys = [make((2, k, 3), dtype, k) for k in (1, 4, 2)]
    same(torch.cat([dev(y) for y in ys], 1), torch.cat(ys, 1))


def test_cat_many_inputs_and_large():
    xs = [make((k % 5 + 1, 7), torch.float32, k) for k in range(40)]
    same(torch.cat([dev(x) for x in xs]), torch.cat(xs))
    xs = [make((6, k % 3 + 1), torch.int8, k) for k in range(33)]
    same(torch.cat([dev(x, nc=True) for x in xs], 1), torch.cat(xs, 1))
    # the same storage several times, and transposed inputs
    a = make((300, 70), torch.float32)
    ad = dev(a)
    same(torch.cat([ad, ad.t().contiguous().t(), ad[::2].repeat(2, 1)], 1), torch.cat([a, a, a[::2].repeat(2, 1)], 1))
    big = [make((1000, 33), torch.float16, s) for s in range(5)]
    same(torch.cat([dev(b) for b in big], 0), torch.cat(big, 0))


@pytest.mark.parametrize(
    "pair",
    [
        (torch.int8, torch.float16),
        (torch.bool, torch.int64),
        (torch.int32, torch.int64),
        (torch.uint8, torch.int8),
        (torch.bfloat16, torch.float32),
        (torch.bool, torch.uint8),
        (torch.int16, torch.bfloat16),
        (torch.int64, torch.float32),
    ],
)
def test_cat_mixed_dtypes(pair):
    xs = [make((2, 3), pair[0], 1), make((4, 3), pair[1], 2), make((1, 3), pair[0], 3)]
    same(torch.cat([dev(x) for x in xs]), torch.cat(xs))


def test_cat_empty_and_out():
    a = make((2, 3), torch.float32)
    e = torch.empty(0)
    same(torch.cat([dev(e), dev(a), dev(e)], 1), torch.cat([e, a, e], 1))  # legacy: 1-D empty skipped
    z = torch.empty(2, 0)
    same(torch.cat([dev(z), dev(a)], 1), torch.cat([z, a], 1))
    same(torch.cat([dev(z), dev(z)], 0), torch.cat([z, z], 0))
    out = torch.empty(4, 3, device=D)
    r = torch.cat([dev(a), dev(a)], out=out)
    assert r is out
    same(out, torch.cat([a, a]))
    # a non-contiguous out, and an out of a wider dtype (CPU casts)
    base = torch.zeros(3, 3, device=D)
    torch.cat([dev(a), dev(a)[:1]], out=base.t())
    same(base.t(), torch.cat([a, a[:1]]))
    assert base.t().stride() == (1, 3)
    o64 = torch.empty(0, dtype=torch.float32, device=D)
    ai = make((2, 3), torch.int32)
    torch.cat([dev(ai), dev(ai)], out=o64)
    same(o64, torch.cat([ai, ai]).float())


def test_cat_errors():
    a, b = dev(make((2, 3), torch.float32)), dev(make((2, 4), torch.float32))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([a, b], 0)
    with pytest.raises(IndexError):
        torch.cat([a, a], 2)
    with pytest.raises((RuntimeError, ValueError)):
        torch.cat([], 0)
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.cat([a, a], out=a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.float16])
def test_stack_family(dtype):
    xs = [make((3, 4), dtype, s) for s in range(3)]
    ds = [dev(x, nc=True) for x in xs]
    for fn in (torch.hstack, torch.vstack, torch.dstack, torch.column_stack):
        same(fn(ds), fn(xs))
    for dim in (0, 1, 2, -1):
        same(torch.stack(ds, dim), torch.stack(xs, dim))
    v = [make((5,), dtype, s) for s in range(2)]
    for fn in (torch.hstack, torch.vstack, torch.dstack, torch.column_stack):
        same(fn([dev(t) for t in v]), fn(v))


def test_cat_grad():
    xs = [torch.randn(2, 3, requires_grad=True) for _ in range(3)]
    ds = [x.detach().to(D).requires_grad_() for x in xs]
    g = torch.randn(2, 9)
    torch.cat(xs, 1).backward(g)
    torch.cat(ds, 1).backward(g.to(D))
    for x, d in zip(xs, ds):
        same(d.grad, x.grad)


# ---- repeat, tile, repeat_interleave ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_tile(dtype):
    x = make((2, 3), dtype)
    for reps in ((2, 3), (1, 1), (2, 1, 2), (0, 2)):
        same(dev(x, nc=True).repeat(*reps), x.repeat(*reps))
        same(dev(x).tile(reps), x.tile(reps))
    same(dev(x).tile((3,)), x.tile((3,)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.int64, torch.bool])
def test_repeat_interleave(dtype):
    x = make((3, 4), dtype)
    same(dev(x).repeat_interleave(2), x.repeat_interleave(2))
    same(dev(x, nc=True).repeat_interleave(3, dim=1), x.repeat_interleave(3, dim=1))
    same(dev(x).repeat_interleave(2, dim=-2, output_size=6), x.repeat_interleave(2, dim=-2, output_size=6))

    # Tensor repeats: the index tensor (repeat_interleave.Tensor). Applying it to a tensor goes through
    # index_select, which is another op family's kernel.
    for r in (
        torch.tensor([1, 0, 3]),
        torch.tensor([2, 1, 0, 4], dtype=torch.int32),
        torch.randint(0, 4, (600,)),
        torch.tensor([0, 0]),
        noncontig(torch.tensor([3, 1, 2])),
    ):
        same(torch.repeat_interleave(dev(r)), torch.repeat_interleave(r))
    r = torch.tensor([2, 1, 3])
    same(torch.repeat_interleave(dev(r), output_size=6), torch.repeat_interleave(r, output_size=6))
    with pytest.raises(RuntimeError, match="negative"):
        torch.repeat_interleave(dev(torch.tensor([1, -2])))
    with pytest.raises(RuntimeError):
        torch.repeat_interleave(dev(torch.tensor([[1, 2]])))


# ---- flip, roll, rot90 -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_family(dtype):
    x = make((3, 4, 5), dtype)
    for dims in ((0,), (1,), (-1,), (0, 2), (0, 1, 2), ()):
        same(dev(x).flip(dims), x.flip(dims))
        same(dev(x, nc=True).flip(dims), x.flip(dims))
    same(torch.fliplr(dev(x)), torch.fliplr(x))
    same(torch.flipud(dev(x, nc=True)), torch.flipud(x))
    for k in range(-2, 5):
        same(torch.rot90(dev(x), k, (0, 2)), torch.rot90(x, k, (0, 2)))
    s = make((), dtype)
    same(dev(s).flip(()), s.flip(()))
    with pytest.raises(RuntimeError):
        dev(x).flip((0, 0))
    with pytest.raises(IndexError):
        dev(x).flip((3,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_roll(dtype):
    x = make((3, 4, 5), dtype)
    cases = [
        ((1,), (0,)),
        ((-2,), (1,)),
        ((7,), (-1,)),
        ((1, 2), (0, 2)),
        ((2, -3), (1, 1)),
        ((13,), None),
        ((-4,), None),
        ((0,), (0,)),
    ]
    for shifts, dims in cases:
        want = torch.roll(x, shifts, dims) if dims is not None else torch.roll(x, shifts)
        got = torch.roll(dev(x, nc=True), shifts, dims) if dims is not None else torch.roll(dev(x, nc=True), shifts)
        same(got, want)
    e = make((0, 3), dtype)
    same(torch.roll(dev(e), 1, 1), torch.roll(e, 1, 1))
    with pytest.raises(RuntimeError, match="align"):
        torch.roll(dev(x), (1, 2), (0,))


def test_flip_roll_grad():
    x = torch.randn(4, 5, requires_grad=True)
    d = x.detach().to(D).requires_grad_()
    g = torch.randn(4, 5)
    (x.flip(0).roll(2, 1) * 1).rot90().backward(g.t().flip(1).t().contiguous().t())
    (d.flip(0).roll(2, 1) * 1).rot90().backward(g.t().flip(1).t().contiguous().t().to(D))
    same(d.grad, x.grad)


# ---- tril, triu, trace, one_hot, diag ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu(dtype):
    x = make((2, 5, 7), dtype)
    for k in (0, 1, -1, 3, -4, 10, -10):
        same(dev(x).tril(k), x.tril(k))
        same(dev(x, nc=True).triu(k), x.triu(k))
        same(dev(x).transpose(1, 2).tril(k), x.transpose(1, 2).tril(k))
    y = dev(x)
    y.tril_(1)
    same(y, x.tril(1))
    y = dev(x, nc=True)
    y.triu_(-1)
    same(y, x.triu(-1))
    out = torch.empty(0, dtype=dtype, device=D)
    torch.triu(dev(x), 2, out=out)
    same(out, x.triu(2))
    big = make((3, 70, 90), dtype)
    same(dev(big).tril(-5), big.tril(-5))
    with pytest.raises(RuntimeError):
        dev(make((5,), dtype)).tril()


@pytest.mark.parametrize("dtype", DTYPES)
def test_trace_diag(dtype):
    x = make((4, 6), dtype)
    if dtype not in (torch.bool,):
        t = dev(x, nc=True).trace()
        if dtype in FLOATS:
            # CPU's trace of float16/bfloat16 sums in float32 and rounds once (torch 2.11's CPU has none)
            torch.testing.assert_close(t.cpu(), x.float().trace().to(dtype), rtol=1e-2, atol=1e-2)
        else:
            same(t, x.trace())
    for k in (0, 1, -2, 7):
        same(torch.diag(dev(x), k), torch.diag(x, k))
    v = make((5,), dtype)
    for k in (0, 2, -1):
        same(torch.diag(dev(v), k), torch.diag(v, k))
    b = make((2, 3, 4), dtype)
    same(torch.diag_embed(dev(b)), torch.diag_embed(b))
    same(torch.diag_embed(dev(b), 1, 0, 2), torch.diag_embed(b, 1, 0, 2))
    with pytest.raises(RuntimeError, match="expected a matrix"):
        dev(b).trace()


def test_one_hot():
    x = torch.tensor([[0, 3, 1], [2, 2, 0]])
    same(F.one_hot(dev(x)), F.one_hot(x))
    same(F.one_hot(dev(x, nc=True), 6), F.one_hot(x, 6))
    same(F.one_hot(dev(torch.tensor(2)), 4), F.one_hot(torch.tensor(2), 4))
    same(F.one_hot(dev(torch.empty(0, dtype=torch.long)), 3), F.one_hot(torch.empty(0, dtype=torch.long), 3))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(dev(x), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(dev(torch.tensor([-1, 2])))
    with pytest.raises(RuntimeError):
        F.one_hot(dev(torch.tensor([1.0])))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.bfloat16, torch.int8])
def test_scatters(dtype):
    x = make((4, 5), dtype, 1)
    same(torch.diagonal_scatter(dev(x), dev(make((4,), dtype, 2))), torch.diagonal_scatter(x, make((4,), dtype, 2)))
    same(
        torch.diagonal_scatter(dev(x), dev(make((3,), dtype, 2)), 2), torch.diagonal_scatter(x, make((3,), dtype, 2), 2)
    )
    same(
        torch.select_scatter(dev(x, nc=True), dev(make((5,), dtype, 3)), 0, -1),
        torch.select_scatter(x, make((5,), dtype, 3), 0, -1),
    )
    same(
        torch.slice_scatter(dev(x), dev(make((4, 2), dtype, 4)), 1, 1, 5, 2),
        torch.slice_scatter(x, make((4, 2), dtype, 4), 1, 1, 5, 2),
    )
    same(
        torch.as_strided_scatter(dev(x), dev(make((2, 2), dtype, 5)), (2, 2), (5, 2), 1),
        torch.as_strided_scatter(x, make((2, 2), dtype, 5), (2, 2), (5, 2), 1),
    )


# ---- padding ---------------------------------------------------------------------------------------

PAD_CASES = [
    ((2, 3, 7), (2, 3)),
    ((3, 7), (1, 0)),
    ((2, 3, 5, 6), (1, 2, 3, 1)),
    ((3, 5, 6), (2, 2, 0, 4)),
    ((1, 2, 4, 5, 6), (1, 2, 0, 1, 3, 2)),
    ((2, 4, 5, 6), (1, 2, 0, 1, 3, 2)),
    ((2, 3, 40, 50), (3, 3, 3, 3)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_pad_forward_backward(mode):
    for shape, pad in PAD_CASES:
        x = torch.randn(shape, requires_grad=True)
        d = dev(x.detach(), nc=True).requires_grad_()  # a strided input
        y = F.pad(x, pad, mode=mode)
        yd = F.pad(d, pad, mode=mode)
        same(yd, y.detach())
        g = torch.randn(y.shape)
        y.backward(g)
        yd.backward(dev(g, nc=True))
        torch.testing.assert_close(d.grad.cpu(), x.grad, rtol=1e-5, atol=1e-5)
    if mode == "replicate":
        x = torch.randn(2, 3, 7, requires_grad=True)
        d = x.detach().to(D).requires_grad_()
        F.pad(x, (-1, 2), mode=mode).sum().backward()
        F.pad(d, (-1, 2), mode=mode).sum().backward()
        same(d.grad, x.grad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_dtypes(dtype):
    x = make((2, 3, 5, 6), dtype)
    for mode in ("reflect", "replicate", "circular", "constant"):
        if dtype == torch.bool and mode in ("reflect", "replicate"):
            with pytest.raises(NotImplementedError):
                F.pad(dev(x), (1, 2, 2, 1), mode=mode)
            continue
        same(F.pad(dev(x, nc=True), (1, 2, 2, 1), mode=mode), F.pad(x, (1, 2, 2, 1), mode=mode))
        same(F.pad(dev(x[0]), (2, 1), mode=mode), F.pad(x[0], (2, 1), mode=mode))
    same(F.pad(dev(x), (1, 1, 1, 1), value=1), F.pad(x, (1, 1, 1, 1), value=1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_pad_backward_half(dtype):
    x = torch.randn(2, 3, 6, 7).to(dtype).requires_grad_()
    d = x.detach().to(D).requires_grad_()
    for mode in ("reflect", "replicate"):
        x.grad = d.grad = None
        g = torch.randn(2, 3, 9, 10).to(dtype)
        F.pad(x, (1, 2, 2, 1), mode=mode).backward(g)
        F.pad(d, (1, 2, 2, 1), mode=mode).backward(g.to(D))
        torch.testing.assert_close(d.grad.cpu(), x.grad, rtol=2e-2, atol=2e-2)


def test_pad_out_and_errors():
    x = torch.randn(2, 3, 7)
    out = torch.empty(0, device=D)
    torch._C._nn.reflection_pad1d(dev(x), (2, 2), out=out)
    same(out, torch._C._nn.reflection_pad1d(x, (2, 2)))
    out = torch.empty(0, device=D)
    torch._C._nn.reflection_pad2d(dev(x), (2, 2, 1, 1), out=out)
    same(out, torch._C._nn.reflection_pad2d(x, (2, 2, 1, 1)))
    gi = torch.empty(0, device=D)
    g = torch.randn(2, 5, 11)
    torch.ops.aten.reflection_pad2d_backward.grad_input(dev(g), dev(x), [2, 2, 1, 1], grad_input=gi)
    torch.testing.assert_close(gi.cpu(), torch.ops.aten.reflection_pad2d_backward(g, x, [2, 2, 1, 1]))
    with pytest.raises(RuntimeError, match="Padding size should be less"):
        F.pad(dev(x), (7, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding size should be less"):
        F.pad(dev(x), (1, 1, 3, 1), mode="reflect")
    with pytest.raises(RuntimeError):
        F.pad(dev(torch.randn(2, 0, 4)), (1, 1), mode="replicate")


def test_clone_contiguous_split():
    x = make((4, 6), torch.int16)
    d = dev(x, nc=True)
    same(d.clone(), x.clone())
    same(d.t().contiguous(), x.t().contiguous())
    for a, b in zip(d.tensor_split(3, 1), x.tensor_split(3, 1)):
        same(a, b)
    for a, b in zip(d.split_with_sizes([1, 3], 0), x.split_with_sizes([1, 3], 0)):
        same(a, b)
    for a, b in zip(torch.ops.aten.unsafe_split(d, 2, 1), torch.ops.aten.unsafe_split(x, 2, 1)):
        same(a, b)


@pytest.mark.parametrize("dtype", [torch.int8, torch.bool, torch.float16, torch.int16])
def test_subword_outputs_leave_neighbours(dtype):
    """Outputs that share 32-bit words with other data: whole-word stores only where the output owns
    its words; elsewhere element stores leave the neighbours alone."""
    a, b = make((3,), dtype, 1), make((2,), dtype, 2)
    for lo, hi in ((0, 5), (1, 6), (4, 9), (3, 8), (2, 7)):
        base_cpu = make((12,), dtype, 3)
        base = base_cpu.to(D)
        torch.cat([a.to(D), b.to(D)], out=base[lo:hi])
        want = base_cpu.clone()
        want[lo:hi] = torch.cat([a, b])
        same(base, want)
        m = make((12,), dtype, 4)
        md = m.to(D)
        md[lo : hi - 1].view(2, 2).tril_()
        w = m.clone()
        w[lo : hi - 1].view(2, 2).tril_()
        same(md, w)
    x = make((7, 9), dtype)
    same(dev(x).flip(1), x.flip(1))
    same(dev(x)[:, 1:].flip(0), x[:, 1:].flip(0))
    same(torch.cat([dev(x)[:, :3], dev(x)[:, 5:]], 1), torch.cat([x[:, :3], x[:, 5:]], 1))


def test_cat_device_mismatch():
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([torch.zeros(2, device=D), torch.zeros(2)])


def test_tri_indices():
    for f in (torch.tril_indices, torch.triu_indices):
        for r, c in ((0, 3), (3, 0), (1, 1), (4, 6), (6, 4), (5, 5)):
            for k in (-7, -2, 0, 1, 3, 8):
                for dt in (torch.int64, torch.int32):
                    same(f(r, c, k, dtype=dt, device=D), f(r, c, k, dtype=dt))
        same(f(300, 200, -3, device=D), f(300, 200, -3))
        with pytest.raises(RuntimeError, match="non-negative"):
            f(-1, 3, device=D)
        with pytest.raises(NotImplementedError):
            f(3, 3, dtype=torch.float32, device=D)
