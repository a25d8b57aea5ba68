// im2col (F.unfold) and col2im (F.fold) over contiguous [N*C, H, W] images and [N, C*KH*KW, L]
// columns (ops/fold.cpp). Both gather: one invocation per output element, so col2im sums each image
// element's columns in CPU's order (kernel row, then kernel column) with no atomics.
// Parameters: n (invocations), H, W (image), kh, kw (kernel), dh, dw (dilation), ph, pw
// (padding), sh, sw (stride), OH, OW (blocks), src_off, dst_off (offsets of operands 0 and 1).
// Each section defines run(t) for element t < P.n; the host adds the entry point main
// (ops/nn_common.h: per_element_main).

//== im2col
// Operands: 0 image (raw), 1 columns (raw). The host defines V, the raw value type.
fn run(t: u32) {
  let L = P.OH * P.OW;
  let l = t % L;
  var r = t / L;
  let kj = r % P.kw; r = r / P.kw;
  let ki = r % P.kh; r = r / P.kh;  // r = n * C + c
  let h = i32((l / P.OW) * P.sh + ki * P.dh) - i32(P.ph);
  let w = i32((l % P.OW) * P.sw + kj * P.dw) - i32(P.pw);
  var v = V();
  if (h >= 0 && h < i32(P.H) && w >= 0 && w < i32(P.W)) {
    v = ld0(P.src_off + (r * P.H + u32(h)) * P.W + u32(w));
  }
  st1(P.dst_off + t, v);
}

//== col2im
// Operands: 0 columns (f32), 1 image (f32).
fn run(t: u32) {
  let L = P.OH * P.OW;
  let w = i32(t % P.W);
  let h = i32((t / P.W) % P.H);
  let r = t / (P.H * P.W);  // n * C + c
  var acc = 0.0;
  for (var ki = 0u; ki < P.kh; ki = ki + 1u) {
    let hh = h + i32(P.ph) - i32(ki * P.dh);
    if (hh < 0 || u32(hh) % P.sh != 0u) { continue; }
    let oh = u32(hh) / P.sh;
    if (oh >= P.OH) { continue; }
    for (var kj = 0u; kj < P.kw; kj = kj + 1u) {
      let ww = w + i32(P.pw) - i32(kj * P.dw);
      if (ww < 0 || u32(ww) % P.sw != 0u) { continue; }
      let ow = u32(ww) / P.sw;
      if (ow >= P.OW) { continue; }
      acc = acc + ld0(P.src_off + ((r * P.kh + ki) * P.kw + kj) * L + oh * P.OW + ow);
    }
  }
  st1(P.dst_off + t, acc);
}
