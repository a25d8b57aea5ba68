"""torch.compile on webgpu: Inductor with the WGSL code generator (torch_webgpu/_inductor).

Every test runs with TORCH_WEBGPU_COMPILE_STRICT=1 (a graph the generator cannot compile raises
instead of falling back to the eager kernels) and checks that generated kernels actually ran
(launch counts, pipeline keys), so a test cannot pass on eager kernels alone. Results are compared
with the eager webgpu kernels (and CPU) within the tolerances of the eager tests.
"""

import os
import sys
import warnings

os.environ["TORCH_WEBGPU_COMPILE_STRICT"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402

import torch_webgpu  # noqa: E402
from torch_webgpu._inductor import runtime as rt  # noqa: E402

DEV = "webgpu"


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class Launches:
    def __enter__(self):
        self.start = rt.launches
        return self

    def __exit__(self, *exc):
        self.n = rt.launches - self.start


def close(a, b, rtol=1e-4, atol=1e-5):
    torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), rtol=rtol, atol=atol, equal_nan=True)


def test_fused_pointwise_chain_is_one_kernel():
    def f(x, w, b):
        return torch.nn.functional.gelu(x * w + b) * 0.5

    x, w, b = (torch.randn(s) for s in [(64, 300), (300,), (300,)])
    cf = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)
    with Launches() as n:
        y = cf(x.to(DEV), w.to(DEV), b.to(DEV))
    assert n.n == 1  # mul, add, gelu, mul: one generated kernel
    close(y, f(x, w, b))
    close(y, f(x.to(DEV), w.to(DEV), b.to(DEV)))
    assert any(k.startswith("wgsl:" + rt.KEY_PREFIX) for k in torch_webgpu._C._pipeline_keys(-1))


# --- the vec4 variant of flat pointwise kernels (TORCH_WEBGPU_COMPILE_VEC4=Q; 1 by default) ---


@pytest.fixture
def built(monkeypatch):
    """The runtime.WGSLKernel objects the wrapper modules build during the test."""
    made, orig = [], rt.WGSLKernel.__init__

    def spy(k, *a, **kw):
        orig(k, *a, **kw)
        made.append(k)

    monkeypatch.setattr(rt.WGSLKernel, "__init__", spy)
    return made


def compiled_vec4(monkeypatch, quads, f, *args):
    """f compiled with TORCH_WEBGPU_COMPILE_VEC4=quads (read at code generation: the autouse fixture
    resets Dynamo, so f compiles anew) and run: (result, launches, launches of the vec4 variant)."""
    if quads is None:
        monkeypatch.delenv("TORCH_WEBGPU_COMPILE_VEC4", raising=False)
    else:
        monkeypatch.setenv("TORCH_WEBGPU_COMPILE_VEC4", str(quads))
    n, v = rt.launches, rt.launches_vec4
    got = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(*args)
    return got, rt.launches - n, rt.launches_vec4 - v


def gelu_chain(x, w, b):
    return torch.nn.functional.gelu(x * w + b) * 0.5


