// Shared by every kernel (the kernel layer adds it first): the folded-grid linear id, and dtype conversions that
// round exactly as PyTorch's CPU casts do (storage is 32-bit words; sub-word types are unpacked here).

fn linear_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, wg: u32) -> u32 {
  return ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * wg + lid;
}

// The GEMM kernels' workgroup order (matmul.wgsl, matmul_sg.wgsl): workgroup g of a grid of
// batch * splits * tiles_m * tiles_n -> (z = batch and split index, tile row, tile column). Tiles
// go in groups of 8 tile rows that sweep the columns together, so their B tiles stay in cache.
fn gemm_tile(wid: vec3<u32>, nwg: vec3<u32>, tiles_m: u32, tiles_n: u32) -> vec3<u32> {
  let g = linear_id(wid, nwg, 0u, 1u);
  let per = tiles_m * tiles_n;
  let r = g % per;
  let width = 8u * tiles_n;
  let first_m = (r / width) * 8u;
  let gsize = min(tiles_m - first_m, 8u);
  return vec3<u32>(g / per, first_m + (r % width) % gsize, (r % width) / gsize);
}

// The transposes' workgroup order (transpose16.wgsl, transpose32.wgsl): workgroup wid of a grid of
// batch * tiles_a * tiles_b square tiles of `size` -> (batch index, first a, first b); b varies
// fastest.
fn transpose_tile(wid: vec3<u32>, nwg: vec3<u32>, tiles_a: u32, tiles_b: u32, size: u32) -> vec3<u32> {
  let g = linear_id(wid, nwg, 0u, 1u);
  let per = tiles_a * tiles_b;
  return vec3<u32>(g / per, ((g % per) / tiles_b) * size, ((g % per) % tiles_b) * size);
}

fn pow2(k: i32) -> f32 { return bitcast<f32>(u32(127 + k) << 23u); }

// f16 bits -> f32, exact for every value (subnormals, NaN payloads kept).
fn f16_to_f32(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { return bitcast<f32>(bitcast<u32>(f32(m) * pow2(-24)) | s); }
  if (e == 31u) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}

// f32 -> f16 bits, round to nearest even; a NaN stays quiet with its top payload bits, as CPU's
// (F16C) conversion keeps them.
fn f32_to_f16(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  let s = (x >> 16u) & 0x8000u;
  let e = i32((x >> 23u) & 0xffu);
  let m = x & 0x7fffffu;
  if (e == 255) { return select(s | 0x7c00u, s | 0x7e00u | (m >> 13u), m != 0u); }
  let he = e - 112;
  if (he >= 31) { return s | 0x7c00u; }
  if (he <= 0) {
    if (he < -10) { return s; }
    let mm = m | 0x800000u;
    let sh = u32(14 - he);
    var r = mm >> sh;
    let rem = mm & ((1u << sh) - 1u);
    let half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (r & 1u) == 1u)) { r = r + 1u; }
    return s | r;
  }
  var r = (u32(he) << 10u) | (m >> 13u);
  let rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u) == 1u)) { r = r + 1u; }
  return s | r;
}

// f32 -> bf16 bits, round to nearest even; NaN becomes 0x7fc0, as c10::BFloat16 does.
fn f32_to_bf16(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) { return 0x7fc0u; }
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}

// u32 -> f32 rounded to nearest even (WGSL's conversion need not round that way).
fn u32_to_f32(v: u32) -> f32 {
  if (v < 0x1000000u) { return f32(v); }
  let lz = countLeadingZeros(v);
  let n = v << lz;
  var mant = n >> 8u;
  let rem = n & 0xffu;
  if (rem > 0x80u || (rem == 0x80u && (mant & 1u) == 1u)) { mant = mant + 1u; }
  return f32(mant) * pow2(8 - i32(lz));
}

fn i32_to_f32(v: i32) -> f32 {
  let a = u32_to_f32(select(u32(v), 0u - u32(v), v < 0));
  return select(a, -a, v < 0);
}

// Unsigned 64-bit (lo, hi) -> f32 rounded to nearest even.
fn u64_to_f32(v: vec2<u32>) -> f32 {
  if (v.y == 0u) { return u32_to_f32(v.x); }
  let sh = countLeadingZeros(v.y);
  let hi = select((v.y << sh) | (v.x >> (32u - sh)), v.y, sh == 0u);
  let lo = v.x << sh;
  var mant = hi >> 8u;
  let rem = hi & 0xffu;
  if (rem > 0x80u || (rem == 0x80u && (lo != 0u || (mant & 1u) == 1u))) { mant = mant + 1u; }
  return f32(mant) * pow2(40 - i32(sh));
}

fn i64_neg(v: vec2<u32>) -> vec2<u32> {
  let lo = 0u - v.x;
  return vec2<u32>(lo, (0u - v.y) - select(0u, 1u, v.x != 0u));
}

fn i64_to_f32(v: vec2<u32>) -> f32 {
  let neg = (v.y >> 31u) == 1u;
  let a = u64_to_f32(select(v, i64_neg(v), neg));
  return select(a, -a, neg);
}

// f32 -> i64 truncating; NaN and out-of-range give INT64_MIN like x86's cvttss2si.
fn f32_to_i64(f: f32) -> vec2<u32> {
  let a = abs(trunc(f));
  if (!(a < 9223372036854775808.0)) { return vec2<u32>(0u, 0x80000000u); }
  var r: vec2<u32>;
  if (a < 4294967296.0) {
    r = vec2<u32>(u32(a), 0u);
  } else {
    let hi = floor(a * pow2(-32));
    r = vec2<u32>(u32(a - hi * 4294967296.0), u32(hi));
  }
  return select(r, i64_neg(r), f < 0.0);
}

// f32 -> i32 truncating; NaN and out-of-range give INT32_MIN like x86's cvttss2si.
fn f32_to_i32(f: f32) -> i32 {
  if (!(abs(f) < 2147483648.0)) { return i32(-2147483647) - 1; }
  return i32(f);
}

fn i64_from_i32(v: i32) -> vec2<u32> { return vec2<u32>(bitcast<u32>(v), select(0u, 0xffffffffu, v < 0)); }
