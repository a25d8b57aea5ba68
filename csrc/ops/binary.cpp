// The binary and ternary half of the pointwise op table: arithmetic, division in every rounding
// mode, comparisons, bitwise and logical ops, pow, clamp, where, masked_fill, lerp, addcmul/addcdiv.
// Rows are WGSL expressions per compute type; ATen's structured kernels reach them via DispatchStubs.
#include <ATen/native/BinaryOps.h>
#include <ATen/native/IndexKernel.h>
#include <ATen/native/Lerp.h>
#include <ATen/native/PointwiseOps.h>
#include <ATen/native/Pow.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/NativeFunctions.h>
#include <ATen/ops/add_meta.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// name, libraries              float32 expression                int32 expression             int64 expression
constexpr Row kAdd{"add", lib::Int64, "x1 + x2", "x1 + x2", "i64_add(x1, x2)"};
constexpr Row kAddAlpha{"add_alpha", lib::Int64, "x1 + s0 * x2", "x1 + s0 * x2", "i64_add(x1, i64_mul(s0, x2))"};
constexpr Row kSub{"sub", lib::Int64, "x1 - x2", "x1 - x2", "i64_sub(x1, x2)"};
constexpr Row kMul{"mul", lib::Int64, "x1 * x2", "x1 * x2", "i64_mul(x1, x2)"};
constexpr Row kDivTrue{"div_true", lib::None, "x1 / x2", nullptr, nullptr};
constexpr Row kDivTrunc{
    "div_trunc", lib::Int64 | lib::Pointwise, "trunc(x1 / x2)", "i32_div_trunc(x1, x2)", "i64_div(x1, x2)", ""};
constexpr Row kDivFloor{
    "div_floor", lib::Int64 | lib::Pointwise, "f_div_floor(x1, x2)", "i32_div_floor(x1, x2)", "i64_div_floor(x1, x2)",
    ""};
constexpr Row kRemainder{
    "remainder", lib::Int64 | lib::Pointwise, "f_remainder(x1, x2)", "i32_remainder(x1, x2)", "i64_remainder(x1, x2)",
    ""};
constexpr Row kFmod{"fmod", lib::Int64 | lib::Pointwise, "f_fmod(x1, x2)", "i32_fmod(x1, x2)", "i64_rem(x1, x2)", ""};
constexpr Row kAtan2{"atan2", lib::Pointwise, "f_atan2(x1, x2)", nullptr, nullptr};
constexpr Row kMaximum{"maximum", lib::Int64 | lib::Pointwise, "f_maximum(x1, x2)", "max(x1, x2)", "i64_max(x1, x2)"};
constexpr Row kMinimum{"minimum", lib::Int64 | lib::Pointwise, "f_minimum(x1, x2)", "min(x1, x2)", "i64_min(x1, x2)"};
constexpr Row kFmax{"fmax", lib::Int64 | lib::Pointwise, "f_fmax(x1, x2)", "max(x1, x2)", "i64_max(x1, x2)"};
constexpr Row kFmin{"fmin", lib::Int64 | lib::Pointwise, "f_fmin(x1, x2)", "min(x1, x2)", "i64_min(x1, x2)"};
constexpr Row kHypot{"hypot", lib::Pointwise, "f_hypot(x1, x2)", nullptr, nullptr};
constexpr Row kCopysign{"copysign", lib::Pointwise, "f_copysign(x1, x2)", nullptr, nullptr};
// ldexp with an integer exponent (ATen's ldexp_stub; torch 2.11 calls it for every device).
constexpr Row kLdexp{"ldexp", lib::Pointwise, "f_ldexp(x1, x2)", nullptr, nullptr};
constexpr Row kXlogy{"xlogy", lib::Pointwise, "f_xlogy(x1, x2)", nullptr, nullptr};
constexpr Row kBitAnd{"bitwise_and", lib::None, nullptr, "x1 & x2", "x1 & x2"};
constexpr Row kBitOr{"bitwise_or", lib::None, nullptr, "x1 | x2", "x1 | x2"};
constexpr Row kBitXor{"bitwise_xor", lib::None, nullptr, "x1 ^ x2", "x1 ^ x2"};
constexpr Row kLshift{"lshift", lib::Int64 | lib::Pointwise, nullptr, "i32_lshift(x1, x2)", "i64_lshift(x1, x2)"};
constexpr Row kRshift{"rshift", lib::Int64 | lib::Pointwise, nullptr, "i32_rshift(x1, x2)", "i64_rshift(x1, x2)"};
constexpr Row kLogicalAnd{"logical_and", lib::Int64 | lib::Pointwise, "b2f(!(x1 == 0.0) && !(x2 == 0.0))",
                          "b2i(x1 != 0 && x2 != 0)", "b2l(i64_nz(x1) && i64_nz(x2))"};
