// linalg.pinv and linalg.matrix_rank (pinverse and every overload): ATen's composites make their
// tolerances float64 tensors on the input's device (float32 only on MPS), which webgpu refuses. Here
// they are tensors of the input's real dtype, as on MPS: a 0-dim tolerance never promotes the
// singular values, so the comparisons compute in the same dtype as CPU's. The decompositions
// themselves (svd, eigh) are ATen's and reach whatever kernel the device has for them.
//
// The float and rcond overloads are CompositeImplicitAutograd; their kernels are registered for
// AutogradPrivateUse1 as well, so they run above autograd as the composites do.
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <algorithm>

#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;
using OptT = std::optional<Tensor>;

Tensor tol_full(const Tensor& input, double v) {
  return at::full({}, v, input.options().dtype(c10::toRealValueType(input.scalar_type())));
}

// ATen's get_atol_rtol (tensor form): a missing rtol is eps * max(m, n), or 0 where atol > 0.
std::pair<Tensor, Tensor> atol_rtol(const Tensor& input, const OptT& atol_opt, const OptT& rtol_opt, const char* fn) {
  const bool has_atol = atol_opt.has_value() && atol_opt->defined();
  const bool has_rtol = rtol_opt.has_value() && rtol_opt->defined();
  Tensor atol = has_atol ? *atol_opt : tol_full(input, 0.0);
  at::native::checkNotComplexTolerance(atol, fn, "atol");
  Tensor rtol;
  if (has_rtol) {
    rtol = *rtol_opt;
    at::native::checkNotComplexTolerance(rtol, fn, "rtol");
  } else {
    const Tensor def = tol_full(input, at::native::_get_epsilon(c10::toRealValueType(input.scalar_type())) *
                                           double(std::max(input.size(-1), input.size(-2))));
    rtol = has_atol ? at::where(*atol_opt > 0, tol_full(input, 0.0), def) : def;
  }
  return {atol, rtol};
}

// The (double) form: both tolerances as tensors; rtol defaults to 0 when atol > 0.
std::pair<Tensor, Tensor> atol_rtol(const Tensor& input, std::optional<double> atol, std::optional<double> rtol) {
  double r;
  if (rtol.has_value()) {
    r = *rtol;
  } else {
    const double def = at::native::_get_epsilon(c10::toRealValueType(input.scalar_type())) *
                       double(std::max(input.size(-1), input.size(-2)));
    r = atol.has_value() && *atol > 0.0 ? 0.0 : def;
  }
  return {tol_full(input, atol.value_or(0.0)), tol_full(input, r)};
}

// ---- pinv

Tensor pinv_tensor(const Tensor& input, const OptT& atol_opt, const OptT& rtol_opt, bool hermitian) {
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK(
      (t == at::kDouble || t == at::kFloat || t == at::kComplexFloat || t == at::kComplexDouble) && input.dim() >= 2,
      "linalg.pinv(", t, "{", input.sizes(),
      "}): expected a tensor with 2 or more dimensions of float, double, "
      "cfloat or cdouble types");
  auto [atol, rtol] = atol_rtol(input, atol_opt, rtol_opt, "torch.linalg.pinv");
  if (input.numel() == 0) {
    auto [U, S, V] = input.svd();
    return at::matmul(V * S.reciprocal().unsqueeze(-2), U.mH());
  }
  if (!hermitian) {
    auto [U, S, V] = input.svd();
    const Tensor max_val = at::narrow(S, -1, 0, 1);  // singular values are sorted in descending order
    const Tensor tol = at::max(atol.unsqueeze(-1), rtol.unsqueeze(-1) * max_val);
    const Tensor S_pinv = at::where(S > tol, S.reciprocal(), at::zeros({}, S.options())).to(input.dtype());
    return at::matmul(V * S_pinv.unsqueeze(-2), U.mH());
  }
  auto [S, U] = at::linalg_eigh(input);
  const Tensor S_abs = S.abs();
  const Tensor max_val = S_abs.amax(-1, true);
  const Tensor tol = at::max(atol.unsqueeze(-1), rtol.unsqueeze(-1) * max_val);
  const Tensor S_pinv = at::where(S_abs > tol, S.reciprocal(), at::zeros({}, S.options())).to(input.dtype());
  return at::matmul(U * S_pinv.unsqueeze(-2), U.mH());
}

Tensor pinv_float(const Tensor& input, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  TORCH_CHECK(input.dim() >= 2, "linalg.pinv(", input.scalar_type(), "{", input.sizes(),
              "}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types");
  auto [a, r] = atol_rtol(input, atol, rtol);
  return at::linalg_pinv(input, a, r, hermitian);
}
Tensor& pinv_float_out(const Tensor& input, std::optional<double> atol, std::optional<double> rtol, bool hermitian,
                       Tensor& out) {
  at::native::checkSameDevice("linalg.pinv", out, input);
  at::native::checkLinalgCompatibleDtype("linalg.pinv", out, input);
  const Tensor r = pinv_float(input, atol, rtol, hermitian);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}
