# The foundation: device and module API, exact copies in every dtype, views, memory accounting,
# out-of-memory, the Stream's batching (counters), and the first kernel (add, float32).
import gc
import json
import math
import os
import subprocess
import sys
import threading
import warnings

import pytest
import torch
from webgpu_env import DEV, DTYPES


def special_values(dtype, n=64, seed=0):
    """A CPU tensor of dtype holding the edge cases of that dtype plus random bits."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,), generator=g).bool()
    if dtype.is_floating_point:
        bits = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}[dtype]
        info = torch.iinfo(bits)
        raw = torch.randint(info.min, info.max, (n,), generator=g, dtype=torch.int64).to(bits)
        x = raw.view(dtype).clone()
        fi = torch.finfo(dtype)
        specials = torch.tensor(
            [
                0.0,
                -0.0,
                float("inf"),
                float("-inf"),
                float("nan"),
                fi.max,
                -fi.max,
                fi.tiny,
                fi.tiny / 4,
                -fi.tiny / 8,
                fi.eps,
                1.0,
                -1.0,
            ],
            dtype=dtype,
        )
        x[: specials.numel()] = specials
        # A NaN with a payload, to check the bits travel unchanged.
        payload = {torch.float32: 0x7FC01234, torch.float16: 0x7E12, torch.bfloat16: 0x7FC3}[dtype]
        x.view(bits)[specials.numel()] = payload if payload < 2**15 or bits == torch.int32 else payload - 2**16
        return x
    info = torch.iinfo(dtype)
    x = torch.randint(info.min, info.max, (n,), generator=g, dtype=torch.int64).to(dtype)
    x[:4] = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1], dtype=torch.int64).to(dtype)
    return x


def bits(t):
    """The raw bytes of a CPU tensor, for bit-exact comparison (NaN payloads included)."""
    t = t.contiguous()
    return t.view(torch.uint8) if t.element_size() > 1 or t.dtype != torch.bool else t.to(torch.uint8)


def assert_bits_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert torch.equal(bits(a), bits(b))


# ---------------------------------------------------------------- device and module API


def test_seed_examples():
    a = torch.tensor([-1.5, 2.7, 1.0, 2.0], device="webgpu")
    b = torch.tensor([-1.0, 0.9, 1.1, -2.1], device="webgpu")
    assert torch.allclose((a + b).to("cpu"), torch.tensor([-2.5, 3.6, 2.1, -0.1]))
    device = torch.device("webgpu")
    x, y = torch.randn(10, 10, 10), torch.randn(10, 10, 10)
    c = (x.to(device) + y.to(device)).to("cpu")
    assert torch.equal(c, x + y)
    assert str(x.to(device).device) == "webgpu:0"


def test_module_api():
    assert torch.webgpu.is_available()
    assert torch.webgpu.device_count() >= 1
    assert torch.webgpu.current_device() == 0
    torch.webgpu.set_device(0)
    torch.webgpu.synchronize()
    with pytest.raises(RuntimeError, match="device index"):
        torch.webgpu.set_device(7)
    info = torch.webgpu.info()
    for key in ("adapter", "backend", "driver", "vendor", "limits", "features", "dawn", "dawn_version"):
        assert key in info
    assert info["limits"]["maxStorageBufferBindingSize"] > 0


def test_generated_methods():
    x = torch.ones(3)
    y = x.webgpu()
    assert y.is_webgpu and not x.is_webgpu
    assert y.device.type == "webgpu"
    m = torch.nn.Linear(2, 2).to(torch.float32)
    m.webgpu()
    assert all(p.is_webgpu for p in m.parameters())
    assert torch.equal(m.weight.cpu(), m.weight.cpu())


def test_manual_seed_stored():
    torch.webgpu.manual_seed(1234)
    assert torch.webgpu.initial_seed() == 1234
    torch.manual_seed(99)
    assert torch.webgpu.initial_seed() == 99
    state = torch.webgpu.get_rng_state()
    torch.webgpu.manual_seed(5)
    torch.webgpu.set_rng_state(state)
    assert torch.webgpu.initial_seed() == 99
    torch.webgpu.seed()


def test_abi_matches_installed_wgpudawn():
    """Struct sizes compiled into the extension equal those of the installed wgpudawn module (cffi
    measured them against Dawn's own headers), so a changed Dawn is caught before it corrupts memory."""
    from torch_webgpu import _C

    code = (
        "import json, sys; from torch_webgpu import _dawn; m = _dawn._load_cffi_module(); "
        "print(json.dumps({n: m.ffi.sizeof(n) for n in json.loads(sys.argv[1])}))"
    )
    compiled = dict(_C._abi_struct_sizes())
    assert len(compiled) > 100
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(sorted(compiled))], capture_output=True, text=True, check=True
    ).stdout
    expected = json.loads(out)
    for name, size in compiled.items():
        assert expected[name] == size, name


