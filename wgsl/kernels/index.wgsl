// Helpers for the indexing kernels (csrc/ops/index.cpp). Index values arrive as int64 bits
// (vec2<u32>: lo, hi) whatever the index dtype; sizes fit u32 (the host checks).

const BAD_INDEX: u32 = 0xffffffffu;

// idx in [0, size) -> idx; idx in [-size, 0) -> idx + size when negatives are allowed; else BAD_INDEX.
fn wrap_index(v: vec2<u32>, size: u32, allow_neg: bool) -> u32 {
  if (v.y == 0u && v.x < size) { return v.x; }
  if (allow_neg && size != 0u && v.y == 0xffffffffu && v.x >= 0u - size) { return v.x + size; }
  return BAD_INDEX;
}

fn is_nan_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

// CPU's scatter_reduce amax/amin: a NaN on either side wins.
fn max_nan(a: f32, b: f32) -> f32 { return select(select(max(a, b), b, is_nan_f32(b)), a, is_nan_f32(a)); }
fn min_nan(a: f32, b: f32) -> f32 { return select(select(min(a, b), b, is_nan_f32(b)), a, is_nan_f32(a)); }
