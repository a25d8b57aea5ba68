// The linalg kernels that run one workgroup of WG = 64 invocations per matrix (lu, cholesky, ldl
// through ops/linalg_common.h's matrix_access(), linalg_jacobi.wgsl, linalg_qr.wgsl's geqrf): their
// entry point, which calls the section's matrix(b, lid) for matrix b, and their workgroup
// reductions, where every invocation passes its value and gets the workgroup's result (red and res
// are their scratch; red_k and red_i wargmax's). Parameters read here: batch.
const WG: u32 = 64u;
var<workgroup> red: array<f32, 64>;
var<workgroup> res: f32;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let b = linear_id(wid, nwg, 0u, 1u);
  if (b >= P.batch) { return; }  // a folded grid's spare workgroups (uniform: one id per workgroup)
  matrix(b, lid);
}

// The workgroup's sum of v (a tree over red: the same order on every device).
fn wsum(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { res = red[0]; }
  return workgroupUniformLoad(&res);
}

// The workgroup's maximum of v.
fn wmax(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = max(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  if (lid == 0u) { res = red[0]; }
  return workgroupUniformLoad(&res);
}

// The workgroup's argmax of (key, index) pairs: the index of the largest key, the smallest index among
// equal keys (a tree over red_k and red_i). The result is read after the tree's last barrier.
var<workgroup> red_k: array<u32, 64>;
var<workgroup> red_i: array<u32, 64>;

fn wargmax(lid: u32, key: u32, idx: u32) -> u32 {
  red_k[lid] = key;
  red_i[lid] = idx;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      let ov = red_k[lid + s];
      let oi = red_i[lid + s];
      if (ov > red_k[lid] || (ov == red_k[lid] && oi < red_i[lid])) {
        red_k[lid] = ov;
        red_i[lid] = oi;
      }
    }
    workgroupBarrier();
  }
  return red_i[0];
}
