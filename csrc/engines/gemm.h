// The GEMM engine (docs/design.md, "Kernels"): every matrix product of the project that is not a
// convolution or attention lands in gemm(), which plans tiles (register-tiled FMA kernels,
// subgroup-matrix kernels for f16 where the adapter has them, mat-vec kernels, exact integer
// kernels), builds the WGSL and launches through kernel::launch. ops/linalg.cpp registers the ATen
// ops on top of it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "kernel/device.h"

namespace webgpu::engines {

// o3 = alpha * a3 @ b3 + beta * c3, every operand 3-d (batch, rows, cols); c3 expanded to o3's
// shape, or undefined. beta == 0: c3 is not read (NaN in it is ignored, as CPU). `name` is the op
// named in errors.
void gemm(const at::Tensor& o3, const at::Tensor& a3, const at::Tensor& b3, const at::Tensor& c3,
          const c10::Scalar& beta, const c10::Scalar& alpha, const char* name);

// Whether float16 GEMMs on t's device run on the matrix units (the adapter lists an f16
// subgroup-matrix config the planner takes, and TORCH_WEBGPU_MATMUL_SG is not 0).
bool half_gemm_uses_matrix_units(const at::TensorBase& t);

// The half-GEMM planner, as a pure function of an adapter's subgroup-matrix configs and limits
// (torch_webgpu._C._sg_gemm_plan, for tests on any adapter).
std::map<std::string, std::string> describe_sg_gemm_plan(const std::vector<kernel::MatrixConfig>& configs, bool has_f16,
                                                         uint64_t wg_storage, uint64_t max_invocations,
                                                         at::ScalarType dt, int64_t batch, int64_t M, int64_t N,
                                                         int64_t K);

}  // namespace webgpu::engines
