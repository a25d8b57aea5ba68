// Views and storage plumbing: as_strided, view, _reshape_alias, unfold, resize_, set_. Views share
// the block; only resize_ may move a tensor to a new block (copying its bytes on the device). The
// other view ops (permute, expand, select, diagonal, ...) are composites over as_strided. Also
// unfold's backward and narrow_copy, which are copies through views.
#include <ATen/EmptyTensor.h>
#include <ATen/NativeFunctions.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/library.h>

#include "core/core.h"
#include "ops/common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// Makes self's storage large enough for its current sizes, strides and offset.
void ensure_storage(const at::Tensor& self) {
  auto* impl = self.unsafeGetTensorImpl();
  if (impl->numel() == 0) return;
  const size_t need =
      at::detail::computeStorageNbytes(impl->sizes(), impl->strides(), impl->itemsize(), impl->storage_offset());
  const c10::Storage& st = impl->unsafe_storage();
  if (need > st.nbytes()) at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(st, need);
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  if (memory_format && *memory_format != at::MemoryFormat::Preserve) impl->empty_tensor_restride(*memory_format);
  ensure_storage(self);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size,
                        c10::IntArrayRef stride) {
  TORCH_CHECK(source.device().type() == c10::DeviceType::PrivateUse1 || source.nbytes() == 0,
              "webgpu: set_: expected a webgpu storage, got one on ", source.device());
  at::native::checkSetStorage(self, source, offset, size, stride);
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(offset);
  if (stride.data())
    impl->set_sizes_and_strides(size, stride);
  else
    impl->set_sizes_contiguous(size);
  ensure_storage(self);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  const int64_t n = int64_t(source.nbytes() / self.dtype().itemsize());
  return set_storage(self, source, 0, {n}, {});
}

at::Tensor& set_source_storage_offset(at::Tensor& self, c10::Storage source, c10::SymInt offset,
                                      c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  return set_storage(self, source, offset.expect_int(), C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride));
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& src) {
  TORCH_CHECK(self.dtype() == src.dtype(), "webgpu: set_: expected source of dtype ", self.dtype(), ", got ",
              src.dtype());
  if (self.is_same(src)) return self;
  return set_storage(self, src.storage(), src.storage_offset(), src.sizes(), src.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, core::allocator(), true);
  return set_storage(self, empty, 0, {0}, {});
}

// narrow_copy: a copy of the narrowed view, with CPU's argument checks (which differ from narrow's).
at::Tensor& narrow_copy_out(const at::Tensor& self, int64_t dim, c10::SymInt start_, c10::SymInt length_,
                            at::Tensor& out) {
  int64_t start = start_.expect_int();
  const int64_t length = length_.expect_int();
  TORCH_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  TORCH_CHECK(self.dtype() == out.dtype());
  if (dim < 0)
    dim = at::maybe_wrap_dim(dim, self.dim());
  else
    TORCH_CHECK(dim < self.dim());
  const int64_t cur = self.size(dim);
  TORCH_CHECK_INDEX(-cur <= start && start <= cur, "start out of range (expected to be in range of [", -cur, ", ", cur,
                    "], but got ", start, ")");
  if (start < 0) start += cur;
  TORCH_CHECK(length >= 0 && start <= cur - length, "start (", start, ") + length (", length,
              ") exceeds dimension size (", cur, ").");
  at::Tensor view = self.narrow(dim, start, length);
  at::native::resize_output(out, view.sizes());
  out.copy_(view);
  return out;
}

constexpr auto narrow_copy = via_out<&narrow_copy_out>;

// The gradient of unfold: each window's gradient added back where the window came from. Windows
// overlap when step < size, so it goes one window position at a time: for a fixed position j the
// elements j, j + step, j + 2 step, ... are distinct, and an add_ through that strided view is safe.
at::Tensor unfold_backward(const at::Tensor& grad, c10::SymIntArrayRef input_sizes, int64_t dim, int64_t size,
                           int64_t step) {
  // CPU's checks and error types: a bad step is a ValueError, a bad size a RuntimeError.
  TORCH_CHECK_VALUE(step > 0, "step is ", step, " but must be > 0");
  TORCH_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  at::Tensor grad_input = at::zeros_symint(input_sizes, grad.options());
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(grad_input.dim(), 1));
  if (grad.numel() == 0) return grad_input;
  at::Tensor windows =
      grad_input.dim() == 0 ? grad_input.view({1}).unfold(0, size, step) : grad_input.unfold(dim, size, step);
  if (step >= size) {
    windows.copy_(grad);
  } else {
    for (int64_t j = 0; j < size; ++j) windows.select(-1, j).add_(grad.select(-1, j));
  }
  return grad_input;
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("unfold_backward", unfold_backward);
  m.impl("narrow_copy", narrow_copy);
  m.impl("narrow_copy.out", narrow_copy_out);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Storage_storage_offset", set_source_storage_offset);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
}

}  // namespace webgpu::ops
