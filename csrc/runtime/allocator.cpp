// Caching buffer pool: best-fit reuse of freed blocks, exact statistics, OOM as torch.OutOfMemoryError.
#include "runtime/allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <utility>

#include <c10/util/Exception.h>

#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::rt {

uint64_t reserve_va(uint64_t size) {
  static std::atomic<uint64_t> next{1ull << 48};
  return next.fetch_add((size + 4095) & ~4095ull, std::memory_order_relaxed);
}

uint64_t BufferPool::round_size(uint64_t n) {
  if (n <= 512) return 512;
  if (n < (1ull << 20)) return (n + 511) & ~511ull;
  return (n + (1ull << 16) - 1) & ~((1ull << 16) - 1);
}

BufferPool::~BufferPool() {
  // The process is exiting; Dawn releases the buffers with the device.
  for (auto& [s, b] : cached_) delete b;
  for (Block* b : live_) delete b;
}

namespace {
std::mutex& g_owner_mu = *new std::mutex;
std::unordered_map<WGPUBuffer, int>& g_owner = *new std::unordered_map<WGPUBuffer, int>;
std::atomic<bool> g_several{false};
}  // namespace

int buffer_device(WGPUBuffer b) {
  std::lock_guard<std::mutex> lock(g_owner_mu);
  auto it = g_owner.find(b);
  return it == g_owner.end() ? -1 : it->second;
}
void note_buffer_owner(WGPUBuffer b, int device) {
  std::lock_guard<std::mutex> lock(g_owner_mu);
  g_owner[b] = device;
}
void forget_buffer_owner(WGPUBuffer b) {
  std::lock_guard<std::mutex> lock(g_owner_mu);
  g_owner.erase(b);
}
bool several_devices() { return g_several.load(std::memory_order_relaxed); }
void note_device_created(int index) {
  if (index > 0) g_several.store(true);
}

Buffer BufferPool::create_buffer(uint64_t size, std::string* err, bool* oom) {
  Buffer buf = dev_.create_storage_buffer(size, nullptr, "torch-webgpu storage", err);
  *oom = !buf;
  return buf;
}

Block* BufferPool::allocate(uint64_t nbytes) {
  const uint64_t size = round_size(nbytes);
  const uint64_t max_buffer = dev_.limits().maxBufferSize;
  std::unique_lock<std::mutex> lock(mu_);
  if (nbytes > max_buffer) {
    stats_.num_ooms++;
    TORCH_CHECK_WITH(OutOfMemoryError, false, "webgpu: out of memory: tried to allocate ", nbytes,
                     " bytes, more than this adapter's maxBufferSize limit (", max_buffer, " bytes)");
  }
  // Best fit, wasting at most a quarter of the block (or 1 MiB for small requests); of the blocks of
  // that size, the first in cached_'s order. A request that one storage binding covers never gets a
  // block that one binding does not: kernels that bind whole blocks would refuse the tensor.
  const uint64_t max_binding = dev_.limits().maxStorageBufferBindingSize;
  auto it = cached_.lower_bound({size, 0});
  if (it != cached_.end() && it->first.first <= size + std::max<uint64_t>(size / 4, 1ull << 20) &&
      (size > max_binding || it->first.first <= max_binding)) {
    Block* b = it->second;
    cached_.erase(it);
    live_.insert(b);
    stats_.cache_hits++;
    count_block(&PoolStats::allocation, b->size, 1);
    count_block(&PoolStats::allocated_bytes, b->size, int64_t(b->size));
    return b;
  }
  std::string err;
  bool oom = false;
  Buffer buf = create_buffer(size, &err, &oom);
  if (oom) {
    // Give the cache back and try once more.
    stats_.num_alloc_retries++;
    lock.unlock();
    empty_cache();
    lock.lock();
    buf = create_buffer(size, &err, &oom);
    if (oom) {
      stats_.num_ooms++;
      TORCH_CHECK_WITH(OutOfMemoryError, false, "webgpu: out of memory: tried to allocate ", nbytes, " bytes (",
                       stats_.allocated_bytes[kAllBlocks].current, " bytes allocated by tensors, ",
                       stats_.reserved_bytes[kAllBlocks].current, " reserved). Dawn: ", err);
    }
  }
  auto* b = new Block{std::move(buf), size, reserve_va(size), dev_.index()};
  live_.insert(b);
  count_block(&PoolStats::allocation, size, 1);
  count_block(&PoolStats::allocated_bytes, size, int64_t(size));
  count_block(&PoolStats::segment, size, 1);
  count_block(&PoolStats::reserved_bytes, size, int64_t(size));
  return b;
}

void BufferPool::free(Block* b) {
  // A poisoned result (device-side index error) dies with its block, so a later tensor reusing the
  // buffer does not raise the error (a relaxed load while nothing is poisoned).
  dev_.stream().forget_buffer(b->buffer.get());
  std::lock_guard<std::mutex> lock(mu_);
  if (!live_.erase(b)) return;
  count_block(&PoolStats::allocation, b->size, -1);
  count_block(&PoolStats::allocated_bytes, b->size, -int64_t(b->size));
  // Work already recorded on the stream that uses this block runs before any later reuse, since
  // one queue executes in order; so a freed block is reusable at once.
  static const bool by_address = [] {
    const char* e = std::getenv("TORCH_WEBGPU_ALLOC_REUSE");
    return !(e && std::strcmp(e, "fifo") == 0);
  }();
  cached_.emplace(std::make_pair(b->size, by_address ? b->va : frees_++), b);
}

void BufferPool::release_cached_locked() {
  for (auto& [s, b] : cached_) {
    count_block(&PoolStats::segment, b->size, -1);
    count_block(&PoolStats::reserved_bytes, b->size, -int64_t(b->size));
    {
      std::lock_guard<std::mutex> lock(g_owner_mu);
      g_owner.erase(b->buffer.get());
    }
    procs().wgpuBufferDestroy(b->buffer.get());
    delete b;
  }
  cached_.clear();
}

void BufferPool::empty_cache() {
  // Recorded-but-unsubmitted commands may name cached buffers: submit them before destroying.
  dev_.stream().flush();
  dev_.stream().forget_bind_groups();
  bool released = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    released = !cached_.empty();
    release_cached_locked();
  }
  // Dawn frees destroyed buffers once the GPU is done with them, inside whatever call comes next;
  // for large buffers that took milliseconds of a later op. Free them here, as cudaFree does in
  // torch.cuda.empty_cache(), which also makes the memory available to an OOM retry.
  if (released) dev_.stream().retire();
}

PoolStats BufferPool::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void BufferPool::count_block(StatArray PoolStats::* stat, uint64_t size, int64_t n) {
  StatArray& a = stats_.*stat;
  for (int kind : {int(kAllBlocks), size <= (1u << 20) ? int(kSmallBlocks) : int(kLargeBlocks)})
    n >= 0 ? a[size_t(kind)].increase(n) : a[size_t(kind)].decrease(-n);
}

void BufferPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  for (StatArray* a : {&stats_.allocation, &stats_.segment, &stats_.allocated_bytes, &stats_.reserved_bytes})
    for (Stat& st : *a) st.peak = st.current;
}

void BufferPool::reset_accumulated() {
  std::lock_guard<std::mutex> lock(mu_);
  for (StatArray* a : {&stats_.allocation, &stats_.segment, &stats_.allocated_bytes, &stats_.reserved_bytes})
    for (Stat& st : *a) st.allocated = st.freed = 0;
  stats_.cache_hits = stats_.num_ooms = stats_.num_alloc_retries = 0;
}

}  // namespace webgpu::rt
