// Special functions for the pointwise table (ops/special.cpp): the gamma family, Hurwitz zeta,
// incomplete gamma, erfcx, the normal quantile and log-CDF, and the small exact ones
// (sinc, frexp, nextafter, gcd/lcm). Float32, with CPU's special values (poles, signs, inf, NaN).
// Included after pointwise.wgsl and int64.wgsl, whose helpers it uses.

const SP_PI = 3.14159265358979323846;
const SP_EPS = 5.9604645e-8;  // 2^-24: a term below this fraction of a sum no longer changes it

// ---- gamma family ----------------------------------------------------------------------------

// lgamma(2 + t) for |t| <= 0.5: its Taylor series, (1 - euler) t + sum_k (-1)^k (zeta(k) - 1) / k t^k.
fn sp_lgamma2(t: f32) -> f32 {
  return t * (0.422784335098 + t * (0.322467033424 + t * (-0.0673523010532 + t * (0.0205808084278 +
         t * (-0.00738555102867 + t * (0.00289051033074 + t * (-0.0011927539117 + t * (0.000509669524743 +
         t * (-0.000223154758454 + t * (9.94575127818e-5 + t * (-4.49262367381e-5 + t * (2.05072127757e-5 +
         t * (-9.43948827527e-6 + t * (4.37486678991e-6 + t * -2.0392157538e-6))))))))))))));
}

// lgamma for finite x > 0: the series around 2, reached by the recurrence below 8; Stirling above.
fn sp_lgamma_pos(x: f32) -> f32 {
  if (x < 0.5) { return sp_lgamma2(x) - f_log1p(x) - f_log(x); }  // lgamma(x + 2) - log(x (x + 1))
  if (x < 1.5) { return sp_lgamma2(x - 1.0) - f_log1p(x - 1.0); }
  if (x < 2.5) { return sp_lgamma2(x - 2.0); }
  if (x < 8.0) {
    var y = x;
    var p = 1.0;
    loop {
      if (y < 2.5) { break; }
      y = y - 1.0;
      p = p * y;
    }
    return sp_lgamma2(y - 2.0) + f_log(p);
  }
  let r = 1.0 / x;
  let r2 = r * r;
  let c = r * (0.08333333333333333 + r2 * (-0.002777777777777778 + r2 * (0.0007936507936507937 +
          r2 * -0.0005952380952380952)));
  return (x - 0.5) * f_log(x) - x + 0.9189385332046728 + c;
}

// log|gamma(x)|, as C's lgamma: +inf at 0, -0, the negative integers and both infinities.
fn sp_lgamma(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (is_inf(x)) { return f_inf(); }
  if (x > 0.0) { return sp_lgamma_pos(x); }
  if (x == floor(x)) { return f_inf(); }
  // Reflection, with sin(pi x) from the exact fractional part.
  let s = abs(f_sin(SP_PI * (x - round(x))));
  return f_log(SP_PI / s) - sp_lgamma_pos(1.0 - x);
}

// digamma for x > 0, as CPU's calc_digamma: the recurrence up to 10, then the asymptotic series
// ln x - 1/(2x) - sum B_2k / (2k x^2k).
fn sp_digamma_pos(x0: f32) -> f32 {
  var x = x0;
  var result = 0.0;
  loop {
    if (!(x < 10.0)) { break; }
    result = result - 1.0 / x;
    x = x + 1.0;
  }
  if (x == 10.0) { return result + 2.25175258906672110764; }
  var y = 0.0;
  if (x < 1e17) {
    let z = 1.0 / (x * x);
    y = z * (8.33333333333333333333e-2 + z * (-8.33333333333333333333e-3 + z * (3.96825396825396825397e-3 +
        z * (-4.16666666666666666667e-3 + z * (7.57575757575757575758e-3 + z * (-2.10927960927960927961e-2 +
        z * 8.33333333333333333333e-2))))));
  }
  return result + f_log(x) - 0.5 / x - y;
}

// digamma: -inf at +0 and +inf at -0 (CPU's sign), NaN at negative integers, reflection below 0.
fn sp_digamma(x: f32) -> f32 {
  if (x == 0.0) { return f_copysign(f_inf(), -x); }
  if (x < 0.0) {
    if (x == trunc(x)) { return f_nan(); }
    // tan has period pi: reducing by the nearest integer keeps pi * r small and exact-ish.
    return sp_digamma_pos(1.0 - x) - SP_PI / f_tan(SP_PI * (x - round(x)));
  }
  return sp_digamma_pos(x);
}

