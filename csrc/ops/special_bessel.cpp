// torch.special's Bessel, Airy and orthogonal-polynomial families as rows of the pointwise table
// (wgsl/lib/bessel.wgsl); ATen's structured kernels reach them through their DispatchStubs, as on CPU.
#include <ATen/native/BinaryOps.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// Float32 only: integer inputs promote to float32 (the iterator's common dtype); float16 and
// bfloat16 are refused below, as CPU and CUDA dispatch these over float and double only.
// name, libraries                                   float32 expression
constexpr Row kAiryAi{"airy_ai", lib::Bessel, "f_airy_ai(x1)", nullptr, nullptr};
constexpr Row kBesselJ0{"bessel_j0", lib::Bessel, "f_bessel_j0(x1)", nullptr, nullptr};
constexpr Row kBesselJ1{"bessel_j1", lib::Bessel, "f_bessel_j1(x1)", nullptr, nullptr};
constexpr Row kBesselY0{"bessel_y0", lib::Bessel, "f_bessel_y0(x1)", nullptr, nullptr};
constexpr Row kBesselY1{"bessel_y1", lib::Bessel, "f_bessel_y1(x1)", nullptr, nullptr};
constexpr Row kModifiedBesselI0{"modified_bessel_i0", lib::BesselI, "f_bessel_i0(x1)", nullptr, nullptr};
constexpr Row kModifiedBesselI1{"modified_bessel_i1", lib::BesselI, "f_bessel_i1(x1)", nullptr, nullptr};
constexpr Row kModifiedBesselK0{"modified_bessel_k0", lib::Bessel, "f_modified_bessel_k0(x1)", nullptr, nullptr};
constexpr Row kModifiedBesselK1{"modified_bessel_k1", lib::Bessel, "f_modified_bessel_k1(x1)", nullptr, nullptr};
constexpr Row kScaledModifiedBesselK0{"scaled_modified_bessel_k0", lib::Bessel, "f_scaled_modified_bessel_k0(x1)",
                                      nullptr, nullptr};
constexpr Row kScaledModifiedBesselK1{"scaled_modified_bessel_k1", lib::Bessel, "f_scaled_modified_bessel_k1(x1)",
                                      nullptr, nullptr};
constexpr Row kSphericalBesselJ0{"spherical_bessel_j0", lib::Bessel, "f_spherical_bessel_j0(x1)", nullptr, nullptr};
// (x, n): n is truncated to an integer inside the function, as CPU does.
constexpr Row kChebyshevT{"chebyshev_polynomial_t", lib::Bessel, "f_chebyshev_t(x1, x2)", nullptr, nullptr};
constexpr Row kChebyshevU{"chebyshev_polynomial_u", lib::Bessel, "f_chebyshev_u(x1, x2)", nullptr, nullptr};
constexpr Row kChebyshevV{"chebyshev_polynomial_v", lib::Bessel, "f_chebyshev_v(x1, x2)", nullptr, nullptr};
constexpr Row kChebyshevW{"chebyshev_polynomial_w", lib::Bessel, "f_chebyshev_w(x1, x2)", nullptr, nullptr};
constexpr Row kShiftedChebyshevT{"shifted_chebyshev_polynomial_t", lib::Bessel, "f_shifted_chebyshev_t(x1, x2)",
                                 nullptr, nullptr};
constexpr Row kShiftedChebyshevU{"shifted_chebyshev_polynomial_u", lib::Bessel, "f_shifted_chebyshev_u(x1, x2)",
                                 nullptr, nullptr};
constexpr Row kShiftedChebyshevV{"shifted_chebyshev_polynomial_v", lib::Bessel, "f_shifted_chebyshev_v(x1, x2)",
                                 nullptr, nullptr};
constexpr Row kShiftedChebyshevW{"shifted_chebyshev_polynomial_w", lib::Bessel, "f_shifted_chebyshev_w(x1, x2)",
                                 nullptr, nullptr};
constexpr Row kHermiteH{"hermite_polynomial_h", lib::Bessel, "f_hermite_polynomial_h(x1, x2)", nullptr, nullptr};
constexpr Row kHermiteHe{"hermite_polynomial_he", lib::Bessel, "f_hermite_polynomial_he(x1, x2)", nullptr, nullptr};
constexpr Row kLaguerreL{"laguerre_polynomial_l", lib::Bessel, "f_laguerre_polynomial_l(x1, x2)", nullptr, nullptr};
constexpr Row kLegendreP{"legendre_polynomial_p", lib::Bessel, "f_legendre_polynomial_p(x1, x2)", nullptr, nullptr};

// CPU's message for a dtype outside its dispatch ("bessel_j0_cpu" not implemented for 'Half'), for
// webgpu.
template <const Row& R>
void float_only(at::TensorIteratorBase& it) {
  run_row_no_half(R, it, "_webgpu", "");
}

