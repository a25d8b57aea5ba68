"""Multi-tensor _foreach_* ops (csrc/ops/foreach_pointwise.cpp) against CPU: every overload the
optimisers use, in place and out of place, float32/float16/bfloat16, lists of one tensor, a few, and
more than one dispatch's chunk holds (sizes 0, 1, 1000, mixed), non-contiguous and permuted members,
the errors CPU raises for bad lists; foreach Adam/AdamW/SGD trajectories and clip_grad_norm_ against
CPU; and the dispatch count of a chunked call. The CPU fallback is off: these run natively."""

import pytest
import torch
from webgpu_env import DEV

import torch_webgpu  # noqa: F401

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# list shapes: one tensor; a few of mixed sizes (with an empty and a one-element one); more tensors
# than one chunk holds (16 at most), all small
SHAPES = {
    "one": [(1000,)],
    "mixed": [(0,), (1,), (1000,), (3, 5)],
    "many": [(7 + i,) if i % 3 else (2, 3 + i) for i in range(21)],
}


def make(shapes, dtype, seed, positive=False):
    g = torch.Generator().manual_seed(seed)
    out = []
    for s in shapes:
        t = torch.rand(s, generator=g) + 0.5 if positive else torch.randn(s, generator=g)
        out.append(t.to(dtype))
    return out


def dev(ts):
    return [t.to(DEV) for t in ts]


def check(got, want, dtype):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.device.type == "webgpu"
        assert g.dtype == w.dtype
        assert g.shape == w.shape
        if dtype == torch.float32:
            torch.testing.assert_close(g.cpu(), w, rtol=1e-6, atol=1e-6)
        else:
            torch.testing.assert_close(g.cpu(), w)


# name -> (op, number of tensor lists, extra args built from (n, dtype), which lists must be positive)
def _scalars(n):
    return [0.5 + 0.25 * i for i in range(n)]


CASES = {
    "add.List": ("_foreach_add", 2, lambda n: (), {}),
    "add.List.alpha": ("_foreach_add", 2, lambda n: (), {"alpha": -0.75}),
    "add.Scalar": ("_foreach_add", 1, lambda n: (1.5,), {}),
    "add.ScalarList": ("_foreach_add", 1, lambda n: (_scalars(n),), {}),
    "add.Tensor": ("_foreach_add", 1, lambda n: ("T0.5",), {"alpha": 2.0}),
    "add.Tensor.cpu": ("_foreach_add", 1, lambda n: ("c0.5",), {"alpha": 2.0}),
    "sub.List": ("_foreach_sub", 2, lambda n: (), {"alpha": 0.5}),
    "sub.Scalar": ("_foreach_sub", 1, lambda n: (3,), {}),
    "sub.ScalarList": ("_foreach_sub", 1, lambda n: (_scalars(n),), {}),
    "mul.List": ("_foreach_mul", 2, lambda n: (), {}),
    "mul.Scalar": ("_foreach_mul", 1, lambda n: (0.999,), {}),
    "mul.ScalarList": ("_foreach_mul", 1, lambda n: (_scalars(n),), {}),
    "mul.Tensor": ("_foreach_mul", 1, lambda n: ("T0.3",), {}),
    "div.List": ("_foreach_div", 2, lambda n: (), {}),
    "div.Scalar": ("_foreach_div", 1, lambda n: (0.7,), {}),
    "div.ScalarList": ("_foreach_div", 1, lambda n: (_scalars(n),), {}),
    "div.Tensor": ("_foreach_div", 1, lambda n: ("T1.7",), {}),
    "lerp.Scalar": ("_foreach_lerp", 2, lambda n: (0.1,), {}),
    "lerp.Scalar.big": ("_foreach_lerp", 2, lambda n: (0.8,), {}),
    "lerp.List": ("_foreach_lerp", 3, lambda n: (), {}),
    "lerp.ScalarList": ("_foreach_lerp", 2, lambda n: ([0.2 + 0.2 * (i % 4) for i in range(n)],), {}),
    "addcmul.Scalar": ("_foreach_addcmul", 3, lambda n: (0.25,), {}),
    "addcmul.ScalarList": ("_foreach_addcmul", 3, lambda n: (_scalars(n),), {}),
    "addcmul.Tensor": ("_foreach_addcmul", 3, lambda n: ("C",), {}),
    "addcdiv.Scalar": ("_foreach_addcdiv", 3, lambda n: (-0.5,), {}),
    "addcdiv.ScalarList": ("_foreach_addcdiv", 3, lambda n: (_scalars(n),), {}),
    "addcdiv.Tensor": ("_foreach_addcdiv", 3, lambda n: ("C",), {}),
    "maximum.List": ("_foreach_maximum", 2, lambda n: (), {}),
    "clamp_min.Scalar": ("_foreach_clamp_min", 1, lambda n: (-0.5,), {}),
    "clamp_max.Scalar": ("_foreach_clamp_max", 1, lambda n: (0.5,), {}),
    "sqrt": ("_foreach_sqrt", 1, lambda n: (), {}),
    "neg": ("_foreach_neg", 1, lambda n: (), {}),
    "reciprocal": ("_foreach_reciprocal", 1, lambda n: (), {}),
}
POSITIVE = ("div", "sqrt", "reciprocal", "addcdiv")


