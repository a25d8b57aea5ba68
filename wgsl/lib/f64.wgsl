// IEEE binary64 emulated on vec2<u32> (x = low word, y = high word of the bits), rounding to nearest
// even exactly as the CPU does (docs/design.md, "Dtype storage"). Builds on int64.wgsl (u64 shifts).

const F64_QNAN: vec2<u32> = vec2<u32>(0u, 0xfff80000u);  // x86's default NaN (invalid operations)

fn d64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn d64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}
fn d64_clz(a: vec2<u32>) -> u32 {
  if (a.y != 0u) { return countLeadingZeros(a.y); }
  return 32u + countLeadingZeros(a.x);
}
fn d64_nz(a: vec2<u32>) -> bool { return (a.x | a.y) != 0u; }
// Right shift by any count, OR-ing every bit shifted out into bit 0 (the sticky bit).
fn d64_shr_sticky(a: vec2<u32>, n: u32) -> vec2<u32> {
  if (n == 0u) { return a; }
  if (n >= 64u) { return vec2<u32>(select(0u, 1u, d64_nz(a)), 0u); }
  let r = u64_shr(a, n);
  let back = u64_shl(r, n);
  return vec2<u32>(r.x | select(0u, 1u, back.x != a.x || back.y != a.y), r.y);
}

fn f64_sign(a: vec2<u32>) -> u32 { return a.y >> 31u; }
fn f64_exp(a: vec2<u32>) -> u32 { return (a.y >> 20u) & 0x7ffu; }
fn f64_frac(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(a.x, a.y & 0xfffffu); }
fn f64_is_nan(a: vec2<u32>) -> bool { return f64_exp(a) == 0x7ffu && d64_nz(f64_frac(a)); }
fn f64_is_inf(a: vec2<u32>) -> bool { return (a.y & 0x7fffffffu) == 0x7ff00000u && a.x == 0u; }
fn f64_is_finite(a: vec2<u32>) -> bool { return f64_exp(a) != 0x7ffu; }
fn f64_is_zero(a: vec2<u32>) -> bool { return ((a.y & 0x7fffffffu) | a.x) == 0u; }
fn f64_nz(a: vec2<u32>) -> bool { return !f64_is_zero(a); }
fn f64_quiet(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(a.x, a.y | 0x80000u); }
fn f64_abs(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(a.x, a.y & 0x7fffffffu); }
fn f64_neg(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(a.x, a.y ^ 0x80000000u); }
fn f64_inf(s: u32) -> vec2<u32> { return vec2<u32>(0u, (s << 31u) | 0x7ff00000u); }
fn f64_zero(s: u32) -> vec2<u32> { return vec2<u32>(0u, s << 31u); }
fn b2d(c: bool) -> vec2<u32> { return vec2<u32>(0u, select(0u, 0x3ff00000u, c)); }

// The significand with its leading one at bit 52 and the matching biased exponent (subnormals are
// normalised, so the exponent may be <= 0). Finite nonzero inputs only.
fn f64_unpack(a: vec2<u32>) -> vec3<u32> {
  let e = f64_exp(a);
  let f = f64_frac(a);
  if (e != 0u) { return vec3<u32>(f.x, f.y | 0x100000u, e); }
  let sh = d64_clz(f) - 11u;
  let m = u64_shl(f, sh);
  return vec3<u32>(m.x, m.y, bitcast<u32>(1 - i32(sh)));
}

// sign, biased exponent e and a significand m whose leading one is at bit 62 (value m * 2^(e-1085))
// -> the nearest binary64 (ties to even), subnormal, or infinity.
fn f64_round_pack(s: u32, e: i32, m0: vec2<u32>) -> vec2<u32> {
  if (e >= 0x7ff) { return f64_inf(s); }
  var m = m0;
  var sub = false;
  if (e <= 0) {
    m = d64_shr_sticky(m, u32(1 - e));
    sub = true;
  }
  let rb = m.x & 0x3ffu;
  m = u64_shr(m, 10u);
  if (rb > 0x200u || (rb == 0x200u && (m.x & 1u) == 1u)) { m = d64_add(m, vec2<u32>(1u, 0u)); }
  var r = m;
  if (!sub) { r = d64_add(vec2<u32>(0u, u32(e - 1) << 20u), m); }
  return vec2<u32>(r.x, r.y | (s << 31u));
}

// ---- conversions ---------------------------------------------------------------------------------

// float32 bits -> binary64, exact; a NaN keeps its payload and is quieted (as cvtss2sd).
fn f64_from_f32_bits(x: u32) -> vec2<u32> {
  let s = x & 0x80000000u;
  let e = (x >> 23u) & 0xffu;
  let m = x & 0x7fffffu;
  if (e == 255u) {
    if (m == 0u) { return vec2<u32>(0u, s | 0x7ff00000u); }
    let q = m | 0x400000u;
    return vec2<u32>(q << 29u, s | 0x7ff00000u | (q >> 3u));
  }
  if (e == 0u) {
    if (m == 0u) { return vec2<u32>(0u, s); }
    let sh = countLeadingZeros(m) - 8u;  // leading one to bit 23
    let mm = (m << sh) & 0x7fffffu;
    let de = 1u + 896u - sh;
    return vec2<u32>(mm << 29u, s | (de << 20u) | (mm >> 3u));
  }
  return vec2<u32>(m << 29u, s | ((e + 896u) << 20u) | (m >> 3u));
}

// Unsigned 64-bit integer -> binary64, ties to even.
fn f64_from_u64(v: vec2<u32>) -> vec2<u32> {
  if (!d64_nz(v)) { return vec2<u32>(0u, 0u); }
  let lz = d64_clz(v);
  // Leading one to bit 62 (a 63-bit value keeps all its bits, so nothing is lost before rounding).
  let m = select(u64_shl(v, lz - 1u), d64_shr_sticky(v, 1u), lz == 0u);
  return f64_round_pack(0u, 1085 - 62 + (63 - i32(lz)), m);
}
fn f64_from_i64(v: vec2<u32>) -> vec2<u32> {
  let neg = (v.y >> 31u) == 1u;
  let a = f64_from_u64(select(v, i64_neg(v), neg));
  return select(a, f64_neg(a), neg);
}
fn f64_from_i32(v: i32) -> vec2<u32> { return f64_from_i64(i64_from_i32(v)); }

