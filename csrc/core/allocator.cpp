// The c10::Allocator for webgpu storage: DataPtrs whose address is the block's place in the fake
// address space and whose context is the Block, returned to the device's pool on free.
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
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

struct WebGPUAllocator final : c10::Allocator {
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
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    TORCH_CHECK(false, "webgpu: raw copies between device addresses are not supported; use Tensor.copy_");
  }
};

WebGPUAllocator g_allocator;

}  // namespace

c10::Allocator* allocator() { return &g_allocator; }

rt::Block* block_of_data_ptr(const c10::DataPtr& p) {
  if (p.get_deleter() == &free_block) return static_cast<rt::Block*>(p.get_context());
  if (p.get() == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(g_live_mu);
  auto it = g_live.find(reinterpret_cast<uint64_t>(p.get()));
  TORCH_CHECK(it != g_live.end(), "webgpu: a tensor made with from_blob from address ", p.get(),
              ", which is not the start of a live webgpu storage");
  return it->second;
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

}  // namespace webgpu::core
