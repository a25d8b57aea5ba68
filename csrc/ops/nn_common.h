// Helpers shared by the NN op families (pool.cpp, upsample.cpp).
#pragma once
#include <ATen/ATen.h>

namespace webgpu::ops {

// A meta tensor of t's sizes and strides: running an op's own meta function on it gives CPU's
// argument checks and output sizes without touching the device.
inline at::Tensor meta_of(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

}  // namespace webgpu::ops
