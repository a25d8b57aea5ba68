"""Random sampling on webgpu (csrc/ops/random.cpp, wgsl/kernels/random.wgsl): the device Philox generator's
seeding and state, each distribution's statistics in every dtype CPU supports, layouts (views,
storage offsets, non-contiguous), dropout, multinomial, randperm and errors. Values need not equal
CPU's bits (CUDA's don't either); statistics are checked with bounds many standard errors wide, so a
wrong distribution fails and a right one passes. The CPU fallback is off."""

import math

import pytest
import torch
import torch.nn.functional as F
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
INTS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
ALL = FLOATS + INTS + (torch.bool,)
N = 40000


def cpu(t):
    return t.cpu()


def moments(t):
    x = cpu(t).double()
    return x.mean().item(), x.var().item()


# ---- generator: seeds, state, offsets ----


def test_manual_seed_reproduces():
    for seed_fn in (torch.manual_seed, torch.webgpu.manual_seed):
        seed_fn(1234)
        a = [
            cpu(torch.rand(100, device=DEV)),
            cpu(torch.randn(7, 9, device=DEV)),
            cpu(torch.randint(0, 1000, (50,), device=DEV)),
            cpu(torch.randperm(30, device=DEV)),
            cpu(torch.bernoulli(torch.full((64,), 0.5, device=DEV))),
            cpu(torch.multinomial(torch.ones(2, 10, device=DEV), 5, replacement=True)),
            cpu(F.dropout(torch.ones(64, device=DEV), 0.5)),
        ]
        seed_fn(1234)
        b = [
            cpu(torch.rand(100, device=DEV)),
            cpu(torch.randn(7, 9, device=DEV)),
            cpu(torch.randint(0, 1000, (50,), device=DEV)),
            cpu(torch.randperm(30, device=DEV)),
            cpu(torch.bernoulli(torch.full((64,), 0.5, device=DEV))),
            cpu(torch.multinomial(torch.ones(2, 10, device=DEV), 5, replacement=True)),
            cpu(F.dropout(torch.ones(64, device=DEV), 0.5)),
        ]
        for x, y in zip(a, b):
            assert torch.equal(x, y)
    torch.manual_seed(1)
    c = cpu(torch.rand(100, device=DEV))
    torch.manual_seed(2)
    d = cpu(torch.rand(100, device=DEV))
    assert not torch.equal(c, d)


def test_successive_calls_differ_and_offset_advances():
    torch.manual_seed(0)
    g = torch.webgpu.default_generator()
    o0 = g.get_offset()
    a = cpu(torch.rand(1000, device=DEV))
    o1 = g.get_offset()
    b = cpu(torch.rand(1000, device=DEV))
    assert o1 > o0 and g.get_offset() > o1
    assert not torch.equal(a, b)
    # no repeats across the two calls nor within one (24-bit values: collisions are rare, not common)
    both = torch.cat([a, b])
    assert both.unique().numel() > 1990
    # and the two sequences are uncorrelated
    assert abs(torch.corrcoef(torch.stack([a, b]))[0, 1].item()) < 0.15


def test_rng_state_round_trip():
    torch.manual_seed(7)
    torch.rand(10, device=DEV)
    s = torch.webgpu.get_rng_state()
    assert s.dtype == torch.uint8 and s.device.type == "cpu"
    a = [cpu(torch.randn(50, device=DEV)), cpu(torch.randint(-5, 5, (20,), device=DEV))]
    torch.webgpu.set_rng_state(s)
    b = [cpu(torch.randn(50, device=DEV)), cpu(torch.randint(-5, 5, (20,), device=DEV))]
    for x, y in zip(a, b):
        assert torch.equal(x, y)
    # torch.random's fork_rng covers the device too
    with torch.random.fork_rng(device_type="webgpu"):
        c = cpu(torch.rand(20, device=DEV))
    d = cpu(torch.rand(20, device=DEV))
    assert torch.equal(c, d)


