// Index-generated sequences for arange, range, linspace and logspace (ops/range.cpp). Each
// invocation writes one element of a contiguous f32, int64 or float64 output, so no two share a word.
// Values follow PyTorch's CPU formulas bit for bit: where the CPU computes in double (or fuses a
// multiply-add, as its AVX2/AVX-512 kernels are compiled to), a small soft float with exact
// products and one rounding to nearest even reproduces it.
//
// Parameters: n (count), out_off (output element offset), halfway, steps_m1 (steps - 1), zero (read
// at run time so the compiler cannot fold or fuse through it), fused (1 when the CPU fuses
// start + step * i into one rounding), and per kind (arrays of 4 words; the other kinds' stay zero):
//   ARANGE_I64     start, step: int64 (lo, hi)
//   LINSPACE_HALF  start, end, step: word 0, f32 holding the f16/bf16 values
//   soft kinds     start, end, step: packed doubles (see sd_of), and for LOGSPACE: base_class,
//                  base_int (|base| if an integer in [2, 2^32) else 0), log2_base (log2|base| to 64
//                  bits: significand lo, hi, exponent, sign), narrow (1 for integer outputs
//                  narrower than int64)
// The first `halfway` elements are start + step * i, the rest end - step * (steps - 1 - i), the
// symmetric form CPU linspace uses (arange and range pass halfway = count).

@group(0) @binding(1) var<storage, read_write> out: array<u32>;

const KIND: u32 = {{KIND}}u;
const ARANGE_I64: u32 = 0u;
const ARANGE_ACC_F32: u32 = 1u;  // float accumulation (CPU's for f16/bf16 outputs)
const ARANGE_ACC_F64: u32 = 2u;  // double accumulation (CPU's for f32 outputs)
const LINSPACE_F32: u32 = 3u;
const LINSPACE_HALF: u32 = 4u;  // arithmetic in f16/bf16, rounded after every operation
const LINSPACE_INT: u32 = 5u;
const LOGSPACE_F32: u32 = 6u;
const LOGSPACE_INT: u32 = 7u;
const SEQ_F64: u32 = 8u;  // double arithmetic, float64 output (arange, range, linspace)

// Classes of the logspace base, by magnitude; bit 8 marks a negative base.
const MAG_ZERO: u32 = 0u;
const MAG_ONE: u32 = 1u;
const MAG_FINITE: u32 = 2u;
const MAG_INF: u32 = 3u;
const MAG_NAN: u32 = 4u;

// Rounds an f32 to the output's precision (identity, f16 or bf16), as CPU's Half arithmetic does.
fn rnd(x: f32) -> f32 { return {{ROUND}}; }

// A value the compiler cannot see through: x unchanged (P.zero is 0).
fn opaque(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | P.zero); }

// Infinity and NaN, built at run time: WGSL rejects them as constant expressions.
fn inf_f32() -> f32 { return bitcast<f32>(0x7f800000u | P.zero); }
fn nan_f32() -> f32 { return bitcast<f32>(0x7fc00000u | P.zero); }

// ---- 64-bit unsigned helpers over (lo, hi) ----

fn u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn u64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

fn u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }

fn u64_shl(a: vec2<u32>, s: u32) -> vec2<u32> {
  if (s == 0u) { return a; }
  if (s >= 64u) { return vec2<u32>(0u, 0u); }
  if (s >= 32u) { return vec2<u32>(0u, a.x << (s - 32u)); }
  return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}

fn u64_shr(a: vec2<u32>, s: u32) -> vec2<u32> {
  if (s == 0u) { return a; }
  if (s >= 64u) { return vec2<u32>(0u, 0u); }
  if (s >= 32u) { return vec2<u32>(a.y >> (s - 32u), 0u); }
  return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}

// Index of the highest set bit, -1 for zero.
fn u64_msb(a: vec2<u32>) -> i32 {
  if (a.y != 0u) { return 63 - i32(countLeadingZeros(a.y)); }
  if (a.x != 0u) { return 31 - i32(countLeadingZeros(a.x)); }
  return -1;
}

fn mul32(a: u32, b: u32) -> vec2<u32> {
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let ll = al * bl;
  let lh = al * bh;
  let hl = ah * bl;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return vec2<u32>((ll & 0xffffu) | (mid << 16u), ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u));
}

