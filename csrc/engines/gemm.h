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

// An operand of gemm_gathered that WGSL computes instead of reading through strides (the implicit
// GEMMs of ops/conv.cpp). `wgsl` defines `fn load_a(m: u32, k: u32) -> vec4<f32>` (for A) or
// `fn load_b(k: u32, n: u32) -> vec4<f32>` (for B): the 4 elements of the unit starting there, along
// k when along_k (else along m / n), 0 outside [0, M) x [T.k0, T.k1) (x [0, N)). It reads the bound
// tensor t through ela(e) / elb(e) (element e as f32), with P.a_off / P.a_sb (P.b_off / P.b_sb) set
// from off and sb, and the tile's batch T.b (wgsl/lib/matmul_tile.wgsl).
struct Gathered {
  at::Tensor t;
  int64_t off = 0, sb = 0;
  // WGSL constants of the geometry (everything the loader depends on besides its section: part of
  // the pipeline's key) and the name of the wgsl/kernels/conv_gather.wgsl section defining the
  // loader. The WGSL itself (wgsl()) is composed only when a pipeline is built.
  std::string consts;
  const char* section = "";
  bool brings_section = true;  // false: the other operand's section defines this loader too
  std::string key() const { return std::string(section) + ":" + consts; }
  std::string wgsl() const;
  bool along_k = false;
  // The section defines gload8_b(n, k) -> vec4<u32>: 8 halves along k as one 16-byte load (a half
  // B for the subgroup-matrix kernel, engines/gemm.cpp sg_gemm; nothing else takes it).
  bool units8 = false;
};

// o3 = a3 @ b3 (+ c3) in the register-tiled float kernel (f32 accumulation), where A and/or B may be
// gathered (then a3 / b3 are ignored). o3 [batch, M, N]; K the reduction length; c3 expanded to
// o3's shape or undefined. o3 must not share storage with the operands.
void gemm_gathered(const at::Tensor& o3, const at::Tensor& a3, const Gathered* ga, const at::Tensor& b3,
                   const Gathered* gb, const at::Tensor& c3, int64_t K, const char* name);

// Whether float16 GEMMs on t's device run on the matrix units (the adapter lists an f16
// subgroup-matrix config the planner takes, and TORCH_WEBGPU_MATMUL_SG is not 0).
bool half_gemm_uses_matrix_units(const at::TensorBase& t);
// The same for one product: [batch] M x N x K.
bool half_gemm_uses_matrix_units(const at::Tensor& t, int64_t batch, int64_t M, int64_t N, int64_t K);

// The half-GEMM planner, as a pure function of an adapter's subgroup-matrix configs and limits
// (torch_webgpu._C._sg_gemm_plan, for tests on any adapter).
std::map<std::string, std::string> describe_sg_gemm_plan(const std::vector<kernel::MatrixConfig>& configs, bool has_f16,
                                                         uint64_t wg_storage, uint64_t max_invocations,
                                                         at::ScalarType dt, int64_t batch, int64_t M, int64_t N,
                                                         int64_t K);

}  // namespace webgpu::engines