def test_explicit_generator():
    g = torch.Generator(device=DEV)
    g.manual_seed(99)
    a = cpu(torch.rand(30, device=DEV, generator=g))
    b = cpu(torch.rand(30, device=DEV, generator=g))
    g.manual_seed(99)
    assert torch.equal(cpu(torch.rand(30, device=DEV, generator=g)), a)
    assert not torch.equal(a, b)
    # the default generator is untouched by g
    torch.manual_seed(5)
    x = cpu(torch.rand(10, device=DEV))
    torch.manual_seed(5)
    torch.rand(10, device=DEV, generator=g)
    assert torch.equal(cpu(torch.rand(10, device=DEV)), x)
    with pytest.raises(RuntimeError, match="generator"):
        torch.rand(3, device=DEV, generator=torch.Generator())
    st = g.get_state()
    u = cpu(torch.randn(10, device=DEV, generator=g))
    g.set_state(st)
    assert torch.equal(cpu(torch.randn(10, device=DEV, generator=g)), u)


# ---- continuous distributions ----


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform(dtype):
    x = torch.empty(N, device=DEV, dtype=dtype).uniform_(-2, 3)
    c = cpu(x).float()
    assert c.min().item() >= -2 and c.max().item() < 3
    m, v = moments(x)
    assert abs(m - 0.5) < 0.05 and abs(v - 25 / 12) < 0.1
    # every tenth of the range is hit about equally often
    hist = torch.histc(c, bins=10, min=-2, max=3)
    assert (hist - N / 10).abs().max().item() < 0.1 * N / 10 + (N / 10 if dtype == torch.bfloat16 else 0)
    r = cpu(torch.rand(N, device=DEV, dtype=dtype)).float()
    assert r.min().item() >= 0 and r.max().item() < 1 and abs(r.mean().item() - 0.5) < 0.01


def test_uniform_narrow_half_range_never_reaches_to():
    # 1.0 .. 1.0009765625 is one float16 ulp: the value must always be `from`
    x = cpu(torch.empty(4096, device=DEV, dtype=torch.float16).uniform_(1.0, 1.0009765625)).float()
    assert (x == 1.0).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal(dtype):
    x = torch.empty(N, device=DEV, dtype=dtype).normal_(1.5, 2.0)
    m, v = moments(x)
    assert abs(m - 1.5) < 0.06 and abs(math.sqrt(v) - 2.0) < 0.06
    c = (cpu(x).double() - 1.5) / 2
    # tails: P(|z| > 2) = 0.0455, P(|z| > 3) = 0.0027
    assert abs((c.abs() > 2).double().mean().item() - 0.0455) < 0.006
    assert (c.abs() > 3).double().mean().item() < 0.006
    assert torch.isfinite(cpu(x)).all()
    y = cpu(torch.randn(N, device=DEV, dtype=dtype)).double()
    assert abs(y.mean().item()) < 0.03 and abs(y.std().item() - 1) < 0.03


def test_normal_functional_forms():
    mean = torch.linspace(-10, 10, 2000, device=DEV)
    std = torch.full((2000,), 0.01, device=DEV)
    for r in (torch.normal(mean, 0.01), torch.normal(mean, std)):
        assert (cpu(r) - cpu(mean)).abs().max().item() < 0.06
    r = cpu(torch.normal(3.0, std))
    assert (r - 3).abs().max().item() < 0.06
    r = cpu(torch.normal(2.0, 3.0, (N,), device=DEV))
    assert abs(r.mean().item() - 2) < 0.1 and abs(r.std().item() - 3) < 0.1
    out = torch.empty(2000, device=DEV)
    torch.normal(mean, std, out=out)
    assert (cpu(out) - cpu(mean)).abs().max().item() < 0.06
    with pytest.raises(RuntimeError, match="std"):
        torch.empty(3, device=DEV).normal_(0, -1)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exponential_log_normal_cauchy(dtype):
    x = cpu(torch.empty(N, device=DEV, dtype=dtype).exponential_(4.0)).double()
    assert x.min().item() >= 0 and abs(x.mean().item() - 0.25) < 0.01 and abs(x.std().item() - 0.25) < 0.015
    y = cpu(torch.empty(N, device=DEV, dtype=dtype).log_normal_(0.5, 0.25)).double()
    assert y.min().item() > 0
    assert abs(y.log().mean().item() - 0.5) < 0.02 and abs(y.log().std().item() - 0.25) < 0.02
    z = cpu(torch.empty(N, device=DEV, dtype=dtype).cauchy_(1.0, 2.0)).double()
    assert abs(z.median().item() - 1.0) < 0.1
    q = torch.quantile(z[torch.isfinite(z)].float(), torch.tensor([0.25, 0.75])).double()
    assert abs(q[0].item() - (1 - 2)) < 0.15 and abs(q[1].item() - (1 + 2)) < 0.15


