// max_unpool2d / max_unpool3d (ops/unpool.cpp) over contiguous planes: input and indices
// [planes, IV], output [planes, OV]. CPU writes each plane's inputs in order, so with repeated
// indices the last one wins; two passes reproduce that without races: `claim` records, per output
// element, the highest input position (plus one) that targets it (compare-exchange max), then
// `fill` gathers every output element from its winner (zero where none). Indices outside [0, OV)
// are reported through the error words (RuntimeError, as on CPU) and skipped.
// Parameters: n (invocations), in_plane (IV), out_plane (OV), the operands' offsets (*_off);
// claim: err_op (the error op code).
// Each section defines run(t) for element t < P.n; the host adds the entry point main
// (ops/nn_common.h: per_element_main).

//== claim
// Operands: 0 indices (i64), 1 winners (u32 words, atomic).
fn run(t: u32) {
  let v = ld0(P.idx_off + t);
  if (v.y != 0u || v.x >= P.out_plane) {
    report_index_error(P.err_op, 0u, v, P.out_plane);
    return;
  }
  let w = P.win_off + (t / P.in_plane) * P.out_plane + v.x;
  let mine = t % P.in_plane + 1u;
  loop {
    let old = wd1(w);
    if (old >= mine || cas1(w, old, mine)) { break; }
  }
}

//== fill
// Operands: 0 input (raw), 1 winners (u32), 2 output (raw). The host defines V, the raw value type.
fn run(t: u32) {
  let plane = t / P.out_plane;
  let w = ld1(P.win_off + t);
  var v = V();
  if (w != 0u) { v = ld0(P.in_off + plane * P.in_plane + w - 1u); }
  st2(P.out_off + t, v);
}
