"""Mixed precision on webgpu as on CUDA: torch.autocast("webgpu") with PyTorch's CUDA cast policy
(registered on AutocastPrivateUse1 by csrc/core/autocast.cpp), and torch.amp.GradScaler("webgpu")
on the native _amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_ (csrc/ops/amp.cpp).
Results are compared with CPU (CPU autocast, CPU's GradScaler and CPU's own _amp_* kernels) and with
float32; nothing is hard-coded but the policy's dtypes. The CPU fallback is off: all of it is native."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from webgpu_env import DEV

LOW = [torch.float16, torch.bfloat16]


def rnd(*shape, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


# ---------------------------------------------------------------- autocast: state and API


def test_autocast_state_and_nesting():
    assert torch.amp.is_autocast_available(DEV)
    assert torch.webgpu.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    default = torch.get_autocast_dtype(DEV)
    assert default == torch.float16  # PrivateUse1's default, as CUDA's
    assert not torch.is_autocast_enabled(DEV)
    x, w = rnd(4, 8).to(DEV), rnd(8, 8, seed=1).to(DEV)
    with torch.autocast(DEV):
        assert torch.is_autocast_enabled(DEV) and torch.webgpu.is_autocast_enabled()
        assert not torch.is_autocast_enabled("cpu")
        assert (x @ w).dtype == torch.float16
        with torch.autocast(DEV, dtype=torch.bfloat16):
            assert torch.get_autocast_dtype(DEV) == torch.bfloat16
            assert (x @ w).dtype == torch.bfloat16
            with torch.autocast(DEV, enabled=False):
                assert not torch.is_autocast_enabled(DEV)
                assert (x @ w).dtype == torch.float32
            assert (x @ w).dtype == torch.bfloat16
        assert torch.get_autocast_dtype(DEV) == torch.float16
        assert (x @ w).dtype == torch.float16
    assert not torch.is_autocast_enabled(DEV) and torch.get_autocast_dtype(DEV) == default
    assert (x @ w).dtype == torch.float32
    # CPU autocast does not touch webgpu tensors, and the reverse
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (x @ w).dtype == torch.float32
    with torch.autocast(DEV):
        assert (x.cpu() @ w.cpu()).dtype == torch.float32


def test_autocast_decorator_and_module_functions():
    @torch.autocast(DEV, dtype=torch.bfloat16)
    def f(a, b):
        return F.linear(a, b)

    x, w = rnd(3, 5).to(DEV), rnd(4, 5, seed=1).to(DEV)
    assert f(x, w).dtype == torch.bfloat16
    torch.webgpu.set_autocast_dtype(torch.bfloat16)
    try:
        assert torch.webgpu.get_autocast_dtype() == torch.get_autocast_dtype(DEV) == torch.bfloat16
    finally:
        torch.webgpu.set_autocast_dtype(torch.float16)
    assert torch.webgpu.is_bf16_supported()


def test_autocast_unsupported_dtype_warns_and_disables():
    # as CPU (and every device that lists its dtypes) does: a warning, and autocast stays off
    with pytest.warns(UserWarning, match="webgpu Autocast only supports dtypes"):
        ctx = torch.autocast(DEV, dtype=torch.float64)
    with ctx:
        assert not torch.is_autocast_enabled(DEV)
        assert (rnd(2, 2).to(DEV) @ rnd(2, 2).to(DEV)).dtype == torch.float32


# ---------------------------------------------------------------- autocast: the cast policy


def _policy_cases(low):
    """(name, fn(device) -> output, expected dtype): CUDA's lists in ATen/autocast_mode.h."""
    x, w, b = rnd(6, 16), rnd(12, 16, seed=1) * 0.25, rnd(12, seed=2)
    a3, b3 = rnd(2, 6, 16, seed=3), rnd(2, 16, 5, seed=4)
    img, k = rnd(2, 3, 9, 9, seed=5), rnd(4, 3, 3, 3, seed=6) * 0.3
    q, kk, v = rnd(1, 2, 8, 16, seed=7), rnd(1, 2, 8, 16, seed=8), rnd(1, 2, 8, 16, seed=9)
    tgt = torch.randint(0, 12, (6,), generator=torch.Generator().manual_seed(0))
    f32 = torch.float32
    return [
        ("linear", lambda d: F.linear(x.to(d), w.to(d), b.to(d)), low),
        ("matmul", lambda d: x.to(d) @ w.t().to(d), low),
        ("mm", lambda d: torch.mm(x.to(d), w.t().to(d)), low),
        ("addmm", lambda d: torch.addmm(b.to(d), x.to(d), w.t().to(d)), low),
        ("bmm", lambda d: torch.bmm(a3.to(d), b3.to(d)), low),
        ("baddbmm", lambda d: torch.baddbmm(torch.zeros(2, 6, 5).to(d), a3.to(d), b3.to(d)), low),
        ("conv2d", lambda d: F.conv2d(img.to(d), k.to(d), padding=1), low),
        ("sdpa", lambda d: F.scaled_dot_product_attention(q.to(d), kk.to(d), v.to(d), is_causal=True), low),
        ("softmax", lambda d: torch.softmax(x.to(d), -1), f32),
        ("softmax_of_low", lambda d: torch.softmax(F.linear(x.to(d), w.to(d)), -1), f32),
        ("log_softmax_of_low", lambda d: F.log_softmax(F.linear(x.to(d), w.to(d)), -1), f32),
        ("mse_loss", lambda d: F.mse_loss(F.linear(x.to(d), w.to(d)), torch.zeros(6, 12).to(d)), f32),
        ("cross_entropy", lambda d: F.cross_entropy(F.linear(x.to(d), w.to(d), b.to(d)), tgt.to(d)), f32),
        ("layer_norm", lambda d: F.layer_norm(F.linear(x.to(d), w.to(d)), (12,)), f32),
        ("group_norm", lambda d: F.group_norm(F.conv2d(img.to(d), k.to(d)), 2), f32),
        ("exp", lambda d: torch.exp(F.linear(x.to(d), w.to(d))), f32),
        ("sum", lambda d: F.linear(x.to(d), w.to(d)).sum(), f32),
        (
            "bce_with_logits",
            lambda d: F.binary_cross_entropy_with_logits(
                F.linear(x.to(d), w.to(d)), torch.rand(6, 12, generator=torch.Generator().manual_seed(1)).to(d)
            ),
            f32,
        ),
        # promote: the widest of the inputs
        ("addcmul_promote", lambda d: torch.addcmul(b.to(d), F.linear(x.to(d), w.to(d)), b.to(d)), f32),
        # ops outside the lists run in whatever dtype they get
        ("relu_passthrough", lambda d: F.relu(F.linear(x.to(d), w.to(d))), low),
        ("add_passthrough", lambda d: F.linear(x.to(d), w.to(d)) + 1, low),
    ]


