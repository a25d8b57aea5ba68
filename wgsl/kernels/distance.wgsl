// p-norm distances (ops/distance.cpp): _cdist_forward / _cdist_backward over contiguous
// x1 [B, r1, m], x2 [B, r2, m], and _pdist_forward / _pdist_backward over x [r1, m] (pairs i < j in
// row-major order). Sums run over the columns in order, in f32. The host prepends PK: 0 (p = 0,
// count of differing columns), 1, 2, 3 (p = inf), 4 (any other p, in P.p).
// Parameters: n (invocations), r1 (rows of x1, or of x for pdist), r2 (rows of x2, cdist), m
// (columns), p (f32), the operands' offsets (*_off).
// Each section defines run(t) for element t < P.n; the host adds the entry point main
// (ops/nn_common.h: per_element_main).

fn p_val() -> f32 { return P.p; }

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

// Element t of a [B, r1, inner] tensor as (batch, row, position in the row).
fn row_pos(t: u32, inner: u32) -> vec3<u32> { return vec3<u32>(t / (inner * P.r1), (t / inner) % P.r1, t % inner); }

// The pair index (i < j) of N rows, row-major.
fn pair_index(i: u32, j: u32, n: u32) -> u32 { return i * n - i * (i + 1u) / 2u + (j - i - 1u); }

//== cdist_fwd
// Operands: 0 x1, 1 x2, 2 out [B, r1, r2].
fn run(t: u32) {
  let q = row_pos(t, P.r2);  // (b, i, j)
  let M = P.m;
  let a1 = P.x1_off + (q.x * P.r1 + q.y) * M;
  let a2 = P.x2_off + (q.x * P.r2 + q.z) * M;
  var acc = 0.0;
  for (var k = 0u; k < M; k = k + 1u) { acc = acc_term(acc, ld0(a1 + k) - ld1(a2 + k)); }
  st2(P.out_off + t, finish(acc));
}

//== cdist_bwd
// Operands: 0 grad [B, r1, r2], 1 x1, 2 x2, 3 dist [B, r1, r2], 4 grad_x1 [B, r1, m].
fn run(t: u32) {
  let q = row_pos(t, P.m);  // (b, i, k)
  let R2 = P.r2; let M = P.m;
  let x = ld1(P.x1_off + t);
  var acc = 0.0;
  for (var j = 0u; j < R2; j = j + 1u) {
    let e = (q.x * P.r1 + q.y) * R2 + j;
    acc = acc + ld0(P.grad_off + e) * grad_term(x - ld2(P.x2_off + (q.x * R2 + j) * M + q.z), ld3(P.dist_off + e));
  }
  st4(P.out_off + t, acc);
}

//== pdist_fwd
// Operands: 0 x [N, M] (N = r1, M = m), 1 out [N (N - 1) / 2]. One invocation per row i, over its pairs (i, j > i).
fn run(t: u32) {
  let N = P.r1; let M = P.m;
  let i = t / N;
  let j = t % N;
  if (j <= i) { return; }
  var acc = 0.0;
  for (var k = 0u; k < M; k = k + 1u) { acc = acc_term(acc, ld0(P.x_off + i * M + k) - ld0(P.x_off + j * M + k)); }
  st1(P.out_off + pair_index(i, j, N), finish(acc));
}

//== pdist_bwd
// Operands: 0 grad [pairs], 1 x [N, M], 2 pdist [pairs], 3 grad_x [N, M].
fn run(t: u32) {
  let N = P.r1; let M = P.m;
  let k = t % M;
  let i = t / M;
  let x = ld1(P.x_off + t);
  var acc = 0.0;
  for (var j = 0u; j < N; j = j + 1u) {
    if (j == i) { continue; }
    let q = pair_index(min(i, j), max(i, j), N);
    acc = acc + ld0(P.grad_off + q) * grad_term(x - ld1(P.x_off + j * M + k), ld2(P.dist_off + q));
  }
  st3(P.out_off + t, acc);
}
