# Factories (zeros ... eye, arange, linspace, logspace) in every supported dtype, and every view op:
# each result is compared with CPU, and views must share the base's storage with CPU's metadata.
import platform

import pytest
import torch
from webgpu_env import DEV, DTYPES

import torch_webgpu  # noqa: F401

NUMERIC = [d for d in DTYPES if d is not torch.bool]
FLOATS = [torch.float32, torch.float16, torch.bfloat16]
X86 = platform.machine().lower() in ("x86_64", "amd64")


def ids(ds):
    return [str(d).replace("torch.", "") for d in ds]


def same(cpu, dev):
    """Bit-exact equality of a device result with the CPU one, dtype and shape included."""
    dev = dev.cpu()
    assert dev.dtype == cpu.dtype and dev.shape == cpu.shape, (dev.dtype, dev.shape, cpu.dtype, cpu.shape)
    assert (
        torch.equal(dev, cpu)
        or torch.equal(dev.isnan(), cpu.isnan())
        and torch.equal(dev.nan_to_num(0), cpu.nan_to_num(0))
    ), f"\ncpu={cpu}\ndev={dev}"


def both(f):
    """f(device) on CPU and on webgpu; raises on webgpu exactly when CPU does."""
    try:
        cpu = f("cpu")
    except Exception as e:  # the device must refuse what CPU refuses
        with pytest.raises(type(e)):
            f(DEV)
        return None, None
    return cpu, f(DEV)


# ---------------------------------------------------------------- factories


def fill_value(dt):
    return True if dt is torch.bool else 3.5 if dt.is_floating_point else -7 if dt is not torch.uint8 else 200


SIMPLE = {
    "zeros": lambda d, dt: torch.zeros(2, 3, 5, dtype=dt, device=d),
    "ones": lambda d, dt: torch.ones(7, dtype=dt, device=d),
    "full": lambda d, dt: torch.full((3, 4), fill_value(dt), dtype=dt, device=d),
    "full_0d": lambda d, dt: torch.full((), fill_value(dt), dtype=dt, device=d),
    "zeros_like": lambda d, dt: torch.zeros_like(torch.empty(3, 2, dtype=dt, device=d)),
    "ones_like": lambda d, dt: torch.ones_like(torch.empty(3, 2, dtype=dt, device=d).t()),
    "full_like": lambda d, dt: torch.full_like(torch.empty(4, 3, dtype=dt, device=d), fill_value(dt)),
    "new_zeros": lambda d, dt: torch.empty(1, dtype=dt, device=d).new_zeros((2, 2)),
    "new_ones": lambda d, dt: torch.empty(1, dtype=dt, device=d).new_ones((5,)),
    "new_full": lambda d, dt: torch.empty(1, dtype=dt, device=d).new_full((2, 3), fill_value(dt)),
    "empty_like_shape": lambda d, dt: torch.empty_like(torch.empty(4, 3, dtype=dt, device=d)).fill_(1),
    "eye": lambda d, dt: torch.eye(4, dtype=dt, device=d),
    "eye_nm": lambda d, dt: torch.eye(3, 6, dtype=dt, device=d),
    "eye_mn": lambda d, dt: torch.eye(5, 2, dtype=dt, device=d),
    "eye_0": lambda d, dt: torch.eye(0, 3, dtype=dt, device=d),
    "eye_out_strided": lambda d, dt: torch.eye(3, 4, out=torch.ones(4, 3, dtype=dt, device=d).t()),
    "tensor": lambda d, dt: torch.tensor([[1, 0, 3], [4, 5, 126]], dtype=dt, device=d),
    "tensor_scalar": lambda d, dt: torch.tensor(1, dtype=dt, device=d),
    "to": lambda d, dt: torch.arange(-20, 100, 7).to(dt).reshape(3, 6)[:, ::2].to(d),
    "randn_to": lambda d, dt: torch.randn(5, 6, generator=torch.Generator().manual_seed(0)).mul(50).to(dt).to(d),
}