def test_exponential_never_zero():
    # multinomial without replacement divides by these
    x = cpu(torch.empty(1 << 18, device=DEV).exponential_())
    assert (x > 0).all() and torch.isfinite(x).all()


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_geometric(dtype):
    x = cpu(torch.empty(N, device=DEV, dtype=dtype).geometric_(0.25)).double()
    assert x.min().item() >= 1 and x.eq(x.round()).all()
    assert abs(x.mean().item() - 4.0) < 0.12
    assert abs((x == 1).double().mean().item() - 0.25) < 0.015


# ---- bernoulli ----


@pytest.mark.parametrize("dtype", ALL)
def test_bernoulli_scalar(dtype):
    x = torch.empty(N, device=DEV, dtype=dtype).bernoulli_(0.3)
    c = cpu(x)
    assert ((c == 0) | (c == 1)).all()
    assert abs(c.double().mean().item() - 0.3) < 0.015
    assert cpu(torch.empty(1000, device=DEV, dtype=dtype).bernoulli_(0.0)).double().sum().item() == 0
    assert cpu(torch.empty(1000, device=DEV, dtype=dtype).bernoulli_(1.0)).double().sum().item() == 1000


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_tensor(dtype):
    p = torch.tensor([0.0, 1.0, 0.2, 0.9], dtype=dtype).repeat(N // 4)
    c = cpu(torch.bernoulli(p.to(DEV))).double().view(-1, 4)
    assert c.dtype == torch.float64 and ((c == 0) | (c == 1)).all()
    f = c.mean(0)
    assert f[0].item() == 0 and f[1].item() == 1
    assert abs(f[2].item() - 0.2) < 0.02 and abs(f[3].item() - 0.9) < 0.015
    # bernoulli_ with a broadcast probability tensor, into an integer tensor
    x = torch.empty(N // 4, 4, device=DEV, dtype=torch.int32).bernoulli_(torch.tensor([0.0, 1.0, 0.2, 0.9], device=DEV))
    f = cpu(x).double().mean(0)
    assert f[0].item() == 0 and f[1].item() == 1 and abs(f[2].item() - 0.2) < 0.02
    # functional with p, out=
    y = cpu(torch.bernoulli(torch.zeros(5000, device=DEV), 0.7)).mean().item()
    assert abs(y - 0.7) < 0.03
    out = torch.empty(4000, device=DEV)
    torch.bernoulli(torch.full((4000,), 0.5, device=DEV), out=out)
    assert abs(cpu(out).mean().item() - 0.5) < 0.04


def test_bernoulli_errors():
    with pytest.raises(RuntimeError, match="p"):
        torch.empty(3, device=DEV).bernoulli_(1.5)
    with pytest.raises(RuntimeError):
        torch.bernoulli(torch.tensor([0.5, 2.0], device=DEV)).cpu()


# ---- integers: random_, randint ----


@pytest.mark.parametrize("dtype", ALL)
def test_random_default_range(dtype):
    x = cpu(torch.empty(N, device=DEV, dtype=dtype).random_())
    if dtype == torch.bool:
        assert abs(x.double().mean().item() - 0.5) < 0.02
        return
    hi = {torch.float32: 2**24, torch.float16: 2**11, torch.bfloat16: 2**8}.get(dtype)
    if hi is None:
        hi = torch.iinfo(dtype).max
    xd = x.double()
    assert xd.min().item() >= 0 and xd.max().item() <= hi
    # uses the whole range: the top quarter and the bottom quarter are both hit
    assert (xd > 0.75 * hi).any() and (xd < 0.25 * hi).any()
    assert abs(xd.mean().item() / hi - 0.5) < 0.02


@pytest.mark.parametrize("dtype", ALL)
def test_randint_small_range(dtype):
    lo, hi = (0, 2) if dtype == torch.bool else (-3, 9) if dtype not in (torch.uint8,) else (3, 15)
    x = cpu(torch.randint(lo, hi, (N,), device=DEV, dtype=dtype)).long()
    assert x.min().item() == lo and x.max().item() == hi - 1
    counts = torch.bincount(x - lo)
    assert (counts.double() - N / (hi - lo)).abs().max().item() < 0.1 * N / (hi - lo)
    y = cpu(torch.randint_like(torch.empty(100, 3, device=DEV, dtype=dtype), lo, hi))
    assert y.dtype == dtype and y.shape == (100, 3)


@pytest.mark.parametrize(
    "lo,hi",
    [(-(2**40), 2**40), (-3 * 2**40 - 5, 2**33 + 7), (0, 2**32), (0, 2**32 + 1), (-(2**63), 2**63 - 1), (5, 2**62 + 3)],
)
def test_randint_int64_wide_ranges(lo, hi):
    x = cpu(torch.randint(lo, hi, (N,), device=DEV))
    assert x.min().item() >= lo and x.max().item() < hi
    span = hi - lo
    frac = (x.double() - lo) / span
    assert abs(frac.mean().item() - 0.5) < 0.02
    assert (frac > 0.9).any() and (frac < 0.1).any()
    assert x.unique().numel() > N - 5


def test_random_full_64_bit_range():
    x = cpu(torch.empty(N, dtype=torch.int64, device=DEV).random_(-(2**63), None))
    assert (x < -(2**62)).any() and (x > 2**62).any()
    assert x.unique().numel() > N - 5
    y = cpu(torch.empty(N, dtype=torch.int64, device=DEV).random_(2**62, None))
    assert y.min().item() >= 2**62


def test_random_to_and_errors():
    x = cpu(torch.empty(N, dtype=torch.int16, device=DEV).random_(7))
    assert x.min().item() == 0 and x.max().item() == 6
    with pytest.raises(RuntimeError, match="from"):
        torch.empty(3, device=DEV, dtype=torch.int64).random_(5, 2)
    with pytest.raises(RuntimeError):
        torch.empty(3, device=DEV, dtype=torch.int8).random_(0, 1000)
    with pytest.raises((RuntimeError, NotImplementedError)):
        torch.empty(3, device=DEV, dtype=torch.int32).uniform_()


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.exponential_(),
        lambda t: t.normal_(),
        lambda t: t.log_normal_(),
        lambda t: t.cauchy_(),
        lambda t: t.uniform_(),
        lambda t: t.geometric_(0.5),
        lambda t: t.geometric_(1.5),
        lambda t: t.random_(0, 3),
        lambda t: t.exponential_(-1.0) if t.is_floating_point() else t.geometric_(0.0),
        lambda t: torch.normal(t, 1.0),
        lambda t: t.bernoulli_(-0.1),
    ],
)
@pytest.mark.parametrize("dtype", [torch.int32, torch.bool, torch.float32])
def test_errors_match_cpu(fn, dtype):
    def outcome(dev):
        try:
            fn(torch.zeros(4, dtype=dtype, device=dev))
            return None
        except Exception as e:  # noqa: BLE001
            return type(e), str(e).split("\n")[0]

    assert outcome(DEV) == outcome("cpu")


