// Copies between CPU and webgpu and within webgpu (any strides, dtype conversion), .item(),
// fill_ and zero_. Conversions during host transfers happen on the CPU, where PyTorch defines them;
// device-side conversions use the elementwise engine's CPU-exact casts.
#include <ATen/NativeFunctions.h>
#include <ATen/TensorIterator.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernel/device.h"
#include "kernel/env.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "engines/elementwise.h"
#include "ops/complex.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

bool is_webgpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// The webgpu device a tensor is on (no index: device 0).
int device_index(const at::Tensor& t) { return t.device().has_index() ? t.device().index() : 0; }

// The compute type a device copy from s to d goes through: raw bits when the dtypes agree.
CT copy_compute_type(at::ScalarType s, at::ScalarType d) {
  if (s == d) return CT::RAW;
  if (at::isComplexType(s) || at::isComplexType(d)) return CT::F32;  // complex64: real part, or (value, 0)
  if (s == at::kDouble || d == at::kDouble) return CT::F64;
  auto fl = [](at::ScalarType t) { return at::isFloatingType(t); };
  if (fl(s) || fl(d)) return CT::F32;
  if (s == at::kLong || d == at::kLong) return CT::I64;
  if (s == at::kUInt32 || d == at::kUInt32 || s == at::kUInt64 || d == at::kUInt64) return CT::I64;
  return CT::I32;
}

// dst[(b * P + p) * Q + q] = src[b * sB + q * sQ + p] for b < B, dst contiguous from its offset, the
// source's strides and offsets in elements: 32-bit elements, or 16-bit ones with P, Q, sQ, sB and both
// offsets even (wgsl/kernels/transpose32.wgsl, transpose16.wgsl).
void launch_transpose(const at::Tensor& src, const at::Tensor& dst, int64_t B, int64_t P, int64_t Q, int64_t sQ,
                      int64_t sB) {
  const bool half = dst.element_size() == 2;
  TORCH_INTERNAL_ASSERT(dst.element_size() == 4 || (half && P % 2 == 0 && Q % 2 == 0 && sQ % 2 == 0 && sB % 2 == 0 &&
                                                    src.storage_offset() % 2 == 0 && dst.storage_offset() % 2 == 0));
  const int64_t T = half ? 64 : 32, tiles_p = (P + T - 1) / T, tiles_q = (Q + T - 1) / T;
  Kernel k(half ? "transpose16" : "transpose32");
  k.in(src, CT::RAW);
  k.out(dst, CT::RAW);
  k.param_index("B", B);
  k.param_index("P", P);
  k.param_index("Q", Q);
  k.param_index("sQ", sQ);
  k.param_index("sB", sB);
  k.param_index("tiles_p", tiles_p);
  k.param_index("tiles_q", tiles_q);
  k.param_index("in_off", src.storage_offset());
  k.param_index("out_off", dst.storage_offset());
  k.launch(uint64_t(B * tiles_p * tiles_q), [half] { return kernel::library(half ? "transpose16" : "transpose32"); });
}

// A copy into a dense destination whose source is a batched transpose: with size-1 dimensions
// dropped and neighbours merged where the source's strides allow (in the order that makes the
// destination contiguous), the source is [batch, P, Q] with P of stride 1 (x.t(), NCHW <-> NHWC,
// channels_last, ...). 32-bit elements, and 16-bit ones whose sizes, strides and offsets are even,
// go through launch_transpose's tiles. False where the copy is not of that form.
bool transpose_copy(const at::Tensor& dst_, const at::Tensor& src_) {
  const int64_t es = dst_.element_size();
  if (src_.scalar_type() != dst_.scalar_type() || (es != 4 && es != 2) || !src_.sizes().equals(dst_.sizes()) ||
      !dst_.is_non_overlapping_and_dense() || kernel::block_id(src_) == kernel::block_id(dst_) ||
      kernel::env_switch("TORCH_WEBGPU_TRANSPOSE_COPY", 1) == 0)
    return false;
  const uint64_t limit = kernel::device_info(dst_).max_binding;  // (larger operands: the windowed copy)
  if (kernel::block_bytes(src_) > limit || kernel::block_bytes(dst_) > limit) return false;
  // A dense destination in another dimension order (channels_last, ...): both in the order that
  // makes the destination contiguous.
  std::vector<int64_t> order(dst_.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return dst_.stride(a) > dst_.stride(b); });
  const at::Tensor dst = dst_.permute(order), src = src_.permute(order);
  if (!dst.is_contiguous() || src.is_contiguous()) return false;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, source stride), outermost first, merged
  for (int64_t i = 0; i < src.dim(); ++i) {
    if (src.size(i) == 1) continue;
    if (!dims.empty() && dims.back().second == src.stride(i) * src.size(i))
      dims.back() = {dims.back().first * src.size(i), src.stride(i)};
    else
      dims.emplace_back(src.size(i), src.stride(i));
  }
  if (dims.size() == 2) dims.insert(dims.begin(), {1, 0});
  if (dims.size() != 3 || dims[1].second != 1 || dims[1].first < 8 || dims[2].first < 8) return false;
  const int64_t B = dims[0].first, P = dims[1].first, Q = dims[2].first, sQ = dims[2].second, sB = dims[0].second;
  if (es == 2 && (P % 2 || Q % 2 || sQ % 2 || sB % 2 || src.storage_offset() % 2 || dst.storage_offset() % 2))
    return false;
  launch_transpose(src, dst, B, P, Q, sQ, sB);
  return true;
}