@pytest.mark.parametrize("dt", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("name", list(SIMPLE))
def test_simple_factories(name, dt):
    cpu, dev = both(lambda d: SIMPLE[name](d, dt))
    if cpu is not None:
        assert dev.device.type == DEV
        same(cpu, dev)


# Sequences: (args, kwargs) for the op. Float aranges are compared with a tolerance: CPU computes
# them in vectorized chunks whose rounding depends on the CPU and the thread count.
ARANGE = [
    ((10,), {}),
    ((2, 30), {}),
    ((1, 100, 3), {}),
    ((50, -7, -4), {}),
    ((0, 1, 0.1), {}),
    ((-3.7, 10.3, 0.013), {}),
    ((5, 5), {}),
    ((-2.5, 3.5), {}),
    ((0, 600, 1), {}),
    ((0, 2**20, 37), {}),
]
LINSPACE = [
    ((0, 10, 7), {}),
    ((-5, 100, 1001), {}),
    ((10, -3, 50), {}),
    ((0, 1, 0), {}),
    ((3, 9, 1), {}),
    ((0, 1, 2), {}),
    ((-1, 1, 5), {}),
    ((1.5, 2.5, 11), {}),
    ((-1000, 1000, 4097), {}),
    ((0, 7, 50), {}),
    ((2**40, -(2**40) + 3, 999), {}),
]
LOGSPACE = [
    ((0, 2, 5), {}),
    ((0, 3, 4), {}),
    ((-2, 2, 9), {}),
    ((0, 10, 11), {"base": 2}),
    ((0, 6, 7), {"base": 3}),
    ((1, 0, 6), {"base": 0.5}),
    ((0, 4, 5), {"base": -2}),
    ((0, 1, 1), {}),
    ((0, 2, 3), {"base": 1}),
    ((-1, 1, 3), {"base": 0}),
    ((0, 3, 13), {"base": 4}),
]


def in_range(dt, args):
    """CPU's arange/linspace refuse values that don't fit the dtype; only test those that fit."""
    if dt.is_floating_point:
        return dt is not torch.float16 or all(abs(a) < 60000 for a in args)
    info = torch.iinfo(dt)
    return all(info.min <= a <= info.max for a in args[:2])


@pytest.mark.parametrize("dt", NUMERIC + [torch.bool], ids=ids(NUMERIC + [torch.bool]))
@pytest.mark.parametrize("case", range(len(ARANGE)))
def test_arange(case, dt):
    args, kw = ARANGE[case]
    if dt is not torch.bool and not in_range(dt, [args[0], args[min(1, len(args) - 1)]]):
        pytest.skip("out of the dtype's range")
    if not dt.is_floating_point and dt is not torch.bool and len(args) == 3 and int(args[2]) == 0:
        # the step truncates to 0 (torch before 2.12 divides by it on the CPU: SIGFPE)
        with pytest.raises(ValueError, match="step must be nonzero"):
            torch.arange(*args, dtype=dt, device=DEV)
        return
    cpu, dev = both(lambda d: torch.arange(*args, dtype=dt, device=d, **kw))
    if cpu is None:
        return
    if dt.is_floating_point and cpu.numel():
        # one ulp of the largest magnitude: CPU's vector lanes drift by that much
        atol = torch.finfo(dt).eps * cpu.abs().max().float().item()
        torch.testing.assert_close(dev.cpu(), cpu, atol=atol, rtol=torch.finfo(dt).eps)
    else:
        same(cpu, dev)


def test_arange_default_dtypes():
    for args in [(5,), (1, 7, 2), (0.5, 3), (0, 1, 0.25)]:
        same(torch.arange(*args), torch.arange(*args, device=DEV))
    same(torch.range(0, 10, 0.5), torch.range(0, 10, 0.5, device=DEV))
    same(torch.range(-3, 9, 2, dtype=torch.int32), torch.range(-3, 9, 2, dtype=torch.int32, device=DEV))


def test_arange_out_strided_and_resized():
    out = torch.zeros(4, 6, dtype=torch.int16, device=DEV)
    torch.arange(0, 12, out=out[:, ::2].t())
    ref = torch.zeros(4, 6, dtype=torch.int16)
    torch.arange(0, 12, out=ref[:, ::2].t())
    same(ref, out)
    out = torch.empty(3, device=DEV)
    torch.arange(0, 10, out=out)
    same(torch.arange(0.0, 10), out)


def test_arange_big_int64_exact():
    start, step = 2**53 + 1, 2**40 + 3
    same(torch.arange(start, start + 50 * step, step), torch.arange(start, start + 50 * step, step, device=DEV))
    same(torch.arange(-(2**62), -(2**62) + 9), torch.arange(-(2**62), -(2**62) + 9, device=DEV))


@pytest.mark.parametrize("dt", NUMERIC + [torch.bool], ids=ids(NUMERIC + [torch.bool]))
@pytest.mark.parametrize("case", range(len(LINSPACE)))
def test_linspace(case, dt):
    args, kw = LINSPACE[case]
    if dt is not torch.bool and not in_range(dt, args[:2]):
        pytest.skip("out of the dtype's range")
    cpu, dev = both(lambda d: torch.linspace(*args, dtype=dt, device=d, **kw))
    if cpu is not None:
        same(cpu, dev)  # linspace is exact: the CPU's formula is reproduced bit for bit


def test_linspace_random_exact():
    g = torch.Generator().manual_seed(1)
    for _ in range(40):
        s, e = (torch.rand(2, generator=g) * 2000 - 1000).tolist()
        n = int(torch.randint(2, 3000, (1,), generator=g))
        for dt in [torch.float32, torch.float16, torch.bfloat16]:
            same(torch.linspace(s, e, n, dtype=dt), torch.linspace(s, e, n, dtype=dt, device=DEV))
        si, ei = int(s * 1e6), int(e * 1e6)
        for dt in [torch.int64, torch.int32]:
            same(torch.linspace(si, ei, n, dtype=dt), torch.linspace(si, ei, n, dtype=dt, device=DEV))
        same(
            torch.linspace(int(s), int(e), n, dtype=torch.int16),
            torch.linspace(int(s), int(e), n, dtype=torch.int16, device=DEV),
        )


def test_linspace_tensor_args_and_out():
    s, e = torch.tensor(-2.0), torch.tensor(3.0)
    same(torch.linspace(s, e, 9), torch.linspace(s.to(DEV), e.to(DEV), 9, device=DEV))
    out = torch.empty(2, 20, device=DEV)[:, ::2]
    ref = torch.empty(2, 20)[:, ::2]
    torch.linspace(0, 1, 10, out=out[0])
    torch.linspace(0, 1, 10, out=ref[0])
    same(ref[0], out[0])


@pytest.mark.parametrize("dt", NUMERIC, ids=ids(NUMERIC))
@pytest.mark.parametrize("case", range(len(LOGSPACE)))
def test_logspace(case, dt):
    args, kw = LOGSPACE[case]
    if kw.get("base") == 0 and not dt.is_floating_point and not X86:
        pytest.skip("0 ** -1 = inf cast to an integer is undefined behaviour; the device does what x86 does")
    cpu, dev = both(lambda d: torch.logspace(*args, dtype=dt, device=d, **kw))
    if cpu is not None:
        same(cpu, dev)  # pow is computed to ~60 bits and rounded like CPU's double pow


def test_logspace_random_exact():
    g = torch.Generator().manual_seed(2)
    for _ in range(30):
        base = [10.0, 2.0, 0.5, 3.0, 2.718281828, 7.0, 1.5, 0.1][int(torch.randint(0, 8, (1,), generator=g))]
        s, e = (torch.rand(2, generator=g) * 40 - 20).tolist()
        n = int(torch.randint(2, 300, (1,), generator=g))
        for dt in FLOATS:
            same(torch.logspace(s, e, n, base=base, dtype=dt), torch.logspace(s, e, n, base=base, dtype=dt, device=DEV))
        si, ei = int(s) // 3, int(e) // 3
        for dt in [torch.int64, torch.int16]:
            same(
                torch.logspace(si, ei, n, base=base, dtype=dt),
                torch.logspace(si, ei, n, base=base, dtype=dt, device=DEV),
            )


def test_logspace_integer_powers_exact():
    for base in [2, 3, 10, 7]:
        for dt in [torch.float32, torch.int64, torch.float16]:
            n = 13 if base != 2 else 40
            if dt is torch.float16:
                n = 5
            same(
                torch.logspace(0, n - 1, n, base=base, dtype=dt),
                torch.logspace(0, n - 1, n, base=base, dtype=dt, device=DEV),
            )


def test_factories_float64():
    # float64 is stored (tests/test_float64.py); arange computes in float64 on the device (more in
    # tests/test_conform.py); logspace has no float64 kernel yet and says so
    assert torch.equal(torch.zeros(3, dtype=torch.float64, device=DEV).cpu(), torch.zeros(3, dtype=torch.float64))
    assert torch.equal(torch.arange(3, dtype=torch.float64, device=DEV).cpu(), torch.arange(3, dtype=torch.float64))
    with pytest.raises(NotImplementedError, match="float64"):
        torch.logspace(0, 2, 3, dtype=torch.float64, device=DEV)


@pytest.mark.parametrize(
    "op",
    [
        "arange.start_out",
        "range.out",
        "linspace.out",
        "logspace.out",
        "eye.out",
        "eye.m_out",
        "unfold",
        "as_strided",
        "view",
        "_reshape_alias",
    ],
)
def test_kernels_registered(op):
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + op, "PrivateUse1")