// The DispatchStubs ATen's kernels call, pointed at the kernels above.
WEBGPU_STUB(special_airy_ai_stub, &float_only<kAiryAi>)
WEBGPU_STUB(special_bessel_j0_stub, &float_only<kBesselJ0>)
WEBGPU_STUB(special_bessel_j1_stub, &float_only<kBesselJ1>)
WEBGPU_STUB(special_bessel_y0_stub, &float_only<kBesselY0>)
WEBGPU_STUB(special_bessel_y1_stub, &float_only<kBesselY1>)
WEBGPU_STUB(special_modified_bessel_i0_stub, &float_only<kModifiedBesselI0>)
WEBGPU_STUB(special_modified_bessel_i1_stub, &float_only<kModifiedBesselI1>)
WEBGPU_STUB(special_modified_bessel_k0_stub, &float_only<kModifiedBesselK0>)
WEBGPU_STUB(special_modified_bessel_k1_stub, &float_only<kModifiedBesselK1>)
WEBGPU_STUB(special_scaled_modified_bessel_k0_stub, &float_only<kScaledModifiedBesselK0>)
WEBGPU_STUB(special_scaled_modified_bessel_k1_stub, &float_only<kScaledModifiedBesselK1>)
WEBGPU_STUB(special_spherical_bessel_j0_stub, &float_only<kSphericalBesselJ0>)
WEBGPU_STUB(chebyshev_polynomial_t_stub, &float_only<kChebyshevT>)
WEBGPU_STUB(chebyshev_polynomial_u_stub, &float_only<kChebyshevU>)
WEBGPU_STUB(chebyshev_polynomial_v_stub, &float_only<kChebyshevV>)
WEBGPU_STUB(chebyshev_polynomial_w_stub, &float_only<kChebyshevW>)
WEBGPU_STUB(shifted_chebyshev_polynomial_t_stub, &float_only<kShiftedChebyshevT>)
WEBGPU_STUB(shifted_chebyshev_polynomial_u_stub, &float_only<kShiftedChebyshevU>)
WEBGPU_STUB(shifted_chebyshev_polynomial_v_stub, &float_only<kShiftedChebyshevV>)
WEBGPU_STUB(shifted_chebyshev_polynomial_w_stub, &float_only<kShiftedChebyshevW>)
WEBGPU_STUB(hermite_polynomial_h_stub, &float_only<kHermiteH>)
WEBGPU_STUB(hermite_polynomial_he_stub, &float_only<kHermiteHe>)
WEBGPU_STUB(laguerre_polynomial_l_stub, &float_only<kLaguerreL>)
WEBGPU_STUB(legendre_polynomial_p_stub, &float_only<kLegendreP>)

namespace s = structured;
using T = const at::Tensor&;

// The functional and out= overloads (these ops have no in-place form). The (Scalar x, Tensor n) and
// (Tensor x, Scalar n) overloads are ATen composites that wrap the scalar and land here.
// Registration macros, laid out by hand (clang-format would chain them as one expression).
// clang-format off
WEBGPU_LIBRARY_IMPL(m) {
#define WEBGPU_SPECIAL_UNARY(op) \
  s::reg<at::native::structured_special_##op##_out, T>(m, "special_" #op, "special_" #op ".out");
#define WEBGPU_SPECIAL_BINARY(op) \
  s::reg<at::native::structured_special_##op##_out, T, T>(m, "special_" #op, "special_" #op ".out");
  WEBGPU_SPECIAL_UNARY(airy_ai) WEBGPU_SPECIAL_UNARY(bessel_j0) WEBGPU_SPECIAL_UNARY(bessel_j1)
  WEBGPU_SPECIAL_UNARY(bessel_y0) WEBGPU_SPECIAL_UNARY(bessel_y1) WEBGPU_SPECIAL_UNARY(modified_bessel_i0)
  WEBGPU_SPECIAL_UNARY(modified_bessel_i1) WEBGPU_SPECIAL_UNARY(modified_bessel_k0)
  WEBGPU_SPECIAL_UNARY(modified_bessel_k1) WEBGPU_SPECIAL_UNARY(scaled_modified_bessel_k0)
  WEBGPU_SPECIAL_UNARY(scaled_modified_bessel_k1) WEBGPU_SPECIAL_UNARY(spherical_bessel_j0)
  WEBGPU_SPECIAL_BINARY(chebyshev_polynomial_t) WEBGPU_SPECIAL_BINARY(chebyshev_polynomial_u)
  WEBGPU_SPECIAL_BINARY(chebyshev_polynomial_v) WEBGPU_SPECIAL_BINARY(chebyshev_polynomial_w)
  WEBGPU_SPECIAL_BINARY(shifted_chebyshev_polynomial_t) WEBGPU_SPECIAL_BINARY(shifted_chebyshev_polynomial_u)
  WEBGPU_SPECIAL_BINARY(shifted_chebyshev_polynomial_v) WEBGPU_SPECIAL_BINARY(shifted_chebyshev_polynomial_w)
  WEBGPU_SPECIAL_BINARY(hermite_polynomial_h) WEBGPU_SPECIAL_BINARY(hermite_polynomial_he)
  WEBGPU_SPECIAL_BINARY(laguerre_polynomial_l) WEBGPU_SPECIAL_BINARY(legendre_polynomial_p)
#undef WEBGPU_SPECIAL_UNARY
#undef WEBGPU_SPECIAL_BINARY
}
// clang-format on

}  // namespace
}  // namespace webgpu::ops
