// Fused scaled-dot-product attention (ops/attention.cpp), flash-attention style: a workgroup owns a
// block of query rows (or, for dK/dV, of key rows) and streams the other side through workgroup memory
// in blocks, with an online softmax in the forward pass and the saved log-sum-exp in the backward.
// 128 invocations: 16 rows x 8 lanes; a row's 8 lanes split the head dimension and the key block.
// The host prepends E (q/k head dim), EV (v head dim), EP / EVP (padded row strides in workgroup memory)
// and keeps one section (from its marker line to the next).
// Parameters: 0 B, 1 H (query heads), 2 L, 3 S, 4 G (query heads per key/value head), 5 EV, 6 scale (f32), 7 causal, 8 has_mask, 9 row blocks,
// 10-13 q strides (B, H, L, E), 14 q offset, 15-18 k strides, 19 k offset, 20-23 v strides, 24 v offset,
// 25-28 mask strides (B, H, L, S), 29 mask offset, 30.. per-kernel offsets.

const ROWS: u32 = 16u;
const LANES: u32 = 8u;

fn q_at(b: u32, h: u32, i: u32, e: u32) -> u32 { return prm(14u) + b * prm(10u) + h * prm(11u) + i * prm(12u) + e * prm(13u); }
fn k_at(b: u32, h: u32, j: u32, e: u32) -> u32 { return prm(19u) + b * prm(15u) + (h / prm(4u)) * prm(16u) + j * prm(17u) + e * prm(18u); }
fn v_at(b: u32, h: u32, j: u32, e: u32) -> u32 { return prm(24u) + b * prm(20u) + (h / prm(4u)) * prm(21u) + j * prm(22u) + e * prm(23u); }
fn m_at(b: u32, h: u32, i: u32, j: u32) -> u32 { return prm(29u) + b * prm(25u) + h * prm(26u) + i * prm(27u) + j * prm(28u); }
fn neg_inf() -> f32 { return bitcast<f32>(0xff800000u | (prm(0u) & 0u)); }
fn pos_inf() -> f32 { return bitcast<f32>(0x7f800000u | (prm(0u) & 0u)); }

// Scaled score plus mask (or -inf when causally masked / out of range).
fn bias_of(b: u32, h: u32, i: u32, j: u32) -> f32 {
  if (prm(7u) != 0u && j > i) { return neg_inf(); }
  if (prm(8u) != 0u) { return ld_mask(m_at(b, h, i, j)); }
  return 0.0;
}

