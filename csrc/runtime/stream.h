// The Stream: records dispatches and copies into one open command encoder and compute pass, and
// submits only when the CPU needs a result or the batch is full. Per-dispatch parameters go into a
// per-batch arena bound with dynamic offsets; bind groups are cached.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/handles.h"
#include "runtime/pipeline.h"

namespace webgpu::rt {

class GpuDevice;

struct Binding {
  WGPUBuffer buffer;
  uint64_t offset;  // bytes, a multiple of minStorageBufferOffsetAlignment
  uint64_t size;  // bytes, a multiple of 4
};

// One dispatch timed by the GPU while kernel timing is on (the profiler): the pipeline's key, the
// tag of the thread that recorded it (the profiler's correlation id), and GPU timestamps in ns.
struct KernelTime {
  std::string name;
  uint64_t tag = 0;
  int32_t thread = 0;
  uint64_t begin_ns = 0, end_ns = 0;
};

// Turns per-dispatch GPU timestamps on or off for every device's Stream (off costs one relaxed
// load per dispatch). kernel_tag() is the calling thread's tag, stored with each timed dispatch.
void set_kernel_timing(bool on);
bool kernel_timing();
uint64_t& kernel_tag();

struct StreamCounters {
  uint64_t submits = 0, waits = 0, dispatches = 0, copies = 0, uploads = 0, readbacks = 0;
  uint64_t bind_groups_created = 0, bind_group_hits = 0;
  // Readbacks: bytes read, time waiting for the copy and the map (flush included), time copying
  // out of the mapped staging buffer.
  uint64_t readback_bytes = 0, readback_wait_ns = 0, readback_copy_ns = 0;
  // Host time (steady clock) inside Stream::dispatch (bind group lookup and encoding included),
  // creating bind groups, and submitting (finishing the encoder, the parameter upload, the submit):
  // where a host-bound step's CPU time goes (benchmarks/profile_step.py).
  uint64_t dispatch_ns = 0, bind_group_ns = 0, submit_ns = 0;
};

// A device -> host copy that does not block its caller (Stream::read_start / read_ready /
// read_finish): the range is copied into a MAP_READ buffer of the ticket's own and its mapping is
// requested; the caller records more work meanwhile and copies the bytes out later. Used by the
// process group to overlap gradient staging with the backward pass (torch_webgpu/distributed.py).
class Stream;
struct AsyncRead {
  struct Result {  // written by the mapping's callback, which owns a reference
    WGPUMapAsyncStatus status{};
    std::string message;
  };
  Stream* stream = nullptr;  // of the last start
  Buffer buffer;
  uint64_t capacity = 0, bytes = 0, skew = 0,
           size = 0;  // buffer size; bytes mapped; the data's offset and size in them
  WGPUFuture future{};
  bool pending = false, mapped = false;  // started and not finished; its mapping seen complete
  std::shared_ptr<Result> result;
};

// A MAP_WRITE staging buffer kept mapped-ready between uses: its mapping is requested again as soon
// as its copy is submitted (Stream::staged_write_locked), so the next use finds it done unless the
// GPU is still behind. write()'s upload pool holds these, and the process group holds one per
// gradient bucket (Stream::write_with), for uploads recorded behind the rest of a backward pass
// (torch_webgpu/distributed.py): reused every training step, it never waits.
struct AsyncWrite {
  Buffer buffer;
  uint64_t capacity = 0;
  bool mapped = false;
  WGPUFuture future{};  // its mapping, when !mapped
  std::shared_ptr<AsyncRead::Result> result;
};

class Stream {
 public:
  explicit Stream(GpuDevice& dev);
  ~Stream();

