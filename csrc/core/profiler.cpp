// The profiler: a Kineto child profiler registered through torch's PrivateUse1 profiler registry
// (torch >= 2.12), so `torch.profiler.profile(activities=[CPU, PrivateUse1])` shows each WGSL
// kernel with its GPU time, linked to the op that launched it, in key_averages() and the trace.
//
// While a session records, every dispatch gets timestamps (runtime/stream.h, set_kernel_timing);
// the op's correlation id, pushed by the profiler on the op's thread, tags the dispatch. At stop the
// timestamps are read back and moved onto the CPU clock (an offset measured with one more
// timestamp). Without timestamp-query the session records nothing and says so. Off, the cost is
// one relaxed atomic load per dispatch.
#if __has_include(<IActivityProfiler.h>) && __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#ifndef USE_KINETO
#define USE_KINETO 1
#endif
#include <IActivityProfiler.h>
#include <libkineto.h>
#include <output_base.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <c10/util/Exception.h>

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "core/core.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::core {
namespace {

using libkineto::ActivityType;

// The logger keeps pointers to the activities we hand it, and torch reads them again when a trace
// is exported, after the session is gone: the activities of the last sessions live here.
struct Store {
  libkineto::TraceSpan span{0, 0, "webgpu"};
  std::deque<libkineto::GenericTraceActivity> activities;
};
std::mutex g_store_mu;
std::deque<std::shared_ptr<Store>> g_stores;

thread_local std::vector<uint64_t> t_corr;  // the profiler's correlation ids on this thread

class Session final : public libkineto::IActivityProfilerSession {
 public:
  explicit Session(bool kernels) : kernels_(kernels) {
    store_ = std::make_shared<Store>();
    std::lock_guard<std::mutex> lock(g_store_mu);
    g_stores.push_back(store_);
    while (g_stores.size() > 8) g_stores.pop_front();
  }

  void start() override {
    status_ = libkineto::TraceStatus::RECORDING;
    if (!kernels_) return;
    bool any_timestamp = false, any = false;
    try {
      for (auto* d : rt::created_devices()) {
        any = true;
        any_timestamp |= d->has_timestamp();
        d->stream().take_kernel_times();  // drop what an earlier session left
      }
      if (!any) any_timestamp = rt::get_device(current_device()).has_timestamp(), any = true;
    } catch (const std::exception& e) {
      errors_.push_back(e.what());
      return;
    }
    if (!any_timestamp) {
      errors_.push_back("webgpu: the adapter has no timestamp-query feature; the profiler records no GPU kernel times");
      TORCH_WARN(errors_.back());
      return;
    }
    rt::set_kernel_timing(true);
  }

  void stop() override {
    if (!rt::kernel_timing()) {
      status_ = libkineto::TraceStatus::PROCESSING;
      return;
    }
    rt::set_kernel_timing(false);
    int64_t corr = 1;
    try {
      for (auto* d : rt::created_devices()) {
        if (!d->has_timestamp()) continue;
        auto times = d->stream().take_kernel_times();
        if (times.empty()) continue;
        const int64_t offset = d->stream().gpu_clock_offset_ns();
        devices_.push_back(d->index());
        for (auto& k : times) {
          store_->activities.emplace_back(store_->span, ActivityType::CONCURRENT_KERNEL, k.name);
          auto& a = store_->activities.back();
          a.startTime = int64_t(k.begin_ns) + offset;
          a.endTime = int64_t(k.end_ns) + offset;
          a.id = corr++;
          a.device = d->index();
          a.resource = 0;  // the device's one stream
          a.threadId = k.thread;
          links_.push_back(int64_t(k.tag));
        }
      }
    } catch (const std::exception& e) {
      errors_.push_back(e.what());
    }
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    for (auto& a : store_->activities) logger.handleGenericActivity(a);
  }
  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked, int64_t,
                    int64_t) override {
    size_t i = 0;
    for (auto& a : store_->activities) {
      const int64_t tag = links_[i++];
      if (tag > 0 && linked) a.linked = linked(int32_t(tag));
      logger.handleGenericActivity(a);
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    if (devices_.empty()) return nullptr;
    const int d = devices_.front();
    std::string adapter;
    try {
      adapter = rt::get_device(d).info()["adapter"];
    } catch (...) {}
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{d, d, "webgpu " + std::to_string(d), adapter.empty() ? "webgpu" : adapter});
  }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (int d : devices_) out.push_back(libkineto::ResourceInfo{0, 0, d, "stream 0"});
    return out;
  }
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return nullptr; }

  void pushCorrelationId(uint64_t id) override {
    t_corr.push_back(id);
    rt::kernel_tag() = id;
  }
  void popCorrelationId() override {
    if (!t_corr.empty()) t_corr.pop_back();
    rt::kernel_tag() = t_corr.empty() ? 0 : t_corr.back();
  }

 private:
  bool kernels_;
  std::shared_ptr<Store> store_;
  std::vector<int64_t> links_;  // per activity: the CPU op's correlation id
  std::vector<int> devices_;
  std::vector<std::string> errors_;
};

class WebGPUProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return activities_; }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& types,
                                                                 const libkineto::Config&) override {
    // Kernels are timed only when the user asked for device activity (ProfilerActivity.PrivateUse1).
    return std::make_unique<Session>(types.count(ActivityType::CONCURRENT_KERNEL) > 0);
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t, const std::set<ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "webgpu";
  std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL};
};

REGISTER_PRIVATEUSE1_PROFILER(WebGPUProfiler);

}  // namespace
}  // namespace webgpu::core
namespace webgpu::core {
bool has_kernel_profiler() { return true; }
}  // namespace webgpu::core
#else
namespace webgpu::core {
// torch before 2.12 has no PrivateUse1 profiler registry: torch.profiler then sees CPU time only.
bool has_kernel_profiler() { return false; }
}  // namespace webgpu::core
#endif