constexpr Row kLogicalOr{"logical_or", lib::Int64 | lib::Pointwise, "b2f(!(x1 == 0.0) || !(x2 == 0.0))",
                         "b2i(x1 != 0 || x2 != 0)", "b2l(i64_nz(x1) || i64_nz(x2))"};
constexpr Row kLogicalXor{"logical_xor", lib::Int64 | lib::Pointwise, "b2f((!(x1 == 0.0)) != (!(x2 == 0.0)))",
                          "b2i((x1 != 0) != (x2 != 0))", "b2l(i64_nz(x1) != i64_nz(x2))"};
constexpr Row kEq{"eq", lib::Int64 | lib::Pointwise, "b2f(x1 == x2)", "b2i(x1 == x2)", "b2l(i64_eq(x1, x2))"};
constexpr Row kNe{"ne", lib::Int64 | lib::Pointwise, "b2f(!(x1 == x2))", "b2i(x1 != x2)", "b2l(!i64_eq(x1, x2))"};
constexpr Row kLt{"lt", lib::Int64 | lib::Pointwise, "b2f(x1 < x2)", "b2i(x1 < x2)", "b2l(i64_lt(x1, x2))"};
constexpr Row kLe{"le", lib::Int64 | lib::Pointwise, "b2f(x1 <= x2)", "b2i(x1 <= x2)", "b2l(i64_le(x1, x2))"};
constexpr Row kGt{"gt", lib::Int64 | lib::Pointwise, "b2f(x1 > x2)", "b2i(x1 > x2)", "b2l(i64_lt(x2, x1))"};
constexpr Row kGe{"ge", lib::Int64 | lib::Pointwise, "b2f(x1 >= x2)", "b2i(x1 >= x2)", "b2l(i64_le(x2, x1))"};
// pow's float rows take pow.wgsl's f_pow_acc (log2 and the product in binary64: an ulp or so).
constexpr Row kPow{"pow", lib::Pow, "f_pow_acc(x1, x2)", "i32_pow(x1, x2)", "i64_pow(x1, x2)", ""};
constexpr Row kPowScalar{"pow_scalar", lib::Pow, "f_pow_acc(x1, s0)", "i32_pow(x1, s0)", "i64_pow(x1, s0)", ""};
// Ternary.
constexpr Row kLerpScalar{"lerp_scalar", lib::Pointwise, "f_lerp(x1, x2, s0)", nullptr, nullptr};
constexpr Row kLerpTensor{"lerp_tensor", lib::Pointwise, "f_lerp(x1, x2, x3)", nullptr, nullptr};
constexpr Row kAddcmul{"addcmul", lib::Int64, "x1 + s0 * x2 * x3", "x1 + s0 * x2 * x3",
                       "i64_add(x1, i64_mul(i64_mul(s0, x2), x3))"};
constexpr Row kAddcdiv{"addcdiv", lib::None, "x1 + s0 * (x2 / x3)", nullptr, nullptr};
constexpr Row kClampScalar{"clamp_scalar", lib::Int64 | lib::Pointwise, "f_clamp(x1, s0, s1)", "min(max(x1, s0), s1)",
                           "i64_min(i64_max(x1, s0), s1)"};
constexpr Row kClampMinScalar{"clamp_min_scalar", lib::Int64 | lib::Pointwise, "f_clamp_min(x1, s0)", "max(x1, s0)",
                              "i64_max(x1, s0)"};
constexpr Row kClampMaxScalar{"clamp_max_scalar", lib::Int64 | lib::Pointwise, "f_clamp_max(x1, s0)", "min(x1, s0)",
                              "i64_min(x1, s0)"};
