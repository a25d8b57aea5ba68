// Dense linear algebra in float32 (issue 21): LU with partial pivoting (linalg_lu_factor_ex), its
// solve (linalg_lu_solve), Cholesky (linalg_cholesky_ex), triangular solves
// (linalg_solve_triangular, triangular_solve) and what ATen builds on them the way CPU's kernels do
// (_linalg_solve_ex, linalg_inv_ex, _linalg_det, _linalg_slogdet). ATen's own meta functions give
// shapes, strides and argument checks; the kernels (wgsl/kernels/linalg_decomp.wgsl) address every
// matrix through its strides, so out= tensors of any layout are written in place. Backward is
// PyTorch's derivative formulas over these forwards.
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_linalg_det_meta.h>
#include <ATen/ops/_linalg_slogdet_meta.h>
#include <ATen/ops/_linalg_solve_ex_meta.h>
#include <ATen/ops/linalg_cholesky_ex_meta.h>
#include <ATen/ops/linalg_inv_ex_meta.h>
#include <ATen/ops/linalg_lu_factor_ex_meta.h>
#include <ATen/ops/linalg_lu_meta.h>
#include <ATen/ops/linalg_lu_solve_meta.h>
#include <ATen/ops/lu_unpack_meta.h>
#include <ATen/ops/triangular_solve_meta.h>
#include <torch/library.h>

#include <algorithm>
#include <array>

#include "engines/gemm.h"
#include "kernel/device.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/complex.h"
#include "ops/linalg_common.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;

std::string section(const std::string& name) { return kernel::section("linalg_decomp", name); }

using namespace linalg;  // the family's helpers (ops/linalg_common.h)

// ---- kernels
// (their batch dims must be one stride: callers pass batchable() tensors)

// The size of a workgroup copy of `elems` elements: the next power of two from 64, so that small
// matrices take little workgroup memory (more workgroups resident) in a few pipelines.
int64_t local_size(int64_t elems) {
  int64_t p = 64;
  while (p < elems) p *= 2;
  return p;
}

// The operands and parameters of section lu_core (wgsl/kernels/linalg_decomp.wgsl), bound first:
// lu (m x n matrices, factored in place), pivots (..., min(m, n)), info (...).
void lu_operands(Kernel& k, const Tensor& lu, const Tensor& pivots, const Tensor& info) {
  const int64_t m = lu.size(-2), n = lu.size(-1);
  k.out(lu, CT::F32);
  k.out(pivots, CT::I32);
  k.out(info, CT::I32);
  k.param_index("batch", batch_of(lu));
  k.param_index("m", m);
  k.param_index("n", n);
  k.param_index("kmin", std::min(m, n));
  matrix_params(k, "", lu);
  vector_params(k, "p", pivots);
  batched_params(k, "i", info, 0);
}

// LU in place over `lu` (m x n matrices), pivots (..., min(m, n)) and info (...) written.
void lu_kernel(const Tensor& lu, const Tensor& pivots, const Tensor& info) {
  const int64_t m = lu.size(-2), n = lu.size(-1), batch = batch_of(lu);
  if (batch == 0) return;
  const bool local = m * n <= kLocalElems;
  const int64_t elems = local ? local_size(m * n) : kLocalElems;
  Kernel k(local ? "linalg_lu:local" + std::to_string(elems) : "linalg_lu:global");
  lu_operands(k, lu, pivots, info);
  k.launch(uint64_t(batch), [&] { return matrix_access(local, elems) + section("lu_core") + section("lu"); });
}

// Right-hand sides of at most this many elements per system fit solve_kernel's workgroup copy.
constexpr int64_t kSolveLocalRhs = 1024;

// A X = B by LU with partial pivoting, one workgroup per system with A and B in workgroup memory:
// LU, pivots and info written as lu_kernel writes them, X as lu_solve_kernel would. All operands
// batchable with one batch (A, LU: n x n with n * n <= kLocalElems; B, X: n x nrhs, n * nrhs <=
// kSolveLocalRhs). B may be X itself.
void solve_kernel(const Tensor& A, const Tensor& B, const Tensor& LU, const Tensor& pivots, const Tensor& info,
                  const Tensor& X) {
  const int64_t n = LU.size(-1), nrhs = X.size(-1), batch = batch_of(LU);
  if (batch == 0) return;
  const int64_t a_elems = local_size(n * n), x_elems = local_size(n * nrhs);
  Kernel k("linalg_solve:" + std::to_string(a_elems) + ":" + std::to_string(x_elems));
  lu_operands(k, LU, pivots, info);
  k.in(A, CT::F32);
  k.in(B, CT::F32);
  k.out(X, CT::F32);
  k.param_index("nrhs", nrhs);
  matrix_params(k, "a", A);
  matrix_params(k, "b", B);
  matrix_params(k, "x", X);
  k.launch(uint64_t(batch), [&] {
    return matrix_access(true, a_elems) + section("lu_core") +
           kernel::fill(section("solve"), {{"XS", std::to_string(x_elems)}});
  });
}

