// Command batching, the parameter arena, bind-group cache, uploads and readbacks.
#include "runtime/stream.h"

#include "runtime/allocator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <c10/util/Exception.h>

#include "runtime/device.h"

namespace webgpu::rt {
namespace {
uint64_t ns(std::chrono::steady_clock::duration d) {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

// Exit: once shutdown() began (Python's atexit), a thread other than the one exiting that enters or
// leaves the Stream is parked for good. Otherwise a daemon thread would return from a GPU wait into
// PyTorch's binding, whose GIL re-acquisition during interpreter finalization ends the thread
// with a forced unwind through a noexcept destructor: std::terminate, SIGABRT at every such exit.
// A thread that holds the GIL is never parked (the exiting thread would wait for it forever).
std::atomic<bool> g_closing{false};
std::thread::id g_closer;
bool (*g_may_park)() = nullptr;

// When a thread other than the main one last passed a gate (steady clock, ns).
std::atomic<int64_t> g_other_thread_seen{0};
const std::thread::id g_main_thread = std::this_thread::get_id();  // the thread that loaded us

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void gate_check() {
  if (!g_closing.load(std::memory_order_acquire)) {
    if (std::this_thread::get_id() != g_main_thread) g_other_thread_seen.store(now_ns(), std::memory_order_relaxed);
    return;
  }
  if (std::this_thread::get_id() == g_closer) return;
  if (g_may_park && !g_may_park()) return;
  for (;;) std::this_thread::sleep_for(std::chrono::hours(24));
}

struct Gate {
  Gate() { gate_check(); }
  ~Gate() { gate_check(); }
};
// A public entry point's guard: the gate, then the stream's lock (released before the gate's
// second check).
struct Entry {
  Gate gate;
  std::lock_guard<std::recursive_mutex> lock;
  explicit Entry(std::recursive_mutex& mu) : lock(mu) {}
};
}  // namespace

void Stream::begin_exit() {
  g_closer = std::this_thread::get_id();
  g_closing.store(true, std::memory_order_release);
  // A thread that used the device lately is probably between two gates (in PyTorch's own code
  // around an op): give it time to reach the next one and park, so that it is not caught
  // re-taking the GIL in finalization.
  if (now_ns() - g_other_thread_seen.load(std::memory_order_relaxed) < 2'000'000'000)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void Stream::set_park_probe(bool (*may_park)()) { g_may_park = may_park; }

namespace {
std::atomic<bool> g_kernel_timing{false};
}  // namespace

void set_kernel_timing(bool on) { g_kernel_timing.store(on, std::memory_order_relaxed); }
bool kernel_timing() { return g_kernel_timing.load(std::memory_order_relaxed); }
uint64_t& kernel_tag() {
  thread_local uint64_t tag = 0;
  return tag;
}

Stream::Stream(GpuDevice& dev) : dev_(dev) {
  if (const char* b = std::getenv("TORCH_WEBGPU_BATCH"); b && *b) max_batch_ = std::max(1, std::atoi(b));
  if (const char* g = std::getenv("TORCH_WEBGPU_SUBMIT_GROUPS"); g && *g)
    submit_groups_ = std::strtoull(g, nullptr, 10);
  if (const char* e = std::getenv("TORCH_WEBGPU_EAGER_GROUPS"); e && *e) eager_groups_ = std::strtoull(e, nullptr, 10);
  if (const char* d = std::getenv("TORCH_WEBGPU_SUBMIT_DEPTH"); d && *d)
    submit_depth_ = std::max<size_t>(1, std::strtoull(d, nullptr, 10));
  shadow_.resize(size_t(max_batch_) * kParamBytes);
}

Stream::~Stream() = default;

void Stream::ensure_encoder() {
  if (!encoder_) {
    WGPUCommandEncoderDescriptor d{};
    encoder_ = CommandEncoder(procs().wgpuDeviceCreateCommandEncoder(dev_.device(), &d));
  }
}

void Stream::ensure_pass() {
  const Procs& P = procs();
  ensure_encoder();
  if (!pass_) {
    WGPUComputePassDescriptor d{};
    pass_ = ComputePassEncoder(P.wgpuCommandEncoderBeginComputePass(encoder_.get(), &d));
    bound_pipeline_ = nullptr;
    bound_group_ = nullptr;
  }
}

void Stream::end_pass() {
  if (pass_) {
    procs().wgpuComputePassEncoderEnd(pass_.get());
    pass_ = ComputePassEncoder();
  }
  bound_pipeline_ = nullptr;
  bound_group_ = nullptr;
}

size_t Stream::in_flight_count() {
  // Recycle chunks whose batch the GPU has finished (batches complete in order).
  while (!in_flight_.empty() && future_done(in_flight_.front()->done)) {
    free_chunks_.push_back(in_flight_.front());
    in_flight_.pop_front();
  }
  return in_flight_.size();
}

void Stream::acquire_chunk() {
  in_flight_count();
  if (free_chunks_.empty() && chunks_.size() >= 8) {
    wait_future(in_flight_.front()->done, "a parameter arena");
    counters_.waits++;
    free_chunks_.push_back(in_flight_.front());
    in_flight_.pop_front();
  }
  if (free_chunks_.empty()) {
    WGPUBufferDescriptor d{};
    d.label = sv("torch-webgpu params");
    d.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    d.size = shadow_.size();
    auto c = std::make_unique<Chunk>();
    c->buffer = Buffer(procs().wgpuDeviceCreateBuffer(dev_.device(), &d));
    WGPUBindGroupEntry e{};
    e.binding = 0;
    e.buffer = c->buffer.get();
    e.size = kParamBytes;
    WGPUBindGroupDescriptor bd{};
    bd.layout = dev_.pipelines().params_layout();
    bd.entryCount = 1;
    bd.entries = &e;
    c->params = BindGroup(procs().wgpuDeviceCreateBindGroup(dev_.device(), &bd));
    free_chunks_.push_back(c.get());
    chunks_.push_back(std::move(c));
  }
  chunk_ = free_chunks_.back();
  free_chunks_.pop_back();
  slots_used_ = 0;
}

WGPUBindGroup Stream::bind_group(const Pipeline& p, const Binding* b, uint32_t n) {
  key_.clear();
  key_.push_back(reinterpret_cast<uint64_t>(p.layout.get()));
  for (uint32_t i = 0; i < n; ++i) {
    key_.push_back(reinterpret_cast<uint64_t>(b[i].buffer));
    key_.push_back(b[i].offset);
    key_.push_back(b[i].size);
  }
  auto it = bind_groups_.find(key_);
  if (it != bind_groups_.end()) {
    counters_.bind_group_hits++;
    return it->second.get();
  }
  if (bind_groups_.size() > 8192) bind_groups_.clear();
  std::vector<WGPUBindGroupEntry> e(n);
  for (uint32_t i = 0; i < n; ++i) {
    e[i].binding = i + 1;
    e[i].buffer = b[i].buffer;
    e[i].offset = b[i].offset;
    e[i].size = b[i].size;
  }
  WGPUBindGroupDescriptor d{};
  d.layout = p.layout.get();
  d.entryCount = e.size();
  d.entries = e.data();
  const auto t0 = std::chrono::steady_clock::now();
  BindGroup bg(procs().wgpuDeviceCreateBindGroup(dev_.device(), &d));
  counters_.bind_groups_created++;
  counters_.bind_group_ns += ns(std::chrono::steady_clock::now() - t0);
  WGPUBindGroup raw = bg.get();
  bind_groups_.emplace(key_, std::move(bg));
  return raw;
}

// An operand of another device would be a foreign buffer in this device's bind group (a Dawn
// validation error at submit, after the op returned): refuse it at the call, as CUDA refuses
// operands on two devices.
void Stream::check_same_device(const Binding* b, uint32_t n, const std::string& what) const {
  for (uint32_t i = 0; i < n; ++i) {
    const int d = buffer_device(b[i].buffer);
    TORCH_CHECK(d < 0 || d == dev_.index(),
                "Expected all tensors to be on the same device, but found at least two "
                "devices, webgpu:",
                dev_.index(), " and webgpu:", d, " (webgpu kernel '", what.substr(0, what.find(':', 3)), "')");
  }
}

void Stream::dispatch(const Pipeline& p, const Binding* b, uint32_t n, const uint32_t* params, uint32_t nwords,
                      uint64_t workgroups, bool check_indices, uint64_t weight) {
  TORCH_CHECK(nwords <= kParamWords, "webgpu: kernel '", p.key, "' has too many parameters");
  TORCH_CHECK(n + (check_indices ? 1 : 0) == p.num_storage, "webgpu: kernel '", p.key, "' expects ", p.num_storage,
              " buffers, got ", n + (check_indices ? 1 : 0));
  if (workgroups == 0) return;
  // A binding past the adapter's limit would fail only at submit, as an unrelated later error, and
  // leave the result unwritten: refuse it here, naming the kernel and the limit. (The elementwise
  // engine and reductions bind windows and never get here with one.)
  const uint64_t max_bind = dev_.limits().maxStorageBufferBindingSize;
  for (uint32_t i = 0; i < n; ++i)
    TORCH_CHECK_WITH(NotImplementedError, b[i].size <= max_bind, "webgpu: kernel '",
                     p.key.substr(0, p.key.find(':', 3)), "' would bind an operand of ", b[i].size,
                     " bytes, more than this adapter's maxStorageBufferBindingSize (", max_bind,
                     " bytes); this op does not split such tensors yet. Work on smaller pieces (e.g. "
                     "torch.split / chunks along the first dimension), or move this step to the CPU.");
  if (several_devices()) check_same_device(b, n, p.key);
  Entry entry(mu_);
  const auto t_start = std::chrono::steady_clock::now();
  const Procs& P = procs();
  // A checking kernel's own error slot (may submit and read the slots first when all are taken).
  std::vector<Binding> with_slot;
  uint32_t slot = 0;
  if (check_indices) {
    slot = error_slot_locked();
    with_slot.assign(b, b + n);
    with_slot.push_back({errors_.get(), slot * slot_stride_, kErrorWords * 4});
  }
  const Binding* bound = check_indices ? with_slot.data() : b;
  if (!chunk_) acquire_chunk();
  // While the profiler times kernels, each dispatch gets a pass of its own whose begin and end
  // write timestamps (no Dawn extension needed); otherwise all share the open pass.
  const bool timed = kernel_timing() && dev_.has_timestamp();
  if (timed)
    timed_dispatch_begin();
  else
    ensure_pass();
  const uint32_t pslot = slots_used_++;
  std::memcpy(shadow_.data() + size_t(pslot) * kParamBytes, params, nwords * 4);
  WGPUBindGroup bg = bind_group(p, bound, p.num_storage);
  uint32_t dyn = pslot * kParamBytes;
  // Bindings persist across dispatches in a pass: set only what changed (a bind group still bound
  // is referenced by the pass, so its address cannot be reused by a new one while the pass is open).
  if (p.pipeline.get() != bound_pipeline_) {
    P.wgpuComputePassEncoderSetPipeline(pass_.get(), p.pipeline.get());
    bound_pipeline_ = p.pipeline.get();
  }
  if (bg != bound_group_) {
    P.wgpuComputePassEncoderSetBindGroup(pass_.get(), 0, bg, 0, nullptr);
    bound_group_ = bg;
  }
  P.wgpuComputePassEncoderSetBindGroup(pass_.get(), 1, chunk_->params.get(), 1, &dyn);
  const uint64_t maxd = dev_.limits().maxComputeWorkgroupsPerDimension;
  uint64_t x = std::min<uint64_t>(workgroups, maxd);
  uint64_t y = (workgroups + x - 1) / x, z = 1;
  if (y > maxd) {
    z = (y + maxd - 1) / maxd;
    y = maxd;
  }
  TORCH_CHECK(z <= maxd, "webgpu: dispatch of ", workgroups, " workgroups is too large");
  P.wgpuComputePassEncoderDispatchWorkgroups(pass_.get(), uint32_t(x), uint32_t(y), uint32_t(z));
  if (timed) timed_dispatch_end(p);
  counters_.dispatches++;
  recorded_++;
  // Blocks written from a tainted block, or by a checking kernel, carry the taint (cheap no-op
  // while no checking kernel is unread and nothing is poisoned).
  if (check_indices || tainted_.load(std::memory_order_relaxed))
    taint_locked(p, b, n, check_indices ? &pending_[slot] : nullptr);
  // A batch holding real GPU work goes early, so that the GPU runs it while the CPU records the
  // next ops (otherwise a loop of large ops idles the GPU for all its recording time): once it has
  // grown to submit_groups_ workgroups, or right after a large dispatch. Dispatches of small ops
  // alone never submit early: a model of many small ops keeps few submits (an early submit after
  // every 1024 workgroups of them took a GPT-2 forward from 264 to 130 per second on an H200).
  // Neither early rule fires while submit_depth_ batches are still unfinished: the GPU has work,
  // and a submit costs CPU time (H200: 4096x4096 softmax in a loop, every kernel its own submit,
  // 952 GB/s; with the depth rule 2100-3170 GB/s, benchmarks/probe_bw.py).
  // `weight` (when larger) stands for a dispatch whose workgroups each do much work.
  const uint64_t work = std::max(workgroups, weight);
  groups_ += work;
  counters_.dispatch_ns += ns(std::chrono::steady_clock::now() - t_start);
  if (slots_used_ >= max_batch_ || (timing_ && timing_->kernels.size() * 2 >= timing_capacity_) ||
      (submit_groups_ && (groups_ >= submit_groups_ || work >= eager_groups_) && in_flight_count() < submit_depth_))
    flush_locked();
}

void Stream::copy(WGPUBuffer src, uint64_t so, WGPUBuffer dst, uint64_t doff, uint64_t size) {
  if (size == 0) return;
  if (several_devices()) {
    const Binding b[2] = {{src, so, size}, {dst, doff, size}};
    check_same_device(b, 2, "copy");
  }
  Entry entry(mu_);
  end_pass();
  ensure_encoder();
  procs().wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), src, so, dst, doff, size);
  if (tainted_.load(std::memory_order_relaxed)) {
    auto it = taint_.find(src);
    if (it != taint_.end()) {
      const std::vector<uint64_t> ids = it->second;
      std::vector<uint64_t>& d = taint_[dst];
      std::vector<uint64_t> u;
      std::set_union(d.begin(), d.end(), ids.begin(), ids.end(), std::back_inserter(u));
      d = std::move(u);
    }
  }
  counters_.copies++;
  recorded_++;
  if (recorded_ >= max_batch_) flush_locked();
}

void Stream::flush_locked() {
  if (!encoder_) return;
  const auto t_start = std::chrono::steady_clock::now();
  const Procs& P = procs();
  end_pass();
  if (timing_) resolve_timing_locked();
  if (chunk_ && slots_used_ > 0)
    P.wgpuQueueWriteBuffer(dev_.queue(), chunk_->buffer.get(), 0, shadow_.data(), size_t(slots_used_) * kParamBytes);
  WGPUCommandBufferDescriptor cd{};
  CommandBuffer cb(P.wgpuCommandEncoderFinish(encoder_.get(), &cd));
  encoder_ = CommandEncoder();
  WGPUCommandBuffer raw = cb.get();
  P.wgpuQueueSubmit(dev_.queue(), 1, &raw);
  counters_.submits++;
  if (chunk_) {
    WGPUQueueWorkDoneCallbackInfo wd{};
    wd.mode = WGPUCallbackMode_WaitAnyOnly;
    wd.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void*, void*) {};
    chunk_->done = P.wgpuQueueOnSubmittedWorkDone(dev_.queue(), wd);
    in_flight_.push_back(chunk_);
    chunk_ = nullptr;
  }
  recorded_ = 0;
  slots_used_ = 0;
  groups_ = 0;
  counters_.submit_ns += ns(std::chrono::steady_clock::now() - t_start);
}

void Stream::flush() {
  Entry entry(mu_);
  flush_locked();
}

void Stream::synchronize() {
  Entry entry(mu_);
  wait_idle_locked();
  dev_.check_errors();
  if (armed_) read_locked(nullptr, 0, nullptr, 0, true);
  if (!found_.empty()) raise_errors_locked(nullptr);
}

namespace {
// memcpy to or from a mapped staging buffer on several threads for large copies: one thread reads
// mapped memory at about 5 GB/s (measured on an H200 host), well below what the bus and memory give.
// TORCH_WEBGPU_COPY_THREADS caps the threads (default 8; 1: a plain memcpy).
uint64_t copy_threads() {
  static const uint64_t n = [] {
    const char* e = std::getenv("TORCH_WEBGPU_COPY_THREADS");
    const uint64_t hw = std::max(1u, std::thread::hardware_concurrency());
    return std::min<uint64_t>(hw, e && *e ? std::max(1, std::atoi(e)) : 8);
  }();
  return n;
}

void parallel_memcpy(void* dst, const void* src, uint64_t n) {
  constexpr uint64_t kPerThread = 4ull << 20;
  const uint64_t parts = std::min<uint64_t>(n / kPerThread, copy_threads());
  if (parts < 2) {
    std::memcpy(dst, src, n);
    return;
  }
  // Parts of ceil(n / parts) bytes rounded up to 64: rounding n / parts down first lost the last
  // n % parts bytes whenever the quotient was already a multiple of 64 (an 8 MiB + 1 byte read).
  const uint64_t step = ((n + parts - 1) / parts + 63) & ~uint64_t(63);
  std::vector<std::thread> threads;
  for (uint64_t i = 1; i < parts; ++i) {
    const uint64_t b = i * step, e = std::min(n, b + step);
    if (b < e)
      threads.emplace_back(
          [=] { std::memcpy(static_cast<uint8_t*>(dst) + b, static_cast<const uint8_t*>(src) + b, e - b); });
  }
  std::memcpy(dst, src, std::min(n, step));
  for (auto& t : threads) t.join();
}
}  // namespace

namespace {
// Requests a buffer's mapping without waiting; `result` (new) receives its status when a wait on the
// returned future sees it complete. The callback owns a reference to it, so a mapping still
// pending when its requester is gone writes into memory that is still alive.
WGPUFuture request_map(WGPUBuffer b, uint32_t mode, uint64_t size, std::shared_ptr<AsyncRead::Result>& result) {
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView msg, void* ud, void*) {
    auto* r = static_cast<std::shared_ptr<AsyncRead::Result>*>(ud);
    (*r)->status = status;
    (*r)->message = str(msg);
    delete r;
  };
  result = std::make_shared<AsyncRead::Result>();
  cb.userdata1 = new std::shared_ptr<AsyncRead::Result>(result);
  return procs().wgpuBufferMapAsync(b, mode, 0, size, cb);
}
}  // namespace

