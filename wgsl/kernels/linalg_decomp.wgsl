// Dense factorizations and solves in float32 (csrc/ops/linalg_decomp.cpp), one matrix per workgroup
// (lu, cholesky) or one right-hand-side column per invocation (trsm, lu_solve), in global memory,
// float32 arithmetic. Matrices are addressed through their own strides: element (i, j) of matrix b
// is at off + b * sb + i * sr + j * sc (parameters), so any layout (and out= tensors) works.

//== lu
// LU with partial pivoting in place (LAPACK getrf's result): for each column k the first row of
// largest magnitude is the pivot, rows are swapped across the whole matrix, the column below the
// pivot is divided by it and the trailing block updated. A zero pivot sets info = k + 1 (the
// first one only) and leaves its column unscaled, as LAPACK does. pivots (st1) are 1-based.
// The matrix is read through A_ld / A_st, which ops/linalg_common.h's matrix_access() defines over
// workgroup memory (A_begin loads it, A_end writes it back) when it fits, else over the tensor
// itself; its entry point calls factor(b, lid) in one workgroup per matrix.
// Parameters: batch, m, n, kmin, off, sb, sr, sc; p_off, p_sb, p_s (pivots); i_off, i_sb (info).
// The steps themselves (lu_steps, shared with `solve`) are the section `lu_core`, which goes first.
fn piv_hook(k: u32, p: u32) {}

fn factor(b: u32, lid: u32) {
  A_begin(lid);
  let info = lu_steps(b, lid);
  A_end(lid);
  if (lid == 0u) { st2(P.i_off + b * P.i_sb, i32(info)); }
}

//== lu_core
// The column steps of `lu` over A_ld / A_st (pivots written through st1, and handed to the section's
// piv_hook(k, p)); returns info. The pivot search is wgsl/lib/linalg_wg.wgsl's wargmax.

fn lu_steps(b: u32, lid: u32) -> u32 {
  let m = P.m;
  let n = P.n;
  var info = 0u;
  for (var k = 0u; k < P.kmin; k = k + 1u) {
    // |x| ordered through its bits (NaN compared by bits, not by float comparisons, which
    // backends may fold): a NaN never wins, unless it is the diagonal entry itself (LAPACK's isamax
    // keeps a NaN first element, since nothing compares greater).
    var bv = 0u;
    var bi = k;
    for (var i = k + lid; i < m; i = i + WG) {
      var v = bitcast<u32>(A_ld(i, k)) & 0x7fffffffu;
      if (v > 0x7f800000u) { v = select(0u, 0xffffffffu, i == k); }
      if (v > bv) { bv = v; bi = i; }
    }
    let p = wargmax(lid, bv, bi);
    if (p != k) {
      for (var j = lid; j < n; j = j + WG) {
        let t = A_ld(k, j);
        A_st(k, j, A_ld(p, j));
        A_st(p, j, t);
      }
    }
    if (lid == 0u) {
      st1(P.p_off + b * P.p_sb + k * P.p_s, i32(p + 1u));
      piv_hook(k, p);
    }
    sync();
    let pv = A_ld(k, k);
    if ((bitcast<u32>(pv) & 0x7fffffffu) != 0u) {
      for (var i = k + 1u + lid; i < m; i = i + WG) {
        A_st(i, k, A_ld(i, k) / pv);
      }
    } else if (info == 0u) {
      info = k + 1u;
    }
    sync();
    // the trailing block: g invocations per column (as many as fit, at least 1), each down every
    // g-th row, `per` columns a pass (no division per element; neighbours share a row where g = 1)
    let cols = n - k - 1u;
    let g = max(WG / max(cols, 1u), 1u);
    let per = WG / g;
    if (lid < g * per) {
      for (var j = k + 1u + lid / g; j < n; j = j + per) {
        let ukj = A_ld(k, j);
        for (var i = k + 1u + lid % g; i < m; i = i + g) {
          A_st(i, j, A_ld(i, j) - A_ld(i, k) * ukj);
        }
      }
    }
    sync();
  }
  return info;
}