@pytest.mark.parametrize("quads", [None, 1, 2, 4])
def test_vec4_gelu_chain_unrolled_lanes(monkeypatch, built, quads):
    """Each invocation moves `quads` vec4s per buffer, strided by the dispatch size; the body is
    unrolled over the 4 lanes with static component accesses. 8204 elements: 2051 quads, not a
    multiple of the 256 * quads a workgroup covers (the last invocations stop early). None: the
    variable unset, one quad by default."""
    x, w, b = (torch.randn(8204) for _ in range(3))
    y, n, n4 = compiled_vec4(monkeypatch, quads, gelu_chain, x.to(DEV), w.to(DEV), b.to(DEV))
    quads = quads or 1
    assert (n, n4) == (1, 1)  # one kernel, launched as its vec4 variant
    (k,) = built
    key, src, _, groups = k._vec4
    assert key.startswith(rt.KEY_PREFIX + "vec4_")
    assert groups == -(-2051 // (256 * quads))
    assert "vb0.w" in src
    assert "vb3.w = " in src  # static components, no dynamic lane index
    assert "& 3" not in src
    assert src.count("let xindex: i32 = t4 * 4i + ") == 4
    assert (f"for (var q: i32 = 0i; q < {quads}i;" in src) == (quads > 1)
    close(y, gelu_chain(x, w, b))
    close(y, gelu_chain(x.to(DEV), w.to(DEV), b.to(DEV)))


def test_vec4_with_ilp(monkeypatch, built):
    """TORCH_WEBGPU_COMPILE_ILP does not change the variant's workgroup count (the launch derived it
    from the scalar kernel's, a quarter of it: with ILP 2 half the quads were never computed)."""
    monkeypatch.setenv("TORCH_WEBGPU_COMPILE_ILP", "2")
    x, w, b = (torch.randn(8192) for _ in range(3))
    for off, vec4 in ((0, 1), (1, 0)):  # the scalar kernel (offset 1) runs 2 elements per invocation
        torch._dynamo.reset()
        args = [t.to(DEV)[off:] for t in (torch.cat([torch.zeros(off), v]) for v in (x, w, b))]
        y, n, n4 = compiled_vec4(monkeypatch, 1, gelu_chain, *args)
        assert (n, n4) == (1, vec4)
        close(y, gelu_chain(x, w, b))
    assert [k._vec4[3] for k in built] == [8, 8]


@pytest.mark.parametrize("quads", [1, 4])
def test_vec4_int32_and_mixed_dtypes(monkeypatch, built, quads):
    def f(x, i, j):
        return (i * 3 + j) // 7 - (i & 5), (x * 4).to(torch.int32) + i, x + i.float()

    x = torch.randn(2052) * 50
    i, j = (torch.randint(-1000, 1000, (2052,), dtype=torch.int32) for _ in range(2))
    got, n, n4 = compiled_vec4(monkeypatch, quads, f, x.to(DEV), i.to(DEV), j.to(DEV))
    assert n >= 1 and n4 == n
    assert any("vec4<i32>" in k._vec4[1] and "vec4<f32>" in k._vec4[1] for k in built)  # f32 and i32 buffers
    want = f(x, i, j)
    for g, e in zip(got, want):
        assert g.dtype == e.dtype
        close(g, e, rtol=1e-6, atol=0)


@pytest.mark.parametrize("case", ["turned_off", "length_not_multiple_of_4", "broadcast", "padding"])
def test_vec4_not_taken(monkeypatch, built, case):
    """Kernels the variant does not apply to: the environment variable 0, a length not divisible
    by 4, a broadcast operand (its index is not the flat index), a masked load of a buffer shorter
    than the range (constant padding: its last vec4 would read past the buffer)."""
    quads, f, args = {
        "turned_off": (0, gelu_chain, [torch.randn(4096) for _ in range(3)]),
        "length_not_multiple_of_4": (1, gelu_chain, [torch.randn(4094) for _ in range(3)]),
        "broadcast": (1, gelu_chain, [torch.randn(64, 300), torch.randn(300), torch.randn(300)]),
        "padding": (1, lambda x: torch.nn.functional.pad(x, (0, 4)) * 2, [torch.randn(4092)]),
    }[case]
    y, n, n4 = compiled_vec4(monkeypatch, quads, f, *[a.to(DEV) for a in args])
    assert n >= 1 and n4 == 0
    assert built and all(k._vec4 is None for k in built)
    close(y, f(*args))


def test_vec4_unaligned_offsets_take_the_scalar_kernel(monkeypatch, built):
    """A launch whose storage offsets are not all multiples of 4 takes the scalar kernel; offsets of
    4 take the variant. Both agree with CPU."""
    base = torch.randn(3 * 4104)
    X = base.to(DEV)
    cf = None
    for off, vec4 in ((1, 0), (4, 1), (0, 1)):
        views = [X[s + off : s + off + 4096] for s in (0, 4104, 8208)]
        if cf is None:
            monkeypatch.setenv("TORCH_WEBGPU_COMPILE_VEC4", "1")
            cf = torch.compile(gelu_chain, backend=torch_webgpu._inductor.compile_fx_webgpu)
        n, v = rt.launches, rt.launches_vec4
        y = cf(*views)
        assert (rt.launches - n, rt.launches_vec4 - v) == (1, vec4), off
        close(y, gelu_chain(*[base[s + off : s + off + 4096] for s in (0, 4104, 8208)]))
    assert len(built) == 1  # one compiled kernel served every offset
    keys = {k for k in torch_webgpu._C._pipeline_keys(-1) if rt.KEY_PREFIX in k}
    assert any(built[0].key in k for k in keys) and any(built[0]._vec4[0] in k for k in keys)


@pytest.mark.parametrize("off", [0, 4, 1])
def test_vec4_in_place_mutation(monkeypatch, built, off):
    """A mutated graph input (one read-write binding) through the variant: its neighbours in the
    storage, outside the view, are untouched; offset 1 takes the scalar kernel."""

    def f(x, w):
        x.add_(1)
        return x * w

    base, w = torch.randn(4104), torch.randn(4096)
    B = base.to(DEV)
    y, n, n4 = compiled_vec4(monkeypatch, 2, f, B[off : off + 4096], w.to(DEV))
    assert n >= 1 and n4 == (n if off % 4 == 0 else 0)
    assert any(k._vec4 is not None for k in built)
    want = base.clone()
    close(y, f(want[off : off + 4096], w))
    close(B, want, rtol=0, atol=0)


def test_vec4_source_is_dumped(monkeypatch, capfd):
    """TORCH_WEBGPU_DUMP_WGSL=1 prints each new pipeline's WGSL, the vec4 variant's included."""
    monkeypatch.setenv("TORCH_WEBGPU_DUMP_WGSL", "1")
    x = torch.randn(1028)
    y, _, n4 = compiled_vec4(monkeypatch, 1, lambda x: torch.sigmoid(x * 0.7311) - 0.25, x.to(DEV))
    torch.webgpu.synchronize()
    assert n4 == 1
    err = capfd.readouterr().err
    assert rt.KEY_PREFIX + "vec4_" in err and "vb0.w" in err and "vb1.w = " in err
    close(y, torch.sigmoid(x * 0.7311) - 0.25)


def test_default_torch_compile_uses_wgsl_backend():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 4))
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 4))
    m.load_state_dict(ref.state_dict())
    m.to(DEV)
    x = torch.randn(8, 16)
    with warnings.catch_warnings(record=True) as caught, Launches() as n:
        warnings.simplefilter("always")
        y = torch.compile(m)(x.to(DEV))
        y.square().sum().backward()
    assert not [w for w in caught if "aot_eager" in str(w.message) or "eager kernels" in str(w.message)]
    assert n.n >= 2  # forward and backward each ran generated kernels
    want = ref(x)
    want.square().sum().backward()
    close(y, want)
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p.grad, q.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "name",
    [
        "softmax",
        "log_softmax",
        "log_softmax0",
        "layer_norm",
        "sum",
        "mean_keep",
        "amax",
        "var",
        "sum_all",
        "prod",
        "any",
        "softmax_short",
        "var_short",
        "argmax",
        "argmin_short",
    ],
)
def test_reductions_fused_with_prologue_epilogue(name):
    fns = {
        "softmax": lambda x: torch.softmax(x * 2.0, -1),
        "log_softmax": lambda x: torch.log_softmax(x, -1),
        "log_softmax0": lambda x: torch.log_softmax(x, 0),
        "layer_norm": lambda x: torch.nn.functional.layer_norm(x, (x.shape[-1],)) * 3 + 1,
        "sum": lambda x: (x.exp() - 1).sum(1),
        "mean_keep": lambda x: x - x.mean(-1, keepdim=True),
        "amax": lambda x: torch.amax(torch.abs(x), 0),
        "var": lambda x: torch.var(x, 1),
        "sum_all": lambda x: torch.sigmoid(x).sum(),
        "prod": lambda x: (x * 0.1 + 1).prod(-1),
        "any": lambda x: (x > 2.5).any(-1),
        "softmax_short": lambda x: torch.softmax(x.view(-1, 8), -1),  # rows of 8: one invocation per row
        "var_short": lambda x: torch.var_mean(x.view(-1, 20), -1)[0],
        "argmax": lambda x: (x * 2).argmax(-1),
        "argmin_short": lambda x: torch.min(x.view(-1, 10), -1),
    }
    f = fns[name]
    x = torch.randn(37, 1000)
    x[3, 7] = float("nan") if name in ("amax", "argmax") else x[3, 7]
    x[5, 20] = x[5, 21] = 9.0  # a tie: the first index wins
    with Launches() as n:
        y = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(x.to(DEV))
    assert n.n >= 1
    if name in ("softmax", "log_softmax", "layer_norm", "mean_keep", "sum", "softmax_short"):
        assert n.n == 1, n.n  # prologue, reduction(s) and epilogue in one kernel
    want = f(x)
    for g, w in zip(y, want) if isinstance(want, tuple) else [(y, want)]:
        close(g, w, rtol=2e-4, atol=2e-4)


