// The special-function rows of the pointwise op table: the gamma family (lgamma, digamma,
// polygamma, igamma/igammac, zeta), Bessel I0/I1, erfcx, ndtri/log_ndtr, entr, xlog1py, sinc, frexp,
// nextafter, heaviside, gcd/lcm, logaddexp(2), angle. The math lives in wgsl/lib/special.wgsl, I0/I1
// in wgsl/lib/bessel_i.wgsl (shared with special.modified_bessel_i0/i1).
#include <ATen/native/BinaryOps.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/complex.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// name, libraries                 float32 expression                  int32 expression         int64 expression
constexpr Row kLgamma{"lgamma", lib::Special, "sp_lgamma(x1)", nullptr, nullptr};
constexpr Row kDigamma{"digamma", lib::Special, "sp_digamma(x1)", nullptr, nullptr};
constexpr Row kTrigamma{"trigamma", lib::Special, "sp_trigamma(x1)", nullptr, nullptr};
constexpr Row kPolygamma{"polygamma", lib::Special, "sp_polygamma(s0, x1)", nullptr, nullptr};
constexpr Row kI0{"i0", lib::BesselI, "f_bessel_i0(x1)", nullptr, nullptr};
constexpr Row kI0e{"special_i0e", lib::BesselI, "f_bessel_i0e(x1)", nullptr, nullptr};
constexpr Row kI1{"special_i1", lib::BesselI, "f_bessel_i1(x1)", nullptr, nullptr};
constexpr Row kI1e{"special_i1e", lib::BesselI, "f_bessel_i1e(x1)", nullptr, nullptr};
constexpr Row kErfcx{"special_erfcx", lib::Special, "sp_erfcx(x1)", nullptr, nullptr};
constexpr Row kNdtri{"special_ndtri", lib::Special, "sp_ndtri(x1)", nullptr, nullptr};
constexpr Row kLogNdtr{"special_log_ndtr", lib::Special, "sp_log_ndtr(x1)", nullptr, nullptr};
constexpr Row kEntr{"special_entr", lib::Special, "sp_entr(x1)", nullptr, nullptr};
constexpr Row kSinc{"sinc", lib::Special, "sp_sinc(x1)", nullptr, nullptr};
// angle of a real number: 0 or pi, NaN kept (integers reach here promoted to float).
constexpr Row kAngle{"angle", lib::Pointwise, "select(select(0.0, 3.14159265358979323846, x1 < 0.0), x1, is_nan(x1))",
                     nullptr, nullptr};
constexpr Row kIgamma{"igamma", lib::Special, "sp_igamma(x1, x2)", nullptr, nullptr};
constexpr Row kIgammac{"igammac", lib::Special, "sp_igammac(x1, x2)", nullptr, nullptr};
constexpr Row kZeta{"special_zeta", lib::Special, "sp_zeta(x1, x2)", nullptr, nullptr};
constexpr Row kXlog1py{"special_xlog1py", lib::Special, "sp_xlog1py(x1, x2)", nullptr, nullptr};
constexpr Row kLogaddexp{"logaddexp", lib::Special, "sp_logaddexp(x1, x2)", nullptr, nullptr};
constexpr Row kLogaddexp2{"logaddexp2", lib::Special, "sp_logaddexp2(x1, x2)", nullptr, nullptr};
// CPU's heaviside: `x == 0 ? values : x > 0` (so a NaN input gives 0).
constexpr Row kHeaviside{"heaviside", lib::Int64 | lib::Pointwise, "select(b2f(x1 > 0.0), x2, x1 == 0.0)",
                         "select(b2i(x1 > 0), x2, x1 == 0)",
                         "select(b2l(i64_lt(vec2<u32>(0u, 0u), x1)), x2, !i64_nz(x1))"};
// Integers only, bool refused as on CPU.
constexpr Row kGcd{"gcd", lib::Special, nullptr, "sp_gcd(x1, x2)", "sp_i64_gcd(x1, x2)", ""};
constexpr Row kLcm{"lcm", lib::Special, nullptr, "sp_lcm(x1, x2)", "sp_i64_lcm(x1, x2)", ""};

