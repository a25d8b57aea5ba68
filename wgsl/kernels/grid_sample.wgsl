// grid_sampler_2d / grid_sampler_3d and their backward (ops/grid_sample.cpp). One invocation per
// output point (n, od, oh, ow): it derives the taps along each spatial dim once and loops over the
// channels, as CPU's kernels do. Coordinates follow ATen's GridSampler.h formulas in f32 (see rh()).
// The host prepends MODE (0 bilinear, 1 nearest, 2 bicubic), PAD (0 zeros, 1 border, 2 reflection),
// ALIGN (align_corners), DIMS (2 or 3), HALF (the input's dtype: 0 float32, 1 float16, 2 bfloat16)
// and, for the backward, MASK0 (grad_input wanted) with gi_add.
// Operands: contiguous input [N, C, D, H, W] (2-d: D = 1), grid [N, OD, OH, OW, DIMS] (x, y[, z]).
// Parameters: n (N * OD * OH * OW), C, per dim (D, H, W) P_in_size, P_out_size, the operands'
// offsets (*_off).
// Each section defines run(t) for element t < P.n; the host adds the entry point main
// (ops/nn_common.h: per_element_main).

// The taps along one dim: indices (-1 where the tap reads nothing), weights, d weight / d coordinate,
// and d coordinate / d grid value.
struct Taps { i: vec4<i32>, w: vec4<f32>, dw: vec4<f32>, n: i32, mult: f32, };

fn unit_taps() -> Taps {
  return Taps(vec4<i32>(0, -1, -1, -1), vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0), 1, 0.0);
}

// CPU's 2-d kernel (vectorised) and its 3-d kernel (GridSampler.h) spell the coordinate maps
// differently; each is followed to its rounding. For float16 and bfloat16 both (and CUDA's) compute
// coordinates in the half type, rounding after every operation: rh() does that rounding (HALF: 0 none,
// 1 float16, 2 bfloat16), so the same grid point picks the same taps.
fn rh(x: f32) -> f32 {
  if (HALF == 1u) { return f16_to_f32(f32_to_f16(x)); }
  if (HALF == 2u) { return bitcast<f32>(f32_to_bf16(x) << 16u); }
  return x;
}

// a * b + c rounded once (Dekker's exact product, then an exact sum of the three parts).
fn split(a: f32) -> vec2<f32> {
  let t = 4097.0 * a;
  let hi = t - (t - a);
  return vec2<f32>(hi, a - hi);
}
fn fused_mul_add(a: f32, b: f32, c: f32) -> f32 {
  let p = a * b;
  let sa = split(a);
  let sb = split(b);
  let err = ((sa.x * sb.x - p) + sa.x * sb.y + sa.y * sb.x) + sa.y * sb.y;
  let s = p + c;
  let bb = s - p;
  let e1 = (p - (s - bb)) + (c - bb);
  return s + (e1 + err);
}

fn unnormalize(c: f32, n: i32) -> f32 {
  if (DIMS == 2u) {
    if (ALIGN) { return rh(rh(c + 1.0) * (rh(f32(n - 1)) / 2.0)); }
    // CPU's vectorised (in + 1) * scale - 0.5, which its compiler contracts into a fused multiply-add;
    // WGSL's fma may be unfused (lavapipe's is), so it is formed exactly here.
    if (HALF == 0u) { return fused_mul_add(c + 1.0, f32(n) / 2.0, -0.5); }
    return rh(rh(rh(c + 1.0) * (rh(f32(n)) / 2.0)) - 0.5);
  }
  if (ALIGN) { return rh(rh(rh(c + 1.0) / 2.0) * rh(f32(n - 1))); }
  return rh(rh(rh(rh(c + 1.0) * rh(f32(n))) - 1.0) / 2.0);
}
fn unnormalize_mult(n: i32) -> f32 {
  if (ALIGN) { return f32(n - 1) / 2.0; }
  return f32(n) / 2.0;
}

// (clipped, d clipped / d in); NaN clips to 0. Borders count as outside for the gradient.
fn clip(x: f32, n: i32) -> vec2<f32> {
  if (!(x > 0.0)) { return vec2<f32>(0.0, 0.0); }
  let m = rh(f32(n - 1));
  if (x >= m) { return vec2<f32>(m, 0.0); }
  return vec2<f32>(x, 1.0);
}

