// Float helpers for the pointwise op table (ops/pointwise.cpp): IEEE edge cases spelled out where
// WGSL leaves them indeterminate (NaN, infinities, domains of log/pow/atan2), and functions WGSL
// lacks (erf, erfinv, expm1, log1p), accurate to a few ulp of float32.

// NaN and infinity must be runtime values: WGSL rejects them in constant expressions (a private
// variable is not one).
var<private> f_zero_bits: u32 = 0u;
fn f_nan() -> f32 { return bitcast<f32>(0x7fc00000u | f_zero_bits); }
fn f_inf() -> f32 { return bitcast<f32>(0x7f800000u | f_zero_bits); }
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn is_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }
fn sign_bit(x: f32) -> bool { return (bitcast<u32>(x) >> 31u) == 1u; }
fn b2f(c: bool) -> f32 { return select(0.0, 1.0, c); }
fn b2i(c: bool) -> i32 { return select(0i, 1i, c); }
// x * 2^n for an integral n (given as f32), as std::ldexp: three exact power-of-two steps, each in
// the normal exponent range, so a finite result is rounded once (WGSL's ldexp is indeterminate
// past the exponent range). A subnormal result is built from its bits instead: q = x 2^(n + 149)
// is the result in units of the least subnormal, below 2^23 exactly when the result is
// subnormal, and its bits are q rounded to an integer (ties to even). Multiplied into that range,
// it would come out zero on adapters that flush subnormal results (NVIDIA's Vulkan driver does).
fn f_ldexp(x: f32, n: f32) -> f32 {
  let k = i32(clamp(n, -400.0, 400.0));
  let s = k + 149;
  let sa = clamp(s, -126, 127);
  let q = x * pow2(sa) * pow2(clamp(s - sa, -126, 127));
  if (abs(q) < 8388608.0) { return bitcast<f32>(u32(round(abs(q))) | (bitcast<u32>(x) & 0x80000000u)); }
  let a = clamp(k, -126, 127);
  let b = clamp(k - a, -126, 127);
  let c = clamp(k - a - b, -126, 127);
  return x * pow2(a) * pow2(b) * pow2(c);
}
fn f_copysign(a: f32, b: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(a) & 0x7fffffffu) | (bitcast<u32>(b) & 0x80000000u));
}

// NaN-propagating maximum/minimum (torch.maximum) and NaN-ignoring ones (torch.fmax).
fn f_maximum(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return f_nan(); } return max(a, b); }
fn f_minimum(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return f_nan(); } return min(a, b); }
fn f_fmax(a: f32, b: f32) -> f32 { if (is_nan(a)) { return b; } if (is_nan(b)) { return a; } return max(a, b); }
fn f_fmin(a: f32, b: f32) -> f32 { if (is_nan(a)) { return b; } if (is_nan(b)) { return a; } return min(a, b); }
// clamp as ATen's kernels: a NaN input stays NaN.
fn f_clamp(a: f32, lo: f32, hi: f32) -> f32 { if (is_nan(a)) { return a; } return min(max(a, lo), hi); }
fn f_clamp_t(a: f32, lo: f32, hi: f32) -> f32 {
  if (is_nan(lo) || is_nan(hi)) { return f_nan(); }
  return f_clamp(a, lo, hi);
}
fn f_clamp_min(a: f32, lo: f32) -> f32 { if (is_nan(a)) { return a; } return max(a, lo); }
fn f_clamp_max(a: f32, hi: f32) -> f32 { if (is_nan(a)) { return a; } return min(a, hi); }

// Logarithms and exponentials to about an ulp, as CPU's libm and CUDA's (WGSL's log/log2 may be off
// by 2^-21 absolute near 1, and exp by 3 + 2|x| ulp): log2 is computed as a pair hi + lo carrying
// about 44 bits (pow needs them), log and log10 are that pair times the constant's own pair, and
// 2^(hi + lo) goes through Cody-Waite reduction and a Taylor polynomial. The pairs' low parts are
// error terms that a reassociating compiler may fold away (lavapipe's NIR does): results then stay
// within an ulp or two; pow, which needs more, takes them in binary64 (pow.wgsl).
const LN2_HI: f32 = 0.6931471824645996;       // ln 2 = LN2_HI + LN2_LO
const LN2_LO: f32 = -1.9046542121259336e-09;
const LOG2E_HI: f32 = 1.4426950216293335;     // log2 e
const LOG2E_LO: f32 = 1.925963033500011e-08;
const LOG10_2_HI: f32 = 0.3010300099849701;   // log10 2
const LOG10_2_LO: f32 = -1.432098883924482e-08;

