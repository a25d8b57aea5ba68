// The unary half of the pointwise op table: math functions and activations. Each row is one WGSL
// expression per compute type; ATen's structured kernels (shapes, promotion, in-place, out=) reach
// the rows through their DispatchStubs, registered here for PrivateUse1.
#include <ATen/native/Activation.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/NativeFunctions.h>
#include <ATen/native/Gelu.h>
#include <ATen/ops/gelu_meta.h>
#include <ATen/ops/gelu_backward_meta.h>
#include <torch/library.h>

#include <limits>
#include <cstring>

#include "ops/common.h"
#include "ops/complex.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "ops/uint_fp8.h"
#include "ops/register.h"

namespace webgpu::ops {

CT compute_type(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16: return CT::F32;
    case at::kLong: return CT::I64;
    default: return CT::I32;
  }
}

// The iterator's common dtype, Undefined when it computed none (torch 2.11 has no
// maybe_common_dtype(); a pointer to the protected member, formed in a derived class, reads it).
struct CommonDtype : at::TensorIteratorBase {
  static at::ScalarType of(const at::TensorIteratorBase& it) { return it.*(&CommonDtype::common_dtype_); }
};

at::ScalarType driving_dtype(const at::TensorIteratorBase& iter, Drive d) {
  if (d == Drive::Output) return iter.dtype(0);
  if (auto c = CommonDtype::of(iter); c != at::ScalarType::Undefined) return c;
  return iter.ninputs() > 0 ? iter.input_dtype(0) : iter.dtype(0);
}

namespace {
std::vector<ScalarBits> bits_of(std::initializer_list<c10::Scalar> scalars, CT ct) {
  std::vector<ScalarBits> s;
  s.reserve(scalars.size());
  for (const auto& x : scalars) s.push_back(scalar_bits(x, ct));
  return s;
}
// Scalar arguments of integer ops are cast to the op's dtype first (wrapping), as CPU's
// `scalar.to<scalar_t>()` does; float ops keep them in float32, their opmath type.
std::vector<ScalarBits> bits_for(std::initializer_list<c10::Scalar> scalars, CT ct, at::ScalarType dt) {
  if (ct == CT::F32 || dt == at::kInt || dt == at::kLong) return bits_of(scalars, ct);
  std::vector<ScalarBits> s;
  s.reserve(scalars.size());
  for (const auto& x : scalars) s.push_back(scalar_bits(cast_scalar(x, dt), ct));
  return s;
}
}  // namespace

void run_row(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars) {
  const at::ScalarType dt = driving_dtype(iter, r.drive);
  if (is_uint_fp8(dt)) return run_row_uint_fp8(r, iter, scalars, dt);
  if (at::isComplexType(dt)) return run_complex_row(r, iter, scalars);  // ops/complex.cpp
  if (dt == at::kDouble && float64_enabled()) return run_row_float64(r, iter, scalars);
  check_supported_dtype(dt, r.name);
  const CT ct = compute_type(dt);
  const char* e = ct == CT::F32 ? r.f : ct == CT::I64 ? r.l : (dt == at::kBool && r.b ? r.b : r.i);
  TORCH_CHECK_NOT_IMPLEMENTED(e && *e, "\"", r.name, "\" not implemented for '", c10::toString(dt), "' on webgpu");
  // CPU's trunc division of float16/bfloat16 rounds the quotient to the dtype before truncating (a
  // Half divided by a Half is a Half): float16 56672 / 31.3125 = 1809.9 rounds to 1810, and stays 1810.
  if (dt == at::kHalf && std::strcmp(r.name, "div_trunc") == 0) e = "trunc(f16_to_f32(f32_to_f16(x1 / x2)))";
  if (dt == at::kBFloat16 && std::strcmp(r.name, "div_trunc") == 0)
    e = "trunc(bitcast<f32>(f32_to_bf16(x1 / x2) << 16u))";
  // CPU's mul and true division of float16/bfloat16 by a CPU scalar (a Python number) read it in
  // float32, their opmath type (iter.original_scalar_value), not rounded to the tensor's dtype first:
  // float16 100 / 1e5 is 0.001, not 100 / inf. Other ops cast it to the common dtype, as here.
  at::ScalarType scalar_dt = dt;
  if ((dt == at::kHalf || dt == at::kBFloat16) && iter.ntensors() == 3 && iter.is_cpu_scalar(2) &&
      (std::strcmp(r.name, "mul") == 0 || std::strcmp(r.name, "div_true") == 0))
    scalar_dt = at::kFloat;
  run_elementwise(iter, r.name, e, r.libs, ct, bits_for(scalars, ct, dt), scalar_dt);
}

