// Workgroup reductions of the linalg kernels that run one workgroup of WG = 64 invocations per
// matrix (linalg_jacobi.wgsl, linalg_qr.wgsl's geqrf): every invocation passes its value and gets
// the workgroup's result. red and res are their workgroup scratch (orth's argmin uses red too).
const WG: u32 = 64u;
var<workgroup> red: array<f32, 64>;
var<workgroup> res: f32;

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