def test_dynamic_shapes_symbolic_sizes_as_parameters():
    def f(x):
        return torch.relu(x) * x.sum(-1, keepdim=True)

    cf = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu, dynamic=True)
    srcs = []
    orig = rt.WGSLKernel.__init__

    def spy(self, name, source, *a, **k):
        srcs.append(source)
        orig(self, name, source, *a, **k)

    rt.WGSLKernel.__init__ = spy
    try:
        for shape in [(5, 7), (9, 300), (2, 1)]:
            x = torch.randn(shape)
            with Launches() as n:
                y = cf(x.to(DEV))
            assert n.n >= 1
            close(y, f(x))
    finally:
        rt.WGSLKernel.__init__ = orig
    assert srcs and all("P_ks(" in s for s in srcs)  # sizes are kernel parameters
    assert len(srcs) <= 2  # one compile served every shape (at most one kernel pair)


def test_dtypes_bool_half_int():
    def f(x, h, i):
        m = x > 0
        return m, (h.float() * 2).half(), i * 3 + 1, torch.where(m, x, h.float())

    x = torch.randn(33, 17)
    h = torch.randn(33, 17).half()
    i = torch.randint(-100, 100, (33, 17), dtype=torch.int32)
    with Launches() as n:
        got = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(x.to(DEV), h.to(DEV), i.to(DEV))
    assert n.n >= 1
    for g, w in zip(got, f(x, h, i)):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g.cpu(), w)