constexpr Row kClampTensor{"clamp_tensor", lib::Int64 | lib::Pointwise, "f_clamp_t(x1, x2, x3)", "min(max(x1, x2), x3)",
                           "i64_min(i64_max(x1, x2), x3)"};
constexpr Row kWhere{
    "where", lib::Int64,   "select(x3, x2, !(x1 == 0.0))", "select(x3, x2, x1 != 0)", "select(x3, x2, i64_nz(x1))",
    nullptr, Drive::Output};
constexpr Row kMaskedFill{"masked_fill",
                          lib::Int64,
                          "select(x1, s0, !(x2 == 0.0))",
                          "select(x1, s0, x2 != 0)",
                          "select(x1, s0, i64_nz(x2))",
                          nullptr,
                          Drive::Output};

void add_kernel(at::TensorIteratorBase& it, const c10::Scalar& alpha) {
  if (alpha.equal(1))
    run_row(kAdd, it);
  else
    run_row(kAddAlpha, it, {alpha});
}
void sub_kernel(at::TensorIteratorBase& it, const c10::Scalar& alpha) {
  if (alpha.equal(1))
    run_row(kSub, it);
  else
    add_kernel(it, -alpha);
}

// pow(tensor, scalar): the exponents ATen's CPU kernel special-cases keep their exact formulas.
void pow_scalar_kernel(at::TensorIteratorBase& it, const c10::Scalar& e) {
  const at::ScalarType dt = driving_dtype(it, Drive::Common);
  if (dt == at::kDouble && float64_enabled() && !e.isComplex()) {
    // float64: the same special exponents, in binary64 as CPU's (square(x) is x * x); other
    // exponents have no float64 kernel (the stub fallback runs CPU's).
    const double x = e.toDouble();
    static constexpr Row k2{"pow_2", lib::None, nullptr, nullptr, nullptr};
    static constexpr Row k3{"pow_3", lib::None, nullptr, nullptr, nullptr};
    static constexpr Row kHalf{"sqrt", lib::None, nullptr, nullptr, nullptr};
    static constexpr Row kMinusHalf{"rsqrt", lib::None, nullptr, nullptr, nullptr};
    static constexpr Row kMinus1{"reciprocal", lib::None, nullptr, nullptr, nullptr};
    static constexpr Row kMinus2{"pow_m2", lib::None, nullptr, nullptr, nullptr};
    const Row* r = x == 2.0    ? &k2
                   : x == 3.0  ? &k3
                   : x == 0.5  ? &kHalf
                   : x == -0.5 ? &kMinusHalf
                   : x == -1.0 ? &kMinus1
                   : x == -2.0 ? &kMinus2
                               : &kPowScalar;
    return run_row_float64(*r, it, {});
  }
  if (compute_type(dt) == CT::F32 && !e.isComplex()) {
    const double x = e.toDouble();
    const char* expr = x == 2.0    ? "x1 * x1"
                       : x == 3.0  ? "x1 * x1 * x1"
                       : x == 0.5  ? "f_sqrt(x1)"
                       : x == -0.5 ? "f_rsqrt(x1)"
                       : x == -1.0 ? "1.0 / x1"
                       : x == -2.0 ? "1.0 / (x1 * x1)"
                                   : nullptr;
    if (expr)
      return run_expr("pow_special", it, CT::F32, expr, x == 0.5 || x == -0.5 ? lib::Pointwise : lib::None, {}, dt);
  }
  run_row(kPowScalar, it, {e});
}

// masked_fill's iterator has the output and the mask only; the kept values are read from self.
void masked_fill_kernel(at::TensorIterator& it, const c10::Scalar& value) {
  const at::Tensor& self = it.tensor(0);
  auto iter = as_is_iter(self, {self, it.tensor(1)}, false);
  run_row(kMaskedFill, iter, {value});
}

// add's CPU structured class is the ufunc codegen's; ours runs the row directly after ATen's meta.
struct AddOp : at::meta::structured_add_Tensor {
  void impl(const at::Tensor&, const at::Tensor&, const c10::Scalar& alpha, const at::Tensor&) {
    add_kernel(*this, alpha);
  }
};

