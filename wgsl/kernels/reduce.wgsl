// Reductions. Filled in by ops/reduce.cpp: ACC is the accumulator type, conv() turns one input
// element's raw bits (and its index along the row) into an ACC, combine() folds two, pack()/unpack()
// move an ACC through the partials buffer as words, finish() writes a row's outputs.
// Shapes of the kernel (the C++ side picks one):
//  - THREAD: one invocation per output, for short rows or rows whose elements lie far apart.
//  - GROUP: G lanes per (row, part), WG / G of them per workgroup, strided loads.
//  - VEC: contiguous rows; a workgroup folds a slice (row, part) with 16-byte loads, four
//    independent accumulators per lane, and a scalar head/tail for the unaligned ends.
// Long rows are split into parts whose partials a second dispatch folds; every order is fixed, so
// results are deterministic run to run.
// Parameters: n_out (outputs), row_len, parts (per row), part_len (elements, or 16-byte vectors in
// VEC), in_off (elements; packed partials in the second pass), out0_off, out1_off, fa and fb (f32 op
// parameters), da (a float64 parameter, binary64 bits), part_off (partials offset, words), out_dims (per output dim: size, in stride, out0
// stride, out1 stride), red_dims (per reduced dim: size, in stride, two unused words).

const WG: u32 = {{WG}}u;
const G: u32 = {{G}}u;
const RO: u32 = {{RO}}u;
const RR: u32 = {{RR}}u;

fn word(w: u32) -> u32 { return src[w >> 2u][w & 3u]; }
fn inf_bits(b: u32) -> f32 { var v = b; return bitcast<f32>(v); }
// NaN tests on the bits: shader compilers may assume floats are never NaN.
fn nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn fa() -> f32 { return P.fa; }
fn fb() -> f32 { return P.fb; }
fn da() -> vec2<u32> { return P.da; }  // binary64 bits (the float64 rows)

{{FUNCTIONS}}

fn out_offsets(row: u32) -> vec3<u32> {  // (input base, output 0 element, output 1 element)
  var rem = row;
  var o = vec3<u32>(P.in_off, P.out0_off, P.out1_off);
  for (var d = 0u; d < RO; d = d + 1u) {
    let dim = P.out_dims[d];
    let c = rem % dim.x;
    rem = rem / dim.x;
    o = o + c * dim.yzw;
  }
  return o;
}

// The last reduced dim needs no modulo: the common one-dim case is a multiply.
fn red_offset(r: u32) -> u32 {
  var rem = r;
  var i = 0u;
  for (var d = 0u; d + 1u < RR; d = d + 1u) {
    let dim = P.red_dims[d];
    let c = rem % dim.x;
    rem = rem / dim.x;
    i = i + c * dim.y;
  }
  return i + rem * P.red_dims[RR - 1u].y;
}

fn store_partial(slot: u32, v: ACC) {
  let w = pack(v);
  for (var k = 0u; k < NW; k = k + 1u) { dst0[P.part_off + slot * NW + k] = w[k]; }
}

var<workgroup> scratch: array<ACC, WG>;

{{GROUP_REDUCE}}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32{{SG_PARAM}}) {
{{BODY}}
}