def test_dawn_is_the_pinned_wgpudawn():
    info = torch.webgpu.info()
    assert info["dawn"] == "wgpudawn"
    assert info["dawn_version"].startswith("v2026"), info["dawn_version"]
    from importlib.metadata import version

    assert version("wgpudawn") == "0.32.0.4"


def test_info_lists_features_and_toggles():
    info = torch.webgpu.info()
    feats = info["features"]
    # Mesa >= 25's lavapipe and every GPU we run on have both; a Dawn or driver that lost them
    # would silently fall back to the packed half path and scalar reductions.
    assert "shader-f16" in feats and "subgroups" in feats, feats
    assert info["subgroup_min_size"] >= 1 and info["subgroup_max_size"] >= info["subgroup_min_size"]
    assert "allow_unsafe_apis" in info["dawn_device_toggles"]
    assert isinstance(info["subgroup_matrix_configs"], list)
    if "chromium-experimental-subgroup-matrix" in feats:
        assert info["subgroup_matrix_configs"], "subgroup matrices without a configuration"
        for c in info["subgroup_matrix_configs"]:
            assert {"component", "result", "M", "N", "K"} <= set(c)


def test_cuda_clocks_held_on_nvidia_only():
    # runtime/clocks.h: a device on an NVIDIA adapter retains a CUDA primary context so that the
    # driver keeps the GPU's clocks up; other adapters (lavapipe here) are left alone.
    info = torch.webgpu.info()
    if info["vendor"].lower() == "nvidia" or "nvidia" in info["adapter"].lower():
        expected = "off" if os.environ.get("TORCH_WEBGPU_CUDA_CLOCKS") == "0" else "held"
        assert info["cuda_clocks"] == expected, info["cuda_clocks"]
    else:
        assert info["cuda_clocks"] == "n/a", info["cuda_clocks"]
    # Turned off, a fresh process reports it (only meaningful where it would otherwise hold one).
    code = "import torch, torch_webgpu; print(torch.webgpu.info()['cuda_clocks'])"
    env = dict(os.environ, TORCH_WEBGPU_CUDA_CLOCKS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] in ("off", "n/a"), out.stdout


def test_float64_stored_and_complex128_refused():
    # float64 is emulated (tests/test_float64.py; TORCH_WEBGPU_FLOAT64=0 restores its refusal)
    assert torch.equal(torch.zeros(3, dtype=torch.float64, device=DEV).cpu(), torch.zeros(3, dtype=torch.float64))
    assert torch.equal(torch.ones(3, dtype=torch.float64).to(DEV).cpu(), torch.ones(3, dtype=torch.float64))
    with pytest.raises(TypeError, match="complex64 is supported"):
        torch.zeros(3, dtype=torch.complex128, device=DEV)


def test_accelerator_device_capability_lists_the_dtypes_held():
    if not hasattr(torch.accelerator, "get_device_capability"):
        pytest.skip("torch.accelerator.get_device_capability needs a newer torch")
    dtypes = torch.accelerator.get_device_capability()["supported_dtypes"]
    for t in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.complex64, torch.int64, torch.bool):
        assert t in dtypes, t
        torch.empty(2, dtype=t, device=DEV)
    for t in (torch.complex128, torch.complex32, torch.quint8):
        assert t not in dtypes, t