// pow(scalar, tensor): ATen's impl wraps the base as a float64 tensor on the exponent's device, which
// webgpu refuses (2.5 ** t, ldexp); a CPU scalar tensor takes the same TensorIterator path there.
struct PowScalarBaseOp : at::meta::structured_pow_Scalar {
  void impl(const at::Scalar& base, const at::Tensor& exp, const at::Tensor& out) {
    if (base.equal(1.0)) {
      out.fill_(1);
    } else {
      at::pow_out(const_cast<at::Tensor&>(out), at::native::wrapped_scalar_tensor(base), exp);
    }
  }
};

at::OptionalScalarRef ref(const std::optional<at::Scalar>& s) {
  return s.has_value() ? at::OptionalScalarRef(&s.value()) : at::OptionalScalarRef();
}
at::OptionalTensorRef ref(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? at::OptionalTensorRef(*t) : at::OptionalTensorRef();
}
// clamp's structured functions take OptionalScalarRef/OptionalTensorRef; the schema's optionals
// are converted as torchgen's wrappers do.
using OS = const std::optional<at::Scalar>&;
using OT = const std::optional<at::Tensor>&;
struct ClampOp : at::native::structured_clamp_out {
  void meta(const at::Tensor& self, OS min, OS max) { at::meta::structured_clamp::meta(self, ref(min), ref(max)); }
  void impl(const at::Tensor& self, OS min, OS max, const at::Tensor& out) {
    at::native::structured_clamp_out::impl(self, ref(min), ref(max), out);
  }
};
struct ClampTensorOp : at::native::structured_clamp_Tensor_out {
  void meta(const at::Tensor& self, OT min, OT max) {
    at::meta::structured_clamp_Tensor::meta(self, ref(min), ref(max));
  }
  void impl(const at::Tensor& self, OT min, OT max, const at::Tensor& out) {
    at::native::structured_clamp_Tensor_out::impl(self, ref(min), ref(max), out);
  }
};

// The DispatchStubs ATen's kernels call, pointed at the kernels above.
WEBGPU_STUB(add_stub, &add_kernel)
WEBGPU_STUB(sub_stub, &sub_kernel)
WEBGPU_STUB(mul_stub, &k0<kMul>)
WEBGPU_STUB(div_true_stub, &k0<kDivTrue>)
WEBGPU_STUB(div_trunc_stub, &k0<kDivTrunc>)
WEBGPU_STUB(div_floor_stub, &k0<kDivFloor>)
WEBGPU_STUB(remainder_stub, &k0<kRemainder>)
WEBGPU_STUB(fmod_stub, &k0<kFmod>)
WEBGPU_STUB(atan2_stub, &k0<kAtan2>)
WEBGPU_STUB(maximum_stub, &k0<kMaximum>)
WEBGPU_STUB(minimum_stub, &k0<kMinimum>)
WEBGPU_STUB(fmax_stub, &k0<kFmax>)
WEBGPU_STUB(fmin_stub, &k0<kFmin>)
WEBGPU_STUB(hypot_stub, &k0<kHypot>)
WEBGPU_STUB(copysign_stub, &k0<kCopysign>)
WEBGPU_STUB(ldexp_stub, &k0<kLdexp>)
WEBGPU_STUB(xlogy_stub, &k0<kXlogy>)
WEBGPU_STUB(bitwise_and_stub, &k0<kBitAnd>)
WEBGPU_STUB(bitwise_or_stub, &k0<kBitOr>)
WEBGPU_STUB(bitwise_xor_stub, &k0<kBitXor>)
WEBGPU_STUB(lshift_stub, &k0<kLshift>)
WEBGPU_STUB(rshift_stub, &k0<kRshift>)
WEBGPU_STUB(logical_and_stub, &k0i<kLogicalAnd>)
WEBGPU_STUB(logical_or_stub, &k0i<kLogicalOr>)
WEBGPU_STUB(logical_xor_stub, &k0i<kLogicalXor>)
WEBGPU_STUB(eq_stub, &k0<kEq>)
WEBGPU_STUB(ne_stub, &k0<kNe>)
WEBGPU_STUB(lt_stub, &k0<kLt>)
WEBGPU_STUB(le_stub, &k0<kLe>)
WEBGPU_STUB(gt_stub, &k0<kGt>)
WEBGPU_STUB(ge_stub, &k0<kGe>)
WEBGPU_STUB(pow_tensor_tensor_stub, &k0<kPow>)
WEBGPU_STUB(pow_tensor_scalar_stub, &pow_scalar_kernel)
WEBGPU_STUB(lerp_kernel_scalar_weight, &k1<kLerpScalar>)
WEBGPU_STUB(lerp_kernel_tensor_weight, &k0<kLerpTensor>)
WEBGPU_STUB(addcmul_stub, &k1<kAddcmul>)
WEBGPU_STUB(addcdiv_stub, &k1<kAddcdiv>)
WEBGPU_STUB(clamp_scalar_stub, &k2<kClampScalar>)
WEBGPU_STUB(clamp_min_scalar_stub, &k1v<kClampMinScalar>)
WEBGPU_STUB(clamp_max_scalar_stub, &k1v<kClampMaxScalar>)
WEBGPU_STUB(clamp_stub, &k0<kClampTensor>)
WEBGPU_STUB(where_kernel, &k0i<kWhere>)
WEBGPU_STUB(masked_fill_stub, &masked_fill_kernel)