# ---------------------------------------------------------------- views


def make_base(kind, dt, device):
    """A (2, 3, 4, 5) tensor of distinct values, laid out as `kind`."""
    if kind == "contiguous":
        t = torch.arange(120).reshape(2, 3, 4, 5)
    elif kind == "permuted":
        t = torch.arange(120).reshape(5, 4, 3, 2).permute(3, 2, 1, 0)
    elif kind == "offset":
        t = torch.arange(400).reshape(4, 5, 4, 5)[1:3, 1:4]
    else:  # stepped: every other row of a larger tensor
        t = torch.arange(240).reshape(2, 3, 8, 5)[:, :, 1::2]
    big = t._base if t._base is not None else t
    big = (big % 97 - 40).to(dt).to(device) if dt is not torch.bool else (big % 3 == 0).to(device)
    return big.as_strided(t.shape, t.stride(), t.storage_offset())


VIEWS = {
    "view": lambda x: x.view(6, 20),
    "view_-1": lambda x: x.view(-1),
    "view_split_dim": lambda x: x.view(2, 3, 2, 2, 5),
    "view_as": lambda x: x.view_as(torch.empty(6, 4, 5)),
    "view_dtype_same": lambda x: x.view(
        torch.int16
        if x.element_size() == 2
        else torch.uint8
        if x.element_size() == 1
        else torch.int32
        if x.element_size() == 4
        else torch.int64
    ),
    "view_dtype_narrower": lambda x: x.view(torch.uint8),
    "reshape": lambda x: x.reshape(6, 4, 5),
    "reshape_-1": lambda x: x.reshape(-1),
    "reshape_as": lambda x: x.reshape_as(torch.empty(3, 40)),
    "flatten": lambda x: x.flatten(),
    "flatten_12": lambda x: x.flatten(1, 2),
    "unflatten": lambda x: x.unflatten(3, (5, 1)),
    "unflatten_2": lambda x: x.unflatten(2, (2, -1)),
    "permute": lambda x: x.permute(3, 1, 0, 2),
    "permute_neg": lambda x: x.permute(-1, -2, -3, -4),
    "transpose": lambda x: x.transpose(1, 3),
    "swapaxes": lambda x: x.swapaxes(0, 2),
    "t": lambda x: x[1, 2].t(),
    "t_1d": lambda x: x[1, 2, 0].t(),
    "mT": lambda x: x.mT,
    "squeeze": lambda x: x[:, :1, :, 2:3].squeeze(),
    "squeeze_dim": lambda x: x[:, :1].squeeze(1),
    "squeeze_dims": lambda x: x[:1, :, :1].squeeze((0, 2)),
    "squeeze_noop": lambda x: x.squeeze(1),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "unsqueeze_-1": lambda x: x.unsqueeze(-1),
    "unsqueeze_mid": lambda x: x.unsqueeze(2),
    "expand": lambda x: x[:, :1].expand(2, 3, 4, 5),
    "expand_new_dim": lambda x: x.unsqueeze(0).expand(3, -1, -1, -1, -1),
    "expand_as": lambda x: x[:1].expand_as(x),
    "broadcast_to": lambda x: x[:, :, :1].broadcast_to(2, 3, 6, 5),
    "narrow": lambda x: x.narrow(2, 1, 2),
    "narrow_neg": lambda x: x.narrow(-1, -3, 2),
    "select": lambda x: x.select(1, 2),
    "select_neg": lambda x: x.select(3, -1),
    "index_int": lambda x: x[1],
    "slice": lambda x: x[:, 1:3, ::2, 1:],
    "slice_step3": lambda x: x[..., ::3],
    "unbind": lambda x: x.unbind(2),
    "split": lambda x: x.split(2, dim=2),
    "split_sizes": lambda x: x.split([1, 3], dim=2),
    "split_with_sizes": lambda x: x.split_with_sizes([2, 2, 1], dim=3),
    "chunk": lambda x: x.chunk(2, 3),
    "tensor_split": lambda x: x.tensor_split(3, dim=3),
    "hsplit": lambda x: x[0, 0].hsplit(5),
    "vsplit": lambda x: x[0, 0].vsplit([1, 3]),
    "movedim": lambda x: x.movedim(0, 3),
    "movedim_multi": lambda x: x.movedim((0, 1), (2, 3)),
    "moveaxis": lambda x: x.moveaxis(-1, 0),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_dims": lambda x: x.diagonal(1, 2, 3),
    "diagonal_neg": lambda x: x.diagonal(-1, 0, 1),
    "diagonal_empty": lambda x: x.diagonal(9, 2, 3),
    "unfold": lambda x: x.unfold(3, 2, 1),
    "unfold_step": lambda x: x.unfold(2, 2, 2),
    "unfold_size1": lambda x: x.unfold(0, 1, 1),
    "as_strided": lambda x: x.as_strided((3, 3), (4, 2)),
    "as_strided_offset": lambda x: x.as_strided((2, 4), (1, 3), x.storage_offset() + 5),
    "alias": lambda x: torch.ops.aten.alias(x),
    "detach": lambda x: x.detach(),
    "real": lambda x: x.real if x.is_floating_point() else x.view(x.shape),
    "view_of_view": lambda x: x.transpose(0, 1)[1:].select(-1, 2).unsqueeze(0),
}

