// complex64 arithmetic for the elementwise engine's complex rows (ops/complex.cpp): a complex64 is
// two float32 words (real, imag), read raw as vec2<u32>. Formulas follow c10::complex's, so results
// match CPU's within float32 rounding (division scales as c10 / numpy do).
fn c_ld(r: vec2<u32>) -> vec2<f32> { return bitcast<vec2<f32>>(r); }
fn c_st(v: vec2<f32>) -> vec2<u32> { return bitcast<vec2<u32>>(v); }
fn c_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
fn c_div(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  let a = x.x; let b = x.y; let c = y.x; let d = y.y;
  let ac = abs(c); let ad = abs(d);
  if (ac >= ad) {
    if (ac == 0.0 && ad == 0.0) { return vec2<f32>(a / ac, b / ad); }
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
