// Fused scaled-dot-product attention (ops/attention.cpp), flash-attention style: a workgroup owns a
// block of query rows (or, for dK/dV, of key rows) and streams the other side through workgroup memory
// in blocks, with an online softmax in the forward pass and the saved log-sum-exp in the backward.
// 128 invocations: ROWS rows x LANES lanes; a row's lanes split the head dimension and the key block.
// The host prepends E (q/k head dim), EV (v head dim), EP / EVP (padded row strides in workgroup memory),
// ROWS and LANES (16 x 8 for the backward; the forward takes 8 x 16 or 4 x 32 where 16-row blocks
// would leave the GPU short of workgroups) and keeps one section (from its marker line to the next).
// Parameters: B, H (query heads), L, S, q_per_kv (query heads per key/value head), scale (f32), causal,
// has_mask, blocks (row blocks per (batch, head) pair), q_stride/k_stride/v_stride/m_stride (arrays of
// the 4 strides B, H, L or S, E; m_*: the mask's B, H, L, S), q_off, k_off, v_off, m_off (element
// offsets); per-kernel offsets in each section.

fn q_at(b: u32, h: u32, i: u32, e: u32) -> u32 { return P.q_off + b * P_q_stride(0u) + h * P_q_stride(1u) + i * P_q_stride(2u) + e * P_q_stride(3u); }
fn k_at(b: u32, h: u32, j: u32, e: u32) -> u32 { return P.k_off + b * P_k_stride(0u) + (h / P.q_per_kv) * P_k_stride(1u) + j * P_k_stride(2u) + e * P_k_stride(3u); }
fn v_at(b: u32, h: u32, j: u32, e: u32) -> u32 { return P.v_off + b * P_v_stride(0u) + (h / P.q_per_kv) * P_v_stride(1u) + j * P_v_stride(2u) + e * P_v_stride(3u); }
fn m_at(b: u32, h: u32, i: u32, j: u32) -> u32 { return P.m_off + b * P_m_stride(0u) + h * P_m_stride(1u) + i * P_m_stride(2u) + j * P_m_stride(3u); }
fn neg_inf() -> f32 { return bitcast<f32>(0xff800000u | (P.B & 0u)); }
fn pos_inf() -> f32 { return bitcast<f32>(0x7f800000u | (P.B & 0u)); }

// Scaled score plus mask (or -inf when causally masked / out of range).
fn bias_of(b: u32, h: u32, i: u32, j: u32) -> f32 {
  if (P.causal != 0u && j > i) { return neg_inf(); }
  if (P.has_mask != 0u) { return ld_mask(m_at(b, h, i, j)); }
  return 0.0;
}

// The logit of a query-key dot product `acc`.
fn logit(acc: f32, b: u32, h: u32, i: u32, j: u32) -> f32 { return acc * P.scale + bias_of(b, h, i, j); }

// Element e of row `row` of q (which 0), k (1) or v (2) for query head h; zero past `limit` rows.
fn row_of(which: u32, b: u32, h: u32, row: u32, limit: u32, e: u32) -> f32 {
  if (row >= limit) { return 0.0; }
  if (which == 0u) { return ld0(q_at(b, h, row, e)); }
  if (which == 1u) { return ld1(k_at(b, h, row, e)); }
  return ld2(v_at(b, h, row, e));
}

