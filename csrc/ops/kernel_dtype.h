// The dtype check of the kernels with a float64 path of their own (reductions, scans, sorting):
// float64 passes (its rows and kernels check what they can do), every other dtype goes through
// check_supported_dtype, so the unsigned and float8 types meet their allow list (CPU has none of
// these kernels for them, and raises NotImplementedError).
#pragma once
#include <ATen/ATen.h>

#include "ops/common.h"

namespace webgpu::ops {

inline void check_kernel_dtype(at::ScalarType t, const char* op) {
  if (t == at::kDouble)
    check_storable_dtype(t, op);
  else
    check_supported_dtype(t, op);
}

}  // namespace webgpu::ops