// Lower Cholesky in place over L (n * n <= kLocalElems: larger ones go by blocks, cholesky_blocked),
// one workgroup per matrix in workgroup memory, info written.
void cholesky_kernel(const Tensor& L, const Tensor& info) {
  const int64_t n = L.size(-1), batch = batch_of(L);
  TORCH_INTERNAL_ASSERT(n * n <= kLocalElems);
  if (batch == 0) return;
  const int64_t local_elems = local_size(n * n);
  Kernel k("linalg_cholesky:local" + std::to_string(local_elems));
  k.out(L, CT::F32);
  k.out(info, CT::I32);
  k.param_index("batch", batch);
  k.param_index("m", n);  // read by A_begin / A_end
  k.param_index("n", n);
  matrix_params(k, "", L);
  batched_params(k, "i", info, 0);
  k.launch(uint64_t(batch), [&] { return matrix_access(true, local_elems) + section("cholesky"); });
}

// A X = B in place over X (A: (batch, n, n), X: (batch, n, k), same batch), A triangular.
void trsm_kernel(const Tensor& A, const Tensor& X, bool upper, bool unit) {
  const int64_t n = X.size(-2), nrhs = X.size(-1), batch = batch_of(X);
  if (batch * nrhs == 0 || n == 0) return;
  Kernel k("linalg_trsm");
  k.in(A, CT::F32);
  k.out(X, CT::F32);
  k.param_index("n", n);
  k.param("upper", upper ? 1u : 0u);
  k.param("unit", unit ? 1u : 0u);
  launch_columns(k, A, X, batch, nrhs, [] { return section("trsm"); });
}

// The blocked Cholesky's diagonal step over a batch of n x n blocks D (n <= 64): D := the lower
// factor of S's lower triangle (S: D itself or a block of the input; D's lower triangle written),
// Z := that factor's inverse (n x n, upper triangle zero), info
// (one per block, zeroed before the first step) := i_add + the block's first failing column + 1
// where no earlier block failed. One workgroup of 256 per block, in registers (section chol_block).
void cholesky_block_kernel(const Tensor& D, const Tensor& Z, const Tensor& info, int64_t i_add, const Tensor& S) {
  const int64_t n = D.size(-1), batch = batch_of(D);
  TORCH_INTERNAL_ASSERT(n <= 64 && Z.size(-1) == n);
  if (batch == 0) return;
  Kernel k("linalg_chol_block");
  k.out(D, CT::F32);
  k.out(info, CT::I32);
  k.out(Z, CT::F32);
  k.in(S, CT::F32);
  k.param_index("batch", batch);
  k.param_index("n", n);
  matrix_params(k, "", D);
  batched_params(k, "i", info, 0);
  k.param_index("i_add", i_add);
  matrix_params(k, "z", Z);
  matrix_params(k, "s", S);
  k.launch(uint64_t(batch), [] { return section("chol_block"); });
}

// The blocked Cholesky's panel step over a batch of rows x n panels: X := S Z^T (S: X itself or the
// input's panel; Z = the diagonal block's inverse factor from cholesky_block_kernel), written to X
// and to the workspace W (both rows x n, any strides). One workgroup of 256 per 32 rows, Z in its
// workgroup memory (section chol_panel).
void cholesky_panel_kernel(const Tensor& X, const Tensor& Z, const Tensor& W, const Tensor& S) {
  const int64_t n = X.size(-1), rows = X.size(-2), batch = batch_of(X);
  TORCH_INTERNAL_ASSERT(n <= 64 && Z.size(-1) == n);
  if (batch * rows == 0) return;
  const int64_t tiles = (rows + 31) / 32;
  Kernel k("linalg_chol_panel");
  k.out(X, CT::F32);
  k.in(Z, CT::F32);
  k.out(W, CT::F32);
  k.in(S, CT::F32);
  k.param_index("n", n);
  k.param_index("rows", rows);
  k.param_index("tiles", tiles);
  k.param_index("groups", batch * tiles);
  matrix_params(k, "x", X);
  matrix_params(k, "z", Z);
  matrix_params(k, "w", W);
  matrix_params(k, "s", S);
  k.launch(uint64_t(batch * tiles), [] { return section("chol_panel"); });
}

void lu_solve_kernel(const Tensor& LU, const Tensor& piv, const Tensor& X, bool adjoint) {
  const int64_t n = X.size(-2), nrhs = X.size(-1), batch = batch_of(X);
  if (batch * nrhs == 0 || n == 0) return;
  Kernel k("linalg_lu_solve");
  k.in(LU, CT::F32);
  k.in(piv, CT::I32);
  k.out(X, CT::F32);
  k.param_index("n", n);
  k.param("adjoint", adjoint ? 1u : 0u);
  vector_params(k, "p", piv);
  launch_columns(k, LU, X, batch, nrhs, [] { return section("lu_solve"); });
}

