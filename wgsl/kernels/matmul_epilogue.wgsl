// Finishes a float matmul whose products went to an f32 scratch P laid out [split][batch][M][N]
// (split-K parts, or outputs that are not f32): O[b, m, n] = alpha * sum_s P[s, b, m, n]
// (+ beta * C[b, m, n]), converted once to O's dtype (engines/gemm.cpp, through kernel/kernel.h).
// Operands: 0 P, 1 O, 2 C (when beta != 0).
// Parameters: total (batch * M * N), M, N, splits, p_off (P's element offset), c_off, c_sb, c_sm,
//   c_sn and o_off, o_sb, o_sm, o_sn (offsets; strides along batch, m, n), alpha, beta.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  let total = P.total;
  if (i >= total) { return; }
  let n = i % P.N;
  let t = i / P.N;
  let m = t % P.M;
  let b = t / P.M;
  var acc = 0.0;
  for (var s = 0u; s < P.splits; s = s + 1u) { acc = acc + ld0(P.p_off + s * total + i); }
  var v = P.alpha * acc;
  {{C_TERM}}
  st1(P.o_off + b * P.o_sb + m * P.o_sm + n * P.o_sn, v);
}
