// Contiguous [planes, D, H, W] grids of the pool and upsample kernels (wgsl/kernels/pool.wgsl,
// wgsl/kernels/upsample.wgsl; 1d/2d have leading spatial sizes of 1): volumes, positions and their
// flat indices.

fn vol(s: vec3<i32>) -> u32 { return u32(s.x * s.y * s.z); }
fn split3(i: u32, s: vec3<i32>) -> vec3<i32> {
  let u = vec3<u32>(s);
  return vec3<i32>(vec3<u32>(i / (u.y * u.z), (i / u.z) % u.y, i % u.z));
}
fn flat3(p: vec3<i32>, s: vec3<i32>) -> u32 { return u32((p.x * s.y + p.y) * s.z + p.z); }
// Element t of a grid of spatial size s: its plane and its position in the plane.
struct GridPos { plane: u32, p: vec3<i32>, };
fn grid_pos(t: u32, s: vec3<i32>) -> GridPos {
  let v = vol(s);
  return GridPos(t / v, split3(t % v, s));
}
