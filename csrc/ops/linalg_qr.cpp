// Householder QR in float32 (issue 21): geqrf (LAPACK's reflectors and tau), linalg_householder_product
// (orgqr), ormqr, and linalg_qr built from them the way CPU's kernel is (geqrf into Q or R, then
// orgqr). Kernels in wgsl/kernels/linalg_qr.wgsl; argument checks and messages as CPU's.
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/linalg_qr_meta.h>
#include <torch/library.h>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/linalg_common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;
using namespace linalg;  // the family's helpers (ops/linalg_common.h)

std::string section(const std::string& name) { return kernel::section("linalg_qr", name); }

// geqrf in place over A (m x n matrices whose batch dims are one stride), tau contiguous (batch, k).
void geqrf_kernel(const Tensor& A, const Tensor& tau) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), batch = batch_of(A);
  if (batch == 0 || k == 0) return;
  Kernel kr("linalg_geqrf");
  kr.out(A, CT::F32);
  kr.out(tau, CT::F32);
  kr.param_index("m", m);
  kr.param_index("n", n);
  kr.param_index("k", k);
  matrix_params(kr, "", A);
  launch_per_matrix(kr, batch, [] { return section("geqrf"); });
}

// C <- Q C or Q^T C in place, Q from the first k = tau.size(-1) reflectors of V (m rows, like C);
// V, tau and C have the same batch shape.
void apply_q(const Tensor& V, const Tensor& tau_, const Tensor& C_, bool trans) {
  const int64_t m = C_.size(-2), nc = C_.size(-1), k = tau_.size(-1), batch = batch_of(C_);
  if (batch * nc == 0 || k == 0 || m == 0) return;
  Tensor Vw = batchable(V, 2), tau = batchable(tau_, 1), C = batchable(C_, 2);
  Kernel kr("linalg_house_apply");
  kr.in(Vw, CT::F32);
  kr.in(tau, CT::F32);
  kr.out(C, CT::F32);
  kr.param_index("m", m);
  kr.param_index("k", k);
  kr.param("trans", trans ? 1u : 0u);
  vector_params(kr, "t", tau);
  launch_columns(kr, Vw, C, batch, nc, [] { return section("apply"); });
  write_back(C_, C);
}

// QR (m x n, any layout) factored in place; tau (batch..., k) written.
void geqrf_inplace(const Tensor& QR, const Tensor& tau) {
  check_f32_kernel(QR, "geqrf");
  Tensor w = batchable(QR, 2);
  Tensor t = tau.is_contiguous() ? tau : at::empty(tau.sizes(), tau.options());
  geqrf_kernel(w, t);
  write_back(QR, w);
  write_back(tau, t);
}

// Q (m x c) <- the first c columns of H_0 .. H_{k-1}, the reflectors read from Q itself (orgqr).
void orgqr_inplace(const Tensor& Q, const Tensor& tau) {
  if (Q.numel() == 0) return;
  Tensor V = Q.clone();
  Tensor& Q_ = const_cast<Tensor&>(Q);
  Q_.zero_();
  Q_.diagonal(0, -2, -1).fill_(1.);
  apply_q(V, tau, Q, /*trans=*/false);
}

// ---- geqrf

