# Reductions over operands past the adapter's maxStorageBufferBindingSize (engines/reduce.cpp:
# run_split): a child process plans its kernels against a 64 KiB binding limit
# (TORCH_WEBGPU_MAX_BINDING), so inputs of a few hundred KB take the split paths: reduced dims cut
# into chunks whose partials one fold combines, outputs cut into groups. Its results are compared
# with CPU, and, where the order of arithmetic is the same (outputs split only, or exact reductions:
# extremes, indices, integer sums, any/all), bit for bit with this process's unsplit results.
# One test also reduces a real tensor past lavapipe's own 128 MiB limit.
import os
import subprocess
import sys

import pytest
import torch
from webgpu_env import DEV, native_env

LIMIT = 64 << 10


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=_gen(seed)).to(dtype)


def _randint(lo, hi, *shape, seed=0, dtype=torch.int64):
    return torch.randint(lo, hi, shape, generator=_gen(seed)).to(dtype)


def _ties(n, m):
    # Maxima and minima repeated across chunk boundaries: the first occurrence wins, as on CPU.
    x = torch.zeros(n, m)
    x[n // 7, :] = 5.0
    x[n // 2, :] = 5.0
    x[n - 1, :] = 5.0
    x[n // 3, :] = -5.0
    x[n - 2, :] = -5.0
    return x


def _nans(n=700, m=300):
    x = _randn(n, m, seed=5)
    x[::97, ::5] = float("nan")
    return x


def _out_sum(t):
    o = torch.empty(t.shape[1], device=t.device)
    torch.sum(t, 0, out=o)
    return o


def _out_strided(t):
    o = torch.full((t.shape[1], 3), 7.0, device=t.device)[:, 1]
    torch.amax(t, 0, out=o)
    return o


def _max_out(t):
    v = torch.empty(t.shape[0], device=t.device)
    i = torch.empty(t.shape[0], dtype=torch.long, device=t.device)
    torch.max(t, 1, out=(v, i))
    return v, i


F32 = lambda: _randn(700, 300, seed=1)  # 840 KB: 13 times the limit
WIDE = lambda: _randn(3, 40000, seed=2)  # outputs of sum(0) past the limit too

# id: (input, op, exact): exact when the split result must equal the unsplit one bit for bit.
CASES = {
    # float32, every row kind, both dims and the whole tensor
    "sum_all": (F32, lambda t: t.sum(), False),
    "sum_d0": (F32, lambda t: t.sum(0), False),
    "sum_d1": (F32, lambda t: t.sum(1), True),
    "sum_d0_keep": (F32, lambda t: t.sum(0, keepdim=True), False),
    "mean_d0": (F32, lambda t: t.mean(0), False),
    "mean_all": (F32, lambda t: t.mean(), False),
    "mean_d1": (F32, lambda t: t.mean(1), True),
    "prod_d0": (lambda: 1 + 0.001 * _randn(700, 300, seed=3), lambda t: t.prod(0), False),
    "amax_d0": (F32, lambda t: t.amax(0), True),
    "amin_d1": (F32, lambda t: t.amin(1), True),
    "max_all": (F32, lambda t: t.max(), True),
    "min_all": (F32, lambda t: t.min(), True),
    "max_dim0": (F32, lambda t: torch.max(t, 0), True),
    "min_dim1": (F32, lambda t: torch.min(t, 1), True),
    "argmax_all": (F32, lambda t: t.argmax(), True),
    "argmax_d0": (F32, lambda t: t.argmax(0), True),
    "argmin_d0_keep": (F32, lambda t: t.argmin(0, keepdim=True), True),
    "argmin_d1": (F32, lambda t: t.argmin(1), True),
    "aminmax_d0": (F32, lambda t: torch.aminmax(t, dim=0), True),
    "var_d0": (F32, lambda t: t.var(0), False),
    "var_all": (F32, lambda t: t.var(), False),
    "std_d1": (F32, lambda t: t.std(1), True),
    "std_all_corr0": (F32, lambda t: t.std(correction=0), False),
    "var_mean_d0": (F32, lambda t: torch.var_mean(t, 0), False),
    "norm_all": (F32, lambda t: t.norm(), False),
    "norm1_d0": (F32, lambda t: torch.linalg.vector_norm(t, 1, dim=0), False),
    "norm3_d0": (F32, lambda t: torch.linalg.vector_norm(t, 3, dim=0), False),
    "norm_inf_all": (F32, lambda t: torch.linalg.vector_norm(t, float("inf")), True),
    "norm_ninf_d0": (F32, lambda t: torch.linalg.vector_norm(t, float("-inf"), dim=0), True),
    "norm0_d0": (lambda: torch.relu(_randn(700, 300, seed=4)), lambda t: torch.linalg.vector_norm(t, 0, dim=0), True),
    "logsumexp_d0": (F32, lambda t: torch.logsumexp(t, 0), False),
    "logsumexp_all": (F32, lambda t: torch.logsumexp(t, (0, 1)), False),
    "nansum_d0": (_nans, lambda t: t.nansum(0), False),
    "sum_nan_d0": (_nans, lambda t: t.sum(0), False),
    "amax_nan_d0": (_nans, lambda t: t.amax(0), True),
    "argmax_nan_d0": (_nans, lambda t: t.argmax(0), True),
    "count_nonzero_d0": (lambda: torch.relu(_randn(700, 300, seed=6)), lambda t: torch.count_nonzero(t, 0), True),
    "ties_argmax_d0": (lambda: _ties(700, 300), lambda t: t.argmax(0), True),
    "ties_argmin_d0": (lambda: _ties(700, 300), lambda t: t.argmin(0), True),
    "ties_max_dim0": (lambda: _ties(700, 300), lambda t: torch.max(t, 0), True),
    "ties_argmax_all": (lambda: _ties(700, 300), lambda t: t.argmax(), True),
    # non-contiguous inputs, more dims, out=
    "t_sum_d0": (F32, lambda t: t.t().sum(0), True),
    "t_sum_d1": (F32, lambda t: t.t().sum(1), False),
    "t_argmax_d1": (F32, lambda t: t.t().argmax(1), True),
    "sliced_sum_d0": (F32, lambda t: t[1::2, ::3].sum(0), False),
    "sliced_amax_d1": (F32, lambda t: t[::3, 5:].amax(1), True),
    "3d_sum_02": (lambda: _randn(60, 50, 70, seed=7), lambda t: t.sum((0, 2)), False),
    "3d_mean_1": (lambda: _randn(60, 50, 70, seed=7), lambda t: t.mean(1), False),
    "3d_perm_max_0": (lambda: _randn(60, 50, 70, seed=7), lambda t: torch.max(t.permute(2, 0, 1), 0), True),
    "3d_amin_12": (lambda: _randn(60, 50, 70, seed=7), lambda t: t.amin((1, 2)), True),
    "out_sum_d0": (F32, _out_sum, False),
    "out_strided_amax": (F32, _out_strided, True),
    "max_out_d1": (F32, _max_out, True),
    # outputs past the limit too
    "wide_sum_d0": (WIDE, lambda t: t.sum(0), False),
    "wide_max_dim0": (WIDE, lambda t: torch.max(t, 0), True),
    "wide_argmin_d0": (WIDE, lambda t: t.argmin(0), True),
    "wide_var_d0": (WIDE, lambda t: t.var(0), False),
    "wide_sum_all": (WIDE, lambda t: t.sum(), False),
    "wide_t_sum_d1": (WIDE, lambda t: t.t().sum(1), False),
    "tall_sum_d1": (lambda: _randn(40000, 3, seed=40), lambda t: t.sum(1), True),
    "tall_logsumexp_d1": (lambda: _randn(40000, 3, seed=40), lambda t: torch.logsumexp(t, 1), True),
    # other dtypes
    "f16_sum_d0": (lambda: _randn(800, 300, seed=9, dtype=torch.float16), lambda t: t.sum(0), False),
    "f16_max_dim0": (lambda: _randn(800, 300, seed=9, dtype=torch.float16), lambda t: torch.max(t, 0), True),
    "f16_mean_all": (lambda: _randn(800, 300, seed=9, dtype=torch.float16), lambda t: t.mean(), False),
    "bf16_sum_d1": (lambda: _randn(800, 300, seed=10, dtype=torch.bfloat16), lambda t: t.sum(1), True),
    "bf16_argmax_d0": (lambda: _randn(800, 300, seed=10, dtype=torch.bfloat16), lambda t: t.argmax(0), True),
    "bf16_norm_all": (lambda: _randn(800, 300, seed=10, dtype=torch.bfloat16), lambda t: t.norm(), False),
    "f64_sum_d0": (lambda: _randn(300, 300, seed=11, dtype=torch.float64), lambda t: t.sum(0), False),
    "f64_mean_all": (lambda: _randn(300, 300, seed=11, dtype=torch.float64), lambda t: t.mean(), False),
    "f64_max_dim0": (lambda: _randn(300, 300, seed=11, dtype=torch.float64), lambda t: torch.max(t, 0), True),
    "f64_argmin_all": (lambda: _randn(300, 300, seed=11, dtype=torch.float64), lambda t: t.argmin(), True),
    "f64_norm_d0": (lambda: _randn(300, 300, seed=11, dtype=torch.float64), lambda t: t.norm(dim=0), False),
    "i64_sum_d0": (lambda: _randint(-(2**40), 2**40, 300, 300, seed=12), lambda t: t.sum(0), True),
    "i64_sum_all": (lambda: _randint(-(2**40), 2**40, 300, 300, seed=12), lambda t: t.sum(), True),
    "i64_argmax_d0": (lambda: _randint(-50, 50, 300, 300, seed=12), lambda t: t.argmax(0), True),
    "i64_prod_d0": (lambda: _randint(-3, 4, 300, 300, seed=13), lambda t: t.prod(0), True),
    "i32_min_dim0": (
        lambda: _randint(-1000, 1000, 600, 300, seed=14, dtype=torch.int32),
        lambda t: torch.min(t, 0),
        True,
    ),
    "i8_amax_d0": (lambda: _randint(-100, 100, 1000, 300, seed=16, dtype=torch.int8), lambda t: t.amax(0), True),
    "u8_argmin_all": (lambda: _randint(0, 255, 1000, 300, seed=17, dtype=torch.uint8), lambda t: t.argmin(), True),
    "bool_any_d0": (lambda: _randint(0, 2, 1000, 300, seed=18) * 0 == 1, lambda t: t.any(0), True),
    "bool_all_d0": (lambda: _randint(0, 50, 1000, 300, seed=18) > 0, lambda t: t.all(0), True),
    "bool_any_all": (lambda: torch.arange(1000 * 300).reshape(1000, 300) == 200000, lambda t: t.any(), True),
    "c64_sum_d0": (
        lambda: torch.complex(_randn(400, 300, seed=38), _randn(400, 300, seed=39)),
        lambda t: t.sum(0),
        False,
    ),
    "c64_mean_d1": (
        lambda: torch.complex(_randn(400, 300, seed=38), _randn(400, 300, seed=39)),
        lambda t: t.mean(1),
        True,
    ),
    "wide_int_sum_d0": (lambda: _randint(-1000, 1000, 3, 40000, seed=8, dtype=torch.int32), lambda t: t.sum(0), True),
    "i32_sum_d0": (lambda: _randint(-1000, 1000, 600, 300, seed=14, dtype=torch.int32), lambda t: t.sum(0), True),
    "i16_sum_all": (lambda: _randint(-1000, 1000, 600, 300, seed=15, dtype=torch.int16), lambda t: t.sum(), True),
    "u8_sum_d0": (lambda: _randint(0, 255, 1000, 300, seed=17, dtype=torch.uint8), lambda t: t.sum(0), True),
    "bool_sum_d0": (lambda: _randint(0, 2, 1000, 300, seed=19, dtype=torch.bool), lambda t: t.sum(0), True),
    "sum_d0_dtype_f64": (F32, lambda t: t.sum(0, dtype=torch.float64), False),
    "bf16_mean_dtype_f32": (
        lambda: _randn(800, 300, seed=10, dtype=torch.bfloat16),
        lambda t: t.mean(1, dtype=torch.float32),
        True,
    ),
    "i32_prod_dtype_f32_all": (
        lambda: _randint(1, 3, 700, 300, seed=44, dtype=torch.int32) * 0 + 1,
        lambda t: t.prod(dtype=torch.float32),
        True,
    ),
    "bool_count_nonzero_all": (
        lambda: _randint(0, 2, 1000, 300, seed=19, dtype=torch.bool),
        lambda t: torch.count_nonzero(t),
        True,
    ),
}

# Row kernels (ops/rows.h): rows are independent, so the launches take slices of whole rows that fit,
# and scans a long row in segments of whole tiles; both give the unsplit results bit for bit.


def _softmax_bwd(t):
    t = t.detach().requires_grad_()
    y = torch.softmax(t, 1)
    y.backward(_randn(*t.shape, seed=30).to(t.device))
    return y, t.grad


def _log_softmax_bwd(t):
    t = t.detach().requires_grad_()
    y = torch.log_softmax(t, -1)
    y.backward(_randn(*t.shape, seed=31).to(t.device))
    return y, t.grad


def _layer_norm_bwd(t, params=False):
    t = t.detach().requires_grad_()
    w = (1 + 0.1 * _randn(t.shape[-1], seed=32)).to(t.device).requires_grad_()
    b = _randn(t.shape[-1], seed=33).to(t.device).requires_grad_()
    y = torch.nn.functional.layer_norm(t, (t.shape[-1],), w, b)
    y.backward(_randn(*t.shape, seed=34).to(t.device))
    # The parameters' gradients sum partials of fewer rows where 128 rows do not fit: not bit for bit.
    return (w.grad, b.grad) if params else (y, t.grad)


def _group_norm(t, groups=2, params=False):
    w = (1 + 0.1 * _randn(t.shape[1], seed=35)).to(t.device)
    b = _randn(t.shape[1], seed=36).to(t.device)
    n, c = t.shape[:2]
    y, mean, rstd = torch.ops.aten.native_group_norm(t, w, b, n, c, t[0, 0].numel(), groups, 1e-5)
    g = _randn(*t.shape, seed=37).to(t.device)
    gi = torch.ops.aten.native_group_norm_backward(
        g, t, mean, rstd, w, n, c, t[0, 0].numel(), groups, [True, True, True]
    )
    # The parameters' gradients are sums over the batch (the reduction engine, split): not bit for bit.
    return gi[1:] if params else (y, mean, rstd, gi[0])


def _targets(n, c, seed, *rest):
    t = torch.randint(0, c, (n, *rest), generator=_gen(seed))
    t.view(-1)[::17] = -100  # ignore_index
    return t


def _cross_entropy(t, reduction="mean", weight=False):
    t = t.detach().requires_grad_()
    tgt = _targets(t.shape[0], t.shape[1], 45, *t.shape[2:]).to(t.device)
    w = (1 + _randn(t.shape[1], seed=46).abs()).to(t.device) if weight else None
    loss = torch.nn.functional.cross_entropy(t, tgt, weight=w, reduction=reduction)
    loss.backward(torch.ones_like(loss) if reduction == "none" else None)
    return loss, t.grad


ROW_CASES = {
    "softmax_d1": (F32, lambda t: torch.softmax(t, 1), True),
    "log_softmax_d1": (F32, lambda t: torch.log_softmax(t, 1), True),
    "softmax_3d_d1": (lambda: _randn(60, 40, 30, seed=21), lambda t: torch.softmax(t, 1), True),
    "softmax_f16_d1": (lambda: _randn(800, 300, seed=22, dtype=torch.float16), lambda t: torch.softmax(t, 1), True),
    "softmax_backward": (F32, _softmax_bwd, True),
    # a slab (softmax dim x inner elements) past the limit: the dim goes last, rows (rounded otherwise)
    "softmax_d0": (F32, lambda t: torch.softmax(t, 0), False),
    "log_softmax_3d_d1": (lambda: _randn(3, 400, 60, seed=23), lambda t: torch.log_softmax(t, 1), False),
    "log_softmax_backward": (lambda: _randn(40, 30, 300, seed=23), _log_softmax_bwd, True),
    "layer_norm_backward": (F32, _layer_norm_bwd, True),
    "layer_norm_param_grads": (F32, lambda t: _layer_norm_bwd(t, params=True), False),
    "layer_norm_bf16": (
        lambda: _randn(800, 300, seed=24, dtype=torch.bfloat16),
        lambda t: torch.nn.functional.layer_norm(t, (300,)),
        True,
    ),
    "group_norm": (lambda: _randn(24, 8, 20, 20, seed=25), _group_norm, True),
    "group_norm_params": (lambda: _randn(24, 8, 20, 20, seed=25), lambda t: _group_norm(t, params=True), False),
    # 31 rows per launch with 32 groups: the slices start inside a sample's groups.
    "group_norm_32_groups": (lambda: _randn(5, 64, 16, 16, seed=48), lambda t: _group_norm(t, 32), True),
    "cross_entropy_mean": (F32, _cross_entropy, False),
    "cross_entropy_none_weight": (F32, lambda t: _cross_entropy(t, "none", True), True),
    "cross_entropy_sum_2d": (lambda: _randn(200, 5, 10, 10, seed=47), lambda t: _cross_entropy(t, "sum"), False),
    "sort_d1": (F32, lambda t: torch.sort(t, 1), True),
    "sort_d0_desc": (F32, lambda t: torch.sort(t, 0, descending=True), True),
    "topk_d1": (F32, lambda t: torch.topk(t, 5, dim=1), True),
    "median_d1": (F32, lambda t: t.median(1), True),
    "kthvalue_d1": (F32, lambda t: t.kthvalue(7, 1), True),
    "mode_d1": (lambda: _randint(0, 20, 700, 300, seed=49), lambda t: torch.mode(t, 1).values, True),
    "sort_i64_d1": (
        lambda: _randint(-1000, 1000, 300, 300, seed=50),
        lambda t: torch.sort(t, dim=1, stable=True),
        True,
    ),
    "cumsum_d1": (F32, lambda t: t.cumsum(1), True),
    "cumsum_long_row": (lambda: _randn(300000, seed=26), lambda t: t.cumsum(0), True),
    "cumsum_i64_long_row": (lambda: _randint(-1000, 1000, 100000, seed=27), lambda t: t.cumsum(0), True),
    "cumprod_long_row": (lambda: 1 + 0.0001 * _randn(300000, seed=28), lambda t: t.cumprod(0), True),
    "logcumsumexp_long_row": (lambda: _randn(300000, seed=29), lambda t: t.logcumsumexp(0), True),
    "logcumsumexp_rows": (F32, lambda t: t.logcumsumexp(1), True),
    "cummax_long_row": (lambda: _randn(100000, seed=41), lambda t: torch.cummax(t, 0), True),
    "cummin_long_row_ties": (
        lambda: torch.randint(0, 3, (100000,), generator=_gen(42)).float(),
        lambda t: torch.cummin(t, 0),
        True,
    ),
    "cummax_rows": (F32, lambda t: torch.cummax(t, 1), True),
    "cumsum_i32_rows": (lambda: _randint(-100, 100, 700, 300, seed=43, dtype=torch.int32), lambda t: t.cumsum(1), True),
    "cumsum_d0": (F32, lambda t: t.cumsum(0), True),
}
CASES.update(ROW_CASES)

# Cases that cannot be split keep raising the clear error naming the op and the limit: softmax over
# a dim whose every slice (D x inner elements) spans more than one binding.
ERROR_CASES = {
    "softmax_long_row": (lambda: _randn(100000, seed=52), lambda t: torch.softmax(t, 0)),
    "sort_long_row": (lambda: _randn(100000, seed=51), lambda t: torch.sort(t)),
}


def _flat(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _child(path):
    """Runs every case on the device (under the child's binding limit) and saves the results."""
    import torch_webgpu  # noqa: F401

    out = {}
    for name, (make, fn, _) in CASES.items():
        x = make()
        assert x.numel() * x.element_size() > 4 * LIMIT, name  # the case reaches the split paths
        try:
            out[name] = [r.cpu() for r in _flat(fn(x.to(DEV)))]
        except Exception as e:  # reported per case by the parent
            out[name] = f"{type(e).__name__}: {e}"
    for name, (make, fn) in ERROR_CASES.items():
        try:
            fn(make().to(DEV)).cpu()
            out["error:" + name] = None
        except Exception as e:
            out["error:" + name] = (type(e).__name__, str(e))
    torch.save(out, path)


@pytest.fixture(scope="module")
def split_results(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("reduce_big") / "results.pt")
    here = os.path.dirname(__file__)
    code = f"import sys; sys.path.insert(0, {here!r}); import test_reduce_big as m; m._child({path!r})"
    env = native_env(TORCH_WEBGPU_MAX_BINDING=str(LIMIT))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    return torch.load(path)


def _bits(t):
    if t.is_complex():
        t = torch.view_as_real(t)
    return t.reshape(-1).view(torch.uint8) if t.is_floating_point() else t


# float32 cumprod accumulates in float32 (CPU in double): a long row drifts by ~1e-3, split or not.
LOOSE = {"cumprod_long_row": {"rtol": 3e-3, "atol": 3e-3}}


def _tol(dtype, name=None):
    if name in LOOSE:
        return LOOSE[name]
    if dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 1e-2, "atol": 1e-2}
    return {"rtol": 1e-4, "atol": 1e-4}


@pytest.mark.parametrize("name", list(CASES))
def test_split_matches_cpu(split_results, name):
    make, fn, exact = CASES[name]
    got = split_results[name]
    assert not isinstance(got, str), got
    x = make()
    want = _flat(fn(x))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if w.is_floating_point() or w.is_complex():
            torch.testing.assert_close(g, w, equal_nan=True, **_tol(w.dtype, name))
        else:
            assert torch.equal(g, w)
    if exact:
        # The unsplit path of this process (the default limit binds these inputs whole).
        ref = [r.cpu() for r in _flat(fn(x.to(DEV)))]
        for g, r in zip(got, ref, strict=True):
            assert torch.equal(_bits(g), _bits(r))


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_unsplittable_raises(split_results, name):
    got = split_results["error:" + name]
    assert got is not None
    assert got[0] == "RuntimeError", got
    assert "maxStorageBufferBindingSize" in got[1], got


def test_past_lavapipe_limit():
    """A 50257 x 768 float32 matrix (GPT-2's embedding, 154 MB) on the adapter's own limit: reductions
    over either dim and all of it, softmax and layer_norm over its rows."""
    x = torch.randn(50257, 768, generator=_gen(20))
    if x.numel() * 4 <= torch.webgpu.info()["limits"]["maxStorageBufferBindingSize"]:
        pytest.skip("this adapter binds the whole matrix")
    d = x.to(DEV)
    torch.testing.assert_close(d.sum(0).cpu(), x.sum(0), rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(d.sum(1).cpu(), x.sum(1), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(d.sum().cpu(), x.sum(), rtol=1e-4, atol=1e-1)
    v, i = torch.max(d, 0)
    cv, ci = torch.max(x, 0)
    assert torch.equal(v.cpu(), cv)
    assert torch.equal(i.cpu(), ci)
    assert d.argmax().item() == x.argmax().item()
    # CPU's float32 norm of 38.6M squares is 0.27% off (6195.19 against 6211.69 in float64).
    torch.testing.assert_close(d.norm().cpu().double(), x.double().norm(), rtol=1e-5, atol=0)
    torch.testing.assert_close(d.var(0).cpu(), x.var(0), rtol=1e-4, atol=1e-5)
    # Row kernels: slices of whole rows.
    torch.testing.assert_close(torch.softmax(d, 1).cpu(), torch.softmax(x, 1), rtol=1e-5, atol=1e-7)
    ln = torch.nn.functional.layer_norm
    torch.testing.assert_close(ln(d, (768,)).cpu(), ln(x, (768,)), rtol=1e-4, atol=1e-5)
