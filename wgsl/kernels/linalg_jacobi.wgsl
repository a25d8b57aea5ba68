// Jacobi methods in float32 (csrc/ops/linalg_jacobi.cpp): the SVD by one-sided Jacobi (Hestenes),
// the symmetric eigendecomposition by two-sided cyclic Jacobi, and the orthonormal completion of
// the SVD's U. One workgroup of 64 per matrix over contiguous workspaces. A sweep visits every pair
// of columns once in round-robin order: each round holds n/2 disjoint pairs, one per invocation, so
// only the rounds are ordered by barriers. Sweeps repeat until one makes no rotation (at most `sweeps`).

// WG, wsum(), wargmax() and the entry point, which calls each section's matrix(b, lid): wgsl/lib/linalg_wg.wgsl.
var<workgroup> flag: atomic<u32>;
var<workgroup> go: u32;

// The column at position i of round r of the round-robin schedule over nn slots (slot 0 fixed).
fn slot(r: u32, i: u32, nn: u32) -> u32 {
  if (i == 0u) { return 0u; }
  return (i - 1u + r) % (nn - 1u) + 1u;
}

// The pair (p, q), p < q, at position i of round r: the columns in slots i and nn - 1 - i.
fn pair(r: u32, i: u32, nn: u32) -> vec2<u32> {
  let a = slot(r, i, nn);
  let c = slot(r, nn - 1u - i, nn);
  return vec2<u32>(min(a, c), max(a, c));
}

fn sync() {
  storageBarrier();
  workgroupBarrier();
}

// A sweep's bracket: sweep_begin() clears the flag a rotation sets; rotated() tells every invocation
// whether the sweep rotated a pair (uniformly: it decides whether another sweep runs).
fn sweep_begin(lid: u32) {
  if (lid == 0u) { atomicStore(&flag, 0u); }
  workgroupBarrier();
}
fn rotated(lid: u32) -> bool {
  if (lid == 0u) { go = atomicLoad(&flag); }
  return workgroupUniformLoad(&go) != 0u;
}

// (cos, sin) of the rotation that zeroes the pair's off-diagonal term, zeta = (a_qq - a_pp) / (2 a_pq):
// tangent t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2)), scaled so that cos^2 + sin^2 = 1 up to one
// rounding: sqrt and division may be a few ulp off on GPUs (Vulkan allows it), and a biased rotation,
// applied thousands of times, would scale the columns and the accumulated vectors by its bias.
fn rotation(zeta: f32) -> vec2<f32> {
  let t = select(-1.0, 1.0, zeta >= 0.0) / (abs(zeta) + sqrt(1.0 + zeta * zeta));
  let c = 1.0 / sqrt(1.0 + t * t);
  let s = c * t;
  let f = 1.5 - 0.5 * (c * c + s * s);  // one Newton step for 1 / sqrt(c^2 + s^2)
  return vec2<f32>(c * f, s * f);
}

// Elements i, j of operand 0 (rot0) or 1 (rot1) rotated: (x, y) <- (cs x - sn y, sn x + cs y).
fn rot0(i: u32, j: u32, cs: f32, sn: f32) {
  let x = ld0(i);
  let y = ld0(j);
  st0(i, cs * x - sn * y);
  st0(j, sn * x + cs * y);
}
fn rot1(i: u32, j: u32, cs: f32, sn: f32) {
  let x = ld1(i);
  let y = ld1(j);
  st1(i, cs * x - sn * y);
  st1(j, sn * x + cs * y);
}