Buffer Stream::staging_buffer(uint32_t usage, uint64_t size, bool mapped, const char* label, const char* what) {
  WGPUBufferDescriptor d{};
  d.label = sv(label);
  d.usage = usage;
  d.size = size;
  d.mappedAtCreation = mapped;
  dev_.push_error_scope(WGPUErrorFilter_OutOfMemory);
  Buffer b(procs().wgpuDeviceCreateBuffer(dev_.device(), &d));
  auto err = dev_.pop_error_scope();
  TORCH_CHECK_WITH(OutOfMemoryError, err.first == WGPUErrorType_NoError, "webgpu: out of memory allocating ", what,
                   " (", size, " bytes): ", err.second);
  return b;
}

void Stream::write(WGPUBuffer dst, uint64_t off, const void* data, uint64_t size) {
  TORCH_CHECK(off % 4 == 0 && size % 4 == 0, "webgpu: internal: unaligned queue write");
  if (size == 0) return;
  Entry entry(mu_);
  flush_locked();
  counters_.uploads++;
  if (size <= kUploadDirectMax) {
    procs().wgpuQueueWriteBuffer(dev_.queue(), dst, off, const_cast<void*>(data), size);
    return;
  }
  // Large uploads go through staging buffers of our own (take_upload_locked): Dawn would stage such
  // a write in a host buffer allocated for it and free that later, and on NVIDIA that release
  // stalled an unrelated op's submit for milliseconds per 256 MiB (the sum benchmark's first windows
  // ran at a quarter of their speed). Filling one buffer overlaps the GPU's copy out of another.
  const Procs& P = procs();
  for (uint64_t done = 0; done < size;) {
    const uint64_t n = std::min(kUploadChunk, size - done);
    AsyncWrite st = take_upload_locked();
    staged_write_locked(st, dst, off + done, static_cast<const uint8_t*>(data) + done, n);
    upload_.push_back(std::move(st));
    done += n;
  }
}