  // Records one dispatch of `workgroups` workgroups (folded into a 3D grid as needed); kernels
  // rebuild the linear workgroup id from num_workgroups. params: up to kParamWords words.
  // check_indices: the kernel reports bad user indices (see "Device-side index errors" below); the
  // Stream appends an error slot of its own as binding n+1 (p has n+1 storage bindings).
  // Raises when a binding is a buffer of another device (checked once several devices exist).
  void check_same_device(const Binding* bindings, uint32_t n, const std::string& what) const;
  void dispatch(const Pipeline& p, const Binding* bindings, uint32_t n, const uint32_t* params, uint32_t nwords,
                uint64_t workgroups, bool check_indices = false, uint64_t weight = 0);
  // Records a buffer-to-buffer copy (offsets and size multiples of 4).
  void copy(WGPUBuffer src, uint64_t src_off, WGPUBuffer dst, uint64_t dst_off, uint64_t size);
  // Writes host data into a buffer, ordered after everything recorded so far (the open batch is
  // submitted first: a queue write would otherwise overtake it). off and size multiples of 4.
  void write(WGPUBuffer dst, uint64_t off, const void* data, uint64_t size);
  // Copies a buffer range to host memory; blocks until the GPU is done with it.
  void read(WGPUBuffer src, uint64_t off, void* out, uint64_t size);
  // The same in three steps (AsyncRead): start records the copy, submits and requests the mapping;
  // ready polls without blocking; finish waits if needed and copies the `size` bytes out.
  void read_start(AsyncRead& a, WGPUBuffer src, uint64_t off, uint64_t size);
  bool read_ready(AsyncRead& a);
  void read_finish(AsyncRead& a, void* out);
  // write() through the ticket's own staging buffer (size and off multiples of 4).
  void write_with(AsyncWrite& w, WGPUBuffer dst, uint64_t off, const void* data, uint64_t size);

  void flush();  // submits the open batch, no wait
  void synchronize();  // submits and waits for all work, then raises pending device errors
  // Submits, waits for all work and lets Dawn release what it deferred (destroyed buffers, upload
  // staging) now, so that this cost is not paid inside a later, unrelated op. Raises nothing.
  void retire();
  // Submits and waits for all work; raises nothing device-side (for shutdown).
  void quiesce();
  // From here on, other threads that enter or leave any Stream are parked (see stream.cpp); the
  // probe tells whether the calling thread may be parked (Python: it does not hold the GIL).
  static void begin_exit();
  static void set_park_probe(bool (*may_park)());
  // Uploads past Dawn's 4 MiB upload ring go through the Stream's own staging buffers, in chunks
  // of kUploadChunk bytes (see write()). Reads of at least 2 x kReadChunk bytes go through two
  // staging buffers of kReadChunk in turns, so that copying one chunk out overlaps the GPU's copy
  // of the next (see read_chunked_locked()).
  static constexpr uint64_t kUploadDirectMax = 4ull << 20;
  static constexpr uint64_t kUploadChunk = 32ull << 20;
  static constexpr uint64_t kReadChunk = 32ull << 20;

  // Device-side index errors (docs/design.md, "Device-side index errors"): a checked dispatch gets
  // an error slot of its own (kErrorWords atomic u32 words: set flag, op code, dim, index lo/hi,
  // size lo/hi), and the blocks it writes, and every block later computed from them, are tainted
  // with its record. The next readback (from any thread) or synchronize() also reads the armed
  // slots (piggybacked on the readback's own copy); a slot found set turns its record into an
  // error owned by the recording thread, and its tainted blocks are poisoned. IndexError (naming
  // the op and the index) is raised to a read of a poisoned block, and to the owner's next
  // readback or synchronize(), never to another thread's unrelated read. Once raised, an error and
  // its poison are gone. Nothing extra is read while no checking kernel ran.
  static constexpr uint32_t kErrorWords = 8;
  static constexpr uint32_t kErrorSlots = 128;
  // A buffer given back to the pool: it no longer holds a poisoned result.
  void forget_buffer(WGPUBuffer b);
  // Device-error bookkeeping, for tests: armed slots, errors found and not raised, tainted buffers.
  struct ErrorState {
    size_t armed = 0, found = 0, tainted = 0;
  };
  ErrorState error_state();
  // A code for an op name, for the error message (stable for the process); index_error false
  // raises RuntimeError instead (as CPU does for gather and scatter).
  static uint32_t error_op_code(const std::string& op, bool index_error = true);
  void forget_bind_groups();

