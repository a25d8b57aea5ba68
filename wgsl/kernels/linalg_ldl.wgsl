// Symmetric indefinite factorization and solve in float32 (csrc/ops/linalg_ldl.cpp): LAPACK's
// Bunch-Kaufman ssytf2 (lower) and ssytrs, so the pivots, 1x1/2x2 blocks and LD are CPU's. Matrices
// are addressed through their strides: element (i, j) of matrix b at off + b * sb + i * sr + j * sc.

//== factor
// One workgroup per matrix. Invocation 0 picks the pivot of step k (alpha = (1 + sqrt(17)) / 8,
// first index of the largest magnitude as isamax), the workgroup swaps and updates the lower
// trailing block in parallel (each invocation owns columns). A zero column (or a NaN diagonal)
// sets info = k + 1 (the first only) and is left as it is, as ssytf2. Pivots (st1) are 1-based,
// negative for both rows of a 2x2 block. Matrix access (A_ld / A_st, A_begin / A_end, sync) and
// entry point (it calls factor(b, lid)) as linalg_decomp's lu. Parameters: batch, n (and m = n in
// workgroup memory), off, sb, sr, sc; p_off, p_sb, p_s (pivots); i_off, i_sb (info).
var<workgroup> s_kp: u32;
var<workgroup> s_step: u32;  // 1 or 2; 0: a zero column, no update

const ALPHA: f32 = 0.6403882032022076;

// Invocation 0's choice at step k: (kp, kstep), kstep 0 for a zero column.
fn choose(k: u32, n: u32) -> vec2<u32> {
  let absakk = abs(A_ld(k, k));
  var imax = k;
  var colmax = 0.0;
  if (k + 1u < n) {
    imax = k + 1u;
    colmax = abs(A_ld(k + 1u, k));
    for (var i = k + 2u; i < n; i = i + 1u) {
      let v = abs(A_ld(i, k));
      if (v > colmax) { colmax = v; imax = i; }
    }
  }
  if (max(absakk, colmax) == 0.0 || absakk != absakk) { return vec2<u32>(k, 0u); }
  if (absakk >= ALPHA * colmax) { return vec2<u32>(k, 1u); }
  // the largest off-diagonal magnitude in row/column imax of the trailing block
  var rowmax = abs(A_ld(imax, k));
  for (var j = k + 1u; j < imax; j = j + 1u) { rowmax = max(rowmax, abs(A_ld(imax, j))); }
  if (imax + 1u < n) {
    var r2 = abs(A_ld(imax + 1u, imax));
    for (var i = imax + 2u; i < n; i = i + 1u) {
      let v = abs(A_ld(i, imax));
      if (v > r2) { r2 = v; }
    }
    rowmax = max(rowmax, r2);
  }
  if (absakk >= ALPHA * colmax * (colmax / rowmax)) { return vec2<u32>(k, 1u); }
  if (abs(A_ld(imax, imax)) >= ALPHA * rowmax) { return vec2<u32>(imax, 1u); }
  return vec2<u32>(imax, 2u);
}

fn factor(b: u32, lid: u32) {
  let n = P.n;
  let pb = P.p_off + b * P.p_sb;
  A_begin(lid);
  var info = 0u;
  var k = 0u;
  loop {
    if (k >= n) { break; }
    if (lid == 0u) {
      let c = choose(k, n);
      s_kp = c.x;
      s_step = c.y;
    }
    let kp = workgroupUniformLoad(&s_kp);
    let step = workgroupUniformLoad(&s_step);
    if (step == 0u) {
      if (info == 0u) { info = k + 1u; }
      if (lid == 0u) { st1(pb + k * P.p_s, i32(k + 1u)); }
      k = k + 1u;
      continue;
    }
    let kk = k + step - 1u;
    if (kp != kk) {
      // interchange rows and columns kk and kp of the trailing block (lower triangle)
      for (var i = kp + 1u + lid; i < n; i = i + WG) {
        let t = A_ld(i, kk);
        A_st(i, kk, A_ld(i, kp));
        A_st(i, kp, t);
      }
      for (var j = kk + 1u + lid; j < kp; j = j + WG) {
        let t = A_ld(j, kk);
        A_st(j, kk, A_ld(kp, j));
        A_st(kp, j, t);
      }
      if (lid == 0u) {
        let t = A_ld(kk, kk);
        A_st(kk, kk, A_ld(kp, kp));
        A_st(kp, kp, t);
        if (step == 2u) {
          let u = A_ld(k + 1u, k);
          A_st(k + 1u, k, A_ld(kp, k));
          A_st(kp, k, u);
        }
      }
      sync();
    }
    if (step == 1u) {
      // A22 -= x x^T / d (ssyr, lower), then x /= d
      let d11 = 1.0 / A_ld(k, k);
      for (var j = k + 1u + lid; j < n; j = j + WG) {
        let xj = A_ld(j, k);
        if (xj != 0.0) {
          let t = -d11 * xj;
          for (var i = j; i < n; i = i + 1u) { A_st(i, j, A_ld(i, j) + A_ld(i, k) * t); }
        }
      }
      sync();
      for (var i = k + 1u + lid; i < n; i = i + WG) { A_st(i, k, A_ld(i, k) * d11); }
      sync();
      if (lid == 0u) { st1(pb + k * P.p_s, i32(kp + 1u)); }
    } else {
      if (k + 2u < n) {
        let d21 = A_ld(k + 1u, k);
        let d11 = A_ld(k + 1u, k + 1u) / d21;
        let d22 = A_ld(k, k) / d21;
        let t = 1.0 / (d11 * d22 - 1.0);
        let e21 = t / d21;
        for (var j = k + 2u + lid; j < n; j = j + WG) {
          let wk = e21 * (d11 * A_ld(j, k) - A_ld(j, k + 1u));
          let wkp1 = e21 * (d22 * A_ld(j, k + 1u) - A_ld(j, k));
          for (var i = j; i < n; i = i + 1u) {
            A_st(i, j, A_ld(i, j) - A_ld(i, k) * wk - A_ld(i, k + 1u) * wkp1);
          }
        }
        sync();
        // columns k, k+1 below the block become L's (they were read above; written only now)
        for (var j = k + 2u + lid; j < n; j = j + WG) {
          let wk = e21 * (d11 * A_ld(j, k) - A_ld(j, k + 1u));
          let wkp1 = e21 * (d22 * A_ld(j, k + 1u) - A_ld(j, k));
          A_st(j, k, wk);
          A_st(j, k + 1u, wkp1);
        }
        sync();
      }
      if (lid == 0u) {
        st1(pb + k * P.p_s, -i32(kp + 1u));
        st1(pb + (k + 1u) * P.p_s, -i32(kp + 1u));
      }
    }
    k = k + step;
  }
  A_end(lid);
  if (lid == 0u) { st2(P.i_off + b * P.i_sb, i32(info)); }
}