BASES = ["contiguous", "permuted", "offset", "stepped"]
VIEW_DTYPES = [torch.float32, torch.float16, torch.int8, torch.int64, torch.bool]


def outputs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def shares(view, base):
    return view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


@pytest.mark.parametrize("dt", VIEW_DTYPES, ids=ids(VIEW_DTYPES))
@pytest.mark.parametrize("kind", BASES)
@pytest.mark.parametrize("name", list(VIEWS))
def test_view(name, kind, dt):
    if name == "real" and dt is torch.bool:
        pytest.skip("bool has no .real")
    f = VIEWS[name]
    xc, xd = make_base(kind, dt, "cpu"), make_base(kind, dt, DEV)
    try:
        rc = outputs(f(xc))
    except Exception as e:  # e.g. view() of a non-viewable layout: the device must refuse too
        with pytest.raises(type(e)):
            f(xd)
        return
    rd = outputs(f(xd))
    assert len(rc) == len(rd)
    for c, d in zip(rc, rd):
        assert d.device.type == DEV
        # Same result, same metadata, and storage shared exactly when CPU shares it.
        same(c, d)
        assert d.stride() == c.stride() and d.storage_offset() == c.storage_offset()
        assert shares(d, xd) == shares(c, xc)
        assert (d._base is not None) == (c._base is not None)
    # A write through each non-overlapping view is seen by the base.
    for i, (c, d) in enumerate(zip(rc, rd)):
        if not shares(c, xc) or c.numel() == 0 or torch._debug_has_internal_overlap(c) != 0:
            continue
        src = torch.arange(c.numel()).reshape(c.shape).mul(3).sub(50)
        src = src.to(c.dtype) if c.dtype is not torch.bool else src % 2 == 0
        c.copy_(src)
        d.copy_(src.to(DEV))
        same(xc, xd)
        c.fill_(1)
        d.fill_(1)
        same(xc, xd)


