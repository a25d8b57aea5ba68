// The float GEMM kernels' workgroup tile (wgsl/kernels/matmul.wgsl, wgsl/kernels/matmul_sg.wgsl; engines/gemm.cpp
// puts this before their source): which batch, split-K part and BM x BN block of O a workgroup
// computes, and its k range [k0, k1).

struct Tile { b: u32, m0: u32, n0: u32, k0: u32, k1: u32, s: u32, };
var<private> T: Tile;

// Workgroup order of gemm_tile (wgsl/lib/common.wgsl) over batch * splits * tiles_m * tiles_n; each
// split-K part covers k_split values of k.
fn tile_of(wid: vec3<u32>, nwg: vec3<u32>, bm: u32, bn: u32) -> Tile {
  let zt = gemm_tile(wid, nwg, P.tiles_m, P.tiles_n);
  var t: Tile;
  t.b = zt.x % P.batch;
  t.s = zt.x / P.batch;
  t.m0 = zt.y * bm;
  t.n0 = zt.z * bn;
  t.k0 = t.s * P.k_split;
  t.k1 = min(P.K, t.k0 + P.k_split);
  return t;
}
