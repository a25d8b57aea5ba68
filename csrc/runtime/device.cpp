// Instance, adapters and devices. Everything Dawn-asynchronous here is waited on with futures.
#include "runtime/device.h"

#include <array>
#include <cstdlib>
#include <cstring>

#include <c10/util/Exception.h>

#include "runtime/allocator.h"
#include "runtime/pipeline.h"
#include "runtime/stream.h"

namespace webgpu::rt {
namespace {

std::mutex g_mu;
Instance g_instance;
bool g_adapter_probed = false;
Adapter g_adapter;            // index 0; this Dawn has no adapter enumeration yet
std::string g_adapter_error;
std::array<std::unique_ptr<GpuDevice>, kMaxDevices> g_devices;

const char* kNoAdapterAdvice =
    "webgpu: no WebGPU adapter found. Dawn needs a Vulkan (Linux), Metal (macOS) or D3D12 (Windows) "
    "driver. On Debian/Ubuntu without a GPU, `apt-get install mesa-vulkan-drivers libvulkan1` gives a "
    "CPU adapter (lavapipe); with an NVIDIA GPU, install its driver with Vulkan support.";

WGPUInstance instance_locked() {
  if (!g_instance) {
    WGPUInstanceDescriptor desc{};
    desc.features.timedWaitAnyEnable = 1;
    WGPUInstance inst = procs().wgpuCreateInstance(&desc);
    TORCH_CHECK(inst, "webgpu: Dawn could not create an instance");
    g_instance = Instance(inst);
  }
  return g_instance.get();
}

void probe_adapter_locked() {
  if (g_adapter_probed) return;
  g_adapter_probed = true;
  WGPUInstance inst = instance_locked();
  WGPURequestAdapterOptions opts{};
  opts.powerPreference = WGPUPowerPreference_HighPerformance;
  if (const char* b = std::getenv("TORCH_WEBGPU_BACKEND"); b && *b) {
    std::string s(b);
    opts.backendType = s == "vulkan" ? WGPUBackendType_Vulkan : s == "metal" ? WGPUBackendType_Metal
                     : s == "d3d12" ? WGPUBackendType_D3D12 : WGPUBackendType_Undefined;
  }
  struct Result { uint32_t status = 0; WGPUAdapter adapter = nullptr; std::string msg; } r;
  WGPURequestAdapterCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](uint32_t status, WGPUAdapter a, WGPUStringView msg, void* ud) {
    auto* r = static_cast<Result*>(ud);
    r->status = status;
    r->adapter = a;
    r->msg = str(msg);
  };
  cb.userdata = &r;
  WGPUFuture f = procs().wgpuInstanceRequestAdapterF(inst, &opts, cb);
  WGPUFutureWaitInfo info{f, 0, {}};
  uint32_t st = procs().wgpuInstanceWaitAny(inst, 1, &info, UINT64_MAX);
  if (st != WGPUWaitStatus_Success || r.status != WGPURequestAdapterStatus_Success || !r.adapter) {
    g_adapter_error = std::string(kNoAdapterAdvice) + (r.msg.empty() ? "" : " (Dawn: " + r.msg + ")");
    return;
  }
  g_adapter = Adapter(r.adapter);
}

}  // namespace

WGPUInstance instance() {
  std::lock_guard<std::mutex> lock(g_mu);
  return instance_locked();
}

void wait_future(WGPUFuture f, const char* what) {
  WGPUFutureWaitInfo info{f, 0, {}};
  uint32_t st = procs().wgpuInstanceWaitAny(instance(), 1, &info, UINT64_MAX);
  TORCH_CHECK(st == WGPUWaitStatus_Success, "webgpu: waiting for ", what, " failed (status ", st, ")");
}

bool future_done(WGPUFuture f) {
  WGPUFutureWaitInfo info{f, 0, {}};
  uint32_t st = procs().wgpuInstanceWaitAny(instance(), 1, &info, 0);
  return st == WGPUWaitStatus_Success && info.completed;
}

int device_count() {
  try {
    std::lock_guard<std::mutex> lock(g_mu);
    probe_adapter_locked();
    return g_adapter ? 1 : 0;
  } catch (const c10::Error&) {
    return 0;
  }
}

bool is_available() { return device_count() > 0; }

GpuDevice& get_device(int index) {
  std::lock_guard<std::mutex> lock(g_mu);
  TORCH_CHECK(index >= 0 && index < kMaxDevices, "webgpu: invalid device index ", index);
  if (g_devices[index]) return *g_devices[index];
  probe_adapter_locked();
  TORCH_CHECK(g_adapter, g_adapter_error);
  TORCH_CHECK(index == 0, "webgpu: device index ", index, " out of range (1 webgpu device available)");
  g_devices[index] = std::make_unique<GpuDevice>(index, g_adapter);
  return *g_devices[index];
}

std::vector<GpuDevice*> created_devices() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<GpuDevice*> out;
  for (auto& d : g_devices)
    if (d) out.push_back(d.get());
  return out;
}

