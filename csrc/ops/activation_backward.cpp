// The activations' backward formulas (and the shrink/glu/prelu forwards that pair with them). Like
// ops/pointwise.cpp: one expression per op, reached through ATen's structured kernels and
// DispatchStubs, so shapes, promotion and out= checks are ATen's own.
#include <ATen/ATen.h>
#include <ATen/NativeFunctions.h>
#include <ATen/native/Activation.h>
#include <ATen/native/BinaryOps.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// Inputs x1, x2 in each stub's iterator order (mostly grad_output, self). NaN inputs follow the
// formulas as written (CUDA's and CPU's scalar kernels; CPU's vectorised kernels differ for NaN).
constexpr Row kEluBackward{"elu_backward", lib::Pointwise,
                           "select(x1 * s1, x1 * s2 * s0 * s1 * f_exp(x2 * s2), x2 <= 0.0)", nullptr, nullptr};
constexpr Row kEluBackwardResult{"elu_backward_result", lib::None,
                                 "select(x1 * s1, x1 * s2 * (x2 + s0 * s1), x2 <= 0.0)", nullptr, nullptr};
// leaky_relu_backward's iterator is (self_or_result, grad_output).
constexpr Row kLeakyReluBackward{"leaky_relu_backward", lib::None, "select(x2 * s0, x2, x1 > 0.0)", nullptr, nullptr};
constexpr Row kSoftplusBackward{"softplus_backward", lib::Pointwise,
                                "select(x1 * f_sigmoid(x2 * s0), x1, x2 * s0 > s1)", nullptr, nullptr};
constexpr Row kHardsigmoidBackward{"hardsigmoid_backward", lib::None, "select(0.0, x1 / 6.0, x2 > -3.0 && x2 < 3.0)",
                                   nullptr, nullptr};
constexpr Row kHardswishBackward{"hardswish_backward", lib::None,
                                 "select(select(x1, x1 * (x2 / 3.0 + 0.5), x2 < 3.0), 0.0, x2 <= -3.0)", nullptr,
                                 nullptr};
constexpr Row kHardtanhBackward{"hardtanh_backward", lib::None, "select(x1, 0.0, x2 <= s0 || x2 >= s1)", nullptr,
                                nullptr};
constexpr Row kMishBackward{"mish_backward", lib::Pointwise,
                            "x1 * (f_tanh(f_log1p(f_exp(x2))) + x2 * f_sigmoid(x2) * "
                            "(1.0 - f_tanh(f_log1p(f_exp(x2))) * f_tanh(f_log1p(f_exp(x2)))))",
                            nullptr, nullptr};
constexpr Row kSoftshrink{"softshrink", lib::Pointwise,
                          "select(select(select(0.0, x1 + s0, x1 < -s0), x1 - s0, x1 > s0), x1, is_nan(x1))", nullptr,
                          nullptr};
constexpr Row kHardshrink{"hardshrink", lib::None, "select(x1, 0.0, x1 >= -s0 && x1 <= s0)", nullptr, nullptr};
constexpr Row kShrinkBackward{"shrink_backward", lib::None, "select(x1, 0.0, x2 >= -s0 && x2 <= s0)", nullptr, nullptr};
constexpr Row kLogitBackward{"logit_backward", lib::Pointwise,
                             "select(select(x1 / (x2 * (1.0 - x2)), x1 * f_inf(), x2 == 0.0 || x2 == 1.0), f_nan(), "
                             "x2 < 0.0 || x2 > 1.0)",
                             nullptr, nullptr};
constexpr Row kLogitBackwardEps{"logit_backward_eps", lib::None,
                                "select(x1 / (x2 * (1.0 - x2)), 0.0, x2 < s0 || x2 > s1)", nullptr, nullptr};
constexpr Row kGlu{"glu", lib::Pointwise, "x1 * f_sigmoid(x2)", nullptr, nullptr};
constexpr Row kPrelu{"prelu", lib::None, "select(x2 * x1, x1, x1 > 0.0)", nullptr, nullptr};

void elu_backward_kernel(at::TensorIteratorBase& it, const c10::Scalar& alpha, const c10::Scalar& scale,
                         const c10::Scalar& input_scale, bool is_result) {
  run_row(is_result ? kEluBackwardResult : kEluBackward, it, {alpha, scale, input_scale});
}
void hardtanh_backward_kernel(at::TensorIterator& it, const c10::Scalar& lo, const c10::Scalar& hi) {
  run_row(kHardtanhBackward, it, {lo, hi});
}
void logit_backward_kernel(at::TensorIteratorBase& it, const c10::Scalar& eps) {
  if (eps.toDouble() < 0)
    run_row(kLogitBackward, it);
  else {
    // CPU's bounds: eps and 1 - eps in the op's dtype.
    const at::ScalarType dt = it.common_dtype();
    const double lo = cast_scalar(eps, dt).toDouble();
    const double hi = cast_scalar(c10::Scalar(1.0 - lo), dt).toDouble();
    run_row(kLogitBackwardEps, it, {lo, hi});
  }
}

// glu: a * sigmoid(b) over the two halves of `dim`.
at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  TORCH_CHECK(self.dim() > 0, "glu does not support 0-dimensional tensors");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  const at::Tensor a = self.narrow(d, 0, n / 2), b = self.narrow(d, n / 2, n / 2);
  auto it = at::TensorIteratorConfig().add_output(out).add_const_input(a).add_const_input(b).build();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(it.common_dtype()), "\"glu\" not implemented for '",
                              c10::toString(it.common_dtype()), "'");
  run_row(kGlu, it);
  return out;
}
constexpr auto glu = via_out<&glu_out>;