// Copy on the device: dst and src are webgpu tensors, src broadcastable to dst.
void device_copy(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.is_same(src)) return;
  // Lazy conjugate / negative bits, and complex64 -> bool (ops/complex.cpp).
  if (complex_copy(dst, src, device_copy)) return;
  const uint64_t n = uint64_t(dst.numel()) * dst.element_size();
  const bool same_layout =
      src.dtype() == dst.dtype() && src.sizes().equals(dst.sizes()) && src.is_contiguous() && dst.is_contiguous();
  const bool same_block = kernel::block_id(src) == kernel::block_id(dst);
  if (same_layout && same_block && byte_offset_of(src) == byte_offset_of(dst)) return;
  // Word-aligned dense copies between two buffers are buffer copies. (WebGPU's buffer copy needs
  // two distinct buffers: copies within one storage take the kernel.)
  if (same_layout && !same_block && byte_offset_of(src) % 4 == 0 && byte_offset_of(dst) % 4 == 0 && n % 4 == 0) {
    kernel::copy_bytes(src, byte_offset_of(src), dst, byte_offset_of(dst), n);
    return;
  }
  if (transpose_copy(dst, src)) return;
  auto iter = as_is_iter(dst, {src});
  const auto s = src.scalar_type(), d = dst.scalar_type();
  if ((s == at::kDouble && kernel::is_uint_fp8(d)) || (d == at::kDouble && kernel::is_uint_fp8(s))) {
    // float64 <-> the unsigned and float8 types: no device conversion between them; through the
    // host, where CPU's casts define the result.
    dst.copy_(src.cpu().to(d));
    return;
  }
  if ((s == at::kDouble && d == at::kComplexFloat) || (s == at::kComplexFloat && d == at::kDouble)) {
    // float64 <-> complex64, as CPU casts: the real part converts (natively), the imaginary part is
    // zero or dropped. (Lazy conjugate / negative bits were resolved above.)
    if (d == at::kComplexFloat) {
      at::view_as_real(dst).select(-1, 0).copy_(src);
      at::view_as_real(dst).select(-1, 1).zero_();
    } else {
      dst.copy_(at::view_as_real(src).select(-1, 0));
    }
    return;
  }
  const CT ct = copy_compute_type(s, d);
  run_elementwise(iter, "copy", "x1", ct == CT::F64 ? lib::Float64 : lib::None, ct);
}

// Host -> device. Converts and broadcasts on the CPU, then uploads contiguous bytes.
void upload(const at::Tensor& dst, const at::Tensor& src_cpu) {
  if (dst.numel() == 0) return;
  at::Tensor host = host_for_upload(dst, src_cpu).to(dst.scalar_type()).expand(dst.sizes()).contiguous();
  const uint64_t n = uint64_t(host.numel()) * host.element_size();
  if (dst.is_contiguous() && byte_offset_of(dst) % 4 == 0 && n % 4 == 0) {
    kernel::write_bytes(dst, byte_offset_of(dst), host.data_ptr(), n);
    return;
  }
  // Unaligned or strided destination: upload to a scratch tensor, then copy on the device.
  at::Tensor tmp = at::empty(dst.sizes(), dst.options().memory_format(at::MemoryFormat::Contiguous));
  std::vector<uint8_t> padded((n + 3) & ~uint64_t(3), 0);
  std::memcpy(padded.data(), host.data_ptr(), n);
  kernel::write_bytes(tmp, 0, padded.data(), padded.size());
  device_copy(dst, tmp);
}