Tensor pinv_rcond(const Tensor& input, double rcond, bool hermitian) {
  return pinv_float(input, 0.0, rcond, hermitian);
}
Tensor& pinv_rcond_out(const Tensor& input, double rcond, bool hermitian, Tensor& out) {
  return pinv_float_out(input, 0.0, rcond, hermitian, out);
}
Tensor pinv_rcond_tensor(const Tensor& input, const Tensor& rcond, bool hermitian) {
  at::native::checkNotComplexTolerance(rcond, "torch.linalg.pinv", "rcond");
  return at::linalg_pinv(input, tol_full(input, 0.0), rcond, hermitian);
}
Tensor& pinv_rcond_tensor_out(const Tensor& input, const Tensor& rcond, bool hermitian, Tensor& out) {
  at::native::checkSameDevice("linalg.pinv", out, input);
  at::native::checkLinalgCompatibleDtype("linalg.pinv", out, input);
  const Tensor r = pinv_rcond_tensor(input, rcond, hermitian);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

// ---- matrix_rank

Tensor& rank_impl(const Tensor& input, const OptT& atol_opt, const OptT& rtol_opt, bool hermitian, Tensor& result) {
  auto [atol, rtol] = atol_rtol(input, atol_opt, rtol_opt, "torch.linalg.matrix_rank");
  at::native::checkSameDevice("torch.linalg.matrix_rank", result, input);
  at::native::checkSameDevice("torch.linalg.matrix_rank", atol, input, "atol");
  at::native::checkSameDevice("torch.linalg.matrix_rank", rtol, input, "rtol");
  at::native::checkLinalgCompatibleDtype("torch.linalg.matrix_rank", result.scalar_type(), at::kLong);
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  at::native::resize_output(result, input.sizes().slice(0, input.dim() - 2));
  if (input.numel() == 0) return result.fill_(0);
  Tensor S, max_S;
  if (!hermitian) {
    S = at::linalg_svdvals(input);
    max_S = at::narrow(S, -1, 0, 1);
  } else {
    S = at::linalg_eigvalsh(input).abs();
    max_S = S.amax(-1, true);
  }
  const Tensor tol = at::max(atol.unsqueeze(-1), rtol.unsqueeze(-1) * max_S);
  return at::sum_out(result, S > tol, -1);
}

Tensor rank_tensor(const Tensor& input, const OptT& atol, const OptT& rtol, bool hermitian) {
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  Tensor result = at::empty(input.sizes().slice(0, input.dim() - 2), input.options().dtype(at::kLong));
  return rank_impl(input, atol, rtol, hermitian, result);
}
Tensor& rank_tensor_out(const Tensor& input, const OptT& atol, const OptT& rtol, bool hermitian, Tensor& out) {
  return rank_impl(input, atol, rtol, hermitian, out);
}
Tensor rank_float(const Tensor& input, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  auto [a, r] = atol_rtol(input, atol, rtol);
  return rank_tensor(input, a, r, hermitian);
}
Tensor& rank_float_out(const Tensor& input, std::optional<double> atol, std::optional<double> rtol, bool hermitian,
                       Tensor& out) {
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  auto [a, r] = atol_rtol(input, atol, rtol);
  return rank_impl(input, a, r, hermitian, out);
}
// The `tol` overloads: tol is the absolute tolerance, rtol is 0.
Tensor rank_tol(const Tensor& input, double tol, bool hermitian) {
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  return rank_tensor(input, tol_full(input, tol), tol_full(input, 0.0), hermitian);
}
Tensor& rank_tol_out(const Tensor& input, double tol, bool hermitian, Tensor& out) {
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  return rank_impl(input, tol_full(input, tol), tol_full(input, 0.0), hermitian, out);
}
Tensor rank_tol_tensor(const Tensor& input, const Tensor& tol, bool hermitian) {
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  return rank_tensor(input, tol, tol_full(input, 0.0), hermitian);
}
Tensor& rank_tol_tensor_out(const Tensor& input, const Tensor& tol, bool hermitian, Tensor& out) {
  at::native::checkIsMatrix(input, "torch.linalg.matrix_rank", "input");
  return rank_impl(input, tol, tol_full(input, 0.0), hermitian, out);
}

// The composites' overloads: registered for PrivateUse1 and AutogradPrivateUse1.
void register_composites(torch::Library& m) {
  m.impl("linalg_pinv.atol_rtol_float", TORCH_FN(pinv_float));
  m.impl("linalg_pinv.atol_rtol_float_out", TORCH_FN(pinv_float_out));
  WEBGPU_IMPL_OUT(m, "linalg_pinv", "out", pinv_rcond);
  m.impl("linalg_pinv.rcond_tensor", TORCH_FN(pinv_rcond_tensor));
  m.impl("linalg_pinv.out_rcond_tensor", TORCH_FN(pinv_rcond_tensor_out));
  m.impl("linalg_matrix_rank.atol_rtol_tensor", TORCH_FN(rank_tensor));
  m.impl("linalg_matrix_rank.atol_rtol_tensor_out", TORCH_FN(rank_tensor_out));
  m.impl("linalg_matrix_rank.atol_rtol_float", TORCH_FN(rank_float));
  m.impl("linalg_matrix_rank.atol_rtol_float_out", TORCH_FN(rank_float_out));
  WEBGPU_IMPL_OUT(m, "linalg_matrix_rank", "out", rank_tol);
  m.impl("linalg_matrix_rank.tol_tensor", TORCH_FN(rank_tol_tensor));
  m.impl("linalg_matrix_rank.out_tol_tensor", TORCH_FN(rank_tol_tensor_out));
}

WEBGPU_LIBRARY_IMPL(m) {
  // CompositeExplicitAutogradNonFunctional: its derivative formula stays in force.
  m.impl("linalg_pinv.atol_rtol_tensor", TORCH_FN(pinv_tensor));
  register_composites(m);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { register_composites(m); }

}  // namespace
}  // namespace webgpu::ops