def test_quantized_tensors_refused_by_name():
    # not "Could not run 'aten::empty_quantized' ... 'Quantizedwebgpu' backend"
    x = torch.tensor([0.1, 0.5, -0.3, 1.2])
    q = torch.quantize_per_tensor(x, 0.1, 5, torch.quint8)
    with pytest.raises(TypeError, match="quantized tensors are not supported on the webgpu device"):
        q.to(DEV)
    with pytest.raises(TypeError, match="_empty_affine_quantized: quantized tensors"):
        torch._empty_affine_quantized([2, 2], scale=2.0, zero_point=3, dtype=torch.quint8, device=DEV)
    from torch_webgpu.fallback import fallback_enabled

    with fallback_enabled(True), warnings.catch_warnings():  # quantize_per_tensor runs on the CPU
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="quantized tensors"):
            torch.quantize_per_tensor(x.to(DEV), 0.1, 5, torch.quint8)
    assert torch.equal((x.to(DEV) + 1).cpu(), x + 1)  # the device is unaffected


def test_sparse_tensors_refused_by_name():
    # not "Could not run 'aten::...' with arguments from the 'Sparsewebgpu' backend"
    s = torch.eye(3).to_sparse()
    with pytest.raises(NotImplementedError, match="sparse tensors are not supported on the webgpu device"):
        s.to(DEV)
    with pytest.raises(NotImplementedError, match="sparse_coo_tensor.*sparse tensors are not supported"):
        torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2), device=DEV)
    # a CSR tensor moves (ATen builds it from dense parts), but its ops have no webgpu kernels
    csr = torch.eye(3).to_sparse_csr().to(DEV)
    with pytest.raises(NotImplementedError, match="sparse tensors are not supported"):
        csr @ torch.ones(3, 2, device=DEV)
    assert torch.equal(s.to_dense().to(DEV).cpu(), torch.eye(3))