namespace s = structured;
using T = const at::Tensor&;
using S = const at::Scalar&;
using at::native::structured_eq_Scalar_out;

// Registration macros, laid out by hand (clang-format would chain them as one expression).
// clang-format off
WEBGPU_LIBRARY_IMPL(m) {
  s::reg<AddOp, T, T, S>(m, "add.Tensor", "add.out");
  s::reg<at::native::structured_sub_out, T, T, S>(m, "sub.Tensor", "sub.out");
  s::reg<at::native::structured_mul_out, T, T>(m, "mul.Tensor", "mul.out");
  s::reg<at::native::structured_div_out, T, T>(m, "div.Tensor", "div.out");
  s::reg<at::native::structured_div_out_mode, T, T, std::optional<c10::string_view>>(m, "div.Tensor_mode",
                                                                                     "div.out_mode");
#define WEBGPU_BINARY(op, fn, out) s::reg<at::native::structured_##op##_out, T, T>(m, fn, out);
  WEBGPU_BINARY(remainder, "remainder.Tensor", "remainder.Tensor_out")
  WEBGPU_BINARY(fmod, "fmod.Tensor", "fmod.Tensor_out")
  WEBGPU_BINARY(atan2, "atan2", "atan2.out")
  WEBGPU_BINARY(hypot, "hypot", "hypot.out")
  WEBGPU_BINARY(copysign, "copysign.Tensor", "copysign.out")
  WEBGPU_BINARY(maximum, "maximum", "maximum.out")
  WEBGPU_BINARY(minimum, "minimum", "minimum.out")
  WEBGPU_BINARY(fmax, "fmax", "fmax.out")
  WEBGPU_BINARY(fmin, "fmin", "fmin.out")
  WEBGPU_BINARY(xlogy, "xlogy.Tensor", "xlogy.OutTensor")
  WEBGPU_BINARY(bitwise_and, "bitwise_and.Tensor", "bitwise_and.Tensor_out")
  WEBGPU_BINARY(bitwise_or, "bitwise_or.Tensor", "bitwise_or.Tensor_out")
  WEBGPU_BINARY(bitwise_xor, "bitwise_xor.Tensor", "bitwise_xor.Tensor_out")
  WEBGPU_BINARY(bitwise_left_shift, "bitwise_left_shift.Tensor", "bitwise_left_shift.Tensor_out")
  WEBGPU_BINARY(bitwise_right_shift, "bitwise_right_shift.Tensor", "bitwise_right_shift.Tensor_out")
  WEBGPU_BINARY(clamp_min_Tensor, "clamp_min.Tensor", "clamp_min.Tensor_out")
  WEBGPU_BINARY(clamp_max_Tensor, "clamp_max.Tensor", "clamp_max.Tensor_out")
#undef WEBGPU_BINARY
#define WEBGPU_COMPARE(op)                                                                      \
  s::reg<at::native::structured_##op##_Tensor_out, T, T>(m, #op ".Tensor", #op ".Tensor_out"); \
  s::reg<at::native::structured_##op##_Scalar_out, T, S>(m, #op ".Scalar", #op ".Scalar_out");
  WEBGPU_COMPARE(eq) WEBGPU_COMPARE(ne) WEBGPU_COMPARE(lt) WEBGPU_COMPARE(le) WEBGPU_COMPARE(gt) WEBGPU_COMPARE(ge)
#undef WEBGPU_COMPARE
  s::reg<at::native::structured_pow_Tensor_Tensor_out, T, T>(m, "pow.Tensor_Tensor", "pow.Tensor_Tensor_out",
                                                             "pow_.Tensor");
  s::reg<at::native::structured_pow_Tensor_Scalar_out, T, S>(m, "pow.Tensor_Scalar", "pow.Tensor_Scalar_out",
                                                             "pow_.Scalar");
  s::reg<PowScalarBaseOp, S, T>(m, "pow.Scalar", "pow.Scalar_out");
  s::reg<at::native::structured_lerp_Scalar, T, T, S>(m, "lerp.Scalar", "lerp.Scalar_out");
  s::reg<at::native::structured_lerp_Tensor, T, T, T>(m, "lerp.Tensor", "lerp.Tensor_out");
  s::reg<at::native::structured_addcmul_out, T, T, T, S>(m, "addcmul", "addcmul.out");
  s::reg<at::native::structured_addcdiv_out, T, T, T, S>(m, "addcdiv", "addcdiv.out");
  s::reg<ClampOp, T, OS, OS>(m, "clamp", "clamp.out");
  s::reg<ClampTensorOp, T, OT, OT>(m, "clamp.Tensor", "clamp.Tensor_out");
  s::reg<at::native::structured_clamp_min_out, T, S>(m, "clamp_min", "clamp_min.out");
  s::reg<at::native::structured_clamp_max_out, T, S>(m, "clamp_max", "clamp_max.out");

  // Non-structured ATen functions that are device-generic (they call the stubs above).
  m.impl("floor_divide", TORCH_FN(static_cast<at::Tensor (*)(T, T)>(at::native::floor_divide)));
  m.impl("floor_divide_.Tensor", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, T)>(at::native::floor_divide_)));
  m.impl("floor_divide.out", TORCH_FN(at::native::floor_divide_out));
  m.impl("where.self", TORCH_FN(static_cast<at::Tensor (*)(T, T, T)>(at::native::where)));
  m.impl("where.self_out", TORCH_FN(at::native::where_self_out));
  m.impl("masked_fill_.Scalar",
         TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, T, S)>(at::native::masked_fill__cpu)));
  m.impl("masked_fill_.Tensor",
         TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, T, T)>(at::native::masked_fill__cpu)));
  m.impl("remainder.Scalar_Tensor", TORCH_FN(static_cast<at::Tensor (*)(S, T)>(at::native::remainder)));
  m.impl("rsub.Tensor", TORCH_FN(static_cast<at::Tensor (*)(T, T, S)>(at::native::rsub)));
  m.impl("logical_and.out", TORCH_FN(static_cast<at::Tensor& (*)(T, T, at::Tensor&)>(at::native::logical_and_out)));
  m.impl("logical_or.out", TORCH_FN(static_cast<at::Tensor& (*)(T, T, at::Tensor&)>(at::native::logical_or_out)));
  m.impl("logical_xor.out", TORCH_FN(static_cast<at::Tensor& (*)(T, T, at::Tensor&)>(at::native::logical_xor_out)));
  m.impl("__lshift__.Tensor", TORCH_FN(static_cast<at::Tensor (*)(T, T)>(at::native::__lshift__)));
  m.impl("__lshift__.Scalar", TORCH_FN(static_cast<at::Tensor (*)(T, S)>(at::native::__lshift__)));
  m.impl("__ilshift__.Tensor", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, T)>(at::native::__ilshift__)));
  m.impl("__ilshift__.Scalar", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, S)>(at::native::__ilshift__)));
  m.impl("__rshift__.Tensor", TORCH_FN(static_cast<at::Tensor (*)(T, T)>(at::native::__rshift__)));
  m.impl("__rshift__.Scalar", TORCH_FN(static_cast<at::Tensor (*)(T, S)>(at::native::__rshift__)));
  m.impl("__irshift__.Tensor", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, T)>(at::native::__irshift__)));
  m.impl("__irshift__.Scalar", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, S)>(at::native::__irshift__)));
}
// clang-format on

}  // namespace
}  // namespace webgpu::ops
