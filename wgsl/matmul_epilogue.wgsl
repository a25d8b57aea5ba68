// Finishes a float matmul whose products went to an f32 scratch P laid out [split][batch][M][N]
// (split-K parts, or outputs that are not f32): O[b, m, n] = alpha * sum_s P[s, b, m, n]
// (+ beta * C[b, m, n]), converted once to O's dtype (ops/linalg.cpp, through ops/kernel.h).
// Operands: 0 P, 1 O, 2 C (when beta != 0).
// Parameters: 0 total (batch*M*N), 1 M, 2 N, 3 splits, 4 offP, 5 offC, 6 sCb, 7 sCm, 8 sCn,
//   9 offO, 10 sOb, 11 sOm, 12 sOn, 13 alpha, 14 beta.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  let total = prm(0u);
  if (i >= total) { return; }
  let n = i % prm(2u);
  let t = i / prm(2u);
  let m = t % prm(1u);
  let b = t / prm(1u);
  var acc = 0.0;
  for (var s = 0u; s < prm(3u); s = s + 1u) { acc = acc + ld0(prm(4u) + s * total + i); }
  var v = bitcast<f32>(prm(13u)) * acc;
  {{C_TERM}}
  st1(prm(9u) + b * prm(10u) + m * prm(11u) + n * prm(12u), v);
}