def test_small_int_arithmetic_wraps_per_op():
    def f(a, b, u):
        return (a + b) > 0, a * b, (a + b).to(torch.int32), u + 100

    a = torch.tensor([100, -100, 50, 127], dtype=torch.int8)
    b = torch.tensor([100, -100, 10, 1], dtype=torch.int8)
    u = torch.tensor([200, 10, 3, 255], dtype=torch.uint8)
    with Launches() as n:
        got = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(a.to(DEV), b.to(DEV), u.to(DEV))
    assert n.n >= 1
    for g, w in zip(got, f(a, b, u)):
        assert torch.equal(g.cpu(), w)


def test_int64_exact():
    def f(x, i):
        return (x.long() * 3_000_000_000 + i).sum(-1), torch.where(i > 2**33, i - 1, i * 2)

    x = torch.randint(-50, 50, (6, 9)).float()
    i = torch.randint(-(2**40), 2**40, (6, 9))
    with Launches() as n:
        got = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(x.to(DEV), i.to(DEV))
    assert n.n >= 1
    for g, w in zip(got, f(x, i)):
        assert torch.equal(g.cpu(), w)


def test_indirect_index_out_of_range_raises_like_eager():
    emb = torch.nn.Embedding(61, 8).to(DEV)
    f = torch.compile(lambda i: emb(i) * 2, backend=torch_webgpu._inductor.compile_fx_webgpu)
    ok = torch.tensor([0, 60, 5, 7])
    with Launches() as n:
        close(f(ok.to(DEV)), emb.weight.detach().cpu()[ok] * 2)
    assert n.n == 1  # the gather is a generated kernel
    # (a negative index is version-dependent: torch 2.11's Inductor wraps it for embedding, 2.13's does not)
    for bad in ([1, 61, 2, 3], [2**33 + 1, 0, 0, 0]):
        with pytest.raises(IndexError, match="out of bounds"):
            f(torch.tensor(bad).to(DEV)).cpu()
    close(f(ok.to(DEV)), emb.weight.detach().cpu()[ok] * 2)  # the device is fine afterwards


