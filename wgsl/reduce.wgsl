// Reductions (sum, prod, max, min, any, all, mean). Filled in by ops/reduce.cpp: ACC is the
// accumulator type, load() reads one input element as ACC, combine() folds two, finish() maps the
// row result before it is stored. Two shapes:
//  - WG mode: a workgroup folds one slice (row, part) of the reduced index space; long rows are
//    split over several workgroups into partials that a second dispatch folds (fixed order, so
//    results are deterministic run to run).
//  - THREAD mode: one invocation per output, for short rows or rows whose elements lie far apart.
// Parameters: [0] outputs, [1] row length, [2] parts per row, [3] part length, [4] input offset,
// [5] output offset, [6] scale (f32 bits, for mean), then per output dim: size, in stride, out stride,
// then per reduced dim: size, in stride.

{{BINDINGS}}

{{FUNCTIONS}}

const WG: u32 = {{WG}}u;
const RO: u32 = {{RO}}u;
const RR: u32 = {{RR}}u;

fn out_offsets(row: u32) -> vec2<u32> {  // (input base, output element) of output `row`
  var rem = row;
  var i = prm(4u);
  var o = prm(5u);
  for (var d = 0u; d < RO; d = d + 1u) {
    let size = prm(7u + 3u * d);
    let c = rem % size;
    rem = rem / size;
    i = i + c * prm(8u + 3u * d);
    o = o + c * prm(9u + 3u * d);
  }
  return vec2<u32>(i, o);
}

// The last reduced dim needs no modulo: the common one-dim case is a multiply.
fn red_offset(r: u32) -> u32 {
  var rem = r;
  var i = 0u;
  for (var d = 0u; d + 1u < RR; d = d + 1u) {
    let size = prm(7u + 3u * RO + 2u * d);
    let c = rem % size;
    rem = rem / size;
    i = i + c * prm(8u + 3u * RO + 2u * d);
  }
  return i + rem * prm(8u + 3u * RO + 2u * (RR - 1u));
}

var<workgroup> scratch: array<ACC, WG>;

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
{{BODY}}
}
