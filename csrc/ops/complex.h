// complex64 on the device (docs/design.md, "Dtype storage"): pairs of float32 words (real, imag),
// CPU's layout. What the shared copy, pointwise, reduction and GEMM code hand over to ops/complex.cpp.
#pragma once
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>

#include <initializer_list>

namespace webgpu::ops {

struct Row;

// Raises NotImplementedError naming `op`: a kernel that computes in a real type met complex64.
[[noreturn]] void refuse_complex(const std::string& op);
// refuse_complex when t is complex: for ops whose kernels compute in (or convert to) a real type.
inline void no_complex(at::ScalarType t, const char* op) {
  if (at::isComplexType(t)) refuse_complex(op);
}

// Device copies that complex64 or lazy bits need: a source or destination with the conjugate or
// negative bit, and complex64 -> bool. Returns false when a plain copy does. `copy` is the caller's
// device copy, for the steps.
bool complex_copy(const at::Tensor& dst, const at::Tensor& src, void (*copy)(const at::Tensor&, const at::Tensor&));
// The physical values to upload into dst from a CPU tensor (conjugate / negative bits resolved, and
// applied again where dst carries them).
at::Tensor host_for_upload(const at::Tensor& dst, const at::Tensor& src_cpu);

// A pointwise row over an iterator whose dtype is complex64: the complex rows of ops/complex.cpp,
// else NotImplementedError.
void run_complex_row(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars);
// A reduction over a complex64 input (sum, mean): the float reduction over the (real, imag) pairs.
void complex_reduce(at::TensorIteratorBase& iter, const char* name);
// o3 = alpha * a3 @ b3 + beta * c3 for complex64 3-d operands, through real GEMMs.
void complex_gemm(const at::Tensor& o3, const at::Tensor& a3, const at::Tensor& b3, const at::Tensor& c3,
                  const c10::Scalar& beta, const c10::Scalar& alpha, const char* name);

}  // namespace webgpu::ops
