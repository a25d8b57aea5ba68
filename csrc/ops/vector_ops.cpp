// Small NN/vector ops built on native kernels: linalg_cross (torch.cross is its composite), renorm
// and channel_shuffle. linalg_cross and renorm keep ATen's structured meta (shapes, checks, out=)
// and reach us through their DispatchStubs; channel_shuffle is CPU's reshape-permute, with its checks.
#include <ATen/ATen.h>
#include <ATen/native/Cross.h>
#include <ATen/native/Normalization.h>
#include <ATen/ops/linalg_cross_native.h>
#include <ATen/ops/renorm_native.h>
#include <torch/library.h>

#include "ops/pointwise.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// CPU's scale factor: maxnorm / (norm + 1e-7) where the norm exceeds maxnorm, else 1 (f32 math, as
// CPU's float kernel; the half types' norms are f32 already, the accumulate type).
constexpr Row kRenormScale{"renorm_scale_factor", lib::None, "select(1.0, s0 / (x1 + 1e-7), x1 > s0)", nullptr,
                           nullptr};
void renorm_scale_factor(at::TensorIteratorBase& it, double maxnorm) { run_row(kRenormScale, it, {maxnorm}); }

// result = a x b along dim, each component a product difference in the operands' dtype (CPU's
// scalar_t arithmetic: the half types round each product, integers wrap), on native mul and sub.
void cross_kernel(const at::Tensor& result, const at::Tensor& a, const at::Tensor& b, const int64_t dim) {
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    at::Tensor r = result.select(dim, i);
    at::sub_out(r, at::mul(a.select(dim, j), b.select(dim, k)), at::mul(a.select(dim, k), b.select(dim, j)));
  }
}

at::Tensor channel_shuffle(const at::Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input to have at least 3 dimensions, but got input with sizes ",
              self.sizes());
  const int64_t c = self.size(1);
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.", " Value of groups:", groups);
  TORCH_CHECK((c % groups) == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
              " groups.");
  if (self.numel() == 0) return self.clone(self.suggest_memory_format());
  std::vector<int64_t> split = {self.size(0), groups, c / groups};
  for (int64_t d = 2; d < self.dim(); ++d) split.push_back(self.size(d));
  return self.reshape(split).transpose(1, 2).reshape(self.sizes()).contiguous(self.suggest_memory_format());
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_STUB(renorm_scale_factor_stub, &webgpu::ops::renorm_scale_factor)
WEBGPU_STUB(cross_stub, &webgpu::ops::cross_kernel)

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  namespace s = structured;
  using T = const at::Tensor&;
  using S = const at::Scalar&;
  s::reg<at::native::structured_renorm_out, T, S, int64_t, S>(m, "renorm", "renorm.out");
  s::reg<at::native::structured_linalg_cross_out, T, T, int64_t>(m, "linalg_cross", "linalg_cross.out", nullptr);
  m.impl("channel_shuffle", TORCH_FN(channel_shuffle));
}