// An upload buffer mapped for writing: one whose requested mapping is done, else a new one while
// there are fewer than kUploadBuffers, else the oldest once its mapping completes. A pipeline of
// uploads recorded ahead of the GPU (DDP's gradient buckets at the end of a backward pass) then
// does not wait for the GPU to reach each earlier copy.
AsyncWrite Stream::take_upload_locked() {
  for (auto it = upload_.begin(); it != upload_.end(); ++it)
    if (write_mapped_locked(*it, false)) {
      AsyncWrite st = std::move(*it);
      upload_.erase(it);
      return st;
    }
  if (upload_.size() < kUploadBuffers) {
    AsyncWrite st;
    st.capacity = kUploadChunk;
    st.buffer = staging_buffer(WGPUBufferUsage_MapWrite | WGPUBufferUsage_CopySrc, kUploadChunk, true,
                               "torch-webgpu upload", "an upload buffer");
    st.mapped = true;
    return st;
  }
  AsyncWrite st = std::move(upload_.front());  // staged_write_locked waits for its mapping
  upload_.pop_front();
  return st;
}

bool Stream::write_mapped_locked(AsyncWrite& w, bool wait) {
  if (w.mapped) return true;
  if (!wait && !future_done(w.future)) return false;
  if (wait) {
    wait_future(w.future, "an upload buffer");
    counters_.waits++;
  }
  TORCH_CHECK(w.result->status == WGPUMapAsyncStatus_Success,
              "webgpu: mapping an upload buffer failed: ", w.result->message);
  return w.mapped = true;
}