def test_many_inputs_split_across_kernels():
    xs = [torch.randn(100) for _ in range(24)]

    def f(*xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = acc * 0.9 + torch.sin(x)
        return acc

    with Launches() as n:
        y = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(*[x.to(DEV) for x in xs])
    assert 2 <= n.n <= 4  # fusion stops before a kernel would need more than 16 storage bindings
    close(y, f(*xs))


def test_strided_and_offset_inputs():
    def f(a, b):
        return a * 2 + b

    base = torch.randn(20, 30)
    a, b = base[2:12, 3:20], base.t()[5:15, 1:18]
    with Launches() as n:
        y = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(
            base.to(DEV)[2:12, 3:20], base.to(DEV).t()[5:15, 1:18]
        )
    assert n.n == 1
    close(y, f(a, b))


def test_unsupported_graph_falls_back_with_warning(monkeypatch):
    monkeypatch.setenv("TORCH_WEBGPU_COMPILE_STRICT", "0")

    def f(x):
        return torch.nextafter(x * 2, x)  # nextafter has no generated form

    x = torch.randn(6, 9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(x.to(DEV))
    assert any("eager kernels" in str(w.message) for w in caught), [str(w.message) for w in caught]
    torch.testing.assert_close(y.cpu(), f(x))


def test_cnn_training_step(monkeypatch):
    # CI=1 as CI systems set it: Inductor's implicit fallbacks then refuse ops that have a
    # decomposition, which training batch_norm (kept undecomposed, backend._EAGER_OPS) has.
    monkeypatch.setenv("CI", "1")
    torch.manual_seed(0)

    def make():
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Flatten(),
            torch.nn.Linear(8 * 4 * 4, 10),
        )

    ref = make()
    m = make()
    m.load_state_dict(ref.state_dict())
    m.to(DEV)
    x, t = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))

    def step(model, x, t):
        loss = torch.nn.functional.cross_entropy(model(x), t)
        loss.backward()
        return loss

    os.environ["TORCH_WEBGPU_COMPILE_STRICT"] = "0"  # nll_loss / max_pool indices are int64: those graphs may fall back
    try:
        with Launches() as n, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = torch.compile(step)(m, x.to(DEV), t.to(DEV))
    finally:
        os.environ["TORCH_WEBGPU_COMPILE_STRICT"] = "1"
    fell_back = [str(w.message) for w in caught if "eager kernels" in str(w.message)]
    assert n.n >= 1, fell_back
    assert not any("batch_norm" in w for w in fell_back), fell_back
    want = step(ref, x, t)
    close(loss, want, rtol=1e-4, atol=1e-4)
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p.grad, q.grad, rtol=1e-3, atol=1e-4)
    close(m[1].running_mean, ref[1].running_mean)
    close(m[1].running_var, ref[1].running_var)


# --- what a compiled call costs beyond its kernels (the Stream's counters; issue 16) ---


def counter_delta(fn, calls):
    """The Stream's counters over `calls` calls of fn (after the GPU finished what came before)."""
    torch.webgpu.synchronize()
    c0 = dict(torch_webgpu._C._stream_counters())
    for _ in range(calls):
        fn()
    c1 = dict(torch_webgpu._C._stream_counters())
    return {k: c1[k] - c0[k] for k in c1}


def test_fused_chain_is_one_dispatch_per_call_without_new_bind_groups():
    """A warm compiled pointwise chain costs one dispatch per call and nothing else: no copies,
    uploads, readbacks or waits, and its bind groups come from the cache (the output alternates
    between two blocks of the allocator)."""
    x, w, b = (torch.randn(4096) for _ in range(3))
    xd, wd, bd = x.to(DEV), w.to(DEV), b.to(DEV)
    cf = torch.compile(gelu_chain, backend=torch_webgpu._inductor.compile_fx_webgpu)
    torch.webgpu.empty_cache()  # no cached blocks of other tests in the rotation of the output's block
    out = [None]

    def call():
        out[0] = cf(xd, wd, bd)

    for _ in range(3):
        call()
    with Launches() as n:
        d = counter_delta(call, 5)
    assert n.n == 5
    assert d["dispatches"] == 5
    assert d["bind_groups_created"] == 0
    assert (d["copies"], d["uploads"], d["readbacks"], d["waits"]) == (0, 0, 0, 0)
    close(out[0], gelu_chain(x, w, b))


