// Finishes a float matmul whose products went to an f32 scratch P laid out [split][batch][M][N]
// (split-K parts, or outputs that are not f32): O[b, m, n] = alpha * sum_s P[s, b, m, n]
// (+ beta * C[b, m, n]), converted once to O's dtype (engines/gemm.cpp, through kernel/kernel.h).
// Operands: 0 P, 1 O, 2 C (when beta != 0).
// Parameters: total (batch * M * N), M, N, splits, p_off (P's element offset), c_off, c_sb, c_sm,
//   c_sn and o_off, o_sb, o_sm, o_sn (offsets; strides along batch, m, n), alpha, beta.

const LANES: u32 = {{LANES}}u;  // invocations per output (1, 4 or 8; engines/gemm.cpp)
var<workgroup> lane_sums: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gi = linear_id(wid, nwg, lid, 256u);
  let i = gi / LANES;
  let lane = gi % LANES;
  let total = P.total;
  // Four independent partial sums keep four loads in flight: a weight gradient's few outputs may
  // each sum 100+ split-K parts (H200: 74 us per epilogue with one chain in the CNN step). Lane l
  // of an output takes parts l, l + LANES, ...
  var a = vec4<f32>(0.0);
  if (i < total) {
    let e = P.p_off + i;
    var s = lane;
    for (; s + 3u * LANES < P.splits; s = s + 4u * LANES) {
      a = a + vec4<f32>(ld0(e + s * total), ld0(e + (s + LANES) * total), ld0(e + (s + 2u * LANES) * total),
                        ld0(e + (s + 3u * LANES) * total));
    }
    for (; s < P.splits; s = s + LANES) { a.x = a.x + ld0(e + s * total); }
  }
  var sum = (a.x + a.y) + (a.z + a.w);
  if (LANES > 1u) {
    // The lanes of an output are neighbours in one workgroup; the first adds the others' sums.
    lane_sums[lid] = sum;
    workgroupBarrier();
    if (lane != 0u) { return; }
    for (var l = 1u; l < LANES; l = l + 1u) { sum = sum + lane_sums[lid + l]; }
  }
  if (i >= total) { return; }
  let n = i % P.N;
  let t = i / P.N;
  let m = t % P.M;
  let b = t / P.M;
  var v = P.alpha * sum;
  {{C_TERM}}
  st1(P.o_off + b * P.o_sb + m * P.o_sm + n * P.o_sn, v);
}
