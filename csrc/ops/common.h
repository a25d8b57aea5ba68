// What every op file needs: the device, block and byte offset behind a webgpu tensor, and the
// dtype policy (DESIGN.md: f64 and complex are refused with a clear error).
#pragma once
#include <ATen/ATen.h>

#include "core/core.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::ops {

inline rt::GpuDevice& gpu_of(const at::TensorBase& t) {
  core::check_not_forked();
  return rt::get_device(t.device().has_index() ? t.device().index() : 0);
}

// Every kernel binds its operands through this (or Kernel, ops/kernel.h), so it is where a tensor
// of another device is stopped: PyTorch's dispatcher sends an op with one webgpu operand here even
// when another lives on the CPU (CUDA's generated wrappers check devices; ours cannot).
[[noreturn]] void raise_wrong_device(const at::TensorBase& t, const char* op);
inline rt::Block* block_of(const at::TensorBase& t, const char* op = nullptr) {
  if (t.device().type() != c10::DeviceType::PrivateUse1) raise_wrong_device(t, op);
  return core::block_of_data_ptr(t.storage().data_ptr());
}

// Byte offset of t's first element inside its block.
inline uint64_t byte_offset_of(const at::TensorBase& t) {
  return uint64_t(t.storage_offset()) * t.element_size();
}

bool is_supported_dtype(at::ScalarType t);
void check_supported_dtype(at::ScalarType t, const char* op);

}  // namespace webgpu::ops
