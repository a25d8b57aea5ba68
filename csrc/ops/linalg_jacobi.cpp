// The SVD (_linalg_svd, by one-sided Jacobi) and the symmetric eigendecomposition (_linalg_eigh, by
// cyclic two-sided Jacobi) in float32 (issue 21), on batches, kernels in wgsl/kernels/linalg_jacobi.wgsl.
// What ATen builds on them (svdvals, pinv, matrix_norm 'nuc' / 2, cond, matrix_rank, eigvalsh) and
// their backward formulas come for free. Results are sorted as LAPACK's (singular values descending,
// eigenvalues ascending); singular vectors and eigenvectors are unique only up to sign (and to a
// basis of a repeated value's space), as on any device.
#include <ATen/ops/_linalg_eigh_meta.h>
#include <ATen/ops/_linalg_svd_meta.h>
#include <torch/library.h>

#include <cmath>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/linalg_common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;
using namespace linalg;  // the family's helpers (ops/linalg_common.h)

std::string section(const std::string& name) { return kernel::section("linalg_jacobi", name); }

constexpr float kEps = 1.1920929e-7f;  // float32's machine epsilon
constexpr int64_t kSweeps = 40;  // a cap: Jacobi converges quadratically

// The parameters the svd and eigh sections' sweeps read: n columns, nn (n rounded up to even: the
// round-robin's slots), sweeps (the most) and tol (a pair rotates when its coupling exceeds tol
// relative to its diagonal).
void sweep_params(Kernel& k, int64_t n, float tol) {
  k.param_index("n", n);
  k.param_index("nn", n + (n & 1));
  k.param_index("sweeps", kSweeps);
  k.param_f32("tol", tol);
}

std::vector<int64_t> batch_shape(const Tensor& A, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> s(A.sizes().begin(), A.sizes().end() - 2);
  s.insert(s.end(), tail);
  return s;
}

// Wc (batch, n, m): the columns of (m x n, m >= n) matrices, orthogonalised in place. Returns
// (S (batch, n) unsorted singular values, Vc (batch, n, n): the right singular vectors as rows).
std::pair<Tensor, Tensor> svd_jacobi(const Tensor& Wc, int64_t m, int64_t n) {
  const int64_t batch = Wc.size(0);
  Tensor Vc = at::empty({batch, n, n}, Wc.options());
  Tensor S = at::empty({batch, n}, Wc.options());
  Kernel k("linalg_svd_jacobi");
  k.out(Wc, CT::F32);
  k.out(Vc, CT::F32);
  k.out(S, CT::F32);
  k.param_index("m", m);
  // the rounding of a float32 dot product of m terms grows like sqrt(m) eps
  sweep_params(k, n, 4.f * kEps * float(std::sqrt(double(m))));
  launch_per_matrix(k, batch, [] { return section("svd"); });
  return {S, Vc};
}

// The rows of Q (batch, r, m) made orthonormal in order, rows that are zero or dependent on the
// rows before replaced by a completion of the basis.
void orthonormalize_rows(const Tensor& Q) {
  const int64_t batch = Q.size(0), r = Q.size(1), m = Q.size(2);
  if (batch * r == 0) return;
  Tensor scratch = at::empty({batch, m}, Q.options());
  Kernel k("linalg_orth_rows");
  k.out(Q, CT::F32);
  k.out(scratch, CT::F32);
  k.param_index("r", r);
  k.param_index("m", m);
  launch_per_matrix(k, batch, [] { return section("orth"); });
}

// Rows of x (batch, n, c) reordered by idx (batch, n).
Tensor rows_by(const Tensor& x, const Tensor& idx) { return at::take_along_dim(x, idx.unsqueeze(-1), 1); }

// ---- _linalg_svd

void svd_impl(const Tensor& A, bool full_matrices, bool compute_uv, const Tensor& U, const Tensor& S,
              const Tensor& Vh) {
  if (A.numel() == 0) {
    // as CPU: the identity is a valid U / Vh of an empty matrix (e.g. 3 x 0 with full_matrices)
    if (compute_uv && full_matrices) {
      for (const Tensor* t : {&U, &Vh}) {
        if (t->numel() == 0) continue;
        const_cast<Tensor&>(*t).zero_();
        t->diagonal(0, -2, -1).fill_(1.);
      }
    }
    return;
  }
  check_f32_kernel(A, "linalg_svd");
  const int64_t m = A.size(-2), n = A.size(-1);
  const bool trans = m < n;  // the SVD of A^T: A = (V S U^T of A^T)
  const int64_t M = std::max(m, n), N = std::min(m, n), batch = batch_of(A);
  // X (M x N) = A or A^T, stored by columns: Wc (batch, N, M)
  Tensor Wc = (trans ? A : A.mT()).reshape({batch, N, M}).clone(at::MemoryFormat::Contiguous);
  auto [Sr, Vc] = svd_jacobi(Wc, M, N);
  auto [Ss, idx] = at::sort(Sr, /*stable=*/true, /*dim=*/-1, /*descending=*/true);
  const_cast<Tensor&>(S).copy_(Ss.view(batch_shape(A, {N})));
  if (!compute_uv) return;
  // X = Ux diag(S) Vhx with Ux's columns the normalised columns of W (the rows of Uc), Vhx = Vc.
  Wc = rows_by(Wc, idx);
  Vc = rows_by(Vc, idx);
  const int64_t mu = full_matrices ? M : N;
  Tensor Uc = at::zeros({batch, mu, M}, A.options());
  Tensor Sd = Ss.unsqueeze(-1);
  Uc.narrow(1, 0, N).copy_(at::where(Sd > 0, Wc / Sd, at::zeros({}, A.options())));
  orthonormalize_rows(Uc);
  orthonormalize_rows(Vc);  // rotations leave ~sqrt(#rotations) eps of drift
  // A = X: U = Ux = Uc^T, Vh = Vc.  A = X^T: U = Vhx^T = Vc^T, Vh = Ux^T = Uc.
  Tensor u = trans ? Vc.mT() : Uc.mT();
  Tensor vh = trans ? Uc : Vc;
  const_cast<Tensor&>(U).copy_(u.view(batch_shape(A, {u.size(-2), u.size(-1)})));
  const_cast<Tensor&>(Vh).copy_(vh.view(batch_shape(A, {vh.size(-2), vh.size(-1)})));
}

