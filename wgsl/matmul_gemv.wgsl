// Float matrix-vector products (ops/linalg.cpp): O[b, j] = alpha * sum_k X[b, k] * W[b, j, k]
// (+ beta * C[b, j]), f32 accumulation. mv, dot, vdot and every matmul with M == 1 or N == 1 land
// here. Two shapes of workgroup, chosen by which of W's strides is 1:
//   ROWS: W's rows are contiguous along k. TPR invocations cooperate on a row (vec4 loads along k,
//         a tree reduction in workgroup memory); 256 / TPR rows per workgroup.
//   COLS: W is contiguous along j. 64 invocations each own 4 neighbouring outputs (vec4 loads
//         along j), 4 invocations split k; a final sum of the 4 partial vec4s.
// Long k is split across workgroups (split-K); the parts then go to the epilogue kernel.
// Parameters: 0 J, 1 K, 2 batch, 3 splits, 4 k per split, 5 offX, 6 sXb, 7 sXk, 8 offW, 9 sWb,
//   10 sWj, 11 sWk, 12 offO, 13 sOb, 14 sOj, 15 alpha, 16 workgroups along j, 17 offC, 18 sCb,
//   19 sCj, 20 beta, 21 stride between split-K parts of O.

const TPR: u32 = {{TPR}}u;

{{BINDINGS}}

fn store(b: u32, s: u32, j: u32, v: f32) {
  var o = bitcast<f32>(prm(15u)) * v;
  {{C_TERM}}
  let e = prm(12u) + b * prm(13u) + j * prm(14u) + s * prm(21u);
  O[e >> 2u][e & 3u] = o;
}

var<workgroup> red: array<vec4<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  let J = prm(0u);
  let jg = g % prm(16u);
  let z = g / prm(16u);
  let b = z % prm(2u);
  let s = z / prm(2u);
  let k0 = s * prm(4u);
  let k1 = min(prm(1u), k0 + prm(4u));
  let xb = prm(5u) + b * prm(6u);
  let sXk = prm(7u);
  let wb0 = prm(8u) + b * prm(9u);
  let sWj = prm(10u);
  let sWk = prm(11u);
{{BODY}}
}