// Rows row0 .. row0 + n - 1 (n <= 32) of q, k or v (which) into the block streamed through workgroup
// memory (Blk, each section's own), `width` elements per row at `pitch`. Every load is issued before
// the first store, so that their latencies overlap (one after another, a stage of 16 loads an
// invocation cost more than the arithmetic on the block).
const SN: u32 = (32u * (MP - 1u) + 127u) / 128u;
fn stage(which: u32, b: u32, h: u32, row0: u32, n: u32, limit: u32, width: u32, pitch: u32, tid: u32) {
  var base = v_at(b, h, row0, 0u);
  var rs = P_v_stride(2u);
  var es = P_v_stride(3u);
  if (which == 0u) { base = q_at(b, h, row0, 0u); rs = P_q_stride(2u); es = P_q_stride(3u); }
  if (which == 1u) { base = k_at(b, h, row0, 0u); rs = P_k_stride(2u); es = P_k_stride(3u); }
  var vals: array<f32, SN>;
  for (var u = 0u; u < SN; u = u + 1u) {
    let x = tid + u * 128u;
    let row = x / width;
    var v = 0.0;
    if (x < n * width && row0 + row < limit) {
      let a = base + row * rs + (x % width) * es;
      if (which == 0u) { v = ld0(a); } else if (which == 1u) { v = ld1(a); } else { v = ld2(a); }
    }
    vals[u] = v;
  }
  for (var u = 0u; u < SN; u = u + 1u) {
    let x = tid + u * 128u;
    if (x < n * width) { Blk[(x / width) * pitch + x % width] = vals[u]; }
  }
}

// The workgroup's own ROWS rows (q rows for fwd and bwd_dq, k rows for bwd_dkv), E elements per row at
// EP, for the whole of its run.
var<workgroup> Own: array<f32, ROWS * EP>;

// Rows row0 .. row0 + ROWS - 1 of q or k (which) into Own.
fn stage_own(which: u32, b: u32, h: u32, row0: u32, limit: u32, tid: u32) {
  for (var x = tid; x < ROWS * E; x = x + 128u) { Own[(x / E) * EP + x % E] = row_of(which, b, h, row0 + x / E, limit, x % E); }
}

// The dot product of row r of Own and row jj of the E-wide block staged in Blk, summed in order.
fn own_dot(r: u32, jj: u32) -> f32 {
  var acc = 0.0;
  for (var e = 0u; e < E; e = e + 1u) { acc = acc + Own[r * EP + e] * Blk[jj * EP + e]; }
  return acc;
}

// acc plus column `col` of the weights in Ps (each section's own; weight j of this invocation's row
// at w0 + j * ws) times the n rows staged in Blk (row j at j * pitch), summed in row order.
fn ps_blk(acc: f32, w0: u32, ws: u32, n: u32, pitch: u32, col: u32) -> f32 {
  var a = acc;
  for (var j = 0u; j < n; j = j + 1u) { a = a + Ps[w0 + j * ws] * Blk[j * pitch + col]; }
  return a;
}

// The workgroup's (batch, head) pair, of `heads` heads, and its first row (P.blocks blocks of ROWS rows
// per pair).
struct Rows { b: u32, h: u32, bh: u32, row0: u32, };
fn rows_of(wid: vec3<u32>, nwg: vec3<u32>, heads: u32) -> Rows {
  let w = linear_id(wid, nwg, 0u, 1u);
  let bh = w / P.blocks;
  return Rows(bh / heads, bh % heads, bh, (w % P.blocks) * ROWS);
}

// The end of the keys a block of query rows from q0 attends to: all S, or up to its last row when causal.
fn key_end(q0: u32) -> u32 {
  if (P.causal != 0u) { return min(P.S, q0 + ROWS); }
  return P.S;
}

// stage() between barriers: once every invocation is done with the block it replaces, and before any
// reads the new one.
fn restage(which: u32, b: u32, h: u32, row0: u32, n: u32, limit: u32, width: u32, pitch: u32, tid: u32) {
  workgroupBarrier();
  stage(which, b, h, row0, n, limit, width, pitch, tid);
  workgroupBarrier();
}

