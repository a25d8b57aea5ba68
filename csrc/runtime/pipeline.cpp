// Pipeline cache and the embedded WGSL lookup.
#include "runtime/pipeline.h"

#include <algorithm>
#include <vector>

#include <c10/util/Exception.h>

#include "runtime/device.h"

namespace webgpu::rt {

const std::unordered_map<std::string, std::string>& embedded_wgsl();  // generated

const std::string& wgsl_source(const std::string& name) {
  const auto& m = embedded_wgsl();
  auto it = m.find(name);
  TORCH_CHECK(it != m.end(), "webgpu: no embedded WGSL source named '", name, "'");
  return it->second;
}

WGPUBindGroupLayout PipelineCache::layout_for(uint32_t n, uint32_t ro) {
  const uint64_t k = (uint64_t(n) << 32) | ro;
  auto it = layouts_.find(k);
  if (it != layouts_.end()) return it->second.get();
  std::vector<WGPUBindGroupLayoutEntry> e(n);
  for (uint32_t i = 0; i < n; ++i) {
    e[i].binding = i + 1;
    e[i].visibility = WGPUShaderStage_Compute;
    e[i].buffer.type = (ro >> i) & 1 ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
  }
  WGPUBindGroupLayoutDescriptor d{};
  d.entryCount = e.size();
  d.entries = e.data();
  BindGroupLayout l(procs().wgpuDeviceCreateBindGroupLayout(dev_.device(), &d));
  WGPUBindGroupLayout raw = l.get();
  layouts_.emplace(k, std::move(l));
  return raw;
}

WGPUBindGroupLayout PipelineCache::params_layout() {
  std::lock_guard<std::mutex> lock(mu_);
  return params_layout_locked();
}

WGPUBindGroupLayout PipelineCache::params_layout_locked() {
  if (!params_layout_) {
    WGPUBindGroupLayoutEntry e{};
    e.binding = 0;
    e.visibility = WGPUShaderStage_Compute;
    e.buffer.type = WGPUBufferBindingType_Uniform;
    e.buffer.hasDynamicOffset = 1;
    e.buffer.minBindingSize = kParamBytes;
    WGPUBindGroupLayoutDescriptor d{};
    d.entryCount = 1;
    d.entries = &e;
    params_layout_ = BindGroupLayout(procs().wgpuDeviceCreateBindGroupLayout(dev_.device(), &d));
  }
  return params_layout_.get();
}

std::vector<std::string> PipelineCache::keys() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> k;
  for (const auto& [key, p] : cache_) k.push_back(key);
  std::sort(k.begin(), k.end());
  return k;
}

const Pipeline& PipelineCache::get(const std::string& key, uint32_t n, uint32_t ro,
                                   const std::function<std::string()>& make_wgsl) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    counters_.hits++;
    return *it->second;
  }
  const Procs& P = procs();
  const std::string code = make_wgsl();
  WGPUBindGroupLayout bgl = layout_for(n, ro);

  dev_.push_error_scope(WGPUErrorFilter_Validation);
  WGPUShaderSourceWGSL src{};
  src.chain.sType = WGPUSType_ShaderSourceWGSL;
  src.code = WGPUStringView{const_cast<char*>(code.data()), code.size()};
  WGPUShaderModuleDescriptor smd{};
  smd.nextInChain = &src.chain;
  ShaderModule module(P.wgpuDeviceCreateShaderModule(dev_.device(), &smd));

  WGPUPipelineLayoutDescriptor pld{};
  WGPUBindGroupLayout groups[2] = {bgl, params_layout_locked()};
  pld.bindGroupLayoutCount = 2;
  pld.bindGroupLayouts = groups;
  PipelineLayout pl(P.wgpuDeviceCreatePipelineLayout(dev_.device(), &pld));

  WGPUComputePipelineDescriptor cpd{};
  cpd.label = WGPUStringView{const_cast<char*>(key.data()), key.size()};
  cpd.layout = pl.get();
  cpd.compute.module = module.get();
  cpd.compute.entryPoint = sv("main");
  ComputePipeline cp(P.wgpuDeviceCreateComputePipeline(dev_.device(), &cpd));
  auto err = dev_.pop_error_scope();
  TORCH_CHECK(err.first == WGPUErrorType_NoError, "webgpu: compiling kernel '", key, "' failed: ", err.second,
              "\n---- WGSL ----\n", code);

  auto p = std::make_unique<Pipeline>();
  p->pipeline = std::move(cp);
  p->layout = BindGroupLayout(bgl);
  P.wgpuBindGroupLayoutAddRef(bgl);
  p->num_storage = n;
  p->readonly_mask = ro;
  p->key = key;
  counters_.compiles++;
  const Pipeline& ref = *p;
  cache_.emplace(key, std::move(p));
  return ref;
}

PipelineCounters PipelineCache::counters() {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

}  // namespace webgpu::rt
