// float32 pow to about an ulp, for ops/binary.cpp's pow rows (lib::Pow: emitted after pointwise.wgsl
// and f64.wgsl, whose functions it uses). |x|^y = 2^(y log2|x|) with log2|x| and its product by y
// in binary64, whose error terms no compiler can fold away (f32 pairs lose theirs where the compiler
// reassociates, as lavapipe's NIR does); pointwise.wgsl's f_pow_with handles the edge cases.
// |x| = (1 + f) 2^e; ln(1 + f) = 2 atanh(s), s = f / (2 + f) = s0 + sl with sl from the exact
// remainder f - s0 (2 + f), and 2 atanh(s) = 2s + 2s^3/3 + ... (f_atanh_tail); then
// t = y (e + ln(1 + f) log2 e) = k + w with |w| <= 1/2, and the result is e^(w ln 2) (Taylor) * 2^k.
fn f_pow_acc(x: f32, y: f32) -> f32 {
  let ax = abs(x);
  var mag = f_pow_exact(ax, y);
  if (mag < 0.0 && ax > 0.0 && is_finite(ax) && is_finite(y)) {
    let me = f_frexp_sqrt2(ax);
    let f = me.x - 1.0;
    let d = f64_add(f64_from_f32_bits(0x40000000u), f64_from_f32_bits(bitcast<u32>(f)));  // 2 + f, exact
    let s0 = f / (2.0 + f);
    let rem = f64_fma(f64_neg(f64_from_f32_bits(bitcast<u32>(s0))), d, f64_from_f32_bits(bitcast<u32>(f)));
    let sl = f64_to_f32(rem) / (2.0 + f);
    // ln(1 + f) = 2 s0 + 2 s0^3 / 3 (binary64: up to 1% of the whole) + the rest in float32
    let z = s0 * s0;
    let s64 = f64_from_f32_bits(bitcast<u32>(s0));
    let cube = f64_mul(f64_mul(f64_mul(s64, s64), s64), vec2<u32>(0x55555555u, 0x3fe55555u));  // * 2/3
    let lo = 2.0 * sl * (1.0 + z) + 2.0 * s0 * z * f_atanh_tail2(z);  // 2 atanh(s0 + sl), sl to first order
    let ln1f = f64_add(f64_add(f64_from_f32_bits(bitcast<u32>(2.0 * s0)), cube), f64_from_f32_bits(bitcast<u32>(lo)));
    let log2e = vec2<u32>(0x652b82feu, 0x3ff71547u);
    let l2 = f64_add(f64_mul(ln1f, log2e), f64_from_f32_bits(bitcast<u32>(me.y)));
    let t = f64_mul(l2, f64_from_f32_bits(bitcast<u32>(y)));
    let k = round(clamp(f64_to_f32(t), -300.0, 300.0));
    let w = clamp(f64_to_f32(f64_sub(t, f64_from_f32_bits(bitcast<u32>(k)))), -1.0, 1.0);
    mag = f_ldexp(f_exp_taylor(w * LN2_HI), k);
  }
  return f_pow_with(x, y, mag);
}