// (hi + lo) * (c_hi + c_lo), rounded once more: the product of two pairs as one f32.
fn f_pair_mul(a: vec2<f32>, c_hi: f32, c_lo: f32) -> f32 {
  let p = a.x * c_hi;
  return p + (fma(a.x, c_hi, -p) + (a.x * c_lo + a.y * c_hi));
}
// x = m 2^e with m in [sqrt(1/2), sqrt(2)), as (m, e), for a positive finite x (subnormals too,
// normalised in integers: arithmetic on them reads zero on adapters that flush them).
fn f_frexp_sqrt2(x: f32) -> vec2<f32> {
  var b = bitcast<u32>(x);
  var e = -127;
  if (b < 0x00800000u) {
    let lz = countLeadingZeros(b);  // the leading one at bit 31 - lz: x = 1.m 2^(-118 - lz)
    b = ((b << (lz - 8u)) & 0x007fffffu) | 0x00800000u;
    e = -118 - i32(lz) - 1;
  }
  e = e + i32(b >> 23u);
  let m = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u);
  if (m > 1.4142135) { return vec2<f32>(m * 0.5, f32(e + 1)); }
  return vec2<f32>(m, f32(e));
}
// 2 atanh(s) / (2s) - 1 = z/3 + z^2/5 + ... for z = s^2 <= 0.0295 (s = f / (2 + f), 1 + f in
// [sqrt(1/2), sqrt(2))): ln(1 + f) = 2s (1 + this).
fn f_atanh_tail(z: f32) -> f32 { return z * (1.0 / 3.0 + f_atanh_tail2(z)); }
// (f_atanh_tail(z) - z/3) / z = z/5 + z^2/7 + ...
fn f_atanh_tail2(z: f32) -> f32 {
  return z * (0.2 + z * (1.0 / 7.0 + z * (1.0 / 9.0 + z * (1.0 / 11.0 + z * (1.0 / 13.0)))));
}
// e + log2(1 + f) for 1 + f in [sqrt(1/2), sqrt(2)) and an integral e, as a pair (hi, lo) with
// hi = hi + lo rounded: ln(1 + f) = 2 atanh(s), s = f / (2 + f) carried as a pair. The pair's low
// parts are error terms of the (a + b) - a kind, which compilers that reassociate (lavapipe's NIR)
// fold to zero: there the result is still within an ulp or two, only pow needs more (pow.wgsl).
fn f_log2_fe(f: f32, fe: f32) -> vec2<f32> {
  let d = 2.0 + f;
  let dl = f - (d - 2.0);  // 2 + f = d + dl exactly
  let s = f / d;
  let sl = (fma(-s, d, f) - s * dl) / d;
  let t = f_atanh_tail(s * s);
  let lh = 2.0 * s;  // ln m = lh + ll
  let ll = 2.0 * sl + lh * t;
  let p = lh * LOG2E_HI;  // ln m * log2 e = p + pe
  let pe = fma(lh, LOG2E_HI, -p) + (lh * LOG2E_LO + ll * LOG2E_HI);
  let r = fe + p;  // |e| >= 1 > |p| unless e == 0
  let err = select((fe - r) + p, (p - r) + fe, fe == 0.0);
  let lo = err + pe;
  let hi = r + lo;
  return vec2<f32>(hi, lo - (hi - r));
}
// log2 x for a positive finite x (subnormals too) as a pair, f_log2_fe's.
fn f_log2_pair(x: f32) -> vec2<f32> {
  let me = f_frexp_sqrt2(x);
  return f_log2_fe(me.x - 1.0, me.y);
}
// 2^(t + tl) for |tl| <= ulp(t): k = round(t), w = ((t - k) + tl) ln 2, e^w by Taylor to w^8
// (|w| <= ln2/2), scaled by 2^k with one rounding (subnormal results included).
fn f_exp2_pair(t: f32, tl: f32) -> f32 {
  if (is_nan(t)) { return t; }
  let tc = clamp(t, -300.0, 300.0);
  let k = round(tc);
  return f_ldexp(f_exp_taylor(((tc - k) + tl) * LN2_HI), k);
}
// e^w by Taylor to w^8, for |w| <= ln2/2 (an ulp or so).
fn f_exp_taylor(w: f32) -> f32 {
  return 1.0 + w * (1.0 + w * (0.5 + w * (1.6666666666666666e-1 + w * (4.1666666666666664e-2 +
         w * (8.333333333333333e-3 + w * (1.388888888888889e-3 + w * (1.984126984126984e-4 +
         w * 2.48015873015873e-5)))))));
}
// Whether x is outside the logarithms' main path (zero, negative, infinite or NaN), and their
// value there: 0 -> -inf, negative or NaN -> NaN, inf -> inf. Tested on the bits, so that positive
// subnormals take the main path on adapters whose comparisons read them as zero.
fn f_log_off(x: f32) -> bool {
  let b = bitcast<u32>(x);
  return b == 0u || b >= 0x7f800000u;
}
fn f_log_edge(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) == 0u) { return -f_inf(); }
  return select(f_nan(), x, b == 0x7f800000u);
}
fn f_log(x: f32) -> f32 {
  if (f_log_off(x)) { return f_log_edge(x); }
  return f_pair_mul(f_log2_pair(x), LN2_HI, LN2_LO);
}
fn f_log2(x: f32) -> f32 {
  if (f_log_off(x)) { return f_log_edge(x); }
  return f_log2_pair(x).x;
}
fn f_log10(x: f32) -> f32 {
  if (f_log_off(x)) { return f_log_edge(x); }
  return f_pair_mul(f_log2_pair(x), LOG10_2_HI, LOG10_2_LO);
}
fn f_sqrt(x: f32) -> f32 {
  if (x < 0.0) { return f_nan(); }
  return sqrt(x);
}
fn f_rsqrt(x: f32) -> f32 {
  if (x == 0.0) { return f_copysign(f_inf(), x); }
  if (x < 0.0) { return f_nan(); }
  return 1.0 / sqrt(x);
}
// hi + lo = k ln2 + r with k integral and |r| <= ln2/2, as (k, r): Cody-Waite reduction of hi (the
// high part of ln2 has 16 bits, so k * hi is exact), lo (0, or small beside hi: the part of a sum
// float32 cannot hold) added to the reduced argument.
fn f_exp_reduce(hi: f32, lo: f32) -> vec2<f32> {
  let k = round((hi + lo) * 1.4426950408889634);
  return vec2<f32>(k, ((hi - k * 0.693145751953125) - k * 1.4286068203094172e-06) + lo);
}
// e^(hi + lo) to about an ulp over the whole range: f_exp_reduce, Taylor to r^8. With lo, one
// exponential where e^hi e^lo took two. Not for NaN arguments (f_exp checks).
fn f_exp_sum(hi: f32, lo: f32) -> f32 {
  let x = hi + lo;
  if (x > 88.72284) { return f_inf(); }
  if (x < -103.972) { return 0.0; }
  let kr = f_exp_reduce(hi, lo);
  return f_ldexp(f_exp_taylor(kr.y), kr.x);
}
fn f_exp(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  return f_exp_sum(x, 0.0);
}
fn f_exp2(x: f32) -> f32 {
  if (x >= 128.0) { return f_inf(); }
  if (x < -150.0) { return 0.0; }
  return f_exp2_pair(x, 0.0);
}
// e^x - 1: x = k ln2 + r (f_exp_reduce), e^r - 1 by Taylor to r^9 (r itself is exact,
// the rest is under a sixth of it), then 2^k (e^r - 1) + (2^k - 1), whose parts are exact for the
// k where the sum cancels.
fn f_expm1(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (x > 88.72284) { return f_inf(); }
  if (x < -20.0) { return -1.0; }
  let kr = f_exp_reduce(x, 0.0);
  let k = kr.x;
  let r = kr.y;
  let er = r + r * r * (0.5 + r * (1.6666666666666666e-1 + r * (4.1666666666666664e-2 +
           r * (8.333333333333333e-3 + r * (1.388888888888889e-3 + r * (1.984126984126984e-4 +
           r * (2.48015873015873e-5 + r * 2.7557319223985893e-6)))))));
  if (k == 0.0) { return er; }
  let s = f_ldexp(1.0, k);
  if (k > 24.0) { return s * (er + 1.0); }
  return (s - 1.0) + s * er;
}
// ln(1 + x): for 1 + x in [sqrt(1/2), sqrt(2)) the logarithm's core takes f = x itself (1 + x is
// never rounded); elsewhere ln of the rounded 1 + x is within an ulp or two (|ln(1 + x)| >= 0.34).
fn f_log1p(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (x == -1.0) { return -f_inf(); }
  if (x < -1.0) { return f_nan(); }
  if (is_inf(x)) { return x; }
  if (x > -0.29289321 && x < 0.41421356) { return f_pair_mul(f_log2_fe(x, 0.0), LN2_HI, LN2_LO); }
  return f_log(1.0 + x);
}
fn f_sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + f_exp(-x)); }
fn f_tanh(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (abs(x) > 9.0) { return f_copysign(1.0, x); }
  if (abs(x) < 0.0004) { return x; }
  let e = f_expm1(2.0 * x);
  return e / (e + 2.0);
}
fn f_sinh(x: f32) -> f32 {
  if (abs(x) < 0.0004) { return x; }
  if (abs(x) > 88.0) { let h = f_exp(0.5 * abs(x)); return f_copysign((0.5 * h) * h, x); }
  let e = f_expm1(abs(x));
  return f_copysign(0.5 * (e + e / (e + 1.0)), x);
}
fn f_cosh(x: f32) -> f32 {
  if (abs(x) > 88.0) { let h = f_exp(0.5 * abs(x)); return (0.5 * h) * h; }
  let e = f_exp(abs(x));
  return 0.5 * (e + 1.0 / e);
}
fn f_asinh(x: f32) -> f32 {
  let a = abs(x);
  if (is_inf(a) || is_nan(a)) { return x; }
  var r: f32;
  if (a > 1e18) { r = f_log(a) + 0.6931471805599453; }
  else { r = f_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a))); }
  return f_copysign(r, x);
}
fn f_acosh(x: f32) -> f32 {
  if (x < 1.0 || is_nan(x)) { return f_nan(); }
  if (is_inf(x)) { return x; }
  if (x > 1e18) { return f_log(x) + 0.6931471805599453; }
  let t = x - 1.0;
  return f_log1p(t + sqrt(2.0 * t + t * t));
}
fn f_atanh(x: f32) -> f32 {
  let a = abs(x);
  if (a > 1.0 || is_nan(x)) { return f_nan(); }
  if (a == 1.0) { return f_copysign(f_inf(), x); }
  return f_copysign(0.5 * f_log1p(2.0 * a / (1.0 - a)), x);
}
fn f_asin(x: f32) -> f32 {
  if (!(abs(x) <= 1.0)) { return f_nan(); }
  return f_copysign(f_asin_pos(abs(x)), x);
}
fn f_acos(x: f32) -> f32 {
  if (!(abs(x) <= 1.0)) { return f_nan(); }
  if (x < -0.5) { return 3.14159265358979323846 - 2.0 * f_asin_pos(sqrt(0.5 * (1.0 + x))); }
  if (x > 0.5) { return 2.0 * f_asin_pos(sqrt(0.5 * (1.0 - x))); }
  return 1.5707963267948966 - f_copysign(f_asin_pos(abs(x)), x);
}
fn f_atan2(y: f32, x: f32) -> f32 {
  if (is_nan(x) || is_nan(y)) { return f_nan(); }
  if (y == 0.0) {
    if (sign_bit(x)) { return f_copysign(3.14159265358979323846, y); }
    return y;
  }
  if (x == 0.0) { return f_copysign(1.5707963267948966, y); }
  if (is_inf(x)) {
    if (is_inf(y)) { return f_copysign(select(0.7853981633974483, 2.356194490192345, x < 0.0), y); }
    return select(f_copysign(0.0, y), f_copysign(3.14159265358979323846, y), x < 0.0);
  }
  if (is_inf(y)) { return f_copysign(1.5707963267948966, y); }
  let t = f_atan(abs(y / x));
  let r = select(t, 3.14159265358979323846 - t, x < 0.0);
  return f_copysign(r, y);
}