//== svd
// Columns of W (m x n, m >= n) orthogonalised in place: W (ld0/st0) is stored by columns, (batch,
// n, m); V (st1) accumulates the rotations, also by columns, (batch, n, n); S (st2, (batch, n)) gets
// the final column norms (the singular values, unsorted). Pair (p, q) rotates when
// |w_p . w_q| > tol * |w_p| |w_q|. Parameters: batch, m, n, nn (n rounded up to even), sweeps, tol.
fn matrix(b: u32, lid: u32) {
  let m = P.m;
  let n = P.n;
  let nn = P.nn;
  let wb = b * n * m;
  let vb = b * n * n;
  for (var t = lid; t < n * n; t = t + WG) { st1(vb + t, select(0.0, 1.0, t / n == t % n)); }
  sync();
  for (var sweep = 0u; sweep < P.sweeps; sweep = sweep + 1u) {
    sweep_begin(lid);
    for (var r = 0u; r + 1u < nn; r = r + 1u) {
      for (var i = lid; i < nn / 2u; i = i + WG) {
        let pq = pair(r, i, nn);
        let p = pq.x;
        let q = pq.y;
        if (q >= n) { continue; }
        // four interleaved partial sums: less rounding than one running sum
        var al = vec4<f32>();
        var be = vec4<f32>();
        var ga = vec4<f32>();
        var k = 0u;
        for (; k + 4u <= m; k = k + 4u) {
          let x = vec4<f32>(ld0(wb + p * m + k), ld0(wb + p * m + k + 1u), ld0(wb + p * m + k + 2u),
                            ld0(wb + p * m + k + 3u));
          let y = vec4<f32>(ld0(wb + q * m + k), ld0(wb + q * m + k + 1u), ld0(wb + q * m + k + 2u),
                            ld0(wb + q * m + k + 3u));
          al = al + x * x;
          be = be + y * y;
          ga = ga + x * y;
        }
        for (; k < m; k = k + 1u) {
          let x = ld0(wb + p * m + k);
          let y = ld0(wb + q * m + k);
          al.x = al.x + x * x;
          be.x = be.x + y * y;
          ga.x = ga.x + x * y;
        }
        let alpha = (al.x + al.y) + (al.z + al.w);
        let beta = (be.x + be.y) + (be.z + be.w);
        let gamma = (ga.x + ga.y) + (ga.z + ga.w);
        if (gamma == 0.0 || abs(gamma) <= P.tol * sqrt(alpha) * sqrt(beta)) { continue; }
        atomicStore(&flag, 1u);
        let zeta = (beta - alpha) / (2.0 * gamma);
        let cs_sn = rotation(zeta);
        let cs = cs_sn.x;
        let sn = cs_sn.y;
        for (var k = 0u; k < m; k = k + 1u) { rot0(wb + p * m + k, wb + q * m + k, cs, sn); }
        for (var k = 0u; k < n; k = k + 1u) { rot1(vb + p * n + k, vb + q * n + k, cs, sn); }
      }
      sync();
    }
    if (!rotated(lid)) { break; }
  }
  for (var j = lid; j < n; j = j + WG) {
    var s = 0.0;
    for (var k = 0u; k < m; k = k + 1u) {
      let x = ld0(wb + j * m + k);
      s = s + x * x;
    }
    st2(b * n + j, sqrt(s));
  }
}

//== eigh
// Symmetric A (n x n, both triangles, (batch, n, n), ld0/st0) diagonalised in place by rotations
// J^T A J; V (st1) accumulates them by columns, (batch, n, n); D (st2, (batch, n)) gets the
// diagonal (the eigenvalues, unsorted); CS (st3, (batch, nn)) holds one round's (cos, sin) per pair.
// Pair (p, q) rotates when |a_pq| > tol * sqrt(|a_pp a_qq|) and |a_pq| > tiny * ||A||_F (below that,
// a_pq is float32 rounding: rotating it would only add more).
// Parameters: batch, n, nn, sweeps, tol, tiny.
fn A(b: u32, i: u32, j: u32) -> u32 { return b * P.n * P.n + i * P.n + j; }

// The rotation of pair i of round r as the angle step stored it in CS (cb: this matrix's slots).
struct Plane { p: u32, q: u32, cs: f32, sn: f32, }
fn planned(r: u32, i: u32, nn: u32, cb: u32) -> Plane {
  let pq = pair(r, i, nn);
  return Plane(pq.x, pq.y, ld3(cb + 2u * i), ld3(cb + 2u * i + 1u));
}

