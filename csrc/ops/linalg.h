// What ops/linalg.cpp shows outside itself: the half-GEMM planner, as a pure function of an
// adapter's subgroup-matrix configs and limits (torch_webgpu._C._sg_gemm_plan, for tests on any
// adapter).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>

#include "runtime/device.h"

namespace webgpu::ops {

std::map<std::string, std::string> describe_sg_gemm_plan(const std::vector<rt::GpuDevice::MatrixConfig>& configs,
                                                         bool has_f16, uint64_t wg_storage, uint64_t max_invocations,
                                                         at::ScalarType dt, int64_t batch, int64_t M, int64_t N,
                                                         int64_t K);

}  // namespace webgpu::ops