void Stream::staged_write_locked(AsyncWrite& w, WGPUBuffer dst, uint64_t off, const void* data, uint64_t n) {
  const Procs& P = procs();
  write_mapped_locked(w, true);
  void* p = P.wgpuBufferGetMappedRange(w.buffer.get(), 0, w.capacity);
  TORCH_CHECK(p, "webgpu: mapping an upload buffer failed");
  parallel_memcpy(p, data, n);
  P.wgpuBufferUnmap(w.buffer.get());
  w.mapped = false;
  end_pass();
  ensure_encoder();
  P.wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), w.buffer.get(), 0, dst, off, n);
  flush_locked();  // a buffer in an unsubmitted command may not be mapped
  // Ask for the mapping again now: it completes when the GPU has done this copy.
  w.future = request_map(w.buffer.get(), WGPUMapMode_Write, w.capacity, w.result);
}

void Stream::release_in_flight_locked() {
  while (!in_flight_.empty()) {
    free_chunks_.push_back(in_flight_.front());
    in_flight_.pop_front();
  }
}

void Stream::map_locked(WGPUBuffer b, uint32_t mode, uint64_t size, const char* what) {
  struct Result {
    WGPUMapAsyncStatus status{};
    std::string msg;
  } r;
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView msg, void* ud, void*) {
    auto* r = static_cast<Result*>(ud);
    r->status = status;
    r->msg = str(msg);
  };
  cb.userdata1 = &r;
  wait_future(procs().wgpuBufferMapAsync(b, mode, 0, size, cb), what);
  counters_.waits++;
  TORCH_CHECK(r.status == WGPUMapAsyncStatus_Success, "webgpu: mapping a buffer for ", what, " failed: ", r.msg);
}

void Stream::quiesce() {
  Entry entry(mu_);
  wait_idle_locked();
}

void Stream::retire() {
  Entry entry(mu_);
  retire_locked();
}

