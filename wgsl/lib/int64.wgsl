// Exact signed 64-bit integer arithmetic on vec2<u32> (x = low word, y = high word), two's
// complement, wrapping like C++ int64_t. Included by the elementwise engine when an op needs it.

fn i64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn i64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

// Full 32x32 -> 64 unsigned product.
fn u32_mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u;
  let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  let lo = (p00 & 0xffffu) | (mid << 16u);
  let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
  return vec2<u32>(lo, hi);
}

fn i64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = u32_mul_wide(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}

fn i64_is_neg(a: vec2<u32>) -> bool { return (a.y >> 31u) == 1u; }
fn i64_abs(a: vec2<u32>) -> vec2<u32> { return select(a, i64_neg(a), i64_is_neg(a)); }
fn i64_eq(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }
fn i64_nz(a: vec2<u32>) -> bool { return (a.x | a.y) != 0u; }
fn i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  let ah = bitcast<i32>(a.y); let bh = bitcast<i32>(b.y);
  return ah < bh || (ah == bh && a.x < b.x);
}
fn i64_le(a: vec2<u32>, b: vec2<u32>) -> bool { return !i64_lt(b, a); }
fn u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }
fn i64_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, i64_lt(a, b)); }
fn i64_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, i64_lt(b, a)); }
fn b2l(c: bool) -> vec2<u32> { return vec2<u32>(select(0u, 1u, c), 0u); }
fn i64_sign(a: vec2<u32>) -> vec2<u32> {
  return select(select(vec2<u32>(0u), vec2<u32>(1u, 0u), i64_nz(a)), vec2<u32>(0xffffffffu), i64_is_neg(a));
}

// Shifts by 0..63 (callers clamp out-of-range counts first).
fn u64_shl(a: vec2<u32>, n: u32) -> vec2<u32> {
  if (n == 0u) { return a; }
  if (n >= 32u) { return vec2<u32>(0u, a.x << (n - 32u)); }
  return vec2<u32>(a.x << n, (a.y << n) | (a.x >> (32u - n)));
}
fn u64_shr(a: vec2<u32>, n: u32) -> vec2<u32> {
  if (n == 0u) { return a; }
  if (n >= 32u) { return vec2<u32>(a.y >> (n - 32u), 0u); }
  return vec2<u32>((a.x >> n) | (a.y << (32u - n)), a.y >> n);
}
fn i64_sar(a: vec2<u32>, n: u32) -> vec2<u32> {
  if (n == 0u) { return a; }
  let hi = bitcast<i32>(a.y);
  if (n >= 32u) { return vec2<u32>(bitcast<u32>(hi >> min(n - 32u, 31u)), bitcast<u32>(hi >> 31u)); }
  return vec2<u32>((a.x >> n) | (a.y << (32u - n)), bitcast<u32>(hi >> n));
}
// PyTorch's shifts: a count outside [0, 64) gives 0 (left) or the sign fill (right).
fn i64_lshift(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (b.y != 0u || b.x >= 64u) { return vec2<u32>(0u); }
  return u64_shl(a, b.x);
}
fn i64_rshift(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (b.y != 0u || b.x >= 64u) { return i64_sar(a, 63u); }
  return i64_sar(a, b.x);
}

// Unsigned 64-bit division by shift and subtract; returns (quotient, remainder) packed as vec4.
fn u64_divmod(n: vec2<u32>, d: vec2<u32>) -> vec4<u32> {
  if (n.y == 0u && d.y == 0u) {
    if (d.x == 0u) { return vec4<u32>(0xffffffffu, 0xffffffffu, n.x, 0u); }
    return vec4<u32>(n.x / d.x, 0u, n.x % d.x, 0u);
  }
  var q = vec2<u32>(0u);
  var r = vec2<u32>(0u);
  for (var i = 63i; i >= 0; i = i - 1) {
    r = u64_shl(r, 1u);
    let bit = select((n.x >> u32(i)) & 1u, (n.y >> u32(i - 32)) & 1u, i >= 32);
    r.x = r.x | bit;
    if (!u64_lt(r, d)) {
      r = i64_sub(r, d);
      if (i >= 32) { q.y = q.y | (1u << u32(i - 32)); } else { q.x = q.x | (1u << u32(i)); }
    }
  }
  return vec4<u32>(q, r);
}
// Truncating division and C remainder. By zero (CPU raises ZeroDivisionError, which a kernel
// cannot) both give CUDA's values: -1 for the quotient; for the remainder 2^32 - 1 where the
// dividend is >= 0 and -1 where it is negative (and so remainder's too).
fn i64_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (!i64_nz(b)) { return vec2<u32>(0xffffffffu); }
  let qr = u64_divmod(i64_abs(a), i64_abs(b));
  return select(qr.xy, i64_neg(qr.xy), i64_is_neg(a) != i64_is_neg(b));
}
fn i64_rem(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (!i64_nz(b)) { return vec2<u32>(0xffffffffu, select(0u, 0xffffffffu, i64_is_neg(a))); }
  let qr = u64_divmod(i64_abs(a), i64_abs(b));
  return select(qr.zw, i64_neg(qr.zw), i64_is_neg(a));
}
fn i64_div_floor(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (!i64_nz(b)) { return vec2<u32>(0xffffffffu); }
  let q = i64_div(a, b);
  let r = i64_rem(a, b);
  if (i64_nz(r) && (i64_is_neg(r) != i64_is_neg(b))) { return i64_sub(q, vec2<u32>(1u, 0u)); }
  return q;
}
fn i64_remainder(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let r = i64_rem(a, b);
  if (i64_nz(r) && (i64_is_neg(r) != i64_is_neg(b))) { return i64_add(r, b); }
  return r;
}

// Integer power as c10's powi: negative exponents give 0 except for bases 1 and -1.
fn i64_pow(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (i64_is_neg(b)) {
    if (a.x == 1u && a.y == 0u) { return a; }
    if (a.x == 0xffffffffu && a.y == 0xffffffffu) { return select(vec2<u32>(1u, 0u), a, (b.x & 1u) == 1u); }
    return vec2<u32>(0u);
  }
  var r = vec2<u32>(1u, 0u);
  var base = a;
  var e = b;
  for (var i = 0; i < 64; i = i + 1) {
    if (!i64_nz(e)) { break; }
    if ((e.x & 1u) == 1u) { r = i64_mul(r, base); }
    e = u64_shr(e, 1u);
    base = i64_mul(base, base);
  }
  return r;
}