// Right-looking blocked Cholesky, lower factor in place over V (batchable; any strides, so the upper
// factor runs on the transposed view), info (batchable, one per matrix) as LAPACK potrf reports it:
// the global index of the first failing column. For each block column of width 64, whole batch at
// once: the diagonal block is factored and inverted in one workgroup (cholesky_block_kernel), the
// panel below it solved as a product with that inverse, P := P L_D^-T (cholesky_panel_kernel, in
// place and into a workspace W: the GEMM engine refuses operands sharing its output's storage),
// and the trailing square updated, T -= W W^T, by the GEMM engine on the views (column strips that
// cover the lower triangle and some of the upper; the caller clears the upper). The update is
// deferred by one block column: an even step updates only the next block column, the odd step after
// it the rest with both panels (K = 128), which halves the passes over the square, the GEMMs' memory
// traffic. Solving through the inverted diagonal block is what GPU LAPACKs do for their triangular
// solves: its error grows with the block's condition number, which for an SPD matrix's diagonal
// block is at most the whole matrix's. After a failure the later blocks compute garbage, as LAPACK
// leaves the rest unspecified; only the first failure is reported. S (V's shape and batch layout,
// another storage block; or undefined: V itself): the input, read where a step first writes an
// element of V's lower triangle, so that V needs no copy of it first.
void cholesky_blocked(const Tensor& V, const Tensor& info, const Tensor& S = Tensor()) {
  const int64_t n = V.size(-1), batch = batch_of(V);
  if (batch == 0) return;
  constexpr int64_t nb = 64;
  const Tensor V3 =
      V.as_strided({batch, n, n}, {linalg::batch_stride(V, 2), V.stride(-2), V.stride(-1)}, V.storage_offset());
  const Tensor S3 = S.defined() ? S.as_strided({batch, n, n}, {linalg::batch_stride(S, 2), S.stride(-2), S.stride(-1)},
                                               S.storage_offset())
                                : V3;
  const Tensor info1 = info.as_strided({batch}, {linalg::batch_stride(info, 0)}, info.storage_offset());
  const_cast<Tensor&>(info).zero_();
  // By columns (stride(-2) < stride(-1)): the trailing GEMMs write the transposes of their views
  // (row-major there; the update is symmetric), so that no output runs across rows.
  const bool by_cols = V3.stride(1) < V3.stride(2);
  // W: the solved panels by row (row R of the matrix at R - nb), two slots of nb columns used in turn;
  // laid out as the matrix is (by columns: W^T stored by rows).
  const int64_t wr = std::max<int64_t>(n - nb, 0);
  Tensor W = at::empty(by_cols ? std::vector<int64_t>{batch, 2 * nb, wr} : std::vector<int64_t>{batch, wr, 2 * nb},
                       V.options());
  const Tensor Wrows = by_cols ? W.mT() : W;  // [batch, n - nb, 2 nb]
  // Z stored by columns: the panel kernel loads it in whole lines.
  Tensor Z = at::empty({batch, nb, nb}, V.options()).mT();
  // T -= A B^T for T (rows x cols, a view of V3) read from Ts, A (rows x K) and B (cols x K) views of W.
  auto update = [&](const Tensor& T, const Tensor& Ts, const Tensor& A, const Tensor& B) {
    if (by_cols)
      engines::gemm(T.mT(), B, A.mT(), Ts.mT(), 1, -1, "linalg.cholesky");
    else
      engines::gemm(T, A, B.mT(), Ts, 1, -1, "linalg.cholesky");
  };
  for (int64_t q = 0, k0 = 0; k0 < n; ++q, k0 += nb) {
    const int64_t kb = std::min(nb, n - k0), r = n - k0 - kb;
    Tensor D = V3.narrow(1, k0, kb).narrow(2, k0, kb);
    Tensor Zk = Z.narrow(1, 0, kb).narrow(2, 0, kb);
    // What the steps read: the input until the step that first writes there (cholesky_blocked's S).
    const Tensor& src = k0 == 0 ? S3 : V3;
    cholesky_block_kernel(D, Zk, info1, k0, src.narrow(1, k0, kb).narrow(2, k0, kb));
    if (r == 0) break;
    Tensor Pn = V3.narrow(1, k0 + kb, r).narrow(2, k0, kb);
    Tensor Ps = src.narrow(1, k0 + kb, r).narrow(2, k0, kb);
    Tensor Wr = Wrows.narrow(1, k0 + kb - nb, r).narrow(2, (q % 2) * nb, kb);  // this panel, solved
    cholesky_panel_kernel(Pn, Zk, Wr, Ps);
    const int64_t kb2 = std::min(nb, r);
    if (q % 2 == 0 && r > kb2) {
      // Even steps update only the next block column now (rows from its diagonal down); the rest of
      // the trailing square waits for the next step's panel, so that one update with K = 2 nb (half
      // the passes over the square) applies both.
      const int64_t c0 = k0 + kb;
      update(V3.narrow(1, c0, r).narrow(2, c0, kb2), src.narrow(1, c0, r).narrow(2, c0, kb2), Wr, Wr.narrow(1, 0, kb2));
      continue;
    }
    // T -= W W^T with this panel (and the previous one, odd steps) over the lower triangle's column
    // strips (rows from the strip's first column down): s strips compute (s + 1) / 2s of the square,
    // one GEMM each; s grows with the trailing size so that a strip's saving outweighs its dispatch.
    // Steps 0 (when the next block column is the last) and 1 write this square first: it reads the input.
    const Tensor& tsrc = q <= 1 ? S3 : V3;
    const Tensor Wk = q % 2 == 1 ? Wrows.narrow(1, k0 + kb - nb, r).narrow(2, 0, 2 * nb) : Wr;
    const int64_t strips = std::clamp<int64_t>(r / 1024, 1, 4);
    const int64_t w = (r + strips - 1) / strips;
    for (int64_t c0 = 0; c0 < r; c0 += w) {
      const int64_t cw = std::min(w, r - c0), row0 = k0 + kb + c0;
      update(V3.narrow(1, row0, r - c0).narrow(2, row0, cw), tsrc.narrow(1, row0, r - c0).narrow(2, row0, cw),
             Wk.narrow(1, c0, r - c0), Wk.narrow(1, c0, cw));
    }
  }
}

