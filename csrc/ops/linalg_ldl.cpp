// torch.linalg.ldl_factor(_ex) and ldl_solve in float32 (issue 21): LAPACK's Bunch-Kaufman (ssytf2,
// lower) and ssytrs in wgsl/kernels/linalg_ldl.wgsl, so LD, pivots and info are CPU's. ATen's meta
// functions give shapes, checks and messages; the bodies follow CPU's (LD = tril(A), then factored in place).
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/ops/linalg_ldl_factor_ex_meta.h>
#include <ATen/ops/linalg_ldl_solve_meta.h>
#include <torch/library.h>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/linalg_common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;
using namespace linalg;  // the family's helpers (ops/linalg_common.h)

std::string section(const std::string& name) { return kernel::section("linalg_ldl", name); }

void factor_kernel(const Tensor& LD, const Tensor& pivots, const Tensor& info) {
  const int64_t n = LD.size(-1), batch = batch_of(LD);
  if (batch == 0 || n == 0) return;
  const bool local = n * n <= linalg::kLocalElems;
  Kernel k(local ? "linalg_ldl:local" : "linalg_ldl:global");
  k.out(LD, CT::F32);
  k.out(pivots, CT::I32);
  k.out(info, CT::I32);
  k.param_index("batch", batch);
  if (local) k.param_index("m", n);  // read by A_begin / A_end
  k.param_index("n", n);
  matrix_params(k, "", LD);
  vector_params(k, "p", pivots);
  batched_params(k, "i", info, 0);
  k.launch(uint64_t(batch), [&] { return linalg::matrix_access(local) + section("factor"); });
}

void solve_kernel(const Tensor& LD, const Tensor& piv, const Tensor& X) {
  const int64_t n = X.size(-2), nrhs = X.size(-1), batch = batch_of(X);
  if (batch * nrhs == 0 || n == 0) return;
  Kernel k("linalg_ldl_solve");
  k.in(LD, CT::F32);
  k.in(piv, CT::I32);
  k.out(X, CT::F32);
  k.param_index("n", n);
  vector_params(k, "p", piv);
  launch_columns(k, LD, X, batch, nrhs, [] { return section("solve"); });
}

void factor_impl(const Tensor& A, bool check_errors, const Tensor& LD, const Tensor& pivots, const Tensor& info) {
  check_f32_kernel(A, "ldl_factor_kernel");
  if (factor_empty(A, info)) return;
  at::tril_out(const_cast<Tensor&>(LD), A);
  factor_in_place(LD, pivots, info, check_errors, "torch.linalg.ldl_factor_ex", A.dim() == 2, factor_kernel);
}

using Factor = Multi<at::meta::structured_linalg_ldl_factor_ex, 3>;
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors) {
  check_dev(A, "linalg_ldl_factor_ex");
  Factor op;
  op.meta(A, hermitian, check_errors);
  factor_impl(A, check_errors, op.outs[0], op.outs[1], op.outs[2]);
  return {op.outs[0], op.outs[1], op.outs[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> ldl_factor_ex_out(const Tensor& A, bool hermitian, bool check_errors, Tensor& LD,
                                                        Tensor& pivots, Tensor& info) {
  check_devs({A, LD, pivots, info}, "linalg_ldl_factor_ex");
  Factor op({LD, pivots, info});
  op.meta(A, hermitian, check_errors);
  factor_impl(A, check_errors, LD, pivots, info);
  return {LD, pivots, info};
}

void solve_impl(const Tensor& LD, const Tensor& pivots, const Tensor& B, const Tensor& result) {
  check_f32_kernel(LD, "ldl_solve_kernel");
  if (LD.numel() == 0 || pivots.numel() == 0 || result.numel() == 0) return;
  const_cast<Tensor&>(result).copy_(B);
  const auto batch = result.sizes().slice(0, result.dim() - 2);
  std::vector<int64_t> ld_shape(batch.begin(), batch.end()), piv_shape(batch.begin(), batch.end());
  ld_shape.push_back(LD.size(-2));
  ld_shape.push_back(LD.size(-1));
  piv_shape.push_back(pivots.size(-1));
  Tensor LD_ = batchable(LD.expand(ld_shape), 2);
  Tensor piv_ = batchable(pivots.expand(piv_shape), 1);
  Tensor X = batchable(result, 2);
  solve_kernel(LD_, piv_, X);
  write_back(result, X);
}

using Solve = Multi<at::meta::structured_linalg_ldl_solve, 1>;
Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  for (auto* t : {&LD, &pivots, &B}) check_dev(*t, "linalg_ldl_solve");
  Solve op;
  op.meta(LD, pivots, B, hermitian);
  solve_impl(LD, pivots, B, op.outs[0]);
  return op.outs[0];
}
Tensor& ldl_solve_out(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian, Tensor& out) {
  check_devs({LD, pivots, B, out}, "linalg_ldl_solve");
  Solve op({out});
  op.meta(LD, pivots, B, hermitian);
  solve_impl(LD, pivots, B, out);
  return out;
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  WEBGPU_IMPL_OUT(m, "linalg_ldl_factor_ex", "out", ldl_factor_ex);
  WEBGPU_IMPL_OUT(m, "linalg_ldl_solve", "out", ldl_solve);
}
