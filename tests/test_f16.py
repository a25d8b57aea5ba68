"""float16 storage: native (shader-f16: hardware conversion, computed in float32 and rounded once,
as CUDA) where the adapter has it, packed (software conversion) otherwise; TORCH_WEBGPU_NO_F16=1
forces the packed path on any adapter. Both must give CPU's bits for single-rounding ops, subnormals,
overflow and NaN, on contiguous (vectorised), offset, ragged and strided operands."""

import subprocess
import sys

import pytest
import torch
from webgpu_env import DEV, native_env

import torch_webgpu  # noqa: F401

CHECK = r"""
import sys, torch, torch_webgpu
torch.manual_seed(0)
bad = []
def same(r, e):
    r, e = r.cpu(), e
    return torch.equal(r.isnan(), e.isnan()) and torch.equal(r.nan_to_num(), e.nan_to_num())
special = torch.tensor([6e-8, 1e-7, 5.9e-5, 6.1e-5, -3e-6, 65504., 65519., 65520., 1e5, -1e5, 0., -0., 1/3, 2/3,
                        0.1, float("inf"), -float("inf"), float("nan")])
for dt in (torch.float16, torch.bfloat16):
    for n in (8, 9, 15, 17, 1000, 4099, 65539):
        a = torch.randn(n) * 300
        a[: min(n, len(special))] = special[: min(n, len(special))]
        b = torch.randn(n) * 1e-3
        ah, bh = a.to(dt), b.to(dt)
        A, B = ah.to("webgpu"), bh.to("webgpu")
        ops = {
            "add": (lambda x, y: x + y, lambda x, y: (x.float() + y.float()).to(dt)),
            "mul": (lambda x, y: x * y, lambda x, y: (x.float() * y.float()).to(dt)),
            "div": (lambda x, y: x / y, lambda x, y: (x.float() / y.float()).to(dt)),
            "scalar": (lambda x, y: x * 3.0, lambda x, y: (x.float() * 3.0).to(dt)),
            "to_f32": (lambda x, y: x.float(), lambda x, y: x.float()),
            "from_f32": (lambda x, y: (x.float() * 1.5).to(dt), lambda x, y: (x.float() * 1.5).to(dt)),
            "offset": (lambda x, y: x[8:] + y[8:], lambda x, y: (x[8:].float() + y[8:].float()).to(dt)),
            "odd_offset": (lambda x, y: x[1:] + y[1:], lambda x, y: (x[1:].float() + y[1:].float()).to(dt)),
            "strided": (lambda x, y: x[::2] + y[::2], lambda x, y: (x[::2].float() + y[::2].float()).to(dt)),
            "inplace": (lambda x, y: x.clone().mul_(y), lambda x, y: (x.float() * y.float()).to(dt)),
        }
        for name, (f, ref) in ops.items():
            if not same(f(A, B), ref(ah, bh)):
                bad.append((str(dt), n, name))
        o = torch.empty(n, dtype=dt, device="webgpu")
        torch.add(A, B, out=o)
        if not same(o, (ah.float() + bh.float()).to(dt)):
            bad.append((str(dt), n, "out="))
# The tail of the last vec4 word must keep the bytes past the end of the output.
base = torch.arange(32, dtype=torch.float16).to("webgpu")
base[:13].add_(100)
e = torch.arange(32, dtype=torch.float16); e[:13] += 100
if not torch.equal(base.cpu(), e):
    bad.append(("tail", 13, "partial word"))
print("features", torch_webgpu.info()["features"])
print("BAD", bad)
sys.exit(1 if bad else 0)
"""


def _run(env_extra):
    env = native_env(**env_extra)
    return subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=600)


def test_native_f16_matches_cpu():
    r = _run({})
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    if "shader-f16" not in torch.webgpu.info()["features"]:
        pytest.skip("adapter without shader-f16: only the packed path exists here")
    assert "shader-f16" in r.stdout


def test_packed_f16_matches_cpu():
    r = _run({"TORCH_WEBGPU_NO_F16": "1"})
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    assert "shader-f16" not in r.stdout, "TORCH_WEBGPU_NO_F16=1 did not turn shader-f16 off"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_vector_path_with_cpu_scalar_operands(dtype):
    # A CPU scalar tensor as the first input (rsub, 2.5 ** t) leaves only later operands bound.
    a = torch.randn(1000).to(dtype)
    s = torch.tensor(2.5)
    for f in (
        lambda x: torch.rsub(x, s),
        lambda x: s - x,
        lambda x: torch.pow(2.5, x),
        lambda x: torch.add(s, x, alpha=2),
    ):
        r = f(a.to(DEV)).cpu()
        e = f(a)
        torch.testing.assert_close(r, e, equal_nan=True)