fn matrix(b: u32, lid: u32) {
  let n = P.n;
  let nn = P.nn;
  let vb = b * n * n;
  let cb = b * nn;
  var s2 = 0.0;
  for (var t = lid; t < n * n; t = t + WG) {
    st1(vb + t, select(0.0, 1.0, t / n == t % n));
    let x = ld0(vb + t);
    s2 = s2 + x * x;
  }
  let floor_ = P.tiny * sqrt(wsum(lid, s2));
  sync();
  for (var sweep = 0u; sweep < P.sweeps; sweep = sweep + 1u) {
    sweep_begin(lid);
    for (var r = 0u; r + 1u < nn; r = r + 1u) {
      // angles from the current A (the round's planes are disjoint, so its rotations commute)
      for (var i = lid; i < nn / 2u; i = i + WG) {
        let pq = pair(r, i, nn);
        let p = pq.x;
        let q = pq.y;
        var cs = 1.0;
        var sn = 0.0;
        if (q < n) {
          let apq = ld0(A(b, p, q));
          let app = ld0(A(b, p, p));
          let aqq = ld0(A(b, q, q));
          if (apq != 0.0 && abs(apq) > P.tol * sqrt(abs(app)) * sqrt(abs(aqq)) && abs(apq) > floor_) {
            atomicStore(&flag, 1u);
            let zeta = (aqq - app) / (2.0 * apq);
            let cs_sn = rotation(zeta);
            cs = cs_sn.x;
            sn = cs_sn.y;
          }
        }
        st3(cb + 2u * i, cs);
        st3(cb + 2u * i + 1u, sn);
      }
      sync();
      // rows p, q of A (J^T A), then columns p, q of A and of V (. J)
      for (var i = lid; i < nn / 2u; i = i + WG) {
        let t = planned(r, i, nn, cb);
        if (t.q < n && t.sn != 0.0) {
          for (var k = 0u; k < n; k = k + 1u) { rot0(A(b, t.p, k), A(b, t.q, k), t.cs, t.sn); }
        }
      }
      sync();
      for (var i = lid; i < nn / 2u; i = i + WG) {
        let t = planned(r, i, nn, cb);
        if (t.q < n && t.sn != 0.0) {
          for (var k = 0u; k < n; k = k + 1u) {
            rot0(A(b, k, t.p), A(b, k, t.q), t.cs, t.sn);
            rot1(vb + t.p * n + k, vb + t.q * n + k, t.cs, t.sn);
          }
          // zero in exact arithmetic: drop the rounding left there
          st0(A(b, t.p, t.q), 0.0);
          st0(A(b, t.q, t.p), 0.0);
        }
      }
      sync();
    }
    if (!rotated(lid)) { break; }
  }
  for (var j = lid; j < n; j = j + WG) { st2(b * n + j, ld0(A(b, j, j))); }
}

//== orth
// Rows of Q ((batch, r, m), ld0/st0, r <= m) made orthonormal in order, in place: each row loses its
// components along the rows before it (classical Gram-Schmidt, twice) and is normalised; a row left
// with norm < 1/2 (zero, or dependent on the rows before) is replaced by the unit vector e_k of the
// row k where the rows before have the least weight (residual norm^2 >= 1 - j/m), orthogonalised
// the same way. Scratch (ld1/st1, (batch, m)) holds dot products and row weights.
// Parameters: batch, r, m.

// Row j of matrix b minus its components along rows 0..j-1, twice; returns its squared norm.
fn project(b: u32, j: u32, lid: u32) -> f32 {
  let m = P.m;
  let qb = b * P.r * m;
  let sb = b * m;
  for (var it = 0u; it < 2u; it = it + 1u) {
    for (var i = lid; i < j; i = i + WG) {
      var d = 0.0;
      for (var k = 0u; k < m; k = k + 1u) { d = d + ld0(qb + i * m + k) * ld0(qb + j * m + k); }
      st1(sb + i, d);
    }
    sync();
    for (var k = lid; k < m; k = k + WG) {
      var s = ld0(qb + j * m + k);
      for (var i = 0u; i < j; i = i + 1u) { s = s - ld1(sb + i) * ld0(qb + i * m + k); }
      st0(qb + j * m + k, s);
    }
    sync();
  }
  var s2 = 0.0;
  for (var k = lid; k < m; k = k + WG) {
    let x = ld0(qb + j * m + k);
    s2 = s2 + x * x;
  }
  return wsum(lid, s2);
}

fn matrix(b: u32, lid: u32) {
  let m = P.m;
  let qb = b * P.r * m;
  for (var j = 0u; j < P.r; j = j + 1u) {
    var nrm2 = project(b, j, lid);
    if (!(nrm2 >= 0.25)) {
      // the least-weighted row k (first of equals): weight = sum over rows i < j of q_i[k]^2
      var bv = 3.0e38;
      var bi = 0u;
      for (var k = lid; k < m; k = k + WG) {
        var w = 0.0;
        for (var i = 0u; i < j; i = i + 1u) {
          let x = ld0(qb + i * m + k);
          w = w + x * x;
        }
        if (w < bv) {
          bv = w;
          bi = k;
        }
      }
      // the workgroup's least (first of equals) by wargmax: bv is >= 0 and not NaN, where a float's
      // bits order as its value, so the complemented bits order the other way
      let kk = wargmax(lid, ~bitcast<u32>(bv), bi);
      for (var k = lid; k < m; k = k + WG) { st0(qb + j * m + k, select(0.0, 1.0, k == kk)); }
      sync();
      nrm2 = project(b, j, lid);
    }
    let inv = 1.0 / sqrt(nrm2);
    for (var k = lid; k < m; k = k + WG) { st0(qb + j * m + k, ld0(qb + j * m + k) * inv); }
    sync();
  }
}