void run_row_no_half(const Row& r, at::TensorIteratorBase& iter, const char* suffix, const char* tail) {
  const at::ScalarType dt = driving_dtype(iter, r.drive);
  TORCH_CHECK_NOT_IMPLEMENTED(dt != at::kHalf && dt != at::kBFloat16, "\"", r.name, suffix, "\" not implemented for '",
                              c10::toString(dt), "'", tail);
  run_row(r, iter);
}

void run_expr(const char* name, at::TensorIteratorBase& iter, CT ct, const char* expr, Libs libs,
              std::initializer_list<c10::Scalar> scalars, at::ScalarType dtype) {
  run_elementwise(iter, name, expr, libs, ct, bits_of(scalars, ct), dtype);
}

namespace {

// name, libraries            float32 expression             int32 expression     int64 expression
constexpr Row kAbs{"abs", lib::Int64, "abs(x1)", "abs(x1)", "i64_abs(x1)", ""};
constexpr Row kNeg{"neg", lib::None, "-x1", "-x1", "i64_neg(x1)"};
constexpr Row kSign{"sign", lib::Int64 | lib::Pointwise, "f_sign(x1)", "i32_sign(x1)", "i64_sign(x1)"};
constexpr Row kExp{"exp", lib::Pointwise, "f_exp(x1)", nullptr, nullptr};
constexpr Row kExp2{"exp2", lib::Pointwise, "f_exp2(x1)", nullptr, nullptr};
constexpr Row kExpm1{"expm1", lib::Pointwise, "f_expm1(x1)", nullptr, nullptr};
constexpr Row kLog{"log", lib::Pointwise, "f_log(x1)", nullptr, nullptr};
constexpr Row kLog2{"log2", lib::Pointwise, "f_log2(x1)", nullptr, nullptr};
constexpr Row kLog10{"log10", lib::Pointwise, "f_log10(x1)", nullptr, nullptr};
constexpr Row kLog1p{"log1p", lib::Pointwise, "f_log1p(x1)", nullptr, nullptr};
constexpr Row kSqrt{"sqrt", lib::Pointwise, "f_sqrt(x1)", nullptr, nullptr};
constexpr Row kRsqrt{"rsqrt", lib::Pointwise, "f_rsqrt(x1)", nullptr, nullptr};
constexpr Row kReciprocal{"reciprocal", lib::None, "1.0 / x1", nullptr, nullptr};
constexpr Row kSin{"sin", lib::Pointwise, "f_sin(x1)", nullptr, nullptr};
constexpr Row kCos{"cos", lib::Pointwise, "f_cos(x1)", nullptr, nullptr};
constexpr Row kTan{"tan", lib::Pointwise, "f_tan(x1)", nullptr, nullptr};
constexpr Row kAsin{"asin", lib::Pointwise, "f_asin(x1)", nullptr, nullptr};
constexpr Row kAcos{"acos", lib::Pointwise, "f_acos(x1)", nullptr, nullptr};
constexpr Row kAtan{"atan", lib::Pointwise, "f_atan(x1)", nullptr, nullptr};
constexpr Row kSinh{"sinh", lib::Pointwise, "f_sinh(x1)", nullptr, nullptr};
constexpr Row kCosh{"cosh", lib::Pointwise, "f_cosh(x1)", nullptr, nullptr};
constexpr Row kTanh{"tanh", lib::Pointwise, "f_tanh(x1)", nullptr, nullptr};
constexpr Row kAsinh{"asinh", lib::Pointwise, "f_asinh(x1)", nullptr, nullptr};
constexpr Row kAcosh{"acosh", lib::Pointwise, "f_acosh(x1)", nullptr, nullptr};
constexpr Row kAtanh{"atanh", lib::Pointwise, "f_atanh(x1)", nullptr, nullptr};
constexpr Row kErf{"erf", lib::Pointwise, "f_erf(x1)", nullptr, nullptr};
constexpr Row kErfc{"erfc", lib::Pointwise, "f_erfc(x1)", nullptr, nullptr};
constexpr Row kErfinv{"erfinv", lib::Pointwise, "f_erfinv(x1)", nullptr, nullptr};
constexpr Row kSigmoid{"sigmoid", lib::Pointwise, "f_sigmoid(x1)", nullptr, nullptr};
constexpr Row kFloor{"floor", lib::None, "floor(x1)", "x1", "x1", ""};
constexpr Row kCeil{"ceil", lib::None, "ceil(x1)", "x1", "x1", ""};
constexpr Row kTrunc{"trunc", lib::None, "trunc(x1)", "x1", "x1", ""};
constexpr Row kRound{"round", lib::None, "round(x1)", "x1", "x1", ""};
constexpr Row kFrac{"frac", lib::None, "x1 - trunc(x1)", nullptr, nullptr};
constexpr Row kBitwiseNot{"bitwise_not", lib::Pointwise, nullptr, "~x1", "~x1", "b2i(x1 == 0)"};
constexpr Row kLogicalNot{"logical_not", lib::Int64 | lib::Pointwise, "b2f(x1 == 0.0)", "b2i(x1 == 0)",
                          "b2l(!i64_nz(x1))"};
constexpr Row kSignbit{"signbit", lib::Int64 | lib::Pointwise, "b2f(sign_bit(x1))", "b2i(x1 < 0)",
                       "b2l(i64_is_neg(x1))"};
constexpr Row kIsposinf{"isposinf", lib::Pointwise, "b2f(is_inf(x1) && x1 > 0.0)", "0", "vec2<u32>(0u)"};
constexpr Row kIsneginf{"isneginf", lib::Pointwise, "b2f(is_inf(x1) && x1 < 0.0)", "0", "vec2<u32>(0u)"};
constexpr Row kNanToNum{"nan_to_num", lib::Pointwise, "f_nan_to_num(x1, s0, s1, s2)", "x1", "x1"};
constexpr Row kLogit{"logit", lib::Pointwise, "f_log(x1 / (1.0 - x1))", nullptr, nullptr};
constexpr Row kLogitEps{"logit_eps", lib::Pointwise,
                        "f_log(f_clamp(x1, s0, 1.0 - s0) / (1.0 - f_clamp(x1, s0, 1.0 - s0)))", nullptr, nullptr};
constexpr Row kRoundDec{"round_decimals", lib::None, "round(x1 * s0) / s0", nullptr, nullptr};
constexpr Row kRoundDecNeg{"round_decimals_neg", lib::None, "round(x1 / s0) * s0", nullptr, nullptr};
// Activations.
constexpr Row kLeakyRelu{"leaky_relu", lib::None, "select(x1 * s0, x1, x1 > 0.0)", nullptr, nullptr};
constexpr Row kElu{"elu", lib::Pointwise, "select(f_expm1(x1 * s2) * (s0 * s1), x1 * s1, !(x1 <= 0.0))", nullptr,
                   nullptr};
constexpr Row kSoftplus{"softplus", lib::Pointwise, "f_softplus(x1, s0, s1)", nullptr, nullptr};
constexpr Row kThreshold{"threshold", lib::Int64, "select(x2, s1, x1 <= s0)", "select(x2, s1, x1 <= s0)",
                         "select(x2, s1, i64_le(x1, s0))"};
constexpr Row kHardsigmoid{"hardsigmoid", lib::Pointwise, "f_hardsigmoid(x1)", nullptr, nullptr};
constexpr Row kHardswish{"hardswish", lib::None, "x1 * min(max(x1 + 3.0, 0.0), 6.0) / 6.0", nullptr, nullptr};
constexpr Row kSilu{"silu", lib::Pointwise, "x1 / (1.0 + f_exp(-x1))", nullptr, nullptr};
constexpr Row kMish{"mish", lib::Pointwise, "f_mish(x1)", nullptr, nullptr};
constexpr Row kGelu{"gelu", lib::Pointwise, "f_gelu(x1)", nullptr, nullptr};
constexpr Row kGeluTanh{"gelu_tanh", lib::Pointwise, "f_gelu_tanh(x1)", nullptr, nullptr};
constexpr Row kLogSigmoid{"log_sigmoid", lib::Pointwise, "f_logsigmoid(x1)", nullptr, nullptr};
// Backward formulas autograd reaches for the activations above.
constexpr Row kSigmoidBackward{"sigmoid_backward", lib::None, "x1 * (1.0 - x2) * x2", nullptr, nullptr};
constexpr Row kTanhBackward{"tanh_backward", lib::None, "x1 * (1.0 - x2 * x2)", nullptr, nullptr};
constexpr Row kSiluBackward{"silu_backward", lib::Pointwise, "x1 * f_sigmoid(x2) * (1.0 + x2 * (1.0 - f_sigmoid(x2)))",
                            nullptr, nullptr};
constexpr Row kGeluBackward{"gelu_backward", lib::Pointwise, "f_gelu_backward(x1, x2)", nullptr, nullptr};
constexpr Row kGeluTanhBackward{"gelu_tanh_backward", lib::Pointwise, "f_gelu_tanh_backward(x1, x2)", nullptr, nullptr};
constexpr Row kLogSigmoidBackward{
    "log_sigmoid_backward", lib::Pointwise,
    "x2 * (b2f(x1 < 0.0) - select(-1.0, 1.0, x1 < 0.0) * (exp(-abs(x1)) / (1.0 + exp(-abs(x1)))))", nullptr, nullptr};

void round_decimals_kernel(at::TensorIteratorBase& it, int64_t decimals) {
  const bool neg = decimals < 0;
  const float ten_pow = static_cast<float>(std::pow(10.0, double(neg ? -decimals : decimals)));
  run_row(neg ? kRoundDecNeg : kRoundDec, it, {ten_pow});
}

void logit_kernel(at::TensorIteratorBase& it, const c10::Scalar& eps) {
  const double e = eps.toDouble();
  if (e < 0)
    run_row(kLogit, it);
  else
    run_row(kLogitEps, it, {e});
}

// The replacements nan_to_num uses by default: the output dtype's largest and lowest values.
void nan_to_num_kernel(at::TensorIteratorBase& it, std::optional<double> nan, std::optional<double> posinf,
                       std::optional<double> neginf) {
  double hi = std::numeric_limits<float>::max(), lo = std::numeric_limits<float>::lowest();
  if (it.dtype(0) == at::kHalf) {
    hi = float(std::numeric_limits<c10::Half>::max());
    lo = float(std::numeric_limits<c10::Half>::lowest());
  } else if (it.dtype(0) == at::kBFloat16) {
    hi = float(std::numeric_limits<c10::BFloat16>::max());
    lo = float(std::numeric_limits<c10::BFloat16>::lowest());
  }
  run_row(kNanToNum, it, {nan.value_or(0.0), posinf.value_or(hi), neginf.value_or(lo)});
}

// gelu's CPU impl calls its kernel with kCPU hard-coded, so gelu has its own structured impl.
struct GeluOp : at::meta::structured_gelu {
  void impl(const at::Tensor&, c10::string_view approximate, const at::Tensor&) {
    run_row(at::native::get_gelutype_enum(approximate) == at::native::GeluType::Tanh ? kGeluTanh : kGelu, *this);
  }
};
struct GeluBackwardOp : at::meta::structured_gelu_backward {
  void impl(const at::Tensor&, const at::Tensor&, c10::string_view approximate, const at::Tensor&) {
    run_row(
        at::native::get_gelutype_enum(approximate) == at::native::GeluType::Tanh ? kGeluTanhBackward : kGeluBackward,
        *this);
  }
};

// log_sigmoid's forward/backward are CPU-only functions with a buffer; like CUDA we keep no buffer.
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(const at::Tensor& self, at::Tensor& out,
                                                             at::Tensor& buffer) {
  auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(self).build();
  run_row(kLogSigmoid, iter);
  return std::forward_as_tuple(out, buffer);
}
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self) {
  at::Tensor out = at::empty_like(self), buffer = at::empty({0}, self.options());
  log_sigmoid_forward_out(self, out, buffer);
  return {out, buffer};
}
at::Tensor& log_sigmoid_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor&,
                                     at::Tensor& grad_input) {
  auto iter = at::TensorIteratorConfig().add_output(grad_input).add_const_input(self).add_const_input(grad).build();
  run_row(kLogSigmoidBackward, iter);
  return grad_input;
}
at::Tensor log_sigmoid_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& buffer) {
  at::Tensor g = at::empty_like(grad);
  return log_sigmoid_backward_out(grad, self, buffer, g);
}