// Runs `kernel` on t when its batch dims are one sequence, else on a copy written back after.
template <class F>
void in_place(const Tensor& t, int64_t mat_dims, F&& kernel) {
  Tensor w = batchable(t, mat_dims);
  kernel(w);
  write_back(t, w);
}

// ---- linalg_lu_factor_ex

void lu_factor_impl(const Tensor& A, bool pivot, bool check_errors, const Tensor& LU, const Tensor& pivots,
                    const Tensor& info) {
  TORCH_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on webgpu");
  check_f32(A, "linalg.lu_factor");
  if (factor_empty(A, info)) return;
  if (!LU.is_same(A)) const_cast<Tensor&>(LU).copy_(A);
  factor_in_place(LU, pivots, info, check_errors, "torch.linalg.lu_factor_ex", A.dim() == 2, lu_kernel);
}

using LuF = Multi<at::meta::structured_linalg_lu_factor_ex, 3>;
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  check_dev(A, "linalg_lu_factor_ex");
  LuF op;
  op.meta(A, pivot, check_errors);
  lu_factor_impl(A, pivot, check_errors, op.outs[0], op.outs[1], op.outs[2]);
  return {op.outs[0], op.outs[1], op.outs[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> lu_factor_ex_out(const Tensor& A, bool pivot, bool check_errors, Tensor& LU,
                                                       Tensor& pivots, Tensor& info) {
  check_devs({A, LU, pivots, info}, "linalg_lu_factor_ex");
  LuF op({LU, pivots, info});
  op.meta(A, pivot, check_errors);
  lu_factor_impl(A, pivot, check_errors, LU, pivots, info);
  return {LU, pivots, info};
}

// ---- linalg_lu_solve

void lu_solve_impl(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint,
                   const Tensor& result) {
  check_f32(LU, "linalg.lu_solve");
  check_f32(B, "linalg.lu_solve");
  if (result.numel() == 0) return;
  // X A = B  <=>  A^T X^T = B^T: solve on the transposed views
  Tensor res = left ? result : result.mT();
  if (!left) adjoint = !adjoint;
  if (!result.is_same(B)) res.copy_(left ? B : B.mT());
  const auto batch = res.sizes().slice(0, res.dim() - 2);
  std::vector<int64_t> lu_shape(batch.begin(), batch.end()), piv_shape(batch.begin(), batch.end());
  lu_shape.push_back(LU.size(-2));
  lu_shape.push_back(LU.size(-1));
  piv_shape.push_back(pivots.size(-1));
  Tensor LU_ = batchable(LU.expand(lu_shape), 2);
  Tensor piv_ = batchable(pivots.expand(piv_shape), 1);
  in_place(res, 2, [&](const Tensor& x) { lu_solve_kernel(LU_, piv_, x, adjoint); });
}

using LuS = Multi<at::meta::structured_linalg_lu_solve, 1>;
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  for (auto* t : {&LU, &pivots, &B}) check_dev(*t, "linalg_lu_solve");
  LuS op;
  op.meta(LU, pivots, B, left, adjoint);
  lu_solve_impl(LU, pivots, B, left, adjoint, op.outs[0]);
  return op.outs[0];
}
Tensor& lu_solve_out(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint, Tensor& out) {
  check_devs({LU, pivots, B, out}, "linalg_lu_solve");
  LuS op({out});
  op.meta(LU, pivots, B, left, adjoint);
  lu_solve_impl(LU, pivots, B, left, adjoint, out);
  return out;
}

// ---- _linalg_solve_ex (as CPU: the LU of A itself, which linalg_solve_backward expects)

// The fused path of solve_ex_impl: A X = B with small A, not broadcast, in one dispatch (solve_kernel).
// False (nothing done) where it does not apply.
bool solve_fused(const Tensor& A, const Tensor& B_, bool left, const Tensor& result_, const Tensor& LU,
                 const Tensor& pivots, const Tensor& info) {
  const int64_t n = A.size(-1);
  if (!left || n * n > kLocalElems || n * result_.size(-1) > kSolveLocalRhs || result_.numel() == 0) return false;
  if (A.scalar_type() != at::kFloat || B_.scalar_type() != at::kFloat) return false;
  if (A.sizes().slice(0, A.dim() - 2) != result_.sizes().slice(0, result_.dim() - 2)) return false;  // A broadcast
  Tensor a = batchable(A, 2), b = batchable(B_.expand(result_.sizes()), 2);
  Tensor lu = batchable(LU, 2), piv = batchable(pivots, 1), inf = batchable(info, 0), x = batchable(result_, 2);
  solve_kernel(a, b, lu, piv, inf, x);
  write_back(LU, lu);
  write_back(pivots, piv);
  write_back(info, inf);
  write_back(result_, x);
  return true;
}

void solve_ex_impl(const Tensor& A, const Tensor& B, bool left, bool check_errors, const Tensor& result,
                   const Tensor& LU, const Tensor& pivots, const Tensor& info) {
  const bool use_A_T = false;
  {
    const bool vector_case = at::native::linalg_solve_is_vector_rhs(A, B);
    if (solve_fused(A, vector_case ? B.unsqueeze(-1) : B, left, vector_case ? result.unsqueeze(-1) : result, LU, pivots,
                    info)) {
      if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
      return;
    }
  }
  at::linalg_lu_factor_ex_out(const_cast<Tensor&>(LU), const_cast<Tensor&>(pivots), const_cast<Tensor&>(info),
                              use_A_T ? A.mT() : A);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
  const bool vector_case = at::native::linalg_solve_is_vector_rhs(LU, B);
  Tensor result_ = vector_case ? result.unsqueeze(-1) : result;
  Tensor B_ = vector_case ? B.unsqueeze(-1) : B;
  at::linalg_lu_solve_out(result_, LU, pivots, B_, left, use_A_T);
}

using SolveEx = Multi<at::meta::structured__linalg_solve_ex, 4>;
std::tuple<Tensor, Tensor, Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  check_dev(A, "_linalg_solve_ex");
  check_dev(B, "_linalg_solve_ex");
  SolveEx op;
  op.meta(A, B, left, check_errors);
  solve_ex_impl(A, B, left, check_errors, op.outs[0], op.outs[1], op.outs[2], op.outs[3]);
  return {op.outs[0], op.outs[1], op.outs[2], op.outs[3]};
}
std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> solve_ex_out(const Tensor& A, const Tensor& B, bool left,
                                                            bool check_errors, Tensor& result, Tensor& LU,
                                                            Tensor& pivots, Tensor& info) {
  check_devs({A, B, result, LU, pivots, info}, "_linalg_solve_ex");
  SolveEx op({result, LU, pivots, info});
  op.meta(A, B, left, check_errors);
  solve_ex_impl(A, B, left, check_errors, result, LU, pivots, info);
  return {result, LU, pivots, info};
}

