// p-norm distances: _cdist_forward / _cdist_backward (torch.cdist, whose mm path for p = 2 is an
// ATen composite) and _pdist_forward / _pdist_backward (F.pdist), with CPU's checks and batch
// broadcasting (kernels: wgsl/kernels/distance.wgsl). Float dtypes; sums in f32, rounded once.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/nn_common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

uint32_t p_kind(double p) {
  if (p == 0.0) return 0;
  if (p == 1.0) return 1;
  if (p == 2.0) return 2;
  if (std::isinf(p)) return 3;
  return 4;
}

// One launch of distance.wgsl's section `sec` over `count` invocations: r1 rows (x1 or pdist's x),
// r2 rows of x2 (cdist only; pdist passes -1), m columns; `ins` are the named input operands.
using Named = std::initializer_list<std::pair<const char*, at::Tensor>>;
void launch(const char* sec, double p, int64_t count, int64_t r1, int64_t r2, int64_t m, Named ins,
            const at::Tensor& out) {
  if (count == 0) return;
  const uint32_t pk = p_kind(p);
  Kernel k(std::string("distance:") + sec + ":" + std::to_string(pk));
  for (const auto& [name, t] : ins) k.in(t, CT::F32);
  k.out(out, CT::F32);
  k.param_index("n", count);
  k.param_index("r1", r1);
  if (r2 >= 0) k.param_index("r2", r2);
  k.param_index("m", m);
  k.param_f32("p", float(p));
  for (const auto& [name, t] : ins) k.param_index(name, t.storage_offset());
  k.param_index("out_off", out.storage_offset());
  k.launch(grid(uint64_t(count)), [&] {
    return per_element_main() + "const PK: u32 = " + std::to_string(pk) + "u;\n" + kernel::section("distance", sec);
  });
}

struct Batch {
  std::vector<int64_t> batch;
  int64_t product;
};

Batch broadcast_batch(const at::Tensor& x1, const at::Tensor& x2) {
  Batch b;
  b.batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  b.product = c10::multiply_integers(b.batch);
  return b;
}

at::Tensor expand3(const at::Tensor& x, const Batch& b) {
  std::vector<int64_t> s = b.batch;
  s.push_back(x.size(-2));
  s.push_back(x.size(-1));
  return x.expand(s).reshape({b.product, x.size(-2), x.size(-1)}).contiguous();
}

at::Tensor cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p, std::optional<int64_t> /*mode*/) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()),
              "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()),
              "cdist only supports floating-point dtypes, X2 got: ", x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  TORCH_CHECK(x1.scalar_type() == x2.scalar_type(), "cdist: expected X1 and X2 of one dtype, got ", x1.scalar_type(),
              " and ", x2.scalar_type());
  const Batch b = broadcast_batch(x1, x2);
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  std::vector<int64_t> out_size = b.batch;
  out_size.push_back(r1);
  out_size.push_back(r2);
  if (r1 == 0 || r2 == 0 || b.product == 0) return at::empty(out_size, x1.options());
  if (m == 0) return at::zeros(out_size, x1.options());
  at::Tensor a = expand3(x1, b), c = expand3(x2, b);
  at::Tensor out = at::empty(out_size, x1.options());
  launch("cdist_fwd", p, out.numel(), r1, r2, m, {{"x1_off", a}, {"x2_off", c}}, out);
  return out;
}

at::Tensor cdist_backward(const at::Tensor& grad, const at::Tensor& x1_, const at::Tensor& x2_, double p,
                          const at::Tensor& cdist) {
  const Batch b = broadcast_batch(x1_, x2_);
  const int64_t r1 = x1_.size(-2), r2 = x2_.size(-2), c1 = x1_.size(-1);
  if (r1 == 0 || r2 == 0 || c1 == 0 || b.product == 0) return at::zeros_like(x1_);
  std::vector<int64_t> x1_size = b.batch;
  x1_size.push_back(r1);
  x1_size.push_back(c1);
  at::Tensor x1 = expand3(x1_, b), x2 = expand3(x2_, b);
  at::Tensor g = grad.contiguous(), d = cdist.contiguous();
  at::Tensor gx = at::empty({b.product, r1, c1}, x1.options());
  launch("cdist_bwd", p, gx.numel(), r1, r2, c1, {{"grad_off", g}, {"x1_off", x1}, {"x2_off", x2}, {"dist_off", d}},
         gx);
  return gx.view(x1_size);
}

at::Tensor pdist_forward(const at::Tensor& self, double p) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_forward requires contiguous input");
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  const int64_t n = self.size(0), m = self.size(1);
  at::Tensor out = at::empty({n > 1 ? n * (n - 1) / 2 : 0}, self.options());
  if (n <= 1) return out;
  if (m == 0) return out.zero_();
  launch("pdist_fwd", p, n * n, n, -1, m, {{"x_off", self}}, out);
  return out;
}

at::Tensor pdist_backward(const at::Tensor& grad, const at::Tensor& self, double p, const at::Tensor& pdist) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_backward requires self to be contiguous");
  TORCH_CHECK(pdist.is_contiguous(), "_pdist_backward requires pdist to be contiguous");
  const int64_t n = self.size(0), m = self.size(1);
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (n <= 1 || m == 0) return out.zero_();
  launch("pdist_bwd", p, n * m, n, -1, m, {{"grad_off", grad.contiguous()}, {"x_off", self}, {"dist_off", pdist}}, out);
  return out;
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  m.impl("_cdist_forward", TORCH_FN(cdist_forward));
  m.impl("_cdist_backward", TORCH_FN(cdist_backward));
  m.impl("_pdist_forward", TORCH_FN(pdist_forward));
  m.impl("_pdist_backward", TORCH_FN(pdist_backward));
}
