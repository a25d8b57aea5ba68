// complex64 arithmetic for the elementwise engine's complex rows (ops/complex.cpp): a complex64 is
// two float32 words (real, imag), read raw as vec2<u32>. Formulas follow c10::complex's, so results
// match CPU's within float32 rounding (division scales as c10 / numpy do).
fn c_ld(r: vec2<u32>) -> vec2<f32> { return bitcast<vec2<f32>>(r); }
fn c_st(v: vec2<f32>) -> vec2<u32> { return bitcast<vec2<u32>>(v); }
fn c_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// x / +0 as IEEE divides: +-inf, NaN for 0 and NaN (explicit: a compiler may fold 0.0 / y to 0).
fn c_div0(x: f32) -> f32 { return select(f_copysign(f_inf(), x), f_nan(), x == 0.0 || is_nan(x)); }
fn c_div(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  let a = x.x; let b = x.y; let c = y.x; let d = y.y;
  let ac = abs(c); let ad = abs(d);
  if (ac >= ad) {
    if (ac == 0.0 && ad == 0.0) { return vec2<f32>(c_div0(a), c_div0(b)); }
    let rat = d / c;
    let scl = 1.0 / (c + d * rat);
    return vec2<f32>((a + b * rat) * scl, (b - a * rat) * scl);
  }
  let rat = c / d;
  let scl = 1.0 / (d + c * rat);
  return vec2<f32>((a * rat + b) * scl, (b * rat - a) * scl);
}
fn c_exp(a: vec2<f32>) -> vec2<f32> {
  // exp(x + iy) = e^x (cos y + i sin y), with C99's special cases (as CPU's): an imaginary part of
  // exactly 0 keeps (e^x, y); x = -inf gives zeros, x = +inf with y inf or NaN gives (inf, NaN).
  if (a.y == 0.0) { return vec2<f32>(f_exp(a.x), a.y); }
  let y_finite = !(is_inf(a.y) || is_nan(a.y));
  if (is_inf(a.x) && !y_finite) {
    if (a.x < 0.0) { return vec2<f32>(0.0, 0.0); }
    return vec2<f32>(a.x, bitcast<f32>(0x7fc00000u | (bitcast<u32>(a.y) & 0u)));  // a NaN (not a constant)
  }
  let m = f_exp(a.x);
  if (is_inf(a.x) && a.x < 0.0) { return vec2<f32>(0.0 * f_cos(a.y), 0.0 * f_sin(a.y)); }
  return vec2<f32>(m * f_cos(a.y), m * f_sin(a.y));
}
// sgn(z) = z / |z|, 0 at 0 (CPU: z / std::abs(z)).
fn c_sgn(a: vec2<f32>) -> vec2<f32> {
  let m = f_hypot(a.x, a.y);
  if (m == 0.0) { return vec2<f32>(0.0, 0.0); }
  return a / m;
}
fn c_isnan(a: vec2<f32>) -> bool { return is_nan(a.x) || is_nan(a.y); }
// log z = (log |z|, arg z), as clogf.
fn c_log(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(f_log(f_hypot(a.x, a.y)), f_atan2(a.y, a.x)); }
// c10's log1p(z): 0.5 log1p(x (2 + x) + y^2) near 0, log |1 + z| elsewhere; the angle of 1 + z.
fn c_log1p(a: vec2<f32>) -> vec2<f32> {
  let x = a.x; let y = a.y;
  let theta = f_atan2(y, x + 1.0);
  if (f_hypot(x, y) < 0.5) {
    let r = x * (2.0 + x) + y * y;
    if (r == 0.0) { return vec2<f32>(x, theta); }
    return vec2<f32>(0.5 * f_log1p(r), theta);
  }
  return vec2<f32>(f_log(f_hypot(x + 1.0, y)), theta);
}
// csqrtf: the principal root, its imaginary part with the sign of z's (branch cut on the negative
// reals), C99's infinite cases.
fn c_sqrt(a: vec2<f32>) -> vec2<f32> {
  let x = a.x; let y = a.y;
  if (is_inf(y)) { return vec2<f32>(f_inf(), y); }
  if (is_inf(x)) {
    if (x > 0.0) { return vec2<f32>(x, select(f_copysign(0.0, y), y, is_nan(y))); }
    return vec2<f32>(select(0.0, y, is_nan(y)), f_copysign(f_inf(), y));
  }
  if (is_nan(x) || is_nan(y)) { return vec2<f32>(f_nan(), f_nan()); }
  if (y == 0.0) {
    if (x < 0.0) { return vec2<f32>(0.0, f_copysign(f_sqrt(-x), y)); }
    return vec2<f32>(f_sqrt(abs(x)), y);
  }
  // Scaled so that |z| + |x| neither overflows nor loses subnormal bits.
  var sc = 1.0;
  var xs = x; var ys = y;
  if (max(abs(x), abs(y)) > 1.0e37) { xs = x * 0.25; ys = y * 0.25; sc = 2.0; }
  if (max(abs(x), abs(y)) < 1.0e-36) { xs = x * 16777216.0; ys = y * 16777216.0; sc = 1.0 / 4096.0; }
  let d = f_hypot(xs, ys);
  if (xs > 0.0) {
    let r = f_sqrt(0.5 * (d + xs));
    return vec2<f32>(r * sc, f_copysign(abs(0.5 * (ys / r)), y) * sc);
  }
  let s = f_sqrt(0.5 * (d - xs));
  return vec2<f32>(abs(0.5 * (ys / s)) * sc, f_copysign(s, y) * sc);
}
// cpowf: exp(b log a), no other special case (0^b through log 0 = -inf, as glibc's).
fn c_pow(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return c_exp(c_mul(b, c_log(a))); }
// ATen's complex _log_add_exp_helper: the larger real part is max; a NaN part anywhere gives NaN;
// equal infinite real parts give min (-inf) or log(exp(min) + exp(max)) (+inf).
fn c_logaddexp(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  if (c_isnan(x) || c_isnan(y)) { return vec2<f32>(f_nan(), f_nan()); }
  var mn = y; var mx = x;
  if (x.x < y.x) { mn = x; mx = y; }
  if (is_inf(mn.x) && mn.x == mx.x) {
    if (mn.x < 0.0) { return mn; }
    return c_log(c_exp(mn) + c_exp(mx));
  }
  return c_log1p(c_exp(mn - mx)) + mx;
}
// ATen's lerp: |w| < 0.5 (as w.x^2 + w.y^2 < 0.25) ? a + w (b - a) : b - (b - a)(1 - w).
fn c_lerp(a: vec2<f32>, b: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
  if (w.x * w.x + w.y * w.y < 0.25) { return a + c_mul(w, b - a); }
  return b - c_mul(b - a, vec2<f32>(1.0, 0.0) - w);
}
