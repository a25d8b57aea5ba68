"""torch.save / torch.load of webgpu tensors: every dtype, views sharing storage (and their offsets),
0-dim and empty tensors, parameters, module state dicts, optimiser state, and map_location both
ways (webgpu -> cpu, cpu -> webgpu, webgpu -> webgpu), with weights_only on and off."""

import io

import pytest
import torch
from webgpu_env import DEV, DTYPES

import torch_webgpu  # noqa: F401


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kw)


def sample(dtype, shape=(5, 7), seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 10).to(dtype)
    lo, hi = (0, 255) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_roundtrip(dtype, weights_only):
    c = sample(dtype)
    x = c.to(DEV)
    y = roundtrip(x, weights_only=weights_only)
    assert y.device == x.device and y.dtype == dtype and y.shape == x.shape
    assert torch.equal(y.cpu(), c)
    # a fresh storage: writing to the loaded tensor leaves the original alone
    y.zero_()
    assert torch.equal(x.cpu(), c)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8])
def test_views_share_storage(dtype):
    c = sample(dtype, (6, 8))
    base = c.to(DEV)
    views = {
        "base": base,
        "t": base.t(),
        "slice": base[1:4, 2:7],
        "row": base[3],
        "strided": base[:, ::3],
        "flat_off": base.view(-1)[5:17],
    }
    d = roundtrip(views)
    ref = {"base": c, "t": c.t(), "slice": c[1:4, 2:7], "row": c[3], "strided": c[:, ::3], "flat_off": c.view(-1)[5:17]}
    for k, v in d.items():
        assert v.device.type == DEV
        assert v.shape == ref[k].shape and v.stride() == ref[k].stride(), k
        assert v.storage_offset() == ref[k].storage_offset(), k
        assert torch.equal(v.cpu(), ref[k]), k
    # one storage on load, as saved: a write through one view shows in the others
    d["row"].fill_(1)
    assert torch.equal(d["base"][3].cpu(), torch.ones(8, dtype=dtype))
    assert torch.equal(d["slice"][2].cpu(), torch.ones(5, dtype=dtype))


def test_zero_dim_empty_and_big():
    s = torch.tensor(3.5, device=DEV)
    e = torch.empty(0, 4, device=DEV, dtype=torch.int32)
    big = torch.arange(300000, dtype=torch.float32).to(DEV)
    d = roundtrip({"s": s, "e": e, "big": big, "n": 3, "l": [s, s]})
    assert d["s"].dim() == 0 and d["s"].item() == 3.5
    assert d["e"].shape == (0, 4) and d["e"].dtype == torch.int32 and d["e"].device.type == DEV
    assert torch.equal(d["big"].cpu(), torch.arange(300000, dtype=torch.float32))
    assert d["n"] == 3 and d["l"][0] is d["l"][1]


@pytest.mark.parametrize("where", ["cpu", torch.device("cpu"), {"webgpu:0": "cpu"}, lambda s, loc: s])
def test_map_location_to_cpu(where):
    c = sample(torch.float32)
    x = c.to(DEV)
    d = roundtrip({"x": x, "v": x[1:3]}, map_location=where)
    assert d["x"].device.type == "cpu" and torch.equal(d["x"], c)
    assert torch.equal(d["v"], c[1:3])
    assert d["v"].untyped_storage().data_ptr() == d["x"].untyped_storage().data_ptr()


@pytest.mark.parametrize("where", ["webgpu", "webgpu:0", torch.device(DEV, 0), {"cpu": "webgpu:0"}])
def test_map_location_to_webgpu(where):
    c = sample(torch.bfloat16)
    d = roundtrip({"x": c, "v": c[2:, 1:]}, map_location=where)
    assert d["x"].device.type == DEV and torch.equal(d["x"].cpu(), c)
    assert d["v"].device.type == DEV and torch.equal(d["v"].cpu(), c[2:, 1:])
    d["x"][2, 1] = 7
    assert d["v"][0, 0].item() == 7  # still one storage
    # webgpu -> webgpu
    e = roundtrip(c.to(DEV), map_location=DEV)
    assert e.device.type == DEV and torch.equal(e.cpu(), c)


def test_module_state_dict_and_parameters():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    m_dev = m.to(DEV)
    sd = roundtrip(m_dev.state_dict())
    for k, v in m_dev.state_dict().items():
        assert sd[k].device.type == DEV and torch.equal(sd[k].cpu(), v.cpu()), k
    m2 = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    m2.load_state_dict(roundtrip(m_dev.state_dict(), map_location="cpu"))
    for (k, a), b in zip(m2.state_dict().items(), m_dev.state_dict().values()):
        assert a.device.type == "cpu" and torch.equal(a, b.cpu()), k
    m3 = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2)).to(DEV)
    m3.load_state_dict(roundtrip(m2.state_dict(), map_location=DEV))
    for a, b in zip(m3.state_dict().values(), m_dev.state_dict().values()):
        assert a.device.type == DEV and torch.equal(a.cpu(), b.cpu())
    p = torch.nn.Parameter(torch.randn(3, device=DEV))
    q = roundtrip(p)
    assert isinstance(q, torch.nn.Parameter) and q.requires_grad and q.device.type == DEV
    assert torch.equal(q.detach().cpu(), p.detach().cpu())
    # the whole module (pickled class), weights_only=False
    mm = roundtrip(m_dev, weights_only=False)
    assert next(mm.parameters()).device.type == DEV


def test_optimizer_state_dict():
    p = torch.nn.Parameter(torch.randn(5, device=DEV))
    opt = torch.optim.Adam([p], lr=0.1, foreach=True)
    p.grad = torch.ones(5, device=DEV)
    opt.step()
    sd = roundtrip(opt.state_dict())
    st = sd["state"][0]
    assert st["exp_avg"].device.type == DEV
    torch.testing.assert_close(st["exp_avg"].cpu(), opt.state[p]["exp_avg"].cpu())
    opt2 = torch.optim.Adam([p], lr=0.1, foreach=True)
    opt2.load_state_dict(sd)
    assert opt2.state[p]["exp_avg_sq"].device.type == DEV


def test_save_to_file(tmp_path):
    x = sample(torch.int16).to(DEV)
    f = tmp_path / "t.pt"
    torch.save({"x": x}, f)
    assert torch.equal(torch.load(f)["x"].cpu(), x.cpu())
    assert torch.load(f, map_location="cpu")["x"].device.type == "cpu"
    assert torch.load(f, mmap=True, map_location="cpu")["x"].device.type == "cpu"


def test_untyped_storage_copies():
    x = sample(torch.float32).to(DEV)
    s = x.untyped_storage()
    assert s.device.type == DEV and s.nbytes() == x.numel() * 4
    c = s.cpu()
    assert c.device.type == "cpu" and torch.equal(torch.tensor([], dtype=torch.float32).set_(c).view(5, 7), x.cpu())
    back = c.to(device=DEV)
    assert back.device.type == DEV and back.nbytes() == s.nbytes()
    assert torch.equal(torch.tensor([], dtype=torch.float32, device=DEV).set_(back).view(5, 7).cpu(), x.cpu())
    assert c.webgpu().device.type == DEV  # the generated storage method