@pytest.mark.parametrize("low", LOW, ids=["f16", "bf16"])
def test_autocast_policy_dtypes_and_values(low):
    for name, fn, expected in _policy_cases(low):
        with torch.autocast(DEV, dtype=low):
            got = fn(DEV)
        assert got.dtype == expected, (name, got.dtype)
        ref32 = fn("cpu")  # float32 on CPU, no autocast
        # the result of the same op on CPU with its inputs cast as the webgpu policy casts them: the
        # lower-precision ops compute from low-precision inputs, so they are compared with the CPU
        # autocast (whose list holds all of them) tightly, and with float32 loosely
        tol = dict(rtol=2e-2, atol=2e-2) if low == torch.float16 else dict(rtol=5e-2, atol=5e-2)
        torch.testing.assert_close(got.float().cpu(), ref32, **tol, msg=lambda m: f"{name}: {m}")
        if expected == low and not name.endswith("passthrough") and name != "sdpa":
            with torch.autocast("cpu", dtype=low):
                cpu_ac = fn("cpu")
            assert cpu_ac.dtype == low
            # both round the same low-precision inputs and accumulate in float32: one or two ulps
            ulp = 2.0**-10 if low == torch.float16 else 2.0**-7
            torch.testing.assert_close(
                got.float().cpu(),
                cpu_ac.float(),
                rtol=2 * ulp,
                atol=2 * ulp,
                msg=lambda m: f"{name} vs CPU autocast: {m}",
            )