// The DispatchStubs ATen's kernels call, pointed at the kernels above.
WEBGPU_STUB(abs_stub, &k0<kAbs>)
WEBGPU_STUB(neg_stub, &k0<kNeg>)
WEBGPU_STUB(sign_stub, &k0<kSign>)
WEBGPU_STUB(exp_stub, &k0<kExp>)
WEBGPU_STUB(exp2_stub, &k0<kExp2>)
WEBGPU_STUB(expm1_stub, &k0<kExpm1>)
WEBGPU_STUB(log_stub, &k0<kLog>)
WEBGPU_STUB(log2_stub, &k0<kLog2>)
WEBGPU_STUB(log10_stub, &k0<kLog10>)
WEBGPU_STUB(log1p_stub, &k0<kLog1p>)
WEBGPU_STUB(sqrt_stub, &k0<kSqrt>)
WEBGPU_STUB(rsqrt_stub, &k0<kRsqrt>)
WEBGPU_STUB(reciprocal_stub, &k0<kReciprocal>)
WEBGPU_STUB(sin_stub, &k0<kSin>)
WEBGPU_STUB(cos_stub, &k0<kCos>)
WEBGPU_STUB(tan_stub, &k0<kTan>)
WEBGPU_STUB(asin_stub, &k0<kAsin>)
WEBGPU_STUB(acos_stub, &k0<kAcos>)
WEBGPU_STUB(atan_stub, &k0<kAtan>)
WEBGPU_STUB(sinh_stub, &k0<kSinh>)
WEBGPU_STUB(cosh_stub, &k0<kCosh>)
WEBGPU_STUB(tanh_stub, &k0<kTanh>)
WEBGPU_STUB(asinh_stub, &k0<kAsinh>)
WEBGPU_STUB(acosh_stub, &k0<kAcosh>)
WEBGPU_STUB(atanh_stub, &k0<kAtanh>)
WEBGPU_STUB(erf_stub, &k0<kErf>)
WEBGPU_STUB(erfc_stub, &k0<kErfc>)
WEBGPU_STUB(erfinv_stub, &k0<kErfinv>)
WEBGPU_STUB(sigmoid_stub, &k0<kSigmoid>)
WEBGPU_STUB(floor_stub, &k0<kFloor>)
WEBGPU_STUB(ceil_stub, &k0<kCeil>)
WEBGPU_STUB(trunc_stub, &k0<kTrunc>)
WEBGPU_STUB(round_stub, &k0<kRound>)
WEBGPU_STUB(frac_stub, &k0<kFrac>)
WEBGPU_STUB(bitwise_not_stub, &k0<kBitwiseNot>)
WEBGPU_STUB(logical_not_stub, &k0<kLogicalNot>)
WEBGPU_STUB(signbit_stub, &k0<kSignbit>)
WEBGPU_STUB(isposinf_stub, &k0<kIsposinf>)
WEBGPU_STUB(isneginf_stub, &k0<kIsneginf>)
WEBGPU_STUB(nan_to_num_stub, &nan_to_num_kernel)
WEBGPU_STUB(logit_stub, &logit_kernel)
WEBGPU_STUB(round_decimals_stub, &round_decimals_kernel)
WEBGPU_STUB(leaky_relu_stub, &k1<kLeakyRelu>)
WEBGPU_STUB(elu_stub, &k3<kElu>)
WEBGPU_STUB(softplus_stub, &k2<kSoftplus>)
WEBGPU_STUB(threshold_stub, &k2<kThreshold>)
WEBGPU_STUB(hardsigmoid_stub, &k0<kHardsigmoid>)
WEBGPU_STUB(hardswish_stub, &k0i<kHardswish>)
WEBGPU_STUB(silu_stub, &k0<kSilu>)
WEBGPU_STUB(mish_stub, &k0<kMish>)
WEBGPU_STUB(sigmoid_backward_stub, &k0<kSigmoidBackward>)
WEBGPU_STUB(tanh_backward_stub, &k0<kTanhBackward>)
WEBGPU_STUB(silu_backward_stub, &k0<kSiluBackward>)

