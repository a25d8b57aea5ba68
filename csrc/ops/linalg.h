// What ops/linalg.cpp shows outside itself: the half-GEMM planner, as a pure function of an
// adapter's subgroup-matrix configs and limits (torch_webgpu._C._sg_gemm_plan, for tests on any
// adapter).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include "runtime/device.h"

namespace webgpu::ops {

std::map<std::string, std::string> describe_sg_gemm_plan(const std::vector<rt::GpuDevice::MatrixConfig>& configs,
                                                         bool has_f16, uint64_t wg_storage, uint64_t max_invocations,
                                                         at::ScalarType dt, int64_t batch, int64_t M, int64_t N,
                                                         int64_t K);

// Whether a float16 GEMM of this size on t's device runs on the matrix units (the plan gemm() follows).
bool half_gemm_on_matrix_units(const at::Tensor& t, int64_t batch, int64_t M, int64_t N, int64_t K);

// torch._int_mm on subgroup matrices (i8 x i8 -> i32, exact) where the adapter has such a config and
// the shapes and strides allow it (ops/linalg.cpp explains which); false: nothing was dispatched
// and the caller runs its FMA kernel.
bool sg_int_mm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b);

std::map<std::string, std::string> describe_sg_int_mm_plan(const std::vector<rt::GpuDevice::MatrixConfig>& configs,
                                                           uint64_t max_invocations, int64_t M, int64_t N,
                                                           int64_t K);

}  // namespace webgpu::ops
