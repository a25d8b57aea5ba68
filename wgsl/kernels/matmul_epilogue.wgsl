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
  // Four independent partial sums keep four loads in flight: a weight gradient's few outputs may
  // each sum 100+ split-K parts (H200: 74 us per epilogue with one chain in the CNN step).
  var a = vec4<f32>(0.0);
  let e = P.p_off + i;
  var s = 0u;
  for (; s + 4u <= P.splits; s = s + 4u) {
    a = a + vec4<f32>(ld0(e + s * total), ld0(e + (s + 1u) * total), ld0(e + (s + 2u) * total),
                      ld0(e + (s + 3u) * total));
  }
  for (; s < P.splits; s = s + 1u) { a.x = a.x + ld0(e + s * total); }
  var v = P.alpha * ((a.x + a.y) + (a.z + a.w));
  {{C_TERM}}
  st1(P.o_off + b * P.o_sb + m * P.o_sm + n * P.o_sn, v);
}
