// Helpers shared by the NN op families (pool, upsample, unpool, fold, grid_sample, distance).
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "kernel/wgsl.h"

namespace webgpu::ops {

// A meta tensor of t's sizes and strides: running an op's own meta function on it gives CPU's
// argument checks and output sizes without touching the device.
inline at::Tensor meta_of(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

// The entry point of the one-invocation-per-element kernels of wgsl/kernels/pool.wgsl, upsample.wgsl,
// unpool.wgsl, fold.wgsl, grid_sample.wgsl and distance.wgsl (wgsl/lib/per_element.wgsl), added before
// their section: invocation t < P.n runs the section's run(t).
inline std::string per_element_main() { return kernel::library("per_element"); }

// A result the kernels wrote contiguous (NC(D)HW), in the memory format CPU and CUDA give it: that of
// `like` (the input, or the meta function's output), so a channels-last input keeps channels_last
// (channels_last_3d) through convolutions, norms, pools and interpolation.
inline at::Tensor in_memory_format_of(const at::Tensor& t, const at::Tensor& like) {
  if (t.dim() != like.dim() || t.dim() < 4) return t;
  const at::MemoryFormat mf = like.suggest_memory_format();
  return mf == at::MemoryFormat::Contiguous || t.is_contiguous(mf) ? t : t.contiguous(mf);
}

// A 16-bit x [N, C, positions...] with its channels last, [N, S, C] (S the positions): a view of a
// channels-last x, else a copy that takes the tiled transpose (ops/conv.cpp; the half convolution on
// matrix units).
at::Tensor to_positions_channels(const at::Tensor& x);

}  // namespace webgpu::ops
