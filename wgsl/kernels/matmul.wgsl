// Register-tiled float GEMM (ops/linalg.cpp): O[b] = alpha * A[b] @ B[b] (+ beta * C[b]), computed
// in f32. A workgroup computes a BM x BN block of O; each of its (BM/TM)*(BN/TN) invocations keeps a
// TM x TN micro-tile in registers (TM/4 x TN/4 groups of 4x4, spaced so that neighbouring
// invocations read neighbouring vec4s of shared memory). A and B tiles of depth BK are staged in
// workgroup memory (double-buffered, the next tile prefetched into registers while the current one
// is multiplied). Global loads move units of 4 elements along A's and B's contiguous dimension, as
// one vec4 load when the operand is f32 and aligned. Any M, N, K, strides and storage offsets; the
// batch (and split-K part) is decoded from the workgroup id (wgsl/lib/matmul_tile.wgsl, put first by
// the host). Host specialisation: the double-brace placeholders.
//
// The depth loop over BK and the micro-tile products are unrolled by the host.
// Parameters: engines/gemm.cpp's header (M, N, K, batch, tiles_m, tiles_n, k_split, a_/b_/c_/o_
// offsets and strides, alpha, beta, part_stride: elements between split-K parts of O, 0 when direct).

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const TX: u32 = {{TX}}u;   // invocations along n (BN / TN)
const TY: u32 = {{TY}}u;   // invocations along m (BM / TM)
const WG: u32 = {{WG}}u;
const A_TILE: u32 = BK * BM / 4u;   // vec4s of one A buffer: [k][m/4]
const B_TILE: u32 = BK * BN / 4u;   // vec4s of one B buffer: [k][n/4]
const A_UNITS: u32 = BM * BK / 4u;  // 4-element load units per tile
const B_UNITS: u32 = BN * BK / 4u;
const A_PER: u32 = (A_UNITS + WG - 1u) / WG;
const B_PER: u32 = (B_UNITS + WG - 1u) / WG;

var<workgroup> As: array<vec4<f32>, 2u * A_TILE>;
var<workgroup> Bs: array<vec4<f32>, 2u * B_TILE>;

{{FUNCS}}

// Unit u of the A tile at depth k (orientation {{A_ORIENT}}): its (m, k) start.
fn a_unit(u: u32) -> vec2<u32> {
  {{A_UNIT}}
}
fn b_unit(u: u32) -> vec2<u32> {
  {{B_UNIT}}
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let M = P.M;
  // Loop control from uniform values only (workgroupBarrier sits in the loop).
  let tile = tile_of(wid, nwg, BM, BN);
  // A grid folded past 65535 workgroups per dimension has spare workgroups past the last split-K
  // part; they would store zeros over the first tiles (a uniform early return: wid-derived).
  if (tile.k0 >= P.K) { return; }
  T = tile;
  let k0 = tile.k0;
  let k1 = tile.k1;
  let tx = lid % TX;
  let ty = lid / TX;

{{ACC_DECL}}

  // Global -> registers (FETCH: the tile at depth kf into ra_i / rb_i) and registers -> workgroup
  // memory (STASH: into the buffer at ab / bb), unrolled by the host over each invocation's A_PER /
  // B_PER units and written out here: as helper functions writing module-scope registers and
  // workgroup memory they cost the half GEMM (wgsl/kernels/matmul_sg.wgsl) a quarter of its speed.
{{REGS}}
  var kt = k0;
  if (k0 < k1) {
    let kf = kt;
{{FETCH}}
    let ab = 0u;
    let bb = 0u;
{{STASH}}
  }
  workgroupBarrier();
  var buf = 0u;
  let ntiles = select(0u, (k1 - k0 + BK - 1u) / BK, k1 > k0);
  for (var t = 0u; t < ntiles; t = t + 1u) {
    let more = t + 1u < ntiles;
    if (more) {
      let kf = kt + BK;
{{FETCH}}
    }
    {
      let ab = buf * A_TILE + ty;
      let bb = buf * B_TILE + tx;
{{COMPUTE}}
    }
    if (more) {
      let ab = (1u - buf) * A_TILE;
      let bb = (1u - buf) * B_TILE;
{{STASH}}
    }
    workgroupBarrier();
    buf = 1u - buf;
    kt = kt + BK;
  }

{{STORE}}
}
