"""The first run (issue 20): PyTorch's device-backend autoload registers `webgpu` on `import torch`
(and leaves `import torch` working when the package is broken or switched off), and the examples run
as a new user runs them, at small settings, with the CPU fallback off: each exits 0 and prints the
lines README.md shows, with figures that hold (the demo's loss curves within its stated tolerance and
a real PNG, the Hugging Face model's tokens equal to the CPU's, the AMP loss falling with the CPU's).
README.md's expected outputs are checked against the same line patterns."""

import importlib.metadata
import os
import re
import subprocess
import sys

import pytest
from webgpu_env import native_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
NUM = r"[-+0-9.e]+"

# The lines each example prints (stdout), as a user reads them; checked in the live output and in
# README.md's expected-output block for the example.
ADAPTER = r"^webgpu adapter: .+ \((\w+), ([\w-]+)\)$"
LINES = {
    "demo": [
        ADAPTER,
        rf"^webgpu: test accuracy ({NUM})%, final loss ({NUM}), {NUM} s \(including the first-use compilation",
        rf"^cpu:    test accuracy ({NUM})%, final loss ({NUM}), {NUM} s$",
        rf"^loss curves: largest per-epoch difference ({NUM}) of the first epoch's loss \(tolerance ({NUM})\): OK$",
        r"^loss curves plot: (/.+\.png)$",
    ],
    "hf_generate": [
        rf"^model: \w+ .*, {NUM} M parameters$",
        ADAPTER,
        rf"^webgpu: (\d+) new tokens in {NUM} s, ({NUM}) tokens/s \(after a warm-up run",
        rf"^cpu:    (\d+) new tokens in {NUM} s, ({NUM}) tokens/s \(after a warm-up run\)$",
        r"^tokens: the same as the CPU's \((\d+) of (\d+)\)$",
        r"^CPU fallback: off \(every op of the generation ran a webgpu kernel\)$",
    ],
    "train_gpt": [
        ADAPTER,
        r'^amp: torch.autocast\("webgpu", dtype=torch.(float16|bfloat16)\) and torch.amp.GradScaler\("webgpu"\)',
        rf"^webgpu amp (float16|bfloat16): loss ({NUM}) -> ({NUM}), {NUM} s .*; grad scale ({NUM})$",
        rf"^cpu float32: loss ({NUM}) -> ({NUM}), {NUM} s$",
        rf"^loss curves: largest per-step difference ({NUM}) of the first step's loss \(tolerance ({NUM})\): OK$",
    ],
    "gpt": [rf"^webgpu: (\d+) Adam steps in {NUM} s; losses(( {NUM})+)$"],
    "mlp_inference": [rf"^webgpu predictions: accuracy ({NUM})% on (\d+) digits, ({NUM})% identical to the CPU's$"],
}
CPU_NOTE = "note: this adapter is a CPU emulation of a GPU (as in CI): results are real, speed is not the point here"