def test_autocast_fp32_ops_compute_in_fp32():
    # softmax of a half tensor under autocast is computed (and returned) in float32, like CUDA: the
    # result equals float32 softmax of the same half values, not a half softmax widened
    x = (rnd(4, 300) * 6).half()
    with torch.autocast(DEV):
        got = torch.softmax(x.to(DEV), -1)
        ls = F.log_softmax(x.to(DEV), -1)
        ln = F.layer_norm(x.to(DEV), (300,))
    assert got.dtype == ls.dtype == ln.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), torch.softmax(x.float(), -1), rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(ls.cpu(), F.log_softmax(x.float(), -1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ln.cpu(), F.layer_norm(x.float(), (300,)), rtol=1e-4, atol=1e-4)


def test_autocast_binary_cross_entropy_refused():
    p = torch.sigmoid(rnd(4, 3)).to(DEV)
    with torch.autocast(DEV):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, torch.ones(4, 3, device=DEV))
    F.binary_cross_entropy(p, torch.ones(4, 3, device=DEV))  # outside autocast it works


def test_autocast_backward_grad_dtypes_match_cpu():
    # grads of float32 leaves are float32 (the cast is differentiable), values close to CPU autocast
    results = []
    for dev in ("cpu", DEV):
        w = rnd(8, 16, seed=1).to(dev).requires_grad_()
        b = rnd(8, seed=2).to(dev).requires_grad_()
        with torch.autocast(dev, dtype=torch.bfloat16):
            y = F.linear(rnd(5, 16).to(dev), w, b)
            assert y.dtype == torch.bfloat16
            loss = F.mse_loss(y.float(), torch.zeros(5, 8, device=dev))
        loss.backward()
        assert w.grad.dtype == torch.float32 and b.grad.dtype == torch.float32
        results.append((w.grad.cpu(), b.grad.cpu()))
    for a, g in zip(*results):
        torch.testing.assert_close(g, a, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("cache", [True, False])
def test_autocast_weight_cache_like_cpu(cache):
    """The cast of a float32 leaf weight that requires grad is cached for the autocast region (unless
    cache_enabled=False): changing the weight in place inside the region is then not seen by the next
    matmul. CPU autocast shares the mechanism; webgpu must behave exactly as it does."""
    outs = []
    for dev in ("cpu", DEV):
        w = rnd(4, 4, seed=1).to(dev).requires_grad_()
        x = rnd(2, 4).to(dev)
        with torch.autocast(dev, dtype=torch.bfloat16, cache_enabled=cache):
            y1 = x @ w
            with torch.no_grad():
                w.mul_(2.0)
            y2 = x @ w
        with torch.autocast(dev, dtype=torch.bfloat16, cache_enabled=cache):
            y3 = x @ w  # a new region: the cache was cleared at exit
        outs.append([t.float().cpu() for t in (y1, y2, y3)])
    (c1, c2, c3), (g1, g2, g3) = outs
    assert torch.equal(c2, c1) == cache  # the stale cached cast on CPU
    assert torch.equal(g2, g1) == cache
    torch.testing.assert_close(g2, c2, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(g3, 2 * g1, rtol=1e-2, atol=1e-2)


def test_custom_fwd_bwd():
    seen = {}

    class Scale(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type=DEV, cast_inputs=torch.float32)
        def forward(ctx, a, w):
            seen["fwd"] = (a.dtype, w.dtype, torch.is_autocast_enabled(DEV))
            ctx.save_for_backward(a, w)
            return a @ w

        @staticmethod
        @torch.amp.custom_bwd(device_type=DEV)
        def backward(ctx, g):
            a, w = ctx.saved_tensors
            seen["bwd"] = torch.is_autocast_enabled(DEV)
            return g @ w.t(), a.t() @ g

    class Plain(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type=DEV)
        def forward(ctx, a):
            seen["plain"] = torch.is_autocast_enabled(DEV), torch.get_autocast_dtype(DEV)
            return a * 2

        @staticmethod
        @torch.amp.custom_bwd(device_type=DEV)
        def backward(ctx, g):
            seen["plain_bwd"] = torch.is_autocast_enabled(DEV), torch.get_autocast_dtype(DEV)
            return g * 2

    a = rnd(3, 4).to(DEV).half().requires_grad_()
    w = rnd(4, 2, seed=1).to(DEV).requires_grad_()
    with torch.autocast(DEV):
        out = Scale.apply(a, w)
        p = Plain.apply(rnd(2).to(DEV).requires_grad_())
    # cast_inputs: float32 inputs, autocast off inside forward, so the matmul is float32
    assert seen["fwd"] == (torch.float32, torch.float32, False) and out.dtype == torch.float32
    assert seen["plain"] == (True, torch.float16)
    out.sum().backward()
    p.sum().backward()
    assert seen["bwd"] is False  # backward runs with forward's autocast state
    assert seen["plain_bwd"] == (True, torch.float16)
    assert a.grad.dtype == torch.float16 and w.grad.dtype == torch.float32


# ---------------------------------------------------------------- GradScaler's device ops


def _bits(t):
    return t.contiguous().view(torch.int16 if t.element_size() == 2 else torch.int32)


def _unscale_cases():
    """name -> fn(device) -> grads (views of tensors on that device where the case needs strides)."""
    g = torch.Generator().manual_seed(3)
    base = torch.randn(7, 9, generator=g) * 1000
    with_inf = base.clone()
    with_inf[3, 4] = float("inf")
    with_nan = base.clone()
    with_nan[0, 0] = float("nan")
    return {
        "f32": lambda d: [base.to(d), (base[:, 1:] * 3).to(d)],
        "f16": lambda d: [base.half().to(d), (base * 0.01).half().to(d)],
        "bf16": lambda d: [base.bfloat16().to(d)],
        "mixed": lambda d: [base.to(d), base.half().to(d), base.bfloat16().to(d)],
        "inf_f16": lambda d: [base.half().to(d), with_inf.half().to(d)],
        "inf_bf16": lambda d: [with_inf.bfloat16().to(d)],
        "nan_f32": lambda d: [with_nan.to(d), base.to(d)],
        "f16_overflowed": lambda d: [(base * 100).half().to(d)],  # 1000 * 100 overflows half: infs
        # dense in another order (done in place), and strided views (through a contiguous copy)
        "noncontig": lambda d: [
            base.clone().to(d).t(),
            base.clone().to(d)[:, ::2],
            base.half().to(d)[1:, 2:5],
            base.bfloat16().to(d).t()[::3],
        ],
        "zero_numel": lambda d: [torch.empty(0, 4).to(d), base.to(d)],
    }


@pytest.mark.parametrize("case", list(_unscale_cases()))
@pytest.mark.parametrize("inv", [0.5, 1.0 / 3.0, 1.0, 2.0**-20])
def test_unscale_matches_cpu_bitwise(case, inv):
    make = _unscale_cases()[case]
    cpu, dev = make("cpu"), make(DEV)
    cf, df = torch.zeros(1), torch.zeros(1, device=DEV)
    inv_t = torch.tensor([inv]).float()
    torch._amp_foreach_non_finite_check_and_unscale_(cpu, cf, inv_t)
    torch._amp_foreach_non_finite_check_and_unscale_(dev, df, inv_t.to(DEV))
    assert df.item() == cf.item()
    for c, d in zip(cpu, dev):
        assert d.dtype == c.dtype and d.stride() == c.stride()
        # NaN payloads are the hardware's (NVIDIA returns its canonical NaN, as CUDA does): NaNs
        # where CPU has them, every other element bitwise CPU's.
        dc, nan = d.cpu(), torch.isnan(c)
        assert torch.equal(torch.isnan(dc), nan), (case, c.dtype)
        assert torch.equal(_bits(dc)[~nan], _bits(c)[~nan]), (case, c.dtype)


def test_unscale_views_write_only_their_elements():
    base = torch.arange(40.0).reshape(5, 8)
    cpu, dev = base.clone(), base.to(DEV)
    cf, df = torch.zeros(1), torch.zeros(1, device=DEV)
    torch._amp_foreach_non_finite_check_and_unscale_([cpu[1:4, 2:6], cpu[:, 7]], cf, torch.tensor([0.25]))
    torch._amp_foreach_non_finite_check_and_unscale_([dev[1:4, 2:6], dev[:, 7]], df, torch.tensor([0.25], device=DEV))
    assert torch.equal(dev.cpu(), cpu) and df.item() == cf.item() == 0.0


def test_unscale_found_inf_is_only_ever_set():
    # found_inf is never cleared by the op (the caller zeroes it), and stays 0 when all is finite
    df = torch.ones(1, device=DEV)
    torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(3000, device=DEV)], df, torch.ones(1, device=DEV))
    assert df.item() == 1.0
    df.zero_()
    torch._amp_foreach_non_finite_check_and_unscale_(
        [torch.ones(3000, device=DEV)], df, torch.full((1,), 2.0, device=DEV)
    )
    assert df.item() == 0.0
    torch._amp_foreach_non_finite_check_and_unscale_([], df, torch.full((1,), 2.0, device=DEV))  # empty: nothing


