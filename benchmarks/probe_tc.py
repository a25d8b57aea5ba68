"""Ceilings of the GPU's matrix units as WGSL reaches them (subgroup matrices), kernel by kernel.

    python benchmarks/probe_tc.py [--modes mma,ld,ldbar,gl] [--tiles 2x4,4x4] [--subgroups 4,8]

Each probe is a small WGSL kernel launched through torch_webgpu._C._launch_wgsl; every subgroup keeps
TM x TN f32 result matrices and runs `iters` steps of TM*TN multiply-accumulates of the adapter's
f16 config (SM x SN x SK). Modes:
  mma    operands loaded once (registers only): the multiply-accumulate ceiling
  ld     TM + TN operand loads from workgroup memory every step, then the multiplies
  ldbar  as ld, with a workgroup barrier every two steps (a 32-deep K tile)
  gl     operand loads from a storage buffer every step (no workgroup memory)
It prints TFLOP/s per probe. A tuning aid for wgsl/kernels/matmul_sg.wgsl: it says what bounds
that kernel, not how fast any op is (benchmarks/run.py says that).
"""

import argparse
import time

import torch

import torch_webgpu

C = torch_webgpu._C

HEAD = (
    "enable f16;\nenable chromium_experimental_subgroup_matrix;\n"
    "diagnostic(off, chromium.subgroup_matrix_uniformity);\n"
)


def load(syntax, typ, arr, off, stride, col_major=False):
    if syntax == 1:
        return f"subgroupMatrixLoad<{typ}, {'col_major' if col_major else 'row_major'}>(&{arr}, {off}, {stride})"
    return f"subgroupMatrixLoad<{typ}>(&{arr}, {off}, {'true' if col_major else 'false'}, {stride})"


def store(syntax, arr, off, v, stride):
    if syntax == 1:
        return f"subgroupMatrixStore<row_major>(&{arr}, {off}, {v}, {stride})"
    return f"subgroupMatrixStore(&{arr}, {off}, {v}, false, {stride})"