def test_view_ops_are_views_of_base():
    # The ops the issue lists produce true views on the device: _base set, storage shared.
    x = torch.arange(24.0).reshape(2, 3, 4).to(DEV)
    for f in [
        lambda t: t.view(6, 4),
        lambda t: t.reshape(4, 6),
        lambda t: t.flatten(),
        lambda t: t.unflatten(2, (2, 2)),
        lambda t: t.permute(2, 0, 1),
        lambda t: t.transpose(0, 2),
        lambda t: t[0].t(),
        lambda t: t[:1].squeeze(0),
        lambda t: t.unsqueeze(1),
        lambda t: t[:, :1].expand(2, 5, 4),
        lambda t: t[:1].broadcast_to(3, 3, 4),
        lambda t: t.narrow(2, 1, 2),
        lambda t: t.select(1, 2),
        lambda t: t.unbind(1)[1],
        lambda t: t.split(2, 2)[1],
        lambda t: t.chunk(3, 1)[2],
        lambda t: t.movedim(0, 2),
        lambda t: t.diagonal(0, 1, 2),
        lambda t: t.unfold(2, 2, 1),
        lambda t: t.as_strided((3, 3), (2, 5), 1),
    ]:
        v = f(x)
        assert v._base is x and shares(v, x)


def test_inplace_view_ops():
    for f in [
        lambda t: t.squeeze_(1),
        lambda t: t.unsqueeze_(0),
        lambda t: t.transpose_(0, 2),
        lambda t: t[0].t_(),
        lambda t: t.as_strided_((2, 2), (1, 2), 1),
        lambda t: t.swapdims_(0, 1),
    ]:
        xc = torch.arange(24.0).reshape(2, 1, 12)
        xd = xc.to(DEV)
        rc, rd = f(xc), f(xd)
        same(rc, rd)
        assert rd.stride() == rc.stride() and rd.storage_offset() == rc.storage_offset()


