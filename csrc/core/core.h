// PyTorch glue shared by core/ and ops/: the current device, the allocator, the generator.
#pragma once
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>

namespace webgpu::rt {
struct Block;
}

namespace webgpu::core {

// Whether torch.profiler can show GPU kernel times (core/profiler.cpp; torch >= 2.12).
bool has_kernel_profiler();

int current_device();
void set_current_device(int index);
c10::Allocator* allocator();
// torch.webgpu.empty_cache(): every created device's pool gives its cached buffers back.
void empty_caches();
// (free, total) bytes of a device (torch.webgpu.mem_get_info); NotImplementedError where the
// adapter does not report its memory.
std::pair<size_t, size_t> memory_info(int device);
// A device's memory statistics in PyTorch's shape (torch.accelerator / torch.webgpu.memory_stats).
c10::CachingDeviceAllocator::DeviceStats device_stats(int device);
const at::Generator& default_generator(int index);

// The Philox key (seed) and counter offset for one random kernel on device `index`: `gen` (or the
// device's default generator) is locked, its offset read and advanced by `increment`, as CUDA's
// philox_cuda_state does. Raises if `gen` is not a webgpu generator.
struct PhiloxState {
  uint64_t seed = 0, offset = 0;
};
PhiloxState philox_state(const std::optional<at::Generator>& gen, int index, uint64_t increment);

// The Block behind a webgpu storage's DataPtr: its context when our allocator made it, else (a
// DataPtr that at::from_blob made from a storage's address, as torch's storage file writer and
// reader do) the live block starting at that address. Null for an empty storage; raises for an
// address that is not a block's start.
rt::Block* block_of_data_ptr(const c10::DataPtr& p);
// A 1-D uint8 webgpu tensor over the memory of a contiguous CPU tensor (no copy: the GPU reads and
// writes that memory; docs/design.md, "Memory"). Its address and byte size must be multiples of
// the device's host_import_alignment(). The host storage stays alive while the device uses it.
at::Tensor import_host(const at::Tensor& host, int device);

// Fork safety: Dawn's device, its threads and locks do not survive fork(). A child forked after
// the parent created a device is marked (torch_webgpu registers an at-fork hook) and every use of
// the device raises instead of hanging, as CUDA does.
extern std::atomic<bool> g_bad_fork;
void set_bad_fork();
[[noreturn]] void raise_bad_fork();
inline void check_not_forked() {
  if (g_bad_fork.load(std::memory_order_relaxed)) raise_bad_fork();
}

}  // namespace webgpu::core