def run_python(args, tmp_path, env=None, timeout=900):
    """Runs `python ARGS` from an empty directory (so the source tree cannot shadow the installed
    package) with the fallback off; returns (exit status, stdout, stderr)."""
    e = native_env(PYTHONDONTWRITEBYTECODE="1")
    e.update(env or {})
    p = subprocess.run([sys.executable, *args], cwd=tmp_path, env=e, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_example(name, args, tmp_path):
    rc, out, err = run_python([os.path.join(EXAMPLES, f"{name}.py"), *args], tmp_path)
    assert rc == 0, f"examples/{name}.py exited {rc}\nstdout:\n{out}\nstderr:\n{err[-4000:]}"
    return out


def match_lines(name, text):
    """The match of each of the example's line patterns, in order, in `text` (asserting each is there)."""
    lines = text.splitlines()
    found = []
    for pat in LINES[name]:
        m = next((m for m in (re.match(pat, line) for line in lines) if m), None)
        assert m, f"examples/{name}.py: no line matching {pat!r} in:\n{text}"
        found.append(m)
    return found


def check_adapter_note(m, text):
    """On a CPU adapter the output says that speed is not the point there; on a GPU it does not."""
    assert (CPU_NOTE in text.splitlines()) == (m.group(2) == "cpu"), text


# ---------------------------------------------------------------------------------------- autoload


def _installed():
    """Skips where torch_webgpu is not pip-installed (a staged developer build has no entry point);
    where it is, its `torch.backends` entry point must be the package's _autoload."""
    try:
        dist = importlib.metadata.distribution("torch_webgpu")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("torch_webgpu is not pip-installed: PyTorch's autoload reads installed entry points")
    eps = [(e.name, e.value) for e in dist.entry_points if e.group == "torch.backends"]
    assert eps == [("webgpu", "torch_webgpu:_autoload")], eps


def test_import_torch_alone_registers_webgpu(tmp_path):
    _installed()
    code = (
        "import sys, torch; x = torch.ones(1, device='webgpu'); "
        "print(x.device, 'torch_webgpu' in sys.modules, (x + 1).cpu().item(), torch.webgpu.device_count() >= 1)"
    )
    rc, out, err = run_python(["-c", code], tmp_path)
    assert rc == 0, err
    assert out.splitlines()[-1] == "webgpu:0 True 2.0 True", out


def test_import_torch_webgpu_first_still_works(tmp_path):
    # torch's import (inside ours) runs the autoload, which finds torch_webgpu half-imported.
    _installed()
    code = (
        "import torch_webgpu, torch; import torch_webgpu as again; assert again is torch_webgpu; "
        "print(torch.ones(2, device='webgpu').sum().item(), 'adapter' in torch_webgpu.info())"
    )
    rc, out, err = run_python(["-c", code], tmp_path)
    assert rc == 0, err
    assert out.splitlines()[-1] == "2.0 True", out


def test_autoload_opt_out(tmp_path):
    _installed()
    code = (
        "import sys, torch\n"
        "print('loaded', 'torch_webgpu' in sys.modules)\n"
        "try:\n    torch.ones(1, device='webgpu')\nexcept RuntimeError as e:\n    print('refused:', e)\n"
        "import torch_webgpu\n"
        "print('explicit', torch.ones(1, device='webgpu').device)\n"
    )
    rc, out, err = run_python(["-c", code], tmp_path, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert rc == 0, err
    lines = out.splitlines()
    assert "loaded False" in lines, out
    assert any(line.startswith("refused:") and "webgpu" in line for line in lines), out
    assert "explicit webgpu:0" in lines, out


def test_broken_package_leaves_import_torch_working(tmp_path):
    # A native module that cannot load (say, built for another torch) must not break `import torch`:
    # a warning says so, CPU work goes on, and `import torch_webgpu` raises the real error, then works
    # once the cause is gone.
    _installed()
    code = (
        "import sys, warnings\n"
        "class Broken:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch_webgpu._C':\n"
        "            raise ImportError('simulated: _C was built for another torch')\n"
        "blocker = Broken()\n"
        "sys.meta_path.insert(0, blocker)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    import torch\n"
        "print('warned', [str(x.message).split(' (')[0] for x in w if 'torch_webgpu' in str(x.message)])\n"
        "print('cpu', torch.ones(3).sum().item(), 'torch_webgpu' in sys.modules)\n"
        "try:\n    import torch_webgpu\nexcept ImportError as e:\n    print('import error:', e)\n"
        "sys.meta_path.remove(blocker)\n"
        "import torch_webgpu\n"
        "print('fixed', torch.ones(1, device='webgpu').device)\n"
    )
    rc, out, err = run_python(["-c", code], tmp_path)
    assert rc == 0, err
    lines = out.splitlines()
    assert "warned ['torch_webgpu could not be loaded at `import torch`']" in lines, out
    assert "cpu 3.0 False" in lines, out
    assert "import error: simulated: _C was built for another torch" in lines, out
    assert "fixed webgpu:0" in lines, out


def test_no_adapter_leaves_import_torch_working(tmp_path):
    # No adapter of the asked-for backend: `import torch` works, and the device's first use raises.
    _installed()
    code = (
        "import torch\n"
        "print('available', torch.webgpu.is_available(), torch.ones(2).sum().item())\n"
        "try:\n    torch.ones(1, device='webgpu')\nexcept RuntimeError as e:\n    print('error:', e)\n"
    )
    rc, out, err = run_python(["-c", code], tmp_path, env={"TORCH_WEBGPU_BACKEND": "d3d12"})
    assert rc == 0, err
    lines = out.splitlines()
    assert "available False 2.0" in lines, out
    assert any(line.startswith("error:") and "adapter" in line for line in lines), out


# ---------------------------------------------------------------------------------------- examples


def test_demo(tmp_path):
    pytest.importorskip("sklearn")
    png = tmp_path / "curves.png"
    out = run_example("demo", ["--epochs", "2", "--min-accuracy", "0.8", "--plot", str(png)], tmp_path)
    adapter, gpu, cpu, close, plot = match_lines("demo", out)
    check_adapter_note(adapter, out)
    # Two epochs from the same seed: the accuracies agree within 3 of the 300 test digits.
    assert abs(float(gpu.group(1)) - float(cpu.group(1))) <= 1.0, out
    assert float(gpu.group(1)) >= 80.0, out
    assert float(close.group(1)) <= float(close.group(2)), out
    assert plot.group(1) == str(png)
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000  # two panels of curves, not an empty canvas


def test_hf_generate(tmp_path):
    pytest.importorskip("transformers")
    out = run_example("hf_generate", ["--new-tokens", "6"], tmp_path)
    _, adapter, gpu, cpu, same, _ = match_lines("hf_generate", out)
    check_adapter_note(adapter, out)
    assert gpu.group(1) == cpu.group(1) == same.group(1) == same.group(2) == "6", out
    assert float(gpu.group(2)) > 0 and float(cpu.group(2)) > 0


def test_hf_generate_local_checkpoint(tmp_path):
    # --model PATH: a checkpoint directory saved by save_pretrained (a GPT-2 this time), no tokenizer.
    T = pytest.importorskip("transformers")
    import torch

    torch.manual_seed(0)
    T.GPT2LMHeadModel(
        T.GPT2Config(n_layer=1, n_embd=64, n_head=4, vocab_size=500, n_positions=64, eos_token_id=None, bos_token_id=1)
    ).save_pretrained(tmp_path / "ckpt")
    out = run_example("hf_generate", ["--model", str(tmp_path / "ckpt"), "--new-tokens", "4"], tmp_path)
    model, _, gpu, _, same, _ = match_lines("hf_generate", out)
    assert "GPT2LMHeadModel from " + str(tmp_path / "ckpt") in model.group(0), out
    assert "no tokenizer in the checkpoint" in out
    assert gpu.group(1) == same.group(1) == "4", out


def test_train_gpt_amp(tmp_path):
    out = run_example("train_gpt", ["--steps", "12"], tmp_path)
    adapter, amp, gpu, cpu, close = match_lines("train_gpt", out)
    check_adapter_note(adapter, out)
    assert amp.group(1) == gpu.group(1) == "float16"
    assert float(gpu.group(3)) < float(gpu.group(2)), out  # the loss fell
    assert float(cpu.group(1)) == pytest.approx(float(gpu.group(2)), rel=2e-2), out  # same start
    assert float(close.group(1)) <= float(close.group(2)), out
    assert float(gpu.group(4)) > 0


def test_gpt_and_mlp_inference(tmp_path):
    pytest.importorskip("sklearn")
    (m,) = match_lines("gpt", run_example("gpt", ["--steps", "3"], tmp_path))
    assert m.group(1) == "3" and len(m.group(2).split()) == 3
    (m,) = match_lines("mlp_inference", run_example("mlp_inference", [], tmp_path))
    assert float(m.group(3)) > 99.0 and int(m.group(2)) == 1797


# ---------------------------------------------------------------------------------------- README


@pytest.mark.parametrize("name", sorted(LINES))
def test_readme_shows_expected_output(name):
    """README.md has a ```console block starting `$ python examples/NAME.py` with the lines above."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    blocks = re.findall(r"```console\n(\$ python examples/(\w+)\.py[^\n]*\n.*?)```", readme, re.S)
    text = next((b for b, n in blocks if n == name), None)
    assert text is not None, f"README.md shows no expected output of examples/{name}.py"
    match_lines(name, text)
