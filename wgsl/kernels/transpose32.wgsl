// Batched transpose of 32-bit elements (ops/copy.cpp, device_copy: a contiguous destination whose
// source, its dimensions merged where they can be, is [batch, P, Q] with P contiguous):
// out[(b * P + p) * Q + q] = in[b * sB + q * sQ + p]. Each workgroup moves a 32 x 32 tile through
// workgroup memory, so that the reads run along p and the writes along q, both over neighbouring
// invocations (a strided element-wise copy reads one scattered word per element written).
// Parameters: P, Q, sQ, sB (source strides, elements), tiles_p, tiles_q (32-wide tiles), in_off,
// out_off (element offsets).

var<workgroup> tile: array<u32, 1056>;  // 32 rows of 32 words, rows padded to 33

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nwg, 0u, 1u);
  let per = P.tiles_p * P.tiles_q;
  let b = g / per;
  let q0 = ((g % per) / P.tiles_p) * 32u;
  let p0 = ((g % per) % P.tiles_p) * 32u;
  let x = lid % 32u;
  for (var i = 0u; i < 4u; i = i + 1u) {  // source rows q0.., 32 consecutive p each
    let r = lid / 32u + i * 8u;
    if (q0 + r < P.Q && p0 + x < P.P) { tile[r * 33u + x] = wd0(P.in_off + b * P.sB + (q0 + r) * P.sQ + p0 + x); }
  }
  workgroupBarrier();
  for (var i = 0u; i < 4u; i = i + 1u) {  // destination rows p0.., 32 consecutive q each
    let r = lid / 32u + i * 8u;
    if (p0 + r < P.P && q0 + x < P.Q) { wr1(P.out_off + (b * P.P + p0 + r) * P.Q + q0 + x, tile[x * 33u + r]); }
  }
}