# ---------------------------------------------------------------- copies


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_roundtrip_bit_exact(dtype):
    x = special_values(dtype, 257)
    y = x.to(DEV)
    assert y.dtype == dtype and y.device.type == "webgpu"
    assert_bits_equal(y.cpu(), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_roundtrip_noncontiguous(dtype):
    base = special_values(dtype, 12 * 10, seed=1).reshape(12, 10)
    sources = {
        "transposed": base.t(),
        "stepped": base[1::3, ::2],
        "expanded": base[:1].expand(5, 10),
        "offset": base[3:, 1:],
    }
    for name, src in sources.items():
        d = src.to(DEV)  # non-contiguous CPU source
        assert_bits_equal(d.cpu(), src.contiguous())
        # non-contiguous webgpu source back to CPU
        dev_base = base.to(DEV)
        view = {
            "transposed": dev_base.t(),
            "stepped": dev_base[1::3, ::2],
            "expanded": dev_base[:1].expand(5, 10),
            "offset": dev_base[3:, 1:],
        }[name]
        assert_bits_equal(view.cpu(), src.contiguous())
        # non-contiguous webgpu destination
        dst_base = torch.zeros(24, 20, dtype=dtype, device=DEV)
        dst = dst_base[::2, 1::2][: src.shape[0], : src.shape[1]] if src.shape[1] <= 10 else None
        if dst is not None and dst.shape == src.shape:
            dst.copy_(src)
            expect = torch.zeros(24, 20, dtype=dtype)
            expect[::2, 1::2][: src.shape[0], : src.shape[1]] = src
            assert_bits_equal(dst_base.cpu(), expect)
        # non-contiguous CPU destination
        out = torch.zeros(src.shape[1], src.shape[0], dtype=dtype).t()
        out.copy_(view)
        assert_bits_equal(out.contiguous(), src.contiguous())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_device_to_device_views_of_one_storage(dtype):
    x = special_values(dtype, 100, seed=2)
    d = x.to(DEV)
    d[50:].copy_(d[:50])  # disjoint views of one storage
    e = x.clone()
    e[50:] = x[:50]
    assert_bits_equal(d.cpu(), e)
    d2 = x.to(DEV).reshape(10, 10)
    d2[:, 5:].copy_(d2[:, :5].flip(1) if False else d2[:, :5])  # strided, interleaved, non-overlapping
    e2 = x.clone().reshape(10, 10)
    e2[:, 5:] = e2[:, :5].clone()
    assert_bits_equal(d2.cpu(), e2)
    # odd element offsets for sub-word dtypes
    d3 = x.to(DEV)
    d3[1:34].copy_(d3[51:84])
    e3 = x.clone()
    e3[1:34] = x[51:84]
    assert_bits_equal(d3.cpu(), e3)


@pytest.mark.parametrize("src_dtype", DTYPES, ids=str)
def test_dtype_conversion_on_device(src_dtype):
    x = special_values(src_dtype, 40, seed=3)
    if src_dtype.is_floating_point:
        x = torch.where(torch.isfinite(x) & (x.float().abs() < 1e6), x, torch.zeros((), dtype=src_dtype))
    d = x.to(DEV)
    for dst_dtype in DTYPES:
        out = torch.empty(40, dtype=dst_dtype, device=DEV)
        out.copy_(d)
        expect = torch.empty(40, dtype=dst_dtype)
        expect.copy_(x)
        assert_bits_equal(out.cpu(), expect)


def test_copy_broadcasts_and_scalars():
    d = torch.zeros(4, 3, device=DEV)
    d.copy_(torch.tensor([1.0, 2.0, 3.0]))
    assert torch.equal(d.cpu(), torch.tensor([1.0, 2.0, 3.0]).expand(4, 3))
    d.copy_(torch.tensor(7.0, device=DEV))
    assert torch.equal(d.cpu(), torch.full((4, 3), 7.0))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_item_fill_zero_clone(dtype):
    x = special_values(dtype, 30, seed=4)
    d = x.to(DEV)
    for i in (0, 5, 29):
        a, b = d[i].item(), x[i].item()
        assert (a == b) or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
    value = True if dtype == torch.bool else (2.5 if dtype.is_floating_point else 3)
    f = d.clone()
    f[3:17].fill_(value)
    e = x.clone()
    e[3:17].fill_(value)
    assert_bits_equal(f.cpu(), e)
    f[::3].zero_()
    e[::3].zero_()
    assert_bits_equal(f.cpu(), e)
    f.fill_(torch.tensor(value, dtype=dtype, device=DEV))
    assert_bits_equal(f.cpu(), torch.full((30,), value, dtype=dtype))
    c = d.t() if d.dim() == 2 else d.reshape(5, 6).t().contiguous()
    assert c.is_contiguous()
    assert_bits_equal(c.cpu(), x.reshape(5, 6).t().contiguous())


def test_views_share_storage():
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    d = x.to(DEV)
    for view, ref in [
        (d[1], x[1]),
        (d[:, 2], x[:, 2]),
        (d.t(), x.t()),
        (d.view(6, 4), x.view(6, 4)),
        (d[1:3, ::2], x[1:3, ::2]),
        (d.as_strided((2, 2), (1, 6), 1), x.as_strided((2, 2), (1, 6), 1)),
        (d.reshape(2, 12), x.reshape(2, 12)),
    ]:
        assert view.untyped_storage().data_ptr() == d.untyped_storage().data_ptr()
        assert torch.equal(view.cpu(), ref)
    d.select(1, 2).fill_(-1.0)
    x.select(1, 2).fill_(-1.0)
    assert torch.equal(d.cpu(), x)


def test_resize_and_set():
    d = torch.arange(6, dtype=torch.float32).to(DEV)
    d.resize_(10)
    assert d.shape == (10,) and torch.equal(d[:6].cpu(), torch.arange(6, dtype=torch.float32))
    d.resize_(2, 3)
    assert torch.equal(d.cpu(), torch.arange(6, dtype=torch.float32).reshape(2, 3))
    e = torch.empty(0, device=DEV)
    e.set_(d.untyped_storage(), 2, (2, 2), (1, 2))
    assert torch.equal(e.cpu(), torch.arange(6, dtype=torch.float32).as_strided((2, 2), (1, 2), 2))
    f = torch.empty(0, device=DEV).set_(d)
    f.fill_(4.0)
    assert torch.equal(d.cpu(), torch.full((2, 3), 4.0))
    g = torch.empty(3, device=DEV).set_()
    assert g.numel() == 0


# ---------------------------------------------------------------- add, the first kernel


def test_add_float32_cases():
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(33, 17, generator=g), torch.randn(17, generator=g)
    da, db = a.to(DEV), b.to(DEV)
    assert torch.equal((da + db).cpu(), a + b)  # broadcast
    assert torch.equal((da.t()[::2] + 1.5).cpu(), a.t()[::2] + 1.5)  # strided, scalar
    assert torch.allclose(torch.add(da, db, alpha=-0.5).cpu(), torch.add(a, b, alpha=-0.5))
    out = torch.empty(33, 17, device=DEV)
    torch.add(da, db, out=out)
    assert torch.equal(out.cpu(), a + b)
    c = da.clone()
    c += db
    assert torch.equal(c.cpu(), a + b)
    assert torch.equal((da + torch.tensor(2.0)).cpu(), a + 2.0)  # CPU 0-dim tensor operand


# ---------------------------------------------------------------- the Stream


def test_dependent_chain_is_batched():
    x = torch.zeros(4, device=DEV)
    one = torch.ones(4, device=DEV)
    torch.webgpu.synchronize()
    start = torch.webgpu.stream_counters()

    def delta():
        now = torch.webgpu.stream_counters()
        return {k: now[k] - start[k] for k in now}

    for _ in range(2000):
        x = x + one
    during = delta()
    assert during["dispatches"] == 2000
    assert during["waits"] == 0
    assert during["submits"] < 2000 / 100
    assert torch.equal(x.cpu(), torch.full((4,), 2000.0))


def test_upload_after_recorded_reads_keeps_order():
    """A host write into memory that recorded-but-unsubmitted work reads must not overtake it."""
    src = torch.full((1024,), 1.0, device=DEV)
    dst = src + 0.0  # recorded, not submitted
    src.copy_(torch.full((1024,), 2.0))  # host upload into the buffer `dst` was computed from
    assert torch.equal(dst.cpu(), torch.full((1024,), 1.0))
    assert torch.equal(src.cpu(), torch.full((1024,), 2.0))


@pytest.mark.parametrize("nbytes", [(4 << 20) - 4, (4 << 20) + 4, 8 << 20, (20 << 20) + 12])
def test_large_uploads_through_staging(nbytes):
    """Uploads past 4 MiB go through the Stream's own staging buffers in 8 MiB chunks: every byte
    lands, at a storage offset, after recorded work that reads the destination."""
    gen = torch.Generator().manual_seed(nbytes)
    n = nbytes // 4
    host = torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int32, generator=gen)
    base = torch.zeros(n + 3, dtype=torch.int32, device=DEV)
    dst = base[3:]  # a storage offset into the block
    before = dst + 1  # recorded, not submitted: reads the zeros
    dst.copy_(host)
    assert torch.equal(before.cpu(), torch.ones(n, dtype=torch.int32))
    assert torch.equal(dst.cpu(), host)
    assert torch.equal(base[:3].cpu(), torch.zeros(3, dtype=torch.int32))
    # Uploads back to back reuse the staging buffers (each waits for the copy out of its buffer).
    host2 = host.flip(0)
    for src in (host2, host, host2):
        dst.copy_(src)
    assert torch.equal(dst.cpu(), host2)


