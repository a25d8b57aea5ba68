// Tensor creation on the device: empty and empty_strided over the caching allocator; the dtype and
// device policies every op checks; which tensors `.data =` may swap with a webgpu tensor.
#include <ATen/EmptyTensor.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "core/core.h"
#include "ops/common.h"
#include "ops/uint_fp8.h"
#include "ops/float64.h"
#include "ops/register.h"

namespace webgpu::ops {

bool is_supported_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16:
    case at::kLong:
    case at::kInt:
    case at::kShort:
    case at::kChar:
    case at::kByte:
    case at::kBool:
    case at::kComplexFloat:
    case at::kUInt16:
    case at::kUInt32:
    case at::kUInt64:
    case at::kFloat8_e4m3fn:
    case at::kFloat8_e5m2:
    case at::kFloat8_e4m3fnuz:
    case at::kFloat8_e5m2fnuz: return true;
    default: return false;
  }
}

void check_supported_dtype(at::ScalarType t, const char* op) {
  if (is_uint_fp8(t)) return check_uint_fp8(t, op);
  if (is_supported_dtype(t)) return;
  if (t == at::kDouble && float64_enabled()) raise_no_float64_kernel(op);
  if (t == at::kDouble)
    TORCH_CHECK_TYPE(false, "webgpu: ", op,
                     ": float64 is not supported on the webgpu device (WebGPU has no "
                     "64-bit floats). Use float32 instead, e.g. tensor.to(torch.float32).");
  if (at::isComplexType(t))
    TORCH_CHECK_TYPE(false, "webgpu: ", op, ": complex dtype ", t,
                     " is not supported on the webgpu device; complex64 is supported, e.g. "
                     "tensor.to(torch.complex64).");
  TORCH_CHECK_TYPE(false, "webgpu: ", op, ": dtype ", t,
                   " is not supported on the webgpu device. Supported: "
                   "float32, float16, bfloat16, int64, int32, int16, int8, uint8, bool, complex64.");
}

bool is_storable_dtype(at::ScalarType t) { return is_supported_dtype(t) || (t == at::kDouble && float64_enabled()); }

void check_storable_dtype(at::ScalarType t, const char* op) {
  if (!is_storable_dtype(t)) check_supported_dtype(t, op);
}

void raise_wrong_device(const at::TensorBase& t, const char* op) {
  TORCH_CHECK(false, "Expected all tensors to be on the same device, but got a tensor on ", t.device(),
              " as an operand of the webgpu op", op ? " " : "", op ? op : "",
              ". Move it to the webgpu device first, e.g. tensor.to(\"webgpu\") (only zero-dimensional CPU "
              "tensors are accepted, as scalars, by pointwise ops).");
}

namespace {

// Dense CPU and webgpu tensors may take each other's place in `param.data = other` (torch's
// TensorImpl rule knows only its own dense backends), so Module.to("webgpu") updates parameters
// in place, as for CUDA, and tied parameters stay one Parameter.
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    const auto ks = t.key_set();
    return t.layout() == at::kStrided && !t.is_quantized() &&
           (ks.has_backend(c10::BackendComponent::PrivateUse1Bit) || ks.has_backend(c10::BackendComponent::CPUBit)) &&
           ks.has(c10::DispatchKey::Dense);
  };
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set()) || (dense(self) && dense(from));
}

const c10::DispatchKeySet kKeys(c10::DispatchKey::PrivateUse1);

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format) {
  const auto dt = c10::dtype_or_default(dtype);
  check_storable_dtype(dt, "empty");
  TORCH_CHECK(c10::layout_or_default(layout) == at::kStrided, "webgpu: only strided tensors are supported");
  c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_generic(size, core::allocator(), kKeys, dt, memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory) {
  const auto dt = c10::dtype_or_default(dtype);
  check_storable_dtype(dt, "empty_strided");
  TORCH_CHECK(c10::layout_or_default(layout) == at::kStrided, "webgpu: only strided tensors are supported");
  c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_strided_generic(size, stride, core::allocator(), kKeys, dt);
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
}

}  // namespace webgpu::ops
