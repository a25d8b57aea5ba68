// The kernel layer's own view of the runtime: the device and storage block behind a webgpu tensor.
// Only csrc/kernel/ includes this (docs/design.md, "Layers"); engines and ops use kernel/device.h.
#pragma once
#include <ATen/ATen.h>

#include "core/core.h"
#include "ops/common.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::kernel {

inline rt::GpuDevice& gpu_of(const at::TensorBase& t) {
  core::check_not_forked();
  return rt::get_device(t.device().has_index() ? t.device().index() : 0);
}

// Every dispatch binds its operands through this, so it is where a tensor of another device is
// stopped: PyTorch's dispatcher sends an op with one webgpu operand here even when another lives
// on the CPU (CUDA's generated wrappers check devices; ours cannot).
inline rt::Block* block_of(const at::TensorBase& t, const char* op = nullptr) {
  if (t.device().type() != c10::DeviceType::PrivateUse1) ops::raise_wrong_device(t, op);
  return core::block_of_data_ptr(t.storage().data_ptr());
}

}  // namespace webgpu::kernel
