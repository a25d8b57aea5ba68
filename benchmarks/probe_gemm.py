"""Variants of the half-precision subgroup-matrix GEMM, generated here and launched through
torch_webgpu._C._launch_wgsl, to find what bounds wgsl/kernels/matmul_sg.wgsl (a tuning aid).

    python benchmarks/probe_gemm.py [--size 4096] [--variants NAME=KNOBS;...]

Only the aligned case: A [M][K] and B [K][N] row-major f16, M, N multiples of the block and K of BK;
the result is stored as f32 straight from the matrices (O [M][N]). Knobs (comma-separated k=v):
  wsm, wsn   subgroups along m and n;   tm, tn   result matrices per subgroup;   bk   K tile depth
  nbuf       1 or 2 workgroup buffers (2: the buffer picked by a loop variable); 3: two buffers
             each named by a constant (the K loop unrolled by two tiles), one barrier per tile
  unroll     1: the K steps of a tile unrolled (0: a loop over them)
  fetch      vec (16-byte loads) | none (timing only: no loads)
  stash      half (8 f16 stores per 16 bytes) | direct (load and store at once, no loads in flight)
             | none (timing only)
  checked    1: loads through the bounds-checked load8 of wgsl/kernels/matmul_sg.wgsl (a loop
             writing a vector component by a variable index); 2: the same unrolled; 3: unrolled,
             the word picked with selects
  masked     1: one 16-byte load with the halves past the limit masked off
  interior   1 (with checked/masked): unchecked loads where the whole tile lies inside
  stage      1: results through a per-subgroup f32 tile in workgroup memory, two barriers a matrix
  order      row (default): workgroup g -> tile row g / tiles_n; group: 8 tile rows sweep the columns
             together (the kernel's order, gemm_tile in wgsl/lib/common.wgsl)
Each variant is checked against torch (CUDA if present, else CPU) unless a knob makes it timing-only.
"""

import argparse
import re
import time

import torch

import torch_webgpu

C = torch_webgpu._C