std::tuple<Tensor&, Tensor&> geqrf_out(const Tensor& input, Tensor& QR, Tensor& tau) {
  for (auto* t : {&input, (const Tensor*)&QR, (const Tensor*)&tau}) check_dev(*t, "geqrf");
  TORCH_CHECK(input.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  at::native::checkFloatingOrComplex(input, "torch.geqrf");
  at::native::checkLinalgCompatibleDtype("torch.geqrf", QR, input, "a");
  at::native::checkLinalgCompatibleDtype("torch.geqrf", tau, input, "tau");
  check_f32_kernel(input, "geqrf");
  std::vector<int64_t> tau_shape(input.sizes().begin(), input.sizes().end() - 2);
  tau_shape.push_back(std::min(input.size(-2), input.size(-1)));
  at::native::resize_output(QR, input.sizes());
  at::native::resize_output(tau, tau_shape);
  if (input.numel() == 0) return {QR, tau};
  QR.copy_(input);
  geqrf_inplace(QR, tau);
  return {QR, tau};
}
std::tuple<Tensor, Tensor> geqrf(const Tensor& input) {
  // column-major matrices, as CPU's (LAPACK's) result
  Tensor QR = at::empty({0}, input.options()), tau = at::empty({0}, input.options());
  if (input.dim() >= 2) QR = at::native::cloneBatchedColumnMajor(at::empty(input.sizes(), input.options()));
  geqrf_out(input, QR, tau);
  return {QR, tau};
}

// ---- linalg_householder_product (orgqr)

Tensor& householder_product_out(const Tensor& input, const Tensor& tau, Tensor& result) {
  for (auto* t : {&input, &tau, (const Tensor*)&result}) check_dev(*t, "linalg_householder_product");
  const char* name = "torch.linalg.householder_product";
  TORCH_CHECK(input.dim() >= 2, name, ": input must have at least 2 dimensions.");
  TORCH_CHECK(input.size(-2) >= input.size(-1), name,
              ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  TORCH_CHECK(input.size(-1) >= tau.size(-1), name, ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1, name,
              ": Expected tau to have one dimension less than input, but got tau.ndim equal to ", tau.dim(),
              " and input.ndim is equal to ", input.dim());
  if (input.dim() > 2) {
    auto expected = input.sizes().slice(0, input.dim() - 2), actual = tau.sizes().slice(0, tau.dim() - 1);
    TORCH_CHECK(actual.equals(expected), name,
                ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ", actual);
  }
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), name, ": tau dtype ", tau.scalar_type(),
              " does not match input dtype ", input.scalar_type());
  at::native::checkLinalgCompatibleDtype(name, result, input);
  check_f32_kernel(input, "orgqr");
  at::native::resize_output(result, input.sizes());
  if (result.numel() == 0) return result;
  result.zero_();
  result.diagonal(0, -2, -1).fill_(1.);
  apply_q(input, tau, result, /*trans=*/false);
  return result;
}
constexpr auto householder_product = via_out<&householder_product_out>;

// ---- ormqr: op(Q) C (left) or C op(Q), Q from geqrf's reflectors

Tensor& ormqr_out(const Tensor& input, const Tensor& tau, const Tensor& other, bool left, bool transpose,
                  Tensor& result) {
  for (auto* t : {&input, &tau, &other, (const Tensor*)&result}) check_dev(*t, "ormqr");
  TORCH_CHECK(input.dim() >= 2, "torch.ormqr: input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 2, "torch.ormqr: other must have at least 2 dimensions.");
  const int64_t side = left ? -2 : -1;
  TORCH_CHECK(other.size(side) >= tau.size(-1), "torch.ormqr: other.shape[", side,
              "] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(other.size(side) == input.size(-2), "torch.ormqr: other.shape[", side,
              "] must be equal to input.shape[-2]");
  TORCH_CHECK(tau.size(-1) <= input.size(-1),
              "torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1,
              "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to ", tau.dim(),
              " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(
      input.dim() == other.dim(),
      "torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim equal to ",
      other.dim(), " and input.ndim is equal to ", input.dim());
  if (input.dim() > 2) {
    auto expected = input.sizes().slice(0, input.dim() - 2);
    auto tb = tau.sizes().slice(0, tau.dim() - 1), ob = other.sizes().slice(0, other.dim() - 2);
    TORCH_CHECK(tb.equals(expected),
                "torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], but got ", tb);
    TORCH_CHECK(ob.equals(expected),
                "torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], but got ", ob);
  }
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(),
              "torch.ormqr: Expected input and tau to have the same dtype, but input has dtype", input.scalar_type(),
              " and tau has dtype ", tau.scalar_type());
  TORCH_CHECK(other.scalar_type() == input.scalar_type(),
              "torch.ormqr: Expected input and other to have the same dtype, but input has dtype", input.scalar_type(),
              " and other has dtype ", other.scalar_type());
  at::native::checkLinalgCompatibleDtype("torch.ormqr", result, input);
  check_f32_kernel(input, "ormqr");
  at::native::resize_output(result, other.sizes());
  if (result.numel() == 0) return result;
  Tensor C = other.clone(at::MemoryFormat::Contiguous);
  // C Q = (Q^T C^T)^T, C Q^T = (Q C^T)^T
  apply_q(input, tau, left ? C : C.mT(), left ? transpose : !transpose);
  return result.copy_(C);
}
constexpr auto ormqr = via_out<&ormqr_out>;

// ---- linalg_qr (as CPU: geqrf in Q when it has A's shape, else in R, else in a copy; then orgqr)

void qr_impl(const Tensor& A, c10::string_view mode, const Tensor& Q, const Tensor& R) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto [compute_q, reduced] = at::native::_parse_qr_mode(mode);
  (void)reduced;
  if (A.numel() == 0) {
    // R is empty or zero; complete mode's Q is the identity
    if (R.numel()) const_cast<Tensor&>(R).zero_();
    if (compute_q && Q.numel()) {
      const_cast<Tensor&>(Q).zero_();
      Q.diagonal(0, -2, -1).fill_(1.);
    }
    return;
  }
  check_f32_kernel(A, "geqrf");
  std::vector<int64_t> tau_shape(A.sizes().begin(), A.sizes().end() - 2);
  tau_shape.push_back(k);
  Tensor tau = at::empty(tau_shape, A.options());
  Tensor QR;
  if (compute_q && Q.size(-1) == n) {
    QR = Q;
  } else if (R.size(-2) == m) {
    QR = R;
  } else {
    QR = at::empty(A.sizes(), A.options());
  }
  QR.copy_(A);
  geqrf_inplace(QR, tau);
  if (QR.is_same(R)) {
    if (compute_q) {
      if (m < n)
        Q.copy_(QR.narrow(-1, 0, m));
      else
        Q.narrow(-1, 0, n).copy_(QR);
    }
    const_cast<Tensor&>(R).triu_();
  } else {
    at::triu_out(const_cast<Tensor&>(R), QR.narrow(-2, 0, n));
  }
  if (compute_q) orgqr_inplace(Q, tau);
}

using Qr = Multi<at::meta::structured_linalg_qr, 2>;
std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, c10::string_view mode) {
  check_dev(A, "linalg_qr");
  Qr op;
  op.meta(A, mode);
  qr_impl(A, mode, op.outs[0], op.outs[1]);
  return {op.outs[0], op.outs[1]};
}
std::tuple<Tensor&, Tensor&> linalg_qr_out(const Tensor& A, c10::string_view mode, Tensor& Q, Tensor& R) {
  check_devs({A, Q, R}, "linalg_qr");
  Qr op({Q, R});
  op.meta(A, mode);
  qr_impl(A, mode, Q, R);
  return {Q, R};
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  WEBGPU_IMPL_OUT(m, "geqrf", "a", geqrf);
  WEBGPU_IMPL_OUT(m, "linalg_householder_product", "out", householder_product);
  WEBGPU_IMPL_OUT(m, "ormqr", "out", ormqr);
  WEBGPU_IMPL_OUT(m, "linalg_qr", "out", linalg_qr);
}

}  // namespace webgpu::ops