//== fwd
// Operands: 0 q, 1 k, 2 v, 3 mask, 4 out (contiguous [B, H, L, EV]), 5 logsumexp (f32 [B, H, L]).
// Extra parameters: 30 out offset, 31 lse offset.
const BKV: u32 = 32u;
const NC: u32 = (EV + LANES - 1u) / LANES;
var<workgroup> Qs: array<f32, ROWS * EP>;
var<workgroup> KV: array<f32, BKV * MP>;
var<workgroup> Ps: array<f32, ROWS * BKV>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let L = prm(2u); let S = prm(3u); let H = prm(1u);
  let w = linear_id(wid, nwg, 0u, 1u);
  let qb = w % prm(9u);
  let bh = w / prm(9u);
  let b = bh / H; let h = bh % H;
  let r = tid / LANES; let lane = tid % LANES;
  let q0 = qb * ROWS;
  let i = q0 + r;
  let scale = bitcast<f32>(prm(6u));
  for (var x = tid; x < ROWS * E; x = x + 128u) {
    let rr = x / E; let e = x % E;
    var v = 0.0;
    if (q0 + rr < L) { v = ld0(q_at(b, h, q0 + rr, e)); }
    Qs[rr * EP + e] = v;
  }
  var m = neg_inf();
  var l = 0.0;
  var o: array<f32, NC>;
  for (var c = 0u; c < NC; c = c + 1u) { o[c] = 0.0; }
  var kend = S;
  if (prm(7u) != 0u) { kend = min(S, q0 + ROWS); }
  for (var k0 = 0u; k0 < kend; k0 = k0 + BKV) {
    workgroupBarrier();
    for (var x = tid; x < BKV * E; x = x + 128u) {
      let jj = x / E; let e = x % E;
      var v = 0.0;
      if (k0 + jj < S) { v = ld1(k_at(b, h, k0 + jj, e)); }
      KV[jj * EP + e] = v;
    }
    workgroupBarrier();
    for (var t = 0u; t < BKV / LANES; t = t + 1u) {
      let jj = lane + LANES * t;
      let j = k0 + jj;
      var s = neg_inf();
      if (j < S && i < L) {
        var acc = 0.0;
        for (var e = 0u; e < E; e = e + 1u) { acc = acc + Qs[r * EP + e] * KV[jj * EP + e]; }
        s = acc * scale + bias_of(b, h, i, j);
      }
      Ps[r * BKV + jj] = s;
    }
    workgroupBarrier();
    var mx = m;
    for (var jj = 0u; jj < BKV; jj = jj + 1u) { mx = max(mx, Ps[r * BKV + jj]); }
    // Every lane of the row read the scores; now each turns its own into probabilities.
    var alpha = 1.0;
    if (mx != neg_inf()) { alpha = exp(m - mx); }
    workgroupBarrier();
    for (var t = 0u; t < BKV / LANES; t = t + 1u) {
      let jj = lane + LANES * t;
      var p = 0.0;
      if (mx != neg_inf()) { p = exp(Ps[r * BKV + jj] - mx); }
      Ps[r * BKV + jj] = p;
    }
    for (var x = tid; x < BKV * EV; x = x + 128u) {
      let jj = x / EV; let e = x % EV;
      var v = 0.0;
      if (k0 + jj < S) { v = ld2(v_at(b, h, k0 + jj, e)); }
      KV[jj * EVP + e] = v;
    }
    workgroupBarrier();
    var rs = 0.0;
    for (var jj = 0u; jj < BKV; jj = jj + 1u) { rs = rs + Ps[r * BKV + jj]; }
    l = l * alpha + rs;
    m = mx;
    for (var c = 0u; c < NC; c = c + 1u) {
      let col = lane + LANES * c;
      if (col < EV) {
        var acc = o[c] * alpha;
        for (var jj = 0u; jj < BKV; jj = jj + 1u) { acc = acc + Ps[r * BKV + jj] * KV[jj * EVP + col]; }
        o[c] = acc;
      }
    }
  }
  if (i >= L) { return; }
  let inv = select(0.0, 1.0 / l, l > 0.0);
  for (var c = 0u; c < NC; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < EV) { st4(prm(30u) + (bh * L + i) * EV + col, o[c] * inv); }
  }
  if (lane == 0u) { st5(prm(31u) + bh * L + i, select(pos_inf(), m + log(l), l > 0.0)); }
}