def test_amp_ops_do_not_synchronize():
    res = []
    for dev in ("cpu", DEV):
        grads = [rnd(64, 64).to(dev), rnd(33).to(dev).half(), rnd(10, 10).to(dev).t()]
        found, inv = torch.zeros(1, device=dev), torch.full((1,), 0.125, device=dev)
        scale, tracker = torch.full((), 1024.0, device=dev), torch.zeros((), dtype=torch.int32, device=dev)
        if dev == DEV:
            torch.webgpu.synchronize()
            torch.webgpu.reset_stream_counters()
        for _ in range(3):
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
            torch._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 2)
        inv2 = torch.ops.webgpu._amp_inv_scale(scale) if dev == DEV else scale.double().reciprocal().float()
        if dev == DEV:
            assert torch.webgpu.stream_counters()["readbacks"] == 0
        res.append((scale.item(), tracker.item(), inv2.item(), [g.cpu() for g in grads]))
    assert res[0][:3] == res[1][:3]
    for c, g in zip(res[0][3], res[1][3]):
        assert torch.equal(g, c)


def test_amp_ops_bad_input():
    g = [torch.ones(3, device=DEV)]
    f, inv = torch.zeros(1, device=DEV), torch.ones(1, device=DEV)
    with pytest.raises(RuntimeError, match="inv_scale must be a webgpu tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, f, torch.ones(1))
    with pytest.raises(RuntimeError, match="found_inf must be a webgpu tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, torch.zeros(1), inv)
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, f.half(), inv)
    with pytest.raises(RuntimeError, match="inv_scale must be a 1-element tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, f, torch.ones(2, device=DEV))
    with pytest.raises(RuntimeError, match="float32, float16 or bfloat16"):
        torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(3, dtype=torch.int32, device=DEV)], f, inv)
    with pytest.raises(RuntimeError, match="one of scaled_grads was not a webgpu tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(3, device=DEV), torch.ones(3)], f, inv)
    s, t = torch.ones((), device=DEV), torch.zeros((), dtype=torch.int32, device=DEV)
    with pytest.raises(RuntimeError, match="current_scale must be a webgpu tensor"):
        torch._amp_update_scale_(torch.ones(()), t, f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="growth_tracker must be an int tensor"):
        torch._amp_update_scale_(s, t.float(), f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="current_scale must be a float tensor"):
        torch._amp_update_scale_(s.half(), t, f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="found_inf must be a webgpu tensor"):
        torch._amp_update_scale_(s, t, torch.zeros(1), 2.0, 0.5, 2)
    assert s.item() == 1.0 and t.item() == 0  # nothing ran


def test_inv_scale_matches_cpu_double_reciprocal():
    """GradScaler.unscale_'s inv_scale = scale.double().reciprocal().float(); on webgpu it comes from
    webgpu::_amp_inv_scale, which must give the same bits (normal, subnormal, huge, 0, inf)."""
    g = torch.Generator().manual_seed(9)
    vals = torch.cat(
        [
            torch.tensor([65536.0, 3.0, 1.001, 0.3, 1e-38, 1.5e-45, 3e38, 8.5e37, 0.0, -0.0, float("inf"), -7.25]),
            torch.rand(200, generator=g) * 2.0 ** torch.randint(-60, 60, (200,), generator=g),
        ]
    )
    dv = vals.to(DEV)
    got = torch.stack([torch.ops.webgpu._amp_inv_scale(dv[i]) for i in range(len(vals))]).cpu()
    ref = vals.double().reciprocal().float()
    assert torch.equal(got.view(torch.int32), ref.view(torch.int32))


def test_update_scale_matches_cpu_bitwise():
    """Every branch, and factors that are not float32 numbers: CUDA and CPU multiply the float scale
    by the double factor and round once to float; the kernel must give the same bits."""
    g = torch.Generator().manual_seed(5)
    scales = [65536.0, 1.0, 3.0e38, 1.5e-45, 1.2e-38, 7.0, 0.1, float("inf"), 0.0]
    scales += (torch.rand(12, generator=g) * 2.0 ** torch.randint(-40, 40, (12,), generator=g)).tolist()
    factors = [
        (2.0, 0.5),
        (1.001, 0.3),
        (1.0 + 2.0**-30, 1.0 / 3.0),
        (3.7, 0.999999999),
        (1e30, 1e-30),
        (1.0000001192092896, 0.99999994),
    ]
    cases = []
    for s in scales:
        for gf, bf in factors:
            for found in (0.0, 1.0, float("nan"), -0.0):
                for tracker, interval in ((0, 1), (2, 3), (0, 3), (5, 2)):
                    cases.append((s, gf, bf, found, tracker, interval))
    # one batch per device: every case's tensors, updated, then read together
    outs = []
    for dev in ("cpu", DEV):
        sc = torch.tensor([c[0] for c in cases], dtype=torch.float32, device=dev)
        tr = torch.tensor([c[4] for c in cases], dtype=torch.int32, device=dev)
        fi = torch.tensor([c[3] for c in cases], dtype=torch.float32, device=dev)
        for i, (_, gf, bf, _, _, interval) in enumerate(cases):
            torch._amp_update_scale_(sc[i], tr[i], fi[i], gf, bf, interval)
        outs.append((sc.cpu().view(torch.int32), tr.cpu()))
    (cs, ct), (ds, dt) = outs
    bad = [
        (cases[i], hex(cs[i].item()), hex(ds[i].item()))
        for i in range(len(cases))
        if cs[i] != ds[i]
        and not (
            math.isnan(cs[i : i + 1].view(torch.float32).item())
            and math.isnan(ds[i : i + 1].view(torch.float32).item())
        )
    ]
    assert not bad, bad[:5]
    assert torch.equal(dt, ct)


# ---------------------------------------------------------------- a CUDA AMP training loop


class TinyGPT(nn.Module):
    def __init__(self, vocab=24, d=32, heads=2, ctx=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(ctx, d) * 0.02)
        self.block = nn.TransformerEncoderLayer(
            d, heads, dim_feedforward=64, dropout=0.0, batch_first=True, norm_first=True
        )
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(ctx), persistent=False)

    def forward(self, idx):
        h = self.tok(idx) + self.pos[: idx.shape[1]]
        h = self.block(h, src_mask=self.mask[: idx.shape[1], : idx.shape[1]], is_causal=True)
        return self.head(self.ln(h))


