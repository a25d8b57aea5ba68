// Batched transpose of 16-bit elements (ops/copy.cpp, launch_transpose: copies of transposed half
// tensors, among them ops/conv.cpp's channels-last half input for the matrix units):
// out[(b * P + p) * Q + q] = in[b * sB + q * sQ + p]. Each workgroup moves a 64 x 64 tile through
// workgroup memory, so that both the reads (along p) and the writes (along q) are whole words of
// neighbouring invocations: a strided element-wise copy reads one word per element written.
// P, Q, sQ, sB and both offsets are even (the host checks), so no word straddles two rows.
// Parameters: B, P, Q, sQ, sB (source strides, elements), tiles_p, tiles_q (64-wide tiles), in_off,
// out_off (element offsets).

var<workgroup> tile: array<u32, 4160>;  // 64 rows (q) of 64 halves (p), one per word, rows padded to 65

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = transpose_tile(wid, nwg, P.tiles_q, P.tiles_p, 64u);  // (batch b, first q, first p)
  if (t.x >= P.B) { return; }  // a folded grid's spare workgroups (uniform: one id per workgroup)
  let w = lid % 32u;
  for (var i = 0u; i < 8u; i = i + 1u) {  // source rows t.y..: 32 words (64 values of p) each
    let ql = lid / 32u + i * 8u;
    let q = t.y + ql;
    let p = t.z + 2u * w;
    var v = 0u;
    if (q < P.Q && p < P.P) { v = wd0((P.in_off + t.x * P.sB + q * P.sQ + p) / 2u); }
    tile[ql * 65u + 2u * w] = v & 0xffffu;
    tile[ql * 65u + 2u * w + 1u] = v >> 16u;
  }
  workgroupBarrier();
  for (var i = 0u; i < 8u; i = i + 1u) {  // destination rows t.z..: 32 words (64 values of q) each
    let pl = lid / 32u + i * 8u;
    let p = t.z + pl;
    let q = t.y + 2u * w;
    if (p < P.P && q < P.Q) {
      wr1((P.out_off + (t.x * P.P + p) * P.Q + q) / 2u, tile[2u * w * 65u + pl] | (tile[(2u * w + 1u) * 65u + pl] << 16u));
    }
  }
}
