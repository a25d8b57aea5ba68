// embedding_bag's forward (ops/embedding_bag.cpp): one invocation per (bag, feature), walking the
// bag's indices in order (CPU's order) and reducing sum / mean / max in f32. Indices outside
// [0, num_weights) and offsets that are not a non-decreasing sequence from 0 within the input are
// reported through the error words (RuntimeError, as CPU raises) and skipped.
// The host prepends MODE (0 sum, 1 mean, 2 max), HAS_PSW and psw(i) (per_sample_weights).
// Operands: 0 weight (f32), 1 indices (i64), 2 offsets (i64), 3 output [B, D] (f32),
// 4 offset2bag [n] (i64, zeroed), 5 bag_size [B] (i64), 6 max_indices ([B, D] for max, else [B]).
// Parameters: n (B * D), D, noff (number of offsets), nbags (B: noff, or noff - 1 with
// include_last_offset), n_idx (number of indices), num_weights, padding_idx (i32, -1: none),
// w_stride0, w_stride1 (weight strides), the operands' offsets (w_off, idx_off, offs_off, out_off,
// o2b_off, bs_off, mi_off, psw_off), err_op (error op code).

fn i64v(v: vec2<u32>) -> i32 {
  // An offset already known to lie in [0, n] (n < 2^31), or a clamped stand-in.
  if ((v.y >> 31u) == 1u) { return -1; }
  if (v.y != 0u || v.x > 0x7fffffffu) { return 0x7fffffff; }
  return i32(v.x);
}

fn run(t: u32) {
  let D = P.D;
  let b = t / D;
  let d = t % D;
  let noff = P.noff;
  let n = i32(P.n_idx);
  let nw = P.num_weights;
  let pad = P.padding_idx;
  let first = d == 0u;
  let ov = ld2(P.offs_off + b);
  var start = i64v(ov);
  if (first && ((b == 0u && (ov.x != 0u || ov.y != 0u)) || start < 0 || start > n)) {
    report_index_error(P.err_op, 0u, ov, u32(n));
  }
  // With include_last_offset and a last offset short of the end, CPU's max runs the last bag to the
  // end of the indices while its sum and mean stop at the last offset: the same here.
  var end = n;
  if (b + 1u < noff) {
    let ev = ld2(P.offs_off + b + 1u);
    let e = i64v(ev);
    if (first && (e < start || e > n)) { report_index_error(P.err_op, 0u, ev, u32(n)); }
    if (b + 1u < P.nbags || MODE != 2u) { end = e; }
  }
  start = clamp(start, 0, n);
  end = clamp(end, start, n);
  var acc = 0.0;
  var count = 0u;
  var arg = 0u;
  for (var i = start; i < end; i = i + 1) {
    let iv = ld1(P.idx_off + u32(i));
    if (first) { st4(P.o2b_off + u32(i), vec2<u32>(b, 0u)); }
    if (iv.y != 0u || iv.x >= nw) {
      if (first) { report_index_error(P.err_op, 0u, iv, nw); }
      continue;
    }
    let idx = iv.x;
    if (bitcast<i32>(idx) == pad) { continue; }
    let v = ld0(P.w_off + idx * P.w_stride0 + d * P.w_stride1);
    if (MODE == 2u) {
      if (count == 0u || v > acc) { acc = v; arg = idx; }
    } else if (HAS_PSW) {
      acc = acc + v * psw(P.psw_off + u32(i));
    } else {
      acc = acc + v;
    }
    count = count + 1u;
  }
  if (MODE == 1u && count > 0u) { acc = acc / f32(count); }
  st3(P.out_off + t, acc);
  if (MODE == 2u) { st6(P.mi_off + t, vec2<u32>(arg, 0u)); }
  if (first) {
    st5(P.bs_off + b, vec2<u32>(count, 0u));
    if (MODE == 1u) { st6(P.mi_off + b, vec2<u32>(count, 0u)); }
    if (MODE == 0u) { st6(P.mi_off + b, vec2<u32>(0u, 0u)); }
  }
}
