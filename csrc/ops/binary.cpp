// Binary arithmetic over the elementwise engine. So far: add (float32); the op table of the
// elementwise issue grows this into every binary op and dtype.
#include <ATen/TensorIterator.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/elementwise.h"

namespace webgpu::ops {
namespace {

void add_kernel(at::TensorIteratorBase& iter, const c10::Scalar& alpha) {
  const auto dt = iter.common_dtype();
  check_supported_dtype(dt, "add");
  TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat && iter.dtype(0) == at::kFloat,
                              "webgpu: add is implemented for float32 so far, got ", dt);
  if (alpha.equal(1)) run_elementwise(iter, "add", "x1 + x2", CT::F32);
  else run_elementwise(iter, "add_alpha", "x1 + s0 * x2", CT::F32, {scalar_bits(alpha, CT::F32)});
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  at::TensorIterator iter;
  iter.build_binary_op(at::Tensor(), self, other);
  add_kernel(iter, alpha);
  return iter.output();
}

at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha, at::Tensor& out) {
  at::TensorIterator iter;
  iter.build_borrowing_binary_op(out, self, other);
  add_kernel(iter, alpha);
  return out;
}

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return add_out(self, other, alpha, self);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", add);
  m.impl("add.out", add_out);
  m.impl("add_.Tensor", add_);
}

}  // namespace webgpu::ops
