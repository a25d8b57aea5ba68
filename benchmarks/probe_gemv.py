"""Shapes of workgroup for the mat-vec x @ W (W contiguous along the outputs; issue 17's row), as
hand-written WGSL launched through `_C._launch_wgsl`, next to today's `torch.matmul` and F.linear on
the same bytes and a plain 64 MB read: which decomposition reads W at bandwidth in one dispatch.
Each variant is checked against CPU once; wall time per call between synchronisations.

    python benchmarks/probe_gemv.py [--k 4096] [--n 4096] [--device webgpu|cuda]

Variant "L lanes x WG, B rows, U": a workgroup of WG invocations owns 4 * L outputs; L invocations
read one row's 4 * L contiguous floats as vec4s, WG / L of them split k, each taking blocks of B
consecutive rows (one vec4 of x per block of 4), U blocks per loop iteration; a tree sum in workgroup
memory at the end. No split-K: one dispatch.
"""

import argparse

import torch
import torch.nn.functional as F
from probe_bw import check, timed  # benchmarks/ is the script's own directory


def variant(L, WG, U):
    R = WG // L
    loads = []
    for u in range(U):
        loads.append(f"    let xv{u} = b0[(k + {u}u * R * 4u) / 4u];")
        for r in range(4):
            loads.append(f"    let w{u}{r} = b1[(k + {u}u * R * 4u + {r}u) * N4 + jv];")
    fmas = [f"    acc = fma(w{u}{r}, vec4<f32>(xv{u}[{r}]), acc);" for u in range(U) for r in range(4)]
    return f"""
const L: u32 = {L}u;
const WG: u32 = {WG}u;
const R: u32 = {R}u;
var<workgroup> red: array<vec4<f32>, {WG}>;
@compute @workgroup_size({WG}) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {{
  let lane = lid % L;
  let ky = lid / L;
  let N4 = P.N4;
  let K = P.K;
  let jv = wid.x * L + lane;
  var acc = vec4<f32>(0.0);
  var k = ky * 4u;
  for (; k + {U - 1}u * R * 4u < K; k = k + {U}u * R * 4u) {{
{chr(10).join(loads)}
{chr(10).join(fmas)}
  }}
  for (; k < K; k = k + R * 4u) {{
    let xv = b0[k / 4u];
    acc = fma(b1[k * N4 + jv], vec4<f32>(xv.x), acc);
    acc = fma(b1[(k + 1u) * N4 + jv], vec4<f32>(xv.y), acc);
    acc = fma(b1[(k + 2u) * N4 + jv], vec4<f32>(xv.z), acc);
    acc = fma(b1[(k + 3u) * N4 + jv], vec4<f32>(xv.w), acc);
  }}
  red[lid] = acc;
  workgroupBarrier();
  for (var st = R / 2u; st > 0u; st = st >> 1u) {{
    if (ky < st) {{ red[lid] = red[lid] + red[lid + st * L]; }}
    workgroupBarrier();
  }}
  if (ky == 0u) {{ b2[jv] = red[lid]; }}
}}
"""


READ_ALL = """
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  let T = nwg.x * nwg.y * nwg.z * 256u;
  var acc = vec4<f32>(0.0);
  var i = t;
  for (; i + 3u * T < P.n4; i = i + 4u * T) {
    let a = b1[P.base + i]; let b = b1[P.base + i + T]; let c = b1[P.base + i + 2u * T]; let d = b1[P.base + i + 3u * T];
    acc = acc + (a + b) + (c + d);
  }
  for (; i < P.n4; i = i + T) { acc = acc + b1[P.base + i]; }
  b2[t] = acc;
}
"""

