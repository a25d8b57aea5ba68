// The caching pool of storage buffers behind every webgpu tensor. A Block owns one WGPUBuffer and a
// range of a fake address space: tensors see that address as data_ptr(), kernels see (buffer, offset).
#pragma once
#include <algorithm>
#include <array>
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

// One statistic as PyTorch's device allocators keep it (c10::CachingDeviceAllocator::Stat): the
// current value, its peak since the last reset_peak, and the sums of increases and decreases since
// the last reset_accumulated.
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t n) {
    current += n;
    allocated += n;
    peak = std::max(peak, current);
  }
  void decrease(int64_t n) {
    current -= n;
    freed += n;
  }
};
// Per kind of block, as CUDA's caching allocator splits them: all, small (<= 1 MiB), large.
enum StatKind { kAllBlocks = 0, kSmallBlocks = 1, kLargeBlocks = 2 };
using StatArray = std::array<Stat, 3>;

struct PoolStats {
  StatArray allocation;  // live blocks (tensors' storages), by count
  StatArray segment;  // buffers the pool holds (live or cached), by count
  StatArray allocated_bytes;  // bytes of live blocks
  StatArray reserved_bytes;  // bytes of the pool's buffers
  int64_t cache_hits = 0;  // allocations served from the cache
  int64_t num_ooms = 0;  // out-of-memory errors raised
  int64_t num_alloc_retries = 0;  // allocations that emptied the cache to retry
};

// Which device a storage buffer belongs to, for refusing operands of another device at dispatch
// (ops that read two webgpu devices' tensors would otherwise bind a foreign buffer). Kept for every
// pool buffer; looked up only once a second device exists (several_devices()).
int buffer_device(WGPUBuffer b);  // -1: not a storage buffer of the pool
// Buffers made outside the pool (GpuDevice::import_host) join and leave that record here.
void note_buffer_owner(WGPUBuffer b, int device);
void forget_buffer_owner(WGPUBuffer b);
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
  void reset_accumulated();

  static uint64_t round_size(uint64_t nbytes);

 private:
  Buffer create_buffer(uint64_t size, std::string* err, bool* oom);
  void release_cached_locked();

  GpuDevice& dev_;
  std::mutex mu_;
  // Free blocks by (size, order): of the blocks of the best size, the first in order. The order is
  // the block's address (the default): a choice that depends only on which blocks are free, so a
  // training step's tensors get the same blocks step after step and the Stream's bind groups (keyed
  // by buffer) keep hitting. TORCH_WEBGPU_ALLOC_REUSE=fifo: when the block was freed, the oldest
  // first (before stop 46), which rotates a loop's tensors through the free blocks of their size:
  // H200, 6 training rows in one call, about half the dispatches made a new bind group each step
  // (CNN 768 per 10 steps, GPT-2 forward 879, BatchNorm 370; by address 228, 161, 10) and GPT-2's
  // forward recorded in 2.0 instead of 1.5 ms of CPU per step (lavapipe host); the rows' GPU-side
  // speed showed no difference beyond the machine's spread (.gpu A/B, stop 46 notes).
  std::map<std::pair<uint64_t, uint64_t>, Block*> cached_;
  uint64_t frees_ = 0;
  std::unordered_set<Block*> live_;
  PoolStats stats_;
  void count_block(StatArray PoolStats::* stat, uint64_t size, int64_t n);
};

// The address space tensors see. Not dereferenceable on the CPU: it lies above 2^48.
uint64_t reserve_va(uint64_t size);

}  // namespace webgpu::rt
