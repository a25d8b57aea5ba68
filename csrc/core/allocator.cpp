// The c10::Allocator for webgpu storage: DataPtrs whose address is the block's place in the fake
// address space and whose context is the Block, returned to the device's pool on free.
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <ATen/ATen.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/core.h"
#include "runtime/allocator.h"
#include "runtime/device.h"

namespace webgpu::core {

std::atomic<bool> g_bad_fork{false};

void set_bad_fork() {
  if (g_bad_fork.exchange(true)) return;
#if defined(__GLIBC__)
  // Our devices are never destroyed (runtime/device.cpp) and rt::shutdown() leaves a device it did
  // not create alone, but the driver's own exit handlers in the child still wait on threads that
  // fork() did not copy (seen on NVIDIA: a forked child's sys.exit hung). This handler, registered
  // after theirs, runs first and ends the process with its exit status.
  on_exit(
      [](int status, void*) {
        std::fflush(nullptr);
        _exit(status);
      },
      nullptr);
#endif
}

void raise_bad_fork() {
  TORCH_CHECK(false,
              "webgpu: cannot use the webgpu device in a forked subprocess: the parent process had already "
              "used it, and Dawn's device and threads do not survive fork(). To use webgpu with "
              "multiprocessing, start the workers with the 'spawn' or 'forkserver' method "
              "(multiprocessing.get_context(\"spawn\"), or torch.multiprocessing.set_start_method(\"spawn\")).");
}

namespace {

// Live blocks by address, for DataPtrs that at::from_blob made from a storage's address (they
// carry no context). Touched once per allocation and free.
std::mutex g_live_mu;
std::unordered_map<uint64_t, rt::Block*> g_live;

void free_block(void* ctx) {
  auto* b = static_cast<rt::Block*>(ctx);
  {
    std::lock_guard<std::mutex> lock(g_live_mu);
    g_live.erase(b->va);
  }
  // In a forked child the device is unusable (and its pool's lock may be held by a thread that
  // no longer exists): the parent's blocks are left alone.
  if (g_bad_fork.load()) return;
  rt::get_device(b->device).pool().free(b);
}

// A storage over host memory (import_host): its Block is not the pool's. Releasing the buffer
// handle is enough: Dawn keeps the buffer while recorded or queued work uses it, and releases the
// host storage through the dispose callback after that.
void free_imported(void* ctx) {
  auto* b = static_cast<rt::Block*>(ctx);
  {
    std::lock_guard<std::mutex> lock(g_live_mu);
    g_live.erase(b->va);
  }
  rt::forget_buffer_owner(b->buffer.get());
  if (g_bad_fork.load()) b->buffer.release();  // Dawn's handles are not the child's to release
  delete b;
}

void release_host_storage(void* storage) { delete static_cast<c10::Storage*>(storage); }

// The c10::DeviceAllocator that torch.accelerator's memory functions (memory_allocated,
// memory_stats, empty_cache, get_memory_info, ...) find for the device type: the pool's statistics
// in PyTorch's shape (runtime/allocator.h keeps them so).
c10::CachingDeviceAllocator::Stat to_c10(const rt::Stat& s) {
  c10::CachingDeviceAllocator::Stat r;
  r.current = s.current;
  r.peak = s.peak;
  r.allocated = s.allocated;
  r.freed = s.freed;
  return r;
}

c10::CachingDeviceAllocator::StatArray to_c10(const rt::StatArray& a) {
  c10::CachingDeviceAllocator::StatArray r;
  for (size_t i = 0; i < a.size() && i < r.size(); ++i) r[i] = to_c10(a[i]);
  return r;
}

struct WebGPUAllocator final : c10::DeviceAllocator {
  c10::DataPtr allocate(size_t n) override {
    const int idx = current_device();
    c10::Device dev(c10::DeviceType::PrivateUse1, idx);
    if (n == 0) return c10::DataPtr(nullptr, dev);
    check_not_forked();
    rt::Block* b = rt::get_device(idx).pool().allocate(n);
    {
      std::lock_guard<std::mutex> lock(g_live_mu);
      g_live[b->va] = b;
    }
    return c10::DataPtr(reinterpret_cast<void*>(b->va), b, &free_block, dev);
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  bool initialized() override { return !rt::created_devices().empty(); }
  void emptyCache(c10::MempoolId_t /*one pool per device*/) override { empty_caches(); }
  // One queue per device executes in order: a block freed while work that reads it is queued is
  // safe to reuse at once (runtime/allocator.cpp), so there is nothing to record.
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    const rt::PoolStats s = rt::get_device(device).pool().stats();
    c10::CachingDeviceAllocator::DeviceStats d;
    d.allocation = to_c10(s.allocation);
    d.segment = to_c10(s.segment);
    d.active = d.allocation;  // a live block is active until freed: no stream-deferred frees
    d.allocated_bytes = to_c10(s.allocated_bytes);
    d.reserved_bytes = to_c10(s.reserved_bytes);
    d.active_bytes = d.allocated_bytes;
    d.requested_bytes = d.allocated_bytes;  // (rounded to 4 bytes: the pool keeps no request sizes)
    d.num_alloc_retries = s.num_alloc_retries;
    d.num_ooms = s.num_ooms;
    d.num_device_alloc = s.segment[rt::kAllBlocks].allocated;
    d.num_device_free = s.segment[rt::kAllBlocks].freed;
    return d;
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override { rt::get_device(device).pool().reset_accumulated(); }
  void resetPeakStats(c10::DeviceIndex device) override { rt::get_device(device).pool().reset_peak(); }
  // (free, total): total is the adapter's device-local heaps; free is what this process has not
  // reserved of it -- WebGPU reports no other process's use.
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) {
    rt::GpuDevice& d = rt::get_device(device);
    const uint64_t total = d.memory_bytes();
    TORCH_CHECK_NOT_IMPLEMENTED(total > 0, "webgpu: the adapter '", d.info()["adapter"],
                                "' does not report its memory size (no adapter-properties-memory-heaps)");
    const int64_t reserved = d.pool().stats().reserved_bytes[rt::kAllBlocks].current;
    return {size_t(total > uint64_t(reserved) ? total - uint64_t(reserved) : 0), size_t(total)};
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    TORCH_CHECK(false, "webgpu: raw copies between device addresses are not supported; use Tensor.copy_");
  }
};

WebGPUAllocator g_allocator;

}  // namespace

c10::Allocator* allocator() { return &g_allocator; }

void empty_caches() {
  check_not_forked();
  for (auto* d : rt::created_devices()) d->pool().empty_cache();
}

std::pair<size_t, size_t> memory_info(int device) { return g_allocator.getMemoryInfo(c10::DeviceIndex(device)); }
c10::CachingDeviceAllocator::DeviceStats device_stats(int device) {
  return g_allocator.getDeviceStats(c10::DeviceIndex(device));
}

// Whether [p, p + n) lies in mappings a driver can pin for the GPU: anonymous memory or shared
// memory (/dev/shm, memfd, SysV). NVIDIA's driver fails the import of pages of a regular file with
// an error that Dawn reports as internal, which loses the device; so those are refused here. Where
// /proc/self/maps does not exist, nothing is checked.
bool pinnable_host_range(const void* p, uint64_t n) {
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return true;
  uint64_t at = reinterpret_cast<uintptr_t>(p);
  const uint64_t end = at + n;
  char line[4096];
  while (at < end && std::fgets(line, sizeof line, f)) {
    unsigned long long lo = 0, hi = 0;
    char path[4096] = "";
    if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s %4095[^\n]", &lo, &hi, path) < 2) continue;
    if (at < lo || at >= hi) continue;
    const std::string name(path);
    const bool ok = name.empty() || name[0] == '[' || name.rfind("/dev/shm/", 0) == 0 ||
                    name.rfind("/memfd:", 0) == 0 || name.rfind("/SYSV", 0) == 0;
    if (!ok) break;
    at = hi;
  }
  std::fclose(f);
  return at >= end;
}

at::Tensor import_host(const at::Tensor& host, int device) {
  check_not_forked();
  TORCH_CHECK(host.device().is_cpu() && host.is_contiguous(),
              "webgpu: only a contiguous CPU tensor's memory can be used as a device buffer");
  const int idx = device < 0 ? current_device() : device;
  rt::GpuDevice& d = rt::get_device(idx);
  const uint64_t n = uint64_t(host.numel()) * host.element_size();
  TORCH_CHECK(pinnable_host_range(host.data_ptr(), n),
              "webgpu: only anonymous or shared memory (/dev/shm, memfd) can be used as a device buffer, "
              "not the pages of a file");
  // The buffer keeps a reference to the host storage until Dawn disposes of the memory.
  auto* keep = new c10::Storage(host.storage());
  rt::Buffer buf;
  try {
    buf = d.import_host(host.data_ptr(), n, &release_host_storage, keep);
  } catch (...) {
    delete keep;  // (Dawn calls dispose only for a buffer it made)
    throw;
  }
  auto* b = new rt::Block{std::move(buf), n, rt::reserve_va(n), idx};
  {
    std::lock_guard<std::mutex> lock(g_live_mu);
    g_live[b->va] = b;
  }
  const c10::Device dev(c10::DeviceType::PrivateUse1, c10::DeviceIndex(idx));
  c10::Storage storage(c10::Storage::use_byte_size_t(), c10::SymInt(int64_t(n)),
                       c10::DataPtr(reinterpret_cast<void*>(b->va), b, &free_imported, dev), nullptr, false);
  return at::empty({0}, at::TensorOptions().dtype(at::kByte).device(dev)).set_(storage, 0, {int64_t(n)}, {1});
}

rt::Block* block_of_data_ptr(const c10::DataPtr& p) {
  if (p.get_deleter() == &free_block || p.get_deleter() == &free_imported)
    return static_cast<rt::Block*>(p.get_context());
  if (p.get() == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(g_live_mu);
  auto it = g_live.find(reinterpret_cast<uint64_t>(p.get()));
  TORCH_CHECK(it != g_live.end(), "webgpu: a tensor made with from_blob from address ", p.get(),
              ", which is not the start of a live webgpu storage");
  return it->second;
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

}  // namespace webgpu::core