EMPTY = """
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) lid: u32) {
  b2[lid] = b2[lid] + vec4<f32>(1.0);
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--device", default="webgpu")
    ap.add_argument("--iters", type=int, default=200)
    a = ap.parse_args()
    K, N = a.k, a.n
    g = torch.Generator().manual_seed(5)
    xc, wc = torch.randn(1, K, generator=g), torch.randn(K, N, generator=g)
    want = xc @ wc
    x, w = xc.to(a.device), wc.to(a.device)
    wt = wc.t().contiguous().to(a.device)
    mb = 4 * K * N / 1e6
    cases = {"torch.matmul x @ W": lambda: x @ w, "F.linear x, W^T (rows)": lambda: F.linear(x, wt)}
    check("matmul", x @ w, want, 1e-3, 1e-3)
    if a.device == "webgpu":
        import torch_webgpu  # noqa: F401
        from torch_webgpu import _C

        out = torch.empty(N, device="webgpu")
        xf = x.reshape(-1)
        for L, WG, U in [
            (1, 256, 1),
            (1, 256, 2),
            (2, 256, 2),
            (4, 256, 2),
            (4, 256, 4),
            (1, 1024, 1),
            (2, 1024, 1),
            (4, 1024, 1),
            (4, 1024, 2),
            (8, 1024, 1),
            (16, 1024, 1),
        ]:
            src = variant(L, WG, U)
            key = f"probe_gemv_{L}_{WG}_{U}"
            groups = N // (4 * L)

            def run(src=src, key=key, groups=groups):
                _C._launch_wgsl(
                    key,
                    src,
                    [(xf, "vec4<f32>", False), (w, "vec4<f32>", False), (out, "vec4<f32>", True)],
                    [("N4", "u32", N // 4), ("K", "u32", K)],
                    groups,
                    "",
                    ["pointwise"],
                    "",
                )
                return out

            check(f"gemv {L}x{WG} U{U}", run().reshape(1, N), want, 1e-3, 1e-3)
            cases[f"one dispatch: {L} lanes x {WG}, U{U}"] = run
        part = torch.empty(4 * 2048 * 256, device="webgpu")
        for groups in (1024, 2048, 4096):

            def read(groups=groups):
                _C._launch_wgsl(
                    "probe_read_all",
                    READ_ALL,
                    [(xf, "vec4<f32>", False), (w, "vec4<f32>", False), (part, "vec4<f32>", True)],
                    [("n4", "u32", K * N // 4), ("base", "u32", 0)],
                    groups,
                    "",
                    ["pointwise"],
                    "",
                )

            cases[f"read W once, {groups} workgroups"] = read

        # The same bytes in D dispatches (D parts of W one after another): the fixed cost of a
        # dispatch is the slope; and a chain of one-workgroup dispatches, each reading what the
        # previous wrote (the floor of a dependent dispatch).
        for d in (2, 4, 8, 16):

            def parts(d=d):
                n4 = K * N // 4 // d
                for i in range(d):
                    _C._launch_wgsl(
                        "probe_read_all",
                        READ_ALL,
                        [(xf, "vec4<f32>", False), (w, "vec4<f32>", False), (part, "vec4<f32>", True)],
                        [("n4", "u32", n4), ("base", "u32", i * n4)],
                        2048 // d,
                        "",
                        ["pointwise"],
                        "",
                    )

            cases[f"read W in {d} dispatches (per call: all)"] = parts

        def chain():
            for _ in range(100):
                _C._launch_wgsl(
                    "probe_empty",
                    EMPTY,
                    [(xf, "vec4<f32>", False), (w, "vec4<f32>", False), (part, "vec4<f32>", True)],
                    [],
                    1,
                    "",
                    ["pointwise"],
                    "",
                )

        cases["100 dependent one-workgroup dispatches (per call: all)"] = chain
    for name, fn in cases.items():
        t, rec = timed(fn, a.iters)
        print(
            f"{a.device:6s} {name:40s} {mb / t / 1e3:7.0f} GB/s  {t * 1e6:7.1f} us/call  rec {rec * 1e6:6.1f} us",
            flush=True,
        )


if __name__ == "__main__":
    main()