def _data(steps, batch=4, ctx=8, vocab=24):
    g = torch.Generator().manual_seed(11)
    # a learnable sequence task: next token = (token + 1) mod vocab, from random starts
    start = torch.randint(0, vocab, (steps, batch, 1), generator=g)
    seq = (start + torch.arange(ctx + 1)) % vocab
    return seq[..., :-1], seq[..., 1:]


def train(device, steps=20, amp_dtype=torch.float16, use_scaler=True, inf_at=(), init_scale=2.0**12, growth_interval=5):
    """The usual CUDA AMP loop, written once for any device string."""
    torch.manual_seed(0)
    model = TinyGPT().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler(device, init_scale=init_scale, growth_interval=growth_interval, enabled=use_scaler)
    xs, ys = _data(steps)
    losses, scales, skipped = [], [], []
    for step in range(steps):
        x, y = xs[step].to(device), ys[step].to(device)
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device, dtype=amp_dtype, enabled=amp_dtype is not None):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        if amp_dtype is not None:
            assert logits.dtype == amp_dtype
            assert loss.dtype == torch.float32 or device == "cpu"
        before = [p.detach().to("cpu", copy=True) for p in model.parameters()]  # (aten::equal has no webgpu kernel yet)
        scaled = scaler.scale(loss)
        if step in inf_at:
            scaled = scaled * float("inf")
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
        skipped.append(all(torch.equal(b, p.detach().cpu()) for b, p in zip(before, model.parameters())))
    return losses, scales, skipped, scaler.state_dict(), model