// trigamma (polygamma 1), as CPU's calc_trigamma: reflection below 1/2, six recurrence steps,
// then the asymptotic series.
fn sp_trigamma(x0: f32) -> f32 {
  var x = x0;
  var sgn = 1.0;
  var result = 0.0;
  if (x < 0.5) {
    sgn = -1.0;
    let s = f_sin(3.14159265358979323846 * x);
    result = result - 9.869604401089358 / (s * s);
    x = 1.0 - x;
  }
  for (var i = 0; i < 6; i = i + 1) {
    result = result + 1.0 / (x * x);
    x = x + 1.0;
  }
  let ixx = 1.0 / (x * x);
  result = result + (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))) / x;
  return sgn * result;
}

// Bernoulli factors (2j)! / B_2j of the Euler-Maclaurin tail of the zeta sum.
fn sp_zeta_a(j: i32) -> f32 {
  var A = array<f32, 12>(12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                                 7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                                 -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18);
  return A[j];
}

// Hurwitz zeta(x, q) = sum_k (k + q)^-x: the sum directly up to k + q > 9 (and 9 terms at least),
// then Euler-Maclaurin. The special values are CPU's: inf at x == 1 and at q a non-positive
// integer, NaN for x < 1 and for a negative q with a non-integral x.
fn sp_zeta(x: f32, q: f32) -> f32 {
  if (x == 1.0) { return f_inf(); }
  if (x < 1.0) { return f_nan(); }
  if (q <= 0.0) {
    if (q == floor(q)) { return f_inf(); }
    if (x != floor(x)) { return f_nan(); }
  }
  var s = f_pow(q, -x);
  var a = q;
  var b = 0.0;
  var i = 0;
  loop {
    if (!(i < 9 || a <= 9.0) || i > 1048576) { break; }
    i = i + 1;
    a = a + 1.0;
    b = f_pow(a, -x);
    s = s + b;
    if (abs(b) < SP_EPS * abs(s)) { return s; }
  }
  let w = a;
  s = s + b * w / (x - 1.0);
  s = s - 0.5 * b;
  var fac = 1.0;
  var k = 0.0;
  for (var j = 0; j < 12; j = j + 1) {
    fac = fac * (x + k);
    b = b / w;
    let t = fac * b / sp_zeta_a(j);
    if (!is_finite(t)) {
      // Past float32's range. CPU sums in double: where every term underflowed (s == 0) and its
      // factor x (x + 1) ... (x + 23) overflows double too (x > 7e12, or inf), it gets 0 * inf = NaN.
      if (s == 0.0 && x > 6.97e12) { return f_nan(); }
      break;
    }
    s = s + t;
    if (abs(t / s) < SP_EPS) { break; }
    k = k + 1.0;
    fac = fac * (x + k);
    b = b / w;
  }
  return s;
}

// polygamma(n, x) for n >= 2, as CPU's: (-1)^(n+1) n! zeta(n + 1, x), with n! = exp(lgamma(n + 1)).
fn sp_polygamma(n: f32, x: f32) -> f32 {
  let sgn = select(-1.0, 1.0, (u32(n) & 1u) == 1u);
  return sgn * f_exp(sp_lgamma(n + 1.0)) * sp_zeta(n + 1.0, x);
}

// ---- incomplete gamma --------------------------------------------------------------------------

// log(1 + t) - t without cancellation near 0.
fn sp_log1pmx(t: f32) -> f32 {
  if (abs(t) < 0.5) {
    // -t^2/2 + t^3/3 - ...
    var term = t;
    var s = 0.0;
    for (var k = 2.0; k < 40.0; k = k + 1.0) {
      term = -term * t;
      let d = term / k;
      s = s + d;
      if (abs(d) < SP_EPS * abs(s)) { break; }
    }
    return s;
  }
  return f_log1p(t) - t;
}

