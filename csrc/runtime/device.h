// One Dawn instance per process and, per device index, an adapter, a device, its queue, its Stream
// and its buffer pool. Devices are created lazily, with the adapter's own limits.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/handles.h"

namespace webgpu::rt {

class Stream;
class BufferPool;
class PipelineCache;

class GpuDevice {
 public:
  GpuDevice(int index, Adapter adapter);
  ~GpuDevice();
  GpuDevice(const GpuDevice&) = delete;
  GpuDevice& operator=(const GpuDevice&) = delete;

  int index() const { return index_; }
  WGPUDevice device() const { return device_.get(); }
  WGPUQueue queue() const { return queue_.get(); }
  const WGPULimits& limits() const { return limits_; }
  bool has_f16() const { return has_f16_; }
  bool has_subgroups() const { return has_subgroups_; }
  bool has_timestamp() const { return has_timestamp_; }
  bool has_subgroup_matrix() const { return has_subgroup_matrix_; }
  uint32_t subgroup_min_size() const { return subgroup_min_; }
  uint32_t subgroup_max_size() const { return subgroup_max_; }
  // The adapter's subgroup-matrix configurations (operand and result component, M x N x K).
  struct MatrixConfig {
    std::string component, result;
    uint32_t M, N, K, min_subgroup, max_subgroup;
  };
  const std::vector<MatrixConfig>& matrix_configs() const { return matrix_configs_; }
  // Bytes of the adapter's device-local memory heaps (AdapterPropertiesMemoryHeaps), 0 where the
  // adapter does not report them.
  uint64_t memory_bytes() const { return memory_bytes_; }

  // Host memory as a storage buffer (Dawn's host-mapped-pointer feature; docs/design.md, "Memory"):
  // the alignment of address and size it needs, 0 where the device cannot. import_host() makes a
  // buffer over [ptr, ptr + size) with the pool's usage; Dawn calls dispose(userdata) once it no
  // longer uses the memory (after the buffer is released and the work using it is done). Throws
  // for memory that is not aligned or that Dawn refuses.
  uint32_t host_import_alignment() const { return host_align_; }
  // A storage buffer (usage STORAGE | COPY_SRC | COPY_DST; `chain` extends the descriptor), created
  // inside out-of-memory and validation error scopes and recorded as this device's: an empty Buffer
  // and Dawn's message in *err when Dawn refused it.
  Buffer create_storage_buffer(uint64_t size, WGPUChainedStruct* chain, const char* label, std::string* err);
  Buffer import_host(void* ptr, uint64_t size, void (*dispose)(void*), void* userdata);

  Stream& stream() { return *stream_; }
  BufferPool& pool() { return *pool_; }
  PipelineCache& pipelines() { return *pipelines_; }

  // Error scopes, popped synchronously: returns WGPUErrorType_NoError or the error with its text.
  void push_error_scope(uint32_t filter);
  std::pair<uint32_t, std::string> pop_error_scope();
  // Raises the first error Dawn reported outside any scope (or the device loss) since last call.
  void check_errors();

  // Adapter facts for torch_webgpu.info().
  std::map<std::string, std::string> info() const;
  void set_info(const std::string& key, const std::string& value) { info_[key] = value; }
  std::map<std::string, uint64_t> limit_map() const;
  std::vector<std::string> feature_names() const;
  // Toggles Dawn reports as enabled on the device (asked for or Dawn's own defaults).
  std::vector<std::string> device_toggles() const;

 private:
  static void on_uncaptured_error(WGPUDevice const*, WGPUErrorType type, WGPUStringView msg, void* self, void*);
  static void on_device_lost(WGPUDevice const*, WGPUDeviceLostReason reason, WGPUStringView msg, void* self, void*);

  int index_;
  Adapter adapter_;
  Device device_;
  Queue queue_;
  WGPULimits limits_{};
  bool has_f16_ = false, has_subgroups_ = false, has_timestamp_ = false, has_subgroup_matrix_ = false;
  uint32_t subgroup_min_ = 0, subgroup_max_ = 0, host_align_ = 0;
  uint64_t memory_bytes_ = 0;
  std::vector<MatrixConfig> matrix_configs_;
  std::vector<WGPUFeatureName> features_;
  std::vector<std::string> toggles_;  // Dawn toggles asked for ("-name": disabled)
  std::map<std::string, std::string> info_;
  std::mutex err_mu_;
  std::vector<std::string> errors_;
  bool lost_ = false;
  std::unique_ptr<PipelineCache> pipelines_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<Stream> stream_;
};

WGPUInstance instance();
// Blocks until the future completes (the instance is created with timed waits enabled).
void wait_future(WGPUFuture f, const char* what);
// Host time spent in wait_future so far (every device and caller; spinning included).
uint64_t host_wait_ns();
// Polls a future without blocking.
bool future_done(WGPUFuture f);

int device_count();  // 0 when no adapter is found; never throws for a missing adapter
bool is_available();
GpuDevice& get_device(int index);  // creates it on first use; throws with install advice
// Devices created so far (for empty_cache/synchronize over all of them).
std::vector<GpuDevice*> created_devices();
// Before the process exits (Python's atexit): submits what is recorded and waits for every device
// to finish, so no GPU work or driver thread is busy when exit runs. Devices are never destroyed.
void shutdown();
const char* backend_name(uint32_t backend);

constexpr int kMaxDevices = 16;

}  // namespace webgpu::rt
