// Separable interpolation along one axis (csrc/ops/upsample_sep.cpp): antialiased bilinear/bicubic
// (_upsample_*2d_aa and their backward) and uint8 bilinear/bicubic, as CPU's separable kernels. A pass
// views its operands as contiguous [outer, length, inner] and reads per-output taps from tables the host
// computed as CPU does: t1 (i32) = xmin[lout], xsize[lout], then (bwd) lo[lin], hi[lin], the outputs
// whose taps cover each input; t2 = weights [lout, taps] (f32, or int16 values in i32 for uint8).
// Parameters: n (invocations), lin, lout, inner, taps, src_off, dst_off; prec (uint8: weight bits).
// Each section defines run(t); the host adds the entry point (ops/nn_common.h: per_element_main).

// The forward passes' window of output t = [p, o, q]: its first input element in[p, xmin[o], q]
// (src), its tap count xsize[o] (xs) and where its weights start in t2 (wb).
struct Window { src: u32, xs: u32, wb: u32 }
fn window(t: u32) -> Window {
  let q = t % P.inner;
  let r = t / P.inner;
  let o = r % P.lout;
  let p = r / P.lout;
  let xmin = u32(ld1(o));
  return Window(P.src_off + (p * P.lin + xmin) * P.inner + q, u32(ld1(P.lout + o)), o * P.taps);
}

//== fwd_f32
// out[p, o, q] = sum_j w[o, j] * in[p, xmin[o] + j, q], summed in j order as CPU.
fn run(t: u32) {
  let w = window(t);
  var acc = 0.0;
  for (var j = 0u; j < w.xs; j = j + 1u) { acc = acc + ld0(w.src + j * P.inner) * ld2(w.wb + j); }
  st3(P.dst_off + t, acc);
}

//== fwd_u8
// CPU's fixed point: (2^(prec-1) + sum_j w[o, j] * in) >> prec, clamped to 0..255.
fn run(t: u32) {
  let w = window(t);
  var acc = i32(1u << (P.prec - 1u));
  for (var j = 0u; j < w.xs; j = j + 1u) { acc = acc + ld0(w.src + j * P.inner) * ld2(w.wb + j); }
  st3(P.dst_off + t, clamp(acc >> P.prec, 0, 255));
}

//== bwd_f32
// The transposed pass: in[p, i, q] = sum over outputs o whose taps cover i of w[o, i - xmin[o]] * g[p, o, q].
// Here operand 0 (g) has length lout along the axis and the result length lin.
fn run(t: u32) {
  let q = t % P.inner;
  let r = t / P.inner;
  let i = r % P.lin;
  let p = r / P.lin;
  let lo = u32(ld1(2u * P.lout + i));
  let hi = u32(ld1(2u * P.lout + P.lin + i));
  var acc = 0.0;
  for (var o = lo; o < hi; o = o + 1u) {
    let xmin = u32(ld1(o));
    let xs = u32(ld1(P.lout + o));
    if (i >= xmin && i < xmin + xs) {
      acc = acc + ld2(o * P.taps + (i - xmin)) * ld0(P.src_off + (p * P.lout + o) * P.inner + q);
    }
  }
  st3(P.dst_off + t, acc);
}