// x^a e^-x / gamma(a) (the common factor of both series). For a >= 10 through Stirling, so the
// large terms a log x, x and lgamma(a) never cancel in float32.
fn sp_igam_fac(a: f32, x: f32) -> f32 {
  if (a < 10.0) { return f_exp(a * f_log(x) - x - sp_lgamma(a)); }
  let r = 1.0 / a;
  let r2 = r * r;
  let mu = r * (0.08333333333333333 + r2 * (-0.002777777777777778 + r2 * 0.0007936507936507937));
  return sqrt(a * 0.15915494309189535) * f_exp(a * sp_log1pmx((x - a) / a) - mu);
}

// P(a, x) by its power series: fac / a * sum x^k / ((a + 1) ... (a + k)).
fn sp_igam_series(a: f32, x: f32) -> f32 {
  var term = 1.0;
  var s = 1.0;
  var r = a;
  for (var i = 0; i < 4096; i = i + 1) {
    r = r + 1.0;
    term = term * x / r;
    s = s + term;
    if (term <= SP_EPS * s) { break; }
  }
  return sp_igam_fac(a, x) * s / a;
}

// Q(a, x) by Legendre's continued fraction (modified Lentz), for x > a + 1.
fn sp_igamc_cf(a: f32, x: f32) -> f32 {
  let tiny = 1e-30;
  var b = x + 1.0 - a;
  var c = 1.0 / tiny;
  var d = 1.0 / b;
  var h = d;
  for (var i = 1.0; i < 4096.0; i = i + 1.0) {
    let an = -i * (i - a);
    b = b + 2.0;
    d = an * d + b;
    if (abs(d) < tiny) { d = tiny; }
    c = b + an / c;
    if (abs(c) < tiny) { c = tiny; }
    d = 1.0 / d;
    let del = d * c;
    h = h * del;
    if (abs(del - 1.0) < SP_EPS) { break; }
  }
  return sp_igam_fac(a, x) * h;
}

// Q(a, x) for large a (the series and fraction would need ~6 sqrt(a) terms): Temme's uniform
// expansion to its first term, erfc(eta sqrt(a/2)) / 2 + e^(-a eta^2/2) / sqrt(2 pi a) c0(eta),
// c0 = 1/(lambda - 1) - 1/eta, lambda = x/a, eta^2/2 = lambda - 1 - log lambda. The next term is
// O(1/a), below float32's resolution for a >= 1e4. `lower` gives P instead.
fn sp_igam_temme(a: f32, x: f32, lower: bool) -> f32 {
  let d = (x - a) / a;  // lambda - 1
  let h = -sp_log1pmx(d);  // eta^2 / 2
  let eta = f_copysign(sqrt(2.0 * h), d);
  var c0 = -1.0 / 3.0 + eta * (1.0 / 12.0 - eta * (2.0 / 135.0));
  if (abs(eta) > 0.01) { c0 = 1.0 / d - 1.0 / eta; }
  let r = f_exp(-a * h) / sqrt(6.283185307179586 * a) * c0;
  let arg = eta * sqrt(0.5 * a);
  if (lower) { return 0.5 * f_erfc(-arg) - r; }
  return 0.5 * f_erfc(arg) + r;
}

// Regularized lower incomplete gamma P(a, x) (torch.igamma) or, upper, Q(a, x) = 1 - P(a, x)
// (torch.igammac), CPU's special values: where P is 0 or 1, Q is the other; each side is computed
// where it is accurate (the series for P, the continued fraction for Q) and the other as 1 minus it.
fn sp_igam_pq(a: f32, x: f32, upper: bool) -> f32 {
  let zero = select(0.0, 1.0, upper);  // the result where P is 0
  if (x < 0.0 || a < 0.0) { return f_nan(); }
  if (a == 0.0) { return select(f_nan(), 1.0 - zero, x > 0.0); }
  if (x == 0.0) { return zero; }
  if (is_inf(a)) { return select(zero, f_nan(), is_inf(x)); }
  if (is_inf(x)) { return 1.0 - zero; }
  if (is_nan(a) || is_nan(x)) { return f_nan(); }
  if (a >= 1e4) { return sp_igam_temme(a, x, !upper); }
  if (x > a + 1.0) {
    let q = sp_igamc_cf(a, x);
    return select(1.0 - q, q, upper);
  }
  let p = sp_igam_series(a, x);
  return select(p, 1.0 - p, upper);
}
fn sp_igamma(a: f32, x: f32) -> f32 { return sp_igam_pq(a, x, false); }
fn sp_igammac(a: f32, x: f32) -> f32 { return sp_igam_pq(a, x, true); }