# ---- layouts ----


def test_layouts():
    base = torch.full((40, 30), float("nan"), device=DEV)
    base.t().uniform_(5, 6)  # non-contiguous: every element written
    c = cpu(base)
    assert torch.isfinite(c).all() and c.min().item() >= 5
    y = torch.zeros(1000, device=DEV)
    y[100:900].normal_()  # storage offset: the rest untouched
    c = cpu(y)
    assert (c[:100] == 0).all() and (c[900:] == 0).all() and (c[100:900] != 0).all()
    z = torch.zeros(64, device=DEV, dtype=torch.uint8)
    z[1::3].random_(1, 200)  # sub-word, strided, odd offset: neighbours untouched
    c = cpu(z)
    mask = torch.zeros(64, dtype=torch.bool)
    mask[1::3] = True
    assert (c[~mask] == 0).all() and (c[mask] >= 1).all()
    e = torch.empty(0, device=DEV).normal_()
    assert e.numel() == 0
    s = torch.empty((), device=DEV).uniform_(2, 3)
    assert 2 <= s.item() < 3
    # sub-word dtypes, word-aligned or not, with tails: the bytes around the slice are kept
    for dtype in (torch.uint8, torch.bool, torch.float16, torch.bfloat16, torch.int16, torch.int8):
        for start, stop in ((4, 11), (1, 10), (2, 5), (0, 13), (8, 9)):
            buf = torch.full((16,), 3 if dtype != torch.bool else 1, dtype=dtype, device=DEV)
            if dtype == torch.bool:
                buf[start:stop].bernoulli_(0.0)
            else:
                buf[start:stop].random_(10, 20)
            c = cpu(buf).long()
            fill = 1 if dtype == torch.bool else 3
            assert (c[:start] == fill).all() and (c[stop:] == fill).all(), (dtype, start, stop)
            if dtype == torch.bool:
                assert (c[start:stop] == 0).all()
            else:
                assert ((c[start:stop] >= 10) & (c[start:stop] < 20)).all(), (dtype, start, stop)
    # tensors of odd sizes: the last partial Philox block is filled
    w = cpu(torch.empty(1027, device=DEV, dtype=torch.float16).fill_(-1).exponential_())
    assert (w >= 0).all()


