// Pooling kernels (ops/pool.cpp), one invocation per output element (forward) or per input element
// (backward, gathering from the windows that cover it: no atomics). Tensors are contiguous
// [planes, D, H, W] (wgsl/lib/nn_grid.wgsl); 1d/2d pools have leading spatial sizes of 1. The host
// keeps one section and prepends the value type V with v_* helpers (forward) or ADAPTIVE.
// Parameters: n (invocations), per dim (D, H, W): P_in_size, P_out_size, P_k_size (kernel),
// P_stride, P_pad (padding), P_dil (dilation); each section's operand offsets (*_off); avg:
// count_include_pad, divisor (divisor_override, 0: none).
// Each section defines run(t) for element t < P.n; the host adds the entry point main
// (ops/nn_common.h: per_element_main).

fn isz() -> vec3<i32> { return vec3<i32>(i32(P_in_size(0u)), i32(P_in_size(1u)), i32(P_in_size(2u))); }
fn osz() -> vec3<i32> { return vec3<i32>(i32(P_out_size(0u)), i32(P_out_size(1u)), i32(P_out_size(2u))); }
fn ksz() -> vec3<i32> { return vec3<i32>(i32(P_k_size(0u)), i32(P_k_size(1u)), i32(P_k_size(2u))); }
fn strd() -> vec3<i32> { return vec3<i32>(i32(P_stride(0u)), i32(P_stride(1u)), i32(P_stride(2u))); }
fn padd() -> vec3<i32> { return vec3<i32>(i32(P_pad(0u)), i32(P_pad(1u)), i32(P_pad(2u))); }
fn dila() -> vec3<i32> { return vec3<i32>(i32(P_dil(0u)), i32(P_dil(1u)), i32(P_dil(2u))); }
// Adaptive windows, as ATen's start_index / end_index.
fn a_start(o: i32, osz: i32, isz: i32) -> i32 { return (o * isz) / osz; }
fn a_end(o: i32, osz: i32, isz: i32) -> i32 { return ((o + 1) * isz + osz - 1) / osz; }
fn a_lo(o: vec3<i32>, O: vec3<i32>, I: vec3<i32>) -> vec3<i32> {
  return vec3<i32>(a_start(o.x, O.x, I.x), a_start(o.y, O.y, I.y), a_start(o.z, O.z, I.z));
}
fn a_hi(o: vec3<i32>, O: vec3<i32>, I: vec3<i32>) -> vec3<i32> {
  return vec3<i32>(a_end(o.x, O.x, I.x), a_end(o.y, O.y, I.y), a_end(o.z, O.z, I.z));
}
// The outputs whose adaptive windows may hold input position p: [lo, hi).
fn a_cover_lo(p: vec3<i32>, O: vec3<i32>, I: vec3<i32>) -> vec3<i32> { return (p * O) / I; }
fn a_cover_hi(p: vec3<i32>, O: vec3<i32>, I: vec3<i32>) -> vec3<i32> {
  return min(((p + vec3<i32>(1)) * O + I - vec3<i32>(1)) / I, O);
}
// Outputs of a dilated window (size k, stride s, padding p, dilation d) that may cover input i.
fn cover_lo(i: i32, k: i32, s: i32, p: i32, d: i32) -> i32 {
  let span = (k - 1) * d + 1;
  return select((i + p - span) / s + 1, 0, i + p < span);
}
fn cover_hi(i: i32, s: i32, p: i32, o: i32) -> i32 { return min((i + p) / s + 1, o); }
fn cover_lo3(p: vec3<i32>, k: vec3<i32>, s: vec3<i32>, pd: vec3<i32>, d: vec3<i32>) -> vec3<i32> {
  return vec3<i32>(cover_lo(p.x, k.x, s.x, pd.x, d.x), cover_lo(p.y, k.y, s.y, pd.y, d.y),
                   cover_lo(p.z, k.z, s.z, pd.z, d.z));
}
fn cover_hi3(p: vec3<i32>, s: vec3<i32>, pd: vec3<i32>, O: vec3<i32>) -> vec3<i32> {
  return vec3<i32>(cover_hi(p.x, s.x, pd.x, O.x), cover_hi(p.y, s.y, pd.y, O.y), cover_hi(p.z, s.z, pd.z, O.z));
}
// avg_pool's window of output o: (first, end) clipped to the input, and the divisor (divisor_override
// when not 0, else the window's size with or without the padding).
struct AvgWin { s: vec3<i32>, e: vec3<i32>, div: i32, };
fn avg_window(o: vec3<i32>, k: vec3<i32>, s: vec3<i32>, pd: vec3<i32>, I: vec3<i32>, divisor: i32,
              include_pad: bool) -> AvgWin {
  var s0 = o * s - pd;
  var e0 = min(s0 + k, I + pd);
  let pool = (e0.x - s0.x) * (e0.y - s0.y) * (e0.z - s0.z);
  s0 = max(s0, vec3<i32>(0));
  e0 = min(e0, I);
  var div = divisor;
  if (div == 0) { div = select((e0.x - s0.x) * (e0.y - s0.y) * (e0.z - s0.z), pool, include_pad); }
  return AvgWin(s0, e0, div);
}

