// Normalisation row kernels (ops/norm.cpp) build on the workgroup folds of wgsl/kernels/rows.wgsl; their
// bodies are generated per affine layout. Shared helpers:

// 1 / sqrt(var + eps), with a variance that rounding made slightly negative clamped to 0 as on CPU.
// A NaN variance (an infinity in the row) stays NaN, so the whole row is NaN as on CPU (max() may
// drop a NaN operand).
fn norm_rstd(v: f32, eps: f32) -> f32 {
  let nan = (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
  return 1.0 / sqrt(select(max(v, 0.0), v, nan) + eps);
}