def _small_cnn():
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        # more than 64 channels: Inductor would pick channels-last for it (decide_layout_opt)
        nn.Conv2d(8, 72, 3, padding=1, bias=False),
        nn.BatchNorm2d(72),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(72, 10),
    )


def test_compiled_training_step_no_host_sync_and_fewer_dispatches(monkeypatch):
    """A warm compiled training step (forward, cross-entropy, backward, SGD with momentum) never
    waits for the GPU (no readback, no wait, no upload), records no more dispatches than the same
    eager step but for batch_norm's running-statistics copies, and hands the eager convolutions contiguous (NCHW) operands: Inductor's channels-last
    layout optimisation is off for webgpu graphs (the eager convolutions would copy channels-last
    operands back, after Inductor's own copies to channels-last)."""
    from torch._inductor.select_algorithm import extern_kernels

    ref, m = _small_cnn(), _small_cnn()
    m.to(DEV)
    x, t = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    xd, td = x.to(DEV), t.to(DEV)
    conv_layouts = []
    orig_conv = extern_kernels.convolution

    def conv(inp, weight, *a, **k):
        conv_layouts.append(inp.is_contiguous() and weight.is_contiguous())
        return orig_conv(inp, weight, *a, **k)

    monkeypatch.setattr(extern_kernels, "convolution", conv)

    def make_step(model, loss_fn):
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def step(x, t):
            loss = loss_fn(model(x), t)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss

        return step

    ce = torch.nn.functional.cross_entropy
    compiled_model = torch.compile(m, backend=torch_webgpu._inductor.compile_fx_webgpu)
    compiled = make_step(compiled_model, ce)
    eager_m = _small_cnn().to(DEV)
    eager = make_step(eager_m, ce)
    ref_step = make_step(ref, ce)
    want = [ref_step(x, t).item() for _ in range(5)]
    got = [compiled(xd, td).item() for _ in range(3)]  # compiles and warms up
    eager(xd, td)
    eager(xd, td)
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want[:3]), rtol=1e-4, atol=1e-4)
    assert conv_layouts and all(conv_layouts), conv_layouts
    with Launches() as n:
        dc = counter_delta(lambda: compiled(xd, td), 2)
    de = counter_delta(lambda: eager(xd, td), 2)
    assert n.n >= 2 * 6  # generated kernels ran in the forward and the backward
    assert (dc["readbacks"], dc["waits"], dc["uploads"]) == (0, 0, 0), dc
    # Training batch_norm stays a call to the eager per-channel kernels (backend.py, _EAGER_OPS); its
    # functional form copies the running statistics in and back out: 4 small copies per layer and
    # step, the only dispatches the compiled step may add to the eager step's.
    copies = 4 * sum(isinstance(x, torch.nn.BatchNorm2d) for x in m) * 2
    assert dc["dispatches"] <= de["dispatches"] + copies, (dc["dispatches"], de["dispatches"], copies)
    for p, q in zip(m.parameters(), ref.parameters()):  # both after 5 steps
        close(p, q, rtol=1e-3, atol=1e-4)
    close(m[1].running_var, ref[1].running_var)


# --- OpInfo samples through torch.compile (a bounded subset: pointwise and reduction entries) ---

OPINFO_F32 = [
    "add",
    "mul",
    "sub",
    "div",
    "neg",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "sin",
    "erf",
    "pow",
    "maximum",
    "clamp",
    "where",
    "remainder",
    "atan2",
    "lerp",
    "nan_to_num",
    "nn.functional.silu",
    "nn.functional.gelu",
    "nn.functional.mish",
    "sum",
    "mean",
    "amax",
    "amin",
    "argmax",
    "var",
    "std",
    "softmax",
    "log_softmax",
    "logsumexp",
    "norm",
    "nn.functional.layer_norm",
    "nn.functional.cross_entropy",
    "roll",
    "nn.functional.adaptive_avg_pool2d",
    "nn.functional.upsample_bilinear",
    "lgamma",
    "digamma",
    "special.i0e",
    "nn.functional.avg_pool1d",
]
OPINFO_OTHER = [
    ("fmod", torch.int32),
    ("remainder", torch.int64),
    ("floor_divide", torch.int64),
    ("bitwise_xor", torch.bool),
    ("sum", torch.bool),
    ("mul", torch.float16),
    ("softmax", torch.float16),
    ("bitwise_left_shift", torch.int64),
    ("amax", torch.int32),
]