// Ops CPU computes in float32 (and the integers, promoted) but not in float16/bfloat16: refused there
// with NotImplementedError, as CPU refuses them.
template <const Row& R>
void k0_no_half(at::TensorIteratorBase& it) {
  run_row_no_half(R, it, "", " on webgpu (nor on CPU)");
}

// int8 and int16 gcd/lcm wrap CPU's abs to the dtype, as CPU's calc_gcd<int8_t> does (gcd(-128, 6) is -2).
void gcd_kernel(at::TensorIteratorBase& it) {
  const at::ScalarType dt = driving_dtype(it, Drive::Common);
  if (dt == at::kChar) return run_expr("gcd8", it, CT::I32, "sp_gcd_w(x1, x2, 24u)", lib::Special, {}, dt);
  if (dt == at::kShort) return run_expr("gcd16", it, CT::I32, "sp_gcd_w(x1, x2, 16u)", lib::Special, {}, dt);
  run_row(kGcd, it);
}
void lcm_kernel(at::TensorIteratorBase& it) {
  const at::ScalarType dt = driving_dtype(it, Drive::Common);
  if (dt == at::kChar) return run_expr("lcm8", it, CT::I32, "sp_lcm_w(x1, x2, 24u)", lib::Special, {}, dt);
  if (dt == at::kShort) return run_expr("lcm16", it, CT::I32, "sp_lcm_w(x1, x2, 16u)", lib::Special, {}, dt);
  run_row(kLcm, it);
}

void polygamma_kernel(at::TensorIteratorBase& it, const int64_t n) {
  if (n == 0) return run_row(kDigamma, it);
  if (n == 1) return run_row(kTrigamma, it);
  run_row(kPolygamma, it, {n});
}

// nextafter steps in the storage dtype's own units, so each float dtype has its expression.
void nextafter_kernel(at::TensorIteratorBase& it) {
  const at::ScalarType dt = driving_dtype(it, Drive::Common);
  if (dt == at::kDouble && float64_enabled()) {
    static constexpr Row kNextafter64{"nextafter", lib::None, nullptr, nullptr, nullptr};
    return run_row_float64(kNextafter64, it, {});
  }
  check_supported_dtype(dt, "nextafter");
  no_complex(dt, "nextafter");
  TORCH_CHECK_NOT_IMPLEMENTED(is_float(dt), "\"nextafter\" not implemented for '", c10::toString(dt), "' on webgpu");
  const char* e = dt == at::kHalf       ? "sp_nextafter_f16(x1, x2)"
                  : dt == at::kBFloat16 ? "sp_nextafter_bf16(x1, x2)"
                                        : "sp_nextafter(x1, x2)";
  run_expr("nextafter", it, CT::F32, e, lib::Special, {}, dt);
}

// ATen's frexp_out builds one iterator with two outputs (mantissa, exponent); the engine writes one
// output per dispatch, so each output gets its own iterator over the same input. A mantissa that
// is the input itself is written last.
void frexp_kernel(at::TensorIteratorBase& iter) {
  const at::Tensor& mantissa = iter.tensor(0);
  const at::Tensor& exponent = iter.tensor(1);
  const at::Tensor& self = iter.tensor(2);
  check_supported_dtype(self.scalar_type(), "frexp");
  no_complex(self.scalar_type(), "frexp");
  auto one = [&](const at::Tensor& out, const char* name, const char* expr) {
    auto it = as_is_iter(out, {self}, false);
    run_expr(name, it, CT::F32, expr, lib::Special);
  };
  const bool mantissa_first = !mantissa.is_alias_of(self);
  if (mantissa_first) one(mantissa, "frexp_mantissa", "sp_frexp_m(x1)");
  one(exponent, "frexp_exponent", "sp_frexp_e(x1)");
  if (!mantissa_first) one(mantissa, "frexp_mantissa", "sp_frexp_m(x1)");
}