# ---- dropout ----


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout(dtype):
    x = torch.randn(N, device=DEV, dtype=dtype)
    out, mask = torch.native_dropout(x, 0.3, True)
    assert mask.dtype == torch.bool
    o, m, xc = cpu(out).double(), cpu(mask), cpu(x).double()
    assert abs(m.double().mean().item() - 0.7) < 0.015
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    assert torch.allclose(o[m], xc[m] / 0.7, rtol=tol, atol=tol)
    assert (o[~m] == 0).all()
    back = cpu(torch.ops.aten.native_dropout_backward(torch.ones_like(x), mask, 1 / 0.7)).double()
    assert torch.allclose(back, m.double() / 0.7, rtol=tol)
    # odd sizes: the tail words of the half output and the mask
    for n in (1, 2, 3, 5, 1027):
        xs = torch.randn(n, dtype=dtype).to(DEV)
        os_, ms = torch.native_dropout(xs, 0.5, True)
        oc, mc = cpu(os_).double(), cpu(ms)
        assert torch.allclose(
            oc, torch.where(mc, cpu(xs).double() * 2, torch.zeros(n, dtype=torch.float64)), rtol=tol, atol=tol
        )
    # eval: identity, mask all true
    o2, m2 = torch.native_dropout(x, 0.3, False)
    assert torch.equal(cpu(o2), cpu(x)) and cpu(m2).all()


