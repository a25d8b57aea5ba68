// im2col (F.unfold) and col2im (F.fold) over contiguous [N*C, H, W] images and [N, C*KH*KW, L]
// columns (ops/fold.cpp). Both gather: one invocation per output element, so col2im sums each image
// element's columns in CPU's order (kernel row, then kernel column) with no atomics.
// Parameters: 0 count, 1 C, 2 H, 3 W, 4-5 kernel, 6-7 dilation, 8-9 padding, 10-11 stride,
// 12-13 blocks (OH, OW), 14 offset of operand 0, 15 offset of operand 1.

struct Geo { C: u32, H: u32, W: u32, kh: u32, kw: u32, dh: u32, dw: u32, ph: u32, pw: u32, sh: u32, sw: u32,
             OH: u32, OW: u32, };
fn geo() -> Geo {
  return Geo(prm(1u), prm(2u), prm(3u), prm(4u), prm(5u), prm(6u), prm(7u), prm(8u), prm(9u), prm(10u),
             prm(11u), prm(12u), prm(13u));
}

//== im2col
// Operands: 0 image (raw), 1 columns (raw). The host defines V, the raw value type.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let g = geo();
  let L = g.OH * g.OW;
  let l = t % L;
  var r = t / L;
  let kj = r % g.kw; r = r / g.kw;
  let ki = r % g.kh; r = r / g.kh;  // r = n * C + c
  let h = i32((l / g.OW) * g.sh + ki * g.dh) - i32(g.ph);
  let w = i32((l % g.OW) * g.sw + kj * g.dw) - i32(g.pw);
  var v = V();
  if (h >= 0 && h < i32(g.H) && w >= 0 && w < i32(g.W)) {
    v = ld0(prm(14u) + (r * g.H + u32(h)) * g.W + u32(w));
  }
  st1(prm(15u) + t, v);
}

//== col2im
// Operands: 0 columns (f32), 1 image (f32).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let g = geo();
  let L = g.OH * g.OW;
  let w = i32(t % g.W);
  let h = i32((t / g.W) % g.H);
  let r = t / (g.H * g.W);  // n * C + c
  var acc = 0.0;
  for (var ki = 0u; ki < g.kh; ki = ki + 1u) {
    let hh = h + i32(g.ph) - i32(ki * g.dh);
    if (hh < 0 || u32(hh) % g.sh != 0u) { continue; }
    let oh = u32(hh) / g.sh;
    if (oh >= g.OH) { continue; }
    for (var kj = 0u; kj < g.kw; kj = kj + 1u) {
      let ww = w + i32(g.pw) - i32(kj * g.dw);
      if (ww < 0 || u32(ww) % g.sw != 0u) { continue; }
      let ow = u32(ww) / g.sw;
      if (ow >= g.OW) { continue; }
      acc = acc + ld0(prm(14u) + ((r * g.kh + ki) * g.kw + kj) * L + oh * g.OW + ow);
    }
  }
  st1(prm(15u) + t, acc);
}