const char* backend_name(uint32_t b) {
  switch (b) {
    case WGPUBackendType_Null: return "null";
    case WGPUBackendType_WebGPU: return "webgpu";
    case WGPUBackendType_D3D11: return "d3d11";
    case WGPUBackendType_D3D12: return "d3d12";
    case WGPUBackendType_Metal: return "metal";
    case WGPUBackendType_Vulkan: return "vulkan";
    case WGPUBackendType_OpenGL: return "opengl";
    case WGPUBackendType_OpenGLES: return "opengles";
    default: return "unknown";
  }
}

GpuDevice::GpuDevice(int index, Adapter adapter) : index_(index), adapter_(std::move(adapter)) {
  const Procs& P = procs();
  WGPUAdapter a = adapter_.get();

  WGPUAdapterInfo ai{};
  P.wgpuAdapterGetInfo(a, &ai);
  info_["adapter"] = str(ai.device);
  info_["vendor"] = str(ai.vendor);
  info_["architecture"] = str(ai.architecture);
  info_["driver"] = str(ai.description);
  info_["backend"] = backend_name(ai.backendType);
  info_["adapter_type"] = ai.adapterType == WGPUAdapterType_DiscreteGPU ? "discrete-gpu"
                          : ai.adapterType == WGPUAdapterType_IntegratedGPU ? "integrated-gpu"
                          : ai.adapterType == WGPUAdapterType_CPU ? "cpu" : "unknown";
  P.wgpuAdapterInfoFreeMembers(ai);

  WGPUSupportedLimits sl{};
  P.wgpuAdapterGetLimits(a, &sl);

  std::vector<uint32_t> want;
  for (uint32_t f : {(uint32_t)WGPUFeatureName_ShaderF16, (uint32_t)WGPUFeatureName_Subgroups,
                     (uint32_t)WGPUFeatureName_TimestampQuery})
    if (P.wgpuAdapterHasFeature(a, f)) want.push_back(f);

  // allow_unsafe_apis only unlocks experimental features (subgroups on this Dawn); it does not
  // weaken robustness. Timestamps are not quantised, so kernel timings stay meaningful.
  // Opt-in speed: TORCH_WEBGPU_FAST=1 skips Dawn's validation, its bounds-clamping robustness pass
  // and workgroup-memory zeroing (an out-of-bounds bug may then read or write other memory, so it
  // is never the default); TORCH_WEBGPU_DAWN_TOGGLES="a,b,-c" enables a and b and disables c.
  std::vector<std::string> on = {"allow_unsafe_apis"}, off = {"timestamp_quantization"};
  if (const char* f = std::getenv("TORCH_WEBGPU_FAST"); f && std::string(f) == "1")
    for (const char* t : {"skip_validation", "disable_robustness", "disable_workgroup_init"}) on.push_back(t);
  if (const char* e = std::getenv("TORCH_WEBGPU_DAWN_TOGGLES")) {
    std::string list = e;
    for (size_t p = 0; p <= list.size();) {
      size_t q = list.find(',', p);
      if (q == std::string::npos) q = list.size();
      std::string t = list.substr(p, q - p);
      if (!t.empty()) (t[0] == '-' ? off : on).push_back(t[0] == '-' ? t.substr(1) : t);
      p = q + 1;
    }
  }
  toggles_ = on;
  for (const std::string& t : off) toggles_.push_back("-" + t);
  std::vector<const char*> enabled, disabled;
  for (const std::string& t : on) enabled.push_back(t.c_str());
  for (const std::string& t : off) disabled.push_back(t.c_str());
  WGPUDawnTogglesDescriptor toggles{};
  toggles.chain.sType = WGPUSType_DawnTogglesDescriptor;
  toggles.enabledToggleCount = enabled.size();
  toggles.enabledToggles = const_cast<char**>(enabled.data());
  toggles.disabledToggleCount = disabled.size();
  toggles.disabledToggles = const_cast<char**>(disabled.data());

  WGPURequiredLimits rl{};
  rl.limits = sl.limits;
  WGPUDeviceDescriptor dd{};
  dd.nextInChain = &toggles.chain;
  dd.label = sv("torch-webgpu");
  dd.requiredFeatureCount = want.size();
  dd.requiredFeatures = want.data();
  dd.requiredLimits = &rl;
  dd.uncapturedErrorCallbackInfo2.callback = &GpuDevice::on_uncaptured_error;
  dd.uncapturedErrorCallbackInfo2.userdata1 = this;
  dd.deviceLostCallbackInfo2.mode = WGPUCallbackMode_AllowSpontaneous;
  dd.deviceLostCallbackInfo2.callback = &GpuDevice::on_device_lost;
  dd.deviceLostCallbackInfo2.userdata1 = this;

  struct Result { uint32_t status = 0; WGPUDevice dev = nullptr; std::string msg; } r;
  WGPURequestDeviceCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](uint32_t status, WGPUDevice d, WGPUStringView msg, void* ud) {
    auto* r = static_cast<Result*>(ud);
    r->status = status;
    r->dev = d;
    r->msg = str(msg);
  };
  cb.userdata = &r;
  WGPUFuture f = P.wgpuAdapterRequestDeviceF(a, &dd, cb);
  WGPUFutureWaitInfo wi{f, 0, {}};
  P.wgpuInstanceWaitAny(g_instance.get(), 1, &wi, UINT64_MAX);
  TORCH_CHECK(r.status == WGPURequestDeviceStatus_Success && r.dev,
              "webgpu: Dawn could not create a device on adapter '", info_["adapter"], "': ", r.msg);
  device_ = Device(r.dev);
  queue_ = Queue(P.wgpuDeviceGetQueue(r.dev));

  WGPUSupportedLimits dl{};
  P.wgpuDeviceGetLimits(r.dev, &dl);
  limits_ = dl.limits;
  features_ = want;
  for (uint32_t f : want) {
    has_f16_ |= f == WGPUFeatureName_ShaderF16;
    has_subgroups_ |= f == WGPUFeatureName_Subgroups;
    has_timestamp_ |= f == WGPUFeatureName_TimestampQuery;
  }
  pipelines_ = std::make_unique<PipelineCache>(*this);
  pool_ = std::make_unique<BufferPool>(*this);
  stream_ = std::make_unique<Stream>(*this);
}

