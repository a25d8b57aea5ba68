"""One large pointwise kernel launched several ways, wall time per call between synchronisations (as
benchmarks/run.py measures) and the CPU's recording time per call: eager (`torch.mul(out=)` on
16-byte-aligned tensors, the vec4 path, and on offset views, the one-element path), a
torch.compile-generated WGSL kernel, and hand-written kernels through the launch entry the
generated code uses (`_C._launch_wgsl`): one element per invocation at workgroup sizes 64/256/1024,
and four elements per invocation (strided, or one vec4). Separates the kernel's shape from the launch
path and from Inductor's code (issue 16's fused pointwise row). --vec4 0,1,4 times the compiled
kernels under each TORCH_WEBGPU_COMPILE_VEC4 setting in the same run (default: the environment's),
each checked once against eager.

    python benchmarks/probe_launch.py [--n 16777216] [--vec4 0,1,2,4]
"""

import argparse
import os

import torch
import torch.nn.functional as F
from probe_bw import check, timed  # benchmarks/ is the script's own directory

import torch_webgpu  # noqa: F401
from torch_webgpu import _C

HEAD = (
    "@compute @workgroup_size({wg}) fn main(@builtin(workgroup_id) wid: vec3<u32>, "
    "@builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n"
    "  let t = linear_id(wid, nwg, lid, {wg}u);\n"
)


def raw_kernels(n):
    """name -> (source, element type, workgroups)"""
    k = {}
    for wg in (64, 256, 1024):
        k[f"raw 1 elem/inv, wg {wg}"] = (
            HEAD.format(wg=wg) + f"  if (t >= {n}u) {{ return; }}\n  b2[t] = b0[t] * b1[t];\n}}\n",
            "f32",
            (n + wg - 1) // wg,
        )
    k["raw 4 elem/inv strided, wg 256"] = (
        HEAD.format(wg=256)
        + "  let T = nwg.x * nwg.y * nwg.z * 256u;\n"
        + f"  for (var u = 0u; u < 4u; u = u + 1u) {{ let i = t + u * T; if (i < {n}u) {{ b2[i] = b0[i] * b1[i]; }} }}\n}}\n",
        "f32",
        (n + 1023) // 1024,
    )
    k["raw 1 vec4/inv, wg 256"] = (
        HEAD.format(wg=256) + f"  if (t >= {n // 4}u) {{ return; }}\n  b2[t] = b0[t] * b1[t];\n}}\n",
        "vec4<f32>",
        (n // 4 + 255) // 256,
    )
    return k


def compiled(fn, args, vec4):
    """fn compiled at its first call under TORCH_WEBGPU_COMPILE_VEC4=vec4 (read at code generation;
    Dynamo is reset so it compiles anew) and checked once against eager."""
    c = None

    def run():
        nonlocal c
        if c is None:
            os.environ["TORCH_WEBGPU_COMPILE_VEC4"] = vec4
            torch._dynamo.reset()
            c = torch.compile(fn)
            check(f"compiled [vec4={vec4}]", c(*args), fn(*args).cpu(), 1e-4, 1e-5)
        return c(*args)

    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--vec4", default=os.environ.get("TORCH_WEBGPU_COMPILE_VEC4", "0"))
    a = ap.parse_args()
    n = a.n
    x, w, b = (torch.randn(n + 4, device="webgpu") for _ in range(3))
    out = torch.empty_like(x)
    cases = {
        "eager mul out=, aligned (vec4 path)": lambda: torch.mul(x[:n], w[:n], out=out[:n]),
        "eager mul out=, offset 1 (element path)": lambda: torch.mul(x[1 : n + 1], w[1 : n + 1], out=out[1 : n + 1]),
    }
    for name, (src, elem, groups) in raw_kernels(n).items():

        def raw(src=src, elem=elem, groups=groups, key="probe_" + name.replace(" ", "_").replace("/", "_")):
            rows = [(x, elem, False), (w, elem, False), (out, elem, True)]
            _C._launch_wgsl(key, src, rows, [], groups, "", ["pointwise"], "")

        cases[name] = raw
    # The same kernels on tensors of exactly n elements uploaded from the CPU (probe_bw's kind), and
    # made on the device by fill_: the RNG-made n + 4 views above ran 2-3x slower in stop 29.
    up = [torch.randn(n).to("webgpu") for _ in range(3)]
    filled = [torch.empty(n, device="webgpu").fill_(0.5) for _ in range(3)]
    for tag, (p, q, r) in (("uploaded", up), ("filled", filled)):
        cases[f"eager mul out=, {tag}"] = lambda p=p, q=q, r=r: torch.mul(p, q, out=r)
        src, elem, groups = raw_kernels(n)["raw 1 vec4/inv, wg 256"]

        def raw_t(p=p, q=q, r=r, src=src, elem=elem, groups=groups):
            _C._launch_wgsl(
                "probe_raw_vec4",
                src,
                [(p, elem, False), (q, elem, False), (r, elem, True)],
                [],
                groups,
                "",
                ["pointwise"],
                "",
            )

        cases[f"raw 1 vec4/inv, {tag}"] = raw_t
    xs, ws, bs = x[:n].clone(), w[:n].clone(), b[:n].clone()
    for v in a.vec4.split(","):
        cases[f"compiled x * w [vec4={v}]"] = compiled(lambda x, w: x * w, (xs, ws), v)
        cases[f"compiled gelu(x * w + b) * 0.5 [vec4={v}]"] = compiled(
            lambda x, w, b: F.gelu(x * w + b) * 0.5, (xs, ws, bs), v
        )
    for name, fn in cases.items():
        t, rec = (v * 1e6 for v in timed(fn, 30))
        passes = 4 if "gelu" in name else 3
        print(f"{name:44s} {passes * 4 * n / t / 1e3:7.0f} GB/s  {t:7.1f} us/call  recorded {rec:6.1f} us", flush=True)


if __name__ == "__main__":
    main()