def _opinfo_cases():
    from torch.testing._internal.common_methods_invocations import op_db

    by_name = {}
    for op in op_db:
        if op.variant_test_name == "" and op.name not in by_name:
            by_name[op.name] = op
    cases = [(n, torch.float32) for n in OPINFO_F32] + OPINFO_OTHER
    return [pytest.param(by_name[n], d, id=f"{n}-{str(d).split('.')[-1]}") for n, d in cases if n in by_name]


@pytest.mark.parametrize("op,dtype", _opinfo_cases())
def test_opinfo_samples_compiled_match_eager(op, dtype):
    samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    samples = [s for s in samples if s.input.numel() > 0][:2]
    if not samples:
        pytest.skip("no non-empty samples")

    def mv(v):
        return v.to(DEV) if isinstance(v, torch.Tensor) else v

    for s in samples:
        torch._dynamo.reset()
        args = [mv(a) for a in s.args]
        kwargs = {k: mv(v) for k, v in s.kwargs.items()}
        inp = mv(s.input)

        def f(x, *a):
            return op.op(x, *a, **kwargs)

        eager = f(inp, *args)
        with Launches() as n:
            got = torch.compile(f, backend=torch_webgpu._inductor.compile_fx_webgpu)(inp, *args)
        flat_e = eager if isinstance(eager, (tuple, list)) else [eager]
        flat_g = got if isinstance(got, (tuple, list)) else [got]
        if any(isinstance(t, torch.Tensor) and t.numel() > 0 for t in flat_g):
            assert n.n >= 1, f"{op.name}: no generated kernel ran"
        for g, e in zip(flat_g, flat_e):
            torch.testing.assert_close(g.cpu(), e.cpu(), rtol=2e-4, atol=2e-5, equal_nan=True)