@pytest.mark.parametrize("amp_dtype", LOW, ids=["f16", "bf16"])
def test_amp_training_loop_matches_cpu(amp_dtype):
    """20 SGD-momentum steps of a tiny causal transformer under autocast + GradScaler, on webgpu and on
    CPU (CPU autocast in the same dtype, CPU's GradScaler). SGD, not Adam: Adam is blind to a gradient
    scale, SGD diverges if the scaler's unscaling is wrong. Tolerance: the two autocast policies differ
    (CUDA's, which webgpu follows, runs softmax, layer_norm and the loss in float32; CPU's keeps some of
    them in the low dtype) and any low-precision rounding may differ by an ulp (float16 2^-11, bfloat16
    2^-8 relative), compounding over the steps. Measured on lavapipe: at most 9e-4 (f16) and 1.5e-3
    (bf16) relative per-step loss difference against CPU, 3e-4 / 2.3e-3 against webgpu float32. Bounds:
    4e-3 (f16, ~8 ulps) and 1e-2 (bf16, ~2.5 ulps), twice that against float32. The loss falls by over
    90% in the run (checked), so a wrong cast policy or scaler shows; the scale sequence is exact."""
    steps = 20
    ref = train("cpu", steps, amp_dtype)
    got = train(DEV, steps, amp_dtype)
    f32 = train(DEV, steps, None, use_scaler=False)
    (rl, rs, rk, rsd, _), (gl, gs, gk, gsd, gm) = ref, got
    assert gs == rs and gk == rk  # same scales, same skipped steps (none expected here)
    assert not any(gk)
    rtol = 4e-3 if amp_dtype == torch.float16 else 1e-2
    torch.testing.assert_close(torch.tensor(gl), torch.tensor(rl), rtol=rtol, atol=0)
    torch.testing.assert_close(torch.tensor(gl), torch.tensor(f32[0]), rtol=2 * rtol, atol=0)
    assert gl[-1] < 0.1 * gl[0]  # it learns: the comparison above is not between flat lines
    assert gsd == rsd
    for p in gm.parameters():
        assert p.dtype == torch.float32 and p.grad.dtype == torch.float32


