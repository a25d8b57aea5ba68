// The caching pool of storage buffers behind every webgpu tensor. A Block owns one WGPUBuffer and a
// range of a fake address space: tensors see that address as data_ptr(), kernels see (buffer, offset).
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <mutex>
#include <unordered_set>

#include "runtime/handles.h"

namespace webgpu::rt {

class GpuDevice;

struct Block {
  Buffer buffer;
  uint64_t size = 0;  // bytes, a multiple of 4
  uint64_t va = 0;  // base of this block's range in the fake address space
  int device = 0;
};

struct PoolStats {
  uint64_t allocated = 0, max_allocated = 0, reserved = 0, max_reserved = 0;
  uint64_t num_allocs = 0, num_frees = 0, cache_hits = 0, num_ooms = 0;
};

// Which device a storage buffer belongs to, for refusing operands of another device at dispatch
// (ops that read two webgpu devices' tensors would otherwise bind a foreign buffer). Kept for every
// pool buffer; looked up only once a second device exists (several_devices()).
int buffer_device(WGPUBuffer b);  // -1: not a storage buffer of the pool
bool several_devices();
void note_device_created(int index);

class BufferPool {
 public:
  explicit BufferPool(GpuDevice& dev) : dev_(dev) {}
  ~BufferPool();
  // A block of at least nbytes. Throws c10::OutOfMemoryError (after emptying the cache once).
  Block* allocate(uint64_t nbytes);
  void free(Block* b);
  void empty_cache();
  PoolStats stats();
  void reset_peak();

  static uint64_t round_size(uint64_t nbytes);

 private:
  Buffer create_buffer(uint64_t size, std::string* err, bool* oom);
  void release_cached_locked();

  GpuDevice& dev_;
  std::mutex mu_;
  // Free blocks by (size, order): of the blocks of the best size, the first in order. The order is
  // when the block was freed (the oldest first, the default), or with TORCH_WEBGPU_ALLOC_REUSE=lowest
  // its address: a choice that depends only on which blocks are free, so a training step's tensors
  // get the same blocks step after step and the Stream's bind groups (keyed by buffer) keep hitting,
  // but a freed block is reused at once, by the next dispatches.
  std::map<std::pair<uint64_t, uint64_t>, Block*> cached_;
  uint64_t frees_ = 0;
  std::unordered_set<Block*> live_;
  PoolStats stats_;
};

// The address space tensors see. Not dereferenceable on the CPU: it lies above 2^48.
uint64_t reserve_va(uint64_t size);

}  // namespace webgpu::rt
