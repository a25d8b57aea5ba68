# torch._int_mm (int8/uint8 x int8 -> int32) against CPU's, bitwise: ragged M/N/K around the
# kernel's 64 x 64 x 32 tiles, K not a multiple of 4, transposed / stepped / expanded operands,
# storage offsets that are not a multiple of 4, extreme values and int32 wrap-around, out=,
# empty sizes, and CPU's error cases. Every case runs twice: with WGSL's dot4I8Packed (where this
# Dawn has it) and with the spelled-out dot product (TORCH_WEBGPU_NO_DOT4=1).
# There is no OpInfo entry for _int_mm in torch 2.13's op_db, so these cases are the yardstick.
import pytest
import torch
from webgpu_env import DEV


@pytest.fixture(params=["dot4", "scalar"], autouse=True)
def dot_path(request, monkeypatch):
    monkeypatch.setenv("TORCH_WEBGPU_NO_DOT4", "1" if request.param == "scalar" else "0")
    return request.param


def rnd(shape, dtype=torch.int8, seed=0, lo=None, hi=None):
    g = torch.Generator().manual_seed(seed)
    if lo is None:
        lo, hi = (0, 256) if dtype == torch.uint8 else (-128, 128)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def same_view(base, view):
    """The view `view` of `base` on CPU and the same view of base's copy on webgpu."""
    return view(base), view(base.to(DEV))


def _cpu_takes_uint8():
    try:
        torch._int_mm(torch.zeros(17, 8, dtype=torch.uint8), torch.zeros(8, 8, dtype=torch.int8))
        return True
    except RuntimeError:
        return False


# torch < 2.12's CPU _int_mm takes int8 only (we take uint8 as 2.13's CPU does).
CPU_UINT8 = _cpu_takes_uint8()


def ref_int_mm(a, b):
    """CPU's _int_mm, or where this torch's CPU refuses a uint8 self the same product in int64,
    wrapped to int32 as CPU's int32 accumulation wraps."""
    if a.dtype == torch.int8 or CPU_UINT8:
        return torch._int_mm(a, b)
    full = a.long() @ b.long()
    return ((full + 2**31) % 2**32 - 2**31).to(torch.int32)


def check(a_pair, b_pair):
    a, ad = a_pair
    b, bd = b_pair
    # The reference from contiguous copies: CPU's _int_mm (torch 2.13) returns garbage for an
    # expanded (stride 0) operand; for every other layout the two agree.
    want = ref_int_mm(a.contiguous(), b.contiguous())
    got = torch._int_mm(ad, bd)
    assert got.device.type == DEV and got.dtype == torch.int32 and got.shape == want.shape
    got = got.cpu()
    if not torch.equal(got, want):
        bad = (got != want).nonzero()
        raise AssertionError(
            f"{bad.shape[0]} of {want.numel()} differ, first at {bad[0].tolist()}: "
            f"{got[tuple(bad[0])].item()} != {want[tuple(bad[0])].item()}"
        )


def plain(M, K, N, seed=0, adtype=torch.int8):
    a = rnd((M, K), adtype, seed)
    b = rnd((K, N), torch.int8, seed + 1)
    return same_view(a, lambda t: t), same_view(b, lambda t: t)


SHAPES = [
    (1, 1, 1),
    (3, 5, 7),
    (2, 3, 4),
    (4, 4, 4),
    (5, 1, 3),
    (1, 37, 1),
    (7, 2, 9),
    (17, 33, 9),
    (64, 32, 64),
    (65, 31, 63),
    (63, 65, 65),
    (33, 100, 130),
    (130, 7, 5),
    (2, 130, 70),
]


@pytest.mark.parametrize("M,K,N", SHAPES)
def test_contiguous(M, K, N):
    check(*plain(M, K, N))


@pytest.mark.parametrize("M,K,N", [(3, 5, 7), (65, 31, 63), (17, 64, 33)])
def test_uint8_self(M, K, N):
    check(*plain(M, K, N, adtype=torch.uint8))


