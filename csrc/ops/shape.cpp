// Views and storage plumbing: as_strided, view, _reshape_alias, unfold, resize_, set_. Views share
// the block; only resize_ may move a tensor to a new block (copying its bytes on the device). The
// other view ops (permute, expand, select, diagonal, ...) are composites over as_strided.
#include <ATen/EmptyTensor.h>
#include <ATen/NativeFunctions.h>
#include <ATen/native/Resize.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/library.h>

#include "core/core.h"
#include "ops/common.h"

namespace webgpu::ops {
namespace {

// Makes self's storage large enough for its current sizes, strides and offset.
void ensure_storage(const at::Tensor& self) {
  auto* impl = self.unsafeGetTensorImpl();
  if (impl->numel() == 0) return;
  const size_t need = at::detail::computeStorageNbytes(impl->sizes(), impl->strides(), impl->itemsize(),
                                                       impl->storage_offset());
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
  if (stride.data()) impl->set_sizes_and_strides(size, stride);
  else impl->set_sizes_contiguous(size);
  ensure_storage(self);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  const int64_t n = int64_t(source.nbytes() / self.dtype().itemsize());
  return set_storage(self, source, 0, {n}, {});
}

at::Tensor& set_source_storage_offset(at::Tensor& self, c10::Storage source, c10::SymInt offset,
                                      c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  return set_storage(self, source, offset.expect_int(), C10_AS_INTARRAYREF_SLOW(size),
                     C10_AS_INTARRAYREF_SLOW(stride));
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Storage_storage_offset", set_source_storage_offset);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
}

}  // namespace webgpu::ops