def test_contiguous_of_views_copies_on_device():
    x = make_base("offset", torch.float16, DEV)
    y = x.permute(3, 0, 2, 1).contiguous()
    assert y.is_contiguous() and not shares(y, x)
    same(make_base("offset", torch.float16, "cpu").permute(3, 0, 2, 1).contiguous(), y)


TRANSPOSES = {
    "t": ((70, 45), lambda t: t.t()),
    "t of an offset slice": ((70, 45), lambda t: t[3:, 1:].t()),
    "NCHW to NHWC": ((3, 20, 9, 11), lambda t: t.permute(0, 2, 3, 1)),
    "NHWC to NCHW": ((3, 9, 11, 20), lambda t: t.permute(0, 3, 1, 2)),
    "NCHW to NHWC, even": ((2, 16, 8, 10), lambda t: t.permute(0, 2, 3, 1)),
    "offset by one (16-bit: element-wise)": ((41, 64), lambda t: t[1:, :].t()),
    "channels_last": ((2, 16, 10, 10), lambda t: t.contiguous(memory_format=torch.channels_last)),
    "batched": ((5, 40, 36), lambda t: t.transpose(1, 2)),
    "expanded batch": ((1, 40, 36), lambda t: t.expand(3, 40, 36).transpose(1, 2)),
    "last two of 4-d": ((2, 3, 50, 9), lambda t: t.transpose(-1, -2)),
    "ragged tiles": ((1000, 33), lambda t: t.t()),
    "too small for tiles": ((5, 3), lambda t: t.t()),
}


@pytest.mark.parametrize("case", list(TRANSPOSES), ids=lambda c: c.replace(" ", "_"))
@pytest.mark.parametrize(
    "dt",
    [torch.float32, torch.int32, torch.float16, torch.bfloat16],
    ids=ids([torch.float32, torch.int32, torch.float16, torch.bfloat16]),
)
@pytest.mark.parametrize("tiled", ["1", "0"])
def test_contiguous_of_transposes(case, dt, tiled, monkeypatch):
    # .contiguous() / copy_ of a transposed source: tiles through workgroup memory (32-bit elements:
    # wgsl/kernels/transpose32.wgsl; 16-bit ones with even sizes, strides and offsets:
    # transpose16.wgsl); TORCH_WEBGPU_TRANSPOSE_COPY=0 and other shapes take the element-wise copy.
    # Bit-exact either way.
    monkeypatch.setenv("TORCH_WEBGPU_TRANSPOSE_COPY", tiled)
    shape, f = TRANSPOSES[case]
    x = (torch.randn(shape) * 100).to(dt)
    same(f(x).contiguous(), f(x.to(DEV)).contiguous())
    dst = torch.empty(f(x).shape, dtype=dt, device=DEV)
    dst.copy_(f(x.to(DEV)))
    same(f(x).contiguous(), dst)


@pytest.mark.parametrize("dt", [torch.float32, torch.float16], ids=ids([torch.float32, torch.float16]))
def test_transpose_copy_grid_folded_past_65535_workgroups(dt):
    # 70001 batches of one 8 x 10 tile: a grid of 70001 workgroups folds into two rows of 65535,
    # whose 61069 spare workgroups (batch indices past the last) wrote their tiles past the
    # destination, over whatever followed it in its storage.
    x = (torch.randn(70001, 10, 8) * 100).to(dt)
    big = torch.full((2 * x.numel(),), 7, dtype=dt, device=DEV)
    big[: x.numel()].view(70001, 8, 10).copy_(x.to(DEV).transpose(1, 2))
    want = torch.cat([x.transpose(1, 2).flatten(), torch.full((x.numel(),), 7, dtype=dt)])
    same(want, big)


