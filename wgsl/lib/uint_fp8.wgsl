// Conversions of the unsigned 16/32/64-bit and float8 dtypes, bit-exact with PyTorch's CPU casts
// (docs/design.md, "Dtype storage"). The kernel layer adds this file after common.wgsl when a kernel
// names one of its functions (`f8e...`, `f32_to_u...`).

// f32 -> uint32 as x86 CPU casts: values at or above 2^31 go through (f - 2^31) ^ 2^31, the rest
// through the signed truncation (NaN, -inf and large negatives give 2^31; 2^32 and above give 0).
fn f32_to_u32(f: f32) -> u32 {
  if (f >= 2147483648.0) { return bitcast<u32>(f32_to_i32(f - 2147483648.0)) ^ 0x80000000u; }
  return bitcast<u32>(f32_to_i32(f));
}

// f32 -> uint64 the same way, around 2^63.
fn f32_to_u64(f: f32) -> vec2<u32> {
  if (f >= 9223372036854775808.0) {
    let r = f32_to_i64(f - 9223372036854775808.0);
    return vec2<u32>(r.x, r.y ^ 0x80000000u);
  }
  return f32_to_i64(f);
}

// |f| bits `a` (below the type's overflow threshold) -> float8 code without sign, rounded to nearest
// even as c10's fp8*_from_fp32_value: `mbits` mantissa bits, exponent bias `bias`.
fn f8_round(a: u32, mbits: u32, bias: u32) -> u32 {
  let e = a >> 23u;
  if (e < 128u - bias) {
    // Below the smallest normal: a multiple of the subnormal quantum 2^(1 - bias - mbits).
    if (e == 0u) { return 0u; }
    let s = (151u - bias - mbits) - e;
    if (s >= 25u) { return 0u; }
    let m = (a & 0x7fffffu) | 0x800000u;
    var q = m >> s;
    let rem = m & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    if (rem > half || (rem == half && (q & 1u) == 1u)) { q = q + 1u; }
    return q;
  }
  let sh = 23u - mbits;
  let r = a - ((127u - bias) << 23u) + ((1u << (sh - 1u)) - 1u) + ((a >> sh) & 1u);
  return (r >> sh) & 0xffu;
}

// float8 code -> f32 for a normal or subnormal code with exponent field e and mantissa m.
fn f8_value(s: u32, e: u32, m: u32, mbits: u32, bias: u32) -> f32 {
  if (e == 0u) {
    let v = f32(m) * pow2(1 - i32(bias) - i32(mbits));
    return bitcast<f32>(bitcast<u32>(v) | s);
  }
  return bitcast<f32>(s | ((e + 127u - bias) << 23u) | (m << (23u - mbits)));
}

// f32 -> a float8 with infinities or saturation (e4m3fn, e5m2): |f| bits at or above `max_bits`
// give the code `over` (NaN gives 0x7f), the rest round to nearest even, a rounded code past `top`
// becoming `top`; the sign bit is kept.
fn f32_to_f8(f: f32, mbits: u32, bias: u32, max_bits: u32, over: u32, top: u32) -> u32 {
  let x = bitcast<u32>(f);
  let s = (x >> 24u) & 0x80u;
  let a = x & 0x7fffffffu;
  if (a >= max_bits) { return s | select(over, 0x7fu, a > 0x7f800000u); }
  let r = f8_round(a, mbits, bias);
  return s | select(r, top, r > top);
}

// e4m3fn: bias 7, no infinities, NaN = S.1111.111; overflow saturates to +-448.
fn f8e4m3fn_to_f32(b: u32) -> f32 {
  let s = (b & 0x80u) << 24u;
  let e = (b >> 3u) & 0xfu;
  let m = b & 7u;
  if (e == 15u && m == 7u) { return bitcast<f32>(s | 0x7ff00000u); }
  return f8_value(s, e, m, 3u, 7u);
}
fn f32_to_f8e4m3fn(f: f32) -> u32 { return f32_to_f8(f, 3u, 7u, 1087u << 20u, 0x7eu, 0x7eu); }
// The same for a c10 whose e4m3fn conversion does not saturate (kernel/dtype_uint_fp8.cpp picks):
// 480 and above, infinities and NaN become NaN (0x7f), and values rounding up past 448 reach 0x7f too.
fn f32_to_f8e4m3fn_nan(f: f32) -> u32 { return f32_to_f8(f, 3u, 7u, 1087u << 20u, 0x7fu, 0x7fu); }

// e5m2: bias 15, IEEE-like (infinities, NaNs); decoded as CPU's half -> float, which quiets NaNs.
fn f8e5m2_to_f32(b: u32) -> f32 {
  let s = (b & 0x80u) << 24u;
  let e = (b >> 2u) & 0x1fu;
  let m = b & 3u;
  if (e == 31u) { return bitcast<f32>(s | select(0x7fc00000u | (m << 21u), 0x7f800000u, m == 0u)); }
  return f8_value(s, e, m, 2u, 15u);
}
fn f32_to_f8e5m2(f: f32) -> u32 { return f32_to_f8(f, 2u, 15u, 143u << 23u, 0x7cu, 0x7fu); }

// fnuz: no infinities, no negative zero, one NaN (0x80, read as CPU's 0x7f800001); overflow is NaN.
fn f8fnuz_to_f32(b: u32, mbits: u32, bias: u32) -> f32 {
  // (b >> 7u) is 1 here: a runtime value, since a NaN constant expression is a WGSL error.
  if (b == 0x80u) { return bitcast<f32>(0x7f800000u | (b >> 7u)); }
  let s = (b & 0x80u) << 24u;
  return f8_value(s, (b & 0x7fu) >> mbits, b & ((1u << mbits) - 1u), mbits, bias);
}
fn f32_to_f8fnuz(f: f32, mbits: u32, bias: u32, max_bits: u32) -> u32 {
  let x = bitcast<u32>(f);
  let a = x & 0x7fffffffu;
  if (a >= max_bits) { return 0x80u; }
  let r = f8_round(a, mbits, bias);
  if (r == 0u) { return 0u; }
  return ((x >> 24u) & 0x80u) | r;
}
fn f8e4m3fnuz_to_f32(b: u32) -> f32 { return f8fnuz_to_f32(b, 3u, 8u); }
fn f32_to_f8e4m3fnuz(f: f32) -> u32 { return f32_to_f8fnuz(f, 3u, 8u, 0x87u << 23u); }
fn f8e5m2fnuz_to_f32(b: u32) -> f32 { return f8fnuz_to_f32(b, 2u, 16u); }
fn f32_to_f8e5m2fnuz(f: f32) -> u32 { return f32_to_f8fnuz(f, 2u, 16u, 0x8fu << 23u); }