// binary64 -> float32 bits, ties to even, subnormals, overflow to infinity; a NaN is quieted and
// keeps its top payload bits (as cvtsd2ss).
fn f64_to_f32_bits(a: vec2<u32>) -> u32 {
  let s = a.y & 0x80000000u;
  let e = i32(f64_exp(a));
  let f = f64_frac(a);
  if (e == 0x7ff) {
    if (!d64_nz(f)) { return s | 0x7f800000u; }
    return s | 0x7fc00000u | (u64_shr(f, 29u).x & 0x7fffffu);
  }
  if (e == 0 && !d64_nz(f)) { return s; }
  if (e == 0) { return s; }  // binary64 subnormals are far below float32's smallest subnormal
  let fe = e - 1023 + 127;
  if (fe >= 255) { return s | 0x7f800000u; }
  // 24-bit significand plus 29 rounding bits in a 64-bit value.
  var m = vec2<u32>(f.x, f.y | 0x100000u);
  var sh = 29u;
  var be = fe;
  if (fe <= 0) {
    sh = 29u + u32(1 - fe);
    be = 0;
  }
  m = d64_shr_sticky(m, sh - 2u);  // keep two rounding bits: half and sticky
  var r = u64_shr(m, 2u).x;
  let rb = m.x & 3u;
  // rb: bit 1 = half, bit 0 = sticky
  if (rb == 3u || (rb == 2u && (r & 1u) == 1u)) { r = r + 1u; }
  if (be == 0) { return s | r; }  // may round up into the smallest normal: still right
  return s | ((u32(be - 1) << 23u) + r);
}
fn f64_to_f32(a: vec2<u32>) -> f32 { return bitcast<f32>(f64_to_f32_bits(a)); }

// binary64 -> int64 truncating; NaN and out-of-range give INT64_MIN (cvttsd2si).
fn f64_to_i64(a: vec2<u32>) -> vec2<u32> {
  let e = i32(f64_exp(a));
  if (e < 1023) { return vec2<u32>(0u, 0u); }
  if (e >= 1023 + 63) { return vec2<u32>(0u, 0x80000000u); }
  let m = vec2<u32>(a.x, (a.y & 0xfffffu) | 0x100000u);
  let k = e - 1023;  // value = m * 2^(k - 52)
  var r = select(u64_shr(m, u32(52 - k)), u64_shl(m, u32(k - 52)), k >= 52);
  return select(r, i64_neg(r), f64_sign(a) == 1u);
}
// binary64 -> int32 truncating; NaN and out-of-range give INT32_MIN (cvttsd2si).
fn f64_to_i32(a: vec2<u32>) -> i32 {
  let e = i32(f64_exp(a));
  if (e < 1023) { return 0i; }
  let r = f64_to_i64(a);
  let neg = f64_sign(a) == 1u;
  // |value| < 2^31, or exactly -2^31.
  if (e >= 1023 + 31) {
    if (neg && e == 1023 + 31 && r.x == 0x80000000u) { return bitcast<i32>(r.x); }
    return i32(-2147483647) - 1;
  }
  return bitcast<i32>(r.x);
}

// ---- arithmetic ----------------------------------------------------------------------------------

fn f64_nan2(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_quiet(select(b, a, f64_is_nan(a))); }

fn f64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(a) || f64_is_nan(b)) { return f64_nan2(a, b); }
  let sa = f64_sign(a);
  let sb = f64_sign(b);
  if (f64_is_inf(a)) {
    if (f64_is_inf(b) && sa != sb) { return F64_QNAN; }
    return a;
  }
  if (f64_is_inf(b)) { return b; }
  if (f64_is_zero(a)) {
    if (f64_is_zero(b)) { return f64_zero(sa & sb); }
    return b;
  }
  if (f64_is_zero(b)) { return a; }
  let ua = f64_unpack(a);
  let ub = f64_unpack(b);
  var ma = u64_shl(ua.xy, 10u);
  var mb = u64_shl(ub.xy, 10u);
  var ea = bitcast<i32>(ua.z);
  var eb = bitcast<i32>(ub.z);
  var s = sa;
  // Make a the larger magnitude.
  if (eb > ea || (eb == ea && u64_lt(ma, mb))) {
    let tm = ma; ma = mb; mb = tm;
    let te = ea; ea = eb; eb = te;
    s = sb;
  }
  mb = d64_shr_sticky(mb, u32(ea - eb));
  if (sa == sb) {
    var m = d64_add(ma, mb);
    var e = ea;
    if ((m.y >> 31u) == 1u) {
      m = d64_shr_sticky(m, 1u);
      e = e + 1;
    }
    return f64_round_pack(s, e, m);
  }
  var m = d64_sub(ma, mb);
  if (!d64_nz(m)) { return vec2<u32>(0u, 0u); }
  let sh = d64_clz(m) - 1u;
  m = u64_shl(m, sh);
  return f64_round_pack(s, ea - i32(sh), m);
}
fn f64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(b)) { return f64_nan2(a, b); }
  return f64_add(a, f64_neg(b));
}

// 64 x 64 -> 128-bit unsigned product, as four words (low first).
fn d64_mul_wide(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
  let p00 = u32_mul_wide(a.x, b.x);
  let p01 = u32_mul_wide(a.x, b.y);
  let p10 = u32_mul_wide(a.y, b.x);
  let p11 = u32_mul_wide(a.y, b.y);
  var mid = d64_add(vec2<u32>(p00.y, 0u), vec2<u32>(p01.x, 0u));
  mid = d64_add(mid, vec2<u32>(p10.x, 0u));
  var hi = d64_add(p11, vec2<u32>(p01.y, 0u));
  hi = d64_add(hi, vec2<u32>(p10.y, 0u));
  hi = d64_add(hi, vec2<u32>(mid.y, 0u));
  return vec4<u32>(p00.x, mid.x, hi.x, hi.y);
}

fn f64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(a) || f64_is_nan(b)) { return f64_nan2(a, b); }
  let s = f64_sign(a) ^ f64_sign(b);
  if (f64_is_inf(a) || f64_is_inf(b)) {
    if (f64_is_zero(a) || f64_is_zero(b)) { return F64_QNAN; }
    return f64_inf(s);
  }
  if (f64_is_zero(a) || f64_is_zero(b)) { return f64_zero(s); }
  let ua = f64_unpack(a);
  let ub = f64_unpack(b);
  // Product of two 53-bit significands: 105 or 106 bits; keep bits 42.. with a sticky bit.
  let p = d64_mul_wide(ua.xy, ub.xy);
  var m = vec2<u32>((p.y >> 10u) | (p.z << 22u), (p.z >> 10u) | (p.w << 22u));
  let lost = (p.y & 0x3ffu) | p.x;
  m.x = m.x | select(0u, 1u, lost != 0u);
  var e = bitcast<i32>(ua.z) + bitcast<i32>(ub.z) - 1023;
  if ((m.y >> 31u) == 1u) {
    m = d64_shr_sticky(m, 1u);
    e = e + 1;
  }
  return f64_round_pack(s, e, m);
}