//== bwd_dq
// Operands: 0 q, 1 k, 2 v, 3 mask, 4 dO (contiguous [B,H,L,EV]), 5 lse (f32), 6 D = rowsum(dO*O) (f32),
// 7 dQ (contiguous [B,H,L,E]), 8 dS (f32 [B,H,L,S], written when prm(33) != 0).
// Extra parameters: 30 dO offset, 31 lse offset, 32 D offset, 33 write dS, 34 dQ offset, 35 dS offset.
const BKV: u32 = 16u;
const NQ: u32 = (E + LANES - 1u) / LANES;
var<workgroup> Qs: array<f32, ROWS * EP>;
var<workgroup> Gs: array<f32, ROWS * EVP>;
var<workgroup> KV: array<f32, BKV * MP>;
var<workgroup> Ps: array<f32, ROWS * BKV>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let L = prm(2u); let S = prm(3u); let H = prm(1u);
  let w = linear_id(wid, nwg, 0u, 1u);
  let qb = w % prm(9u);
  let bh = w / prm(9u);
  let b = bh / H; let h = bh % H;
  let r = tid / LANES; let lane = tid % LANES;
  let q0 = qb * ROWS;
  let i = q0 + r;
  let scale = bitcast<f32>(prm(6u));
  for (var x = tid; x < ROWS * E; x = x + 128u) {
    let rr = x / E; let e = x % E;
    var v = 0.0;
    if (q0 + rr < L) { v = ld0(q_at(b, h, q0 + rr, e)); }
    Qs[rr * EP + e] = v;
  }
  for (var x = tid; x < ROWS * EV; x = x + 128u) {
    let rr = x / EV; let e = x % EV;
    var v = 0.0;
    if (q0 + rr < L) { v = ld4(prm(30u) + ((bh * L) + q0 + rr) * EV + e); }
    Gs[rr * EVP + e] = v;
  }
  var lse = 0.0; var dd = 0.0;
  if (i < L) { lse = ld5(prm(31u) + bh * L + i); dd = ld6(prm(32u) + bh * L + i); }
  var dq: array<f32, NQ>;
  for (var c = 0u; c < NQ; c = c + 1u) { dq[c] = 0.0; }
  var kend = S;
  if (prm(7u) != 0u) { kend = min(S, q0 + ROWS); }
  for (var k0 = 0u; k0 < kend; k0 = k0 + BKV) {
    workgroupBarrier();
    for (var x = tid; x < BKV * E; x = x + 128u) {
      let jj = x / E; let e = x % E;
      var v = 0.0;
      if (k0 + jj < S) { v = ld1(k_at(b, h, k0 + jj, e)); }
      KV[jj * EP + e] = v;
    }
    workgroupBarrier();
    var p: array<f32, 2>;
    for (var t = 0u; t < BKV / LANES; t = t + 1u) {
      let jj = lane + LANES * t;
      let j = k0 + jj;
      p[t] = 0.0;
      if (j < S && i < L) {
        var acc = 0.0;
        for (var e = 0u; e < E; e = e + 1u) { acc = acc + Qs[r * EP + e] * KV[jj * EP + e]; }
        p[t] = exp(acc * scale + bias_of(b, h, i, j) - lse);
      }
    }
    workgroupBarrier();
    for (var x = tid; x < BKV * EV; x = x + 128u) {
      let jj = x / EV; let e = x % EV;
      var v = 0.0;
      if (k0 + jj < S) { v = ld2(v_at(b, h, k0 + jj, e)); }
      KV[jj * EVP + e] = v;
    }
    workgroupBarrier();
    for (var t = 0u; t < BKV / LANES; t = t + 1u) {
      let jj = lane + LANES * t;
      var dp = 0.0;
      for (var e = 0u; e < EV; e = e + 1u) { dp = dp + Gs[r * EVP + e] * KV[jj * EVP + e]; }
      let ds = p[t] * (dp - dd);
      Ps[r * BKV + jj] = ds;
      if (prm(33u) != 0u && i < L && k0 + jj < S) { st8(prm(35u) + (bh * L + i) * S + k0 + jj, ds); }
    }
    workgroupBarrier();
    for (var x = tid; x < BKV * E; x = x + 128u) {
      let jj = x / E; let e = x % E;
      var v = 0.0;
      if (k0 + jj < S) { v = ld1(k_at(b, h, k0 + jj, e)); }
      KV[jj * EP + e] = v;
    }
    workgroupBarrier();
    for (var c = 0u; c < NQ; c = c + 1u) {
      let col = lane + LANES * c;
      if (col < E) {
        var acc = dq[c];
        for (var jj = 0u; jj < BKV; jj = jj + 1u) { acc = acc + Ps[r * BKV + jj] * KV[jj * EP + col]; }
        dq[c] = acc;
      }
    }
  }
  if (i >= L) { return; }
  for (var c = 0u; c < NQ; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < E) { st7(prm(34u) + (bh * L + i) * E + col, dq[c] * scale); }
  }
}