//== fwd
// Operands: 0 q, 1 k, 2 v, 3 mask, 4 out ([B, H, L, EV] through out_stride: the host gives it the
// query's memory layout), 5 logsumexp (f32 [B, H, L], contiguous).
// Extra parameters: out_off, out_stride (4 strides: B, H, L, EV), lse_off.
// Each lane scores KPL keys of a block at once (independent sums over e), keeps its own share of
// the row's exp-sum, and accumulates NC output columns per key: short dependent chains, so that a
// short sequence (few workgroups) is not bound by workgroup-memory latency.
const BKV: u32 = 32u;
const KPL: u32 = BKV / LANES;
const NC: u32 = (EV + LANES - 1u) / LANES;
const PSP: u32 = BKV + 1u;  // Ps row pitch: the rows of a subgroup read their own weights in other banks
var<workgroup> Blk: array<f32, BKV * MP>;
var<workgroup> Ps: array<f32, ROWS * PSP>;
var<workgroup> Red: array<f32, ROWS * LANES>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let L = P.L; let S = P.S;
  let rows = rows_of(wid, nwg, P.H);
  let b = rows.b; let h = rows.h; let bh = rows.bh; let q0 = rows.row0;
  let r = tid / LANES; let lane = tid % LANES;
  let i = q0 + r;
  stage_own(0u, b, h, q0, L, tid);
  var m = neg_inf();
  var l = 0.0;  // this lane's share of the row's sum of exp(s - m)
  var o: array<f32, NC>;
  for (var c = 0u; c < NC; c = c + 1u) { o[c] = 0.0; }
  let kend = key_end(q0);
  for (var k0 = 0u; k0 < kend; k0 = k0 + BKV) {
    restage(1u, b, h, k0, BKV, S, E, EP, tid);
    var acc: array<f32, KPL>;
    for (var t = 0u; t < KPL; t = t + 1u) { acc[t] = 0.0; }
    for (var e = 0u; e < E; e = e + 1u) {
      let qe = Own[r * EP + e];
      for (var t = 0u; t < KPL; t = t + 1u) { acc[t] = acc[t] + qe * Blk[(lane + LANES * t) * EP + e]; }
    }
    var lmx = neg_inf();
    for (var t = 0u; t < KPL; t = t + 1u) {
      let j = k0 + lane + LANES * t;
      var sv = neg_inf();
      if (j < S && i < L) { sv = logit(acc[t], b, h, i, j); }
      acc[t] = sv;
      lmx = max(lmx, sv);
    }
    Red[r * LANES + lane] = lmx;
    workgroupBarrier();  // also: every lane is done with the key block
    var mx = m;
    for (var u = 0u; u < LANES; u = u + 1u) { mx = max(mx, Red[r * LANES + u]); }
    var alpha = 1.0;
    if (mx != neg_inf()) { alpha = exp(m - mx); }
    var ls = 0.0;
    for (var t = 0u; t < KPL; t = t + 1u) {
      var p = 0.0;
      if (mx != neg_inf()) { p = exp(acc[t] - mx); }
      Ps[r * PSP + lane + LANES * t] = p;
      ls = ls + p;
    }
    l = l * alpha + ls;
    m = mx;
    stage(2u, b, h, k0, BKV, S, EV, EVP, tid);
    workgroupBarrier();
    for (var c = 0u; c < NC; c = c + 1u) { o[c] = o[c] * alpha; }
    for (var jj = 0u; jj < BKV; jj = jj + 1u) {
      let p = Ps[r * PSP + jj];
      for (var c = 0u; c < NC; c = c + 1u) {
        let col = min(lane + LANES * c, EV - 1u);  // past EV: a column never stored
        o[c] = o[c] + p * Blk[jj * EVP + col];
      }
    }
  }
  // The row's exp-sum from its lanes' shares.
  workgroupBarrier();
  Red[r * LANES + lane] = l;
  workgroupBarrier();
  var lt = 0.0;
  for (var u = 0u; u < LANES; u = u + 1u) { lt = lt + Red[r * LANES + u]; }
  if (i >= L) { return; }
  let inv = select(0.0, 1.0 / lt, lt > 0.0);
  let out_base = P.out_off + b * P_out_stride(0u) + h * P_out_stride(1u) + i * P_out_stride(2u);
  for (var c = 0u; c < NC; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < EV) { st4(out_base + col * P_out_stride(3u), o[c] * inv); }
  }
  if (lane == 0u) { st5(P.lse_off + bh * L + i, select(pos_inf(), m + log(lt), lt > 0.0)); }
}