@pytest.mark.parametrize("nbytes", [(8 << 20) + 1, (8 << 20) + 3, (24 << 20) + 5, (40 << 20) + 7])
def test_transfers_on_several_threads_keep_every_byte(nbytes):
    """Copies into and out of mapped staging memory of 8 MiB and more are split over threads
    (TORCH_WEBGPU_COPY_THREADS): sizes that do not divide by the number of parts, odd byte counts,
    both directions, at a byte offset. Parts rounded down once dropped the last byte of an
    8 MiB + 1 byte read, and on 16 cores the last word of a 40 MiB + 4 byte one."""
    gen = torch.Generator().manual_seed(nbytes)
    host = torch.randint(0, 256, (nbytes + 1,), dtype=torch.uint8, generator=gen)
    dev = host.to(DEV)
    assert torch.equal(dev.cpu(), host)
    assert torch.equal(dev[1:].cpu(), host[1:])
    assert torch.equal((dev[1:] ^ 0).cpu(), host[1:])  # computed on the GPU from the upload
    out = torch.zeros(nbytes + 1, dtype=torch.uint8, device=DEV)
    out[1:].copy_(host[:-1])
    assert torch.equal(out[1:].cpu(), host[:-1])


def test_uploads_past_the_staging_pool():
    """More upload chunks in flight than the Stream keeps staging buffers (8 of 32 MiB): a chunk
    takes a buffer whose copy is done, a new one, or waits for the oldest; every upload lands."""
    n = ((32 << 20) + (4 << 20)) // 4  # two chunks each
    hosts = [torch.full((n,), float(i)) + torch.arange(n, dtype=torch.float32) % 7 for i in range(10)]
    devs = [torch.empty(n, device=DEV) for _ in hosts]
    for d, h in zip(devs, hosts):
        d.copy_(h)
        d.add_(1)  # recorded work between the uploads
    for d, h in zip(devs, hosts):
        assert torch.equal(d.cpu(), h + 1)