//== bwd_dkv
// One workgroup per block of 16 key rows. Operands: 0 q, 1 k, 2 v, 3 mask, 4 dO, 5 lse, 6 D, 7 dK
// (contiguous [B,H,S,E]), 8 dV (contiguous [B,H,S,EV]).
// Extra parameters: 30 dO offset, 31 lse offset, 32 D offset, 33 dK offset, 34 dV offset.
const BQ: u32 = 16u;
const NK: u32 = (E + LANES - 1u) / LANES;
const NV: u32 = (EV + LANES - 1u) / LANES;
var<workgroup> Ks: array<f32, ROWS * EP>;
var<workgroup> Vs: array<f32, ROWS * EVP>;
var<workgroup> X: array<f32, BQ * MP>;
var<workgroup> Ps: array<f32, BQ * ROWS>;
var<workgroup> Ds: array<f32, BQ * ROWS>;
var<workgroup> Ls: array<f32, BQ * 2u>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let L = prm(2u); let S = prm(3u); let H = prm(1u);
  let w = linear_id(wid, nwg, 0u, 1u);
  let kb = w % prm(9u);
  let bh = w / prm(9u);  // over key/value heads
  let G = prm(4u);
  let HK = H / G;
  let b = bh / HK; let hk = bh % HK;
  let h0 = hk * G;
  let r = tid / LANES; let lane = tid % LANES;
  let k0 = kb * ROWS;
  let j = k0 + r;
  let scale = bitcast<f32>(prm(6u));
  for (var x = tid; x < ROWS * E; x = x + 128u) {
    let rr = x / E; let e = x % E;
    var v = 0.0;
    if (k0 + rr < S) { v = ld1(k_at(b, h0, k0 + rr, e)); }
    Ks[rr * EP + e] = v;
  }
  for (var x = tid; x < ROWS * EV; x = x + 128u) {
    let rr = x / EV; let e = x % EV;
    var v = 0.0;
    if (k0 + rr < S) { v = ld2(v_at(b, h0, k0 + rr, e)); }
    Vs[rr * EVP + e] = v;
  }
  var dk: array<f32, NK>;
  var dv: array<f32, NV>;
  for (var c = 0u; c < NK; c = c + 1u) { dk[c] = 0.0; }
  for (var c = 0u; c < NV; c = c + 1u) { dv[c] = 0.0; }
  var qstart = 0u;
  if (prm(7u) != 0u) { qstart = k0 / BQ * BQ; }
  for (var h = h0; h < h0 + G; h = h + 1u) {
  let bq = b * H + h;  // the query head's (batch, head) row
  for (var q0 = qstart; q0 < L; q0 = q0 + BQ) {
    workgroupBarrier();
    for (var x = tid; x < BQ * E; x = x + 128u) {
      let ii = x / E; let e = x % E;
      var v = 0.0;
      if (q0 + ii < L) { v = ld0(q_at(b, h, q0 + ii, e)); }
      X[ii * EP + e] = v;
    }
    if (tid < BQ) {
      var lse = 0.0; var dd = 0.0;
      if (q0 + tid < L) { lse = ld5(prm(31u) + bq * L + q0 + tid); dd = ld6(prm(32u) + bq * L + q0 + tid); }
      Ls[tid * 2u] = lse; Ls[tid * 2u + 1u] = dd;
    }
    workgroupBarrier();
    // P[i][j] for this key row j and queries i = lane + 8t.
    for (var t = 0u; t < BQ / LANES; t = t + 1u) {
      let ii = lane + LANES * t;
      let i = q0 + ii;
      var p = 0.0;
      if (j < S && i < L) {
        var acc = 0.0;
        for (var e = 0u; e < E; e = e + 1u) { acc = acc + X[ii * EP + e] * Ks[r * EP + e]; }
        p = exp(acc * scale + bias_of(b, h, i, j) - Ls[ii * 2u]);
      }
      Ps[ii * ROWS + r] = p;
    }
    workgroupBarrier();
    for (var x = tid; x < BQ * EV; x = x + 128u) {
      let ii = x / EV; let e = x % EV;
      var v = 0.0;
      if (q0 + ii < L) { v = ld4(prm(30u) + (bq * L + q0 + ii) * EV + e); }
      X[ii * EVP + e] = v;
    }
    workgroupBarrier();
    for (var t = 0u; t < BQ / LANES; t = t + 1u) {
      let ii = lane + LANES * t;
      var dp = 0.0;
      for (var e = 0u; e < EV; e = e + 1u) { dp = dp + X[ii * EVP + e] * Vs[r * EVP + e]; }
      Ds[ii * ROWS + r] = Ps[ii * ROWS + r] * (dp - Ls[ii * 2u + 1u]);
    }
    workgroupBarrier();
    for (var c = 0u; c < NV; c = c + 1u) {
      let col = lane + LANES * c;
      if (col < EV) {
        var acc = dv[c];
        for (var ii = 0u; ii < BQ; ii = ii + 1u) { acc = acc + Ps[ii * ROWS + r] * X[ii * EVP + col]; }
        dv[c] = acc;
      }
    }
    workgroupBarrier();
    for (var x = tid; x < BQ * E; x = x + 128u) {
      let ii = x / E; let e = x % E;
      var v = 0.0;
      if (q0 + ii < L) { v = ld0(q_at(b, h, q0 + ii, e)); }
      X[ii * EP + e] = v;
    }
    workgroupBarrier();
    for (var c = 0u; c < NK; c = c + 1u) {
      let col = lane + LANES * c;
      if (col < E) {
        var acc = dk[c];
        for (var ii = 0u; ii < BQ; ii = ii + 1u) { acc = acc + Ds[ii * ROWS + r] * X[ii * EP + col]; }
        dk[c] = acc;
      }
    }
  }
  }
  if (j >= S) { return; }
  for (var c = 0u; c < NK; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < E) { st7(prm(33u) + (bh * S + j) * E + col, dk[c] * scale); }
  }
  for (var c = 0u; c < NV; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < EV) { st8(prm(34u) + (bh * S + j) * EV + col, dv[c]); }
  }
}