def materialise(args, n, device, dtype):
    out = []
    for a in args:
        if isinstance(a, str) and a.startswith("T"):  # a 0-dim tensor on the list's device
            out.append(torch.tensor(float(a[1:]), dtype=dtype, device=device))
        elif isinstance(a, str) and a.startswith("c"):  # a 0-dim CPU tensor
            out.append(torch.tensor(float(a[1:]), dtype=dtype))
        elif a == "C":  # a 1-D CPU tensor of per-tensor scalars
            out.append(torch.tensor(_scalars(n), dtype=torch.float64))
        else:
            out.append(a)
    return out


def run_case(name, shapes, dtype, inplace, transform=lambda t: t):
    op, nlists, extra, kw = CASES[name]
    n = len(shapes)
    positive = name.split(".")[0] in POSITIVE
    lists = [
        make(shapes, dtype, seed=10 * k + 1, positive=(positive and k > 0) or name == "sqrt") for k in range(nlists)
    ]
    if name.startswith("lerp.List"):
        lists[2] = make(shapes, dtype, seed=99, positive=True)
        lists[2] = [w - 0.5 for w in lists[2]]  # weights in [0, 1)
    fn = getattr(torch, op + ("_" if inplace else ""))
    # the reference: CPU in float32 on the same values, rounded once to the dtype (CPU's own half
    # foreach path rounds some intermediates, e.g. alpha * other, to the dtype first)
    cpu = [[transform(t.float()) for t in ls] for ls in lists]
    gpu = [[transform(t.to(DEV)) for t in ls] for ls in lists]
    r_cpu = fn(*cpu, *materialise(extra(n), n, "cpu", torch.float32), **kw)
    r_gpu = fn(*gpu, *materialise(extra(n), n, DEV, dtype), **kw)
    if inplace:
        r_cpu, r_gpu = cpu[0], gpu[0]
    check(r_gpu, [r.to(dtype) for r in r_cpu], dtype)
    for k in range(1, nlists):  # the other lists are left alone
        check(gpu[k], [t.to(dtype) for t in cpu[k]], dtype)