//== solve
// A X = B for a batch of small square A (n * n <= the workgroup copy, n * nrhs <= 1024), one
// workgroup per system, every step in workgroup memory (_linalg_solve_ex's fused path): A (ld3) is
// loaded into the copy, factored by lu_steps (section lu_core: pivots st1, info st2), the factor
// written to LU (operand 0, A_end), then B (ld4) loaded, permuted by the pivots, solved with the unit
// lower factor and the upper one, one barrier per column, and X stored (st5). The arithmetic of `lu`
// followed by `lu_solve`, except that the back substitution subtracts its terms from the last one.
// Parameters: batch, m = n, n, kmin, nrhs, off, sb, sr, sc (LU); p_off, p_sb, p_s; i_off, i_sb;
// a_off, a_sb, a_sr, a_sc (A); b_off, b_sb, b_sr, b_sc (B); x_off, x_sb, x_sr, x_sc (X).
var<workgroup> s_piv: array<u32, 64>;
var<workgroup> xs: array<f32, {{XS}}>;  // n * nrhs rounded up to a power of two

fn piv_hook(k: u32, p: u32) { s_piv[k] = p; }

fn factor(b: u32, lid: u32) {
  let n = P.n;
  let r = P.nrhs;
  let ab = P.a_off + b * P.a_sb;
  for (var t = lid; t < n * n; t = t + WG) { sm[t] = ld3(ab + (t / n) * P.a_sr + (t % n) * P.a_sc); }
  let bb = P.b_off + b * P.b_sb;
  for (var t = lid; t < n * r; t = t + WG) { xs[t] = ld4(bb + (t / r) * P.b_sr + (t % r) * P.b_sc); }
  workgroupBarrier();
  let info = lu_steps(b, lid);
  A_end(lid);  // also orders the factor's last step before the solves below
  if (lid == 0u) { st2(P.i_off + b * P.i_sb, i32(info)); }
  // row interchanges, in order, each invocation over whole columns of X
  for (var c = lid; c < r; c = c + WG) {
    for (var k = 0u; k < n; k = k + 1u) {
      let p = s_piv[k];
      if (p != k) {
        let t = xs[k * r + c];
        xs[k * r + c] = xs[p * r + c];
        xs[p * r + c] = t;
      }
    }
  }
  workgroupBarrier();
  // L y = P b (unit diagonal): step k subtracts row k's multiple from the rows below
  for (var k = 0u; k + 1u < n; k = k + 1u) {
    let cnt = (n - k - 1u) * r;
    for (var t = lid; t < cnt; t = t + WG) {
      let i = k + 1u + t / r;
      let c = t % r;
      xs[i * r + c] = xs[i * r + c] - sm[i * n + k] * xs[k * r + c];
    }
    workgroupBarrier();
  }
  // U x = y: step k (from the last) divides row k by the diagonal, stores it and updates the rows
  // above with it (each reads row k, which no invocation writes in that step)
  let xb = P.x_off + b * P.x_sb;
  for (var q = 0u; q < n; q = q + 1u) {
    let k = n - 1u - q;
    let d = sm[k * n + k];
    for (var t = lid; t < (k + 1u) * r; t = t + WG) {
      let i = t / r;
      let c = t % r;
      let xk = xs[k * r + c] / d;
      if (i == k) {
        st5(xb + k * P.x_sr + c * P.x_sc, xk);
      } else {
        xs[i * r + c] = xs[i * r + c] - sm[i * n + k] * xk;
      }
    }
    workgroupBarrier();
  }
}

//== cholesky
// Lower Cholesky factor in place (the lower triangle is read; the caller clears the other one).
// Stops at the first column whose diagonal is not positive (or NaN): info = k + 1, as LAPACK potrf.
// Matrix access as in `lu` (workgroup memory: ops/linalg_decomp.cpp sends larger matrices to the
// blocked factorization). Parameters: batch, m = n, n, off, sb, sr, sc;
// i_off, i_sb (info).
var<workgroup> s_d: f32;

fn factor(b: u32, lid: u32) {
  let n = P.n;
  A_begin(lid);
  var info = 0u;
  for (var k = 0u; k < n; k = k + 1u) {
    if (lid == 0u) { s_d = A_ld(k, k); }
    let d = workgroupUniformLoad(&s_d);
    let db = bitcast<u32>(d);
    if (db == 0u || db > 0x7f800000u) {  // not positive, or NaN
      info = k + 1u;
      break;
    }
    let s = sqrt(d);
    if (lid == 0u) { A_st(k, k, s); }
    for (var i = k + 1u + lid; i < n; i = i + WG) {
      A_st(i, k, A_ld(i, k) / s);
    }
    sync();
    // the trailing lower triangle, one column per invocation (neighbours touch neighbouring
    // elements; no division per element)
    for (var j = k + 1u + lid; j < n; j = j + WG) {
      let ljk = A_ld(j, k);
      for (var i = j; i < n; i = i + 1u) {
        A_st(i, j, A_ld(i, j) - A_ld(i, k) * ljk);
      }
    }
    sync();
  }
  A_end(lid);
  if (lid == 0u) { st1(P.i_off + b * P.i_sb, i32(info)); }
}