# Layouts of each operand: A (M x K) and B (K x N), from a base tensor through a view. The kernel
# reads k stride 1 (contig, offsets, padded rows, w_t...), row stride 1 (A transposed, B contig /
# offset / padded) and anything else (stepped, expanded rows) in three different ways.
def a_layouts(M, K):
    return {
        "contig": (rnd((M, K), seed=2), lambda t: t),
        "transposed": (rnd((K, M), seed=3), lambda t: t.t()),
        "transposed_offset1": (rnd((K * M + 1,), seed=10), lambda t: t[1:].view(K, M).t()),
        "transposed_padded": (rnd((K, M + 6), seed=11), lambda t: t[:, 3 : M + 3].t()),
        "offset1": (rnd((M * K + 1,), seed=4), lambda t: t[1:].view(M, K)),
        "offset3": (rnd((M * K + 3,), seed=5), lambda t: t[3:].view(M, K)),
        "padded_rows": (rnd((M, K + 3), seed=6), lambda t: t[:, 1 : K + 1]),
        "k_stepped": (rnd((M, 2 * K), seed=7), lambda t: t[:, ::2]),
        "both_stepped": (rnd((2 * M, 3 * K + 1), seed=8), lambda t: t[::2, 1::3]),
        "expanded_k": (rnd((M, 1), seed=9), lambda t: t.expand(M, K)),
    }


def b_layouts(K, N):
    return {
        "contig": (rnd((K, N), seed=12), lambda t: t),
        "w_t": (rnd((N, K), seed=13), lambda t: t.t()),
        "w_t_offset2": (rnd((N * K + 2,), seed=14), lambda t: t[2:].view(N, K).t()),
        "w_t_offset1_padded": (rnd((N, K + 5), seed=15), lambda t: t[:, 1 : K + 1].t()),
        "offset1": (rnd((K * N + 1,), seed=16), lambda t: t[1:].view(K, N)),
        "padded_offset3": (rnd((K, N + 5), seed=19), lambda t: t[:, 3 : N + 3]),
        "stepped": (rnd((2 * K, 2 * N), seed=17), lambda t: t[::2, 1::2]),
        "expanded_n": (rnd((K, 1), seed=18), lambda t: t.expand(K, N)),
    }


@pytest.mark.parametrize("M,K,N", [(5, 7, 3), (66, 37, 65), (9, 70, 130)])
@pytest.mark.parametrize("al", list(a_layouts(2, 2)))
def test_a_layouts(M, K, N, al):
    base, view = a_layouts(M, K)[al]
    a = same_view(base, view)
    assert a[1].shape == (M, K)
    check(a, same_view(*b_layouts(K, N)["w_t"]))


@pytest.mark.parametrize("M,K,N", [(5, 7, 3), (66, 37, 65), (9, 70, 130)])
@pytest.mark.parametrize("bl", list(b_layouts(2, 2)))
def test_b_layouts(M, K, N, bl):
    base, view = b_layouts(K, N)[bl]
    b = same_view(base, view)
    assert b[1].shape == (K, N)
    check(same_view(*a_layouts(M, K)["offset3"]), b)


@pytest.mark.parametrize("al", ["contig", "transposed_offset1", "both_stepped"])
@pytest.mark.parametrize("bl", ["w_t_offset2", "padded_offset3", "stepped"])
def test_layout_pairs(al, bl):
    # Each way of reading A against each way of reading B (ragged K: both sides' padding).
    M, K, N = 67, 45, 66
    check(same_view(*a_layouts(M, K)[al]), same_view(*b_layouts(K, N)[bl]))


def test_uint8_self_strided():
    M, K, N = 33, 45, 20
    a = same_view(rnd((K + 1, M), torch.uint8, 21), lambda t: t[1:].t())
    b = same_view(rnd((N * K + 3,), torch.int8, 22), lambda t: t[3:].view(N, K).t())
    check(a, b)


def test_same_tensor_both_operands():
    x = rnd((40, 40), seed=30)
    xd = x.to(DEV)
    assert torch.equal(torch._int_mm(xd, xd).cpu(), torch._int_mm(x, x))
    assert torch.equal(torch._int_mm(xd, xd.t()).cpu(), torch._int_mm(x, x.t()))


