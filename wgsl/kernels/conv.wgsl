// Convolution as an implicit GEMM (ops/conv.cpp). Geometry, the same for all three modes: X is the
// "large" side (a convolution's input, a transposed convolution's output), Y the "small" side, W the
// weight laid out [G*Co, Ci, KD, KH, KW]; x = y * stride - pad + k * dilation per spatial dim.
//   MODE 0 (F): Y[n, g*Co+co, y]      = sum_{ci,k} X[n, g*Ci+ci, x(y,k)] * W[g*Co+co, ci, k] (+ bias)
//   MODE 1 (D): X[n, g*Ci+ci, x]      = sum_{co,k} Y[n, g*Co+co, y(x,k)] * W[g*Co+co, ci, k] (+ bias)
//   MODE 2 (W): W[g*Co+co, ci, k]     = sum_{n,y}  Y[n, g*Co+co, y] * X[n, g*Ci+ci, x(y,k)]
// A GEMM of M x NC with reduction K, tiled 64 x 64 x 16 per workgroup of 256 invocations (4 x 4
// outputs each), both operand tiles staged through workgroup memory; optional split-K over grid.
// Operands: 0 = A source, 1 = B source, 2 = result, 3 = bias (a dummy when P.has_bias == 0).
// MODE, the value type T (f32, or vec2<u32> for exact int64), t_zero/t_mad/t_add, x_off (X's
// element offset) and the ld_x/ld_y/ld_w readers are prepended by the host.
// Parameters: groups, c_in, c_out (channels per group), per spatial dim (arrays of 3: depth, height,
// width) x_size, y_size, k_size, stride, pad, dilation; element offsets a_off, b_off, out_off,
// bias_off; has_bias; the GEMM's M, NC (columns), K (reduction), tiles_m, tiles_n; part_size (elements
// of one split-K part of the result), k_chunk (reduction per split), splits (split-K parts).

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;

var<workgroup> As: array<T, 1024>;  // [BK][BM]
var<workgroup> Bs: array<T, 1024>;  // [BK][BN]

fn xsz() -> vec3<u32> { return vec3<u32>(P_x_size(0u), P_x_size(1u), P_x_size(2u)); }
fn ysz() -> vec3<u32> { return vec3<u32>(P_y_size(0u), P_y_size(1u), P_y_size(2u)); }
fn ksz() -> vec3<u32> { return vec3<u32>(P_k_size(0u), P_k_size(1u), P_k_size(2u)); }
fn strd() -> vec3<i32> { return vec3<i32>(i32(P_stride(0u)), i32(P_stride(1u)), i32(P_stride(2u))); }
fn padd() -> vec3<i32> { return vec3<i32>(i32(P_pad(0u)), i32(P_pad(1u)), i32(P_pad(2u))); }
fn dila() -> vec3<i32> { return vec3<i32>(i32(P_dilation(0u)), i32(P_dilation(1u)), i32(P_dilation(2u))); }

fn vol(s: vec3<u32>) -> u32 { return s.x * s.y * s.z; }
fn split3(i: u32, s: vec3<u32>) -> vec3<u32> { return vec3<u32>(i / (s.y * s.z), (i / s.z) % s.y, i % s.z); }