fn f64_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(a) || f64_is_nan(b)) { return f64_nan2(a, b); }
  let s = f64_sign(a) ^ f64_sign(b);
  if (f64_is_inf(a)) {
    if (f64_is_inf(b)) { return F64_QNAN; }
    return f64_inf(s);
  }
  if (f64_is_inf(b)) { return f64_zero(s); }
  if (f64_is_zero(b)) {
    if (f64_is_zero(a)) { return F64_QNAN; }
    return f64_inf(s);
  }
  if (f64_is_zero(a)) { return f64_zero(s); }
  let ua = f64_unpack(a);
  let ub = f64_unpack(b);
  var r = ua.xy;
  let d = ub.xy;
  var e = bitcast<i32>(ua.z) - bitcast<i32>(ub.z) + 1023;
  if (u64_lt(r, d)) {
    r = u64_shl(r, 1u);
    e = e - 1;
  }
  // 63 quotient bits, leading one at bit 62, by restoring division.
  var q = vec2<u32>(0u, 0u);
  for (var i = 0u; i < 63u; i = i + 1u) {
    q = u64_shl(q, 1u);
    if (!u64_lt(r, d)) {
      r = d64_sub(r, d);
      q.x = q.x | 1u;
    }
    r = u64_shl(r, 1u);
  }
  q.x = q.x | select(0u, 1u, d64_nz(r));
  return f64_round_pack(s, e, q);
}

// A square root taken digit by digit (f64_sqrt, f64_hypot): the root so far and the remainder; each
// step brings down two radicand bits `two` and decides one root bit.
struct Root64 { root: vec2<u32>, rem: vec2<u32>, };
fn root_digit(r: Root64, two: u32) -> Root64 {
  var rem = u64_shl(r.rem, 2u);
  rem.x = rem.x | two;
  let trial = u64_shl(r.root, 2u) | vec2<u32>(1u, 0u);
  var root = u64_shl(r.root, 1u);
  if (!u64_lt(rem, trial)) {
    rem = d64_sub(rem, trial);
    root.x = root.x | 1u;
  }
  return Root64(root, rem);
}

fn f64_sqrt(a: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(a)) { return f64_quiet(a); }
  if (f64_is_zero(a)) { return a; }
  if (f64_sign(a) == 1u) { return F64_QNAN; }
  if (f64_is_inf(a)) { return a; }
  let u = f64_unpack(a);
  var m = u.xy;  // [2^52, 2^53)
  var k = bitcast<i32>(u.z) - 1023;
  if ((k & 1) != 0) {
    m = u64_shl(m, 1u);
    k = k - 1;
  }
  // Root of m * 2^56 (110 bits), two radicand bits per step: 55 root bits.
  var r = Root64(vec2<u32>(0u, 0u), vec2<u32>(0u, 0u));
  for (var i = 0u; i < 55u; i = i + 1u) {
    var two = 0u;
    if (i <= 26u) { two = u64_shr(m, 52u - 2u * i).x & 3u; }
    r = root_digit(r, two);
  }
  var mr = u64_shl(r.root, 8u);
  mr.x = mr.x | select(0u, 1u, d64_nz(r.rem));
  return f64_round_pack(0u, k / 2 + 1023, mr);
}

// a * b + c with one rounding.
fn f64_fma(a: vec2<u32>, b: vec2<u32>, c: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(a) || f64_is_nan(b) || f64_is_nan(c)) {
    return f64_quiet(select(select(c, b, f64_is_nan(b)), a, f64_is_nan(a)));
  }
  let s = f64_sign(a) ^ f64_sign(b);
  if (f64_is_inf(a) || f64_is_inf(b)) {
    if (f64_is_zero(a) || f64_is_zero(b)) { return F64_QNAN; }
    return f64_add(f64_inf(s), c);
  }
  if (f64_is_zero(a) || f64_is_zero(b) || f64_is_inf(c)) { return f64_add(f64_zero(s), c); }
  let ua = f64_unpack(a);
  let ub = f64_unpack(b);
  // Exact 106-bit product P = p * 2^(ep - 1075 - 52), p in [2^104, 2^106).
  let p = d64_mul_wide(ua.xy, ub.xy);
  let ep = bitcast<i32>(ua.z) + bitcast<i32>(ub.z) - 1023;
  if (f64_is_zero(c)) { return f64_mul(a, b); }
  let uc = f64_unpack(c);
  let sc = f64_sign(c);
  // Both as 128-bit values with the leading one at bit 125 (product) or 125 (addend), then align.
  var P = p;  // leading one at bit 104 or 105
  var pe = ep;
  // shift product so leading one sits at bit 125 (value = P * 2^(pe - 1023 - 125))
  var sh = 21u;
  if ((p.w >> 9u) != 0u) {
    sh = 20u;
    pe = pe + 1;
  }
  P = d128_shl(P, sh);
  var C = d128_shl(vec4<u32>(uc.x, uc.y, 0u, 0u), 73u);  // leading one at bit 125
  var ec = bitcast<i32>(uc.z);
  var sr = s;
  var big = P;
  var small = C;
  var eb = pe;
  var es = ec;
  var sbig = s;
  var ssmall = sc;
  if (ec > pe || (ec == pe && d128_lt(P, C))) {
    big = C; small = P; eb = ec; es = pe; sbig = sc; ssmall = s;
  }
  small = d128_shr_sticky(small, u32(eb - es));
  var m: vec4<u32>;
  var e = eb;
  if (sbig == ssmall) {
    m = d128_add(big, small);
    if ((m.w >> 30u) != 0u) {
      m = d128_shr_sticky(m, 1u);
      e = e + 1;
    }
  } else {
    m = d128_sub(big, small);
    if (!d128_nz(m)) { return vec2<u32>(0u, 0u); }
    let lz = d128_clz(m) - 2u;
    m = d128_shl(m, lz);
    e = e - i32(lz);
  }
  // Leading one at bit 125: keep bits 63.. as the 64-bit significand with leading one at 62.
  var r = vec2<u32>((m.y >> 31u) | (m.z << 1u), (m.z >> 31u) | (m.w << 1u));
  r.x = r.x | select(0u, 1u, (m.x | (m.y & 0x7fffffffu)) != 0u);
  return f64_round_pack(sbig, e, r);
}