// erfc by Numerical Recipes' Chebyshev fit (fractional error < 1.2e-7), erf by its Taylor series
// near zero where 1 - erfc would lose the relative precision.
fn f_erfc_pos(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.5 * z);
  let c = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
          t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
          t * (-0.82215223 + t * 0.17087277))))))));
  // e^(c - z^2) as e^(-z1^2 + (c - (2 z1 + z2) z2)), z = z1 + z2 with z1 the top 12 bits of z, so
  // z1^2 is exact: z^2 rounded would be off by up to 2^-24 * 55 absolute in the exponent
  let z1 = bitcast<f32>(bitcast<u32>(z) & 0xfffff000u);
  let z2 = z - z1;
  return t * f_exp_sum(-(z1 * z1), c - (2.0 * z1 + z2) * z2);
}
fn f_erf(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let a = abs(x);
  // Taylor to x^21 below 0.84 (the last term under 2^-31 of the sum); 1 - erfc from there, where
  // erfc's relative error no longer grows in the difference.
  if (a < 0.84) {
    let s = x * x;
    let p = 1.0 + s * (-1.0 / 3.0 + s * (0.1 + s * (-1.0 / 42.0 + s * (1.0 / 216.0 + s * (-1.0 / 1320.0 +
            s * (1.0 / 9360.0 + s * (-1.0 / 75600.0 + s * (1.0 / 685440.0 + s * (-1.0 / 6894720.0 +
            s * (1.0 / 76204800.0))))))))));
    return 1.1283791670955126 * x * p;
  }
  // erfc(a) < 2^-25 from a = 3.9193 on: 1 - erfc rounds to 1
  if (a >= 3.92) { return f_copysign(1.0, x); }
  return f_copysign(1.0 - f_erfc_pos(a), x);
}
fn f_erfc(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (abs(x) < 0.5) { return 1.0 - f_erf(x); }
  if (x > 10.5) { return 0.0; }
  if (x < -10.0) { return 2.0; }
  if (x > 0.0) { return f_erfc_pos(x); }
  return 2.0 - f_erfc_pos(-x);
}
// Giles' single-precision erfinv, refined by one Newton step on erf.
fn f_erfinv(x: f32) -> f32 {
  let a = abs(x);
  if (a > 1.0 || is_nan(x)) { return f_nan(); }
  if (a == 1.0) { return f_copysign(f_inf(), x); }
  var w = -f_log((1.0 - x) * (1.0 + x));
  var p: f32;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  var r = p * x;
  if (a < 0.99) {
    r = r - (f_erf(r) - x) / (1.1283791670955126 * f_exp(-r * r));
  }
  return r;
}