//== trsm
// A X = B for triangular A (ld0), X in place over B (ld1/st1): one invocation per column of one
// batch entry (the entry point: lib/linalg_columns.wgsl), forward (lower) or backward (upper)
// substitution; division by a zero diagonal gives inf/NaN as LAPACK trsm does. Parameters: n, nrhs,
// count (batch * nrhs), upper, unit; a_off, a_sb, a_sr, a_sc; x_off, x_sb, x_sr, x_sc.
fn column(b: u32, ab: u32, xb: u32) {
  let n = P.n;
  for (var q = 0u; q < n; q = q + 1u) {
    let i = select(q, n - 1u - q, P.upper != 0u);
    var s = ld1(xb + i * P.x_sr);
    if (P.upper != 0u) {
      for (var j = i + 1u; j < n; j = j + 1u) { s = s - ld0(ab + i * P.a_sr + j * P.a_sc) * ld1(xb + j * P.x_sr); }
    } else {
      for (var j = 0u; j < i; j = j + 1u) { s = s - ld0(ab + i * P.a_sr + j * P.a_sc) * ld1(xb + j * P.x_sr); }
    }
    if (P.unit == 0u) { s = s / ld0(ab + i * P.a_sr + i * P.a_sc); }
    st1(xb + i * P.x_sr, s);
  }
}

//== chol_block
// The diagonal step of the blocked Cholesky (ops/linalg_decomp.cpp, cholesky_blocked): one
// workgroup of 256 per n x n block D (n <= 64, st0), which it factors from the lower triangle of S
// (ld3: D itself, or the input where the factorization's first step reads it), D = L L^T (the lower
// triangle written), and whose inverse it writes to Z (st2, n x n, upper triangle zero), so that the
// panel solve P L^-T is a GEMM. The block lives in registers: invocation (ti, tj) = (lid / 16,
// lid % 16) holds rows ti + 16 r, columns tj + 16 c (r, c < 4) of the trailing matrix A (a0..a3, one
// vec4 per row) and of the running inverse B (b0..b3), padded past n by the identity. Step k
// eliminates below the pivot d = A[k][k], A[i][:] -= l_i A[k][:] and B[i][:] -= l_i B[k][:] with
// l_i = A[i][k] / d (i > k; A stays symmetric, so row k of A is column k), which leaves
// B = L_1^-1 for A = L_1 diag(d) L_1^T, so L = L_1 diag(d)^1/2 and L^-1 = diag(d)^-1/2 B. Column k
// of A and row k of B are published through workgroup memory, double-buffered by k's parity, so a
// step costs one barrier. A pivot that is not positive (or NaN) sets info = i_add + k + 1 where
// info is still 0 (the first failure of the whole factorization); the steps go on, as garbage.
// Parameters: batch, n, off, sb, sr, sc (D); i_off, i_sb, i_add (info); z_off, z_sb, z_sr, z_sc (Z);
// s_off, s_sb, s_sr, s_sc (S).
var<workgroup> s_col: array<f32, 128>;  // column k of A, by k's parity
var<workgroup> s_row: array<f32, 128>;  // row k of B, by k's parity
var<workgroup> s_sq: array<f32, 64>;  // sqrt(d_k)

fn blk_ld(base: u32, i: u32, j: u32) -> f32 {
  if (i >= P.n || j >= P.n) { return select(0.0, 1.0, i == j); }
  if (j > i) { return 0.0; }  // the upper triangle is not read
  return ld3(base + i * P.s_sr + j * P.s_sc);
}

fn blk_row(base: u32, i: u32, tj: u32) -> vec4<f32> {
  return vec4<f32>(blk_ld(base, i, tj), blk_ld(base, i, tj + 16u), blk_ld(base, i, tj + 32u), blk_ld(base, i, tj + 48u));
}