// glu_backward: first half sigmoid(b) * g, second half (1 - sigmoid(b)) sigmoid(b) a g.
at::Tensor& glu_backward_out(const at::Tensor& grad, const at::Tensor& self, int64_t dim, at::Tensor& grad_input) {
  TORCH_CHECK(self.dim() > 0, "glu does not support 0-dimensional tensors");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  at::native::resize_output(grad_input, self.sizes());
  const int64_t h = n / 2;
  at::Tensor a = self.narrow(d, 0, h), b = self.narrow(d, h, h);
  at::Tensor ga = grad_input.narrow(d, 0, h), gb = grad_input.narrow(d, h, h);
  {
    auto it = at::TensorIteratorConfig().add_output(ga).add_const_input(b).add_const_input(grad).build();
    run_expr("glu_backward_a", it, CT::F32, "f_sigmoid(x1) * x2", lib::Pointwise);
  }
  {
    auto it =
        at::TensorIteratorConfig().add_output(gb).add_const_input(a).add_const_input(b).add_const_input(grad).build();
    run_expr("glu_backward_b", it, CT::F32, "(1.0 - f_sigmoid(x2)) * f_sigmoid(x2) * x1 * x3", lib::Pointwise);
  }
  return grad_input;
}
constexpr auto glu_backward = via_out<&glu_backward_out>;

std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(const at::Tensor& grad, const at::Tensor& self,
                                                         const at::Tensor& weight) {
  at::Tensor gs = at::empty({0}, self.options()), gw = at::empty({0}, weight.options());
  {
    auto it = at::TensorIteratorConfig()
                  .add_output(gs)
                  .add_const_input(self)
                  .add_const_input(weight)
                  .add_const_input(grad)
                  .build();
    run_expr("prelu_backward_self", it, CT::F32, "select(x2 * x3, x3, x1 > 0.0)", lib::None);
  }
  {
    auto it = at::TensorIteratorConfig()
                  .add_output(gw)
                  .add_const_input(self)
                  .add_const_input(weight)
                  .add_const_input(grad)
                  .build();
    run_expr("prelu_backward_weight", it, CT::F32, "select(x1 * x3, 0.0, x1 > 0.0)", lib::None);
  }
  return {gs, gw};
}

// The DispatchStubs ATen's kernels call, pointed at the kernels above.
WEBGPU_STUB(elu_backward_stub, &elu_backward_kernel)
WEBGPU_STUB(leaky_relu_backward_stub, &k1<kLeakyReluBackward>)
WEBGPU_STUB(softplus_backward_stub, &k2<kSoftplusBackward>)
WEBGPU_STUB(hardsigmoid_backward_stub, &k0<kHardsigmoidBackward>)
WEBGPU_STUB(hardswish_backward_stub, &k0i<kHardswishBackward>)
WEBGPU_STUB(hardtanh_backward_stub, &hardtanh_backward_kernel)
WEBGPU_STUB(mish_backward_stub, &k0i<kMishBackward>)
WEBGPU_STUB(softshrink_stub, &k1<kSoftshrink>)
WEBGPU_STUB(hardshrink_stub, &k1<kHardshrink>)
WEBGPU_STUB(shrink_backward_stub, &k1<kShrinkBackward>)
WEBGPU_STUB(logit_backward_stub, &logit_backward_kernel)
WEBGPU_STUB(prelu_stub, &k0i<kPrelu>)

namespace s = structured;
using T = const at::Tensor&;
using S = const at::Scalar&;

WEBGPU_LIBRARY_IMPL(m) {
  s::reg<at::native::structured_elu_backward_out, T, S, S, S, bool, T>(m, "elu_backward", "elu_backward.grad_input",
                                                                       nullptr);
  s::reg<at::native::structured_leaky_relu_backward_out, T, T, S, bool>(m, "leaky_relu_backward",
                                                                        "leaky_relu_backward.grad_input", nullptr);
  s::reg<at::native::structured_softplus_backward_out, T, T, S, S>(m, "softplus_backward",
                                                                   "softplus_backward.grad_input", nullptr);
  s::reg<at::native::structured_hardsigmoid_backward_out, T, T>(m, "hardsigmoid_backward",
                                                                "hardsigmoid_backward.grad_input", nullptr);
  s::reg<at::native::structured_softshrink_out, T, S>(m, "softshrink", "softshrink.out", nullptr);
  s::reg<at::native::structured_hardshrink_out, T, S>(m, "hardshrink", "hardshrink.out", nullptr);
  s::reg<at::native::structured_softshrink_backward_out, T, T, S>(m, "softshrink_backward",
                                                                  "softshrink_backward.grad_input", nullptr);
  s::reg<at::native::structured_hardshrink_backward_out, T, T, S>(m, "hardshrink_backward",
                                                                  "hardshrink_backward.grad_input", nullptr);
  s::reg<at::native::structured_logit_backward_out, T, T, std::optional<double>>(m, "logit_backward",
                                                                                 "logit_backward.grad_input", nullptr);
  WEBGPU_IMPL_OUT(m, "glu", "out", glu);
  WEBGPU_IMPL_OUT(m, "glu_backward", "grad_input", glu_backward);
  WEBGPU_IMPL_OUT(m, "hardtanh_backward", "grad_input", at::native::hardtanh_backward);
  WEBGPU_IMPL_OUT(m, "hardswish_backward", "out", at::native::hardswish_backward);
  m.impl("mish_backward", TORCH_FN(at::native::mish_backward));
  m.impl("_prelu_kernel", TORCH_FN(at::native::_prelu_kernel));
  m.impl("_prelu_kernel_backward", TORCH_FN(prelu_kernel_backward));
}

}  // namespace
}  // namespace webgpu::ops
