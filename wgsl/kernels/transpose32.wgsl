// Batched transpose of 32-bit elements (ops/copy.cpp, device_copy: a contiguous destination whose
// source, its dimensions merged where they can be, is [batch, P, Q] with P contiguous):
// out[(b * P + p) * Q + q] = in[b * sB + q * sQ + p]. Each workgroup moves a 32 x 32 tile through
// workgroup memory, so that the reads run along p and the writes along q, both over neighbouring
// invocations (a strided element-wise copy reads one scattered word per element written).
// Parameters: B, P, Q, sQ, sB (source strides, elements), tiles_p, tiles_q (32-wide tiles), in_off,
// out_off (element offsets).

var<workgroup> tile: array<u32, 1056>;  // 32 rows of 32 words, rows padded to 33

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = transpose_tile(wid, nwg, P.tiles_q, P.tiles_p, 32u);  // (batch b, first q, first p)
  if (t.x >= P.B) { return; }  // a folded grid's spare workgroups (uniform: one id per workgroup)
  let x = lid % 32u;
  for (var i = 0u; i < 4u; i = i + 1u) {  // source rows t.y.., 32 consecutive p each
    let r = lid / 32u + i * 8u;
    if (t.y + r < P.Q && t.z + x < P.P) { tile[r * 33u + x] = wd0(P.in_off + t.x * P.sB + (t.y + r) * P.sQ + t.z + x); }
  }
  workgroupBarrier();
  for (var i = 0u; i < 4u; i = i + 1u) {  // destination rows t.z.., 32 consecutive q each
    let r = lid / 32u + i * 8u;
    if (t.z + r < P.P && t.y + x < P.Q) { wr1(P.out_off + (t.x * P.P + t.z + r) * P.Q + t.y + x, tile[x * 33u + r]); }
  }
}
