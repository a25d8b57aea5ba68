// Helpers shared by the dense linear algebra files (linalg_*.cpp): dtype/device checks, the kernel
// parameters of batched operands, the structured-op holder of several outputs.
#pragma once
#include <ATen/ATen.h>

#include <array>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/complex.h"
#include "ops/float64.h"
#include "ops/structured.h"

namespace webgpu::ops::linalg {

// complex64 and float64, which these kernels have no way for: NoDtypeKernel (a NotImplementedError;
// with the fallback on, the guarded registration runs the op on the CPU).
inline void no_complex_or_float64(at::ScalarType t, const char* op) {
  no_complex(t, op);
  if (t == at::kDouble) raise_no_float64_kernel(op);
}

inline void check_f32(const at::Tensor& t, const char* op) {
  no_complex_or_float64(t.scalar_type(), op);
  TORCH_CHECK(t.scalar_type() == at::kFloat, op, ": expected a float32 tensor on webgpu, but got ", t.scalar_type());
}

// Dtypes CPU supports but these kernels do not (half types: CPU has no kernel either): CPU's
// exception type, NotImplementedError.
inline void check_f32_kernel(const at::Tensor& t, const char* kernel) {
  no_complex_or_float64(t.scalar_type(), kernel);
  TORCH_CHECK_NOT_IMPLEMENTED(t.scalar_type() == at::kFloat, "\"", kernel, "\" not implemented for '",
                              c10::toString(t.scalar_type()), "' on webgpu (float32 only)");
}

inline void check_dev(const at::Tensor& t, const char* op) {
  if (t.defined() && t.device().type() != c10::DeviceType::PrivateUse1) raise_wrong_device(t, op);
}
// check_dev over an op's tensors (its inputs and given outputs).
inline void check_devs(std::initializer_list<std::reference_wrapper<const at::Tensor>> ts, const char* op) {
  for (const at::Tensor& t : ts) check_dev(t, op);
}

// Product of t's leading dims, those before its last mat_dims.
inline int64_t batch_of(const at::Tensor& t, int64_t mat_dims = 2) {
  int64_t b = 1;
  for (int64_t d = 0; d < t.dim() - mat_dims; ++d) b *= t.size(d);
  return b;
}

// The stride between consecutive batch entries (batch dims that batchable() accepts).
inline int64_t batch_stride(const at::Tensor& t, int64_t mat_dims) {
  for (int64_t d = t.dim() - mat_dims - 1; d >= 0; --d)
    if (t.size(d) != 1) return t.stride(d);
  return 0;
}

// The kernel parameters of a batched operand t (batch dims that batchable() accepts), named after `x`:
// <x>_off (storage offset), <x>_sb (batch stride), then for a matrix <x>_sr, <x>_sc (row and column
// strides), for a vector <x>_s; one value per batch entry (mat_dims 0, e.g. info) has only the first
// two. An empty `x` gives off, sb, sr, sc. The WGSL reads them as P.<x>_off etc.
inline void batched_params(Kernel& k, std::string_view x, const at::Tensor& t, int64_t mat_dims) {
  const std::string p = x.empty() ? std::string() : std::string(x) + "_";
  k.param_index(p + "off", t.storage_offset());
  k.param_index(p + "sb", batch_stride(t, mat_dims));
  if (mat_dims == 2) {
    k.param_index(p + "sr", t.stride(-2));
    k.param_index(p + "sc", t.stride(-1));
  } else if (mat_dims == 1) {
    k.param_index(p + "s", t.dim() ? t.stride(-1) : 0);
  }
}
inline void matrix_params(Kernel& k, std::string_view x, const at::Tensor& t) { batched_params(k, x, t, 2); }
inline void vector_params(Kernel& k, std::string_view x, const at::Tensor& t) { batched_params(k, x, t, 1); }

// The entry point of the kernels that run one workgroup per matrix (wgsl/lib/linalg_wg.wgsl), which
// calls the section's matrix(b, lid), and their workgroup reductions. Part of the body, so that the
// parameter it reads (batch) counts as read.
inline std::string per_matrix() { return kernel::library("linalg_wg"); }

// The entry point of the per-column kernels (wgsl/lib/linalg_columns.wgsl): one invocation per
// right-hand-side column, calling the section's column(b, ab, xb). Part of the body, so that the
// parameters it reads count as read.
inline std::string columns_entry() { return kernel::library("linalg_columns"); }

// A launch of one workgroup per matrix: sets the parameter per_matrix()'s entry point reads (batch)
// and compiles that entry point before the section body() returns.
template <class Body>
void launch_per_matrix(Kernel& k, int64_t batch, const Body& body) {
  k.param_index("batch", batch);
  k.launch(uint64_t(batch), [&] { return per_matrix() + body(); });
}

// A launch of the per-column kernels: one invocation per column of X (batch entries of nrhs columns),
// 64 to a workgroup. Sets the parameters columns_entry()'s entry point reads (nrhs, count, a_*, x_*:
// A the batch's matrices, X its right-hand sides) and compiles it before the section body() returns.
template <class Body>
void launch_columns(Kernel& k, const at::Tensor& A, const at::Tensor& X, int64_t batch, int64_t nrhs,
                    const Body& body) {
  k.param_index("nrhs", nrhs);
  k.param_index("count", batch * nrhs);
  matrix_params(k, "a", A);
  matrix_params(k, "x", X);
  k.launch(kernel::grid(uint64_t(batch * nrhs), 64), [&] { return columns_entry() + body(); });
}

// t itself when its batch dims collapse to one stride, else a copy that does (same layout of each matrix).
inline at::Tensor batchable(const at::Tensor& t, int64_t mat_dims) {
  const int64_t nb = t.dim() - mat_dims;
  bool ok = true;
  int64_t prev = -1;
  for (int64_t d = nb - 1; d >= 0; --d) {
    if (t.size(d) == 1) continue;
    if (prev >= 0 && t.stride(d) != t.stride(prev) * t.size(prev)) ok = false;
    if (t.stride(d) == 0) ok = false;
    prev = d;
  }
  return ok ? t : t.clone(at::MemoryFormat::Contiguous);
}

// Writes w, a working copy of t (batchable()'s), back into t where it is not t itself.
inline void write_back(const at::Tensor& t, const at::Tensor& w) {
  if (!w.is_same(t)) const_cast<at::Tensor&>(t).copy_(w);
}

// A factorization of no matrices (A empty): info, zeroed, is its whole result. Returns whether it was.
inline bool factor_empty(const at::Tensor& A, const at::Tensor& info) {
  if (A.numel() != 0) return false;
  const_cast<at::Tensor&>(info).zero_();
  return true;
}

// A pivoted factorization in place (LU, LDL): kernel(F, pivots, info) runs on batchable() copies of
// the factor F (matrices, holding the values to factor), pivots (vectors) and info (one per matrix),
// which are written back; then info is checked as LAPACK's errors of `api` where asked.
template <class K>
void factor_in_place(const at::Tensor& F, const at::Tensor& pivots, const at::Tensor& info, bool check_errors,
                     const char* api, bool is_matrix, K&& kernel) {
  const at::Tensor f = batchable(F, 2), p = batchable(pivots, 1), i = batchable(info, 0);
  kernel(f, p, i);
  write_back(F, f);
  write_back(pivots, p);
  write_back(info, i);
  if (check_errors) at::_linalg_check_errors(info, api, is_matrix);
}

// A structured op's functional and out= forms with N outputs: ATen's meta() creates the outputs
// (functional) or checks and resizes the given ones (out=: constructed with them).
template <class Base, size_t N>
struct Multi final : Base {
  std::array<at::Tensor, N> outs;
  bool given = false;
  Multi() = default;
  // The out= form: meta() checks and resizes these.
  explicit Multi(std::array<at::Tensor, N> given_outs) : outs(std::move(given_outs)), given(true) {}
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    set(i, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    set(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return outs[i]; }
  void set(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
    if (!given)
      outs[i] = structured::create_out(sizes, strides, options);
    else
      structured::resize_out(outs[i], sizes, strides, options);
  }
};

// Matrices of at most this many elements are factored in workgroup memory (8 KiB: within
// WebGPU's default 16 KiB per workgroup next to the kernels' own arrays), larger ones in place.
constexpr int64_t kLocalElems = 2048;

// The matrix access of the per-matrix kernels (lu, cholesky, ldl): A_ld / A_st over the tensor (operand
// 0) through its strides, or over an m x n row-major copy in workgroup memory, loaded by A_begin
// and written back by A_end; sync() orders the workgroup's accesses between steps. With per_matrix()'s
// entry point: matrix b starts at base, and the section's factor(b, lid) runs on it. `elems`: the
// workgroup copy's size (at least m * n; larger than kLocalElems only where the device allows it).
inline std::string matrix_access(bool local, int64_t elems = kLocalElems) {
  std::string s = per_matrix() +
                  "var<private> base: u32;\n"
                  "fn gidx(i: u32, j: u32) -> u32 { return base + i * P.sr + j * P.sc; }\n"
                  "fn matrix(b: u32, lid: u32) {\n"
                  "  base = P.off + b * P.sb;\n"
                  "  factor(b, lid);\n"
                  "}\n";
  if (!local) {
    return s +
           "fn A_ld(i: u32, j: u32) -> f32 { return ld0(gidx(i, j)); }\n"
           "fn A_st(i: u32, j: u32, v: f32) { st0(gidx(i, j), v); }\n"
           "fn A_begin(lid: u32) {}\n"
           "fn A_end(lid: u32) {}\n"
           "fn sync() { storageBarrier(); workgroupBarrier(); }\n";
  }
  return s + "var<workgroup> sm: array<f32, " + std::to_string(elems) +
         ">;\n"
         "fn A_ld(i: u32, j: u32) -> f32 { return sm[i * P.n + j]; }\n"
         "fn A_st(i: u32, j: u32, v: f32) { sm[i * P.n + j] = v; }\n"
         "fn A_begin(lid: u32) {\n"
         "  for (var t = lid; t < P.m * P.n; t = t + WG) { sm[t] = ld0(gidx(t / P.n, t % P.n)); }\n"
         "  workgroupBarrier();\n"
         "}\n"
         "fn A_end(lid: u32) {\n"
         "  workgroupBarrier();\n"
         "  for (var t = lid; t < P.m * P.n; t = t + WG) { st0(gidx(t / P.n, t % P.n), sm[t]); }\n"
         "}\n"
         "fn sync() { workgroupBarrier(); }\n";
}

}  // namespace webgpu::ops::linalg
