// Separable 2-d interpolation as CPU's separable kernels compute it (ops/upsample_sep.cpp): width, then
// height, with taps and weights computed on the host as CPU does. Used for antialiasing and for uint8.
#pragma once
#include <ATen/ATen.h>

#include <optional>

namespace webgpu::ops {

// self: (N, C, H, W) float32 or uint8; out_sizes from the op's meta function. cubic: bicubic (else
// bilinear); antialias: CPU's antialiased filters (else uint8's plain bilinear/bicubic taps).
at::Tensor separable_interp2d(const at::Tensor& self, at::IntArrayRef out_sizes, bool align,
                              std::optional<double> scale_h, std::optional<double> scale_w, bool cubic, bool antialias);

}  // namespace webgpu::ops