fn d128_nz(a: vec4<u32>) -> bool { return (a.x | a.y | a.z | a.w) != 0u; }
fn d128_clz(a: vec4<u32>) -> u32 {
  if (a.w != 0u) { return countLeadingZeros(a.w); }
  if (a.z != 0u) { return 32u + countLeadingZeros(a.z); }
  if (a.y != 0u) { return 64u + countLeadingZeros(a.y); }
  return 96u + countLeadingZeros(a.x);
}
fn d128_lt(a: vec4<u32>, b: vec4<u32>) -> bool {
  if (a.w != b.w) { return a.w < b.w; }
  if (a.z != b.z) { return a.z < b.z; }
  if (a.y != b.y) { return a.y < b.y; }
  return a.x < b.x;
}
fn d128_add(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let lo = d64_add(a.xy, b.xy);
  let c = select(0u, 1u, u64_lt(lo, a.xy));
  let hi = d64_add(d64_add(a.zw, b.zw), vec2<u32>(c, 0u));
  return vec4<u32>(lo, hi);
}
fn d128_sub(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let lo = d64_sub(a.xy, b.xy);
  let c = select(0u, 1u, u64_lt(a.xy, b.xy));
  let hi = d64_sub(d64_sub(a.zw, b.zw), vec2<u32>(c, 0u));
  return vec4<u32>(lo, hi);
}
// Shifts by whole words, then bits.
fn d128_shl(a0: vec4<u32>, n: u32) -> vec4<u32> {
  var a = a0;
  var k = n;
  while (k >= 32u) {
    a = vec4<u32>(0u, a.x, a.y, a.z);
    k = k - 32u;
  }
  if (k == 0u) { return a; }
  return vec4<u32>(a.x << k, (a.y << k) | (a.x >> (32u - k)), (a.z << k) | (a.y >> (32u - k)),
                   (a.w << k) | (a.z >> (32u - k)));
}
fn d128_shr_sticky(a0: vec4<u32>, n: u32) -> vec4<u32> {
  if (n == 0u) { return a0; }
  if (n >= 128u) { return vec4<u32>(select(0u, 1u, d128_nz(a0)), 0u, 0u, 0u); }
  var a = a0;
  var k = n;
  var lost = 0u;
  while (k >= 32u) {
    lost = lost | a.x;
    a = vec4<u32>(a.y, a.z, a.w, 0u);
    k = k - 32u;
  }
  if (k != 0u) {
    lost = lost | (a.x << (32u - k));
    a = vec4<u32>((a.x >> k) | (a.y << (32u - k)), (a.y >> k) | (a.z << (32u - k)), (a.z >> k) | (a.w << (32u - k)),
                  a.w >> k);
  }
  a.x = a.x | select(0u, 1u, lost != 0u);
  return a;
}

// ---- comparisons and rounding --------------------------------------------------------------------

// An order-preserving unsigned key (for non-NaN values; -0 and +0 differ by one).
fn f64_key(a: vec2<u32>) -> vec2<u32> {
  if ((a.y >> 31u) == 1u) { return vec2<u32>(~a.x, ~a.y); }
  return vec2<u32>(a.x, a.y | 0x80000000u);
}
fn f64_eq(a: vec2<u32>, b: vec2<u32>) -> bool {
  if (f64_is_nan(a) || f64_is_nan(b)) { return false; }
  return (a.x == b.x && a.y == b.y) || (f64_is_zero(a) && f64_is_zero(b));
}
fn f64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  if (f64_is_nan(a) || f64_is_nan(b)) { return false; }
  if (f64_is_zero(a) && f64_is_zero(b)) { return false; }
  return u64_lt(f64_key(a), f64_key(b));
}
fn f64_le(a: vec2<u32>, b: vec2<u32>) -> bool { return f64_lt(a, b) || f64_eq(a, b); }

