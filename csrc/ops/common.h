// What every op file needs: the device, block and byte offset behind a webgpu tensor, and the
// dtype policy (DESIGN.md: f64 and complex are refused with a clear error).
#pragma once
#include <ATen/ATen.h>

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::ops {

inline rt::GpuDevice& gpu_of(const at::TensorBase& t) {
  return rt::get_device(t.device().has_index() ? t.device().index() : 0);
}

inline rt::Block* block_of(const at::TensorBase& t) {
  return static_cast<rt::Block*>(t.storage().data_ptr().get_context());
}

// Byte offset of t's first element inside its block.
inline uint64_t byte_offset_of(const at::TensorBase& t) {
  return uint64_t(t.storage_offset()) * t.element_size();
}

bool is_supported_dtype(at::ScalarType t);
void check_supported_dtype(at::ScalarType t, const char* op);

}  // namespace webgpu::ops