void Stream::retire_locked() {
  // Dawn frees a destroyed buffer, or a write's staging, once a submission made after it has
  // completed, at the next device tick: submit (an empty command buffer if nothing is open), wait
  // and tick.
  ensure_encoder();
  wait_idle_locked();
  procs().wgpuDeviceTick(dev_.device());
  while (upload_.size() > 2) upload_.pop_back();  // keep two upload buffers, as an idle stream needs
  // The driver may finish releasing memory in its next submission (seen on NVIDIA: 3 ms per
  // 256 MiB freed, inside the next op's submit): make that submission here too.
  ensure_encoder();
  wait_idle_locked();
}

void Stream::wait_idle_locked() {
  flush_locked();
  WGPUQueueWorkDoneCallbackInfo wd{};
  wd.mode = WGPUCallbackMode_WaitAnyOnly;
  wd.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void*, void*) {};
  wait_future(procs().wgpuQueueOnSubmittedWorkDone(dev_.queue(), wd), "the queue");
  counters_.waits++;
  release_in_flight_locked();
}

void Stream::read(WGPUBuffer src, uint64_t off, void* out, uint64_t size) {
  if (size == 0 && !armed_) return;
  Entry entry(mu_);
  read_locked(src, off, out, size, armed_);
  if (!found_.empty()) raise_errors_locked(src);
}

void Stream::read_locked(WGPUBuffer src, uint64_t off, void* out, uint64_t size, bool with_errors) {
  const Procs& P = procs();
  const uint64_t lo = off & ~3ull, hi = (off + size + 3) & ~3ull, n = size ? hi - lo : 0;
  // The armed error slots ride along after the data, in the same copy-and-map.
  with_errors = with_errors && !pending_.empty();
  static const bool chunked = [] {  // TORCH_WEBGPU_READ_CHUNKED=0: one staging buffer (A/B)
    const char* e = std::getenv("TORCH_WEBGPU_READ_CHUNKED");
    return !(e && std::string(e) == "0");
  }();
  if (chunked && src && n >= 2 * kReadChunk) {  // large: in chunks, then the error slots on their own
    read_chunked_locked(src, off, out, size);
    if (with_errors) read_locked(nullptr, 0, nullptr, 0, true);
    return;
  }
  const uint64_t slot_bytes = with_errors ? (pending_.size() - 1) * slot_stride_ + kErrorWords * 4 : 0;
  const uint64_t total = n + slot_bytes;
  if (total == 0) return;
  if (staging_size_ < total) {
    uint64_t s = 1 << 16;
    while (s < total) s <<= 1;
    staging_ = staging_buffer(WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, s, false, "torch-webgpu readback",
                              "a readback buffer");
    staging_size_ = s;
  }
  end_pass();
  ensure_encoder();
  if (n) P.wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), src, lo, staging_.get(), 0, n);
  if (with_errors)  // every armed slot: everything recorded so far is covered by this copy
    P.wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), errors_.get(), 0, staging_.get(), n, slot_bytes);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  flush_locked();
  map_locked(staging_.get(), WGPUMapMode_Read, total, "a readback");
  const auto t1 = clock::now();
  counters_.readbacks++;
  const void* mapped = P.wgpuBufferGetConstMappedRange(staging_.get(), 0, total);
  TORCH_CHECK(mapped, "webgpu: mapping the readback buffer failed");
  if (size) parallel_memcpy(out, static_cast<const uint8_t*>(mapped) + (off - lo), size);
  counters_.readback_bytes += size;
  counters_.readback_wait_ns += ns(t1 - t0);
  counters_.readback_copy_ns += ns(clock::now() - t1);
  if (with_errors) collect_errors_locked(static_cast<const uint8_t*>(mapped) + n);
  P.wgpuBufferUnmap(staging_.get());
  // Everything submitted before the copy is done: the arena chunks are free again.
  release_in_flight_locked();
  dev_.check_errors();
}

void Stream::read_start(AsyncRead& a, WGPUBuffer src, uint64_t off, uint64_t size) {
  Entry entry(mu_);
  TORCH_CHECK(!a.pending, "webgpu: internal: an asynchronous read was started twice");
  a.size = size;
  if (size == 0) return;
  const uint64_t lo = off & ~3ull, hi = (off + size + 3) & ~3ull, n = hi - lo;
  if (a.capacity < n || !a.buffer) {
    a.capacity = std::max<uint64_t>((n + 0xffff) & ~uint64_t(0xffff), 1 << 16);
    a.buffer = staging_buffer(WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, a.capacity, false,
                              "torch-webgpu async readback", "a readback buffer");
  }
  a.bytes = n, a.skew = off - lo, a.stream = this;
  end_pass();
  ensure_encoder();
  procs().wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), src, lo, a.buffer.get(), 0, n);
  flush_locked();
  a.future = request_map(a.buffer.get(), WGPUMapMode_Read, n, a.result);
  a.pending = true, a.mapped = false;
}

bool Stream::read_ready(AsyncRead& a) {
  Entry entry(mu_);
  if (a.pending && !a.mapped) a.mapped = future_done(a.future);
  return !a.pending || a.mapped;
}

void Stream::read_finish(AsyncRead& a, void* out) {
  Entry entry(mu_);
  if (a.size == 0) return;
  TORCH_CHECK(a.pending, "webgpu: internal: finishing an asynchronous read that was not started");
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (!a.mapped) wait_future(a.future, "a readback");
  const auto t1 = clock::now();
  a.pending = a.mapped = false;
  TORCH_CHECK(a.result->status == WGPUMapAsyncStatus_Success,
              "webgpu: mapping a buffer for a readback failed: ", a.result->message);
  const auto* mapped = static_cast<const uint8_t*>(procs().wgpuBufferGetConstMappedRange(a.buffer.get(), 0, a.bytes));
  TORCH_CHECK(mapped, "webgpu: mapping the readback buffer failed");
  parallel_memcpy(out, mapped + a.skew, a.size);
  procs().wgpuBufferUnmap(a.buffer.get());
  counters_.readbacks++;
  counters_.waits++;
  counters_.readback_bytes += a.size;
  counters_.readback_wait_ns += ns(t1 - t0);
  counters_.readback_copy_ns += ns(clock::now() - t1);
  dev_.check_errors();
}