  // A point in the stream's sequence of work, for events: everything recorded before it is
  // submitted, `done` completes once the GPU has finished that work. A timed mark also has the GPU
  // timestamp of that point (where the device has timestamp-query), read by timestamp_ns().
  struct Mark {
    WGPUFuture done{0};
    uint64_t seq = 0;
    Buffer readback;  // 8 bytes, MAP_READ: the timestamp (timed marks only)
    bool has_time = false;
    uint64_t time_ns = 0;  // cached once read
  };
  std::shared_ptr<Mark> mark(bool timed);
  bool mark_done(const Mark& m);
  void wait_mark(const Mark& m);
  uint64_t timestamp_ns(Mark& m);  // waits for the mark
  bool query();  // true when all work recorded so far has finished (submits it)
  // Timed dispatches whose timestamps have reached the CPU, oldest first (synchronizes first).
  std::vector<KernelTime> take_kernel_times();
  // The offset to add to a GPU timestamp to get system_clock nanoseconds since the epoch
  // (measured: a timestamp written between two CPU clock reads).
  int64_t gpu_clock_offset_ns();

  StreamCounters counters();
  void reset_counters();
  std::recursive_mutex& mutex() { return mu_; }

 private:
  struct Chunk {
    Buffer buffer;
    BindGroup params;  // group 1: this chunk's parameter slots
    WGPUFuture done{0};
  };
  void ensure_encoder();
  void ensure_pass();
  void end_pass();
  void acquire_chunk();
  void flush_locked();
  void retire_locked();
  // Maps b (mode WGPUMapMode_*) and waits for it; raises with `what` on failure.
  void map_locked(WGPUBuffer b, uint32_t mode, uint64_t size, const char* what);
  void wait_idle_locked();
  void read_locked(WGPUBuffer src, uint64_t off, void* out, uint64_t size, bool with_errors);
  void read_chunked_locked(WGPUBuffer src, uint64_t off, void* out, uint64_t size);
  // A host-visible buffer for uploads or readbacks; out of memory is an OutOfMemoryError naming `what`.
  Buffer staging_buffer(uint32_t usage, uint64_t size, bool mapped, const char* label, const char* what);
  void raise_index_error(const uint32_t* words);
  // Error slots: an armed dispatch's record (pending until its slot is read), then, if the slot was
  // set, an error found (its words) until raised. Taint: buffer -> records it may depend on.
  struct ErrorRecord {
    uint64_t id = 0;
    std::thread::id owner;
    uint32_t slot = 0;
    uint32_t words[kErrorWords] = {};
  };
  uint32_t error_slot_locked();  // a slot for a checked dispatch of the calling thread
  void taint_locked(const Pipeline& p, const Binding* b, uint32_t n, const ErrorRecord* armed);
  void untaint_locked(const std::vector<uint64_t>& ids);
  void collect_errors_locked(const uint8_t* slots);  // the armed slots' words, as read back
  void raise_errors_locked(WGPUBuffer src);  // raises what src or this thread must see
  void check_slots_locked();  // reads the armed slots now (no raise)
  WGPUBindGroup bind_group(const Pipeline& p, const Binding* b, uint32_t n);