// ---- linalg_inv_ex: solve against the identity

void inv_ex_impl(const Tensor& A, bool check_errors, const Tensor& result, const Tensor& info) {
  Tensor& r = const_cast<Tensor&>(result);
  r.zero_();
  r.diagonal(0, -2, -1).fill_(1.);
  at::linalg_solve_ex_out(r, const_cast<Tensor&>(info), A, r, /*left=*/true);
  if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
}

using InvEx = Multi<at::meta::structured_linalg_inv_ex, 2>;
std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors) {
  check_dev(A, "linalg_inv_ex");
  InvEx op;
  op.meta(A, check_errors);
  inv_ex_impl(A, check_errors, op.outs[0], op.outs[1]);
  return {op.outs[0], op.outs[1]};
}
std::tuple<Tensor&, Tensor&> inv_ex_out(const Tensor& A, bool check_errors, Tensor& inverse, Tensor& info) {
  check_devs({A, inverse, info}, "linalg_inv_ex");
  InvEx op({inverse, info});
  op.meta(A, check_errors);
  inv_ex_impl(A, check_errors, inverse, info);
  return {inverse, info};
}

// ---- _linalg_det / _linalg_slogdet (as CPU: LU of A^T when A is contiguous and real; of A itself for
// complex A, whose det(A^H) is the conjugate)

// The permutation's determinant: (-1)^(number of pivots i with pivots[i] != i + 1).
Tensor lu_det_P(const Tensor& pivots) {
  return (at::arange(1, pivots.size(-1) + 1, pivots.options()) != pivots)
      .sum(-1, /*keepdim=*/false, at::kLong)
      .fmod_(2)
      .mul_(-2)
      .add_(1);
}

void det_impl(const Tensor& A, const Tensor& result, const Tensor& LU, const Tensor& pivots) {
  Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(const_cast<Tensor&>(LU), const_cast<Tensor&>(pivots), info,
                              A.is_contiguous() && !A.is_complex() ? A.mH() : A);
  at::mul_out(const_cast<Tensor&>(result), lu_det_P(pivots), at::prod(LU.diagonal(0, -2, -1), -1));
}

