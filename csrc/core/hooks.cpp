// PrivateUse1 hooks (availability, generators, pinned host memory, storage resizing) and the webgpu
// generator, which holds the seed and offset that the device Philox generator (ops/random.cpp) consumes.
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/ops/empty.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/StorageImpl.h>
#include <c10/util/CallOnce.h>

#include <array>
#include <cstring>
#include <map>
#include <mutex>

#include "core/core.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::core {
namespace {

struct WebGPUGenerator final : c10::GeneratorImpl {
  explicit WebGPUGenerator(c10::DeviceIndex i)
      : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, i),
                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}
  void set_current_seed(uint64_t s) override {
    seed_ = s;
    offset_ = 0;
  }
  uint64_t current_seed() const override { return seed_; }
  void set_offset(uint64_t o) override { offset_ = o; }
  uint64_t get_offset() const override { return offset_; }
  uint64_t seed() override {
    set_current_seed(c10::detail::getNonDeterministicRandom(true));
    return seed_;
  }
  // State: 16 bytes, the seed then the offset, as a CPU uint8 tensor (like CUDA's Philox state).
  void set_state(const c10::TensorImpl& s) override {
    TORCH_CHECK(s.numel() == 16 && s.dtype() == caffe2::TypeMeta::Make<uint8_t>(),
                "webgpu: RNG state must be a uint8 tensor of 16 bytes");
    std::memcpy(&seed_, s.data(), 8);
    std::memcpy(&offset_, static_cast<const uint8_t*>(s.data()) + 8, 8);
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    at::Tensor t = at::empty({16}, at::TensorOptions().dtype(at::kByte));
    std::memcpy(t.data_ptr(), &seed_, 8);
    std::memcpy(static_cast<uint8_t*>(t.data_ptr()) + 8, &offset_, 8);
    return t.getIntrusivePtr();
  }
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  WebGPUGenerator* clone_impl() const override {
    auto* g = new WebGPUGenerator(device().index());
    g->seed_ = seed_;
    g->offset_ = offset_;
    return g;
  }
  uint64_t seed_ = 67280421310721ull;
  uint64_t offset_ = 0;
};

// Pinned host memory: `t.pin_memory()` gives plain host memory marked pinned. Dawn cannot import
// host memory or page-lock it for DMA, and an upload copies its source before returning (a queue
// write, or a memcpy into a mapped staging buffer), so a non_blocking copy from this memory is as
// safe as from any other; the mark keeps CUDA code that checks is_pinned() working unchanged.
struct PinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void* p = n ? c10::alloc_cpu(n) : nullptr;
    if (p) {
      std::lock_guard<std::mutex> lock(mu);
      blocks[reinterpret_cast<uintptr_t>(p)] = n;
    }
    return {p, p, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dst, const void* src, std::size_t count) const override { default_copy_data(dst, src, count); }
  static void release(void* p) {
    if (!p) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      blocks.erase(reinterpret_cast<uintptr_t>(p));
    }
    c10::free_cpu(p);
  }
  // Whether p lies inside a pinned block (a view's data pointer may be interior).
  static bool contains(const void* p) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> lock(mu);
    auto it = blocks.upper_bound(a);
    if (it == blocks.begin()) return false;
    --it;
    return a < it->first + std::max<size_t>(it->second, 1);
  }
  static inline std::mutex mu;
  static inline std::map<uintptr_t, size_t> blocks;
};
PinnedAllocator g_pinned;

std::array<at::Generator, rt::kMaxDevices> g_generators;
std::mutex g_gen_mu;

struct WebGPUHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return rt::is_available(); }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex i) const override {
    return default_generator(i < 0 ? current_device() : i);
  }
  at::Generator getNewGenerator(c10::DeviceIndex i) const override {
    return at::make_generator<WebGPUGenerator>(i < 0 ? current_device() : i);
  }
  at::Device getDeviceFromPtr(void*) const override {
    return at::Device(c10::DeviceType::PrivateUse1, current_device());
  }
  bool isPinnedPtr(const void* p) const override { return p && PinnedAllocator::contains(p); }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &g_pinned; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return c10::DeviceIndex(rt::device_count()); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return c10::DeviceIndex(current_device()); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = current_device();
    set_current_device(d);
    return c10::DeviceIndex(old);
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  // Grows (or shrinks) a storage: a new block, the old bytes copied on the device.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    TORCH_CHECK(storage.resizable(), "webgpu: trying to resize a storage that is not resizable");
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    const size_t old = impl->nbytes();
    if (newsize == old) return;
    const int idx = impl->device().index() < 0 ? 0 : impl->device().index();
    c10::DataPtr fresh = allocator()->allocate(newsize);
    const size_t n = (std::min(old, newsize) + 3) & ~size_t(3);
    rt::Block* src = block_of_data_ptr(impl->data_ptr());
    if (n > 0 && src) {
      auto* dst = block_of_data_ptr(fresh);
      rt::get_device(idx).stream().copy(src->buffer.get(), 0, dst->buffer.get(), 0, n);
    }
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

struct RegisterHooks {
  RegisterHooks() { at::RegisterPrivateUse1HooksInterface(new WebGPUHooks()); }
} g_register_hooks;

}  // namespace

const at::Generator& default_generator(int index) {
  TORCH_CHECK(index >= 0 && index < rt::kMaxDevices, "webgpu: invalid device index ", index);
  std::lock_guard<std::mutex> lock(g_gen_mu);
  if (!g_generators[index].defined()) {
    g_generators[index] = at::make_generator<WebGPUGenerator>(c10::DeviceIndex(index));
  }
  return g_generators[index];
}

PhiloxState philox_state(const std::optional<at::Generator>& gen, int index, uint64_t increment) {
  at::Generator g = gen.has_value() && gen->defined() ? *gen : default_generator(index);
  TORCH_CHECK(g.device().type() == c10::DeviceType::PrivateUse1,
              "Expected a 'webgpu' device type for generator but found '", g.device().type(), "'");
  std::lock_guard<std::mutex> lock(g.mutex());
  auto* impl = g.get<WebGPUGenerator>();
  PhiloxState s{impl->current_seed(), impl->get_offset()};
  impl->set_offset(s.offset + increment);
  return s;
}

}  // namespace webgpu::core