  GpuDevice& dev_;
  std::recursive_mutex mu_;
  CommandEncoder encoder_;
  ComputePassEncoder pass_;
  // What the open pass has bound: a dispatch with the same pipeline or group-0 bind group skips
  // setting it again (each Dawn call validates and records a command). Cleared with the pass.
  WGPUComputePipeline bound_pipeline_ = nullptr;
  WGPUBindGroup bound_group_ = nullptr;
  uint32_t max_batch_ = 1024;
  uint32_t recorded_ = 0;  // commands in the open batch
  uint64_t groups_ = 0;  // workgroups dispatched in the open batch
  // Submit once the open batch holds this many workgroups (0: only when full or needed);
  // TORCH_WEBGPU_SUBMIT_GROUPS overrides it.
  uint64_t submit_groups_ = 16384;
  // A dispatch of this many workgroups is submitted at once (TORCH_WEBGPU_EAGER_GROUPS overrides it).
  // H200, per call: softmax 1536x128 32 us at 1024 (a submit per call), 12-19 at 8192 (CUDA 9-11);
  // GPT-2 f16 forward 297 and 302 fwd/s; never (no eager submits) 169.
  uint64_t eager_groups_ = 8192;
  // ...but neither early submit happens while this many batches are in flight;
  // TORCH_WEBGPU_SUBMIT_DEPTH overrides it.
  size_t submit_depth_ = 2;
  size_t in_flight_count();
  // Parameter arena
  Chunk* chunk_ = nullptr;
  std::vector<uint8_t> shadow_;
  uint32_t slots_used_ = 0;
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::vector<Chunk*> free_chunks_;
  std::deque<Chunk*> in_flight_;
  // Readback staging
  Buffer staging_;
  uint64_t staging_size_ = 0;
  // Upload staging (write()): each buffer's mapping is requested again as soon as its copy is
  // submitted; a chunk takes a buffer whose mapping is done, else a new one (up to
  // kUploadBuffers), else waits for the oldest.
  static constexpr size_t kUploadBuffers = 8;
  std::deque<AsyncWrite> upload_;  // oldest request first
  AsyncWrite take_upload_locked();
  // Whether w's requested mapping is done (waiting for it when `wait`); raises if it failed.
  bool write_mapped_locked(AsyncWrite& w, bool wait);
  // n bytes of data through w's buffer (mapped, waiting if needed) into dst at off; then asks for
  // w's mapping again.
  void staged_write_locked(AsyncWrite& w, WGPUBuffer dst, uint64_t off, const void* data, uint64_t n);
  void release_in_flight_locked();  // after a wait that covers every submission: chunks are free
  Buffer read_chunks_[2];  // chunked readbacks (kReadChunk each, created on first use)
  // Bind groups
  struct KeyHash {
    size_t operator()(const std::vector<uint64_t>& k) const {
      size_t h = 1469598103934665603ull;
      for (uint64_t v : k) h = (h ^ v) * 1099511628211ull;
      return h;
    }
  };
  std::unordered_map<std::vector<uint64_t>, BindGroup, KeyHash> bind_groups_;
  std::vector<uint64_t> key_;
  StreamCounters counters_;
  // Device error slots
  Buffer errors_;
  uint64_t slot_stride_ = 256;  // bytes between slots (minStorageBufferOffsetAlignment)
  bool armed_ = false;  // pending_ is not empty
  uint64_t next_error_id_ = 0;
  std::vector<ErrorRecord> pending_;  // armed, in slot order (slot i: pending_[i])
  std::vector<ErrorRecord> found_;  // errors read back, not raised yet, oldest first
  std::unordered_map<WGPUBuffer, std::vector<uint64_t>> taint_;
  std::atomic<bool> tainted_{false};  // taint_ is not empty (read without the lock)
  // Marks and kernel timing
  uint64_t marks_ = 0;
  struct TimedBatch {
    QuerySet queries;
    Buffer resolve, readback;
    std::vector<KernelTime> kernels;
  };
  std::unique_ptr<TimedBatch> timing_;  // the open batch's timestamps
  std::vector<std::unique_ptr<TimedBatch>> timed_;  // submitted, not yet read
  std::vector<KernelTime> kernel_times_;
  uint32_t timing_capacity_ = 0;
  void timed_dispatch_begin();
  void timed_dispatch_end(const Pipeline& p);
  void resolve_timing_locked();
  void read_timing_locked();
};

}  // namespace webgpu::rt
