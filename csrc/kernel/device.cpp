#include "kernel/device.h"

#include <atomic>
#include <mutex>

#include "kernel/internal.h"
#include "runtime/wgsl_features.h"

namespace webgpu::kernel {

namespace {
DeviceInfo* make_info(rt::GpuDevice& dev) {
  auto* d = new DeviceInfo();  // one per device for the process's life, as the device itself
  const WGPULimits& lim = dev.limits();
  d->f16 = dev.has_f16();
  d->subgroups = dev.has_subgroups();
  d->subgroup_matrix = dev.has_subgroup_matrix();
  d->packed_dot4 = rt::wgsl_has_packed_dot4();
  d->subgroup_min = dev.subgroup_min_size();
  d->subgroup_max = dev.subgroup_max_size();
  d->max_invocations = lim.maxComputeInvocationsPerWorkgroup;
  d->max_workgroup_size_x = lim.maxComputeWorkgroupSizeX;
  d->max_workgroup_storage = lim.maxComputeWorkgroupStorageSize;
  d->max_storage_buffers = lim.maxStorageBuffersPerShaderStage;
  d->min_storage_offset_alignment = lim.minStorageBufferOffsetAlignment;
  d->max_binding = lim.maxStorageBufferBindingSize;
  for (const auto& c : dev.matrix_configs())
    d->matrix_configs.push_back({c.component, c.result, c.M, c.N, c.K, c.min_subgroup, c.max_subgroup});
  return d;
}
}  // namespace

const DeviceInfo& device_info(const at::TensorBase& t) {
  // Read on every dispatch: one atomic load once the device's facts are known.
  static std::atomic<DeviceInfo*> slots[64] = {};
  const int index = t.device().has_index() ? t.device().index() : 0;
  TORCH_CHECK(index >= 0 && index < 64, "webgpu: invalid device index ", index);
  if (DeviceInfo* d = slots[index].load(std::memory_order_acquire)) return *d;
  static std::mutex mu;
  std::lock_guard<std::mutex> g(mu);
  if (DeviceInfo* d = slots[index].load(std::memory_order_acquire)) return *d;
  DeviceInfo* d = make_info(gpu_of(t));
  slots[index].store(d, std::memory_order_release);
  return *d;
}

const void* block_id(const at::TensorBase& t) { return block_of(t); }
uint64_t block_bytes(const at::TensorBase& t) { return block_of(t)->size; }

void copy_bytes(const at::TensorBase& src, uint64_t src_off, const at::TensorBase& dst, uint64_t dst_off, uint64_t n) {
  gpu_of(dst).stream().copy(block_of(src)->buffer.get(), src_off, block_of(dst)->buffer.get(), dst_off, n);
}

void write_bytes(const at::TensorBase& dst, uint64_t off, const void* data, uint64_t n) {
  gpu_of(dst).stream().write(block_of(dst)->buffer.get(), off, data, n);
}

void read_bytes(const at::TensorBase& src, uint64_t off, void* out, uint64_t n) {
  gpu_of(src).stream().read(block_of(src)->buffer.get(), off, out, n);
}

void read_start(rt::AsyncRead& a, const at::TensorBase& src) {
  TORCH_CHECK(src.is_contiguous(), "webgpu: an asynchronous read needs a contiguous tensor");
  gpu_of(src).stream().read_start(a, block_of(src)->buffer.get(), ops::byte_offset_of(src),
                                  uint64_t(src.numel()) * src.element_size());
}

void write_with(rt::AsyncWrite& w, const at::TensorBase& dst, const at::TensorBase& src) {
  const uint64_t n = uint64_t(src.numel()) * src.element_size(), off = ops::byte_offset_of(dst);
  TORCH_CHECK(src.device().is_cpu() && src.is_contiguous() && dst.is_contiguous() &&
                  uint64_t(dst.numel()) * dst.element_size() == n && n % 4 == 0 && off % 4 == 0,
              "webgpu: a staged upload takes a contiguous CPU tensor into a contiguous device tensor of the same "
              "byte size, a multiple of 4 at a 4-byte offset");
  gpu_of(dst).stream().write_with(w, block_of(dst)->buffer.get(), off, src.data_ptr(), n);
}

bool read_ready(rt::AsyncRead& a) { return !a.stream || a.stream->read_ready(a); }

void read_finish(rt::AsyncRead& a, const at::TensorBase& out) {
  TORCH_CHECK(out.device().is_cpu() && out.is_contiguous() && uint64_t(out.numel()) * out.element_size() == a.size,
              "webgpu: an asynchronous read finishes into a contiguous CPU tensor of its ", a.size, " bytes");
  if (a.stream) a.stream->read_finish(a, out.data_ptr());
}

}  // namespace webgpu::kernel