fn eye_row(i: u32, tj: u32) -> vec4<f32> {
  return select(vec4<f32>(0.0), vec4<f32>(1.0), vec4<u32>(tj, tj + 16u, tj + 32u, tj + 48u) == vec4<u32>(i));
}

fn pick(v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, r: u32) -> vec4<f32> {
  return select(select(v0, v1, r == 1u), select(v2, v3, r == 3u), r >= 2u);
}

// The component k / 16 of v, as kc (one true lane) picks it: selects rather than a dynamic index,
// which the compiler may place in local memory.
fn comp(v: vec4<f32>, kc: vec4<bool>) -> f32 {
  return select(select(select(v.w, v.z, kc.z), v.y, kc.y), v.x, kc.x);
}

// Publishes row i's entry of column k (kc: k / 16) where this invocation holds column k.
fn put_col(a: vec4<f32>, i: u32, k: u32, at: u32, kc: vec4<bool>) {
  s_col[at + i] = select(0.0, comp(a, kc), i >= k);
}

// Row i's update at step k: elimination, and where this invocation holds column k (own), L's entry.
struct Rows {
  a: vec4<f32>,
  b: vec4<f32>,
}

fn blk_step(a: vec4<f32>, b: vec4<f32>, i: u32, k: u32, at: u32, own: bool, inv_d: f32, s: f32, cj: vec4<f32>,
            rk: vec4<f32>, kc: vec4<bool>) -> Rows {
  let ci = s_col[at + i];
  let l = select(0.0, ci * inv_d, i > k);
  let na = a - l * cj;
  let put = kc & vec4<bool>(own && i >= k);
  return Rows(select(na, vec4<f32>(select(ci / s, s, i == k)), put), b - l * rk);
}