// ---- error function family ---------------------------------------------------------------------

// erfcx(z) = e^(z^2) erfc(z) for z >= 0: pointwise.wgsl's erfc fit without its e^(-z^2) factor
// (fractional error < 1.2e-7 for every z >= 0), so nothing under- or overflows.
fn sp_erfcx_pos(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.5 * z);
  return t * f_exp(-1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
         t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
         t * (-0.82215223 + t * 0.17087277)))))))));
}
fn sp_erfcx(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (x >= 0.0) { return sp_erfcx_pos(x); }
  // 2 e^(x^2) of the float32-rounded square, as CPU's float kernel computes it: squaring exactly
  // would be closer to the true value (by up to 4e-6 near x = -9), and so further from CPU's.
  return 2.0 * f_exp(x * x) - sp_erfcx_pos(-x);
}

// log of the standard normal CDF, as CPU's calc_log_ndtr.
fn sp_log_ndtr(x: f32) -> f32 {
  let t = x * 0.7071067811865476;
  if (x < -1.0) { return f_log(sp_erfcx(-t) * 0.5) - t * t; }
  return f_log1p(-f_erfc(t) * 0.5);
}

// The standard normal quantile. The middle through erfinv (2p - 1 is exact there); the tails from
// Abramowitz-Stegun 26.2.23 refined by two Halley steps on Phi(x) = erfc(-x / sqrt2) / 2, with
// the correction's e^(x^2/2) taken together with p so that it never overflows.
fn sp_ndtri(p: f32) -> f32 {
  if (is_nan(p) || p < 0.0 || p > 1.0) { return f_nan(); }
  if (p == 0.0) { return -f_inf(); }
  if (p == 1.0) { return f_inf(); }
  if (p >= 0.25 && p <= 0.75) { return 1.4142135623730951 * f_erfinv(2.0 * p - 1.0); }
  let upper = p > 0.5;
  let tail = select(p, 1.0 - p, upper);
  // log p from the bits when p is subnormal (log of a subnormal may be flushed or inexact on GPUs).
  var lt = f_log(tail);
  let pb = bitcast<u32>(tail);
  if ((pb >> 23u) == 0u) { lt = log(f32(pb)) - 103.27892990343184; }  // m * 2^-149
  let t = sqrt(-2.0 * lt);
  var x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (var i = 0; i < 2; i = i + 1) {
    // Phi(x) / p - 1 = erfcx(z) e^(-z^2 - log p) / 2 - 1 with z = -x / sqrt2: nothing underflows
    // for the smallest (subnormal) p, and z^2 is taken exactly (hi + lo, Dekker) since its
    // rounding would be amplified by e^.
    let z = -x * 0.7071067811865476;
    let hi = z * z;
    let c = 4097.0 * z;
    let zh = c - (c - z);
    let zl = z - zh;
    let lo = ((zh * zh - hi) + 2.0 * zh * zl) + zl * zl;
    let e = 0.5 * sp_erfcx_pos(z) * f_exp(-hi - lt) * (1.0 - lo) - 1.0;
    let u = e * 2.5066282746310002 * f_exp(lt + 0.5 * x * x);
    x = x - u / (1.0 + 0.5 * x * u);
  }
  return select(x, -x, upper);
}

// ---- the rest ----------------------------------------------------------------------------------

fn sp_entr(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (x > 0.0) { return -x * f_log(x); }
  if (x == 0.0) { return 0.0; }
  return -f_inf();
}

fn sp_xlog1py(x: f32, y: f32) -> f32 {
  if (is_nan(y)) { return f_nan(); }
  if (x == 0.0) { return 0.0; }
  return x * f_log1p(y);
}

// sin(pi x) / (pi x) with pi x rounded to float32 first, as CPU computes it.
fn sp_sinc(x: f32) -> f32 {
  if (x == 0.0) { return 1.0; }
  let p = 3.14159265358979323846 * x;
  return f_sin(p) / p;
}