def test_dropout_module_and_grad():
    torch.manual_seed(3)
    x = torch.randn(64, 33, device=DEV, requires_grad=True)
    d = torch.nn.Dropout(0.5)
    y = d(x)
    y.sum().backward()
    kept = cpu(y) != 0
    assert torch.allclose(cpu(x.grad), kept.float() * 2)
    assert 0.4 < kept.float().mean().item() < 0.6
    d.eval()
    assert torch.equal(cpu(d(x)), cpu(x))
    assert torch.equal(cpu(F.dropout(x, 0.0)), cpu(x))
    assert (cpu(F.dropout(x, 1.0)) == 0).all()
    xt = torch.randn(20, 30, device=DEV).t()  # non-contiguous input
    yt = F.dropout(xt, 0.5)
    k = cpu(yt) != 0
    assert torch.allclose(cpu(yt)[k], cpu(xt)[k] * 2)
    with pytest.raises(ValueError):
        F.dropout(x, 1.5)


# ---- multinomial, randperm ----


def test_multinomial_with_replacement():
    p = torch.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 1.0, 1.0]], device=DEV)
    s = cpu(torch.multinomial(p, 8000, replacement=True))
    assert s.dtype == torch.int64 and s.shape == (2, 8000)
    f0 = torch.bincount(s[0], minlength=4).double() / 8000
    f1 = torch.bincount(s[1], minlength=4).double() / 8000
    assert f0[1].item() == 0
    assert (f0 - torch.tensor([0.1, 0.0, 0.6, 0.3], dtype=torch.float64)).abs().max().item() < 0.025
    assert (f1 - 0.25).abs().max().item() < 0.025
    # 1-D, many categories (several scan chunks), half input
    w = torch.arange(1000, dtype=torch.float16, device=DEV)
    t = cpu(torch.multinomial(w, 20000, replacement=True)).double()
    assert t.min().item() >= 1 and t.max().item() <= 999
    assert abs(t.mean().item() - 666.0) < 8  # E = sum i^2 / sum i


def test_multinomial_without_replacement():
    p = torch.tensor([0.0, 5.0, 1.0, 0.0, 2.0, 0.5], device=DEV)
    for _ in range(5):
        s = cpu(torch.multinomial(p, 4))
        assert s.unique().numel() == 4 and set(s.tolist()) == {1, 2, 4, 5}
    firsts = cpu(torch.multinomial(p.expand(4000, 6).contiguous(), 1)).view(-1)
    f = torch.bincount(firsts, minlength=6).double() / 4000
    assert abs(f[1].item() - 5 / 8.5) < 0.03 and f[0].item() == 0
    full = cpu(torch.multinomial(torch.rand(3, 700, device=DEV) + 0.01, 700))
    assert all(torch.equal(full[i].sort().values, torch.arange(700)) for i in range(3))


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_grid_folded_past_65535_rows(replacement):
    # One workgroup per distribution: 70001 rows fold into two rows of 65535 workgroups, whose
    # spares sampled past the last distribution and wrote past the output (here over the rest of
    # the storage an out= view lies in). One-hot rows make every sample known.
    R = 70001
    p = torch.zeros(R, 3, device=DEV)
    p[torch.arange(R), torch.arange(R) % 3] = 1
    big = torch.full((2 * R, 1), 9, dtype=torch.long, device=DEV)
    torch.multinomial(p, 1, replacement=replacement, out=big[:R])
    want = torch.cat([(torch.arange(R) % 3).view(R, 1), torch.full((R, 1), 9)])
    assert torch.equal(big.cpu(), want)


def test_multinomial_errors():
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(torch.ones(3, device=DEV), 4)
    with pytest.raises(RuntimeError, match="inf|nan|< 0"):
        torch.multinomial(torch.tensor([1.0, -1.0], device=DEV), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        torch.multinomial(torch.zeros(2, 3, device=DEV), 1, True)
    with pytest.raises(RuntimeError, match="1 or 2 dim"):
        torch.multinomial(torch.ones(2, 2, 2, device=DEV), 1)
    with pytest.raises(RuntimeError, match="floating"):
        torch.multinomial(torch.ones(3, dtype=torch.int64, device=DEV), 1)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32, torch.int16])
