// Training-mode batch_norm's per-channel passes (ops/norm.cpp, "batch_norm"): the input is viewed as
// [N, C, HW] with element (n, c, j) at n * sN + c * sC + j * sHW (the spatial dims collapse into one
// stride). A workgroup reduces chunk s of channel c (S chunks of `per` elements of the channel's
// cnt = N * HW), writing one partial; one invocation per channel then folds a channel's
// partials in order and writes the per-channel results. The host numbers the operands and fills the
// lines that depend on which optional operands are bound (the double-brace placeholders).
// Parameters: C, S, per, cnt, HW; the operands' offsets (x_off, g_off, ...) and strides.

const WG: u32 = 256u;

// The chunk a workgroup reduces: (channel, first element, end), for S chunks of `per` elements of
// a channel's cnt.
fn bn_chunk(wid: vec3<u32>, nwg: vec3<u32>, S: u32, per: u32, cnt: u32) -> vec3<u32> {
  let g = linear_id(wid, nwg, 0u, 1u);
  let j0 = (g % S) * per;
  return vec3<u32>(g / S, j0, min(j0 + per, cnt));
}

// Element j of channel c of an operand with offset `off` and strides (sN, sC, sHW).
fn bn_at(off: u32, sN: u32, sC: u32, sHW: u32, HW: u32, c: u32, j: u32) -> u32 {
  let n = j / HW;
  return off + n * sN + c * sC + (j - n * HW) * sHW;
}

// Chan et al.'s combination of two (count, mean, M2) triples.
fn welford_merge(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
  let n = a.x + b.x;
  if (n == 0.0) { return a; }
  let d = b.y - a.y;
  let f = b.x / n;
  return vec3<f32>(n, a.y + d * f, a.z + b.z + d * d * a.x * f);
}

//== stats
// Forward statistics: the (count, mean, M2) of each chunk, by Welford per invocation and Chan's
// combination over the workgroup. Operands: x (0), partials (1, 3 floats a chunk).
var<workgroup> wsum: array<vec3<f32>, WG>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let ch = bn_chunk(wid, nwg, P.S, P.per, P.cnt);
  if (ch.x >= P.C) { return; }  // a folded grid's spare workgroups, past the last channel (uniform)
  var acc = vec3<f32>(0.0);
  for (var j = ch.y + lid; j < ch.z; j = j + WG) {
    let v = ld0(bn_at(P.x_off, P.x_sN, P.x_sC, P.x_sHW, P.HW, ch.x, j));
    acc.x = acc.x + 1.0;
    let d = v - acc.y;
    acc.y = acc.y + d / acc.x;
    acc.z = acc.z + d * (v - acc.y);
  }
  wsum[lid] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { wsum[lid] = welford_merge(wsum[lid], wsum[lid + s]); }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let g = ch.x * P.S + ch.y / P.per;
    let r = wsum[0];
    st1(3u * g, r.x);
    st1(3u * g + 1u, r.y);
    st1(3u * g + 2u, r.z);
  }
}

//== stats_fin
// Per channel: mean, 1 / sqrt(var + eps) (biased var), the running statistics' update and the
// affine's scale and shift (y = x * scale + shift). Operands: partials (0), mean (1), invstd (2),
// scale (3), shift (4), then weight, bias, running mean, running var as bound.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let c = linear_id(wid, nwg, lid, WG);
  if (c >= P.C) { return; }
  var acc = vec3<f32>(ld0(3u * c * P.S), ld0(3u * c * P.S + 1u), ld0(3u * c * P.S + 2u));
  for (var s = 1u; s < P.S; s = s + 1u) {
    let q = 3u * (c * P.S + s);
    acc = welford_merge(acc, vec3<f32>(ld0(q), ld0(q + 1u), ld0(q + 2u)));
  }
  let mean = acc.y;
  let var_ = acc.z / acc.x;
  let invstd = 1.0 / sqrt(var_ + P.eps);
  st1(c, mean);
  st2(c, invstd);
{{AFFINE}}
  st3(c, scale);
  st4(c, shift);
{{RUNNING}}
}

//== grads
// Backward sums: per chunk, sum(g) and sum(g * (x - mean)). Operands: g (0), x (1), mean (2),
// partials (3, 2 floats a chunk).
var<workgroup> wsum: array<vec2<f32>, WG>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let ch = bn_chunk(wid, nwg, P.S, P.per, P.cnt);
  if (ch.x >= P.C) { return; }  // a folded grid's spare workgroups, past the last channel (uniform)
  let m = ld2(P.mean_off + ch.x);
  var acc = vec2<f32>(0.0);
  for (var j = ch.y + lid; j < ch.z; j = j + WG) {
    let gv = ld0(bn_at(P.g_off, P.g_sN, P.g_sC, P.g_sHW, P.HW, ch.x, j));
    let xv = ld1(bn_at(P.x_off, P.x_sN, P.x_sC, P.x_sHW, P.HW, ch.x, j));
    acc = acc + vec2<f32>(gv, gv * (xv - m));
  }
  wsum[lid] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { wsum[lid] = wsum[lid] + wsum[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let g = ch.x * P.S + ch.y / P.per;
    st3(2u * g, wsum[0].x);
    st3(2u * g + 1u, wsum[0].y);
  }
}

//== grads_fin
// Per channel: sum_g, sum_gxh = invstd * sum(g * (x - mean)), and the input gradient's
// coefficients gi = g * ws + x * a + b (ws = w * invstd; rows 0, 1, 2 of coef). Operands:
// partials (0), mean (1), invstd (2), coef (3), then weight, grad_weight, grad_bias as bound.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let c = linear_id(wid, nwg, lid, WG);
  if (c >= P.C) { return; }
  var sg = 0.0;
  var sgx = 0.0;
  for (var s = 0u; s < P.S; s = s + 1u) {
    sg = sg + ld0(2u * (c * P.S + s));
    sgx = sgx + ld0(2u * (c * P.S + s) + 1u);
  }
  let mean = ld1(P.mean_off + c);
  let invstd = ld2(P.invstd_off + c);
  let sum_gxh = sgx * invstd;
{{WEIGHT}}
  let ws = w * invstd;
  let k = sum_gxh / P.n * invstd;
  st3(c, ws);
  st3(P.C + c, -ws * k);
  st3(2u * P.C + c, ws * (mean * k - sg / P.n));
{{PARAM_GRADS}}
}

//== eval_affine
// Evaluation mode: the affine's scale and shift from the running statistics, per channel.
// Operands: running mean (0), running var (1), scale (2), shift (3), then weight, bias as bound.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let c = linear_id(wid, nwg, lid, WG);
  if (c >= P.C) { return; }
  let mean = ld0(P.rm_off + c);
  let invstd = 1.0 / sqrt(ld1(P.rv_off + c) + P.eps);
{{AFFINE}}
  st2(c, scale);
  st3(c, shift);
}
