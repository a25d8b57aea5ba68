// Gradient of reflection / replication padding over the last D dims (ops/pad.cpp), gathered: each
// grad_input element sums the grad_output elements its value was copied to (at most 3 per dim for
// reflect, a run of the pad's width at an edge for replicate), in f32, in a fixed order. The host
// fills D, PERDIM (the candidates along one dim) and LOOPS (the nested sums).
// Parameters: n (elements), go_off (grad_output), gi_off (grad_input), both contiguous; per padded
// dim d (innermost first): P_in_size(d), P_out_size(d), P_pad_left(d) (i32).
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  if (i >= P.n) { return; }
  var r = i;
  var obase = 1u;  // elements of one output plane so far (innermost dims)
  var cand: array<vec3<i32>, {{D}}>;  // reflect: up to 3 positions (-1: none); replicate: (first, count, -)
  var ostr: array<u32, {{D}}>;
  for (var d = 0u; d < {{D}}u; d = d + 1u) {
    let n = P_in_size(d);
    let on = P_out_size(d);
    let pl = P_pad_left(d);
    let c = i32(r % n);
    r = r / n;
    ostr[d] = obase;
    obase = obase * on;
{{PERDIM}}
  }
  let ob = P.go_off + r * obase;  // r is now the batch index
  var acc = 0.0;
{{LOOPS}}
  st1(P.gi_off + i, acc);
}