def test_randperm(dtype):
    for n in (0, 1, 2, 1000):
        p = cpu(torch.randperm(n, device=DEV, dtype=dtype))
        assert p.dtype == dtype and torch.equal(p.long().sort().values, torch.arange(n))
    a, b = cpu(torch.randperm(1000, device=DEV, dtype=dtype)), cpu(torch.randperm(1000, device=DEV, dtype=dtype))
    assert not torch.equal(a, b)
    # position 0 is uniform over small n
    firsts = torch.tensor([cpu(torch.randperm(4, device=DEV))[0].item() for _ in range(400)])
    assert (torch.bincount(firsts, minlength=4) > 60).all()
    out = torch.empty(0, device=DEV, dtype=torch.int64)
    torch.randperm(10, out=out)
    assert out.shape == (10,) and torch.equal(cpu(out).sort().values, torch.arange(10))
    with pytest.raises(RuntimeError):
        torch.randperm(-1, device=DEV)


def test_rand_like_family():
    for dtype in FLOATS:
        r = torch.rand_like(torch.empty(10, 3, device=DEV, dtype=dtype))
        n = torch.randn_like(torch.empty(10, 3, device=DEV, dtype=dtype))
        assert r.dtype == dtype and r.device.type == DEV and n.dtype == dtype
        assert (cpu(r).float() >= 0).all() and (cpu(r).float() < 1).all()
    g = torch.Generator(device=DEV).manual_seed(4)
    a = cpu(torch.randn(5, device=DEV, generator=g))
    g.manual_seed(4)
    assert torch.equal(a, cpu(torch.randn(5, device=DEV, generator=g)))


# ---- PyTorch's OpInfo samples for the random entries: same shapes and dtypes as CPU, natively ----
# (OpInfo marks these entries' values as not comparable across devices; shapes, dtypes and the
# support of every dtype CPU supports are.)

RANDOM_ENTRIES = (
    "bernoulli",
    "normal",
    "normal.number_mean",
    "normal.in_place",
    "uniform",
    "log_normal",
    "randint",
    "randint_like",
    "rand_like",
    "randn_like",
    "multinomial",
    "nn.functional.dropout",
    "nn.functional.dropout2d",
    "nn.functional.dropout3d",
)


def _random_opinfos():
    from torch.testing._internal.common_methods_invocations import op_db

    full = {(o.name + ("." + o.variant_test_name if o.variant_test_name else "")): o for o in op_db}
    return [full[n] for n in RANDOM_ENTRIES if n in full]


def _to_dev(x):
    if torch.is_tensor(x):
        return x.to(DEV)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_dev(i) for i in x)
    if isinstance(x, dict):
        return {k: _to_dev(v) for k, v in x.items()}
    if isinstance(x, (str, torch.device)) and str(x) == "cpu":
        return DEV
    return x


@pytest.mark.parametrize(
    "op", _random_opinfos(), ids=lambda o: o.name + ("." + o.variant_test_name if o.variant_test_name else "")
)
def test_random_opinfo_samples(op):
    ran = 0
    for dtype in ALL:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        for s in list(op.sample_inputs("cpu", dtype))[:4]:
            torch.manual_seed(0)
            try:
                ref = op.op(s.input, *s.args, **s.kwargs)
            except Exception:  # noqa: BLE001  (CPU refuses the sample)
                continue
            got = op.op(_to_dev(s.input), *_to_dev(s.args), **_to_dev(s.kwargs))
            refs = ref if isinstance(ref, (list, tuple)) else [ref]
            gots = got if isinstance(got, (list, tuple)) else [got]
            for r, g in zip(refs, gots):
                assert g.device.type == DEV and g.dtype == r.dtype and g.shape == r.shape, (op.name, dtype)
                gc = g.cpu()
                if r.is_floating_point():
                    assert (torch.isfinite(gc) == torch.isfinite(r)).all() or op.name == "log_normal", (op.name, dtype)
            ran += 1
    assert ran > 0
