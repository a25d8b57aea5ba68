#include "kernel/device.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

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

namespace {
// The host memory of copy_across_devices: two slots of anonymous pages, imported by each device
// that uses it (kept for the process's life; 2 x 32 MiB).
struct Bounce {
  std::mutex mu;
  at::Tensor host;
  std::map<int, at::Tensor> alias;  // device index -> the memory as that device's buffer
};
constexpr uint64_t kBounceSlot = 32ull << 20;

Bounce& bounce() {
  static Bounce* b = new Bounce;  // never destroyed: its buffers may be in use at exit
  return *b;
}

at::Tensor bounce_alias(Bounce& b, int device) {
  if (!b.host.defined()) {
    const uint64_t bytes = 2 * kBounceSlot;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TORCH_CHECK(p != MAP_FAILED, "webgpu: could not map ", bytes, " bytes for copies between devices");
    b.host = at::from_blob(
        p, {int64_t(bytes)}, [bytes](void* q) { munmap(q, bytes); }, at::TensorOptions().dtype(at::kByte));
  }
  auto it = b.alias.find(device);
  if (it == b.alias.end()) it = b.alias.emplace(device, core::import_host(b.host, device)).first;
  return it->second;
}
}  // namespace

bool copy_across_devices(const at::TensorBase& src, uint64_t src_off, const at::TensorBase& dst, uint64_t dst_off,
                         uint64_t n) {
  static const bool off = [] {
    const char* e = std::getenv("TORCH_WEBGPU_PEER_BOUNCE");
    return e && std::string(e) == "0";
  }();
  rt::GpuDevice &S = gpu_of(src), &D = gpu_of(dst);
  if (off || n < (1u << 20) || n % 4 || src_off % 4 || dst_off % 4 || !S.host_import_alignment() ||
      !D.host_import_alignment())
    return false;
  Bounce& b = bounce();
  std::lock_guard<std::mutex> lock(b.mu);
  WGPUBuffer slots_src = block_of(bounce_alias(b, S.index()))->buffer.get();
  WGPUBuffer slots_dst = block_of(bounce_alias(b, D.index()))->buffer.get();
  WGPUBuffer from = block_of(src)->buffer.get(), to = block_of(dst)->buffer.get();
  std::shared_ptr<rt::Stream::Mark> drained[2];  // dst's copy out of each slot
  for (uint64_t pos = 0, k = 0; pos < n; pos += kBounceSlot, ++k) {
    const uint64_t len = std::min(kBounceSlot, n - pos), slot = (k % 2) * kBounceSlot;
    if (drained[k % 2]) D.stream().wait_mark(*drained[k % 2]);
    S.stream().copy(from, src_off + pos, slots_src, slot, len);
    S.stream().wait_mark(*S.stream().mark(false));
    D.stream().copy(slots_dst, slot, to, dst_off + pos, len);
    drained[k % 2] = D.stream().mark(false);
  }
  for (auto& m : drained)  // the slots are free for the next call, and dst holds the bytes
    if (m) D.stream().wait_mark(*m);
  return true;
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