def test_example_gpt_forward_backward():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    from gpt import GPT

    torch.manual_seed(0)
    ref = GPT(vocab=61, d=32, heads=4, layers=2, ctx=16)
    m = GPT(vocab=61, d=32, heads=4, layers=2, ctx=16)
    m.load_state_dict(ref.state_dict())
    m.to(DEV)
    idx, tgt = torch.randint(0, 61, (2, 16)), torch.randint(0, 61, (2, 16))

    def loss_fn(model, idx, tgt):
        return torch.nn.functional.cross_entropy(model(idx).reshape(-1, 61), tgt.reshape(-1))

    with Launches() as n:
        loss = torch.compile(loss_fn)(m, idx.to(DEV), tgt.to(DEV))
        loss.backward()
    assert n.n >= 2
    want = loss_fn(ref, idx, tgt)
    want.backward()
    close(loss, want, rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        close(p.grad, q.grad, rtol=1e-3, atol=2e-5)


def test_gpt_blocks_fuse_split_k_sums_and_epilogues(monkeypatch):
    """A GPT-2-shaped forward (examples/gpt.py: pre-LayerNorm blocks, fused qkv projection, causal
    attention, GELU MLP; d=128 so the projections' GEMMs split K): the split-K GEMMs become one batched
    GEMM of the parts whose sum is taken by the generated kernel that follows (with the bias, the
    residual add and the next layer_norm, or the GELU, or the q/k/v copies in one kernel), so a block
    costs 4 GEMMs, the attention kernel and 4 generated kernels. Before (an extern addmm with the
    engine's own split-K epilogue per projection, a separate GELU kernel, the attention output copied
    into the query's layout) it cost 14 dispatches per block. Results against eager and CPU, forward
    and backward (CI=1: no implicit fallbacks)."""
    monkeypatch.setenv("CI", "1")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    from gpt import GPT

    layers, tokens = 2, 64
    torch.manual_seed(0)
    ref = GPT(vocab=300, d=128, heads=4, layers=layers, ctx=64)
    m = GPT(vocab=300, d=128, heads=4, layers=layers, ctx=64)
    m.load_state_dict(ref.state_dict())
    m.to(DEV)
    idx = torch.randint(0, 300, (1, tokens), generator=torch.Generator().manual_seed(3))
    idx_d = idx.to(DEV)
    cm = torch.compile(m, backend=torch_webgpu._inductor.compile_fx_webgpu)
    with torch.no_grad():
        want = ref(idx)
        eager = m(idx_d)
        for _ in range(2):
            got = cm(idx_d)
        out = [None]

        def fwd():
            out[0] = cm(idx_d)

        with Launches() as n:
            d = counter_delta(fwd, 2)
    close(got, eager, rtol=1e-4, atol=1e-4)
    close(got, want, rtol=1e-3, atol=2e-3)
    close(out[0], want, rtol=1e-3, atol=2e-3)
    per_fwd, generated = d["dispatches"] / 2, n.n / 2
    # per block 4 generated kernels; plus the embeddings with the first layer_norm and the head's sum
    assert generated == 4 * layers + 2, generated
    # per block 4 GEMMs and the attention; the head: 1 GEMM
    assert per_fwd == generated + 5 * layers + 1, (per_fwd, generated)
    assert per_fwd < 14 * layers
    assert (d["copies"], d["uploads"], d["readbacks"], d["waits"]) == (0, 0, 0, 0), d

    # backward through the same decomposition (the gradients' GEMMs split K too)
    tgt = torch.randint(0, 300, (1, tokens), generator=torch.Generator().manual_seed(4))

    def loss_fn(model, idx, tgt):
        return torch.nn.functional.cross_entropy(model(idx).reshape(-1, 300), tgt.reshape(-1))

    torch._dynamo.reset()
    loss = torch.compile(loss_fn, backend=torch_webgpu._inductor.compile_fx_webgpu)(m, idx_d, tgt.to(DEV))
    loss.backward()
    want_loss = loss_fn(ref, idx, tgt)
    want_loss.backward()
    close(loss, want_loss, rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        close(p.grad, q.grad, rtol=1e-3, atol=5e-5)


@pytest.mark.parametrize("beta,alpha", [(0, 1), (0.5, 2.0), (1, 1)])
def test_split_k_addmm_scalars_and_nan_bias(beta, alpha):
    # the split-K decomposition of addmm (a shape the eager engine splits along K) keeps addmm's
    # rules: beta = 0 never reads the bias (NaN there must not leak), alpha and beta scale as eager's
    a = torch.randn(8, 1024)
    b = torch.randn(1024, 64)
    c = torch.randn(64)
    c[3] = float("nan")

    def f(c, a, b):
        return torch.addmm(c, a, b, beta=beta, alpha=alpha)

    torch._dynamo.reset()
    got = torch.compile(f)(c.to(DEV), a.to(DEV), b.to(DEV)).cpu()
    want = f(c, a, b)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)
    assert got[:, 3].isnan().all() == (beta != 0)


def test_operand_past_binding_limit_runs_eager(monkeypatch):
    # a graph input larger than one storage binding (generated kernels bind operands whole; the eager
    # kernels split them) is refused at compile time: with strict off the graph runs on the eager
    # kernels, with the same results, and says why; with strict on the error names the limit
    from torch_webgpu._inductor import backend

    monkeypatch.setattr(backend, "_BINDING_LIMIT", 1 << 16)  # 64 KiB: a small table is "too large"
    emb = torch.nn.Embedding(300, 64)  # 76800 bytes
    idx = torch.tensor([[1, 5, 299], [0, 7, 3]])

    def f(w, i):
        return torch.nn.functional.embedding(i, w) * 2.0 + 1.0

    want = f(emb.weight.detach(), idx)
    monkeypatch.setenv("TORCH_WEBGPU_COMPILE_STRICT", "0")
    torch._dynamo.reset()
    with pytest.warns(UserWarning, match="binding limit"):
        got = torch.compile(f)(emb.weight.detach().to(DEV), idx.to(DEV))
    torch.testing.assert_close(got.cpu(), want)
    monkeypatch.setenv("TORCH_WEBGPU_COMPILE_STRICT", "1")
    torch._dynamo.reset()
    with pytest.raises(Exception, match="binding limit"):
        torch.compile(f)(emb.weight.detach().to(DEV), idx.to(DEV))
    torch._dynamo.reset()