GpuDevice::~GpuDevice() = default;

void GpuDevice::on_uncaptured_error(WGPUDevice*, uint32_t type, WGPUStringView msg, void* self, void*) {
  auto* d = static_cast<GpuDevice*>(self);
  std::lock_guard<std::mutex> lock(d->err_mu_);
  if (d->errors_.size() < 16) d->errors_.push_back(str(msg));
}

void GpuDevice::on_device_lost(WGPUDevice*, uint32_t reason, WGPUStringView msg, void* self, void*) {
  auto* d = static_cast<GpuDevice*>(self);
  std::lock_guard<std::mutex> lock(d->err_mu_);
  d->lost_ = true;
  d->errors_.push_back("device lost: " + str(msg));
}

void GpuDevice::check_errors() {
  std::vector<std::string> errs;
  {
    std::lock_guard<std::mutex> lock(err_mu_);
    errs.swap(errors_);
  }
  if (!errs.empty()) TORCH_CHECK(false, "webgpu: the device reported an error: ", errs.front());
}

void GpuDevice::push_error_scope(uint32_t filter) { procs().wgpuDevicePushErrorScope(device(), filter); }

std::pair<uint32_t, std::string> GpuDevice::pop_error_scope() {
  struct Result { uint32_t type = WGPUErrorType_NoError; std::string msg; } r;
  WGPUPopErrorScopeCallbackInfo2 cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](uint32_t status, uint32_t type, WGPUStringView msg, void* ud, void*) {
    auto* r = static_cast<Result*>(ud);
    r->type = status == WGPUPopErrorScopeStatus_Success ? type : (uint32_t)WGPUErrorType_Unknown;
    r->msg = str(msg);
  };
  cb.userdata1 = &r;
  wait_future(procs().wgpuDevicePopErrorScope2(device(), cb), "an error scope");
  return {r.type, r.msg};
}

std::map<std::string, std::string> GpuDevice::info() const {
  auto m = info_;
  std::string t;
  for (const std::string& x : toggles_) t += (t.empty() ? "" : ",") + x;
  m["dawn_toggles"] = t;
  return m;
}

std::map<std::string, uint64_t> GpuDevice::limit_map() const {
  const WGPULimits& l = limits_;
  return {
      {"maxBufferSize", l.maxBufferSize},
      {"maxStorageBufferBindingSize", l.maxStorageBufferBindingSize},
      {"maxUniformBufferBindingSize", l.maxUniformBufferBindingSize},
      {"minStorageBufferOffsetAlignment", l.minStorageBufferOffsetAlignment},
      {"minUniformBufferOffsetAlignment", l.minUniformBufferOffsetAlignment},
      {"maxStorageBuffersPerShaderStage", l.maxStorageBuffersPerShaderStage},
      {"maxComputeWorkgroupStorageSize", l.maxComputeWorkgroupStorageSize},
      {"maxComputeInvocationsPerWorkgroup", l.maxComputeInvocationsPerWorkgroup},
      {"maxComputeWorkgroupSizeX", l.maxComputeWorkgroupSizeX},
      {"maxComputeWorkgroupsPerDimension", l.maxComputeWorkgroupsPerDimension},
      {"maxBindGroups", l.maxBindGroups},
  };
}

std::vector<std::string> GpuDevice::feature_names() const {
  std::vector<std::string> out;
  for (uint32_t f : features_)
    out.push_back(f == WGPUFeatureName_ShaderF16 ? "shader-f16"
                  : f == WGPUFeatureName_Subgroups ? "subgroups"
                  : f == WGPUFeatureName_TimestampQuery ? "timestamp-query" : std::to_string(f));
  return out;
}

}  // namespace webgpu::rt
