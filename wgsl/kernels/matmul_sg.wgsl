// Half-precision GEMM on the GPU's matrix units (subgroup matrices; ops/linalg.cpp, sg_gemm):
// O[b] = alpha * A[b] @ B[b] (+ beta * C[b]) with f16 operands and f32 accumulation, rounded once
// to f16 (as cuBLAS with f32 compute). A workgroup of WSM x WSN subgroups computes a BM x BN block
// of O; each subgroup owns TM x TN result matrices of SM x SN (the adapter's config, K step SK).
// A and B tiles of depth BK go global -> registers -> workgroup memory (one buffer: the next
// tile's global loads are in flight while the current one is multiplied; a second buffer indexed
// by a loop variable measured half as fast on an H200), zero-filled past the edges, in the
// operand's own orientation (a transposed operand is loaded column-major by the matrix loads
// instead of being copied). The result matrices go through a per-subgroup f32 staging tile to the
// output: f16 words written whole (direct mode), or f32 partial sums into a scratch that
// wgsl/kernels/matmul_epilogue.wgsl finishes (split-K, unaligned outputs); whole tiles of a
// scratch take the matrix stores straight to it (store_run then goes unused).
// Host specialisation: the double-brace placeholders; loads/stores of matrices are emitted by
// the host in the syntax this Dawn accepts.
// Parameters as wgsl/kernels/matmul.wgsl (engines/gemm.cpp's header; o_sn only in partial mode). The
// workgroup's tile: wgsl/lib/matmul_tile.wgsl, put first by the host.

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const SG: u32 = {{SG}}u;        // subgroup size
const WG: u32 = {{WG}}u;        // invocations
const WSN: u32 = {{WSN}}u;      // subgroups along n
const A_STRIDE: u32 = {{A_STRIDE}}u;  // halves per row of an A buffer ([m][k] or [k][m])
const B_STRIDE: u32 = {{B_STRIDE}}u;
const A_BUF: u32 = {{A_BUF}}u;  // halves per A buffer
const B_BUF: u32 = {{B_BUF}}u;
const STAGE: u32 = {{SM}}u * {{SN}}u;  // f32s of one subgroup's staging tile
const PER_LANE: u32 = STAGE / SG;

var<workgroup> As: array<f16, A_BUF>;
var<workgroup> Bs: array<f16, B_BUF>;
var<workgroup> Cs: array<f32, STAGE * {{NS}}u * WG / SG>;  // NS matrices per subgroup

{{FUNCS}}

// One element of A / B (storage element index e) as f16 bits.
fn a_half(e: u32) -> u32 { let w = e >> 1u; return (A[w >> 2u][w & 3u] >> ((e & 1u) * 16u)) & 0xffffu; }
fn b_half(e: u32) -> u32 { let w = e >> 1u; return (Bm[w >> 2u][w & 3u] >> ((e & 1u) * 16u)) & 0xffffu; }

// 8 consecutive elements along an operand's contiguous dimension, packed two per word; zero past
// the limits (p < plim fixed, q..q+7 < qlim moving). vec: one 16-byte load when aligned.
fn load8_a(p: u32, q: u32, plim: u32, qlim: u32, base: u32, sp: u32, sq: u32) -> vec4<u32> {
  if (p >= plim) { return vec4<u32>(0u); }
  let e = base + p * sp;
  {{A_VEC}}
  var w = vec4<u32>(0u);
  for (var c = 0u; c < 8u; c = c + 1u) {
    if (q + c < qlim) { w[c >> 1u] = w[c >> 1u] | (a_half(e + (q + c) * sq) << ((c & 1u) * 16u)); }
  }
  return w;
}
fn load8_b(p: u32, q: u32, plim: u32, qlim: u32, base: u32, sp: u32, sq: u32) -> vec4<u32> {
  if (p >= plim) { return vec4<u32>(0u); }
  let e = base + p * sp;
  {{B_VEC}}
  var w = vec4<u32>(0u);
  for (var c = 0u; c < 8u; c = c + 1u) {
    if (q + c < qlim) { w[c >> 1u] = w[c >> 1u] | (b_half(e + (q + c) * sq) << ((c & 1u) * 16u)); }
  }
  return w;
}

// Writes PER_LANE consecutive results of row m from column n (even) of this lane's staging run.
fn store_run(m: u32, n: u32, s: u32) {
  let M = P.M;
  let N = P.N;
  if (m >= M) { return; }
  let ob = P.o_off + T.b * P.o_sb + m * P.o_sm + T.s * P.part_stride;
  let alpha = P.alpha;
{{STORE_RUN}}
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  // Loop control from uniform values only (workgroupBarrier sits in the loop).
  let tile = tile_of(wid, nwg, BM, BN);
  // A grid folded past 65535 workgroups per dimension has spare workgroups past the last split-K
  // part; they would store zeros over the first tiles (a uniform early return: wid-derived).
  if (tile.k0 >= P.K) { return; }
  T = tile;
  let k0 = tile.k0;
  let k1 = tile.k1;
  let sg = lid / SG;
  let sm = sg / WSN;
  let sn = sg % WSN;

{{ACC_DECL}}

  // Operand tiles: global -> registers (FETCH, at depth kf) -> workgroup memory (STASH, the stores
  // written out inline: through a helper function they ran at three quarters of the speed), unrolled by
  // the host into this function. FETCH takes unchecked 16-byte loads when the whole tile lies
  // inside both operands (uniform per workgroup), the bounds-checked load8_a/b otherwise.
  let abase = P.a_off + tile.b * P.a_sb;
  let bbase = P.b_off + tile.b * P.b_sb;
{{REGS}}
  let ntiles = select(0u, (k1 - k0 + BK - 1u) / BK, k1 > k0);
  var kt = k0;
  if (ntiles > 0u) {
    let kf = kt;
{{FETCH}}
{{STASH}}
  }
  workgroupBarrier();
  for (var t = 0u; t < ntiles; t = t + 1u) {
    let more = t + 1u < ntiles;
    if (more) {
      let kf = kt + BK;
{{FETCH}}
    }
{{COMPUTE}}
    workgroupBarrier();
    if (more) {
{{STASH}}
    }
    workgroupBarrier();
    kt = kt + BK;
  }

  // Results: each subgroup stages NS matrices at a time; each lane writes PER_LANE of each.
  let st = sg * STAGE * {{NS}}u;
  let lane = lid % SG;
  let row = (lane * PER_LANE) / {{SN}}u;
  let col = (lane * PER_LANE) % {{SN}}u;
{{STORE}}
}