@pytest.mark.parametrize("av,bv", [(-128, -128), (127, 127), (-128, 127), (127, -128)])
def test_extremes(av, bv):
    # |sum| up to 2048 * 128^2 = 2^25: large but exact.
    M, K, N = 3, 2048, 5
    a = torch.full((M, K), av, dtype=torch.int8)
    b = torch.full((K, N), bv, dtype=torch.int8)
    a[1, ::3] = -av if av != -128 else 127
    check(same_view(a, lambda t: t), same_view(b, lambda t: t))


def test_extremes_uint8():
    M, K, N = 2, 999, 3
    a = torch.full((M, K), 255, dtype=torch.uint8)
    b = torch.full((K, N), -128, dtype=torch.int8)
    b[:, 1] = 127
    check(same_view(a, lambda t: t), same_view(b, lambda t: t))


def test_random_large_k():
    check(*plain(5, 3001, 6, seed=40))


def test_int32_wraparound():
    # 255 * -128 * 70000 = -2284800000 < -2^31: CPU wraps to 2010167296; so must we.
    K = 70000
    a = torch.full((1, K), 255, dtype=torch.uint8)
    b = torch.full((K, 2), -128, dtype=torch.int8)
    b[:, 1] = 127  # 255 * 127 * 70000 = 2266950000 > 2^31 - 1
    want = ref_int_mm(a, b)
    assert want[0, 0].item() == 2010167296  # the CPU reference itself wraps
    check(same_view(a, lambda t: t), same_view(b, lambda t: t))


def test_out():
    (a, ad), (b, bd) = plain(37, 19, 41, seed=50)
    out = torch.full((37, 41), 7, dtype=torch.int32, device=DEV)
    r = torch._int_mm(ad, bd, out=out)
    assert r is out
    assert torch.equal(out.cpu(), torch._int_mm(a, b))


def test_out_storage_offset():
    (a, ad), (b, bd) = plain(9, 13, 11, seed=51)
    buf = torch.full((9 * 11 + 5,), -1, dtype=torch.int32, device=DEV)
    out = buf[3 : 3 + 99].view(9, 11)
    torch._int_mm(ad, bd, out=out)
    assert torch.equal(out.cpu(), torch._int_mm(a, b))
    got = buf.cpu()
    assert got[:3].eq(-1).all() and got[102:].eq(-1).all()


def test_out_noncontiguous_rejected_like_cpu():
    # CPU requires a contiguous result (no resize, no copy-back); so do we.
    (a, ad), (b, bd) = plain(3, 5, 7, seed=52)
    with pytest.raises(RuntimeError, match="contiguous"):
        torch._int_mm(a, b, out=torch.empty(7, 3, dtype=torch.int32).t())
    with pytest.raises(RuntimeError, match=r"_int_mm.*contiguous"):
        torch._int_mm(ad, bd, out=torch.empty(7, 3, dtype=torch.int32, device=DEV).t())
    # A (1, N) result with an odd stride is contiguous to torch, and accepted by both.
    o = torch.empty(7, 1, dtype=torch.int32, device=DEV).t()
    torch._int_mm(ad[:1], bd, out=o)
    assert torch.equal(o.cpu(), torch._int_mm(a[:1], b))


@pytest.mark.parametrize("M,K,N", [(0, 5, 7), (3, 5, 0), (0, 0, 0), (3, 0, 7), (1, 0, 1), (0, 5, 0)])
def test_empty(M, K, N):
    a, b = rnd((M, K), seed=60), rnd((K, N), seed=61)
    ad, bd = a.to(DEV), b.to(DEV)
    want = torch._int_mm(a, b)
    got = torch._int_mm(ad, bd)
    assert got.shape == want.shape and got.dtype == torch.int32
    assert torch.equal(got.cpu(), want)
    out = torch.full((M, N), 5, dtype=torch.int32, device=DEV)
    torch._int_mm(ad, bd, out=out)
    assert torch.equal(out.cpu(), want)  # K = 0: zeros, whatever out held