@pytest.mark.parametrize("nbytes,start", [((64 << 20) + 4, 0), ((64 << 20) + 7, 1), ((96 << 20) - 3, 3)])
def test_large_readbacks_in_chunks(nbytes, start):
    """Reads of 64 MiB and more go through two 32 MiB staging buffers in turns (the last chunk short,
    the first starting inside a word): every byte arrives, at a byte offset into the storage, and a
    read with an armed index check still reports it."""
    gen = torch.Generator().manual_seed(nbytes)
    host = torch.randint(0, 256, (start + nbytes,), dtype=torch.uint8, generator=gen)
    base = host.to(DEV)
    view = base[start:]
    assert torch.equal(view.cpu(), host[start:])
    before = torch.webgpu.stream_counters()
    out = torch.empty(nbytes, dtype=torch.uint8)
    out.copy_(view)
    assert torch.equal(out, host[start:])
    assert torch.webgpu.stream_counters()["readback_bytes"] - before["readback_bytes"] == nbytes
    # An index error armed before the large read is found by it.
    idx = torch.tensor([0, 5], device=DEV)
    torch.zeros(3, device=DEV).index_select(0, idx)
    with pytest.raises(IndexError):
        view.cpu()


def test_async_read_and_staged_write():
    """The process group's copy tickets (torch_webgpu/distributed.py): an _AsyncRead started on a
    tensor returns its bytes as they were when started, whatever is recorded after; an _AsyncWrite
    reused for uploads lands each one in order with the work around it; bad operands raise."""
    from torch_webgpu import _C

    base = torch.arange(3000, dtype=torch.float32, device=DEV)
    src = base[2:]  # a storage offset
    r, w = _C._AsyncRead(), _C._AsyncWrite()
    r.start(src)
    src.mul_(2)  # recorded after the start
    out = torch.empty(2998)
    r.finish(out)
    assert torch.equal(out, torch.arange(2, 3000, dtype=torch.float32))
    assert r.ready()
    dst = torch.zeros(2998, device=DEV)
    for k in range(4):
        host = torch.full((2998,), float(k))
        w.upload(dst, host)
        dst.add_(1)
    assert torch.equal(dst.cpu(), torch.full((2998,), 4.0))
    with pytest.raises(RuntimeError, match="staged upload"):
        w.upload(dst, torch.zeros(5))
    with pytest.raises(RuntimeError, match="asynchronous read"):
        r.finish(torch.empty(3))