//== bwd_dq
// Operands: 0 q, 1 k, 2 v, 3 mask, 4 dO (contiguous [B,H,L,EV]), 5 lse (f32), 6 D = rowsum(dO*O) (f32),
// 7 dQ (contiguous [B,H,L,E]), 8 dS (f32 [B,H,L,S], written when P.write_ds != 0).
// Extra parameters: go_off (dO), lse_off, d_off, write_ds, dq_off, ds_off.
const BKV: u32 = 16u;
const NQ: u32 = (E + LANES - 1u) / LANES;
var<workgroup> Gs: array<f32, ROWS * EVP>;
var<workgroup> Blk: array<f32, BKV * MP>;
var<workgroup> Ps: array<f32, ROWS * BKV>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let L = P.L; let S = P.S;
  let rows = rows_of(wid, nwg, P.H);
  let b = rows.b; let h = rows.h; let bh = rows.bh; let q0 = rows.row0;
  let r = tid / LANES; let lane = tid % LANES;
  let i = q0 + r;
  stage_own(0u, b, h, q0, L, tid);
  for (var x = tid; x < ROWS * EV; x = x + 128u) {
    let rr = x / EV; let e = x % EV;
    var v = 0.0;
    if (q0 + rr < L) { v = ld4(P.go_off + ((bh * L) + q0 + rr) * EV + e); }
    Gs[rr * EVP + e] = v;
  }
  var lse = 0.0; var dd = 0.0;
  if (i < L) { lse = ld5(P.lse_off + bh * L + i); dd = ld6(P.d_off + bh * L + i); }
  var dq: array<f32, NQ>;
  for (var c = 0u; c < NQ; c = c + 1u) { dq[c] = 0.0; }
  let kend = key_end(q0);
  for (var k0 = 0u; k0 < kend; k0 = k0 + BKV) {
    restage(1u, b, h, k0, BKV, S, E, EP, tid);
    var p: array<f32, BKV / LANES>;
    for (var t = 0u; t < BKV / LANES; t = t + 1u) {
      let jj = lane + LANES * t;
      let j = k0 + jj;
      p[t] = 0.0;
      if (j < S && i < L) { p[t] = exp(logit(own_dot(r, jj), b, h, i, j) - lse); }
    }
    restage(2u, b, h, k0, BKV, S, EV, EVP, tid);
    for (var t = 0u; t < BKV / LANES; t = t + 1u) {
      let jj = lane + LANES * t;
      var dp = 0.0;
      for (var e = 0u; e < EV; e = e + 1u) { dp = dp + Gs[r * EVP + e] * Blk[jj * EVP + e]; }
      let ds = p[t] * (dp - dd);
      Ps[r * BKV + jj] = ds;
      if (P.write_ds != 0u && i < L && k0 + jj < S) { st8(P.ds_off + (bh * L + i) * S + k0 + jj, ds); }
    }
    restage(1u, b, h, k0, BKV, S, E, EP, tid);
    for (var c = 0u; c < NQ; c = c + 1u) {
      let col = lane + LANES * c;
      if (col < E) { dq[c] = ps_blk(dq[c], r * BKV, 1u, BKV, EP, col); }
    }
  }
  if (i >= L) { return; }
  for (var c = 0u; c < NQ; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < E) { st7(P.dq_off + (bh * L + i) * E + col, dq[c] * P.scale); }
  }
}