// The larger (or, larger false, the smaller) of a and b; on a tie (-0 vs +0) the first operand, as
// CPU. A NaN operand wins (nan_wins: torch.maximum/minimum) or loses (fmax/fmin). The callers pass
// constants, so each compiles to its own branch-free choice.
fn f64_pick(a: vec2<u32>, b: vec2<u32>, larger: bool, nan_wins: bool) -> vec2<u32> {
  if (f64_is_nan(a)) { return select(b, a, nan_wins); }
  if (f64_is_nan(b)) { return select(a, b, nan_wins); }
  if (larger) { return select(a, b, f64_lt(a, b)); }
  return select(a, b, f64_lt(b, a));
}
fn f64_maximum(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_pick(a, b, true, true); }
fn f64_minimum(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_pick(a, b, false, true); }
fn f64_fmax(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_pick(a, b, true, false); }
fn f64_fmin(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return f64_pick(a, b, false, false); }
// clamp with scalar or tensor bounds: a NaN input or bound gives NaN; lo > hi gives hi.
fn f64_clamp_t(x: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> vec2<u32> {
  return f64_minimum(f64_maximum(x, lo), hi);
}
fn f64_clamp_s(x: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> vec2<u32> { return f64_clamp_t(x, lo, hi); }
fn f64_clamp_min_s(x: vec2<u32>, lo: vec2<u32>) -> vec2<u32> { return f64_maximum(x, lo); }
fn f64_clamp_max_s(x: vec2<u32>, hi: vec2<u32>) -> vec2<u32> { return f64_minimum(x, hi); }

// Round to an integer: mode 0 trunc, 1 floor, 2 ceil, 3 nearest with ties to even.
fn f64_round_mode(a: vec2<u32>, mode: u32) -> vec2<u32> {
  let e = i32(f64_exp(a)) - 1023;
  if (e >= 52) { return select(a, f64_quiet(a), f64_is_nan(a)); }
  let s = f64_sign(a);
  if (e < 0) {
    if (f64_is_zero(a)) { return a; }
    var one = false;
    if (mode == 1u) { one = s == 1u; }
    if (mode == 2u) { one = s == 0u; }
    if (mode == 3u) { one = e == -1 && d64_nz(f64_frac(a)); }
    return select(f64_zero(s), vec2<u32>(0u, (s << 31u) | 0x3ff00000u), one);
  }
  let fb = u32(52 - e);  // fraction bits below the units place
  let unit = u64_shl(vec2<u32>(1u, 0u), fb);
  let mask = d64_sub(unit, vec2<u32>(1u, 0u));
  let fr = vec2<u32>(a.x & mask.x, a.y & mask.y);
  if (!d64_nz(fr)) { return a; }
  let t = vec2<u32>(a.x & ~mask.x, a.y & ~mask.y);
  var up = false;
  if (mode == 1u) { up = s == 1u; }
  if (mode == 2u) { up = s == 0u; }
  if (mode == 3u) {
    let half = u64_shr(unit, 1u);
    up = u64_lt(half, fr) || (fr.x == half.x && fr.y == half.y && (u64_shr(t, fb).x & 1u) == 1u);
  }
  return select(t, d64_add(t, unit), up);
}

// torch.sign: -1, 0 or 1; +0 for zeros and NaN, as CPU's (0 < x) - (x < 0).
fn f64_sgn(a: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(a) || f64_is_zero(a)) { return vec2<u32>(0u, 0u); }
  return vec2<u32>(0u, (a.y & 0x80000000u) | 0x3ff00000u);
}

// ---- remainders, floor division, lerp, nextafter (CPU's formulas, each step exact or one rounding) -

// fmod: exact, as IEEE's: the significand of a reduced modulo b's, one exponent step at a time;
// the sign of a. NaN for b = 0, an infinite a or a NaN operand; a itself for |a| < |b| or b infinite.
fn f64_fmod(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(a) || f64_is_nan(b)) { return f64_nan2(a, b); }
  if (f64_is_inf(a) || f64_is_zero(b)) { return F64_QNAN; }
  if (f64_is_inf(b) || f64_is_zero(a)) { return a; }
  let ua = f64_unpack(a);
  let ub = f64_unpack(b);
  let ea = bitcast<i32>(ua.z);
  let eb = bitcast<i32>(ub.z);
  let d = ub.xy;
  if (ea < eb || (ea == eb && u64_lt(ua.xy, d))) { return a; }
  var r = ua.xy;
  if (!u64_lt(r, d)) { r = d64_sub(r, d); }
  for (var n = ea - eb; n > 0; n = n - 1) {
    r = u64_shl(r, 1u);  // r < d < 2^53, so no bit is lost
    if (!u64_lt(r, d)) { r = d64_sub(r, d); }
  }
  let s = f64_sign(a);
  if (!d64_nz(r)) { return f64_zero(s); }
  let sh = d64_clz(r) - 1u;  // the leading one to bit 62; the value r * 2^(eb - 1075) is exact
  return f64_round_pack(s, eb + 10 - i32(sh), u64_shl(r, sh));
}
// torch.remainder: fmod plus b where the signs differ (CPU: mod != 0 && (b < 0) != (mod < 0)).
fn f64_remainder(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let m = f64_fmod(a, b);
  let z = vec2<u32>(0u, 0u);
  if (f64_nz(m) && (f64_lt(b, z) != f64_lt(m, z))) { return f64_add(m, b); }
  return m;
}
// c10::div_floor_floating: (a - fmod(a, b)) / b, corrected by one where the signs differ, floored,
// and rounded up when more than a half is left; a zero takes the sign of a / b; b = 0 gives a / b.
fn f64_div_floor(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (f64_is_zero(b)) { return f64_div(a, b); }
  let m = f64_fmod(a, b);
  let z = vec2<u32>(0u, 0u);
  var d = f64_div(f64_sub(a, m), b);
  if (f64_nz(m) && (f64_lt(b, z) != f64_lt(m, z))) { d = f64_sub(d, b2d(true)); }
  if (f64_nz(d)) {
    var fd = f64_round_mode(d, 1u);
    if (f64_lt(F64_HALF, f64_sub(d, fd))) { fd = f64_add(fd, b2d(true)); }
    return fd;
  }
  return f64_zero(f64_sign(f64_div(a, b)));
}
// torch.lerp as CPU's kernels: |w| < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w), each a fused
// multiply-add (Vectorized's fmadd; the scalar loop contracts the same way).
fn f64_lerp(a: vec2<u32>, b: vec2<u32>, w: vec2<u32>) -> vec2<u32> {
  let d = f64_sub(b, a);
  if (f64_lt(f64_abs(w), F64_HALF)) { return f64_fma(w, d, a); }
  return f64_fma(f64_sub(w, b2d(true)), d, b);
}
// std::nextafter: y when x == y, the smallest subnormal toward y from a zero, else one step of the
// bits toward y.
fn f64_nextafter(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x) || f64_is_nan(y)) { return f64_nan2(x, y); }
  if (f64_eq(x, y)) { return y; }
  if (f64_is_zero(x)) { return vec2<u32>(1u, y.y & 0x80000000u); }
  if (f64_lt(x, y) == (f64_sign(x) == 0u)) { return d64_add(x, vec2<u32>(1u, 0u)); }
  return d64_sub(x, vec2<u32>(1u, 0u));
}
// torch.heaviside: x == 0 ? values : x > 0 (a NaN x gives 0).
fn f64_heaviside(x: vec2<u32>, v: vec2<u32>) -> vec2<u32> {
  return select(b2d(f64_lt(vec2<u32>(0u, 0u), x)), v, f64_is_zero(x));
}
// hypot correctly rounded (one rounding of the exact root of x^2 + y^2): the squares of the
// significands are exact 106-bit products, summed in 128 bits (y^2's bits shifted out kept as a
// sticky bit), and a 56-bit root is taken digit by digit with a sticky remainder. An infinite
// operand gives +inf even with a NaN, as C's hypot.
fn f64_hypot(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (f64_is_inf(a) || f64_is_inf(b)) { return f64_inf(0u); }
  if (f64_is_nan(a) || f64_is_nan(b)) { return f64_nan2(a, b); }
  var x = f64_abs(a);
  var y = f64_abs(b);
  if (f64_lt(x, y)) {
    let t = x; x = y; y = t;
  }
  if (f64_is_zero(y)) { return x; }
  let ux = f64_unpack(x);
  let uy = f64_unpack(y);
  let ex = bitcast<i32>(ux.z);
  let ey = bitcast<i32>(uy.z);
  let sx = d128_shl(d64_mul_wide(ux.xy, ux.xy), 20u);  // [2^124, 2^126)
  let sy = d128_shr_sticky(d128_shl(d64_mul_wide(uy.xy, uy.xy), 20u), u32(2 * (ex - ey)));
  var s = d128_add(sx, sy);  // < 2^127
  // The radicand: the 112 bits below an even position (2j + 112), the rest sticky.
  let j = select(7u, 8u, d128_clz(s) == 1u);
  let low = d128_shl(s, 128u - 2u * j);
  var sticky = d128_nz(low);
  var r = Root64(vec2<u32>(0u, 0u), vec2<u32>(0u, 0u));
  for (var i = 0u; i < 56u; i = i + 1u) {
    let pos = 2u * j + 110u - 2u * i;
    r = root_digit(r, (s[pos / 32u] >> (pos % 32u)) & 3u);
  }
  sticky = sticky || d64_nz(r.rem);
  var m = u64_shl(r.root, 7u);  // the leading one at bit 62
  m.x = m.x | select(0u, 1u, sticky);
  return f64_round_pack(0u, ex + i32(j) - 7, m);
}