// pow with C's edge cases (negative bases with integral exponents, zeros, infinities) around mag,
// |x|^y for a finite nonzero x and a finite y (computed by the caller for every x, y).
fn f_pow_with(x: f32, y: f32, mag: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return f_nan(); }
  let yint = trunc(y) == y;
  let yodd = yint && abs(y) < 16777216.0 && (i32(abs(y)) & 1) == 1;
  let ax = abs(x);
  if (is_inf(y)) {
    if (ax == 1.0) { return 1.0; }
    return select(0.0, f_inf(), (ax > 1.0) == (y > 0.0));
  }
  var r = mag;
  if (ax == 0.0) { r = select(f_inf(), 0.0, y > 0.0); }
  else if (is_inf(ax)) { r = select(0.0, f_inf(), y > 0.0); return select(r, -r, x < 0.0 && yodd); }
  if (x < 0.0) {
    if (!yint) { return f_nan(); }
    if (yodd) { r = -r; }
  } else if (yodd && sign_bit(x)) {
    r = -r;
  }
  return r;
}
// |x|^y where the result is correctly rounded by one operation (y = 1, 2, -1: |x|, x * x, 1 / |x|, as
// CPU's libm), else a negative number.
fn f_pow_exact(ax: f32, y: f32) -> f32 {
  if (abs(y) == 1.0 || y == 2.0) { return select(select(ax, ax * ax, y == 2.0), 1.0 / ax, y < 0.0); }
  return -1.0;
}
// pow in float32 arithmetic (special.wgsl's zeta): repeated squaring for integral |y| <= 64 (a few
// roundings), else 2^(y log2|x|) with the logarithm and the product as pairs (an ulp or two where the
// compiler keeps the pairs' error terms; ops/binary.cpp's pow rows use pow.wgsl's f_pow_acc, which does
// not depend on that).
fn f_pow(x: f32, y: f32) -> f32 {
  let ax = abs(x);
  var mag = f_pow_exact(ax, y);
  if (mag < 0.0 && trunc(y) == y && abs(y) <= 64.0) {
    var e = u32(abs(y));
    var b = ax;
    mag = 1.0;
    loop {
      if ((e & 1u) == 1u) { mag = mag * b; }
      e = e >> 1u;
      if (e == 0u) { break; }
      b = b * b;
    }
    if (y < 0.0) { mag = 1.0 / mag; }
  } else if (mag < 0.0) {
    let l = f_log2_pair(ax);
    let t = y * l.x;
    mag = f_exp2_pair(t, fma(y, l.x, -t) + y * l.y);
  }
  return f_pow_with(x, y, mag);
}

