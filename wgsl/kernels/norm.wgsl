// Normalisation row kernels (ops/norm.cpp) build on the workgroup sums of wgsl/kernels/softmax.wgsl; their
// bodies are generated per affine layout. Shared helpers:

// 1 / sqrt(var + eps), with a variance that rounding made slightly negative clamped to 0 as on CPU.
fn norm_rstd(v: f32, eps: f32) -> f32 { return 1.0 / sqrt(max(v, 0.0) + eps); }