@pytest.mark.parametrize("name", list(CASES))
def test_foreach_float32(name):
    run_case(name, SHAPES["one"], torch.float32, True)
    run_case(name, SHAPES["mixed"], torch.float32, False)
    run_case(name, SHAPES["many"], torch.float32, True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_foreach_half(name, dtype):
    # (compile time on lavapipe: each dtype takes one of the list shapes and one form)
    if dtype == torch.float16:
        run_case(name, SHAPES["mixed"], dtype, True)
    else:
        run_case(name, SHAPES["many"], dtype, False)


@pytest.mark.parametrize("name", ["add.List.alpha", "lerp.Scalar", "addcdiv.ScalarList", "sqrt", "mul.Tensor"])
def test_foreach_strided(name):
    # permuted members (non-overlapping and dense, the same strides in every list): the fast route
    run_case(name, [(4, 6), (3, 1), (5, 2)], torch.float32, True, transform=lambda t: t.t() if t.dim() == 2 else t)
    # non-contiguous members (every other column): ATen's per-tensor path, still right
    run_case(name, [(4, 6), (3, 8), (5,)], torch.float32, True, transform=lambda t: t[:, ::2] if t.dim() == 2 else t)
    run_case(name, [(4, 6), (3, 8)], torch.float32, False, transform=lambda t: t[:, ::2])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_foreach_copy_zero(dtype):
    src = make(SHAPES["many"] + [(0,)], dtype, seed=3)
    dst = [torch.zeros_like(t).to(DEV) for t in src]
    torch._foreach_copy_(dst, dev(src))
    check(dst, src, dtype)
    torch._foreach_zero_(dst)
    check(dst, [torch.zeros_like(t) for t in src], dtype)
    # a dtype-converting copy goes per tensor
    dst32 = [torch.empty(t.shape, device=DEV) for t in src]
    torch._foreach_copy_(dst32, dev(src))
    check(dst32, [t.float() for t in src], torch.float32)


def test_foreach_other_dtypes_and_aliasing():
    # int64 and mixed dtypes take the per-tensor path
    a = [torch.arange(5), torch.arange(3) * 7]
    r = torch._foreach_add(dev(a), 2)
    check(r, torch._foreach_add(a, 2), torch.float32)
    m = [torch.randn(4), torch.randn(4).half()]
    check(torch._foreach_mul(dev(m), 2.0), torch._foreach_mul(m, 2.0), torch.float16)
    # a float list times a complex scalar promotes: per tensor
    c = [torch.randn(3)]
    check(torch._foreach_mul(dev(c), 1 + 2j), torch._foreach_mul(c, 1 + 2j), torch.float32)
    # the same tensor in both lists, and one storage shared by several members
    x = torch.randn(10)
    xs = [x[:4], x[4:]]
    xg = x.to(DEV)
    xgs = [xg[:4], xg[4:]]
    torch._foreach_add_(xs, xs, alpha=0.5)
    torch._foreach_add_(xgs, xgs, alpha=0.5)
    check([xg], [x], torch.float32)
    # one tensor twice in a list, and overlapping views: applied one after another, as on CPU
    y = torch.randn(12)
    yg = y.to(DEV)
    for t in (y, yg):
        torch._foreach_mul_([t, t[2:8], t], 1.5)
        torch._foreach_add_([t[:6], t[6:]], [t[6:], t[:6]], alpha=0.5)
    check([yg], [y], torch.float32)


def test_foreach_errors_match_cpu():
    a, b = make([(3,), (4,)], torch.float32, 0), make([(3,), (5,)], torch.float32, 1)
    cases = [
        lambda L, M: torch._foreach_add(L, M[:1]),  # list lengths
        lambda L, M: torch._foreach_add_(L, M),  # shapes
        lambda L, M: torch._foreach_mul(L, [1.0]),  # scalar list length
        lambda L, M: torch._foreach_addcdiv_(L, M, L[:1]),
        lambda L, M: torch._foreach_lerp_(L, M, 0.5),
        lambda L, M: torch._foreach_sqrt([]),
        lambda L, M: torch._foreach_mul_(L, torch.ones(2, device=L[0].device)),  # not a scalar tensor
        lambda L, M: torch._foreach_add_([L[1][1:]], [L[1][:3]]),  # partial overlap with the output
    ]
    for f in cases:
        with pytest.raises(Exception) as cpu_err:
            f(a, b)
        with pytest.raises(Exception) as gpu_err:
            f(dev(a), dev(b))
        assert type(gpu_err.value) is type(cpu_err.value), (cpu_err.value, gpu_err.value)


def test_foreach_one_dispatch_per_chunk():
    ts = dev(make(SHAPES["many"], torch.float32, 5))  # 21 tensors
    others = dev(make(SHAPES["many"], torch.float32, 6))
    torch._foreach_mul_(ts, 0.5)  # compile first
    torch._foreach_addcdiv_(ts, others, others, 0.1)
    torch.webgpu.synchronize()
    torch.webgpu.reset_stream_counters()
    torch._foreach_mul_(ts, 0.5)
    d1 = torch.webgpu.stream_counters()["dispatches"]
    torch.webgpu.reset_stream_counters()
    torch._foreach_addcdiv_(ts, others, others, 0.1)
    d2 = torch.webgpu.stream_counters()["dispatches"]
    torch.webgpu.synchronize()
    # one dispatch per chunk (16 tensors at most, fewer when three lists share the 16 bindings)
    assert d1 == 2, d1
    assert d2 <= 5, d2


def make_params(seed, device):
    # 20 parameters of mixed sizes (more than one chunk), a loss of pointwise ops only (cheap to
    # compile on lavapipe)
    g = torch.Generator().manual_seed(seed)
    shapes = [(7 + i, 3) if i % 2 else (5 + 3 * i,) for i in range(20)]
    return [torch.randn(s, generator=g).to(device).requires_grad_() for s in shapes]


def loss_fn(ps, step):
    return sum((torch.tanh(p * (1.0 + 0.1 * step)) + 0.5 * p).square().sum() for p in ps)


OPTIMS = [
    ("AdamW", {"lr": 0.01, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.02, "betas": (0.8, 0.9)}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.8, "dampening": 0.2}),
]