// Low 64 bits of a * b (two's complement wraps like int64 on the CPU).
fn u64_mul_lo(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = mul32(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}

// ---- 128-bit unsigned helpers over (w0 lowest, ..., w3) ----

fn u128_add(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  var r: vec4<u32>;
  var c = 0u;
  for (var k = 0u; k < 4u; k = k + 1u) {
    let s = a[k] + b[k];
    let s2 = s + c;
    c = select(0u, 1u, s < a[k]) + select(0u, 1u, s2 < s);
    r[k] = s2;
  }
  return r;
}

fn u128_sub(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  var r: vec4<u32>;
  var c = 0u;
  for (var k = 0u; k < 4u; k = k + 1u) {
    let d = a[k] - b[k];
    r[k] = d - c;
    c = select(0u, 1u, a[k] < b[k]) + select(0u, 1u, d < c);
  }
  return r;
}

fn u128_lt(a: vec4<u32>, b: vec4<u32>) -> bool {
  for (var k = 3i; k >= 0i; k = k - 1i) {
    if (a[k] != b[k]) { return a[k] < b[k]; }
  }
  return false;
}

// Shifts without loops over run-time bounds: lavapipe's LLVM spent minutes in loop strength
// reduction on the loop form of these (inlined many times into logspace's pow).
fn u128_shl(a: vec4<u32>, s: u32) -> vec4<u32> {
  let ws = s / 32u;
  let bs = s % 32u;
  var w = vec4<u32>(0u, 0u, 0u, 0u);
  if (ws == 0u) { w = a; }
  else if (ws == 1u) { w = vec4<u32>(0u, a.x, a.y, a.z); }
  else if (ws == 2u) { w = vec4<u32>(0u, 0u, a.x, a.y); }
  else if (ws == 3u) { w = vec4<u32>(0u, 0u, 0u, a.x); }
  if (bs == 0u) { return w; }
  let c = 32u - bs;
  return vec4<u32>(w.x << bs, (w.y << bs) | (w.x >> c), (w.z << bs) | (w.y >> c), (w.w << bs) | (w.z >> c));
}

fn u128_shr(a: vec4<u32>, s: u32) -> vec4<u32> {
  let ws = s / 32u;
  let bs = s % 32u;
  var w = vec4<u32>(0u, 0u, 0u, 0u);
  if (ws == 0u) { w = a; }
  else if (ws == 1u) { w = vec4<u32>(a.y, a.z, a.w, 0u); }
  else if (ws == 2u) { w = vec4<u32>(a.z, a.w, 0u, 0u); }
  else if (ws == 3u) { w = vec4<u32>(a.w, 0u, 0u, 0u); }
  if (bs == 0u) { return w; }
  let c = 32u - bs;
  return vec4<u32>((w.x >> bs) | (w.y << c), (w.y >> bs) | (w.z << c), (w.z >> bs) | (w.w << c), w.w >> bs);
}

// Index of the highest set bit, -1 for zero.
fn u128_msb(a: vec4<u32>) -> i32 {
  for (var k = 3i; k >= 0i; k = k - 1i) {
    if (a[k] != 0u) { return 32 * k + 31 - i32(countLeadingZeros(a[k])); }
  }
  return -1;
}

// ---- soft floating point: value = (-1)^neg * m * 2^e, m < 2^54 ----

struct SD {
  neg: bool,
  m: vec2<u32>,
  e: i32,
}

// A double packed by the host in three words: significand lo, significand hi | sign << 31, exponent.
fn sd_of(w: vec4<u32>) -> SD {
  return SD((w.y >> 31u) == 1u, vec2<u32>(w.x, w.y & 0x7fffffffu), bitcast<i32>(w.z));
}

// v * 2^e rounded to `bits` significant bits (53: double, 24: float), to nearest even.
fn sd_round(neg: bool, v: vec4<u32>, e: i32, bits: u32) -> SD {
  let sh = u128_msb(v) - i32(bits) + 1;
  if (sh <= 0) { return SD(neg, v.xy, e); }
  let q = u128_shr(v, u32(sh));
  let rem = u128_sub(v, u128_shl(q, u32(sh)));
  let half = u128_shl(vec4<u32>(1u, 0u, 0u, 0u), u32(sh - 1));
  var r = q.xy;
  if (u128_lt(half, rem) || (all(rem == half) && (r.x & 1u) == 1u)) { r = u64_add(r, vec2<u32>(1u, 0u)); }
  return SD(neg, r, e + sh);
}

// a + s * x * 2^xe (minus when `sub`), computed exactly and rounded once to `bits` bits: a fused
// multiply-add. Both operands are placed with their top bit at bit 125 of a 128-bit word; the smaller
// is shifted down with a sticky bit, which is exact for rounding (hardware adders do the same).
fn sd_fma(a: SD, s: SD, x: u32, xe: i32, sub: bool, bits: u32) -> SD {
  let p0 = mul32(s.m.x, x);
  let p1 = mul32(s.m.y, x);
  let w1 = p0.y + p1.x;
  var pv = vec4<u32>(p0.x, w1, p1.y + select(0u, 1u, w1 < p0.y), 0u);
  var pe = s.e + xe;
  let pneg = s.neg != sub;
  var av = vec4<u32>(a.m.x, a.m.y, 0u, 0u);
  var ae = a.e;
  let pm = u128_msb(pv);
  let am = u128_msb(av);
  if (pm < 0) {
    if (am < 0) { return SD(a.neg && pneg, vec2<u32>(0u, 0u), 0); }  // IEEE: -0 only from -0 + -0
    return sd_round(a.neg, av, ae, bits);
  }
  if (am < 0) { return sd_round(pneg, pv, pe, bits); }
  pv = u128_shl(pv, u32(125 - pm));
  pe = pe - (125 - pm);
  av = u128_shl(av, u32(125 - am));
  ae = ae - (125 - am);
  var xv = pv;
  var xe2 = pe;
  var xn = pneg;
  var yv = av;
  var ye = ae;
  var yn = a.neg;
  if (xe2 < ye) {
    xv = av;
    xe2 = ae;
    xn = a.neg;
    yv = pv;
    ye = pe;
    yn = pneg;
  }
  let d = u32(xe2 - ye);
  var ym: vec4<u32>;
  if (d >= 126u) {
    ym = vec4<u32>(1u, 0u, 0u, 0u);  // only a sticky bit is left
  } else {
    ym = u128_shr(yv, d);
    if (u128_lt(u128_shl(ym, d), yv)) { ym.x = ym.x | 1u; }
  }
  var m: vec4<u32>;
  var neg = xn;
  if (xn == yn) {
    m = u128_add(xv, ym);
  } else if (u128_lt(xv, ym)) {
    m = u128_sub(ym, xv);
    neg = yn;
  } else {
    m = u128_sub(xv, ym);
  }
  if (u128_msb(m) < 0) { return SD(false, vec2<u32>(0u, 0u), 0); }
  return sd_round(neg, m, xe2, bits);
}

const SD_ZERO = SD(false, vec2<u32>(0u, 0u), 0);

fn sd_is_zero(a: SD) -> bool { return a.m.x == 0u && a.m.y == 0u; }

// |a| truncated to an integer, as 64 bits (wraps beyond 2^64 like the CPU's undefined cast may).
fn sd_trunc_mag(a: SD) -> vec2<u32> {
  if (a.e >= 0) { return u64_shl(a.m, u32(a.e)); }
  return u64_shr(a.m, u32(-a.e));
}

fn sd_is_integral(a: SD) -> bool {
  if (a.e >= 0) { return true; }
  let s = u32(-a.e);
  if (s >= 64u) { return sd_is_zero(a); }
  return !u64_lt(u64_shl(u64_shr(a.m, s), s), a.m);
}

// Truncation toward zero to int64, as a double -> integer cast.
fn sd_to_i64(a: SD) -> vec2<u32> {
  let t = sd_trunc_mag(a);
  return select(t, i64_neg(t), a.neg);
}

// The double rounded to f32 (one rounding: m is exact).
fn sd_to_f32(a: SD) -> f32 {
  let top = u64_msb(a.m) + a.e;
  var r = 0.0;
  if (sd_is_zero(a) || top < -160) {
    r = 0.0;
  } else if (top >= 128) {
    r = inf_f32();
  } else {
    let h = a.e / 2;
    r = ldexp(ldexp(u64_to_f32(a.m), h), a.e - h);
  }
  return select(r, -r, a.neg);
}

// The double as IEEE binary64 bits (lo, hi). A value below the normal range is rounded once more,
// to the subnormal grid: the CPU rounds it once, so only subnormal results may differ in the last
// place.
fn sd_to_f64_bits(a: SD) -> vec2<u32> {
  let sign = select(0u, 0x80000000u, a.neg);
  let p = u64_msb(a.m);
  if (p < 0) { return vec2<u32>(0u, sign); }
  let top = p + a.e;
  if (top > 1023) { return vec2<u32>(0u, sign | 0x7ff00000u); }
  if (top < -1022) {
    let bits = top + 1075;
    if (bits <= 0) { return vec2<u32>(0u, sign); }
    let r = sd_round(a.neg, vec4<u32>(a.m.x, a.m.y, 0u, 0u), a.e, u32(bits));
    let f = u64_shl(r.m, u32(r.e + 1074));  // a carry into 2^52 encodes the smallest normal
    return vec2<u32>(f.x, sign | f.y);
  }
  var m = a.m;
  if (p > 52) {
    m = u64_shr(m, u32(p - 52));  // a rounding carry: the bits shifted out are zero
  } else {
    m = u64_shl(m, u32(52 - p));
  }
  return vec2<u32>(m.x, sign | (u32(top + 1023) << 20u) | (m.y & 0xfffffu));
}

// ---- the element values ----

// round(i) to f32 as (q, shift): i = q * 2^shift, the CPU's int64 -> float conversion.
fn float_index(i: u32) -> vec2<u32> {
  if (i < 0x1000000u) { return vec2<u32>(i, 0u); }
  let sh = 8u - countLeadingZeros(i);
  var q = i >> sh;
  let rem = i & ((1u << sh) - 1u);
  let half = 1u << (sh - 1u);
  if (rem > half || (rem == half && (q & 1u) == 1u)) { q = q + 1u; }
  return vec2<u32>(q, sh);
}

// Element i of the sequence, rounded to `bits` bits (53: the CPU computes in double, 24: in
// float; then the index is converted to float first, as `float * int64_t` does).
fn seq_value(i: u32, bits: u32) -> SD {
  let first = i < P.halfway;
  var base = sd_of(P.start[0]);
  if (!first) { base = sd_of(P.end[0]); }
  let step = sd_of(P.step[0]);
  var x = select(P.steps_m1 - i, i, first);
  var xe = 0;
  if (bits == 24u) {
    let f = float_index(x);
    x = f.x;
    xe = i32(f.y);
  }
  if (P.fused != 0u) { return sd_fma(base, step, x, xe, !first, bits); }
  let p = sd_fma(SD_ZERO, step, x, xe, false, bits);
  return sd_fma(base, p, 1u, 0, !first, bits);
}

// ---- 2^y in fixed point, for logspace ----

fn u64_mul_full(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
  let p00 = mul32(a.x, b.x);
  let p01 = mul32(a.x, b.y);
  let p10 = mul32(a.y, b.x);
  let p11 = mul32(a.y, b.y);
  var r = vec4<u32>(p00.x, p00.y, p11.x, p11.y);
  r = u128_add(r, vec4<u32>(0u, p01.x, p01.y, 0u));
  return u128_add(r, vec4<u32>(0u, p10.x, p10.y, 0u));
}

// High 64 bits of a * b: the product of two Q0.64 numbers.
fn mulhi(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return u64_mul_full(a, b).zw; }

// 2^(k/16) in Q1.63, ln 2 in Q0.64, 1/k! in Q0.64 for k = 2..10.
const EXP2_TABLE = array<vec2<u32>, 16>(
  vec2<u32>(0x00000000u, 0x80000000u), vec2<u32>(0xcc487b15u, 0x85aac367u), vec2<u32>(0xea8bd6e7u, 0x8b95c1e3u),
  vec2<u32>(0xab11c336u, 0x91c3d373u), vec2<u32>(0x8db8a96fu, 0x9837f051u), vec2<u32>(0x91a111aeu, 0x9ef53260u),
  vec2<u32>(0xb15138eau, 0xa5fed6a9u), vec2<u32>(0x42a14ac6u, 0xad583eeau), vec2<u32>(0xf9de6484u, 0xb504f333u),
  vec2<u32>(0x580c36bfu, 0xbd08a39fu), vec2<u32>(0x5506daddu, 0xc5672a11u), vec2<u32>(0x1f8480e4u, 0xce248c15u),
  vec2<u32>(0xd69d6af4u, 0xd744fccau), vec2<u32>(0x2a94e111u, 0xe0ccdeecu), vec2<u32>(0xdd24392fu, 0xeac0c6e7u),
  vec2<u32>(0x2486cc2cu, 0xf5257d15u));
const LN2_Q64 = vec2<u32>(0xd1cf79acu, 0xb17217f7u);
const INV_FACT = array<vec2<u32>, 9>(
  vec2<u32>(0x00000000u, 0x80000000u), vec2<u32>(0xaaaaaaabu, 0x2aaaaaaau), vec2<u32>(0xaaaaaaabu, 0x0aaaaaaau),
  vec2<u32>(0x22222222u, 0x02222222u), vec2<u32>(0x5b05b05bu, 0x005b05b0u), vec2<u32>(0x0d00d00du, 0x000d00d0u),
  vec2<u32>(0x01a01a02u, 0x0001a01au), vec2<u32>(0xc74aad8eu, 0x00002e3bu), vec2<u32>(0x93edde28u, 0x0000049fu));

// 2^f for f in [0, 1) given in Q0.64, as Q2.62, to about 2^-60: a 16-entry table for the top four
// bits, and e^z = 1 + z + z^2 (1/2! + z/3! + ... + z^8/10!) for the rest (z < ln 2 / 16).
fn exp2_frac(f: vec2<u32>) -> vec2<u32> {
  let k = f.y >> 28u;
  let z = mulhi(vec2<u32>(f.x, f.y & 0x0fffffffu), LN2_Q64);
  var q = INV_FACT[8];
  for (var j = 7i; j >= 0i; j = j - 1i) { q = u64_add(INV_FACT[j], mulhi(z, q)); }
  let ez = u64_add(z, mulhi(mulhi(z, z), q));                         // e^z - 1, Q0.64
  let em = u64_add(vec2<u32>(0u, 0x80000000u), u64_shr(ez, 1u));     // e^z, Q1.63
  return u64_mul_full(EXP2_TABLE[k], em).zw;                          // Q1.63 * Q1.63 >> 64: Q2.62
}

// |base|^t for a finite |base| other than 0 and 1: 2^(t * log2|base|), with the product exact and
// log2|base| to 64 bits (from the host's long double), then rounded to a double as CPU's pow is.
fn pow_general(t: SD) -> SD {
  let lm = P.log2_base[0].xy;
  let le = bitcast<i32>(P.log2_base[0].z);
  let neg = t.neg != (P.log2_base[0].w != 0u);
  let prod = u64_mul_full(t.m, lm);
  let msb = u128_msb(prod);
  if (msb < 0) { return SD(false, vec2<u32>(0x80000000u, 0u), -31); }  // 2^0
  // |y| as Q.64 fixed point: prod * 2^(t.e + le + 64)
  let sh = t.e + le + 64;
  if (msb + sh >= 64 + 11) {  // |y| >= 2048: beyond every float's range
    if (neg) { return SD(false, vec2<u32>(0u, 0u), 0); }
    return SD(false, vec2<u32>(0u, 0x80000000u), 2000);
  }
  var y: vec4<u32>;
  if (sh >= 0) { y = u128_shl(prod, u32(sh)); }
  else if (sh > -128) { y = u128_shr(prod, u32(-sh)); }
  else { y = vec4<u32>(0u, 0u, 0u, 0u); }
  var n = i32(y.z);
  var frac = y.xy;
  if (neg) {
    n = -n;
    if (frac.x != 0u || frac.y != 0u) {
      n = n - 1;
      frac = u64_sub(vec2<u32>(0u, 0u), frac);
    }
  }
  return sd_round(false, vec4<u32>(exp2_frac(frac), 0u, 0u), n - 62, 53u);
}

// base^t for logspace, as CPU's std::pow(double, double): either a special value or a magnitude,
// and a sign.
struct PowResult {
  special: bool,
  f: f32,    // the special value: 1, 0, inf or NaN
  mag: SD,   // otherwise |base|^t, rounded to a double
  neg: bool,
}

fn logspace_pow(t: SD) -> PowResult {
  let cls = P.base_class & 0xffu;
  let base_neg = (P.base_class & 0x100u) != 0u;
  let integral = sd_is_integral(t);
  // parity of an integral t
  var odd = false;
  if (integral && !sd_is_zero(t)) {
    if (t.e == 0) { odd = (t.m.x & 1u) == 1u; }
    else if (t.e < 0) { odd = (u64_shr(t.m, u32(-t.e)).x & 1u) == 1u; }
  }
  let nan = nan_f32();
  let inf = inf_f32();
  var r = PowResult(true, 1.0, SD_ZERO, base_neg && odd);
  if (base_neg && !integral && cls != MAG_NAN && cls != MAG_ZERO) { r.f = nan; r.neg = false; return r; }
  if (sd_is_zero(t)) { r.neg = false; return r; }  // pow(x, 0) = 1, NaN included
  if (cls == MAG_ONE) { return r; }
  if (cls == MAG_NAN) { r.f = nan; r.neg = false; return r; }
  if (cls == MAG_ZERO) { r.f = select(0.0, inf, t.neg); return r; }
  if (cls == MAG_INF) { r.f = select(inf, 0.0, t.neg); return r; }
  r.special = false;
  // An integer base to a natural power: exact, then rounded to a double like CPU's pow result.
  let ib = P.base_int;
  if (ib != 0u && integral && !t.neg && t.e <= 0) {
    let k = sd_trunc_mag(t);
    if (k.y == 0u && k.x < 64u) {
      var v = vec2<u32>(1u, 0u);
      var ok = true;
      for (var j = 0u; j < k.x; j = j + 1u) {
        let lo = mul32(v.x, ib);
        let hi = mul32(v.y, ib);
        let top = hi.x + lo.y;
        if (hi.y != 0u || top < hi.x) { ok = false; break; }
        v = vec2<u32>(lo.x, top);
      }
      if (ok) {
        r.mag = sd_round(false, vec4<u32>(v, 0u, 0u), 0, 53u);
        return r;
      }
    }
  }
  r.mag = pow_general(t);
  return r;
}

// A double's conversion to an integer as x86-64 does it (cvttsd2si): truncation, and the
// "integer indefinite" INT_MIN when out of range; `narrow` for int32 and narrower types, which
// C++ converts through a 32-bit conversion.
fn to_int_x86(a: SD, narrow: bool) -> vec2<u32> {
  let lim = select(63, 31, narrow);
  if (!sd_is_zero(a) && u64_msb(a.m) + a.e >= lim) {  // |a| >= 2^lim (INT_MIN itself has the same bits)
    return select(vec2<u32>(0u, 0x80000000u), vec2<u32>(0x80000000u, 0xffffffffu), narrow);
  }
  return sd_to_i64(a);
}

fn store_i64(e: u32, v: vec2<u32>) {
  out[2u * e] = v.x;
  out[2u * e + 1u] = v.y;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  if (i >= P.n) { return; }
  let e = P.out_off + i;
  if (KIND == ARANGE_I64) {
    let start = P.start[0].xy;
    let step = P.step[0].xy;
    store_i64(e, u64_add(start, u64_mul_lo(step, vec2<u32>(i, 0u))));
  } else if (KIND == ARANGE_ACC_F32 || KIND == LINSPACE_F32) {
    out[e] = bitcast<u32>(sd_to_f32(seq_value(i, 24u)));
  } else if (KIND == ARANGE_ACC_F64) {
    out[e] = bitcast<u32>(sd_to_f32(seq_value(i, 53u)));
  } else if (KIND == SEQ_F64) {
    store_i64(e, sd_to_f64_bits(seq_value(i, 53u)));
  } else if (KIND == LINSPACE_HALF) {
    // c10::Half arithmetic: each operation in f32, rounded back to the half type.
    let start = bitcast<f32>(P.start[0].x);
    let end = bitcast<f32>(P.end[0].x);
    let step = bitcast<f32>(P.step[0].x);
    var v: f32;
    if (i < P.halfway) {
      v = rnd(start + opaque(rnd(step * rnd(u32_to_f32(i)))));
    } else {
      v = rnd(end - opaque(rnd(step * rnd(u32_to_f32(P.steps_m1 - i)))));
    }
    out[e] = bitcast<u32>(v);
  } else if (KIND == LINSPACE_INT) {
    store_i64(e, sd_to_i64(seq_value(i, 53u)));
  } else if (KIND == LOGSPACE_F32) {
    let p = logspace_pow(seq_value(i, 53u));
    var f = p.f;
    if (!p.special) { f = sd_to_f32(p.mag); }
    out[e] = bitcast<u32>(select(f, -f, p.neg));
  } else if (KIND == LOGSPACE_INT) {
    let p = logspace_pow(seq_value(i, 53u));
    let narrow = P.narrow != 0u;
    // The specials 0, 1, inf and NaN as soft doubles (inf and NaN as a value too large to convert).
    // Written without branching on them: lavapipe's compiler took minutes over the branchy form.
    var m = p.mag;
    if (p.special) {
      let big = (bitcast<u32>(p.f) & 0x7fffffffu) > 0x3f800000u;  // inf or NaN (an integer test: drivers may
                                                                  // fold float compares assuming no NaN)
      m = SD(false, vec2<u32>(select(0u, 1u, p.f == 1.0 || big), 0u), select(0, 4000, big));
    }
    m.neg = p.neg;
    store_i64(e, to_int_x86(m, narrow));
  }
}
