// max_unpool2d / max_unpool3d (ops/unpool.cpp) over contiguous planes: input and indices
// [planes, IV], output [planes, OV]. CPU writes each plane's inputs in order, so with repeated
// indices the last one wins; two passes reproduce that without races: `claim` records, per output
// element, the highest input position (plus one) that targets it (compare-exchange max), then
// `fill` gathers every output element from its winner (zero where none). Indices outside [0, OV)
// are reported through the error words (RuntimeError, as on CPU) and skipped.
// Parameters: 0 count, 1 IV, 2 OV, 3 offset of operand 0, 4 of operand 1, 5 of operand 2, 6 error code.

//== claim
// Operands: 0 indices (i64), 1 winners (u32 words, atomic).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let IV = prm(1u);
  let OV = prm(2u);
  let v = ld0(prm(3u) + t);
  if (v.y != 0u || v.x >= OV) {
    report_index_error(prm(6u), 0u, v, OV);
    return;
  }
  let w = prm(4u) + (t / IV) * OV + v.x;
  let mine = t % IV + 1u;
  loop {
    let old = wd1(w);
    if (old >= mine || cas1(w, old, mine)) { break; }
  }
}

//== fill
// Operands: 0 input (raw), 1 winners (u32), 2 output (raw). The host defines V, the raw value type.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let IV = prm(1u);
  let OV = prm(2u);
  let plane = t / OV;
  let w = ld1(prm(4u) + t);
  var v = V();
  if (w != 0u) { v = ld0(prm(3u) + plane * IV + w - 1u); }
  st2(prm(5u) + t, v);
}