@pytest.mark.parametrize("name,kw", OPTIMS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMS)])
def test_optimizer_trajectory(name, kw):
    results = []
    for device in ("cpu", DEV):
        ps = make_params(0, device)
        opt = getattr(torch.optim, name)(ps, foreach=True, **kw)
        for step in range(5):
            opt.zero_grad()
            loss_fn(ps, step).backward()
            opt.step()
        results.append([p.detach().cpu() for p in ps])
    for c, w in zip(*results, strict=True):
        torch.testing.assert_close(w, c, rtol=1e-5, atol=1e-5)


def test_clip_grad_norm():
    results = []
    for device in ("cpu", DEV):
        ps = make_params(2, device)
        loss_fn(ps, 0).backward()
        total = torch.nn.utils.clip_grad_norm_(ps, max_norm=0.5, foreach=True)
        results.append((total.cpu(), [p.grad.cpu() for p in ps]))
    torch.testing.assert_close(results[1][0], results[0][0], rtol=1e-5, atol=1e-6)
    for g, c in zip(results[1][1], results[0][1], strict=True):
        torch.testing.assert_close(g, c, rtol=1e-5, atol=1e-6)


# ---- OpInfo samples (torch's foreach_*_op_db) ----

OPINFO_OPS = (
    "_foreach_add",
    "_foreach_sub",
    "_foreach_mul",
    "_foreach_div",
    "_foreach_addcmul",
    "_foreach_addcdiv",
    "_foreach_maximum",
    "_foreach_minimum",
    "_foreach_clamp_min",
    "_foreach_clamp_max",
    "_foreach_sqrt",
    "_foreach_neg",
    "_foreach_reciprocal",
    "_foreach_zero",
)


def _opinfos():
    from torch.testing._internal import common_methods_invocations as cmi

    db = cmi.foreach_unary_op_db + cmi.foreach_binary_op_db + cmi.foreach_pointwise_op_db
    return [o for o in db if o.name in OPINFO_OPS]


def _to(x, device, dtype=None):
    if isinstance(x, torch.Tensor):
        return x.to(device) if dtype is None or not x.is_floating_point() else x.to(device, dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device, dtype) for v in x)
    return x


# float32 only: the half dtypes take the hand-written cases above (compile time on lavapipe)
@pytest.mark.parametrize("dtype", [torch.float32], ids=str)
@pytest.mark.parametrize("opinfo", _opinfos(), ids=lambda o: o.name)
def test_foreach_opinfo(opinfo, dtype):
    for sample in opinfo.sample_inputs("cpu", dtype, num_input_tensors=[20]):
        for inplace in (False, True):
            fn = opinfo.inplace_variant if inplace else opinfo.method_variant
            if fn is None:
                continue
            args = (sample.input, *sample.args)
            up = _to(args, "cpu", torch.float32)  # the float32 reference, rounded once below
            ga = _to(args, DEV)
            try:
                want = fn(*up, **sample.kwargs)
            except Exception as e:
                with pytest.raises(type(e)):
                    fn(*ga, **sample.kwargs)
                continue
            got = fn(*ga, **sample.kwargs)
            if inplace:
                want, got = up[0], ga[0]
            for w, g, t in zip(want, got, sample.input, strict=True):
                ref = w.to(t.dtype) if w.is_floating_point() and t.is_floating_point() and not inplace else w
                ref = ref.to(dtype) if inplace else ref
                tol = {} if dtype != torch.float32 else {"rtol": 1e-5, "atol": 1e-5}
                torch.testing.assert_close(g.cpu(), ref, check_dtype=False, equal_nan=True, **tol)