def gemm_wgsl(cfg, k):
    sm, sn, sk, sg = cfg["M"], cfg["N"], cfg["K"], cfg["max_subgroup_size"]
    wsm, wsn, tm, tn, bk, nbuf = k["wsm"], k["wsn"], k["tm"], k["tn"], k["bk"], k["nbuf"]
    bm, bn, wg = wsm * tm * sm, wsn * tn * sn, wsm * wsn * sg
    a_stride, b_stride = bk + 8, bn + 8
    a_buf, b_buf = bm * a_stride, bk * b_stride
    a_units, b_units = bm * bk // 8, bk * bn // 8
    lt = f"subgroup_matrix_left<f16, {sk}, {sm}>"
    rt = f"subgroup_matrix_right<f16, {sn}, {sk}>"
    ct = f"subgroup_matrix_result<f32, {sn}, {sm}>"
    L = [
        "enable f16;",
        "enable chromium_experimental_subgroup_matrix;",
        "diagnostic(off, chromium.subgroup_matrix_uniformity);",
        f"var<workgroup> As: array<f16, {min(nbuf, 2) * a_buf}>;",
        f"var<workgroup> Bs: array<f16, {min(nbuf, 2) * b_buf}>;",
    ]
    if k.get("stage"):
        L.append(f"var<workgroup> Cs: array<f32, {wsm * wsn * sm * sn}>;")
    ra = (a_units + wg - 1) // wg
    rb = (b_units + wg - 1) // wg
    assert a_units % wg == 0 and b_units % wg == 0, "tile units must divide among the invocations"
    if k.get("checked"):  # the bounds-checked loads of wgsl/kernels/matmul_sg.wgsl (vec fast path, scalar loop)
        for op, arr in (("a", "b1"), ("b", "b2")):
            if k["checked"] == 3:  # the word picked with selects, not a variable component index
                L.append(
                    f"fn {op}_half(e: u32) -> u32 {{ let w = e >> 1u; let v = {arr}[w >> 2u]; "
                    "let x = select(select(v.x, v.y, (w & 1u) == 1u), select(v.z, v.w, (w & 1u) == 1u), (w & 2u) == 2u); "
                    "return (x >> ((e & 1u) * 16u)) & 0xffffu; }"
                )
            else:
                L.append(
                    f"fn {op}_half(e: u32) -> u32 {{ let w = e >> 1u; return ({arr}[w >> 2u][w & 3u] >> ((e & 1u) * 16u)) & 0xffffu; }}"
                )
            L += [
                f"fn load8_{op}(p: u32, q: u32, plim: u32, qlim: u32, base: u32, sp: u32, sq: u32) -> vec4<u32> {{",
                "  if (p >= plim) { return vec4<u32>(0u); }",
                "  let e = base + p * sp;",
                f"  if (q + 7u < qlim) {{ return {arr}[(e + q) >> 3u]; }}",
            ]
            if k["checked"] == 1:  # as the kernel had it: a loop writing a vector component by a variable index
                L += [
                    "  var w = vec4<u32>(0u);",
                    "  for (var c = 0u; c < 8u; c = c + 1u) {",
                    f"    if (q + c < qlim) {{ w[c >> 1u] = w[c >> 1u] | ({op}_half(e + (q + c) * sq) << ((c & 1u) * 16u)); }}",
                    "  }",
                    "  return w;",
                    "}",
                ]
            else:  # unrolled, constant component indices
                L += [
                    f"  var h{c} = 0u; if (q + {c}u < qlim) {{ h{c} = {op}_half(e + (q + {c}u) * sq); }}"
                    for c in range(8)
                ]
                L += [
                    "  return vec4<u32>(h0 | (h1 << 16u), h2 | (h3 << 16u), h4 | (h5 << 16u), h6 | (h7 << 16u));",
                    "}",
                ]
    if k.get("masked"):  # one 16-byte load, halves past the limit zeroed
        for op, arr in (("a", "b1"), ("b", "b2")):
            L += [
                f"fn load8_{op}(p: u32, q: u32, plim: u32, qlim: u32, base: u32, sp: u32) -> vec4<u32> {{",
                f"  let w = {arr}[(base + p * sp + q) >> 3u];",
                "  let c = vec4<u32>(q, q + 2u, q + 4u, q + 6u);",
                "  let lo = select(vec4<u32>(0u), vec4<u32>(0xffffu), c < vec4<u32>(qlim));",
                "  let hi = select(vec4<u32>(0u), vec4<u32>(0xffff0000u), c + vec4<u32>(1u) < vec4<u32>(qlim));",
                "  return select(vec4<u32>(0u), w & (lo | hi), p < plim);",
                "}",
            ]
    L.append(
        f"@compute @workgroup_size({wg}) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
        " @builtin(local_invocation_index) lid: u32) {"
    )
    L += [
        f"  let sg = lid / {sg}u;",
        f"  let wm = sg / {wsn}u;",
        f"  let wn = sg % {wsn}u;",
        "  let tiles_n = P.N / %du;" % bn,
    ]
    if k.get("order") == "group":  # groups of 8 tile rows sweeping the columns (wgsl/lib/common.wgsl gemm_tile)
        L += [
            "  let width = 8u * tiles_n;",
            f"  let first_m = (wid.x / width) * 8u;",
            f"  let gsize = min(P.N / {bm}u - first_m, 8u);",
            f"  let m0 = (first_m + (wid.x % width) % gsize) * {bm}u;",
            f"  let n0 = ((wid.x % width) / gsize) * {bn}u;",
        ]
    else:
        L += [f"  let m0 = (wid.x / tiles_n) * {bm}u;", f"  let n0 = (wid.x % tiles_n) * {bn}u;"]
    L += [
        "  let kw = P.K / 8u;",
        "  let nw = P.N / 8u;",
    ]
    for i in range(ra):
        L.append(f"  var ra{i} = vec4<u32>(0u);")
    for i in range(rb):
        L.append(f"  var rb{i} = vec4<u32>(0u);")
    for i in range(tm):
        for j in range(tn):
            L.append(f"  var acc{i}_{j} = {ct}();")

    def fetch_raw(kt):  # unchecked 16-byte loads
        out = []
        for i in range(ra):  # A tile bm x bk: unit u -> row u / (bk/8), col (u % (bk/8)) * 8
            out.append(
                f"    {{ let u = {i * wg}u + lid; ra{i} = b1[(m0 + u / {bk // 8}u) * kw + ({kt}) / 8u + "
                f"u % {bk // 8}u]; }}"
            )
        for i in range(rb):  # B tile bk x bn
            out.append(
                f"    {{ let u = {i * wg}u + lid; rb{i} = b2[(({kt}) + u / {bn // 8}u) * nw + n0 / 8u + "
                f"u % {bn // 8}u]; }}"
            )
        return out

    def fetch_checked(kt):  # through load8_a/b (checked or masked)
        extra = ", 1u" if k.get("checked") else ""
        out = []
        for i in range(ra):
            out.append(
                f"    {{ let u = {i * wg}u + lid; ra{i} = load8_a(m0 + u / {bk // 8}u, ({kt}) + (u % {bk // 8}u) * 8u,"
                f" P.N, P.K, 0u, P.K{extra}); }}"
            )
        for i in range(rb):
            out.append(
                f"    {{ let u = {i * wg}u + lid; rb{i} = load8_b(({kt}) + u / {bn // 8}u, n0 + (u % {bn // 8}u) * 8u,"
                f" P.K, P.N, 0u, P.N{extra}); }}"
            )
        return out

    def loads(kt):
        if not (k.get("checked") or k.get("masked")):
            return fetch_raw(kt)
        if k.get("interior"):  # raw loads where the whole tile lies inside, checked ones elsewhere
            inside = f"m0 + {bm}u <= P.N && n0 + {bn}u <= P.N && ({kt}) + {bk}u <= P.K"
            return [f"    if ({inside}) {{", *fetch_raw(kt), "    } else {", *fetch_checked(kt), "    }"]
        return fetch_checked(kt)

    def fetch(kt):  # the loads issued ahead of the multiplies (none in direct mode: stash loads)
        if k["fetch"] == "none" or k["stash"] == "direct":
            return []
        return loads(kt)

    def put(arr, base, reg):
        if k["stash"] == "none":
            return []
        return [
            f"    {{ let i = {base}; let h0 = bitcast<vec2<f16>>({reg}.x); let h1 = bitcast<vec2<f16>>({reg}.y);"
            f" let h2 = bitcast<vec2<f16>>({reg}.z); let h3 = bitcast<vec2<f16>>({reg}.w);"
            f" {arr}[i] = h0.x; {arr}[i + 1u] = h0.y; {arr}[i + 2u] = h1.x; {arr}[i + 3u] = h1.y;"
            f" {arr}[i + 4u] = h2.x; {arr}[i + 5u] = h2.y; {arr}[i + 6u] = h3.x; {arr}[i + 7u] = h3.y; }}"
        ]

    def stash(buf, kt):
        out = []
        if k["stash"] == "direct":
            out = loads(kt)
        for i in range(ra):
            base = f"{buf} * {a_buf}u + (({i * wg}u + lid) / {bk // 8}u) * {a_stride}u + (({i * wg}u + lid) % {bk // 8}u) * 8u"
            out += put("As", base, f"ra{i}")
        for i in range(rb):
            base = f"{buf} * {b_buf}u + (({i * wg}u + lid) / {bn // 8}u) * {b_stride}u + (({i * wg}u + lid) % {bn // 8}u) * 8u"
            out += put("Bs", base, f"rb{i}")
        return out

    def compute(buf):
        if k.get("unroll"):
            out = []
            for kk in range(0, bk, sk):
                out += [f"    {{ let kk = {kk}u;"] + compute_step(buf) + ["    }"]
            return out
        return [f"    for (var kk = 0u; kk < {bk}u; kk = kk + {sk}u) {{"] + compute_step(buf) + ["    }"]

    def compute_step(buf):
        out = []
        for i in range(tm):
            off = f"{buf} * {a_buf}u + (wm * {tm * sm}u + {i * sm}u) * {a_stride}u + kk"
            out.append(f"      let l{i} = subgroupMatrixLoad<{lt}>(&As, {off}, false, {a_stride}u);")
        for j in range(tn):
            off = f"{buf} * {b_buf}u + kk * {b_stride}u + wn * {tn * sn}u + {j * sn}u"
            out.append(f"      let r{j} = subgroupMatrixLoad<{rt}>(&Bs, {off}, false, {b_stride}u);")
        for i in range(tm):
            for j in range(tn):
                out.append(f"      acc{i}_{j} = subgroupMatrixMultiplyAccumulate(l{i}, r{j}, acc{i}_{j});")
        return out

    L += (
        fetch("0u")
        + stash("0u", "0u")
        + [
            "  workgroupBarrier();",
            "  var buf = 0u;",
            f"  for (var kt = 0u; kt < P.K; kt = kt + {bk * (2 if nbuf == 3 else 1)}u) {{",
            f"    let more = kt + {bk}u < P.K;",
        ]
    )
    if nbuf == 3:  # buffer 0 then buffer 1, each multiplied while the next tile goes to the other
        for cur, nxt_buf, ahead in (("0u", "1u", bk), ("1u", "0u", 2 * bk)):
            L += [f"    if (kt + {ahead - bk}u >= P.K) {{ break; }}", f"    let more{cur[0]} = kt + {ahead}u < P.K;"]
            L += [f"    if (more{cur[0]}) {{"] + ["  " + x for x in fetch(f"kt + {ahead}u")] + ["    }"]
            L += compute(cur)
            L += [f"    if (more{cur[0]}) {{"] + ["  " + x for x in stash(nxt_buf, f"kt + {ahead}u")] + ["    }"]
            L += ["    workgroupBarrier();"]
        L += ["  }"]
    elif nbuf == 2:
        nxt = ["    if (more) {"] + ["  " + x for x in stash("(1u - buf)", f"kt + {bk}u")] + ["    }"]
        if k["stash"] == "direct":  # the next tile straight to the other buffer, then the multiplies
            L += nxt + compute("buf")
        else:  # the next tile's loads in flight during the multiplies, stored after them
            L += ["    if (more) {"] + ["  " + x for x in fetch(f"kt + {bk}u")] + ["    }"]
            L += compute("buf") + nxt
        L += ["    workgroupBarrier();", "    buf = 1u - buf;", "  }"]
    else:
        L += ["    if (more) {"] + ["  " + x for x in fetch(f"kt + {bk}u")] + ["    }"]
        L += compute("0u")
        L += (
            ["    workgroupBarrier();", "    if (more) {"]
            + ["  " + x for x in stash("0u", f"kt + {bk}u")]
            + ["    }", "    workgroupBarrier();", "  }"]
        )
    for i in range(tm):
        for j in range(tn):
            off = f"(m0 + wm * {tm * sm}u + {i * sm}u) * P.N + n0 + wn * {tn * sn}u + {j * sn}u"
            if k.get("stage"):  # through a per-subgroup f32 tile in workgroup memory, two barriers a matrix
                per = sm * sn // sg
                L += [
                    f"  subgroupMatrixStore(&Cs, sg * {sm * sn}u, acc{i}_{j}, false, {sn}u);",
                    "  workgroupBarrier();",
                    f"  {{ let lane = lid % {sg}u; let r = (lane * {per}u) / {sn}u; let c = (lane * {per}u) % {sn}u;",
                    f"    for (var x = 0u; x < {per}u; x = x + 1u) {{ b0[(m0 + wm * {tm * sm}u + {i * sm}u + r) * P.N + n0 + "
                    f"wn * {tn * sn}u + {j * sn}u + c + x] = Cs[sg * {sm * sn}u + lane * {per}u + x]; }} }}",
                    "  workgroupBarrier();",
                ]
            else:
                L.append(f"  subgroupMatrixStore(&b0, {off}, acc{i}_{j}, false, P.N);")
    L.append("}")
    return "\n".join(L), bm, bn


