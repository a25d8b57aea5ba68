// Float matrix-vector products (ops/linalg.cpp): O[b, j] = alpha * sum_k X[b, k] * W[b, j, k]
// (+ beta * C[b, j]), f32 accumulation. mv, dot, vdot and every matmul with M == 1 or N == 1 land
// here. Two shapes of workgroup, chosen by which of W's strides is 1:
//   ROWS: W's rows are contiguous along k. TPR invocations cooperate on a row (vec4 loads along k,
//         a tree reduction in workgroup memory); 256 / TPR rows per workgroup.
//   COLS: W is contiguous along j. LANES invocations each own 4 neighbouring outputs (vec4 loads
//         along j), 256 / LANES invocations split k; a tree sum of their partial vec4s. LANES is 64,
//         or 16 / 4 (narrow strips, the whole of k in one workgroup) where that makes enough
//         workgroups to go without split-K (engines/gemm.cpp, gemv).
// Long k is split across workgroups (split-K); the parts then go to the epilogue kernel.
// Parameters: J, K, batch, splits, k_split (k per split-K part), groups_j (workgroups along j), per operand
//   x in x, w, o, c: x_off (element offset), x_sb (batch stride), x_s<dim> (stride along j or k),
//   alpha, beta, part_stride (elements between split-K parts of O).

const TPR: u32 = {{TPR}}u;

{{FUNCS}}

fn store(b: u32, s: u32, j: u32, v: f32) {
  var o = P.alpha * v;
  {{C_TERM}}
  let e = P.o_off + b * P.o_sb + j * P.o_sj + s * P.part_stride;
  O[e >> 2u][e & 3u] = o;
}

var<workgroup> red: array<vec4<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nwg, 0u, 1u);
  let J = P.J;
  let jg = g % P.groups_j;
  let z = g / P.groups_j;
  let b = z % P.batch;
  let s = z / P.batch;
  if (s >= P.splits) { return; }  // a folded grid's spare workgroups (uniform: one id per workgroup)
  let k0 = s * P.k_split;
  let k1 = min(P.K, k0 + P.k_split);
  let xb = P.x_off + b * P.x_sb;
  let sXk = P.x_sk;
  let wb0 = P.w_off + b * P.w_sb;
  let sWj = P.w_sj;
  let sWk = P.w_sk;
{{BODY}}
}