void Stream::write_with(AsyncWrite& w, WGPUBuffer dst, uint64_t off, const void* data, uint64_t size) {
  TORCH_CHECK(off % 4 == 0 && size % 4 == 0, "webgpu: internal: unaligned staged write");
  if (size == 0) return;
  Entry entry(mu_);
  if (w.capacity < size) {
    w.capacity = (size + 0xffff) & ~uint64_t(0xffff);
    w.buffer = staging_buffer(WGPUBufferUsage_MapWrite | WGPUBufferUsage_CopySrc, w.capacity, true,
                              "torch-webgpu staged upload", "an upload buffer");
    w.mapped = true;
  }
  staged_write_locked(w, dst, off, data, size);  // its mapping is done long ago when reused per step
  counters_.uploads++;
}

// A large read in chunks of kReadChunk through two staging buffers in turns: while one chunk is
// copied out of its mapped buffer, the GPU copies the next into the other. The readback of one
// large buffer at once mapped a staging buffer of the next power of two and copied nothing out
// until the GPU's whole copy was done.
void Stream::read_chunked_locked(WGPUBuffer src, uint64_t off, void* out, uint64_t size) {
  const Procs& P = procs();
  const uint64_t lo = off & ~3ull, hi = (off + size + 3) & ~3ull;
  const uint64_t chunks = (hi - lo + kReadChunk - 1) / kReadChunk;
  for (auto& b : read_chunks_)
    if (!b)
      b = staging_buffer(WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, kReadChunk, false,
                         "torch-webgpu chunked readback", "a readback buffer");
  // Chunk k covers source bytes [lo + k * kReadChunk, min(hi, that + kReadChunk)), all multiples of 4.
  auto begin = [&](uint64_t k) { return lo + k * kReadChunk; };
  auto end = [&](uint64_t k) { return std::min(hi, begin(k) + kReadChunk); };
  auto issue = [&](uint64_t k) {
    end_pass();
    ensure_encoder();
    P.wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), src, begin(k), read_chunks_[k & 1].get(), 0,
                                           end(k) - begin(k));
    flush_locked();
  };
  using clock = std::chrono::steady_clock;
  issue(0);
  if (chunks > 1) issue(1);
  for (uint64_t k = 0; k < chunks; ++k) {
    WGPUBuffer b = read_chunks_[k & 1].get();
    const uint64_t len = end(k) - begin(k);
    const auto t0 = clock::now();
    map_locked(b, WGPUMapMode_Read, len, "a readback");
    const auto t1 = clock::now();
    const auto* mapped = static_cast<const uint8_t*>(P.wgpuBufferGetConstMappedRange(b, 0, len));
    TORCH_CHECK(mapped, "webgpu: mapping the readback buffer failed");
    // The bytes of [off, off + size) inside this chunk.
    const uint64_t from = std::max(begin(k), off), to = std::min(end(k), off + size);
    if (to > from) parallel_memcpy(static_cast<uint8_t*>(out) + (from - off), mapped + (from - begin(k)), to - from);
    P.wgpuBufferUnmap(b);
    counters_.readback_wait_ns += ns(t1 - t0);
    counters_.readback_copy_ns += ns(clock::now() - t1);
    if (k + 2 < chunks) issue(k + 2);
  }
  counters_.readbacks++;
  counters_.readback_bytes += size;
  // Everything submitted before the last copy is done: the arena chunks are free again.
  release_in_flight_locked();
  dev_.check_errors();
}

namespace {
std::mutex g_op_mu;
std::vector<std::pair<std::string, bool>> g_ops;
}  // namespace

uint32_t Stream::error_op_code(const std::string& op, bool index_error) {
  std::lock_guard<std::mutex> lock(g_op_mu);
  for (size_t i = 0; i < g_ops.size(); ++i)
    if (g_ops[i].first == op && g_ops[i].second == index_error) return uint32_t(i);
  g_ops.emplace_back(op, index_error);
  return uint32_t(g_ops.size() - 1);
}

uint32_t Stream::error_slot_locked() {
  if (!errors_) {
    slot_stride_ = std::max<uint64_t>(dev_.limits().minStorageBufferOffsetAlignment, kErrorWords * 4);
    WGPUBufferDescriptor d{};
    d.label = sv("torch-webgpu index errors");
    d.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    d.size = kErrorSlots * slot_stride_;  // created zeroed
    errors_ = Buffer(procs().wgpuDeviceCreateBuffer(dev_.device(), &d));
  }
  const std::thread::id me = std::this_thread::get_id();
  if (pending_.size() < kErrorSlots) {
    ErrorRecord r;
    r.id = ++next_error_id_;
    r.owner = me;
    r.slot = uint32_t(pending_.size());
    pending_.push_back(r);
    armed_ = true;
    return r.slot;
  }
  // All slots armed: share this thread's latest (its first bad index wins; everything either
  // dispatch writes is poisoned by it), else read the slots now.
  for (size_t i = pending_.size(); i-- > 0;)
    if (pending_[i].owner == me) return uint32_t(i);
  check_slots_locked();
  return error_slot_locked();
}

void Stream::check_slots_locked() { read_locked(nullptr, 0, nullptr, 0, true); }

void Stream::taint_locked(const Pipeline& p, const Binding* b, uint32_t n, const ErrorRecord* armed) {
  std::vector<uint64_t> ids;
  if (!taint_.empty())
    for (uint32_t i = 0; i < n; ++i) {
      auto it = taint_.find(b[i].buffer);
      if (it != taint_.end()) ids.insert(ids.end(), it->second.begin(), it->second.end());
    }
  if (armed) ids.push_back(armed->id);
  if (ids.empty()) return;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (uint32_t i = 0; i < n; ++i) {
    if (p.readonly_mask >> i & 1) continue;  // read only: not written
    std::vector<uint64_t>& d = taint_[b[i].buffer];
    std::vector<uint64_t> u;
    std::set_union(d.begin(), d.end(), ids.begin(), ids.end(), std::back_inserter(u));
    d = std::move(u);
  }
  tainted_.store(true, std::memory_order_release);
}

