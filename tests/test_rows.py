"""The row kernels (ops/rows.h: softmax, log_softmax, layer and group norm, forward and backward)
against CPU on every path: rows held in registers or streamed (TORCH_WEBGPU_ROW_CACHE=0), subgroup
or shared-memory folds (TORCH_WEBGPU_ROW_SUBGROUPS=0), row lengths around the workgroup sizes and
the register limit (32 values per invocation), and rows with NaN and infinities. The switches are
read once per process, so each path runs in a child process."""

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import torch, torch.nn.functional as F
    import torch_webgpu
    torch.manual_seed(0)
    D = "webgpu"

    def close(got, want, what, tol=1e-4):
        torch.testing.assert_close(got.cpu(), want, atol=tol, rtol=tol, equal_nan=True, msg=lambda m: what + ": " + m)

    def grads(f, *xs):
        ins = [x.clone().requires_grad_() for x in xs]
        y = f(*ins)
        g = torch.randn(y.shape)
        return [y.detach()] + list(torch.autograd.grad(y, ins, g.to(y.device)))

    for n in (1, 7, 64, 65, 255, 256, 1000, 1024, 1025, 4096, 8192, 8193, 9000):
        x = torch.randn(3, n) * 3
        for name, f in (("softmax", lambda t: torch.softmax(t, -1)), ("log_softmax", lambda t: torch.log_softmax(t, -1))):
            torch.manual_seed(n)
            want = grads(f, x)
            torch.manual_seed(n)
            got = grads(f, x.to(D))
            for a, b, part in zip(got, want, ("forward", "backward")):
                close(a, b, f"{name} n={n} {part}")
        w, b = torch.randn(n), torch.randn(n)
        f = lambda t, w, b: F.layer_norm(t, (n,), w, b)
        torch.manual_seed(n)
        want = grads(f, x + 2, w, b)
        torch.manual_seed(n)
        got = grads(f, (x + 2).to(D), w.to(D), b.to(D))
        # (n == 1: x - mean is rounding noise that rstd = 1 / sqrt(eps) amplifies, on CPU as here)
        for a, c, part in zip(got, want, ("forward", "d input", "d weight", "d bias")):
            close(a, c, f"layer_norm n={n} {part}", 2e-3 if n > 4000 or n == 1 else 1e-4)

    # group norm: rows of (sample, group) slices with per-channel affine parameters
    for c, hw in ((4, 9), (8, 300), (64, 256)):
        x = torch.randn(2, c, hw)
        w, b = torch.randn(c), torch.randn(c)
        f = lambda t, w, b: F.group_norm(t, 2, w, b)
        torch.manual_seed(c)
        want = grads(f, x, w, b)
        torch.manual_seed(c)
        got = grads(f, x.to(D), w.to(D), b.to(D))
        for a, e, part in zip(got, want, ("forward", "d input", "d weight", "d bias")):
            close(a, e, f"group_norm c={c} hw={hw} {part}", 2e-3)

    # special rows: NaN and infinities give CPU's NaN or zeros
    inf, nan = float("inf"), float("nan")
    for n in (5, 300, 3000):
        x = torch.randn(5, n)
        x[0, 1] = nan
        x[1, 2] = inf
        x[2, :] = -inf
        x[3, 0] = -inf
        x[4, 3] = 1e30  # softmax only: a variance past float32's range is inf here, NaN on CPU
        for f in (lambda t: torch.softmax(t, -1), lambda t: torch.log_softmax(t, -1)):
            close(f(x.to(D)), f(x), f"special values n={n}")
        close(F.layer_norm(x[:4].to(D), (n,)), F.layer_norm(x[:4], (n,)), f"layer_norm special values n={n}")
    print("ok")
    """
)

PATHS = {
    "default": {},
    "streaming": {"TORCH_WEBGPU_ROW_CACHE": "0"},
    "shared-memory folds": {"TORCH_WEBGPU_ROW_SUBGROUPS": "0"},
}


@pytest.mark.parametrize("path", list(PATHS))
def test_row_kernels_match_cpu(path):
    env = dict(os.environ, TORCH_WEBGPU_FALLBACK="0", **PATHS[path])
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-2000:] + r.stderr[-4000:]