fn f_div_trunc(a: f32, b: f32) -> f32 { return trunc(a / b); }
// fmod as C: the sign of a, |r| < |b|; computed through the quotient and corrected.
fn f_fmod(a: f32, b: f32) -> f32 {
  if (b == 0.0 || is_inf(a) || is_nan(a) || is_nan(b)) { return f_nan(); }
  if (is_inf(b)) { return a; }
  let ab = abs(b);
  var r = abs(a);
  if (r < ab) { return a; }
  // Long division on the exponents keeps every step exact.
  for (var i = 0; i < 300; i = i + 1) {
    if (r < ab) { break; }
    var d = ab;
    let e = i32((bitcast<u32>(r) >> 23u) & 0xffu) - i32((bitcast<u32>(ab) >> 23u) & 0xffu);
    if (e > 0) { d = ldexp(ab, e); if (d > r) { d = ldexp(ab, e - 1); } }
    r = r - d;
  }
  return f_copysign(r, a);
}
fn f_remainder(a: f32, b: f32) -> f32 {
  let m = f_fmod(a, b);
  if (!(m == 0.0) && ((b < 0.0) != (m < 0.0))) { return m + b; }
  return m;
}
// ATen's div_floor_floating.
fn f_div_floor(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return a / b; }
  let m = f_fmod(a, b);
  var d = (a - m) / b;
  if (!(m == 0.0) && ((b < 0.0) != (m < 0.0))) { d = d - 1.0; }
  if (!(d == 0.0)) {
    var fd = floor(d);
    if (d - fd > 0.5) { fd = fd + 1.0; }
    return fd;
  }
  return f_copysign(0.0, a / b);
}
fn f_hypot(a: f32, b: f32) -> f32 {
  let x = abs(a); let y = abs(b);
  if (is_inf(x) || is_inf(y)) { return f_inf(); }
  if (is_nan(x) || is_nan(y)) { return f_nan(); }
  let m = max(x, y);
  if (m == 0.0) { return 0.0; }
  let n = min(x, y) / m;
  return m * sqrt(1.0 + n * n);
}
fn f_xlogy(x: f32, y: f32) -> f32 {
  if (is_nan(y)) { return f_nan(); }
  if (x == 0.0) { return 0.0; }
  return x * f_log(y);
}
fn f_lerp(a: f32, b: f32, w: f32) -> f32 {
  if (abs(w) < 0.5) { return a + w * (b - a); }
  return b - (b - a) * (1.0 - w);
}
fn f_sign(x: f32) -> f32 { return b2f(0.0 < x) - b2f(x < 0.0); }
// Activations, as ATen's CPU kernels compute them.
fn f_softplus(x: f32, beta: f32, threshold: f32) -> f32 {
  if (x * beta > threshold) { return x; }
  return f_log1p(f_exp(x * beta)) / beta;
}
fn f_gelu(x: f32) -> f32 { return x * 0.5 * (1.0 + f_erf(x * 0.7071067811865476)); }
fn f_gelu_tanh(x: f32) -> f32 {
  let inner = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + f_tanh(inner));
}
fn f_gelu_backward(g: f32, x: f32) -> f32 {
  let cdf = 0.5 * (1.0 + f_erf(x * 0.7071067811865476));
  let pdf = f_exp(-0.5 * x * x) * 0.3989422804014327;
  return g * (cdf + x * pdf);
}
fn f_gelu_tanh_backward(g: f32, x: f32) -> f32 {
  let kb = 0.7978845608028654;
  let kk = 0.044715;
  let x2 = x * x;
  let inner = kb * (x + kk * x2 * x);
  let t = f_tanh(inner);
  let left = 0.5 * x;
  let right = 1.0 + t;
  let left_d = 0.5 * right;
  let tanh_d = 1.0 - t * t;
  let inner_d = kb * (1.0 + 3.0 * kk * x2);
  return g * (left_d + left * tanh_d * inner_d);
}
fn f_mish(x: f32) -> f32 { return x * f_tanh(f_log1p(f_exp(x))); }
fn f_logsigmoid(x: f32) -> f32 { return min(x, 0.0) - f_log1p(f_exp(-abs(x))); }
fn f_hardsigmoid(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  return min(max(x + 3.0, 0.0), 6.0) / 6.0;
}
fn f_nan_to_num(x: f32, nan: f32, posinf: f32, neginf: f32) -> f32 {
  if (is_nan(x)) { return nan; }
  if (is_inf(x)) { return select(neginf, posinf, x > 0.0); }
  return x;
}