void Stream::untaint_locked(const std::vector<uint64_t>& ids) {
  if (ids.empty()) return;
  for (auto it = taint_.begin(); it != taint_.end();) {
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](uint64_t x) { return std::find(ids.begin(), ids.end(), x) != ids.end(); }),
            v.end());
    it = v.empty() ? taint_.erase(it) : std::next(it);
  }
  tainted_.store(!taint_.empty(), std::memory_order_release);
}

void Stream::collect_errors_locked(const uint8_t* slots) {
  // Called with the readback mapped: the GPU has finished everything the armed slots cover.
  std::vector<uint64_t> clean;
  const uint32_t zeros[kErrorWords] = {};
  for (ErrorRecord& r : pending_) {
    std::memcpy(r.words, slots + r.slot * slot_stride_, sizeof(r.words));
    if (r.words[0] == 0) {
      clean.push_back(r.id);
      continue;
    }
    // Clear the slot for its next use (the queue is idle, and nothing is recorded meanwhile).
    procs().wgpuQueueWriteBuffer(dev_.queue(), errors_.get(), r.slot * slot_stride_, const_cast<uint32_t*>(zeros),
                                 sizeof(zeros));
    found_.push_back(r);
  }
  pending_.clear();
  armed_ = false;
  untaint_locked(clean);
}

void Stream::raise_errors_locked(WGPUBuffer src) {
  // This thread's own errors first: all of them go (the first is reported, as CUDA reports one).
  const std::thread::id me = std::this_thread::get_id();
  std::vector<uint64_t> ids;
  const ErrorRecord* first = nullptr;
  for (const ErrorRecord& r : found_)
    if (r.owner == me) {
      ids.push_back(r.id);
      if (!first) first = &r;
    }
  // Otherwise an error that poisoned what this read copies.
  if (!first && src) {
    auto it = taint_.find(src);
    if (it != taint_.end())
      for (const ErrorRecord& r : found_)
        if (std::find(it->second.begin(), it->second.end(), r.id) != it->second.end()) {
          ids.push_back(r.id);
          first = &r;
          break;
        }
  }
  if (!first) return;
  uint32_t words[kErrorWords];
  std::memcpy(words, first->words, sizeof(words));
  found_.erase(
      std::remove_if(found_.begin(), found_.end(),
                     [&](const ErrorRecord& r) { return std::find(ids.begin(), ids.end(), r.id) != ids.end(); }),
      found_.end());
  untaint_locked(ids);
  raise_index_error(words);
}

void Stream::forget_buffer(WGPUBuffer b) {
  if (!tainted_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  taint_.erase(b);
  tainted_.store(!taint_.empty(), std::memory_order_release);
}

Stream::ErrorState Stream::error_state() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return {pending_.size(), found_.size(), taint_.size()};
}

void Stream::raise_index_error(const uint32_t* w) {
  std::string op = "an indexing op";
  bool index_error = true;
  {
    std::lock_guard<std::mutex> lock(g_op_mu);
    if (w[1] < g_ops.size()) std::tie(op, index_error) = g_ops[w[1]];
  }
  const int64_t idx = int64_t(uint64_t(w[3]) | (uint64_t(w[4]) << 32));
  const int64_t sz = int64_t(uint64_t(w[5]) | (uint64_t(w[6]) << 32));
  const std::string msg = c10::str(op, ": index ", idx, " is out of bounds for dimension ", w[2], " with size ", sz,
                                   " (webgpu checks indices on the device and reports a bad one when a result it "
                                   "affected is read, or at the recording thread's next synchronization)");
  TORCH_CHECK_INDEX(!index_error, msg);
  TORCH_CHECK(false, msg);
}

void Stream::forget_bind_groups() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  bind_groups_.clear();
}

// ---- Kernel timing (the profiler) ----

void Stream::timed_dispatch_begin() {
  const Procs& P = procs();
  end_pass();
  ensure_encoder();
  if (!timing_) {
    // Two queries per dispatch; a query set holds at most 4096 (WebGPU's limit).
    timing_capacity_ = std::min<uint32_t>(4096, 2 * std::max<uint32_t>(max_batch_, 16));
    auto t = std::make_unique<TimedBatch>();
    WGPUQuerySetDescriptor qd{};
    qd.label = sv("torch-webgpu kernel timestamps");
    qd.type = WGPUQueryType_Timestamp;
    qd.count = timing_capacity_;
    t->queries = QuerySet(P.wgpuDeviceCreateQuerySet(dev_.device(), &qd));
    timing_ = std::move(t);
  }
  const uint32_t q = uint32_t(timing_->kernels.size() * 2);
  WGPUPassTimestampWrites tw{};
  tw.querySet = timing_->queries.get();
  tw.beginningOfPassWriteIndex = q;
  tw.endOfPassWriteIndex = q + 1;
  WGPUComputePassDescriptor d{};
  d.timestampWrites = &tw;
  pass_ = ComputePassEncoder(P.wgpuCommandEncoderBeginComputePass(encoder_.get(), &d));
}

void Stream::timed_dispatch_end(const Pipeline& p) {
  end_pass();
  KernelTime k;
  k.name = p.key;
  k.tag = kernel_tag();
#if defined(__linux__)
  k.thread = int32_t(::syscall(SYS_gettid));
#else
  k.thread = int32_t(std::hash<std::thread::id>()(std::this_thread::get_id()));
#endif
  timing_->kernels.push_back(std::move(k));
}

namespace {
Buffer make_buffer(GpuDevice& dev, uint64_t size, uint64_t usage, const char* label) {
  WGPUBufferDescriptor d{};
  d.label = sv(label);
  d.usage = usage;
  d.size = size;
  dev.push_error_scope(WGPUErrorFilter_OutOfMemory);
  Buffer b(procs().wgpuDeviceCreateBuffer(dev.device(), &d));
  auto err = dev.pop_error_scope();
  TORCH_CHECK_WITH(OutOfMemoryError, err.first == WGPUErrorType_NoError, "webgpu: out of memory allocating a ", size,
                   "-byte ", label, " buffer: ", err.second);
  return b;
}
}  // namespace