using Det = Multi<at::meta::structured__linalg_det, 3>;
std::tuple<Tensor, Tensor, Tensor> det(const Tensor& A) {
  check_dev(A, "_linalg_det");
  Det op;
  op.meta(A);
  det_impl(A, op.outs[0], op.outs[1], op.outs[2]);
  return {op.outs[0], op.outs[1], op.outs[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> det_out(const Tensor& A, Tensor& result, Tensor& LU, Tensor& pivots) {
  check_devs({A, result, LU, pivots}, "_linalg_det");
  Det op({result, LU, pivots});
  op.meta(A);
  det_impl(A, result, LU, pivots);
  return {result, LU, pivots};
}

void slogdet_impl(const Tensor& A, const Tensor& sign, const Tensor& logabsdet, const Tensor& LU,
                  const Tensor& pivots) {
  Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(const_cast<Tensor&>(LU), const_cast<Tensor&>(pivots), info,
                              A.is_contiguous() && !A.is_complex() ? A.mH() : A);
  Tensor diag_U = LU.diagonal(0, -2, -1);
  at::mul_out(const_cast<Tensor&>(sign), diag_U.sgn().prod(-1), lu_det_P(pivots));
  at::sum_out(const_cast<Tensor&>(logabsdet), diag_U.abs().log_(), -1);
}

using Slogdet = Multi<at::meta::structured__linalg_slogdet, 4>;
std::tuple<Tensor, Tensor, Tensor, Tensor> slogdet(const Tensor& A) {
  check_dev(A, "_linalg_slogdet");
  Slogdet op;
  op.meta(A);
  slogdet_impl(A, op.outs[0], op.outs[1], op.outs[2], op.outs[3]);
  return {op.outs[0], op.outs[1], op.outs[2], op.outs[3]};
}
std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> slogdet_out(const Tensor& A, Tensor& sign, Tensor& logabsdet, Tensor& LU,
                                                           Tensor& pivots) {
  check_devs({A, sign, logabsdet, LU, pivots}, "_linalg_slogdet");
  Slogdet op({sign, logabsdet, LU, pivots});
  op.meta(A);
  slogdet_impl(A, sign, logabsdet, LU, pivots);
  return {sign, logabsdet, LU, pivots};
}

// ---- linalg_cholesky_ex (upper: the lower factor of A^T, computed on the transposed view)

void cholesky_impl(const Tensor& A, bool upper, bool check_errors, const Tensor& L, const Tensor& info) {
  check_f32(A, "linalg.cholesky");
  Tensor& L_ = const_cast<Tensor&>(L);
  if (factor_empty(L, info)) return;
  // Matrices that do not fit the default workgroup copy go by blocks: one workgroup over a matrix in
  // storage takes longer already at n = 64 (lavapipe: 1.3 ms for n = 64, 35 ms for 256; blocked 300: 12 ms).
  // The blocked factorization reads A itself in its first step (no copy into L first) where A is in
  // another storage block.
  const bool blocked = L.size(-1) * L.size(-1) > kLocalElems;
  const bool from_a = blocked && kernel::block_id(A) != kernel::block_id(L);
  if (!from_a && !L.is_same(A)) L_.copy_(A);
  Tensor lw = batchable(L, 2), iw = batchable(info, 0);
  auto lower = [upper](const Tensor& t) { return upper ? t.mT() : t; };  // the lower factor's view
  if (blocked)
    cholesky_blocked(lower(lw), iw, from_a ? lower(batchable(A, 2)) : Tensor());
  else
    cholesky_kernel(lower(lw), iw);
  write_back(L, lw);
  write_back(info, iw);
  // The other triangle cleared through the view that runs along rows (the kernel's invocations go
  // along the last dim: linalg_cholesky_ex's L is by columns, so that is L^T).
  const bool by_cols = L.stride(-2) < L.stride(-1);
  Tensor rows = by_cols ? L_.mT() : L_;
  if (upper != by_cols)
    rows.triu_();
  else
    rows.tril_();
  if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
}

// The deprecated torch.cholesky (its own ATen op, errors named "cholesky").
Tensor cholesky_legacy(const Tensor& self, bool upper) {
  check_dev(self, "cholesky");
  if (self.numel() == 0) return at::empty_like(self, at::MemoryFormat::Contiguous);
  at::native::squareCheckInputs(self, "cholesky");
  Tensor L = at::empty_like(self, at::MemoryFormat::Contiguous);
  std::vector<int64_t> is(self.sizes().begin(), self.sizes().end() - 2);
  Tensor info = at::empty(is, self.options().dtype(at::kInt));
  cholesky_impl(self, upper, false, L, info);
  at::_linalg_check_errors(info, "cholesky", self.dim() == 2);
  return L;
}
Tensor& cholesky_legacy_out(const Tensor& self, bool upper, Tensor& out) {
  check_dev(out, "cholesky");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "cholesky: Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  Tensor r = cholesky_legacy(self, upper);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

using CholEx = Multi<at::meta::structured_linalg_cholesky_ex, 2>;
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  check_dev(A, "linalg_cholesky_ex");
  CholEx op;
  op.meta(A, upper, check_errors);
  cholesky_impl(A, upper, check_errors, op.outs[0], op.outs[1]);
  return {op.outs[0], op.outs[1]};
}
std::tuple<Tensor&, Tensor&> cholesky_ex_out(const Tensor& A, bool upper, bool check_errors, Tensor& L, Tensor& info) {
  check_devs({A, L, info}, "linalg_cholesky_ex");
  CholEx op({L, info});
  op.meta(A, upper, check_errors);
  cholesky_impl(A, upper, check_errors, L, info);
  return {L, info};
}

// ---- linalg_solve_triangular, triangular_solve

// op(A) X = B with A, B broadcast to one batch shape; returns X (a new tensor of B_'s shape).
// left false: X A = B, solved as A^T X^T = B^T.
Tensor trsm(const Tensor& A_, const Tensor& B_, bool upper, bool left, bool unit, bool transpose) {
  const bool t = transpose != !left;  // solve with A^T
  Tensor Aw = batchable(t ? A_.mT() : A_, 2);
  Tensor X = (left ? B_ : B_.mT()).clone(at::MemoryFormat::Contiguous);
  trsm_kernel(Aw, X, t ? !upper : upper, unit);
  return left ? X : X.mT();
}

Tensor& solve_triangular_out(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular, Tensor& out) {
  for (auto* t : {&A, &B, (const Tensor*)&out}) check_dev(*t, "linalg_solve_triangular");
  at::native::checkInputsSolver(A, B, left, "linalg.solve_triangular");
  TORCH_CHECK(A.scalar_type() == B.scalar_type(),
              "linalg.solve_triangular: Expected A and B to have the same dtype, "
              "but found A of type ",
              A.scalar_type(), " and B of type ", B.scalar_type(), " instead");
  TORCH_CHECK(out.scalar_type() == A.scalar_type(), "linalg.solve_triangular: Expected out tensor to have dtype ",
              A.scalar_type(), ", but got ", out.scalar_type(), " instead");
  check_f32(A, "linalg.solve_triangular");
  auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(B, A, nullptr);
  Tensor X = trsm(A_, B_, upper, left, unitriangular, false);
  at::native::resize_output(out, B_.sizes());
  if (out.numel() == 0) return out;
  return out.copy_(X);
}
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  Tensor out = at::empty({0}, A.options());
  return solve_triangular_out(A, B, upper, left, unitriangular, out);
}

void triangular_solve_impl(const Tensor& self, const Tensor& A, bool upper, bool transpose, bool unitriangular,
                           const Tensor& result, const Tensor& clone_A) {
  check_f32(A, "triangular_solve");
  auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(self, A, "triangular_solve");
  if (clone_A.numel()) const_cast<Tensor&>(clone_A).copy_(A_);
  if (result.numel() == 0) return;
  const_cast<Tensor&>(result).copy_(trsm(A_, B_, upper, true, unitriangular, transpose));
}

using TriS = Multi<at::meta::structured_triangular_solve, 2>;
std::tuple<Tensor, Tensor> triangular_solve(const Tensor& self, const Tensor& A, bool upper, bool transpose,
                                            bool unitriangular) {
  check_dev(self, "triangular_solve");
  check_dev(A, "triangular_solve");
  TriS op;
  op.meta(self, A, upper, transpose, unitriangular);
  triangular_solve_impl(self, A, upper, transpose, unitriangular, op.outs[0], op.outs[1]);
  return {op.outs[0], op.outs[1]};
}
std::tuple<Tensor&, Tensor&> triangular_solve_out(const Tensor& self, const Tensor& A, bool upper, bool transpose,
                                                  bool unitriangular, Tensor& X, Tensor& M) {
  check_devs({self, A, X, M}, "triangular_solve");
  TriS op({X, M});
  op.meta(self, A, upper, transpose, unitriangular);
  triangular_solve_impl(self, A, upper, transpose, unitriangular, X, M);
  return {X, M};
}

// ---- lu_unpack, linalg_lu (as CPU: the factor is written into L or U, whichever has its shape)

// The permutation of 0..m-1 that LAPACK's interchanges in pivots (..., k) make, as (batch..., m) int64.
Tensor pivots_to_perm(const Tensor& pivots, int64_t m, int64_t k) {
  auto bs = pivots.sizes().slice(0, pivots.dim() - 1);
  std::vector<int64_t> shape(bs.begin(), bs.end());
  shape.push_back(m);
  Tensor perm = at::empty(shape, pivots.options().dtype(at::kInt));
  const int64_t batch = batch_of(pivots, 1);
  if (batch * m == 0) return perm.to(at::kLong);
  Tensor piv = batchable(pivots, 1);
  Kernel kr("linalg_perm");
  kr.in(piv, CT::I32);
  kr.out(perm, CT::I32);
  kr.param_index("m", m);
  kr.param_index("k", k);
  kr.param_index("batch", batch);
  vector_params(kr, "p", piv);
  kr.launch(grid(uint64_t(batch), 64), [] { return section("perm"); });
  return perm.to(at::kLong);
}

void lu_unpack_impl(const Tensor& LU, const Tensor& pivots, bool unpack_lu, bool unpack_pivots, const Tensor& P,
                    const Tensor& L, const Tensor& U) {
  const int64_t m = LU.size(-2), n = LU.size(-1);
  if (unpack_lu) {
    check_f32(LU, "lu_unpack");
    if (m > n || LU.is_same(L)) {
      at::triu_out(const_cast<Tensor&>(U), m == n ? LU : LU.narrow(-2, 0, n), 0);
      at::tril_out(const_cast<Tensor&>(L), LU, -1);
      L.diagonal(0, -2, -1).fill_(1.);
    } else {
      at::tril_out(const_cast<Tensor&>(L), m == n ? LU : LU.narrow(-1, 0, m), -1);
      L.diagonal(0, -2, -1).fill_(1.);
      at::triu_out(const_cast<Tensor&>(U), LU, 0);
    }
  }
  if (unpack_pivots) {
    TORCH_CHECK(pivots.scalar_type() == at::kInt,
                "lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                "torch.int32 dtype. Note: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor");
    Tensor perm = pivots_to_perm(pivots, m, std::min(m, n));
    std::vector<int64_t> ps(P.sizes().begin(), P.sizes().end() - 1);
    Tensor& P_ = const_cast<Tensor&>(P);
    P_.zero_();
    if (P.numel()) P_.scatter_(-2, perm.expand(ps).unsqueeze(-2), 1.);
  }
}

using Unpack = Multi<at::meta::structured_lu_unpack, 3>;
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_lu,
                                             bool unpack_pivots) {
  check_dev(LU, "lu_unpack");
  check_dev(pivots, "lu_unpack");
  Unpack op;
  op.meta(LU, pivots, unpack_lu, unpack_pivots);
  lu_unpack_impl(LU, pivots, unpack_lu, unpack_pivots, op.outs[0], op.outs[1], op.outs[2]);
  return {op.outs[0], op.outs[1], op.outs[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> lu_unpack_out(const Tensor& LU, const Tensor& pivots, bool unpack_lu,
                                                    bool unpack_pivots, Tensor& P, Tensor& L, Tensor& U) {
  check_devs({LU, pivots, P, L, U}, "lu_unpack");
  Unpack op({P, L, U});
  op.meta(LU, pivots, unpack_lu, unpack_pivots);
  lu_unpack_impl(LU, pivots, unpack_lu, unpack_pivots, P, L, U);
  return {P, L, U};
}

void linalg_lu_impl(const Tensor& A, bool pivot, const Tensor& P, const Tensor& L, const Tensor& U) {
  const int64_t m = A.size(-2), n = A.size(-1);
  const bool use_L = m > n;
  Tensor pivots = at::empty({0}, A.options().dtype(at::kInt));
  Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(const_cast<Tensor&>(use_L ? L : U), pivots, info, A, pivot, /*check_errors=*/false);
  at::lu_unpack_out(const_cast<Tensor&>(P), const_cast<Tensor&>(L), const_cast<Tensor&>(U), use_L ? L : U, pivots,
                    /*unpack_data=*/true, /*unpack_pivots=*/pivot);
}

using LinLu = Multi<at::meta::structured_linalg_lu, 3>;
std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot) {
  check_dev(A, "linalg_lu");
  LinLu op;
  op.meta(A, pivot);
  linalg_lu_impl(A, pivot, op.outs[0], op.outs[1], op.outs[2]);
  return {op.outs[0], op.outs[1], op.outs[2]};
}
std::tuple<Tensor&, Tensor&, Tensor&> linalg_lu_out(const Tensor& A, bool pivot, Tensor& P, Tensor& L, Tensor& U) {
  check_devs({A, P, L, U}, "linalg_lu");
  LinLu op({P, L, U});
  op.meta(A, pivot);
  linalg_lu_impl(A, pivot, P, L, U);
  return {P, L, U};
}

// ---- _cholesky_solve_helper, cholesky_inverse: two triangular solves with the factor

// A X = B for A = L L^T (upper false) or U^T U (upper true); B and F broadcast to one batch shape.
Tensor cholesky_solve_impl(const Tensor& B, const Tensor& F, bool upper) {
  check_f32(F, "cholesky_solve");
  check_f32(B, "cholesky_solve");
  Tensor y = trsm(F, B, upper, true, false, /*transpose=*/upper);
  return trsm(F, y, upper, true, false, /*transpose=*/!upper);
}

Tensor cholesky_solve_helper(const Tensor& self, const Tensor& A, bool upper) {
  check_dev(self, "_cholesky_solve_helper");
  check_dev(A, "_cholesky_solve_helper");
  return cholesky_solve_impl(self, A, upper).contiguous();
}

Tensor& cholesky_inverse_out(const Tensor& input, bool upper, Tensor& result) {
  check_dev(input, "cholesky_inverse");
  check_dev(result, "cholesky_inverse");
  at::native::squareCheckInputs(input, "cholesky_inverse");
  TORCH_CHECK(result.scalar_type() == input.scalar_type(),
              "cholesky_inverse: Expected result to be safely castable "
              "from ",
              input.scalar_type(), " dtype, but got result with dtype ", result.scalar_type());
  check_f32(input, "cholesky_inverse");
  at::native::resize_output(result, input.sizes());
  if (input.numel() == 0) return result;
  Tensor eye = at::eye(input.size(-1), input.options()).expand(input.sizes());
  return result.copy_(cholesky_solve_impl(eye, input, upper));
}
constexpr auto cholesky_inverse = via_out<&cholesky_inverse_out>;

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  WEBGPU_IMPL_OUT(m, "linalg_lu_factor_ex", "out", lu_factor_ex);
  WEBGPU_IMPL_OUT(m, "linalg_lu_solve", "out", lu_solve);
  WEBGPU_IMPL_OUT(m, "_linalg_solve_ex", "result", solve_ex);
  WEBGPU_IMPL_OUT(m, "linalg_inv_ex", "inverse", inv_ex);
  WEBGPU_IMPL_OUT(m, "_linalg_det", "result", det);
  WEBGPU_IMPL_OUT(m, "_linalg_slogdet", "sign", slogdet);
  WEBGPU_IMPL_OUT(m, "linalg_cholesky_ex", "L", cholesky_ex);
  WEBGPU_IMPL_OUT(m, "cholesky", "out", cholesky_legacy);
  WEBGPU_IMPL_OUT(m, "linalg_solve_triangular", "out", solve_triangular);
  WEBGPU_IMPL_OUT(m, "triangular_solve", "X", triangular_solve);
  WEBGPU_IMPL_OUT(m, "lu_unpack", "out", lu_unpack);
  WEBGPU_IMPL_OUT(m, "linalg_lu", "out", linalg_lu);
  m.impl("_cholesky_solve_helper", TORCH_FN(cholesky_solve_helper));
  WEBGPU_IMPL_OUT(m, "cholesky_inverse", "out", cholesky_inverse);
}

}  // namespace webgpu::ops
