// torch.linalg.lstsq in float32 (issue 21), composed from the device's QR (geqrf/ormqr), triangular solve and
// SVD kernels, with each LAPACK driver's outputs as CPU returns them (which of residuals, rank and singular
// values are filled, their shapes, the empty cases and gels' full-rank error).
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <tuple>

#include "ops/linalg_common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;
using linalg::check_dev;
namespace idx = at::indexing;

std::string driver_of(const std::optional<c10::string_view>& driver) {
  if (!driver.has_value()) return "gelsy";  // CPU's default (CUDA's is gels)
  std::string d(driver->data(), driver->size());
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  TORCH_CHECK(d == "gels" || d == "gelsy" || d == "gelsd" || d == "gelss",
              "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  return d;
}

struct Result {
  Tensor solution, residuals, rank, sv;
};

// gels: QR of A (m >= n) or of A^T (m < n, the minimum-norm solution), as LAPACK's sgels. A matrix that
// is exactly zero gives a zero solution (and zero residual rows); an exactly zero diagonal of R otherwise
// raises CPU's full-rank error with the (1-based) column.
void gels(const Tensor& A, const Tensor& B, Result& r, bool is_matrix) {
  const int64_t m = A.size(-2), n = A.size(-1);
  const Tensor nonzero = (A != 0).flatten(-2).any(-1);  // batch
  Tensor X, diag, raw;
  if (m >= n) {
    auto [QR, tau] = at::geqrf(A);
    Tensor QtB = at::ormqr(QR, tau, B, /*left=*/true, /*transpose=*/true);
    Tensor R = QR.narrow(-2, 0, n).triu();
    diag = R.diagonal(0, -2, -1);
    X = at::linalg_solve_triangular(R, QtB.narrow(-2, 0, n), /*upper=*/true);
    raw = QtB.narrow(-2, n, m - n);
  } else {
    auto [QR, tau] = at::geqrf(A.mT());
    Tensor R = QR.narrow(-2, 0, m).triu();
    diag = R.diagonal(0, -2, -1);
    Tensor Y = at::linalg_solve_triangular(R.mT(), B, /*upper=*/false);
    auto zshape = B.sizes().vec();
    zshape[zshape.size() - 2] = n;
    Tensor Z = at::zeros(zshape, B.options());
    Z.narrow(-2, 0, m).copy_(Y);
    X = at::ormqr(QR, tau, Z, /*left=*/true, /*transpose=*/false);
  }
  const Tensor singular = (diag == 0) & nonzero.unsqueeze(-1);
  if (singular.any().item<bool>()) {
    Tensor s = singular.reshape({-1, diag.size(-1)}).cpu();
    Tensor infos = at::zeros({std::max<int64_t>(1, s.size(0))}, at::kInt);
    auto sa = s.accessor<bool, 2>();
    for (int64_t b = 0; b < s.size(0); ++b)
      for (int64_t j = 0; j < s.size(1); ++j)
        if (sa[b][j]) {
          infos[b] = int(j + 1);
          break;
        }
    at::_linalg_check_errors(infos, "torch.linalg.lstsq", is_matrix);
  }
  const Tensor keep = nonzero.unsqueeze(-1).unsqueeze(-1);
  r.solution = at::where(keep, X, at::zeros({}, X.options()));
  if (m > n) r.residuals = at::where(keep, raw, at::zeros({}, raw.options())).pow(2).sum(-2);
}

// gelsy, gelsd, gelss: the minimum-norm solution over the singular values above rcond * the largest (a
// negative rcond means machine precision, as LAPACK's).
void svd_solve(const Tensor& A0, const Tensor& B, double rcond, Result& r) {
  // A0 is the input before broadcasting: CPU's rank and singular values keep its batch shape.
  auto [U, S, Vh] = at::linalg_svd(A0, /*full_matrices=*/false);
  if (rcond < 0) rcond = std::numeric_limits<float>::epsilon();
  const Tensor keep = S > S.narrow(-1, 0, 1) * rcond;
  r.rank = keep.sum(-1);
  const Tensor inv = at::where(keep, S.reciprocal(), at::zeros({}, S.options()));
  r.solution = at::matmul(Vh.mH(), inv.unsqueeze(-1) * at::matmul(U.mH(), B));
  r.sv = S;
}

// The sum of squares of Q^T B's rows past n: the squared residual norm of each column, as LAPACK leaves it.
Tensor qr_residuals(const Tensor& A, const Tensor& B) {
  const int64_t m = A.size(-2), n = A.size(-1);
  auto [QR, tau] = at::geqrf(A);
  return at::ormqr(QR, tau, B, true, true).narrow(-2, n, m - n).pow(2).sum(-2);
}

std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> lstsq_out(const Tensor& input, const Tensor& other,
                                                         std::optional<double> rcond,
                                                         std::optional<c10::string_view> driver, Tensor& solution,
                                                         Tensor& residuals, Tensor& rank, Tensor& singular_values) {
  const char* op = "torch.linalg.lstsq";
  TORCH_CHECK(input.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  TORCH_CHECK(input.scalar_type() == other.scalar_type(),
              "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype ",
              input.scalar_type(), " and other's dtype ", other.scalar_type());
  const int64_t dim_diff = input.dim() - other.dim();
  TORCH_CHECK(0 <= dim_diff && dim_diff <= 1,
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
              "other.dim()) <= 1");
  const bool vector_case = at::native::linalg_solve_is_vector_rhs(input, other);
  const Tensor other_2d = vector_case ? other.unsqueeze(-1) : other;
  TORCH_CHECK(input.size(-2) == other_2d.size(-2),
              vector_case ? "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                          : "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  for (const Tensor* t : {&input, &other, (const Tensor*)&solution, (const Tensor*)&residuals, (const Tensor*)&rank,
                          (const Tensor*)&singular_values})
    check_dev(*t, op);
  at::native::checkLinalgCompatibleDtype(op, solution, input, "solution");
  const auto real_dtype = c10::toRealValueType(input.scalar_type());
  at::native::checkLinalgCompatibleDtype(op, residuals.scalar_type(), real_dtype, "solution");
  at::native::checkLinalgCompatibleDtype(op, rank.scalar_type(), at::kLong, "rank");
  at::native::checkLinalgCompatibleDtype(op, singular_values.scalar_type(), real_dtype, "singular_values");
  const std::string drv = driver_of(driver);
  const auto st = input.scalar_type();
  no_complex(st, op);
  if (st == at::kDouble) raise_no_float64_kernel("linalg_lstsq");
  TORCH_CHECK(st == at::kFloat, "This function doesn't handle types other than float and double");
  const double rc = rcond.has_value() ? *rcond
                                      : double(std::numeric_limits<float>::epsilon()) *
                                            double(std::max<int64_t>(input.size(-2), input.size(-1)));

  Tensor A, B;
  if (dim_diff == 1 && !vector_case) {
    // CPU broadcasts input's batch dims with all but the last of other's here (its row count included),
    // raising where they differ and batching other as one matrix otherwise; followed for the same results.
    auto batch = at::infer_size(input.sizes().slice(0, input.dim() - 2), other.sizes().slice(0, other.dim() - 1));
    auto ashape = batch, bshape = batch;
    ashape.insert(ashape.end(), {input.size(-2), input.size(-1)});
    bshape.insert(bshape.end(), {other.size(-2), other.size(-1)});
    A = input.expand(ashape);
    B = other.expand(bshape);
  } else {
    std::tie(B, A) = at::native::_linalg_broadcast_batch_dims(other_2d, input, nullptr);
  }
  const int64_t m = A.size(-2), n = A.size(-1), nrhs = B.size(-1);
  const auto batch = A.sizes().slice(0, A.dim() - 2).vec();
  int64_t nbatch = 1;
  for (auto b : batch) nbatch *= b;
  auto with = [&](std::initializer_list<int64_t> tail) {
    auto s = batch;
    s.insert(s.end(), tail);
    return s;
  };
  const auto fopt = A.options();
  Result r;
  r.residuals = at::empty({0}, fopt);
  // rank and singular values have the input's own batch shape (not the broadcast one), as on CPU
  auto in_batch = input.sizes().slice(0, input.dim() - 2).vec();
  auto sv_shape = in_batch;
  sv_shape.push_back(std::min(m, n));
  r.rank = at::empty(drv == "gels" ? std::vector<int64_t>{0} : in_batch, fopt.dtype(at::kLong));
  r.sv = at::empty(drv == "gelsd" || drv == "gelss" ? sv_shape : std::vector<int64_t>{0}, fopt);
  // LAPACK's quick returns: gels and gelsy also return at once when there is no right-hand side
  if (nbatch == 0 || m == 0 || n == 0 || (nrhs == 0 && (drv == "gels" || drv == "gelsy"))) {
    // LAPACK returns at once: a zero solution, rank 0; gelsd/gelss leave B (their residual rows) as it was,
    // gels zeroes it.
    r.solution = at::zeros(with({n, nrhs}), fopt);
    if (drv != "gels") r.rank.zero_();
    if (drv == "gelsd" || drv == "gelss") r.sv.zero_();
    if (m > n && drv == "gels") r.residuals = at::zeros(with({nrhs}), fopt);
    if (m > n && (drv == "gelsd" || drv == "gelss")) r.residuals = B.pow(2).sum(-2);
  } else if (drv == "gels") {
    gels(A, B, r, input.dim() == 2);
  } else {
    svd_solve(input, B, rc, r);
    if (drv == "gelsy") r.sv = at::empty({0}, fopt);
    if (m > n && drv != "gelsy" && (r.rank == n).all().item<bool>()) r.residuals = qr_residuals(A, B);
  }
  if (vector_case) r.solution = r.solution.squeeze(-1);
  at::native::resize_output(solution, r.solution.sizes());
  at::native::resize_output(residuals, r.residuals.sizes());
  at::native::resize_output(rank, r.rank.sizes());
  at::native::resize_output(singular_values, r.sv.sizes());
  if (solution.numel()) solution.copy_(r.solution);
  if (residuals.numel()) residuals.copy_(r.residuals);
  if (rank.numel()) rank.copy_(r.rank);
  if (singular_values.numel()) singular_values.copy_(r.sv);
  return {solution, residuals, rank, singular_values};
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  m.impl("linalg_lstsq.out", TORCH_FN(lstsq_out));
}