def probe_wgsl(mode, syntax, cfg, sgs, tm, tn):
    sm, sn, sk, sg = cfg["M"], cfg["N"], cfg["K"], cfg["max_subgroup_size"]
    wg = sgs * sg
    lt = f"subgroup_matrix_left<f16, {sk}, {sm}>"
    rt = f"subgroup_matrix_right<f16, {sn}, {sk}>"
    ct = f"subgroup_matrix_result<f32, {sn}, {sm}>"
    nk = 2  # distinct K offsets cycled through (a 32-deep tile)
    wsn = 2 if sgs > 1 else 1  # subgroups as a (sgs / wsn) x wsn grid over the workgroup's block
    wsm = sgs // wsn
    a_stride, b_stride = nk * sk + 8, tn * sn * wsn + 8  # A [m][k], B [k][n], padded rows
    a_size, b_size = tm * sm * wsm * a_stride, nk * sk * b_stride
    lines = [HEAD]
    if mode != "gl":
        lines += [f"var<workgroup> As: array<f16, {a_size}>;", f"var<workgroup> Bs: array<f16, {b_size}>;"]
    arr_a, arr_b = ("b1", "b2") if mode == "gl" else ("As", "Bs")
    lines += [
        f"@compute @workgroup_size({wg}) fn main(@builtin(workgroup_id) wid: vec3<u32>,",
        "    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
        f"  let sg = lid / {sg}u;",
        f"  let wm = sg / {wsn}u;",
        f"  let wn = sg % {wsn}u;",
    ]
    if mode != "gl":
        lines += [
            f"  for (var i = lid; i < {a_size}u; i = i + {wg}u) {{ As[i] = f16(i % 7u) * 0.01h; }}",
            f"  for (var i = lid; i < {b_size}u; i = i + {wg}u) {{ Bs[i] = f16(i % 5u) * 0.01h; }}",
            "  workgroupBarrier();",
        ]
    for i in range(tm):
        for j in range(tn):
            lines.append(f"  var acc{i}_{j} = {ct}();")

    def loads(kk):
        out = []
        for i in range(tm):
            off = f"(wm * {tm * sm}u + {i * sm}u) * {a_stride}u + {kk}"
            out.append(f"    let l{i} = {load(syntax, lt, arr_a, off, f'{a_stride}u')};")
        for j in range(tn):
            off = f"{kk} * {b_stride}u + wn * {tn * sn}u + {j * sn}u"
            out.append(f"    let r{j} = {load(syntax, rt, arr_b, off, f'{b_stride}u')};")
        return out

    if mode == "mma":
        lines += [x.replace("    let", "  let") for x in loads("0u")]
    lines.append("  for (var it = 0u; it < P.iters; it = it + 1u) {")
    if mode != "mma":
        lines += loads(f"((it % {nk}u) * {sk}u)")
    for i in range(tm):
        for j in range(tn):
            lines.append(f"    acc{i}_{j} = subgroupMatrixMultiplyAccumulate(l{i}, r{j}, acc{i}_{j});")
    if mode == "ldbar":
        lines.append("    if ((it & 1u) == 1u) { workgroupBarrier(); }")
    lines.append("  }")
    stage = sm * sn
    for i in range(tm):
        for j in range(tn):
            off = f"((wid.x * {sgs}u + sg) * {tm * tn}u + {i * tn + j}u) * {stage}u"
            lines.append(f"  {store(syntax, 'b0', off, f'acc{i}_{j}', f'{sn}u')};")
    lines.append("}")
    return "\n".join(lines), a_size, b_size


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modes", default="mma,ld,ldbar,gl")
    p.add_argument("--tiles", default="1x1,2x2,2x4,4x2,4x4")
    p.add_argument("--subgroups", default="4,8")
    p.add_argument("--iters", type=int, default=2048)
    p.add_argument("--groups", type=int, default=132 * 8)
    args = p.parse_args()
    info = torch.webgpu.info()
    configs = [c for c in info.get("subgroup_matrix_configs", []) if c["component"] == "f16" and c["result"] == "f32"]
    print(info["adapter"], "| f16 x f16 -> f32 configs:", [(c["M"], c["N"], c["K"]) for c in configs])
    if not configs:
        print("no subgroup matrices on this adapter")
        return
    syntax = None
    for cfg in configs:
        for mode in args.modes.split(","):
            for sgs in (int(s) for s in args.subgroups.split(",")):
                for tile in args.tiles.split(","):
                    tm, tn = (int(v) for v in tile.split("x"))
                    sm, sn, sk = cfg["M"], cfg["N"], cfg["K"]
                    out = torch.empty(args.groups * sgs * tm * tn * sm * sn, device="webgpu")
                    gl = []
                    if mode == "gl":
                        _, a_size, b_size = probe_wgsl("ld", 1, cfg, sgs, tm, tn)
                        gl = [
                            (torch.randn(a_size // 2, device="webgpu"), "f32", False),
                            (torch.randn(b_size // 2, device="webgpu"), "f32", False),
                        ]

                    def run(syn, iters):
                        src, _, _ = probe_wgsl(mode, syn, cfg, sgs, tm, tn)
                        key = f"probe_tc:{mode}:{syn}:{sm}x{sn}x{sk}:{sgs}:{tm}x{tn}"
                        C._launch_wgsl(
                            key,
                            src,
                            [(out, "f32", True)] + [(t, "f16", False) for t, _, _ in gl],
                            [("iters", "u32", iters)],
                            args.groups,
                        )

                    try:
                        if syntax is None:
                            for syn in (1, 2):
                                try:
                                    run(syn, 1)
                                    torch.webgpu.synchronize()
                                    syntax = syn
                                    break
                                except RuntimeError as e:
                                    last = e
                            if syntax is None:
                                raise last
                        run(syntax, args.iters)
                        torch.webgpu.synchronize()
                        reps = 5
                        t0 = time.perf_counter()
                        for _ in range(reps):
                            run(syntax, args.iters)
                        torch.webgpu.synchronize()
                        dt = (time.perf_counter() - t0) / reps
                        flops = 2.0 * sm * sn * sk * tm * tn * sgs * args.groups * args.iters
                        print(
                            f"{sm}x{sn}x{sk} {mode:6s} subgroups {sgs} tiles {tile}: {flops / dt / 1e12:7.1f} TFLOP/s"
                        )
                    except RuntimeError as e:
                        print(
                            f"{sm}x{sn}x{sk} {mode:6s} subgroups {sgs} tiles {tile}: failed: "
                            f"{str(e).splitlines()[0][:300]}"
                        )


if __name__ == "__main__":
    main()