def _error_cases():
    a, b = rnd((3, 5)), rnd((5, 7))

    def out(*shape, dtype=torch.int32, view=lambda t: t):
        return lambda dev: view(torch.empty(*shape, dtype=dtype, device=dev))

    return {
        "mismatched_k": (a, b[:4], None),
        "self_int32": (a.int(), b, None),
        "self_bool": (a.bool(), b, None),
        "self_float": (a.float(), b, None),
        "mat2_uint8": (a, b.to(torch.uint8), None),
        "mat2_int32": (a, b.int(), None),
        "self_1d": (a[0], b, None),
        "self_3d": (a[None], b, None),
        "mat2_3d": (a, b[None], None),
        "mat2_1d": (a, b[0], None),
        "both_1d": (a[0], b[0], None),
        "self_0d": (a[0, 0], b, None),
        "self_dtype_and_k": (a.int(), b[:4], None),
        "out_int64": (a, b, out(3, 7, dtype=torch.int64)),
        "out_float": (a, b, out(3, 7, dtype=torch.float32)),
        "out_rows": (a, b, out(2, 7)),
        "out_cols": (a, b, out(3, 6)),
        "out_empty": (a, b, out(0)),
        "out_1d": (a, b, out(3)),
        "out_3d": (a, b, out(3, 7, 1)),
        "out_3d_int64": (a, b, out(3, 7, 1, dtype=torch.int64)),
        "out_padded": (a, b, out(3, 8, view=lambda t: t[:, :7])),
        "out_transposed": (a, b, out(7, 3, view=lambda t: t.t())),
        "out_dtype_and_rows": (a, b, out(2, 7, dtype=torch.int64)),
        "out_and_self_dtype": (a.int(), b, out(3, 7, dtype=torch.int64)),
        "out_noncontig_and_rows": (a, b, out(7, 2, view=lambda t: t.t())),
    }


@pytest.mark.parametrize("case", list(_error_cases()))
def test_errors_match_cpu(case, dot_path):
    if dot_path == "scalar":
        pytest.skip("checks do not depend on the dot product")
    a, b, out = _error_cases()[case]
    with pytest.raises(Exception) as cpu_err:
        torch._int_mm(a, b, **({} if out is None else {"out": out("cpu")}))
    with pytest.raises(Exception) as dev_err:
        torch._int_mm(a.to(DEV), b.to(DEV), **({} if out is None else {"out": out(DEV)}))
    assert type(dev_err.value) is type(cpu_err.value), (dev_err.value, cpu_err.value)
    cpu_msg, dev_msg = str(cpu_err.value), str(dev_err.value)
    if not CPU_UINT8 and "dtype" in cpu_msg:
        # torch < 2.12 words its dtype checks for int8 alone; ours are 2.13's (int8 or uint8).
        assert "_int_mm" in dev_msg and "dtype" in dev_msg, (dev_msg, cpu_msg)
        return
    if "int_mm_out_cpu:" in cpu_msg:
        # Same check, same words: "int_mm_out_cpu: X" on CPU is "_int_mm: X" here.
        assert "_int_mm: " + cpu_msg.split("int_mm_out_cpu: ", 1)[1].split("\n")[0] in dev_msg, (dev_msg, cpu_msg)
    else:
        assert cpu_msg.split("\n")[0] in dev_msg, (dev_msg, cpu_msg)


@pytest.mark.parametrize("where", ["mat2", "self", "out"])
def test_operands_on_different_devices(where):
    a, b = rnd((3, 5)).to(DEV), rnd((5, 7)).to(DEV)
    out = torch.empty(3, 7, dtype=torch.int32, device=DEV)
    if where == "mat2":
        b = b.cpu()
    elif where == "self":
        a = a.cpu()
    else:
        out = out.cpu()
    with pytest.raises(RuntimeError, match="_int_mm.*device"):
        torch._int_mm(a, b, out=out)
    if where != "out":
        with pytest.raises(RuntimeError, match="_int_mm.*device"):
            torch._int_mm(a, b)