// 32-bit integer helpers with PyTorch's semantics (division by zero gives -1: a GPU cannot raise).
fn i32_div_trunc(a: i32, b: i32) -> i32 { if (b == 0) { return -1; } return a / b; }
fn i32_div_floor(a: i32, b: i32) -> i32 {
  if (b == 0) { return -1; }
  let q = a / b;
  let r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) { return q - 1; }
  return q;
}
// By zero: CPU raises ZeroDivisionError, which a kernel cannot; CUDA gives all ones (-1, and 255
// once stored as uint8), and so do these (int64's: int64.wgsl, i64_rem).
fn i32_fmod(a: i32, b: i32) -> i32 { if (b == 0) { return -1; } return a % b; }
fn i32_remainder(a: i32, b: i32) -> i32 {
  if (b == 0) { return -1; }
  let r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) { return r + b; }
  return r;
}
fn i32_lshift(a: i32, b: i32) -> i32 { if (b < 0 || b >= 32) { return 0; } return a << u32(b); }
fn i32_rshift(a: i32, b: i32) -> i32 { if (b < 0 || b >= 32) { return a >> 31u; } return a >> u32(b); }
fn i32_pow(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(1, -1, (b & 1) == 1); }
    return 0;
  }
  var r = 1i;
  var base = a;
  var e = b;
  loop {
    if (e == 0) { break; }
    if ((e & 1) == 1) { r = r * base; }
    e = e >> 1u;
    base = base * base;
  }
  return r;
}
fn i32_sign(x: i32) -> i32 { return b2i(x > 0) - b2i(x < 0); }

