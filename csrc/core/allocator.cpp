// The c10::Allocator for webgpu storage: DataPtrs whose address is the block's place in the fake
// address space and whose context is the Block, returned to the device's pool on free.
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "core/core.h"
#include "runtime/allocator.h"
#include "runtime/device.h"

namespace webgpu::core {
namespace {

void free_block(void* ctx) {
  auto* b = static_cast<rt::Block*>(ctx);
  rt::get_device(b->device).pool().free(b);
}

struct WebGPUAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    const int idx = current_device();
    c10::Device dev(c10::DeviceType::PrivateUse1, idx);
    if (n == 0) return c10::DataPtr(nullptr, dev);
    rt::Block* b = rt::get_device(idx).pool().allocate(n);
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

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

}  // namespace webgpu::core
