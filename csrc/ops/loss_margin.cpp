// multi_margin_loss and multilabel_margin_loss, forward and backward, composed from the device's
// own ops (gather, scatter, clamp, sums). Shapes are checked by ATen's shared checks
// (ATen/native/LossMulti.h), so the errors are CPU's. A target index out of range raises
// RuntimeError at the call, as on CPU: that check reads one flag back (a synchronisation).
// The arithmetic follows CPU's order (margin - x[y] first, then + x[j]); CPU accumulates the
// per-sample sums in double, these in float32.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/LossMulti.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <optional>
#include "ops/register.h"

namespace webgpu::ops {
namespace {

void check_float32(const at::Tensor& self, const char* op) {
  check_kernel_dtype(self.scalar_type() == at::kFloat, self.scalar_type(), op, "");
}

void check_long(const at::Tensor& target) {
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ", target.scalar_type());
}

// One flag read back: whether any target index lies outside [lo, dim).
void check_range(const at::Tensor& t, int64_t lo, int64_t dim, const char* msg) {
  if (t.numel() == 0) return;
  TORCH_CHECK(!at::logical_or(t < lo, t >= dim).any().item<bool>(), msg);
}

// Per-sample losses [nframe] reduced as `reduction` asks; 'none' gives [nframe] or, where CPU does
// (`batched` false), a 0-d result.
at::Tensor reduce(const at::Tensor& per, int64_t reduction, bool batched) {
  if (reduction == at::Reduction::Mean) return per.mean();
  if (reduction == at::Reduction::Sum) return per.sum();
  return batched ? per : per.reshape({});
}

// grad_output broadcast over a sample's row, scaled as the reduction asks.
at::Tensor output_scale(const at::Tensor& grad_output, int64_t reduction, int64_t nframe) {
  if (reduction == at::Reduction::None) return grad_output.reshape({nframe, 1});
  at::Tensor g = grad_output.reshape({1, 1});
  return reduction == at::Reduction::Mean ? g / double(nframe) : g;
}

// --- multi_margin_loss --------------------------------------------------------------------------

struct MultiMargin {
  int64_t nframe = 0, dim = 0, ndims = 0;
  at::Tensor x, y, idx, w;  // x [nframe, dim], y [nframe], idx [nframe, 1], w [nframe, 1] or undefined
  at::Tensor d;  // margin - x[y] + x[j]
};

MultiMargin multi_margin_prep(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                              const at::Scalar& margin, const std::optional<at::Tensor>& weight, const char* op) {
  MultiMargin m;
  m.ndims = self.dim();
  at::native::multi_margin_loss_shape_check(m.nframe, m.dim, m.ndims, self, target, weight);
  check_float32(self, op);
  check_long(target);
  const int64_t pv = p.toLong();
  TORCH_CHECK(pv == 1 || pv == 2, "only p == 1 and p == 2 supported");
  m.x = self.reshape({m.nframe, m.dim});
  m.y = target.reshape({m.nframe});
  check_range(m.y, 0, m.dim, "target out of range");
  m.idx = m.y.unsqueeze(1);
  if (weight && weight->defined()) m.w = weight->reshape({m.dim}).index_select(0, m.y).unsqueeze(1);
  m.d = at::rsub(m.x.gather(1, m.idx), margin) + m.x;
  return m;
}

at::Tensor webgpu_multi_margin_loss(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                                    const at::Scalar& margin, const std::optional<at::Tensor>& weight,
                                    int64_t reduction) {
  MultiMargin m = multi_margin_prep(self, target, p, margin, weight, "multi_margin_loss");
  at::Tensor z = m.d.clamp_min(0);
  if (p.toLong() == 2) z = z * z;
  if (m.w.defined()) z = z * m.w;
  z = z.scatter(1, m.idx, 0.0);  // j == y does not count
  // 'none': one loss per target entry (a 1-element target gives [1]), 0-d for a 0-d target.
  return reduce(z.sum(1) / double(m.dim), reduction, target.dim() > 0);
}

at::Tensor& multi_margin_loss_out(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                                  const at::Scalar& margin, const std::optional<at::Tensor>& weight, int64_t reduction,
                                  at::Tensor& out) {
  at::Tensor r = webgpu_multi_margin_loss(self, target, p, margin, weight, reduction);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

at::Tensor webgpu_multi_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                             const at::Tensor& target, const at::Scalar& p, const at::Scalar& margin,
                                             const std::optional<at::Tensor>& weight, int64_t reduction) {
  MultiMargin m = multi_margin_prep(self, target, p, margin, weight, "multi_margin_loss_backward");
  const at::Tensor active = m.d > 0;
  at::Tensor g = p.toLong() == 1 ? active.to(m.x.scalar_type()) : 2 * m.d * active;
  if (m.w.defined()) g = g * m.w;
  g = g.scatter(1, m.idx, 0.0);
  g = g.scatter(1, m.idx, -g.sum(1, true));  // x[y] receives minus the others' sum
  g = g * output_scale(grad_output, reduction, m.nframe) / double(m.dim);
  return g.reshape(self.sizes());
}

at::Tensor& multi_margin_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                           const at::Tensor& target, const at::Scalar& p, const at::Scalar& margin,
                                           const std::optional<at::Tensor>& weight, int64_t reduction,
                                           at::Tensor& grad_input) {
  at::Tensor r = webgpu_multi_margin_loss_backward(grad_output, self, target, p, margin, weight, reduction);
  at::native::resize_output(grad_input, r.sizes());
  return grad_input.copy_(r);
}

// --- multilabel_margin_loss ---------------------------------------------------------------------

struct MultiLabel {
  int64_t nframe = 0, dim = 0, ndims = 0;
  at::Tensor x, tc, valid, is_target;  // x [N, C]; tc: targets clamped to >= 0; valid: before the first -1
  at::Tensor d;  // [N, K, C]: 1 - x[target_k] + x[j]
  at::Tensor mask;  // [N, K, C]: target k valid and j not a target
};

MultiLabel multilabel_prep(const at::Tensor& self, const at::Tensor& target, const char* op) {
  MultiLabel m;
  m.ndims = self.dim();
  at::native::multilabel_margin_loss_shape_check(m.nframe, m.dim, m.ndims, self, target);
  check_float32(self, op);
  check_long(target);
  m.x = self.reshape({m.nframe, m.dim});
  const at::Tensor t = target.reshape({m.nframe, m.dim});
  // Every entry must lie in [-1, dim), as CPU checks; targets before the first -1 count.
  check_range(t, -1, m.dim, "argument #2 'target' is out of range");
  m.valid = (t < 0).cumsum(1) == 0;
  m.tc = t.clamp_min(0);
  const at::Tensor vf = m.valid.to(m.x.scalar_type());
  m.is_target = at::zeros_like(m.x).scatter_reduce(1, m.tc, vf, "amax");
  m.d = at::rsub(m.x.gather(1, m.tc), 1).unsqueeze(2) + m.x.unsqueeze(1);
  m.mask = vf.unsqueeze(2) * at::rsub(m.is_target, 1).unsqueeze(1);
  return m;
}

std::tuple<at::Tensor, at::Tensor> webgpu_multilabel_margin_loss_forward(const at::Tensor& self,
                                                                         const at::Tensor& target, int64_t reduction) {
  MultiLabel m = multilabel_prep(self, target, "multilabel_margin_loss_forward");
  at::Tensor per = (m.d.clamp_min(0) * m.mask).sum({1, 2}) / double(m.dim);
  return {reduce(per, reduction, m.ndims > 1), m.is_target.reshape(target.sizes())};
}

std::tuple<at::Tensor&, at::Tensor&> multilabel_margin_loss_forward_out(const at::Tensor& self,
                                                                        const at::Tensor& target, int64_t reduction,
                                                                        at::Tensor& output, at::Tensor& is_target) {
  auto [o, it] = webgpu_multilabel_margin_loss_forward(self, target, reduction);
  at::native::resize_output(output, o.sizes());
  at::native::resize_output(is_target, it.sizes());
  output.copy_(o);
  is_target.copy_(it);
  return {output, is_target};
}

at::Tensor webgpu_multilabel_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                  const at::Tensor& target, int64_t reduction,
                                                  const at::Tensor& is_target) {
  MultiLabel m = multilabel_prep(self, target, "multilabel_margin_loss_backward");
  const at::Tensor a = (m.d > 0).to(m.x.scalar_type()) * m.mask;  // [N, K, C]
  // +1 for each active (target, non-target j) pair at j, -1 at the target.
  at::Tensor g = a.sum(1).scatter_add(1, m.tc, -a.sum(2));
  g = g * output_scale(grad_output, reduction, m.nframe) / double(m.dim);
  return g.reshape(self.sizes());
}

at::Tensor& multilabel_margin_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                                const at::Tensor& target, int64_t reduction,
                                                const at::Tensor& is_target, at::Tensor& grad_input) {
  at::Tensor r = webgpu_multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target);
  at::native::resize_output(grad_input, r.sizes());
  return grad_input.copy_(r);
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  m.impl("multi_margin_loss", TORCH_FN(webgpu_multi_margin_loss));
  m.impl("multi_margin_loss.out", TORCH_FN(multi_margin_loss_out));
  m.impl("multi_margin_loss_backward", TORCH_FN(webgpu_multi_margin_loss_backward));
  m.impl("multi_margin_loss_backward.grad_input", TORCH_FN(multi_margin_loss_backward_out));
  m.impl("multilabel_margin_loss_forward", TORCH_FN(webgpu_multilabel_margin_loss_forward));
  m.impl("multilabel_margin_loss_forward.output", TORCH_FN(multilabel_margin_loss_forward_out));
  m.impl("multilabel_margin_loss_backward", TORCH_FN(webgpu_multilabel_margin_loss_backward));
  m.impl("multilabel_margin_loss_backward.grad_input", TORCH_FN(multilabel_margin_loss_backward_out));
}
