// The entry point of the per-column kernels (linalg_decomp.wgsl's trsm and lu_solve, linalg_ldl.wgsl's
// solve, linalg_qr.wgsl's apply): one invocation per right-hand-side column of one batch entry, 64
// to a workgroup. It calls the section's column(b, ab, xb): b the batch entry, ab where its matrix
// A starts (element (i, j) at ab + i * a_sr + j * a_sc), xb where its column of X starts (element i
// at xb + i * x_sr). Parameters read here: count (batch * nrhs), nrhs, a_off, a_sb, x_off, x_sb, x_sc.
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nwg, lid, 64u);
  if (g >= P.count) { return; }
  let b = g / P.nrhs;
  column(b, P.a_off + b * P.a_sb, P.x_off + b * P.x_sb + (g % P.nrhs) * P.x_sc);
}
