// CTC loss (ops/ctc_loss.cpp): the forward (alpha) and backward (beta, then the gradient) recursions
// of Graves et al. in log space, as CPU computes them (same operations, same order of the collected
// sums). One workgroup per batch element; the recursion's rows are kept in storage (log_alpha is an
// output; log_beta a scratch tensor) and each time step ends at a barrier.
// Shared operands: 0 log_probs [T, B, C] (any strides: P.lp_st0/1/2, P.lp_off), 1 targets (i32
// values; element P.tg_off + tg_base(b) + P.tg_st * i), 2 meta (i32 [3, B]: input length, target
// length, target base offset). log_alpha and log_beta are [B, P.T, P.L] contiguous.
// Uses the pointwise library (f_exp, f_log, f_inf).

// (input length, target length, zeroed) of the workgroup's batch element, made uniform for the barriers.
var<workgroup> wg_len: vec3<u32>;

fn lp(t: u32, b: u32, c: u32) -> f32 { return ld0(P.lp_off + t * P.lp_st0 + b * P.lp_st1 + c * P.lp_st2); }
fn lens(k: u32, b: u32) -> u32 { return u32(ld2(P.meta_off + k * P.B + b)); }
// The extended target l': blank at even s, the target's (s / 2)-th label at odd s.
fn tprime(b: u32, s: u32) -> u32 {
  if (s % 2u == 0u) { return P.blank; }
  return u32(ld1(P.tg_off + lens(2u, b) + P.tg_st * (s / 2u)));
}
fn row(b: u32, t: u32) -> u32 { return (b * P.T + t) * P.L; }
// log(e^a + e^b + e^c) as CPU writes it: shifted by the largest (0 when all are -inf).
fn lse3(a: f32, b: f32, c: f32) -> f32 {
  var m = max(a, max(b, c));
  if (m == -f_inf()) { m = 0.0; }
  return f_log(f_exp(a - m) + f_exp(b - m) + f_exp(c - m)) + m;
}

//== forward
// Operands: 3 log_alpha (out), 4 neg_log_likelihood [B] (out).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let b = linear_id(wid, nwg, 0u, 1u);
  if (lid == 0u) { wg_len = vec3<u32>(lens(0u, b), lens(1u, b), 0u); }
  let len = workgroupUniformLoad(&wg_len);
  let Tb = len.x;
  let Sb = len.y;
  let ninf = -f_inf();
  for (var s = lid; s < P.L; s += 256u) {
    var v = ninf;
    if (Tb > 0u && s == 0u) { v = lp(0u, b, P.blank); }
    if (Tb > 0u && s == 1u && Sb > 0u) { v = lp(0u, b, tprime(b, 1u)); }
    st3(row(b, 0u) + s, v);
  }
  storageBarrier();
  workgroupBarrier();
  for (var t = 1u; t < Tb; t++) {
    for (var s = lid; s < 2u * Sb + 1u; s += 256u) {
      let prev = row(b, t - 1u);
      let cur = tprime(b, s);
      let la1 = ld3(prev + s);
      var la2 = ninf;
      var la3 = ninf;
      if (s > 0u) { la2 = ld3(prev + s - 1u); }
      if (s > 1u && tprime(b, s - 2u) != cur) { la3 = ld3(prev + s - 2u); }
      st3(row(b, t) + s, lse3(la1, la2, la3) + lp(t, b, cur));
    }
    storageBarrier();
    workgroupBarrier();
  }
  if (lid == 0u) {
    var nll = 0.0;
    if (Tb == 0u) {
      nll = select(f_inf(), 0.0, Sb == 0u);
    } else if (Sb == 0u) {
      nll = -ld3(row(b, Tb - 1u));
    } else {
      let l1 = ld3(row(b, Tb - 1u) + 2u * Sb);
      let l2 = ld3(row(b, Tb - 1u) + 2u * Sb - 1u);
      var m = max(l1, l2);
      if (m == ninf) { m = 0.0; }
      nll = -(f_log(f_exp(l1 - m) + f_exp(l2 - m)) + m);
    }
    st4(P.nll_off + b, nll);
  }
}

//== backward
// Operands: 3 log_alpha, 4 neg_log_likelihood [B], 5 grad_out [B], 6 log_beta (scratch, out),
// 7 grad [P.T, B, C] (out, contiguous). Parameters also: zero_inf, C, grad_st (grad_out's stride).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let b = linear_id(wid, nwg, 0u, 1u);
  let nll = ld4(P.nll_off + b);
  let gr = ld5(P.gout_off + b * P.grad_st);
  if (lid == 0u) { wg_len = vec3<u32>(lens(0u, b), lens(1u, b), select(0u, 1u, P.zero_inf != 0u && nll == f_inf())); }
  let len = workgroupUniformLoad(&wg_len);
  let Tb = len.x;
  let Sb = len.y;
  let zeroed = len.z != 0u;
  let ninf = -f_inf();
  if (!zeroed && Tb > 0u) {
    let last = row(b, Tb - 1u);
    for (var s = lid; s < P.L; s += 256u) {
      var v = ninf;
      if (s == 2u * Sb) { v = lp(Tb - 1u, b, P.blank); }
      if (Sb > 0u && s == 2u * Sb - 1u) { v = lp(Tb - 1u, b, tprime(b, s)); }
      st6(last + s, v);
    }
    storageBarrier();
    workgroupBarrier();
    for (var tt = i32(Tb) - 2; tt >= 0; tt--) {
      let t = u32(tt);
      for (var s = lid; s < 2u * Sb + 1u; s += 256u) {
        let next = row(b, t + 1u);
        let cur = tprime(b, s);
        let lb1 = ld6(next + s);
        var lb2 = ninf;
        var lb3 = ninf;
        if (s < 2u * Sb) { lb2 = ld6(next + s + 1u); }
        if (s + 1u < 2u * Sb && tprime(b, s + 2u) != cur) { lb3 = ld6(next + s + 2u); }
        st6(row(b, t) + s, lse3(lb1, lb2, lb3) + lp(t, b, cur));
      }
      storageBarrier();
      workgroupBarrier();
    }
  }
  // The gradient: per (t, c), the log-sum of alpha * beta over the s with l'(s) = c, collected in
  // descending s as CPU does, then eq. (16); zero past the input length or when zero_infinity hits.
  for (var i = lid; i < P.T * P.C; i += 256u) {
    let t = i / P.C;
    let c = i % P.C;
    var res = 0.0;
    if (!zeroed && t < Tb) {
      var lcab = ninf;
      for (var ss = i32(2u * Sb); ss >= 0; ss--) {
        let s = u32(ss);
        if (tprime(b, s) != c) { continue; }
        let ab = ld3(row(b, t) + s) + ld6(row(b, t) + s);
        if (lcab == ninf) {
          lcab = ab;
        } else {
          let m = max(lcab, ab);
          lcab = f_log(f_exp(lcab - m) + f_exp(ab - m)) + m;
        }
      }
      let l = lp(t, b, c);
      res = (f_exp(l) - f_exp(lcab + nll - l)) * gr;
    }
    st7((t * P.B + b) * P.C + c, res);
  }
}
