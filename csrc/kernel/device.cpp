#include "kernel/device.h"

#include <map>
#include <memory>
#include <mutex>

#include "kernel/internal.h"
#include "runtime/wgsl_features.h"

namespace webgpu::kernel {

const DeviceInfo& device_info(const at::TensorBase& t) {
  rt::GpuDevice& dev = gpu_of(t);
  static std::mutex mu;
  static std::map<const rt::GpuDevice*, std::unique_ptr<DeviceInfo>> cache;
  std::lock_guard<std::mutex> g(mu);
  auto& slot = cache[&dev];
  if (!slot) {
    auto d = std::make_unique<DeviceInfo>();
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
    slot = std::move(d);
  }
  return *slot;
}

const void* block_id(const at::TensorBase& t) { return block_of(t); }
uint64_t block_bytes(const at::TensorBase& t) { return block_of(t)->size; }

void copy_bytes(const at::TensorBase& src, uint64_t src_off, const at::TensorBase& dst, uint64_t dst_off,
                uint64_t n) {
  gpu_of(dst).stream().copy(block_of(src)->buffer.get(), src_off, block_of(dst)->buffer.get(),
                                 dst_off, n);
}

void write_bytes(const at::TensorBase& dst, uint64_t off, const void* data, uint64_t n) {
  gpu_of(dst).stream().write(block_of(dst)->buffer.get(), off, data, n);
}

void read_bytes(const at::TensorBase& src, uint64_t off, void* out, uint64_t n) {
  gpu_of(src).stream().read(block_of(src)->buffer.get(), off, out, n);
}

}  // namespace webgpu::kernel