fn sp_logaddexp(a: f32, b: f32) -> f32 {
  if (is_nan(a) || is_nan(b)) { return f_nan(); }
  if (is_inf(a) && a == b) { return a; }
  return max(a, b) + f_log1p(f_exp(-abs(a - b)));
}
fn sp_logaddexp2(a: f32, b: f32) -> f32 {
  if (is_nan(a) || is_nan(b)) { return f_nan(); }
  if (is_inf(a) && a == b) { return a; }
  return max(a, b) + f_log1p(f_exp2(-abs(a - b))) * 1.4426950408889634;
}

// frexp from the bits: x = m * 2^e with 0.5 <= |m| < 1 (subnormals normalised); 0, inf and NaN
// keep x with exponent 0, as C's frexp.
fn sp_frexp_m(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let ef = (b >> 23u) & 0xffu;
  let m = b & 0x7fffffu;
  if (ef == 255u || (ef == 0u && m == 0u)) { return x; }
  var frac = m;
  if (ef == 0u) { frac = (m << (countLeadingZeros(m) - 8u)) & 0x7fffffu; }
  return bitcast<f32>((b & 0x80000000u) | (126u << 23u) | frac);
}
fn sp_frexp_e(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let ef = (b >> 23u) & 0xffu;
  let m = b & 0x7fffffu;
  if (ef == 255u || (ef == 0u && m == 0u)) { return 0.0; }
  if (ef == 0u) { return f32(i32(31u - countLeadingZeros(m)) - 148); }
  return f32(i32(ef) - 126);
}

// nextafter in the storage dtype's own steps: bits of float32, float16 or bfloat16 (x is exactly
// representable in its dtype, so its bits are exact).
fn sp_next_bits(b: u32, x: f32, y: f32) -> u32 {  // one step of the magnitude bits towards y
  return select(b - 1u, b + 1u, (y > x) == (x > 0.0));
}
fn sp_nextafter(x: f32, y: f32) -> f32 {
  if (is_nan(x) || is_nan(y)) { return f_nan(); }
  if (x == y) { return y; }
  if (x == 0.0) { return f_copysign(bitcast<f32>(1u), y); }
  return bitcast<f32>(sp_next_bits(bitcast<u32>(x), x, y));
}
fn sp_nextafter_f16(x: f32, y: f32) -> f32 {
  if (is_nan(x) || is_nan(y)) { return f_nan(); }
  if (x == y) { return y; }
  if (x == 0.0) { return f_copysign(5.960464477539063e-08, y); }
  return f16_to_f32(sp_next_bits(f32_to_f16(x), x, y));
}
fn sp_nextafter_bf16(x: f32, y: f32) -> f32 {
  if (is_nan(x) || is_nan(y)) { return f_nan(); }
  if (x == y) { return y; }
  if (x == 0.0) { return f_copysign(bitcast<f32>(0x10000u), y); }
  return bitcast<f32>(sp_next_bits(bitcast<u32>(x) >> 16u, x, y) << 16u);
}

// gcd/lcm as CPU's calc_gcd: Euclid on the absolute values; lcm = |a / g * b| (wrapping).
fn sp_gcd(a0: i32, b0: i32) -> i32 { return sp_gcd_w(a0, b0, 0u); }
// The same where CPU's abs wraps to the storage dtype (int8: abs(-128) is -128): s = 32 - bits.
fn sp_gcd_w(a0: i32, b0: i32, s: u32) -> i32 {
  var a = (abs(a0) << s) >> s;
  var b = (abs(b0) << s) >> s;
  loop {
    if (a == 0) { break; }
    let c = a;
    a = b % a;
    b = c;
  }
  return b;
}
fn sp_lcm(a: i32, b: i32) -> i32 { return sp_lcm_w(a, b, 0u); }
fn sp_lcm_w(a: i32, b: i32, s: u32) -> i32 {
  let g = sp_gcd_w(a, b, s);
  if (g == 0) { return 0; }
  return abs(a / g * b);
}
fn sp_i64_gcd(a0: vec2<u32>, b0: vec2<u32>) -> vec2<u32> {
  var a = i64_abs(a0);
  var b = i64_abs(b0);
  loop {
    if (!i64_nz(a)) { break; }
    let c = a;
    a = i64_rem(b, a);
    b = c;
  }
  return b;
}
fn sp_i64_lcm(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let g = sp_i64_gcd(a, b);
  if (!i64_nz(g)) { return vec2<u32>(0u, 0u); }
  return i64_abs(i64_mul(i64_div(a, g), b));
}