//== bwd_dkv
// One workgroup per block of 16 key rows. Operands: 0 q, 1 k, 2 v, 3 mask, 4 dO, 5 lse, 6 D, 7 dK
// (contiguous [B,H,S,E]), 8 dV (contiguous [B,H,S,EV]).
// Extra parameters: go_off (dO), lse_off, d_off, dk_off, dv_off.
const BQ: u32 = 16u;
const NK: u32 = (E + LANES - 1u) / LANES;
const NV: u32 = (EV + LANES - 1u) / LANES;
var<workgroup> Vs: array<f32, ROWS * EVP>;
var<workgroup> Blk: array<f32, BQ * MP>;
var<workgroup> Ps: array<f32, BQ * ROWS>;
var<workgroup> Ds: array<f32, BQ * ROWS>;
var<workgroup> Ls: array<f32, BQ * 2u>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let L = P.L; let S = P.S; let H = P.H;
  let G = P.q_per_kv;
  let rows = rows_of(wid, nwg, H / G);  // over key/value heads
  let b = rows.b; let bh = rows.bh; let k0 = rows.row0;
  let h0 = rows.h * G;
  let r = tid / LANES; let lane = tid % LANES;
  let j = k0 + r;
  stage_own(1u, b, h0, k0, S, tid);
  for (var x = tid; x < ROWS * EV; x = x + 128u) { Vs[(x / EV) * EVP + x % EV] = row_of(2u, b, h0, k0 + x / EV, S, x % EV); }
  var dk: array<f32, NK>;
  var dv: array<f32, NV>;
  for (var c = 0u; c < NK; c = c + 1u) { dk[c] = 0.0; }
  for (var c = 0u; c < NV; c = c + 1u) { dv[c] = 0.0; }
  var qstart = 0u;
  if (P.causal != 0u) { qstart = k0 / BQ * BQ; }
  for (var h = h0; h < h0 + G; h = h + 1u) {
  let bq = b * H + h;  // the query head's (batch, head) row
  for (var q0 = qstart; q0 < L; q0 = q0 + BQ) {
    workgroupBarrier();
    stage(0u, b, h, q0, BQ, L, E, EP, tid);
    if (tid < BQ) {
      var lse = 0.0; var dd = 0.0;
      if (q0 + tid < L) { lse = ld5(P.lse_off + bq * L + q0 + tid); dd = ld6(P.d_off + bq * L + q0 + tid); }
      Ls[tid * 2u] = lse; Ls[tid * 2u + 1u] = dd;
    }
    workgroupBarrier();
    // P[i][j] for this key row j and queries i = lane + 8t.
    for (var t = 0u; t < BQ / LANES; t = t + 1u) {
      let ii = lane + LANES * t;
      let i = q0 + ii;
      var p = 0.0;
      if (j < S && i < L) { p = exp(logit(own_dot(r, ii), b, h, i, j) - Ls[ii * 2u]); }
      Ps[ii * ROWS + r] = p;
    }
    workgroupBarrier();
    for (var x = tid; x < BQ * EV; x = x + 128u) {
      let ii = x / EV; let e = x % EV;
      var v = 0.0;
      if (q0 + ii < L) { v = ld4(P.go_off + (bq * L + q0 + ii) * EV + e); }
      Blk[ii * EVP + e] = v;
    }
    workgroupBarrier();
    for (var t = 0u; t < BQ / LANES; t = t + 1u) {
      let ii = lane + LANES * t;
      var dp = 0.0;
      for (var e = 0u; e < EV; e = e + 1u) { dp = dp + Blk[ii * EVP + e] * Vs[r * EVP + e]; }
      Ds[ii * ROWS + r] = Ps[ii * ROWS + r] * (dp - Ls[ii * 2u + 1u]);
    }
    workgroupBarrier();
    for (var c = 0u; c < NV; c = c + 1u) {
      let col = lane + LANES * c;
      if (col < EV) { dv[c] = ps_blk(dv[c], r, ROWS, BQ, EVP, col); }
    }
    restage(0u, b, h, q0, BQ, L, E, EP, tid);
    for (var c = 0u; c < NK; c = c + 1u) {
      let col = lane + LANES * c;
      if (col < E) {
        var acc = dk[c];
        for (var ii = 0u; ii < BQ; ii = ii + 1u) { acc = acc + Ds[ii * ROWS + r] * Blk[ii * EP + col]; }
        dk[c] = acc;
      }
    }
  }
  }
  if (j >= S) { return; }
  for (var c = 0u; c < NK; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < E) { st7(P.dk_off + (bh * S + j) * E + col, dk[c] * P.scale); }
  }
  for (var c = 0u; c < NV; c = c + 1u) {
    let col = lane + LANES * c;
    if (col < EV) { st8(P.dv_off + (bh * S + j) * EV + col, dv[c]); }
  }
}