//== solve
// A X = B with A = L D L^T from `factor` (LAPACK ssytrs, lower), in place over X, one invocation per
// right-hand-side column (the entry point: lib/linalg_columns.wgsl). LD (ld0), pivots (ld1),
// X (ld2/st2) share the batch shape.
// Parameters: n, nrhs, count, a_off, a_sb, a_sr, a_sc, p_off, p_sb, p_s, x_off, x_sb, x_sr, x_sc.
fn a(ab: u32, i: u32, j: u32) -> f32 { return ld0(ab + i * P.a_sr + j * P.a_sc); }

fn column(b: u32, ab: u32, xb: u32) {
  let pb = P.p_off + b * P.p_sb;
  let n = P.n;
  // L D Y = B, forward
  var k = 0u;
  loop {
    if (k >= n) { break; }
    let p = ld1(pb + k * P.p_s);
    if (p > 0) {
      let kp = u32(clamp(p - 1, 0, i32(n) - 1));
      if (kp != k) {
        let t = ld2(xb + k * P.x_sr);
        st2(xb + k * P.x_sr, ld2(xb + kp * P.x_sr));
        st2(xb + kp * P.x_sr, t);
      }
      let bk = ld2(xb + k * P.x_sr);
      for (var i = k + 1u; i < n; i = i + 1u) { st2(xb + i * P.x_sr, ld2(xb + i * P.x_sr) - a(ab, i, k) * bk); }
      st2(xb + k * P.x_sr, bk * (1.0 / a(ab, k, k)));
      k = k + 1u;
    } else {
      let kp = u32(clamp(-p - 1, 0, i32(n) - 1));
      if (k + 1u >= n) { break; }  // a malformed pivot list: nothing more to solve
      if (kp != k + 1u) {
        let t = ld2(xb + (k + 1u) * P.x_sr);
        st2(xb + (k + 1u) * P.x_sr, ld2(xb + kp * P.x_sr));
        st2(xb + kp * P.x_sr, t);
      }
      let b0 = ld2(xb + k * P.x_sr);
      let b1 = ld2(xb + (k + 1u) * P.x_sr);
      for (var i = k + 2u; i < n; i = i + 1u) {
        var v = ld2(xb + i * P.x_sr) - a(ab, i, k) * b0;
        v = v - a(ab, i, k + 1u) * b1;
        st2(xb + i * P.x_sr, v);
      }
      let akm1k = a(ab, k + 1u, k);
      let akm1 = a(ab, k, k) / akm1k;
      let ak = a(ab, k + 1u, k + 1u) / akm1k;
      let denom = akm1 * ak - 1.0;
      let bkm1 = b0 / akm1k;
      let bk = b1 / akm1k;
      st2(xb + k * P.x_sr, (ak * bkm1 - bk) / denom);
      st2(xb + (k + 1u) * P.x_sr, (akm1 * bk - bkm1) / denom);
      k = k + 2u;
    }
  }
  // L^T X = Y, backward
  var q = i32(n) - 1;
  loop {
    if (q < 0) { break; }
    let kq = u32(q);
    let p = ld1(pb + kq * P.p_s);
    if (p > 0) {
      var s = ld2(xb + kq * P.x_sr);
      for (var i = kq + 1u; i < n; i = i + 1u) { s = s - ld2(xb + i * P.x_sr) * a(ab, i, kq); }
      st2(xb + kq * P.x_sr, s);
      let kp = u32(clamp(p - 1, 0, i32(n) - 1));
      if (kp != kq) {
        let t = ld2(xb + kq * P.x_sr);
        st2(xb + kq * P.x_sr, ld2(xb + kp * P.x_sr));
        st2(xb + kp * P.x_sr, t);
      }
      q = q - 1;
    } else {
      if (kq == 0u) { break; }
      var s = ld2(xb + kq * P.x_sr);
      var s1 = ld2(xb + (kq - 1u) * P.x_sr);
      for (var i = kq + 1u; i < n; i = i + 1u) {
        s = s - ld2(xb + i * P.x_sr) * a(ab, i, kq);
        s1 = s1 - ld2(xb + i * P.x_sr) * a(ab, i, kq - 1u);
      }
      st2(xb + kq * P.x_sr, s);
      st2(xb + (kq - 1u) * P.x_sr, s1);
      let kp = u32(clamp(-p - 1, 0, i32(n) - 1));
      if (kp != kq) {
        let t = ld2(xb + kq * P.x_sr);
        st2(xb + kq * P.x_sr, ld2(xb + kp * P.x_sr));
        st2(xb + kp * P.x_sr, t);
      }
      q = q - 2;
    }
  }
}
