// linalg_matrix_exp on webgpu (issue 21): scaling and squaring over a degree-18 Taylor polynomial,
// composed of native ATen ops (matmul, where); float32 arithmetic, half types computed in float32.
#include <ATen/native/LinearAlgebraUtils.h>
#include <torch/library.h>

#include "ops/linalg_common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;

// ||A||_1 of every matrix at most this: the Taylor remainder of degree 18, ||A||^19 / 19!, is below
// float32's rounding (3.01^19 / 19! = 1e-8); the same bound CPU's degree-18 approximant uses.
constexpr double kTheta18 = 3.010066362817634;
constexpr double kMaxSquarings = 128;  // inf / NaN inputs stop here (their result is NaN, as CPU's)

Tensor matrix_exp(const Tensor& self) {
  linalg::check_dev(self, "linalg_matrix_exp");
  at::native::squareCheckInputs(self, "linalg.matrix_exp");
  at::native::checkFloatingOrComplex(self, "linalg.matrix_exp");
  const auto dt = self.scalar_type();
  linalg::no_complex_or_float64(dt, "linalg.matrix_exp");
  TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16,
                              "linalg.matrix_exp: not implemented for '", c10::toString(dt), "' on webgpu");
  const int64_t n = self.size(-1);
  if (self.numel() == 0) return at::empty_like(self, at::MemoryFormat::Contiguous);
  if (n == 1) return self.exp();
  Tensor A = self.to(at::kFloat).contiguous();
  // per matrix: the number of squarings s that brings ||A / 2^s||_1 under kTheta18
  Tensor norm = A.abs().sum(-2).amax(-1);
  Tensor s = at::ceil(at::log2(norm / kTheta18)).clamp_(0, kMaxSquarings);
  s = at::where(at::isnan(s), at::full({}, kMaxSquarings, s.options()), s);
  Tensor As = A * at::pow(2.0, -s).unsqueeze(-1).unsqueeze(-1);
  Tensor eye = at::eye(n, A.options()).expand(A.sizes());
  Tensor P = eye;
  for (int k = 18; k >= 1; --k) P = eye + at::matmul(As, P) / double(k);  // Horner
  const int64_t squarings = s.max().item<float>();
  for (int64_t i = 0; i < squarings; ++i)
    P = at::where((s > double(i)).unsqueeze(-1).unsqueeze(-1), at::matmul(P, P), P);
  return P.to(dt).contiguous();
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) { m.impl("linalg_matrix_exp", TORCH_FN(matrix_exp)); }

}  // namespace webgpu::ops
