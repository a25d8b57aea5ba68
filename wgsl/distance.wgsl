// p-norm distances (ops/distance.cpp): _cdist_forward / _cdist_backward over contiguous
// x1 [B, P, M], x2 [B, R, M], and _pdist_forward / _pdist_backward over x [N, M] (pairs i < j in
// row-major order). Sums run over the columns in order, in f32. The host prepends PK: 0 (p = 0,
// count of differing columns), 1, 2, 3 (p = inf), 4 (any other p, in P).
// Parameters: 0 count, 1 P (or N), 2 R, 3 M, 4 p (f32 bits), 5.. operand offsets.

fn p_val() -> f32 { return bitcast<f32>(prm(4u)); }

fn acc_term(acc: f32, d: f32) -> f32 {
  let a = abs(d);
  if (PK == 0u) { return acc + select(0.0, 1.0, d != 0.0); }
  if (PK == 1u) { return acc + a; }
  if (PK == 2u) { return acc + a * a; }
  if (PK == 3u) { return max(acc, a); }
  if (a == 0.0) { return acc; }
  return acc + pow(a, p_val());
}

fn finish(acc: f32) -> f32 {
  if (PK == 2u) { return sqrt(acc); }
  if (PK == 4u && acc > 0.0) { return pow(acc, 1.0 / p_val()); }
  return acc;
}

// d dist / d diff for one column, given the distance.
fn grad_term(d: f32, dist: f32) -> f32 {
  if (PK == 0u || dist == 0.0) { return 0.0; }
  if (PK == 1u) { return sign(d); }
  if (PK == 2u) { return d / dist; }
  if (PK == 3u) { return select(0.0, sign(d), abs(d) == dist); }
  let p = p_val();
  if (d == 0.0) { return 0.0; }
  return sign(d) * pow(abs(d), p - 1.0) / pow(dist, p - 1.0);
}

// The pair index (i < j) of N rows, row-major.
fn pair_index(i: u32, j: u32, n: u32) -> u32 { return i * n - i * (i + 1u) / 2u + (j - i - 1u); }

//== cdist_fwd
// Operands: 0 x1, 1 x2, 2 out [B, P, R].
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let P = prm(1u); let R = prm(2u); let M = prm(3u);
  let j = t % R;
  let i = (t / R) % P;
  let b = t / (R * P);
  let a1 = prm(5u) + (b * P + i) * M;
  let a2 = prm(6u) + (b * R + j) * M;
  var acc = 0.0;
  for (var k = 0u; k < M; k = k + 1u) { acc = acc_term(acc, ld0(a1 + k) - ld1(a2 + k)); }
  st2(prm(7u) + t, finish(acc));
}

//== cdist_bwd
// Operands: 0 grad [B, P, R], 1 x1, 2 x2, 3 dist [B, P, R], 4 grad_x1 [B, P, M].
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let P = prm(1u); let R = prm(2u); let M = prm(3u);
  let k = t % M;
  let i = (t / M) % P;
  let b = t / (M * P);
  let x = ld1(prm(6u) + t);
  var acc = 0.0;
  for (var j = 0u; j < R; j = j + 1u) {
    let e = (b * P + i) * R + j;
    acc = acc + ld0(prm(5u) + e) * grad_term(x - ld2(prm(7u) + (b * R + j) * M + k), ld3(prm(8u) + e));
  }
  st4(prm(9u) + t, acc);
}

//== pdist_fwd
// Operands: 0 x [N, M], 1 out [N (N - 1) / 2]. One invocation per row i, over its pairs (i, j > i).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let N = prm(1u); let M = prm(3u);
  let i = t / N;
  let j = t % N;
  if (j <= i) { return; }
  var acc = 0.0;
  for (var k = 0u; k < M; k = k + 1u) { acc = acc_term(acc, ld0(prm(5u) + i * M + k) - ld0(prm(5u) + j * M + k)); }
  st1(prm(6u) + pair_index(i, j, N), finish(acc));
}

//== pdist_bwd
// Operands: 0 grad [pairs], 1 x [N, M], 2 pdist [pairs], 3 grad_x [N, M].
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let N = prm(1u); let M = prm(3u);
  let k = t % M;
  let i = t / M;
  let x = ld1(prm(6u) + t);
  var acc = 0.0;
  for (var j = 0u; j < N; j = j + 1u) {
    if (j == i) { continue; }
    let q = pair_index(min(i, j), max(i, j), N);
    acc = acc + ld0(prm(5u) + q) * grad_term(x - ld1(prm(6u) + j * M + k), ld2(prm(7u) + q));
  }
  st3(prm(8u) + t, acc);
}