// sin/cos/tan/atan/asin/acos after Cephes' single-precision polynomials on [-pi/4, pi/4]. GPU
// builtins are far looser (Vulkan allows 2^-11 absolute error for sin, and none past |x| = pi), and
// CPU's libm is within an ulp everywhere, so the argument reduction is ours: Cody-Waite by pi/2 in
// four parts for moderate |x|, Payne-Hanek past it.
struct TrigRed { y: f32, q: u32 }

fn trig_mul_wide(a: u32, b: u32) -> vec2<u32> {  // a * b as (lo, hi); int64.wgsl's is not always included
  let a0 = a & 0xffffu; let a1 = a >> 16u;
  let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}  // |x| = (n + y / (pi/2)) * pi/2 with y in [-pi/4, pi/4], q = n mod 4

const TRIG_CW_MAX = 4096.0;
fn f_trig_reduce(ax: f32) -> TrigRed {
  if (ax <= 0.7853981633974483) { return TrigRed(ax, 0u); }
  if (ax <= TRIG_CW_MAX) {
    // pi/2 = C1 + C2 + C3 + C4 to 2^-70: C1..C3 have 12 significant bits, so n * Ci (n < 2^12) is
    // exact and the near-cancelling subtractions lose nothing.
    let n = round(ax * 0.6366197723675814);
    let y = (((ax - n * 1.57080078125) - n * -4.453584551811218e-06) - n * -8.706138032721356e-10) -
            n * 6.223371969669989e-14;
    return TrigRed(y, u32(n) & 3u);
  }
  return f_trig_reduce_big(ax);
}

// The 32-bit window of the 192-bit integer p that starts at bit `pos`.
fn u192_window(p: array<u32, 6>, pos: u32) -> u32 {
  let w = pos / 32u;
  let off = pos % 32u;
  var r = p[w] >> off;
  if (off != 0u && w < 5u) { r = r | (p[w + 1u] << (32u - off)); }
  return r;
}