using Svd = Multi<at::meta::structured__linalg_svd, 3>;
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices, bool compute_uv,
                                       std::optional<c10::string_view> driver) {
  check_dev(A, "_linalg_svd");
  Svd op;
  op.meta(A, full_matrices, compute_uv, driver);
  svd_impl(A, full_matrices, compute_uv, op.outs[0], op.outs[1], op.outs[2]);
  return {op.outs[0], op.outs[1], op.outs[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> svd_out(const Tensor& A, bool full_matrices, bool compute_uv,
                                              std::optional<c10::string_view> driver, Tensor& U, Tensor& S,
                                              Tensor& Vh) {
  check_devs({A, U, S, Vh}, "_linalg_svd");
  Svd op({U, S, Vh});
  op.meta(A, full_matrices, compute_uv, driver);
  svd_impl(A, full_matrices, compute_uv, U, S, Vh);
  return {U, S, Vh};
}

// ---- _linalg_eigh

void eigh_impl(const Tensor& A, c10::string_view uplo, bool compute_v, const Tensor& L, const Tensor& V) {
  if (A.numel() == 0) return;
  check_f32_kernel(A, "linalg_eigh");
  const bool upper = std::toupper(static_cast<unsigned char>(uplo[0])) == 'U';
  const int64_t n = A.size(-1), batch = batch_of(A);
  // the symmetric matrix that the named triangle defines
  Tensor T = upper ? A.triu() : A.tril();
  Tensor S = (T + (upper ? T.triu(1) : T.tril(-1)).mT()).reshape({batch, n, n});
  Tensor W = S.clone(at::MemoryFormat::Contiguous);
  Tensor Vc = at::empty({batch, n, n}, A.options());
  Tensor D = at::empty({batch, n}, A.options());
  const int64_t nn = n + (n & 1);
  Tensor cs = at::empty({batch, nn}, A.options());
  Kernel k("linalg_eigh_jacobi");
  k.out(W, CT::F32);
  k.out(Vc, CT::F32);
  k.out(D, CT::F32);
  k.out(cs, CT::F32);
  sweep_params(k, n, 4.f * kEps);
  k.param_f32("tiny", kEps);
  launch_per_matrix(k, batch, [] { return section("eigh"); });
  // Float32 rotations leave ~sqrt(#rotations) eps in V and D: V re-orthonormalised, and the
  // eigenvalues taken as the Rayleigh quotients v^T A v (second order in V's error).
  orthonormalize_rows(Vc);
  D = (at::matmul(Vc, S) * Vc).sum(-1);
  auto [Ds, idx] = at::sort(D, /*stable=*/true, /*dim=*/-1, /*descending=*/false);
  const_cast<Tensor&>(L).copy_(Ds.view(batch_shape(A, {n})));
  if (compute_v) const_cast<Tensor&>(V).copy_(rows_by(Vc, idx).mT().view(A.sizes()));
}

using Eigh = Multi<at::meta::structured__linalg_eigh, 2>;
std::tuple<Tensor, Tensor> eigh(const Tensor& A, c10::string_view uplo, bool compute_v) {
  check_dev(A, "_linalg_eigh");
  Eigh op;
  op.meta(A, uplo, compute_v);
  eigh_impl(A, uplo, compute_v, op.outs[0], op.outs[1]);
  return {op.outs[0], op.outs[1]};
}
std::tuple<Tensor&, Tensor&> eigh_out(const Tensor& A, c10::string_view uplo, bool compute_v, Tensor& L, Tensor& V) {
  check_devs({A, L, V}, "_linalg_eigh");
  Eigh op({L, V});
  op.meta(A, uplo, compute_v);
  eigh_impl(A, uplo, compute_v, L, V);
  return {L, V};
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  WEBGPU_IMPL_OUT(m, "_linalg_svd", "U", svd);
  WEBGPU_IMPL_OUT(m, "_linalg_eigh", "eigenvalues", eigh);
}

}  // namespace webgpu::ops