// X element at channel row `crow` (= n*G*Ci + c) and position x, or 0 outside (padding).
fn load_x(crow: u32, x: vec3<i32>) -> T {
  let s = xsz();
  if (any(x < vec3<i32>(0)) || any(x >= vec3<i32>(s))) { return t_zero(); }
  let xu = vec3<u32>(x);
  return ld_x(x_off() + ((crow * s.x + xu.x) * s.y + xu.y) * s.z + xu.z);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let M = P.M;
  let NC = P.NC;
  let K = P.K;
  let tilesM = P.tiles_m;
  let tilesN = P.tiles_n;
  let kchunk = P.k_chunk;
  var w = linear_id(wid, nwg, 0u, 1u);
  let tn = w % tilesN; w = w / tilesN;
  let tm = w % tilesM; w = w / tilesM;
  let G = P.groups; let Ci = P.c_in; let Co = P.c_out;
  let g = w % G;
  let split = w / G;
  if (split >= P.splits) { return; }  // a folded grid's spare workgroups (uniform: one id per workgroup)
  let KS = vol(ksz()); let XS = vol(xsz()); let YS = vol(ysz());
  let st = strd(); let pd = padd(); let dl = dila();

  // This invocation's fixed row of the A tile and column of the B tile.
  let am = tm * BM + tid % BM;
  let bn = tn * BN + tid % BN;
  let kq = tid / BM;  // 0..3: k rows kq, kq+4, kq+8, kq+12
  // Row decode of A.
  var a_n = 0u; var a_pos = vec3<u32>(0u); var a_valid = am < M;
  if (MODE == 0u) { a_n = am / YS; a_pos = split3(am % YS, ysz()); }
  if (MODE == 1u) { a_n = am / XS; a_pos = split3(am % XS, xsz()); }
  // Column decode of B (MODE 2: ci and kernel offset).
  let b_valid = bn < NC;
  let b_ci = bn / KS;
  let b_k = vec3<i32>(split3(bn % KS, ksz()));

  let k_begin = split * kchunk;
  let k_end = min(K, k_begin + kchunk);

  var acc: array<T, 16>;
  for (var i = 0u; i < 16u; i = i + 1u) { acc[i] = t_zero(); }
  let tx = tid % 16u;
  let ty = tid / 16u;

  for (var k0 = k_begin; k0 < k_end; k0 = k0 + BK) {
    for (var j = 0u; j < 4u; j = j + 1u) {
      let kk = kq + 4u * j;
      let k = k0 + kk;
      var av = t_zero();
      var bv = t_zero();
      if (k < k_end) {
        if (MODE == 0u) {
          if (a_valid) {
            let ci = k / KS;
            let kp = vec3<i32>(split3(k % KS, ksz()));
            let x = vec3<i32>(a_pos) * st - pd + kp * dl;
            av = load_x(a_n * G * Ci + g * Ci + ci, x);
          }
          if (b_valid) { bv = ld_w(P.b_off + (g * Co + bn) * Ci * KS + k); }
        } else if (MODE == 1u) {
          let co = k / KS;
          let kp = split3(k % KS, ksz());
          if (a_valid) {
            let t = vec3<i32>(a_pos) + pd - vec3<i32>(kp) * dl;
            let y = t / st;
            let ys = ysz();
            if (all(t >= vec3<i32>(0)) && all(y * st == t) && all(y < vec3<i32>(ys))) {
              let yu = vec3<u32>(y);
              av = ld_y(P.a_off + (((a_n * G * Co + g * Co + co) * ys.x + yu.x) * ys.y + yu.y) * ys.z + yu.z);
            }
          }
          if (b_valid) { bv = ld_w(P.b_off + ((g * Co + co) * Ci + bn) * KS + k % KS); }
        } else {
          let n = k / YS;
          let ys = k % YS;
          if (a_valid) { av = ld_y(P.a_off + (n * G * Co + g * Co + am) * YS + ys); }
          if (b_valid) {
            let x = vec3<i32>(split3(ys, ysz())) * st - pd + b_k * dl;
            bv = load_x(n * G * Ci + g * Ci + b_ci, x);
          }
        }
      }
      As[kk * BM + tid % BM] = av;
      Bs[kk * BN + tid % BN] = bv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk = kk + 1u) {
      var a4: array<T, 4>;
      for (var i = 0u; i < 4u; i = i + 1u) { a4[i] = As[kk * BM + tx + 16u * i]; }
      for (var j = 0u; j < 4u; j = j + 1u) {
        let b = Bs[kk * BN + ty + 16u * j];
        for (var i = 0u; i < 4u; i = i + 1u) { acc[j * 4u + i] = t_mad(acc[j * 4u + i], a4[i], b); }
      }
    }
    workgroupBarrier();
  }

  for (var j = 0u; j < 4u; j = j + 1u) {
    let c = tn * BN + ty + 16u * j;
    if (c >= NC) { continue; }
    for (var i = 0u; i < 4u; i = i + 1u) {
      let m = tm * BM + tx + 16u * i;
      if (m >= M) { continue; }
      var v = acc[j * 4u + i];
      var o = 0u;
      if (MODE == 0u) {
        if (P.has_bias != 0u) { v = t_add(v, ld3(P.bias_off + g * Co + c)); }
        o = (m / YS * G * Co + g * Co + c) * YS + m % YS;
      } else if (MODE == 1u) {
        if (P.has_bias != 0u) { v = t_add(v, ld3(P.bias_off + g * Ci + c)); }
        o = (m / XS * G * Ci + g * Ci + c) * XS + m % XS;
      } else {
        o = split * P.part_size + (g * Co + m) * Ci * KS + c;
      }
      st2(P.out_off + o, v);
    }
  }
}