// Device -> host: reads the bytes of a contiguous device tensor into a new CPU tensor.
at::Tensor download(const at::Tensor& src) {
  at::Tensor s = src.is_contiguous() ? src : src.contiguous();
  at::Tensor host = at::empty(s.sizes(), s.options().device(at::kCPU));
  if (s.numel() == 0) return host;
  kernel::read_bytes(s, byte_offset_of(s), host.data_ptr(), uint64_t(s.numel()) * s.element_size());
  // The bytes are physical: the host copy carries the same lazy conjugate / negative bits.
  if (s.is_conj()) host._set_conj(true);
  if (s.is_neg()) host._set_neg(true);
  return host;
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  const at::Tensor& src = self;
  TORCH_CHECK(dst.defined() && src.defined(), "webgpu: copy_: undefined tensor");
  if (is_webgpu(src) && is_webgpu(dst)) {
    check_storable_dtype(dst.scalar_type(), "copy_");
    if (src.is_complex() && !dst.is_complex())
      TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
    if (device_index(src) != device_index(dst)) {
      // Two devices share no memory in WebGPU (not even two on one adapter): through the host. Same
      // dtype and shape: the GPUs copy through host memory both use as a buffer where they can.
      check_storable_dtype(src.scalar_type(), "copy_");
      if (src.scalar_type() == dst.scalar_type() && src.sizes().equals(dst.sizes()) && dst.is_contiguous() &&
          !src.is_conj() && !src.is_neg() && !dst.is_conj() && !dst.is_neg()) {
        at::Tensor s;
        {
          c10::DeviceGuard g(src.device());
          s = src.is_contiguous() ? src : src.contiguous();
        }
        const uint64_t n = uint64_t(s.numel()) * s.element_size();
        if (kernel::copy_across_devices(s, byte_offset_of(s), dst, byte_offset_of(dst), n)) return dst;
      }
      at::Tensor host;
      {
        c10::DeviceGuard g(src.device());
        host = download(src);
      }
      c10::DeviceGuard g(dst.device());
      upload(dst, host);
      return dst;
    }
    device_copy(dst, src);
  } else if (is_webgpu(dst)) {
    TORCH_CHECK(src.device().is_cpu(), "webgpu: copy_: cannot copy from ", src.device(), " to webgpu");
    upload(dst, src);
  } else {
    TORCH_CHECK(dst.device().is_cpu(), "webgpu: copy_: cannot copy from webgpu to ", dst.device());
    if (dst.dtype() == src.dtype() && dst.sizes().equals(src.sizes()) && dst.is_contiguous() && src.is_contiguous() &&
        !dst.is_conj() && !dst.is_neg() && !src.is_conj() && !src.is_neg() && dst.numel() > 0) {
      // Straight into the destination: no second host buffer (whose fresh pages alone cost more
      // than the copy) and no second pass over the bytes.
      kernel::read_bytes(src, byte_offset_of(src), dst.data_ptr(), uint64_t(src.numel()) * src.element_size());
      return dst;
    }
    at::Tensor host = download(src);
    dst.copy_(host);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

c10::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "webgpu: a Tensor with ", self.numel(), " elements cannot be converted to Scalar");
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  kernel::read_bytes(self, byte_offset_of(self), host.data_ptr(), self.element_size());
  return host.item();
}

// The value's bits in dtype t, exactly as a CPU cast would make them.
ScalarBits raw_bits(const c10::Scalar& v, at::ScalarType t) {
  at::Tensor h = at::scalar_tensor(v, at::TensorOptions().dtype(t));
  uint64_t u = 0;
  std::memcpy(&u, h.data_ptr(), h.element_size());
  return {uint32_t(u), uint32_t(u >> 32)};
}

at::Tensor& fill_scalar(at::Tensor& self, const c10::Scalar& value) {
  check_storable_dtype(self.scalar_type(), "fill_");
  if (self.numel() == 0) return self;
  // Overlapping outputs (an expanded tensor) are fine here: every write stores the same value.
  auto iter = as_is_iter(self, {}, false);
  run_elementwise(iter, "fill", "s0", lib::None, CT::RAW, {raw_bits(value, self.scalar_type())});
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "webgpu: fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  if (!is_webgpu(value)) return fill_scalar(self, value.item());
  device_copy(self, value.expand(self.sizes()));
  return self;
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, 0); }

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero_);
}

}  // namespace webgpu::ops