@pytest.mark.parametrize("tiled", ["1", "0"])
def test_copy_into_channels_last(tiled, monkeypatch):
    # A dense destination in another dimension order (channels_last, channels_last_3d) from a
    # contiguous source: the tiled transpose in the destination's order.
    monkeypatch.setenv("TORCH_WEBGPU_TRANSPOSE_COPY", tiled)
    for shape, fmt in (((2, 16, 10, 12), torch.channels_last), ((2, 12, 3, 10, 9), torch.channels_last_3d)):
        x = torch.randn(shape)
        dst = torch.empty(shape, device=DEV).contiguous(memory_format=fmt)
        dst.copy_(x.to(DEV))
        assert dst.is_contiguous(memory_format=fmt)
        same(x, dst)
        same(x.contiguous(memory_format=fmt), x.to(DEV).contiguous(memory_format=fmt))


def test_views_do_not_allocate():
    x = torch.zeros(1024, 1024, device=DEV)
    torch.webgpu.synchronize()
    before = torch.webgpu.memory_allocated()
    vs = [x.view(-1), x.t(), x[::2], x.unfold(0, 4, 4), x.diagonal(), x.expand(3, -1, -1), x.unsqueeze(0)]
    assert torch.webgpu.memory_allocated() == before
    del vs


@pytest.mark.parametrize("kind", BASES)
@pytest.mark.parametrize("dim,size,step", [(3, 2, 1), (3, 3, 2), (2, 2, 2), (2, 1, 3), (0, 2, 1), (-1, 5, 1)])
def test_unfold_backward(kind, dim, size, step):
    xc = make_base(kind, torch.float32, "cpu").requires_grad_()
    xd = make_base(kind, torch.float32, DEV).requires_grad_()
    yc, yd = xc.unfold(dim, size, step), xd.unfold(dim, size, step)
    g = torch.arange(yc.numel(), dtype=torch.float32).reshape(yc.shape).sub(7)
    yc.backward(g)
    yd.backward(g.to(DEV))
    same(xc.grad, xd.grad)


def test_view_backward():
    # gradients of views flow back natively (select/slice/diagonal backward, expand's sum, ...)
    for f in [
        lambda t: t.select(1, 2),
        lambda t: t[:, 1:, ::2],
        lambda t: t.diagonal(0, 2, 3),
        lambda t: t.permute(3, 1, 0, 2),
        lambda t: t[:, :1].expand(2, 3, 4, 5),
        lambda t: t.flatten(1),
        lambda t: t.movedim(0, 3),
        lambda t: t.mT,
    ]:
        xc = torch.arange(120.0).reshape(2, 3, 4, 5).requires_grad_()
        xd = torch.arange(120.0).reshape(2, 3, 4, 5).to(DEV).requires_grad_()
        yc, yd = f(xc), f(xd)
        g = torch.arange(yc.numel(), dtype=torch.float32).reshape(yc.shape)
        yc.backward(g)
        yd.backward(g.to(DEV))
        same(xc.grad, xd.grad)


@pytest.mark.parametrize(
    "dt", [torch.float32, torch.int8, torch.float16], ids=ids([torch.float32, torch.int8, torch.float16])
)
def test_narrow_copy(dt):
    xc, xd = make_base("permuted", dt, "cpu"), make_base("permuted", dt, DEV)
    for args in [(0, 1, 1), (3, -3, 2), (2, 4, 0), (-1, 0, 5)]:
        rc, rd = xc.narrow_copy(*args), xd.narrow_copy(*args)
        same(rc, rd)
        assert not shares(rd, xd)
    out = torch.empty(0, dtype=dt, device=DEV)
    torch.narrow_copy(xd, 1, 1, 2, out=out)
    same(torch.narrow_copy(xc, 1, 1, 2), out)
    for args in [(4, 0, 1), (1, 0, 9), (1, 5, 0)]:
        cpu, dev = both(lambda d: (xc if d == "cpu" else xd).narrow_copy(*args))
        assert cpu is None