def to_majorness_syntax(src):
    """The same source in the load/store syntax with a majorness template argument."""
    src = re.sub(
        r"subgroupMatrixLoad<([^>]*>)>\(([^,]*), ([^,]*), false, ", r"subgroupMatrixLoad<\1, row_major>(\2, \3, ", src
    )
    return re.sub(
        r"subgroupMatrixStore\(([^,]*), ([^,]*), ([^,]*), false, ", r"subgroupMatrixStore<row_major>(\1, \2, \3, ", src
    )


DEFAULT = (
    "base=;bk64=bk=64;w2x4=wsm=2,wsn=4,tm=4,tn=2;t4x4=wsm=2,wsn=2,tm=4,tn=4;nbuf1=nbuf=1;"
    "nofetch=fetch=none;nostash=stash=none;neither=fetch=none,stash=none"
)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--variants", default=DEFAULT)
    p.add_argument("--iters", type=int, default=10)
    args = p.parse_args()
    info = torch.webgpu.info()
    cfgs = [
        c
        for c in info.get("subgroup_matrix_configs", [])
        if (c["component"], c["result"], c["M"], c["N"]) == ("f16", "f32", 16, 16)
    ]
    if not cfgs:
        print("no 16x16 f16 subgroup-matrix config")
        return
    cfg = cfgs[0]
    n = args.size
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g).half()
    b = (torch.randn(n, n, generator=g) * n**-0.5).half()
    want = (a.cuda().float() @ b.cuda().float()).cpu() if torch.cuda.is_available() else a.float() @ b.float()
    aw, bw = a.to("webgpu"), b.to("webgpu")
    o = torch.empty(n, n, device="webgpu")
    for item in args.variants.split(";"):
        name, _, knobs = item.partition("=")
        k = dict(wsm=4, wsn=2, tm=2, tn=4, bk=32, nbuf=2, fetch="vec", stash="half")
        for kv in filter(None, knobs.split(",")):
            key, _, v = kv.partition("=")
            k[key] = int(v) if v.isdigit() else v
        try:
            src, bm, bn = gemm_wgsl(cfg, k)
            groups = (n // bm) * (n // bn)

            def run():
                C._launch_wgsl(
                    "probe_gemm:" + str(hash(src)),
                    src,
                    [(o, "f32", True), (aw, "vec4<u32>", False), (bw, "vec4<u32>", False)],
                    [("N", "u32", n), ("K", "u32", n)],
                    groups,
                )

            try:
                run()
            except RuntimeError:
                src = to_majorness_syntax(src)
                run()
            err = (o.cpu() - want).abs().max().item()
            torch.webgpu.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                run()
            torch.webgpu.synchronize()
            dt = (time.perf_counter() - t0) / args.iters
            print(f"{name:10s} {knobs:40s} {2.0 * n**3 / dt / 1e12:7.1f} TFLOP/s  max err {err:.3g}")
        except Exception as e:  # a variant that does not fit or compile: say so, go on
            print(f"{name:10s} {knobs:40s} failed: {str(e).splitlines()[0][:300]}")


if __name__ == "__main__":
    main()
