// [N, C, S] -> [N, S, C] for 16-bit elements (ops/conv.cpp, to_positions_channels: a half input
// with its channels last for the matrix units). Each workgroup moves a 64 x 64 tile through
// workgroup memory, so that both the reads (along S) and the writes (along C) are whole words of
// neighbouring invocations: a strided element-wise copy reads one word per element written.
// C, S and both first elements are even (the host checks), so no word straddles two rows.
// Parameters: C, S, tiles_c, tiles_s (64-wide tiles along C and S), in_word, out_word.

var<workgroup> tile: array<u32, 4160>;  // 64 rows of 64 halves, one per word, rows padded to 65

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = transpose_tile(wid, nwg, P.tiles_c, P.tiles_s, 64u);  // (image n, first c, first s)
  let w = lid % 32u;
  for (var i = 0u; i < 8u; i = i + 1u) {  // rows t.y.. of the input: 32 words (64 positions) each
    let cl = lid / 32u + i * 8u;
    let c = t.y + cl;
    let s = t.z + 2u * w;
    var v = 0u;
    if (c < P.C && s < P.S) { v = wd0(P.in_word + (t.x * P.C + c) * (P.S / 2u) + s / 2u); }
    tile[cl * 65u + 2u * w] = v & 0xffffu;
    tile[cl * 65u + 2u * w + 1u] = v >> 16u;
  }
  workgroupBarrier();
  for (var i = 0u; i < 8u; i = i + 1u) {  // rows t.z.. of the output: 32 words (64 channels) each
    let sl = lid / 32u + i * 8u;
    let s = t.z + sl;
    let c = t.y + 2u * w;
    if (s < P.S && c < P.C) {
      wr1(P.out_word + (t.x * P.S + s) * (P.C / 2u) + c / 2u, tile[2u * w * 65u + sl] | (tile[(2u * w + 1u) * 65u + sl] << 16u));
    }
  }
}
