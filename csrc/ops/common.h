// What every op file needs besides the kernel layer (csrc/kernel/): the dtype policy (DESIGN.md:
// f64 and complex are refused with a clear error), the wrong-device error, and byte offsets.
#pragma once
#include <ATen/ATen.h>

#include "core/core.h"

namespace webgpu::ops {

// Raised where a tensor of another device reaches a webgpu kernel: PyTorch's dispatcher sends an
// op with one webgpu operand here even when another lives on the CPU (CUDA's generated wrappers
// check devices; ours cannot).
[[noreturn]] void raise_wrong_device(const at::TensorBase& t, const char* op);

// Byte offset of t's first element inside its block.
inline uint64_t byte_offset_of(const at::TensorBase& t) { return uint64_t(t.storage_offset()) * t.element_size(); }

bool is_supported_dtype(at::ScalarType t);
void check_supported_dtype(at::ScalarType t, const char* op);
// Storage and raw copies: the supported dtypes plus float64 (ops/float64.h; TORCH_WEBGPU_FLOAT64=0
// restores the refusal).
bool is_storable_dtype(at::ScalarType t);
void check_storable_dtype(at::ScalarType t, const char* op);
// The kernels with a float64 path of their own (reductions, scans, sorting): float64 passes (their
// rows and kernels check what they can do), every other dtype meets check_supported_dtype, so the
// unsigned and float8 types meet its allow list (CPU has none of these kernels for them, and raises
// NotImplementedError).
inline void check_kernel_dtype(at::ScalarType t, const char* op) {
  if (t == at::kDouble)
    check_storable_dtype(t, op);
  else
    check_supported_dtype(t, op);
}

}  // namespace webgpu::ops