def test_host_memory_as_device_buffer(tmp_path):
    """_C._import_host (docs/design.md, "Memory"): a webgpu tensor over a CPU tensor's memory. The
    GPU's writes are seen by the host once the work is done and the host's writes by later kernels;
    the host storage outlives the device tensor while queued work uses it; misaligned memory and
    non-CPU tensors raise."""
    from torch_webgpu import _C

    align = _C._host_import_alignment()
    if align == 0:
        with pytest.raises(RuntimeError, match="host-mapped-pointer"):
            _C._import_host(torch.zeros(4096, dtype=torch.uint8))
        pytest.skip("this adapter cannot use host memory as a device buffer")
    # the pages of a regular file are refused (NVIDIA's driver cannot pin them: Dawn would lose the device)
    path = tmp_path / "region"
    path.write_bytes(b"")
    os.truncate(path, 1 << 20)
    with pytest.raises(RuntimeError, match="not the pages of a file"):
        _C._import_host(torch.from_file(str(path), shared=True, size=1 << 20, dtype=torch.uint8))
    shm = f"/dev/shm/torch_webgpu_test_{os.getpid()}"
    with open(shm, "wb") as fh:
        fh.truncate(1 << 20)
    host = torch.from_file(shm, shared=True, size=1 << 20, dtype=torch.uint8)
    os.unlink(shm)
    dev = _C._import_host(host)
    assert dev.device.type == "webgpu" and dev.dtype == torch.uint8 and dev.shape == (1 << 20,)
    f = dev[: 4 * 5000].view(torch.float32)
    x = torch.arange(5000, dtype=torch.float32, device=DEV)
    f.copy_(x * 3)  # a kernel's result, copied by the GPU into host memory
    torch.webgpu.synchronize()
    assert torch.equal(host[: 4 * 5000].view(torch.float32), torch.arange(5000, dtype=torch.float32) * 3)
    host[: 4 * 5000].view(torch.float32).fill_(-1.5)
    out = torch.empty(5000, device=DEV)
    torch.add(f, x, out=out)  # a kernel reading host memory
    assert torch.equal(out.cpu(), torch.arange(5000, dtype=torch.float32) - 1.5)
    # the device tensor and the last CPU reference go while a kernel that reads it is queued
    y = f * 2
    del dev, f, host
    gc.collect()
    assert torch.equal(y.cpu(), torch.full((5000,), -3.0))
    with pytest.raises(RuntimeError, match="multiples of"):
        _C._import_host(torch.zeros(100, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match="contiguous CPU tensor"):
        _C._import_host(torch.zeros(4096, dtype=torch.uint8, device=DEV))


def test_threads_share_the_stream():
    errors = []

    def work(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            a = torch.randn(1000, generator=g)
            d = a.to(DEV)
            for _ in range(50):
                d = d + 1.0
            assert torch.equal(d.cpu(), a + 50.0) or torch.allclose(d.cpu(), a + 50.0)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---------------------------------------------------------------- memory


def test_memory_accounting_returns_to_start():
    torch.webgpu.synchronize()
    gc.collect()
    start = torch.webgpu.memory_allocated()
    xs = [torch.empty(1000 * (i + 1), device=DEV) for i in range(5)]
    during = torch.webgpu.memory_allocated()
    assert during - start >= sum(x.numel() * 4 for x in xs)
    peak = torch.webgpu.max_memory_allocated()
    assert peak >= during
    del xs
    gc.collect()
    assert torch.webgpu.memory_allocated() == start
    assert torch.webgpu.memory_reserved() >= torch.webgpu.memory_allocated()
    torch.webgpu.empty_cache()
    torch.webgpu.reset_peak_memory_stats()
    assert torch.webgpu.max_memory_allocated() == torch.webgpu.memory_allocated()


def test_cache_reuses_freed_blocks():
    torch.webgpu.empty_cache()
    before = torch.webgpu.memory_stats()
    for _ in range(20):
        x = torch.empty(4096, device=DEV)
        del x
    after = torch.webgpu.memory_stats()
    assert after["cache_hits"] - before["cache_hits"] >= 19


def test_memory_stats_as_cuda_keys_them_and_torch_accelerator_agrees():
    torch.webgpu.synchronize()
    gc.collect()
    torch.webgpu.empty_cache()
    torch.webgpu.reset_peak_memory_stats()
    torch.webgpu.reset_accumulated_memory_stats()
    s0 = torch.webgpu.memory_stats()
    assert s0["allocated_bytes.all.allocated"] == 0 and s0["num_ooms"] == 0
    small = torch.empty(1000, device=DEV)  # 4000 bytes: a small-pool block
    large = torch.empty(2**19, device=DEV)  # 2 MiB: a large-pool block
    s1 = torch.webgpu.memory_stats()
    assert s1["allocation.all.current"] == s0["allocation.all.current"] + 2
    assert s1["allocation.small_pool.current"] == s0["allocation.small_pool.current"] + 1
    assert s1["allocation.large_pool.current"] == s0["allocation.large_pool.current"] + 1
    grown = s1["allocated_bytes.all.current"] - s0["allocated_bytes.all.current"]
    assert grown >= 4000 + 2**21 and s1["allocated_bytes.all.allocated"] == grown
    for stat in ("allocation", "segment", "allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes"):
        for m in ("current", "peak", "allocated", "freed"):
            parts = s1[f"{stat}.small_pool.{m}"] + s1[f"{stat}.large_pool.{m}"]
            assert s1[f"{stat}.all.{m}"] == parts, (stat, m)
    assert s1["reserved_bytes.all.current"] >= s1["allocated_bytes.all.current"]
    del small, large
    gc.collect()
    s2 = torch.webgpu.memory_stats()
    assert s2["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"]
    assert (
        s2["allocated_bytes.all.freed"] == grown and s2["allocated_bytes.all.peak"] >= s1["allocated_bytes.all.current"]
    )
    nested = torch.webgpu.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["large_pool"]["freed"] == s2["allocated_bytes.large_pool.freed"]
    summary = torch.webgpu.memory_summary()
    assert "Allocated memory" in summary and "large pool" in summary
    # torch.accelerator finds the device allocator (it raised an internal assert before)
    acc = torch.accelerator.memory_stats()
    assert acc["allocated_bytes.all.current"] == torch.webgpu.memory_allocated()
    assert torch.accelerator.memory_allocated() == torch.webgpu.memory_allocated()
    assert torch.accelerator.max_memory_allocated() == torch.webgpu.max_memory_allocated()
    assert torch.accelerator.memory_reserved() == torch.webgpu.memory_reserved()
    torch.accelerator.empty_cache()
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() == torch.webgpu.memory_allocated()
    torch.accelerator.reset_accumulated_memory_stats()
    assert torch.webgpu.memory_stats()["allocated_bytes.all.allocated"] == 0


def test_device_properties_and_mem_get_info():
    info = torch.webgpu.info()
    props = torch.webgpu.get_device_properties()
    assert props.name == torch.webgpu.get_device_name() == info["adapter"]
    assert props.total_memory == info["memory_bytes"] and props.backend == info["backend"]
    assert props.subgroup_min_size == info["subgroup_min_size"] and "name=" in repr(props)
    assert torch.webgpu.get_device_name(0) == torch.webgpu.get_device_name(f"{DEV}:0")
    if info["memory_bytes"] == 0:
        with pytest.raises(NotImplementedError, match="memory"):
            torch.webgpu.mem_get_info()
        return
    x = torch.empty(2**22, device=DEV)
    free, total = torch.webgpu.mem_get_info()
    assert total == info["memory_bytes"] and 0 <= free <= total - x.numel() * 4
    assert torch.accelerator.get_memory_info() == (free, total)
    assert torch.webgpu.OutOfMemoryError is torch.OutOfMemoryError
    with torch.webgpu.device_of(x):
        assert torch.webgpu.current_device() == x.get_device()


def test_out_of_memory_then_usable():
    with pytest.raises(torch.OutOfMemoryError, match="out of memory"):
        torch.empty(4 * 2**40, dtype=torch.uint8, device=DEV)
    x = torch.ones(16, device=DEV)
    assert torch.equal((x + x).cpu(), torch.full((16,), 2.0))


def test_tensor_past_binding_limit():
    """Copies of and pointwise ops on tensors past maxStorageBufferBindingSize work."""
    limit = torch.webgpu.info()["limits"]["maxStorageBufferBindingSize"]
    n = limit // 4 + 1024
    if n * 4 > 600 * 2**20:
        pytest.skip("binding limit too large to exceed cheaply on this adapter")
    x = torch.zeros(n, dtype=torch.float32)
    x[-5:] = torch.arange(5, dtype=torch.float32)
    d = x.to(DEV)
    assert torch.equal(d[-5:].cpu(), x[-5:])
    assert torch.equal(d.cpu()[-1024:], x[-1024:])
    y = d + 1.0  # pointwise ops split their work (test_large_operands.py has the rest)
    assert torch.equal(y[-5:].cpu(), x[-5:] + 1.0)
    assert torch.equal(y[:5].cpu(), x[:5] + 1.0)
    # A window inside the big buffer is bindable.
    assert torch.equal((d[-2048:] + 1.0).cpu(), x[-2048:] + 1.0)


def test_missing_library_is_a_clear_error():
    code = (
        "import torch, torch_webgpu\n"
        "try:\n    torch.zeros(2, device='webgpu')\nexcept RuntimeError as e:\n    print('ERR', e)\n"
    )
    env = dict(os.environ, TORCH_WEBGPU_DAWN_LIBRARY="/nonexistent/libwebgpu_dawn.so")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "ERR" in out.stdout and "TORCH_WEBGPU_DAWN_LIBRARY" in out.stdout, out.stdout + out.stderr
    code2 = "import torch, torch_webgpu; print(torch.webgpu.is_available())"
    out2 = subprocess.run([sys.executable, "-c", code2], capture_output=True, text=True, env=env, timeout=120)
    assert out2.stdout.strip() == "False", out2.stdout + out2.stderr