// Payne-Hanek: |x| = m * 2^e (m the 24-bit significand), |x| * 2/pi taken modulo 4 from the bits of
// 2/pi that matter. Terms of weight 4 and above are whole multiples of 4 and drop out; the 128 bits
// after them leave at least 94 fraction bits, past the ~60 that float32's worst cancellation needs.
fn f_trig_reduce_big(ax: f32) -> TrigRed {
  var two_over_pi = array<u32, 8>(0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
                                  0x3c439041u, 0xfe5163abu, 0xdebbc561u);
  let bits = bitcast<u32>(ax);
  let m = (bits & 0x7fffffu) | 0x800000u;
  let e = i32(bits >> 23u) - 150;
  let k0 = u32(max(e - 2, 0)) / 32u;  // first word whose terms are not multiples of 4
  var p = array<u32, 6>(0u, 0u, 0u, 0u, 0u, 0u);
  var carry = 0u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let pr = trig_mul_wide(m, two_over_pi[k0 + 3u - j]);
    let lo = pr.x + carry;
    carry = pr.y + select(0u, 1u, lo < pr.x);
    p[j] = lo;
  }
  p[4] = carry;
  let s = u32(i32(32u * (k0 + 4u)) - e);  // fraction bits in p: 94..(138 for |x| >= 2^-8)
  var q = u192_window(p, s) & 3u;
  var hi = u192_window(p, s - 32u);
  var lo = u192_window(p, s - 64u);
  let neg = hi >= 0x80000000u;
  if (neg) {  // fraction >= 1/2: the next quadrant, y = (fraction - 1) * pi/2
    q = (q + 1u) & 3u;
    lo = ~lo + 1u;
    hi = ~hi + select(0u, 1u, lo == 0u);
  }
  if ((hi | lo) == 0u) { return TrigRed(0.0, q); }
  var sh = 0u;
  if (hi == 0u) { hi = lo; lo = 0u; sh = 32u; }
  let lz = countLeadingZeros(hi);
  if (lz > 0u) { hi = (hi << lz) | (lo >> (32u - lz)); }
  sh = sh + lz;
  // |y| = hi * 2^-(32 + sh) * pi/2, pi/2 = 0xc90fdaa2 * 2^-31: the top 32 bits of the product.
  var mh = trig_mul_wide(hi, 0xc90fdaa2u).y;
  var ex = -i32(31u + sh);
  if (mh < 0x80000000u) { mh = mh << 1u; ex = ex - 1; }
  let m24 = (mh >> 8u) + ((mh >> 7u) & 1u);  // rounded to 24 bits (2^24 on a carry is still exact)
  let y = ldexp(f32(m24), ex + 8);
  return TrigRed(select(y, -y, neg), q);
}

fn f_sin_poly(x: f32, z: f32) -> f32 {
  return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * x + x;
}
fn f_cos_poly(z: f32) -> f32 {
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
}
// sin(|x|) for quadrant q and reduced y.
fn f_sin_q(r: TrigRed) -> f32 {
  let z = r.y * r.y;
  let v = select(f_sin_poly(r.y, z), f_cos_poly(z), (r.q & 1u) == 1u);
  return select(v, -v, (r.q & 2u) != 0u);
}
fn f_sin(x: f32) -> f32 {
  if (!is_finite(x)) { return f_nan(); }
  let v = f_sin_q(f_trig_reduce(abs(x)));
  return select(v, -v, sign_bit(x));
}
fn f_cos(x: f32) -> f32 {
  if (!is_finite(x)) { return f_nan(); }
  let r = f_trig_reduce(abs(x));
  return f_sin_q(TrigRed(r.y, (r.q + 1u) & 3u));  // cos(a) = sin(a + pi/2)
}
// Cephes' tanf polynomial on [-pi/4, pi/4]; odd quadrants are -1/tan.
fn f_tan(x: f32) -> f32 {
  if (!is_finite(x)) { return f_nan(); }
  let r = f_trig_reduce(abs(x));
  let z = r.y * r.y;
  var t = (((((9.38540185543e-3 * z + 3.11992232697e-3) * z + 2.44301354525e-2) * z + 5.34112807005e-2) * z +
            1.33387994085e-1) * z + 3.33331568548e-1) * z * r.y + r.y;
  if ((r.q & 1u) == 1u) { t = -1.0 / t; }
  return select(t, -t, sign_bit(x));
}
fn f_atan(x0: f32) -> f32 {
  if (is_nan(x0)) { return x0; }
  var x = abs(x0);
  var y = 0.0;
  if (x > 2.414213562373095) { y = 1.5707963267948966; x = -1.0 / x; }
  else if (x > 0.4142135623730950) { y = 0.7853981633974483; x = (x - 1.0) / (x + 1.0); }
  let z = x * x;
  y = y + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * x + x);
  return f_copysign(y, x0);
}
fn f_asin_pos(a: f32) -> f32 {
  var x = a;
  var z: f32;
  let big = a > 0.5;
  if (big) { z = 0.5 * (1.0 - a); x = sqrt(z); } else { z = x * x; }
  var r = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z +
           1.6666752422e-1) * z * x + x;
  if (big) { r = 1.5707963267948966 - (r + r); }
  return r;
}