// (reflected, d reflected / d in).
fn reflect_c(x0: f32, n: i32) -> vec2<f32> {
  if (DIMS == 2u) {
    // The 2-d kernel: fold |x - low| into [0, twice_span), then mirror the upper half.
    var low = -0.5;
    var ts = rh(2.0 * f32(n));
    if (ALIGN) {
      if (n <= 1) { return vec2<f32>(0.0, 0.0); }
      low = 0.0;
      ts = rh(2.0 * f32(n - 1));
    }
    let d = rh(x0 - low);
    let a = abs(d);
    var extra = rh(a - rh(trunc(rh(a / ts)) * ts));
    if (HALF == 0u) { extra = fused_mul_add(-trunc(a / ts), ts, a); }  // contracted on CPU too
    let other = rh(ts - extra);
    let flip = extra > other;
    let g = select(1.0, -1.0, flip != (d < 0.0));
    return vec2<f32>(rh(select(extra, other, flip) + low), g);
  }
  // GridSampler.h's reflect_coordinates (with std::fmod, exact).
  var twice_low = -1;
  var twice_high = 2 * n - 1;
  if (ALIGN) { twice_low = 0; twice_high = 2 * (n - 1); }
  if (twice_low == twice_high) { return vec2<f32>(0.0, 0.0); }
  let mn = f32(twice_low) / 2.0;
  let span = rh(f32(twice_high - twice_low) / 2.0);
  var x = rh(x0 - mn);
  var g = 1.0;
  if (x < 0.0) { g = -1.0; x = -x; }
  let flips = floor(rh(x / span));
  var q = floor(x / span);
  var extra = fma(-q, span, x);
  if (extra < 0.0) { q = q - 1.0; extra = fma(-q, span, x); }
  if (extra >= span) { q = q + 1.0; extra = fma(-q, span, x); }
  if (i32(flips) % 2 == 0) { return vec2<f32>(rh(extra + mn), g); }
  return vec2<f32>(rh(rh(span - extra) + mn), -g);
}

// ATen's compute_coordinates (with its gradient factor).
fn coords(x: f32, n: i32) -> vec2<f32> {
  if (PAD == 1u) { return clip(x, n); }
  if (PAD == 2u) {
    let r = reflect_c(x, n);
    let c = clip(r.x, n);
    return vec2<f32>(c.x, r.y * c.y);
  }
  return vec2<f32>(x, 1.0);
}

// A float index as an i32 tap, -1 when outside [0, n).
fn tap(x: f32, n: i32) -> i32 {
  if (!(x >= 0.0 && x < f32(n))) { return -1; }
  return i32(x);
}

// The cubic convolution weights (A = -0.75), rounded per operation for the half types as CPU does.
fn cubic1(x: f32) -> f32 { return rh(rh(rh(rh(rh(1.25 * x) - 2.25) * x) * x) + 1.0); }
fn cubic2(x: f32) -> f32 { return rh(rh(rh(rh(rh(rh(-0.75 * x) + 3.75) * x) - 6.0) * x) + 3.0); }

fn taps(c: f32, n: i32) -> Taps {
  var r: Taps;
  if (MODE == 2u) {
    let x = unnormalize(c, n);
    r.mult = unnormalize_mult(n);
    let x0 = floor(x);
    let t = x - x0;
    r.w = vec4<f32>(cubic2(rh(t + 1.0)), cubic1(t), cubic1(rh(1.0 - t)), cubic2(rh(2.0 - t)));
    // d weight / d t (the negated get_cubic_coefficients_grad).
    let A = -0.75;
    var y = -1.0 - t;
    let g0 = (-3.0 * A * y - 10.0 * A) * y - 8.0 * A;
    y = -t;
    let g1 = (-3.0 * (A + 2.0) * y - 2.0 * (A + 3.0)) * y;
    y = 1.0 - t;
    let g2 = (3.0 * (A + 2.0) * y - 2.0 * (A + 3.0)) * y;
    y = 2.0 - t;
    let g3 = (3.0 * A * y - 10.0 * A) * y + 8.0 * A;
    r.dw = -vec4<f32>(g0, g1, g2, g3);
    for (var k = 0; k < 4; k = k + 1) {
      // Taps are whole numbers; padding maps them (border, reflection) before the bounds check.
      r.i[k] = tap(coords(x0 - 1.0 + f32(k), n).x, n);
    }
    r.n = 4;
    return r;
  }
  let u = unnormalize(c, n);
  let s = coords(u, n);
  r.mult = unnormalize_mult(n) * s.y;
  if (MODE == 1u) {
    r.i = vec4<i32>(tap(round(s.x), n), -1, -1, -1);
    r.w = vec4<f32>(1.0, 0.0, 0.0, 0.0);
    r.dw = vec4<f32>(0.0);
    r.n = 1;
    return r;
  }
  let x0 = floor(s.x);
  var w0: f32; var w1: f32;
  // CPU's 2-d kernel takes the far weight as 1 - near; its 3-d kernel as (x0 + 1) - x.
  if (DIMS == 2u) { w1 = s.x - x0; w0 = 1.0 - w1; } else { w0 = (x0 + 1.0) - s.x; w1 = s.x - x0; }
  r.i = vec4<i32>(tap(x0, n), tap(x0 + 1.0, n), -1, -1);
  r.w = vec4<f32>(w0, w1, 0.0, 0.0);
  r.dw = vec4<f32>(-1.0, 1.0, 0.0, 0.0);
  r.n = 2;
  return r;
}