// ---- exp and log and what is built on them (within about 1 ulp, not bit-identical to CPU) --------
// exp: x = k ln2 + r (Cody-Waite, ln2 in two parts whose first times k is exact), |r| <= ln2 / 2,
// e^r by its Taylor series to r^16 / 16! (remainder below 2^-60 of the result) in fused
// multiply-adds, times 2^k in two exact steps (so that a subnormal result is rounded once).
// log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f):
// log(m) = 2 atanh(s) = 2s + s R(s^2), 2s taken as f - s f (a fused multiply-add that cancels most
// of s's rounding), R = sum 2 z^k / (2k + 1) to z^12 (z = s^2 <= 0.0295); log(x) = e ln2_hi +
// (log(m) + e ln2_lo).
const F64_LN2_HI = vec2<u32>(0xfee00000u, 0x3fe62e42u);  // ln 2 to 32 bits: k ln2_hi is exact for |k| < 2^21
const F64_LN2_LO = vec2<u32>(0x35793c76u, 0x3dea39efu);  // ln 2 - ln2_hi
const F64_LN2 = vec2<u32>(0xfefa39efu, 0x3fe62e42u);
const F64_INV_LN2 = vec2<u32>(0x652b82feu, 0x3ff71547u);
const F64_INV_LN10 = vec2<u32>(0x1526e50eu, 0x3fdbcb7bu);
const F64_ONE = vec2<u32>(0u, 0x3ff00000u);
const F64_ZERO = vec2<u32>(0u, 0u);
const F64_HALF = vec2<u32>(0u, 0x3fe00000u);
const F64_TWO = vec2<u32>(0u, 0x40000000u);
// 1 / n! for n = 16 down to 2.
const F64_INV_FACT = array<vec2<u32>, 15>(
  vec2<u32>(0xe733b81fu, 0x3d2ae7f3u), vec2<u32>(0xe733b81fu, 0x3d6ae7f3u), vec2<u32>(0xa8c07c9du, 0x3da93974u),
  vec2<u32>(0x13a86d09u, 0x3de61246u), vec2<u32>(0xeff8d898u, 0x3e21eed8u), vec2<u32>(0x67f544e4u, 0x3e5ae645u),
  vec2<u32>(0xb7789f5cu, 0x3e927e4fu), vec2<u32>(0xa556c734u, 0x3ec71de3u), vec2<u32>(0x1a01a01au, 0x3efa01a0u),
  vec2<u32>(0x1a01a01au, 0x3f2a01a0u), vec2<u32>(0x16c16c17u, 0x3f56c16cu), vec2<u32>(0x11111111u, 0x3f811111u),
  vec2<u32>(0x55555555u, 0x3fa55555u), vec2<u32>(0x55555555u, 0x3fc55555u), vec2<u32>(0x00000000u, 0x3fe00000u));
// 2 / (2k + 1) for k = 12 down to 1.
const F64_ATANH_C = array<vec2<u32>, 12>(
  vec2<u32>(0x47ae147bu, 0x3fb47ae1u), vec2<u32>(0x590b2164u, 0x3fb642c8u), vec2<u32>(0x18618618u, 0x3fb86186u),
  vec2<u32>(0xbca1af28u, 0x3fbaf286u), vec2<u32>(0x1e1e1e1eu, 0x3fbe1e1eu), vec2<u32>(0x11111111u, 0x3fc11111u),
  vec2<u32>(0x13b13b14u, 0x3fc3b13bu), vec2<u32>(0x745d1746u, 0x3fc745d1u), vec2<u32>(0x1c71c71cu, 0x3fcc71c7u),
  vec2<u32>(0x92492492u, 0x3fd24924u), vec2<u32>(0x9999999au, 0x3fd99999u), vec2<u32>(0x55555555u, 0x3fe55555u));

