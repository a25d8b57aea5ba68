// Householder QR in float32 (csrc/ops/linalg_qr.cpp), LAPACK's conventions: reflector j is
// H_j = I - tau_j v_j v_j^T with v_j = (0, .., 0, 1, A[j+1:, j]), and R's diagonal entry is
// beta = -sign(alpha) * |(alpha, x)| (sgeqr2 / slarfg). Matrices are addressed through their
// strides: element (i, j) of matrix b is at off + b * sb + i * sr + j * sc.

//== geqrf
// A (ld0/st0, m x n) factored in place, tau (st1, contiguous (batch, k)): one workgroup per matrix;
// column j's reflector from its norm (a workgroup sum), then every later column updated by one
// invocation. Parameters: batch, m, n, k, off, sb, sr, sc.
// WG, wsum(), wmax() and the entry point (it calls matrix(b, lid)): wgsl/lib/linalg_wg.wgsl.
fn at(b: u32, i: u32, j: u32) -> u32 { return P.off + b * P.sb + i * P.sr + j * P.sc; }

fn matrix(b: u32, lid: u32) {
  let m = P.m;
  let n = P.n;
  for (var j = 0u; j < P.k; j = j + 1u) {
    // the largest |x_i| first, so the sum of squares neither overflows nor underflows (snrm2)
    var mx = 0.0;
    for (var i = j + 1u + lid; i < m; i = i + WG) { mx = max(mx, abs(ld0(at(b, i, j)))); }
    let scale = wmax(lid, mx);
    var s2 = 0.0;
    if (scale > 0.0) {
      for (var i = j + 1u + lid; i < m; i = i + WG) {
        let x = ld0(at(b, i, j)) / scale;
        s2 = s2 + x * x;
      }
    }
    let xnorm = scale * sqrt(wsum(lid, s2));
    let alpha = ld0(at(b, j, j));
    var tau = 0.0;
    if (xnorm != 0.0) {
      let big = max(abs(alpha), xnorm);
      let small = min(abs(alpha), xnorm);
      let h = big * sqrt(1.0 + (small / big) * (small / big));
      let beta = select(h, -h, alpha >= 0.0);
      tau = (beta - alpha) / beta;
      let f = 1.0 / (alpha - beta);
      for (var i = j + 1u + lid; i < m; i = i + WG) { st0(at(b, i, j), ld0(at(b, i, j)) * f); }
      storageBarrier();
      workgroupBarrier();
      if (lid == 0u) { st0(at(b, j, j), beta); }
    }
    if (lid == 0u) { st1(b * P.k + j, tau); }
    storageBarrier();
    workgroupBarrier();
    if (tau != 0.0) {
      for (var c = j + 1u + lid; c < n; c = c + WG) {
        var w = ld0(at(b, j, c));
        for (var i = j + 1u; i < m; i = i + 1u) { w = w + ld0(at(b, i, j)) * ld0(at(b, i, c)); }
        w = w * tau;
        st0(at(b, j, c), ld0(at(b, j, c)) - w);
        for (var i = j + 1u; i < m; i = i + 1u) { st0(at(b, i, c), ld0(at(b, i, c)) - w * ld0(at(b, i, j))); }
      }
    }
    storageBarrier();
    workgroupBarrier();
  }
}

//== apply
// C <- Q C (trans 0) or Q^T C (trans 1), Q = H_0 H_1 .. H_{k-1} from reflectors V (ld0, the
// columns below the diagonal, m rows like C) and tau (ld1): one invocation per column of C, each
// reflector in turn (H_{k-1} first for Q C, H_0 first for Q^T C). C (ld2/st2) in place. The entry
// point: lib/linalg_columns.wgsl, with V as its A and C as its X. Parameters: m, nrhs (C's columns),
// k, count (batch * nrhs), trans; a_off, a_sb, a_sr, a_sc (V); t_off, t_sb, t_s; x_off, x_sb, x_sr, x_sc (C).
fn column(b: u32, vb: u32, cb: u32) {
  let m = P.m;
  for (var s = 0u; s < P.k; s = s + 1u) {
    let j = select(P.k - 1u - s, s, P.trans != 0u);
    let tau = ld1(P.t_off + b * P.t_sb + j * P.t_s);
    var w = ld2(cb + j * P.x_sr);
    for (var i = j + 1u; i < m; i = i + 1u) { w = w + ld0(vb + i * P.a_sr + j * P.a_sc) * ld2(cb + i * P.x_sr); }
    w = w * tau;
    st2(cb + j * P.x_sr, ld2(cb + j * P.x_sr) - w);
    for (var i = j + 1u; i < m; i = i + 1u) {
      st2(cb + i * P.x_sr, ld2(cb + i * P.x_sr) - w * ld0(vb + i * P.a_sr + j * P.a_sc));
    }
  }
}
