// Compute pipelines, compiled once per specialisation key and cached. Every kernel has the same
// binding shape: group 0 bindings 1..n are storage buffers of 32-bit words, read-only where the
// kernel only reads them; group 1 binding 0 is the per-dispatch parameter slot (uniform, dynamic
// offset), the same layout for every kernel.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/handles.h"

namespace webgpu::rt {

class GpuDevice;

constexpr uint32_t kParamBytes = 256;  // one parameter slot: 64 u32 words
constexpr uint32_t kParamWords = kParamBytes / 4;

struct Pipeline {
  ComputePipeline pipeline;
  BindGroupLayout layout;
  uint32_t num_storage = 0;
  uint32_t readonly_mask = 0;  // bit i: storage binding i+1 is read-only
  std::string key;
};

struct PipelineCounters {
  uint64_t compiles = 0, hits = 0;
};

class PipelineCache {
 public:
  explicit PipelineCache(GpuDevice& dev) : dev_(dev) {}
  // The pipeline for `key`; on a miss `make_wgsl` builds the source. readonly_mask bit i marks
  // storage binding i+1 read-only. A WGSL error raises RuntimeError with Dawn's message.
  const Pipeline& get(const std::string& key, uint32_t num_storage, uint32_t readonly_mask,
                      const std::function<std::string()>& make_wgsl);
  PipelineCounters counters();
  // The keys compiled so far (sorted).
  std::vector<std::string> keys();
  // Group 1's layout: the parameter slot alone.
  WGPUBindGroupLayout params_layout();

 private:
  WGPUBindGroupLayout layout_for(uint32_t num_storage, uint32_t readonly_mask);
  WGPUBindGroupLayout params_layout_locked();

  GpuDevice& dev_;
  std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Pipeline>> cache_;
  std::unordered_map<uint64_t, BindGroupLayout> layouts_;
  BindGroupLayout params_layout_;
  PipelineCounters counters_;
};

// WGSL sources from wgsl/*.wgsl, by file name without extension.
const std::string& wgsl_source(const std::string& name);

}  // namespace webgpu::rt