// The DispatchStubs ATen's kernels call, pointed at the kernels above.
WEBGPU_STUB(lgamma_stub, &k0<kLgamma>)
WEBGPU_STUB(digamma_stub, &k0<kDigamma>)
WEBGPU_STUB(polygamma_stub, &polygamma_kernel)
WEBGPU_STUB(i0_stub, &k0<kI0>)
WEBGPU_STUB(special_i0e_stub, &k0<kI0e>)
WEBGPU_STUB(special_i1_stub, &k0<kI1>)
WEBGPU_STUB(special_i1e_stub, &k0<kI1e>)
WEBGPU_STUB(special_erfcx_stub, &k0_no_half<kErfcx>)
WEBGPU_STUB(special_ndtri_stub, &k0_no_half<kNdtri>)
WEBGPU_STUB(special_log_ndtr_stub, &k0_no_half<kLogNdtr>)
WEBGPU_STUB(special_entr_stub, &k0<kEntr>)
WEBGPU_STUB(sinc_stub, &k0<kSinc>)
WEBGPU_STUB(angle_stub, &k0<kAngle>)
WEBGPU_STUB(frexp_stub, &frexp_kernel)
WEBGPU_STUB(igamma_stub, &k0<kIgamma>)
WEBGPU_STUB(igammac_stub, &k0<kIgammac>)
WEBGPU_STUB(zeta_stub, &k0_no_half<kZeta>)
WEBGPU_STUB(xlog1py_stub, &k0<kXlog1py>)
WEBGPU_STUB(logaddexp_stub, &k0<kLogaddexp>)
WEBGPU_STUB(logaddexp2_stub, &k0<kLogaddexp2>)
WEBGPU_STUB(heaviside_stub, &k0<kHeaviside>)
WEBGPU_STUB(gcd_stub, &gcd_kernel)
WEBGPU_STUB(lcm_stub, &lcm_kernel)
WEBGPU_STUB(nextafter_stub, &nextafter_kernel)

namespace s = structured;
using T = const at::Tensor&;

// Registration macros, laid out by hand (clang-format would chain them as one expression).
// clang-format off
WEBGPU_LIBRARY_IMPL(m) {
#define WEBGPU_UNARY(op) s::reg<at::native::structured_##op##_out, T>(m, #op, #op ".out");
  WEBGPU_UNARY(lgamma) WEBGPU_UNARY(digamma) WEBGPU_UNARY(i0) WEBGPU_UNARY(special_i0e) WEBGPU_UNARY(special_i1)
  WEBGPU_UNARY(special_i1e) WEBGPU_UNARY(special_erfcx) WEBGPU_UNARY(special_ndtri) WEBGPU_UNARY(special_log_ndtr)
  WEBGPU_UNARY(special_entr) WEBGPU_UNARY(sinc)
#undef WEBGPU_UNARY
#define WEBGPU_BINARY(op) s::reg<at::native::structured_##op##_out, T, T>(m, #op, #op ".out");
  WEBGPU_BINARY(igamma) WEBGPU_BINARY(igammac) WEBGPU_BINARY(special_zeta) WEBGPU_BINARY(special_xlog1py)
  WEBGPU_BINARY(logaddexp) WEBGPU_BINARY(logaddexp2) WEBGPU_BINARY(heaviside) WEBGPU_BINARY(gcd) WEBGPU_BINARY(lcm)
  WEBGPU_BINARY(nextafter)
#undef WEBGPU_BINARY
  // polygamma(n, self): its in-place polygamma_(self, n) is composite over polygamma.out.
  s::reg<at::native::structured_polygamma_out, int64_t, T>(m, "polygamma", "polygamma.out");
  // Device-generic ATen functions over the stubs above.
  WEBGPU_IMPL_OUT(m, "angle", "out", at::native::angle);
  m.impl("frexp.Tensor_out", TORCH_FN(at::native::frexp_out));
  m.impl("mvlgamma.out", TORCH_FN(at::native::mvlgamma_out));
}
// clang-format on

}  // namespace
}  // namespace webgpu::ops