void Stream::resolve_timing_locked() {
  // Called inside flush_locked with the pass ended: resolve this batch's timestamps into a buffer
  // the CPU maps later (take_kernel_times), so that profiling adds no wait per batch.
  std::unique_ptr<TimedBatch> t = std::move(timing_);
  if (t->kernels.empty()) return;
  const Procs& P = procs();
  const uint64_t n = t->kernels.size() * 2, bytes = n * 8;
  t->resolve = make_buffer(dev_, bytes, WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc, "timestamp resolve");
  t->readback = make_buffer(dev_, bytes, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "timestamp readback");
  P.wgpuCommandEncoderResolveQuerySet(encoder_.get(), t->queries.get(), 0, uint32_t(n), t->resolve.get(), 0);
  P.wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), t->resolve.get(), 0, t->readback.get(), 0, bytes);
  timed_.push_back(std::move(t));
}

void Stream::read_timing_locked() {
  const Procs& P = procs();
  for (auto& t : timed_) {
    const uint64_t bytes = t->kernels.size() * 16;
    map_locked(t->readback.get(), WGPUMapMode_Read, bytes, "kernel timestamps");
    const auto* ts = static_cast<const uint64_t*>(P.wgpuBufferGetConstMappedRange(t->readback.get(), 0, bytes));
    TORCH_CHECK(ts, "webgpu: mapping the kernel timestamps failed");
    for (size_t i = 0; i < t->kernels.size(); ++i) {
      t->kernels[i].begin_ns = ts[2 * i];
      t->kernels[i].end_ns = std::max(ts[2 * i + 1], ts[2 * i]);
      kernel_times_.push_back(std::move(t->kernels[i]));
    }
    P.wgpuBufferUnmap(t->readback.get());
  }
  timed_.clear();
}

std::vector<KernelTime> Stream::take_kernel_times() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  wait_idle_locked();
  read_timing_locked();
  return std::exchange(kernel_times_, {});
}

// ---- Marks (events) ----

std::shared_ptr<Stream::Mark> Stream::mark(bool timed) {
  Entry entry(mu_);
  const Procs& P = procs();
  auto m = std::make_shared<Mark>();
  if (timed && dev_.has_timestamp()) {
    // An empty pass whose beginning writes the timestamp: ordered after everything recorded so
    // far, as a CUDA event's timestamp is.
    end_pass();
    ensure_encoder();
    WGPUQuerySetDescriptor qd{};
    qd.label = sv("torch-webgpu event timestamp");
    qd.type = WGPUQueryType_Timestamp;
    qd.count = 1;
    QuerySet qs(P.wgpuDeviceCreateQuerySet(dev_.device(), &qd));
    WGPUPassTimestampWrites tw{};
    tw.querySet = qs.get();
    tw.beginningOfPassWriteIndex = 0;
    tw.endOfPassWriteIndex = WGPU_QUERY_SET_INDEX_UNDEFINED;
    WGPUComputePassDescriptor d{};
    d.timestampWrites = &tw;
    ComputePassEncoder pass(P.wgpuCommandEncoderBeginComputePass(encoder_.get(), &d));
    P.wgpuComputePassEncoderEnd(pass.get());
    Buffer resolve =
        make_buffer(dev_, 256, WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc, "timestamp resolve");
    m->readback = make_buffer(dev_, 8, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "timestamp readback");
    P.wgpuCommandEncoderResolveQuerySet(encoder_.get(), qs.get(), 0, 1, resolve.get(), 0);
    P.wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), resolve.get(), 0, m->readback.get(), 0, 8);
    m->has_time = true;
  }
  // Submitting makes the mark a point in the queue's submission order; work-done then covers it.
  flush_locked();
  WGPUQueueWorkDoneCallbackInfo wd{};
  wd.mode = WGPUCallbackMode_WaitAnyOnly;
  wd.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void*, void*) {};
  m->done = P.wgpuQueueOnSubmittedWorkDone(dev_.queue(), wd);
  m->seq = ++marks_;
  return m;
}

bool Stream::mark_done(const Mark& m) { return future_done(m.done); }

void Stream::wait_mark(const Mark& m) {
  Gate gate;
  wait_future(m.done, "an event");
  dev_.check_errors();
}

uint64_t Stream::timestamp_ns(Mark& m) {
  TORCH_CHECK(m.has_time, "webgpu: this event has no timestamp (create it with enable_timing=True; the adapter ",
              dev_.has_timestamp() ? "has" : "lacks", " timestamp-query)");
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (m.readback) {
    map_locked(m.readback.get(), WGPUMapMode_Read, 8, "an event's timestamp");
    const void* p = procs().wgpuBufferGetConstMappedRange(m.readback.get(), 0, 8);
    TORCH_CHECK(p, "webgpu: mapping an event's timestamp failed");
    std::memcpy(&m.time_ns, p, 8);
    procs().wgpuBufferUnmap(m.readback.get());
    m.readback = Buffer();
  }
  return m.time_ns;
}

bool Stream::query() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  flush_locked();
  WGPUQueueWorkDoneCallbackInfo wd{};
  wd.mode = WGPUCallbackMode_WaitAnyOnly;
  wd.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void*, void*) {};
  return future_done(procs().wgpuQueueOnSubmittedWorkDone(dev_.queue(), wd));
}

int64_t Stream::gpu_clock_offset_ns() {
  TORCH_CHECK(dev_.has_timestamp(), "webgpu: the adapter has no timestamp-query");
  auto now = [] {
    return int64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
  };
  std::lock_guard<std::recursive_mutex> lock(mu_);
  wait_idle_locked();
  int64_t best = 0, spread = INT64_MAX;
  for (int i = 0; i < 3; ++i) {
    const int64_t t0 = now();
    auto m = mark(true);
    wait_mark(*m);
    const int64_t t1 = now();
    const int64_t g = int64_t(timestamp_ns(*m));
    if (t1 - t0 < spread) spread = t1 - t0, best = t0 + (t1 - t0) / 2 - g;
  }
  return best;
}

StreamCounters Stream::counters() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return counters_;
}

void Stream::reset_counters() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  counters_ = StreamCounters();
}

}  // namespace webgpu::rt