namespace s = structured;
using T = const at::Tensor&;
using S = const at::Scalar&;

// Registration macros, laid out by hand (clang-format would chain them as one expression).
// clang-format off
WEBGPU_LIBRARY_IMPL(m) {
#define WEBGPU_UNARY(op) s::reg<at::native::structured_##op##_out, T>(m, #op, #op ".out");
  WEBGPU_UNARY(neg) WEBGPU_UNARY(sign) WEBGPU_UNARY(sgn) WEBGPU_UNARY(exp) WEBGPU_UNARY(exp2)
  WEBGPU_UNARY(expm1) WEBGPU_UNARY(log) WEBGPU_UNARY(log2) WEBGPU_UNARY(log10) WEBGPU_UNARY(log1p)
  WEBGPU_UNARY(sqrt) WEBGPU_UNARY(rsqrt) WEBGPU_UNARY(reciprocal) WEBGPU_UNARY(sin) WEBGPU_UNARY(cos)
  WEBGPU_UNARY(tan) WEBGPU_UNARY(asin) WEBGPU_UNARY(acos) WEBGPU_UNARY(atan) WEBGPU_UNARY(sinh)
  WEBGPU_UNARY(cosh) WEBGPU_UNARY(tanh) WEBGPU_UNARY(asinh) WEBGPU_UNARY(acosh) WEBGPU_UNARY(atanh)
  WEBGPU_UNARY(erf) WEBGPU_UNARY(erfc) WEBGPU_UNARY(erfinv) WEBGPU_UNARY(sigmoid) WEBGPU_UNARY(floor)
  WEBGPU_UNARY(ceil) WEBGPU_UNARY(trunc) WEBGPU_UNARY(round) WEBGPU_UNARY(frac) WEBGPU_UNARY(bitwise_not)
  WEBGPU_UNARY(signbit) WEBGPU_UNARY(isposinf) WEBGPU_UNARY(isneginf) WEBGPU_UNARY(silu) WEBGPU_UNARY(mish)
  WEBGPU_UNARY(hardsigmoid)
#undef WEBGPU_UNARY
  s::reg<at::native::structured_round_decimals_out, T, int64_t>(m, "round.decimals", "round.decimals_out");
  s::reg<at::native::structured_leaky_relu_out, T, S>(m, "leaky_relu", "leaky_relu.out");
  s::reg<at::native::structured_elu_out, T, S, S, S>(m, "elu", "elu.out");
  s::reg<at::native::structured_softplus_out, T, S, S>(m, "softplus", "softplus.out");
  s::reg<at::native::structured_threshold_out, T, S, S>(m, "threshold", "threshold.out");
  s::reg<GeluOp, T, c10::string_view>(m, "gelu", "gelu.out");
  s::reg<GeluBackwardOp, T, T, c10::string_view>(m, "gelu_backward", "gelu_backward.grad_input");
  s::reg<at::native::structured_sigmoid_backward_out, T, T>(m, "sigmoid_backward", "sigmoid_backward.grad_input");
  s::reg<at::native::structured_tanh_backward_out, T, T>(m, "tanh_backward", "tanh_backward.grad_input");
  s::reg<at::native::structured_silu_backward_out, T, T>(m, "silu_backward", "silu_backward.grad_input");
  s::reg<at::native::structured_threshold_backward_out, T, T, S>(m, "threshold_backward",
                                                                  "threshold_backward.grad_input");

  // Non-structured ATen functions that are device-generic (they call the stubs above, or other ops).
  m.impl("abs.out", TORCH_FN(at::native::abs_out));
  m.impl("logical_not.out", TORCH_FN(at::native::logical_not_out));
  m.impl("isnan", TORCH_FN(at::native::isnan));
  m.impl("nan_to_num.out", TORCH_FN(at::native::nan_to_num_out));
  WEBGPU_IMPL_NATIVE(m, logit);
  WEBGPU_IMPL_NATIVE(m, hardtanh);
  WEBGPU_IMPL_NATIVE(m, hardswish);
  m.impl("relu", TORCH_FN(at::native::relu));
  m.impl("relu_", TORCH_FN(at::native::relu_));
  WEBGPU_IMPL_OUT(m, "log_sigmoid_forward", "output", log_sigmoid_forward);
  WEBGPU_IMPL_OUT(m, "log_sigmoid_backward", "grad_input", log_sigmoid_backward);
}
// clang-format on

}  // namespace
}  // namespace webgpu::ops
