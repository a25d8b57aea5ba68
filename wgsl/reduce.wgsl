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
// Parameters: [0] outputs, [1] row length, [2] parts per row, [3] part length (elements, or 16-byte
// vectors in VEC), [4] input offset (elements; packed partials in the second pass), [5] output 0
// offset, [6] output 1 offset, [7] [8] f32 op parameters, [9] partials offset (words), then per
// output dim: size, in stride, out0 stride, out1 stride; then per reduced dim: size, in stride.

{{BINDINGS}}

const WG: u32 = {{WG}}u;
const G: u32 = {{G}}u;
const RO: u32 = {{RO}}u;
const RR: u32 = {{RR}}u;

fn word(w: u32) -> u32 { return src[w >> 2u][w & 3u]; }
fn inf_bits(b: u32) -> f32 { var v = b; return bitcast<f32>(v); }
// NaN tests on the bits: shader compilers may assume floats are never NaN.
fn nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn fa() -> f32 { return bitcast<f32>(prm(7u)); }
fn fb() -> f32 { return bitcast<f32>(prm(8u)); }

{{FUNCTIONS}}

fn out_offsets(row: u32) -> vec3<u32> {  // (input base, output 0 element, output 1 element)
  var rem = row;
  var o = vec3<u32>(prm(4u), prm(5u), prm(6u));
  for (var d = 0u; d < RO; d = d + 1u) {
    let size = prm(10u + 4u * d);
    let c = rem % size;
    rem = rem / size;
    o = o + c * vec3<u32>(prm(11u + 4u * d), prm(12u + 4u * d), prm(13u + 4u * d));
  }
  return o;
}

// The last reduced dim needs no modulo: the common one-dim case is a multiply.
fn red_offset(r: u32) -> u32 {
  var rem = r;
  var i = 0u;
  for (var d = 0u; d + 1u < RR; d = d + 1u) {
    let size = prm(10u + 4u * RO + 2u * d);
    let c = rem % size;
    rem = rem / size;
    i = i + c * prm(11u + 4u * RO + 2u * d);
  }
  return i + rem * prm(11u + 4u * RO + 2u * (RR - 1u));
}

fn store_partial(slot: u32, v: ACC) {
  let w = pack(v);
  for (var k = 0u; k < NW; k = k + 1u) { dst0[prm(9u) + slot * NW + k] = w[k]; }
}

var<workgroup> scratch: array<ACC, WG>;

{{GROUP_REDUCE}}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32{{SG_PARAM}}) {
{{BODY}}
}