def test_amp_inf_step_is_skipped_and_scale_backs_off_like_cpu():
    steps = 8
    ref = train("cpu", steps, torch.float16, inf_at=(2, 5, 6), growth_interval=2)
    got = train(DEV, steps, torch.float16, inf_at=(2, 5, 6), growth_interval=2)
    (rl, rs, rk, rsd, _), (gl, gs, gk, gsd, _) = ref, got
    assert gk == rk and [i for i, k in enumerate(gk) if k] == [2, 5, 6]  # exactly the inf steps skipped
    assert gs == rs
    assert gs[2] == gs[1] / 2 and gs[5] == gs[4] / 2 and gs[6] == gs[5] / 2  # backoff 0.5 each time
    assert max(gs) > gs[0]  # and growth (interval 2) in between
    assert gsd == rsd
    torch.testing.assert_close(torch.tensor(gl), torch.tensor(rl), rtol=4e-3, atol=0)


def test_grad_scaler_unscale_clip_and_state_dict():
    """unscale_ before clipping (the documented pattern), then a checkpoint round trip of the scaler."""
    res = []
    for dev in ("cpu", DEV):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scaler = torch.amp.GradScaler(dev, init_scale=256.0, growth_interval=1)
        x, y = rnd(6, 8).to(dev), rnd(6, 4, seed=1).to(dev)
        norms = []
        for _ in range(3):
            opt.zero_grad()
            with torch.autocast(dev, dtype=torch.float16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            norms.append(nn.utils.clip_grad_norm_(model.parameters(), 0.5).item())
            scaler.step(opt)
            scaler.update()
        sd = scaler.state_dict()
        fresh = torch.amp.GradScaler(dev)
        fresh.load_state_dict(sd)
        assert fresh.state_dict() == sd
        assert fresh.get_scale() == scaler.get_scale() == 256.0 * 2**3
        res.append((norms, sd, [p.detach().cpu() for p in model.parameters()]))
    (cn, csd, cp), (gn, gsd, gp) = res
    assert gsd == csd
    torch.testing.assert_close(torch.tensor(gn), torch.tensor(cn), rtol=1e-2, atol=1e-4)
    for a, b in zip(cp, gp):
        torch.testing.assert_close(b, a, rtol=1e-2, atol=1e-3)