fn blk_store(base: u32, zb: u32, a: vec4<f32>, b: vec4<f32>, i: u32, tj: u32) {
  if (i >= P.n) { return; }
  let si = s_sq[i];
  for (var c = 0u; c < 4u; c = c + 1u) {
    let j = tj + 16u * c;
    if (j < P.n) {
      if (j <= i) { st0(base + i * P.sr + j * P.sc, a[c]); }
      st2(zb + i * P.z_sr + j * P.z_sc, select(0.0, b[c] / si, j <= i));
    }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let bt = linear_id(wid, nwg, 0u, 1u);
  if (bt >= P.batch) { return; }  // a folded grid's spare workgroups (uniform)
  let base = P.off + bt * P.sb;
  let ti = lid / 16u;
  let tj = lid % 16u;
  let sbase = P.s_off + bt * P.s_sb;
  var a0 = blk_row(sbase, ti, tj);
  var a1 = blk_row(sbase, ti + 16u, tj);
  var a2 = blk_row(sbase, ti + 32u, tj);
  var a3 = blk_row(sbase, ti + 48u, tj);
  var b0 = eye_row(ti, tj);
  var b1 = eye_row(ti + 16u, tj);
  var b2 = eye_row(ti + 32u, tj);
  var b3 = eye_row(ti + 48u, tj);
  var info = 0u;
  for (var k = 0u; k < P.n; k = k + 1u) {
    let at = (k & 1u) * 64u;
    let own = tj == k % 16u;
    let kc = vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(k / 16u);
    if (own) {
      put_col(a0, ti, k, at, kc);
      put_col(a1, ti + 16u, k, at, kc);
      put_col(a2, ti + 32u, k, at, kc);
      put_col(a3, ti + 48u, k, at, kc);
    }
    if (ti == k % 16u) {
      let rb = pick(b0, b1, b2, b3, k / 16u);
      s_row[at + tj] = rb.x;
      s_row[at + tj + 16u] = rb.y;
      s_row[at + tj + 32u] = rb.z;
      s_row[at + tj + 48u] = rb.w;
    }
    workgroupBarrier();
    let d = s_col[at + k];
    let db = bitcast<u32>(d);
    if (info == 0u && (db == 0u || db > 0x7f800000u)) { info = k + 1u; }  // not positive, or NaN
    let s = sqrt(d);
    if (lid == 0u) { s_sq[k] = s; }
    let inv_d = 1.0 / d;
    let cj = vec4<f32>(s_col[at + tj], s_col[at + tj + 16u], s_col[at + tj + 32u], s_col[at + tj + 48u]);
    let rk = vec4<f32>(s_row[at + tj], s_row[at + tj + 16u], s_row[at + tj + 32u], s_row[at + tj + 48u]);
    var u = blk_step(a0, b0, ti, k, at, own, inv_d, s, cj, rk, kc);
    a0 = u.a;
    b0 = u.b;
    u = blk_step(a1, b1, ti + 16u, k, at, own, inv_d, s, cj, rk, kc);
    a1 = u.a;
    b1 = u.b;
    u = blk_step(a2, b2, ti + 32u, k, at, own, inv_d, s, cj, rk, kc);
    a2 = u.a;
    b2 = u.b;
    u = blk_step(a3, b3, ti + 48u, k, at, own, inv_d, s, cj, rk, kc);
    a3 = u.a;
    b3 = u.b;
  }
  workgroupBarrier();  // s_sq complete
  let zb = P.z_off + bt * P.z_sb;
  blk_store(base, zb, a0, b0, ti, tj);
  blk_store(base, zb, a1, b1, ti + 16u, tj);
  blk_store(base, zb, a2, b2, ti + 32u, tj);
  blk_store(base, zb, a3, b3, ti + 48u, tj);
  if (lid == 0u && info != 0u) {
    let at = P.i_off + bt * P.i_sb;
    if (ld1(at) == 0) { st1(at, i32(info + P.i_add)); }
  }
}

//== chol_panel
// The panel step of the blocked Cholesky (ops/linalg_decomp.cpp, cholesky_blocked): X := S Z^T with
// Z = L_D^-1 from chol_block (n x n, upper triangle zero, ld1), S the panel (ld3: X itself, or the
// input where the factorization's first step reads it), written to X (st0) and to the workspace W
// (st2) that the trailing GEMMs read. One workgroup of 256 per 32 rows of one batch entry: Z and the
// 32 rows in workgroup memory (the rows' loads all in flight at once, not one per step of the sum),
// each invocation summing 1 row x 8 columns over the row's n entries, neighbouring lanes on
// neighbouring rows; every read of the rows comes before the barrier that precedes every write, so X
// may be S. Z stored by columns (cholesky_blocked passes a transposed view) loads in whole lines.
// Parameters: n, rows, tiles (ceil(rows / 32)), groups (batch * tiles); x_off, x_sb, x_sr, x_sc (X);
// z_off, z_sb, z_sr, z_sc (Z); w_off, w_sb, w_sr, w_sc (W); s_off, s_sb, s_sr, s_sc (S).
var<workgroup> zs: array<vec4<f32>, 1024>;  // Z by columns: zs[m * 16 + j / 4][j % 4] = Z[j][m]
var<workgroup> ps: array<f32, 2048>;  // the workgroup's 32 rows of S (ps[m * 32 + r]), loaded all at once

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nwg, 0u, 1u);
  if (g >= P.groups) { return; }  // a folded grid's spare workgroups (uniform)
  let b = g / P.tiles;
  let n = P.n;
  let zb = P.z_off + b * P.z_sb;
  for (var e = lid; e < n * n; e = e + 256u) {
    let m = e / n;  // neighbouring lanes, neighbouring elements where Z is stored by columns
    let j = e % n;
    zs[m * 16u + j / 4u][j % 4u] = ld1(zb + j * P.z_sr + m * P.z_sc);
  }
  let row0 = (g % P.tiles) * 32u;
  let sb0 = P.s_off + b * P.s_sb;
  for (var e = lid; e < 32u * n; e = e + 256u) {
    let r = e % 32u;  // neighbouring lanes, neighbouring rows: one line per column when S is by columns
    let m = e / 32u;
    ps[e] = select(0.0, ld3(sb0 + min(row0 + r, P.rows - 1u) * P.s_sr + m * P.s_sc), row0 + r < P.rows);
  }
  workgroupBarrier();
  // Invocation (r, cg): row r of the 32 (neighbouring lanes, neighbouring rows: the stores of a
  // matrix by columns are whole lines), columns 8 cg .. 8 cg + 7; columns past n are not stored.
  let r = lid % 32u;
  let cg = lid / 32u;
  var a0 = vec4<f32>(0.0);
  var a1 = vec4<f32>(0.0);
  for (var m = 0u; m < n; m = m + 1u) {
    let p = ps[m * 32u + r];
    a0 = a0 + p * zs[m * 16u + 2u * cg];
    a1 = a1 + p * zs[m * 16u + 2u * cg + 1u];
  }
  storageBarrier();
  workgroupBarrier();
  let i = row0 + r;
  if (i < P.rows) {
    let xb = P.x_off + b * P.x_sb + i * P.x_sr;
    let wb = P.w_off + b * P.w_sb + i * P.w_sr;
    for (var c = 0u; c < 8u; c = c + 1u) {
      let j = 8u * cg + c;
      let v = select(a1[c % 4u], a0[c % 4u], c < 4u);
      if (j < n) {
        st0(xb + j * P.x_sc, v);
        st2(wb + j * P.w_sc, v);
      }
    }
  }
}

