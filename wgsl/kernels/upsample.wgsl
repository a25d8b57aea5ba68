// Interpolation kernels (ops/upsample.cpp): nearest / nearest-exact and (bi/tri)linear over up to 3
// spatial dims, contiguous [planes, D, H, W] (1d/2d have leading sizes of 1). Forward: one invocation
// per output element; backward: one per input element, gathering from the outputs that read it (no
// atomics). Grids as wgsl/lib/nn_grid.wgsl. The host keeps one section and prepends EXACT
// (nearest-exact), ALIGN (align_corners) and LINEAR (gather_bwd: linear, not nearest).
// Parameters: n (invocations), per dim (D, H, W): P_in_size, P_out_size, P_scale (input per
// output, f32); src_off, dst_off: offsets of operand 0 (input or grad_output) and 1 (the result).
// Each section defines run(t) for element t < P.n; the host adds the entry point main
// (ops/nn_common.h: per_element_main).

fn isz() -> vec3<i32> { return vec3<i32>(i32(P_in_size(0u)), i32(P_in_size(1u)), i32(P_in_size(2u))); }
fn osz() -> vec3<i32> { return vec3<i32>(i32(P_out_size(0u)), i32(P_out_size(1u)), i32(P_out_size(2u))); }
fn scl(d: u32) -> f32 { return P_scale(d); }

// Invocation t's place: its position p in the grid of sizes `over` (the output for forward kernels,
// the input for backward ones) and where its plane starts in operand 0, of sizes `src`.
struct SrcAt { p: vec3<i32>, base: u32, };
fn src_at(t: u32, over: vec3<i32>, src: vec3<i32>) -> SrcAt {
  let g = grid_pos(t, over);
  return SrcAt(g.p, P.src_off + g.plane * vol(src));
}

// ATen's nearest source index along dim d (of input size n).
fn near_src(o: i32, d: u32, n: i32) -> i32 {
  var f: f32;
  if (EXACT) { f = floor((f32(o) + 0.5) * scl(d)); } else { f = floor(f32(o) * scl(d)); }
  return min(i32(f), n - 1);
}

// ATen's linear source: (index0, offset to index1, lambda1) along dim d.
struct Lin { i0: i32, off: i32, l1: f32, };
fn lin_src(o: i32, d: u32, n: i32) -> Lin {
  let s = scl(d);
  var r: f32;
  // fma: CPU computes this in native/cpu code, which its compiler contracts to a fused multiply-add.
  if (ALIGN) { r = s * f32(o); } else { r = max(fma(s, f32(o) + 0.5, -0.5), 0.0); }
  let i0 = min(i32(r), n - 1);
  let off = select(0, 1, i0 < n - 1);
  let l1 = min(max(r - f32(i0), 0.0), 1.0);
  return Lin(i0, off, l1);
}

// Outputs along dim d that may read input i (checked exactly by the caller).
fn cand(i: i32, d: u32, n_in: i32, n_out: i32, linear: bool) -> vec2<i32> {
  let s = scl(d);
  if (!(s > 0.0) || n_in == 1) { return vec2<i32>(0, n_out); }
  var lo: f32; var hi: f32;
  if (linear) {
    if (ALIGN) { lo = f32(i - 1) / s; hi = f32(i + 1) / s; }
    else { lo = (f32(i) - 0.5) / s - 0.5; hi = (f32(i) + 1.5) / s - 0.5; }
  } else {
    if (EXACT) { lo = f32(i) / s - 0.5; hi = f32(i + 1) / s - 0.5; }
    else { lo = f32(i) / s; hi = f32(i + 1) / s; }
  }
  var a = max(i32(floor(lo)) - 2, 0);
  var b = min(i32(ceil(hi)) + 3, n_out);
  if (!linear && i == n_in - 1) { b = n_out; }
  if (linear && i == n_in - 1) { b = n_out; }
  return vec2<i32>(a, max(b, a));
}