fn in_dims() -> vec3<i32> { return vec3<i32>(i32(P_in_size(0u)), i32(P_in_size(1u)), i32(P_in_size(2u))); }
fn out_vol() -> u32 { return P_out_size(0u) * P_out_size(1u) * P_out_size(2u); }

// Grid point t: its batch n, its output position o, the input's sizes and the taps along each dim
// (z, y, x) of its grid coordinates (at `goff`, read through ld_grid).
struct Point { n: u32, o: u32, I: vec3<i32>, IV: u32, OV: u32, tz: Taps, ty: Taps, tx: Taps, };
fn grid_point(t: u32, goff: u32) -> Point {
  let I = in_dims();
  let OV = out_vol();
  let g = goff + t * DIMS;
  var z = unit_taps();
  if (DIMS == 3u) { z = taps(ld_grid(g + 2u), I.x); }
  return Point(t / OV, t % OV, I, u32(I.x * I.y * I.z), OV, z, taps(ld_grid(g + 1u), I.y), taps(ld_grid(g), I.z));
}

//== fwd
// Operands: 0 input (f32), 1 grid (f32), 2 output (f32); offsets in_off, grid_off, out_off.
fn ld_grid(e: u32) -> f32 { return ld1(e); }

fn run(t: u32) {
  let q = grid_point(t, P.grid_off);
  let tz = q.tz; let ty = q.ty; let tx = q.tx;
  for (var c = 0u; c < P.C; c = c + 1u) {
    let base = P.in_off + (q.n * P.C + c) * q.IV;
    var acc = 0.0;
    for (var a = 0; a < tz.n; a = a + 1) {
      var acc_y = 0.0;
      for (var b = 0; b < ty.n; b = b + 1) {
        var acc_x = 0.0;
        for (var e = 0; e < tx.n; e = e + 1) {
          if (tz.i[a] < 0 || ty.i[b] < 0 || tx.i[e] < 0) { continue; }
          let v = ld0(base + u32((tz.i[a] * q.I.y + ty.i[b]) * q.I.z + tx.i[e]));
          // Products and sums as CPU orders them (rounded per operation for the half types).
          if (MODE == 2u) {
            acc_x = rh(acc_x + rh(tx.w[e] * v));
          } else {
            acc = rh(acc + rh(v * rh(rh(tx.w[e] * ty.w[b]) * tz.w[a])));
          }
        }
        acc_y = rh(acc_y + rh(ty.w[b] * acc_x));
      }
      if (MODE == 2u) { acc = rh(acc + rh(tz.w[a] * acc_y)); }
    }
    st2(P.out_off + (q.n * P.C + c) * q.OV + q.o, acc);
  }
}

//== bwd
// Operands: 0 grad_output (f32), 1 input (f32), 2 grid (f32), 3 grad_grid (f32), then the f32
// grad_input accumulator (atomic) when MASK0; offsets grad_off, in_off, grid_off, gg_off (grad_grid),
// gi_off (grad_input, 0 without MASK0).
fn ld_grid(e: u32) -> f32 { return ld2(e); }

fn run(t: u32) {
  let q = grid_point(t, P.grid_off);
  let tz = q.tz; let ty = q.ty; let tx = q.tx;
  var gx = 0.0; var gy = 0.0; var gz = 0.0;
  for (var c = 0u; c < P.C; c = c + 1u) {
    let go = ld0(P.grad_off + (q.n * P.C + c) * q.OV + q.o);
    let ib = (q.n * P.C + c) * q.IV;
    for (var a = 0; a < tz.n; a = a + 1) {
      for (var b = 0; b < ty.n; b = b + 1) {
        for (var e = 0; e < tx.n; e = e + 1) {
          if (tz.i[a] < 0 || ty.i[b] < 0 || tx.i[e] < 0) { continue; }
          let p = ib + u32((tz.i[a] * q.I.y + ty.i[b]) * q.I.z + tx.i[e]);
          if (MASK0) { gi_add(P.gi_off + p, tx.w[e] * ty.w[b] * tz.w[a] * go); }
          if (MODE != 1u) {
            let v = ld1(P.in_off + p) * go;
            gx = gx + v * tx.dw[e] * ty.w[b] * tz.w[a];
            gy = gy + v * tx.w[e] * ty.dw[b] * tz.w[a];
            gz = gz + v * tx.w[e] * ty.w[b] * tz.dw[a];
          }
        }
      }
    }
  }
  let g = P.gg_off + t * DIMS;
  st3(g, gx * tx.mult);
  st3(g + 1u, gy * ty.mult);
  if (DIMS == 3u) { st3(g + 2u, gz * tz.mult); }
}