//== max_fwd
// Operands: 0 input (V), 1 output (V), 2 indices (int64). ADAPTIVE (prepended) picks adaptive
// windows (unit steps) over dilated ones.
fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = grid_pos(t, O);
  let o = g.p;
  var i0: vec3<i32>; var i1: vec3<i32>; var d = vec3<i32>(1);
  if (ADAPTIVE) {
    i0 = a_lo(o, O, I);
    i1 = a_hi(o, O, I);
  } else {
    d = dila();
    i0 = o * strd() - padd();
    i1 = min(i0 + (ksz() - vec3<i32>(1)) * d + vec3<i32>(1), I);
    while (i0.x < 0) { i0.x = i0.x + d.x; }
    while (i0.y < 0) { i0.y = i0.y + d.y; }
    while (i0.z < 0) { i0.z = i0.z + d.z; }
  }
  let base = P.in_off + g.plane * vol(I);
  var best = v_lowest();
  var bi = flat3(i0, I);
  for (var a = i0.x; a < i1.x; a = a + d.x) {
    for (var b = i0.y; b < i1.y; b = b + d.y) {
      for (var c = i0.z; c < i1.z; c = c + d.z) {
        let idx = flat3(vec3<i32>(a, b, c), I);
        let v = ld0(base + idx);
        if (v_better(v, best)) { best = v; bi = idx; }
      }
    }
  }
  st1(P.out_off + t, best);
  st2(P.idx_off + t, vec2<u32>(bi, 0u));
}

//== max_bwd
// Operands: 0 grad_output (f32), 1 indices (int64), 2 grad_input (f32). One invocation per input
// element; ADAPTIVE (prepended) picks adaptive windows.
fn run(t: u32) {
  let O = osz(); let I = isz(); let IV = vol(I);
  let plane = t / IV;
  let ii = t % IV;
  let p = split3(ii, I);
  var lo: vec3<i32>; var hi: vec3<i32>;
  if (ADAPTIVE) {
    lo = a_cover_lo(p, O, I);
    hi = a_cover_hi(p, O, I);
  } else {
    let s = strd(); let pd = padd();
    lo = cover_lo3(p, ksz(), s, pd, dila());
    hi = cover_hi3(p, s, pd, O);
  }
  let base = plane * vol(O);
  var acc = 0.0;
  for (var a = lo.x; a < hi.x; a = a + 1) {
    for (var b = lo.y; b < hi.y; b = b + 1) {
      for (var c = lo.z; c < hi.z; c = c + 1) {
        let o = base + flat3(vec3<i32>(a, b, c), O);
        let idx = ld1(P.idx_off + o);
        if (idx.x == ii && idx.y == 0u) { acc = acc + ld0(P.grad_off + o); }
      }
    }
  }
  st2(P.gi_off + t, acc);
}

//== avg_fwd
// Operands: 0 input (V), 1 output (V).
fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = grid_pos(t, O);
  let w = avg_window(g.p, ksz(), strd(), padd(), I, P.divisor, P.count_include_pad != 0u);
  if (any(w.s >= w.e)) { st1(P.out_off + t, v_zero()); return; }
  let base = P.in_off + g.plane * vol(I);
  var acc = v_zero();
  for (var a = w.s.x; a < w.e.x; a = a + 1) {
    for (var b = w.s.y; b < w.e.y; b = b + 1) {
      for (var c = w.s.z; c < w.e.z; c = c + 1) {
        acc = v_add(acc, ld0(base + flat3(vec3<i32>(a, b, c), I)));
      }
    }
  }
  st1(P.out_off + t, v_div(acc, w.div));
}

//== avg_bwd
// Operands: 0 grad_output (f32), 1 grad_input (f32). One invocation per input element; ADAPTIVE
// (prepended) picks adaptive windows (the host binds divisor and count_include_pad, unused, there).
fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = grid_pos(t, I);
  let p = g.p;
  let k = ksz(); let s = strd(); let pd = padd();
  var lo: vec3<i32>; var hi: vec3<i32>;
  if (ADAPTIVE) {
    lo = a_cover_lo(p, O, I);
    hi = a_cover_hi(p, O, I);
  } else {
    lo = cover_lo3(p, k, s, pd, vec3<i32>(1));
    hi = cover_hi3(p, s, pd, O);
  }
  let base = P.grad_off + g.plane * vol(O);
  var acc = 0.0;
  for (var a = lo.x; a < hi.x; a = a + 1) {
    for (var b = lo.y; b < hi.y; b = b + 1) {
      for (var c = lo.z; c < hi.z; c = c + 1) {
        let o = vec3<i32>(a, b, c);
        var w: AvgWin;
        if (ADAPTIVE) {
          let i0 = a_lo(o, O, I);
          let i1 = a_hi(o, O, I);
          w = AvgWin(i0, i1, (i1.x - i0.x) * (i1.y - i0.y) * (i1.z - i0.z));
        } else {
          w = avg_window(o, k, s, pd, I, P.divisor, P.count_include_pad != 0u);
        }
        if (any(p < w.s) || any(p >= w.e)) { continue; }
        acc = acc + ld0(base + flat3(o, O)) / f32(w.div);
      }
    }
  }
  st1(P.gi_off + t, acc);
}

//== adaptive_avg_fwd
// Operands: 0 input (f32), 1 output (f32).
fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = grid_pos(t, O);
  let i0 = a_lo(g.p, O, I);
  let i1 = a_hi(g.p, O, I);
  let base = P.in_off + g.plane * vol(I);
  var acc = 0.0;
  for (var a = i0.x; a < i1.x; a = a + 1) {
    for (var b = i0.y; b < i1.y; b = b + 1) {
      for (var c = i0.z; c < i1.z; c = c + 1) {
        acc = acc + ld0(base + flat3(vec3<i32>(a, b, c), I));
      }
    }
  }
  let n = (i1.x - i0.x) * (i1.y - i0.y) * (i1.z - i0.z);
  st1(P.out_off + t, acc / f32(n));
}