// Bicubic taps (A = -0.75), CPU's weights: source scale * (o + 0.5) - 0.5 (no clamp) or
// scale * o (align_corners), i0 = min(floor, n - 1), t = clamp(src - i0, 0, 1), taps i0 - 1 .. i0 + 2
// clamped into the input.
struct Cub { i0: i32, w: vec4<f32>, };
fn cub_w(t: f32) -> vec4<f32> {
  let A = -0.75;
  let x0 = t + 1.0;
  let x3 = 2.0 - t;
  let x2 = 1.0 - t;
  return vec4<f32>(((A * x0 - 5.0 * A) * x0 + 8.0 * A) * x0 - 4.0 * A,
                   ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0,
                   ((A + 2.0) * x2 - (A + 3.0)) * x2 * x2 + 1.0,
                   ((A * x3 - 5.0 * A) * x3 + 8.0 * A) * x3 - 4.0 * A);
}
fn cub_src(o: i32, d: u32, n: i32) -> Cub {
  let s = scl(d);
  var r: f32;
  if (ALIGN) { r = s * f32(o); } else { r = fma(s, f32(o) + 0.5, -0.5); }
  let i0 = min(i32(floor(r)), n - 1);
  let t = min(max(r - f32(i0), 0.0), 1.0);
  return Cub(i0, cub_w(t));
}
fn cub_tap(c: Cub, k: i32, n: i32) -> i32 { return clamp(c.i0 - 1 + k, 0, n - 1); }

//== nearest_fwd
// Operands: 0 input, 1 output (raw values).
fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = src_at(t, O, I);
  let i = vec3<i32>(near_src(g.p.x, 0u, I.x), near_src(g.p.y, 1u, I.y), near_src(g.p.z, 2u, I.z));
  st1(P.dst_off + t, ld0(g.base + flat3(i, I)));
}

//== linear_fwd
// Operands: 0 input (f32), 1 output (f32).
fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = src_at(t, O, I);
  let la = lin_src(g.p.x, 0u, I.x);
  let lb = lin_src(g.p.y, 1u, I.y);
  let lc = lin_src(g.p.z, 2u, I.z);
  var acc = 0.0;
  for (var a = 0; a <= la.off; a = a + 1) {
    let wa = select(select(1.0 - la.l1, 1.0, la.off == 0), la.l1, a == 1);
    var accb = 0.0;
    for (var b = 0; b <= lb.off; b = b + 1) {
      let wb = select(select(1.0 - lb.l1, 1.0, lb.off == 0), lb.l1, b == 1);
      var accc = 0.0;
      for (var c = 0; c <= lc.off; c = c + 1) {
        let wc = select(select(1.0 - lc.l1, 1.0, lc.off == 0), lc.l1, c == 1);
        accc = accc + wc * ld0(g.base + flat3(vec3<i32>(la.i0 + a, lb.i0 + b, lc.i0 + c), I));
      }
      accb = accb + wb * accc;
    }
    acc = acc + wa * accb;
  }
  st1(P.dst_off + t, acc);
}

//== gather_bwd
// nearest_bwd and linear_bwd: LINEAR (prepended) picks the linear weights over nearest's (1 for
// the outputs whose nearest source is the input, which sum their gradients unscaled).
// Operands: 0 grad_output (f32), 1 grad_input (f32).
// The weight with which output o (along dim d) reads input i.
fn bwd_w(o: i32, d: u32, n: i32, i: i32) -> f32 {
  if (!LINEAR) { return select(0.0, 1.0, near_src(o, d, n) == i); }
  let l = lin_src(o, d, n);
  var w = 0.0;
  if (l.i0 == i) { w = w + (1.0 - l.l1); }
  if (l.i0 + l.off == i) { w = w + l.l1; }
  return w;
}

fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = src_at(t, I, O);
  let p = g.p;
  let ra = cand(p.x, 0u, I.x, O.x, LINEAR);
  let rb = cand(p.y, 1u, I.y, O.y, LINEAR);
  let rc = cand(p.z, 2u, I.z, O.z, LINEAR);
  var acc = 0.0;
  for (var a = ra.x; a < ra.y; a = a + 1) {
    let wa = bwd_w(a, 0u, I.x, p.x);
    if (wa == 0.0) { continue; }
    for (var b = rb.x; b < rb.y; b = b + 1) {
      let wb = bwd_w(b, 1u, I.y, p.y);
      if (wb == 0.0) { continue; }
      for (var c = rc.x; c < rc.y; c = c + 1) {
        let wc = bwd_w(c, 2u, I.z, p.z);
        if (wc == 0.0) { continue; }
        acc = acc + wa * wb * wc * ld0(g.base + flat3(vec3<i32>(a, b, c), O));
      }
    }
  }
  st1(P.dst_off + t, acc);
}

//== cubic_fwd
// Bicubic (2-d: D = 1). Operands: 0 input (f32), 1 output (f32). The width is interpolated first,
// then the height, as CPU nests them.

fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = src_at(t, O, I);
  let cy = cub_src(g.p.y, 1u, I.y);
  let cx = cub_src(g.p.z, 2u, I.z);
  var acc = 0.0;
  for (var j = 0; j < 4; j = j + 1) {
    let row = g.base + u32(cub_tap(cy, j, I.y) * I.z);
    var r = 0.0;
    for (var i = 0; i < 4; i = i + 1) { r = r + cx.w[i] * ld0(row + u32(cub_tap(cx, i, I.z))); }
    acc = acc + cy.w[j] * r;
  }
  st1(P.dst_off + t, acc);
}

//== cubic_bwd
// Operands: 0 grad_output (f32), 1 grad_input (f32). One invocation per input element, gathering
// from the outputs whose (clamped) taps reach it.
// The weight with which output o (along dim d) reads input i.
fn cub_wt(o: i32, d: u32, n: i32, i: i32) -> f32 {
  let c = cub_src(o, d, n);
  var w = 0.0;
  for (var k = 0; k < 4; k = k + 1) {
    if (cub_tap(c, k, n) == i) { w = w + c.w[k]; }
  }
  return w;
}
// Outputs along dim d that may read input i: sources within (i - 2, i + 2], widened; the clamped
// border inputs take every output beyond them.
fn cub_cand(i: i32, d: u32, n_in: i32, n_out: i32) -> vec2<i32> {
  let s = scl(d);
  if (!(s > 0.0)) { return vec2<i32>(0, n_out); }
  var lo: f32; var hi: f32;
  if (ALIGN) { lo = f32(i - 2) / s; hi = f32(i + 2) / s; }
  else { lo = (f32(i - 2) + 0.5) / s - 0.5; hi = (f32(i + 2) + 0.5) / s - 0.5; }
  var a = max(i32(floor(lo)) - 2, 0);
  var b = min(i32(ceil(hi)) + 3, n_out);
  if (i <= 1) { a = 0; }
  if (i >= n_in - 2) { b = n_out; }
  return vec2<i32>(a, max(b, a));
}

fn run(t: u32) {
  let O = osz(); let I = isz();
  let g = src_at(t, I, O);
  let p = g.p;
  let rb = cub_cand(p.y, 1u, I.y, O.y);
  let rc = cub_cand(p.z, 2u, I.z, O.z);
  var acc = 0.0;
  for (var b = rb.x; b < rb.y; b = b + 1) {
    let wb = cub_wt(b, 1u, I.y, p.y);
    if (wb == 0.0) { continue; }
    var r = 0.0;
    for (var c = rc.x; c < rc.y; c = c + 1) {
      let wc = cub_wt(c, 2u, I.z, p.z);
      if (wc == 0.0) { continue; }
      r = r + wc * ld0(g.base + u32(b * O.z + c));
    }
    acc = acc + wb * r;
  }
  st1(P.dst_off + t, acc);
}