//== lu_solve
// A X = B (adjoint 0) or A^T X = B (adjoint 1) from getrf's LU (ld0) and 1-based pivots (ld1),
// X in place over B (ld2/st2), one invocation per column of one batch entry (lib/linalg_columns.wgsl).
// Parameters: n, nrhs, count, adjoint; a_off, a_sb, a_sr, a_sc; p_off, p_sb, p_s;
// x_off, x_sb, x_sr, x_sc.
fn lu(ab: u32, i: u32, j: u32) -> f32 { return ld0(ab + i * P.a_sr + j * P.a_sc); }

fn column(b: u32, ab: u32, xb: u32) {
  let pb = P.p_off + b * P.p_sb;
  let n = P.n;
  if (P.adjoint == 0u) {
    for (var i = 0u; i < n; i = i + 1u) {
      let p = u32(clamp(ld1(pb + i * P.p_s) - 1, 0, i32(n) - 1));
      if (p != i) {
        let t = ld2(xb + i * P.x_sr);
        st2(xb + i * P.x_sr, ld2(xb + p * P.x_sr));
        st2(xb + p * P.x_sr, t);
      }
    }
    for (var i = 0u; i < n; i = i + 1u) {
      var s = ld2(xb + i * P.x_sr);
      for (var j = 0u; j < i; j = j + 1u) { s = s - lu(ab, i, j) * ld2(xb + j * P.x_sr); }
      st2(xb + i * P.x_sr, s);
    }
    for (var q = 0u; q < n; q = q + 1u) {
      let i = n - 1u - q;
      var s = ld2(xb + i * P.x_sr);
      for (var j = i + 1u; j < n; j = j + 1u) { s = s - lu(ab, i, j) * ld2(xb + j * P.x_sr); }
      st2(xb + i * P.x_sr, s / lu(ab, i, i));
    }
  } else {
    for (var i = 0u; i < n; i = i + 1u) {
      var s = ld2(xb + i * P.x_sr);
      for (var j = 0u; j < i; j = j + 1u) { s = s - lu(ab, j, i) * ld2(xb + j * P.x_sr); }
      st2(xb + i * P.x_sr, s / lu(ab, i, i));
    }
    for (var q = 0u; q < n; q = q + 1u) {
      let i = n - 1u - q;
      var s = ld2(xb + i * P.x_sr);
      for (var j = i + 1u; j < n; j = j + 1u) { s = s - lu(ab, j, i) * ld2(xb + j * P.x_sr); }
      st2(xb + i * P.x_sr, s);
    }
    for (var q = 0u; q < n; q = q + 1u) {
      let i = n - 1u - q;
      let p = u32(clamp(ld1(pb + i * P.p_s) - 1, 0, i32(n) - 1));
      if (p != i) {
        let t = ld2(xb + i * P.x_sr);
        st2(xb + i * P.x_sr, ld2(xb + p * P.x_sr));
        st2(xb + p * P.x_sr, t);
      }
    }
  }
}

//== perm
// LAPACK's row interchanges as a permutation (lu_unpack): perm = 0..m-1, then for i < k swap
// perm[i] and perm[pivots[i] - 1], one invocation per batch entry. perm (st1) is contiguous
// (batch, m). Parameters: m, k, batch, p_off, p_sb, p_s.
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let b = linear_id(wid, nwg, lid, 64u);
  if (b >= P.batch) { return; }
  let m = P.m;
  let o = b * m;
  for (var i = 0u; i < m; i = i + 1u) { st1(o + i, i32(i)); }
  for (var i = 0u; i < P.k; i = i + 1u) {
    let p = u32(clamp(ld0(P.p_off + b * P.p_sb + i * P.p_s) - 1, 0, i32(m) - 1));
    if (p != i) {
      let t = ld1(o + i);
      st1(o + i, ld1(o + p));
      st1(o + p, t);
    }
  }
}