// 2^k for -1022 <= k <= 1023.
fn f64_pow2(k: i32) -> vec2<u32> { return vec2<u32>(0u, u32(k + 1023) << 20u); }
// a * 2^k, |k| <= 2100, rounded once (two factors, the first of which keeps a normal).
fn f64_ldexp(a: vec2<u32>, k: i32) -> vec2<u32> {
  let k1 = k / 2;
  return f64_mul(f64_mul(a, f64_pow2(k1)), f64_pow2(k - k1));
}
// e^r - 1 - r for |r| <= 0.5 (Taylor series from r^2 / 2 to r^16 / 16!), and e^r.
fn f64_exp_tail(r: vec2<u32>) -> vec2<u32> {
  var p = F64_INV_FACT[0];
  for (var i = 1u; i < 15u; i = i + 1u) { p = f64_fma(p, r, F64_INV_FACT[i]); }
  return f64_mul(f64_mul(p, r), r);
}
fn f64_exp_small(r: vec2<u32>) -> vec2<u32> { return f64_add(F64_ONE, f64_add(r, f64_exp_tail(r))); }
fn f64_exp_fn(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x)) { return f64_quiet(x); }
  if (f64_lt(vec2<u32>(0xfefa39efu, 0x40862e42u), x)) { return f64_inf(0u); }  // past log(DBL_MAX)
  if (f64_lt(x, vec2<u32>(0xd52d3052u, 0xc0874910u))) { return f64_zero(0u); }  // below log of half the least subnormal
  let kf = f64_round_mode(f64_mul(x, F64_INV_LN2), 3u);
  let r = f64_fma(f64_neg(kf), F64_LN2_LO, f64_fma(f64_neg(kf), F64_LN2_HI, x));
  return f64_ldexp(f64_exp_small(r), f64_to_i32(kf));
}
// 2^x: x = k + d (exact), 2^d = e^(d ln2).
fn f64_exp2_fn(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x)) { return f64_quiet(x); }
  if (!f64_lt(x, vec2<u32>(0u, 0x40900000u))) { return f64_inf(0u); }  // 1024
  if (!f64_lt(vec2<u32>(0u, 0xc090cc00u), x)) { return f64_zero(0u); }  // -1075
  let kf = f64_round_mode(x, 3u);
  return f64_ldexp(f64_exp_small(f64_mul(f64_sub(x, kf), F64_LN2)), f64_to_i32(kf));
}
// e^x - 1: the series itself for |x| <= 0.5, e^x - 1 past it (at most 1.3 bits cancel), -1 below -40.
fn f64_expm1_fn(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x) || f64_is_zero(x)) { return select(x, f64_quiet(x), f64_is_nan(x)); }  // -0 stays -0
  if (f64_le(f64_abs(x), F64_HALF)) { return f64_add(x, f64_exp_tail(x)); }
  if (f64_lt(x, vec2<u32>(0u, 0xc0440000u))) { return f64_neg(F64_ONE); }
  return f64_sub(f64_exp_fn(x), F64_ONE);
}
// log(1 + f) for f = m - 1, m in [sqrt(1/2), sqrt(2)).
fn f64_log_m(f: vec2<u32>) -> vec2<u32> {
  let s = f64_div(f, f64_add(F64_TWO, f));
  let z = f64_mul(s, s);
  var p = F64_ATANH_C[0];
  for (var i = 1u; i < 12u; i = i + 1u) { p = f64_fma(p, z, F64_ATANH_C[i]); }
  let two_s = f64_fma(f64_neg(s), f, f);
  return f64_add(two_s, f64_mul(s, f64_mul(p, z)));
}
// x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0: (f, e).
struct F64Split {
  f: vec2<u32>,
  e: i32,
}
fn f64_log_split(x: vec2<u32>) -> F64Split {
  let u = f64_unpack(x);  // significand with its leading one at bit 52, biased exponent
  var e = bitcast<i32>(u.z) - 1023;
  var m = vec2<u32>(u.x, (u.y & 0xfffffu) | 0x3ff00000u);  // in [1, 2)
  if (f64_lt(vec2<u32>(0x667f3bcdu, 0x3ff6a09eu), m)) {  // past sqrt(2)
    m = vec2<u32>(m.x, (m.y & 0xfffffu) | 0x3fe00000u);
    e = e + 1;
  }
  return F64Split(f64_sub(m, F64_ONE), e);
}
// The special values of log, log2, log10 (where f64_log_ok fails): NaN quieted, -inf for +-0, NaN
// below zero, +inf for +inf.
fn f64_log_special(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x)) { return f64_quiet(x); }
  if (f64_is_zero(x)) { return f64_inf(1u); }
  if (f64_sign(x) == 1u) { return F64_QNAN; }
  return f64_inf(0u);
}
fn f64_log_ok(x: vec2<u32>) -> bool { return f64_is_finite(x) && !f64_is_zero(x) && f64_sign(x) == 0u; }
fn f64_log_fn(x: vec2<u32>) -> vec2<u32> {
  if (!f64_log_ok(x)) { return f64_log_special(x); }
  let sp = f64_log_split(x);
  let ef = f64_from_i32(sp.e);
  return f64_add(f64_mul(ef, F64_LN2_HI), f64_fma(ef, F64_LN2_LO, f64_log_m(sp.f)));
}
// log2: e + log(1 + f) / ln2 (exact for powers of two).
fn f64_log2_fn(x: vec2<u32>) -> vec2<u32> {
  if (!f64_log_ok(x)) { return f64_log_special(x); }
  let sp = f64_log_split(x);
  return f64_add(f64_from_i32(sp.e), f64_mul(f64_log_m(sp.f), F64_INV_LN2));
}
fn f64_log10_fn(x: vec2<u32>) -> vec2<u32> {
  if (!f64_log_ok(x)) { return f64_log_special(x); }
  return f64_mul(f64_log_fn(x), F64_INV_LN10);
}
// log(1 + x): u = 1 + x rounded, log(u) x / (u - 1) (the quotient corrects u's rounding); x where
// u == 1, -inf at -1, NaN below.
fn f64_log1p_fn(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x)) { return f64_quiet(x); }
  let u = f64_add(F64_ONE, x);
  if (f64_eq(u, F64_ONE)) { return x; }
  if (!f64_log_ok(u)) { return f64_log_special(u); }  // -1, below, +inf
  return f64_mul(f64_log_fn(u), f64_div(x, f64_sub(u, F64_ONE)));
}
// sigmoid as CPU: 1 / (1 + e^-x).
fn f64_sigmoid_fn(x: vec2<u32>) -> vec2<u32> { return f64_div(F64_ONE, f64_add(F64_ONE, f64_exp_fn(f64_neg(x)))); }
// tanh(|x|) = t / (t + 2), t = e^(2|x|) - 1; 1 past 22; the sign of x (and -0 for -0).
fn f64_tanh_fn(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x)) { return f64_quiet(x); }
  let a = f64_abs(x);
  var r = F64_ONE;
  if (f64_lt(a, vec2<u32>(0u, 0x40360000u))) {
    let t = f64_expm1_fn(f64_add(a, a));
    r = f64_div(t, f64_add(t, F64_TWO));
  }
  return vec2<u32>(r.x, r.y | (x.y & 0x80000000u));
}
// e^a / 2 for a past 708, as (e^(a/2) / 2) e^(a/2): overflows only where e^a / 2 does.
fn f64_exp_half_large(a: vec2<u32>) -> vec2<u32> {
  let h = f64_exp_fn(f64_mul(a, F64_HALF));
  return f64_mul(f64_mul(h, F64_HALF), h);
}
// sinh(|x|) = (t + t / (t + 1)) / 2 with t = e^|x| - 1 (no cancellation near 0), e^|x| / 2 past
// 708; the sign of x.
fn f64_sinh_fn(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x)) { return f64_quiet(x); }
  let a = f64_abs(x);
  var r = f64_exp_half_large(a);
  if (f64_lt(a, vec2<u32>(0u, 0x40862000u))) {  // 708
    let t = f64_expm1_fn(a);
    r = f64_mul(f64_add(t, f64_div(t, f64_add(t, F64_ONE))), F64_HALF);
  }
  return vec2<u32>(r.x, r.y | (x.y & 0x80000000u));
}
// cosh = (e^|x| + e^-|x|) / 2, e^|x| / 2 past 708.
fn f64_cosh_fn(x: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(x)) { return f64_quiet(x); }
  let a = f64_abs(x);
  if (f64_lt(a, vec2<u32>(0u, 0x40862000u))) {
    let e = f64_exp_fn(a);
    return f64_mul(f64_add(e, f64_div(F64_ONE, e)), F64_HALF);
  }
  return f64_exp_half_large(a);
}
// logit(z) = log(z / (1 - z)); f64_logit_eps clamps z to [eps, 1 - eps] first (NaN stays NaN), as
// CPU's.
fn f64_logit(z: vec2<u32>) -> vec2<u32> { return f64_log_fn(f64_div(z, f64_sub(F64_ONE, z))); }
fn f64_logit_eps(x: vec2<u32>, eps: vec2<u32>) -> vec2<u32> {
  return f64_logit(f64_clamp_s(x, eps, f64_sub(F64_ONE, eps)));
}
// softplus: x where x beta > threshold, else log1p(e^(x beta)) / beta.
fn f64_softplus(x: vec2<u32>, beta: vec2<u32>, threshold: vec2<u32>) -> vec2<u32> {
  let xb = f64_mul(x, beta);
  if (f64_lt(threshold, xb)) { return x; }
  return f64_div(f64_log1p_fn(f64_exp_fn(xb)), beta);
}
// Backward rows of the activations above, in the float32 rows' order of operations
// (ops/activation_backward.cpp; g the incoming gradient, x the input).
fn f64_elu_bwd(g: vec2<u32>, x: vec2<u32>, alpha: vec2<u32>, scale: vec2<u32>, iscale: vec2<u32>) -> vec2<u32> {
  if (!f64_le(x, F64_ZERO)) { return f64_mul(g, scale); }
  return f64_mul(f64_mul(f64_mul(f64_mul(g, iscale), alpha), scale), f64_exp_fn(f64_mul(x, iscale)));
}
fn f64_silu_bwd(g: vec2<u32>, x: vec2<u32>) -> vec2<u32> {
  let s = f64_sigmoid_fn(x);
  return f64_mul(f64_mul(g, s), f64_add(F64_ONE, f64_mul(x, f64_sub(F64_ONE, s))));
}
fn f64_mish_bwd(g: vec2<u32>, x: vec2<u32>) -> vec2<u32> {
  let t = f64_tanh_fn(f64_log1p_fn(f64_exp_fn(x)));
  let d = f64_mul(f64_mul(x, f64_sigmoid_fn(x)), f64_sub(F64_ONE, f64_mul(t, t)));
  return f64_mul(g, f64_add(t, d));
}
fn f64_softplus_bwd(g: vec2<u32>, x: vec2<u32>, beta: vec2<u32>, threshold: vec2<u32>) -> vec2<u32> {
  let xb = f64_mul(x, beta);
  if (f64_lt(threshold, xb)) { return g; }
  return f64_mul(g, f64_sigmoid_fn(xb));
}
// logit's gradient g / (x (1 - x)): NaN outside [0, 1] and g inf at its ends; with eps, zero outside
// [lo, hi] (the clamp's flat parts).
fn f64_logit_grad(g: vec2<u32>, x: vec2<u32>) -> vec2<u32> { return f64_div(g, f64_mul(x, f64_sub(F64_ONE, x))); }
fn f64_logit_bwd(g: vec2<u32>, x: vec2<u32>) -> vec2<u32> {
  if (f64_lt(x, F64_ZERO) || f64_lt(F64_ONE, x)) { return F64_QNAN; }
  if (f64_is_zero(x) || f64_eq(x, F64_ONE)) { return f64_mul(g, f64_inf(0u)); }
  return f64_logit_grad(g, x);
}
fn f64_logit_bwd_eps(g: vec2<u32>, x: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> vec2<u32> {
  if (f64_lt(x, lo) || f64_lt(hi, x)) { return F64_ZERO; }
  return f64_logit_grad(g, x);
}
// logaddexp(2) as CPU: the larger plus log1p(e^-|a - b|) (times 1 / ln2 for base 2); a where both
// are the same infinity; NaN with a NaN.
fn f64_logaddexp_b(a: vec2<u32>, b: vec2<u32>, two: bool) -> vec2<u32> {
  if (f64_is_nan(a) || f64_is_nan(b)) { return F64_QNAN; }
  if (f64_is_inf(a) && f64_eq(a, b)) { return a; }
  let m = select(a, b, f64_lt(a, b));
  let d = f64_neg(f64_abs(f64_sub(a, b)));
  if (two) { return f64_add(m, f64_mul(f64_log1p_fn(f64_exp2_fn(d)), F64_INV_LN2)); }
  return f64_add(m, f64_log1p_fn(f64_exp_fn(d)));
}
// xlogy: NaN for a NaN y, 0 for x == 0, else x log(y).
fn f64_xlogy(x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
  if (f64_is_nan(y)) { return F64_QNAN; }
  if (f64_is_zero(x)) { return F64_ZERO; }
  return f64_mul(x, f64_log_fn(y));
}
// log_sigmoid as CPU: min(x, 0) - log1p(e^-|x|); its backward g (max_deriv - sign z / (1 + z)).
fn f64_log_sigmoid(x: vec2<u32>) -> vec2<u32> {
  let m = select(F64_ZERO, x, f64_lt(x, F64_ZERO));
  return f64_sub(m, f64_log1p_fn(f64_exp_fn(f64_neg(f64_abs(x)))));
}
fn f64_log_sigmoid_bwd(x: vec2<u32>, g: vec2<u32>) -> vec2<u32> {
  let neg = f64_lt(x, F64_ZERO);
  let z = f64_exp_fn(f64_neg(f64_abs(x)));
  let q = f64_div(z, f64_add(F64_ONE, z));
  let t = select(q, f64_sub(F64_ONE, q), neg);  // 0 - (-1) q = q, or 1 - 1 q
  return f64_mul(g, t);
}
