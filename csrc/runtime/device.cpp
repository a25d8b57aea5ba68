// Instance, adapters and devices. Everything Dawn-asynchronous here is waited on with futures.
#include "runtime/device.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <unistd.h>

#include <c10/util/Exception.h>

#include "runtime/allocator.h"
#include "runtime/clocks.h"
#include "runtime/pipeline.h"
#include "runtime/stream.h"

namespace webgpu::rt {
namespace {

// Process-lifetime state, deliberately never destroyed. Static destructors run after the Python
// interpreter and the driver's own exit handlers may have gone; destroying Dawn objects then
// crashed on NVIDIA at every exit and hung or crashed lavapipe's queue thread. shutdown() (an
// atexit handler of the Python package) instead waits for the GPU while everything is alive.
std::mutex& g_mu = *new std::mutex;
Instance& g_instance = *new Instance;
bool g_adapter_probed = false;
std::vector<Adapter>& g_adapters = *new std::vector<Adapter>;  // device index -> adapter
// device index -> the adapter's position among the NVIDIA adapters (-1: another vendor), for
// runtime/clocks.h.
std::vector<int>& g_nvidia_ordinal = *new std::vector<int>;
constexpr uint32_t kNvidiaVendor = 0x10de;
std::string& g_adapter_error = *new std::string;
// Created devices: written once each under g_mu, read without it (get_device's fast path, per op).
std::array<std::atomic<GpuDevice*>, kMaxDevices> g_devices{};
std::atomic<int> g_adapter_count{-1};  // g_adapters.size() once probed (device_count's fast path)
pid_t g_pid = 0;  // the process that created the devices (a forked child must not touch them)

const char* kNoAdapterAdvice =
    "webgpu: no WebGPU adapter found. Dawn needs a Vulkan (Linux), Metal (macOS) or D3D12 (Windows) "
    "driver. On Debian/Ubuntu without a GPU, `apt-get install mesa-vulkan-drivers libvulkan1` gives a "
    "CPU adapter (lavapipe); with an NVIDIA GPU, install its driver with Vulkan support.";

// Toggle names this Dawn knows (asking for an unknown one is an error in some builds).
std::vector<std::string> list_toggles() {
  const Procs& P = procs();
  // The helper fills names, descriptions and stages up to max_count and returns the full count.
  std::vector<const char*> names(512), descs(512);
  std::vector<int> stages(512);
  size_t n = P.wgpu_dawn_all_toggles(names.data(), descs.data(), stages.data(), names.size());
  if (n > names.size()) {
    names.resize(n), descs.resize(n), stages.resize(n);
    n = P.wgpu_dawn_all_toggles(names.data(), descs.data(), stages.data(), n);
  }
  names.resize(std::min(n, names.size()));
  std::vector<std::string> out;
  for (const char* c : names)
    if (c) out.emplace_back(c);
  return out;
}

// Whether this Dawn knows toggle t (read once; true for all when Dawn lists none).
bool toggle_known(const std::string& t) {
  static const std::vector<std::string> known = list_toggles();
  return known.empty() || std::find(known.begin(), known.end(), t) != known.end();
}

WGPUInstance instance_locked() {
  if (!g_instance) {
    WGPUInstanceDescriptor desc{};
    WGPUInstanceFeatureName timed = WGPUInstanceFeatureName_TimedWaitAny;
    desc.requiredFeatureCount = 1;
    desc.requiredFeatures = &timed;
    WGPUInstance inst = procs().wgpuCreateInstance(&desc);
    TORCH_CHECK(inst, "webgpu: Dawn could not create an instance");
    g_pid = getpid();
    g_instance = Instance(inst);
  }
  return g_instance.get();
}

// The adapter toggles every adapter is requested or enumerated with. Adapter toggles decide which
// features the adapter lists: subgroup matrices only with allow_unsafe_apis, shader-f16 on NVIDIA's
// Vulkan driver only with vulkan_enable_f16_on_nvidia (asking for them on the device is too late).
struct AdapterOptions {
  std::vector<const char*> names;
  WGPUDawnTogglesDescriptor toggles{};
  WGPURequestAdapterOptions opts{};
  AdapterOptions() {
    for (const char* t : {"allow_unsafe_apis", "vulkan_enable_f16_on_nvidia"})
      if (toggle_known(t)) names.push_back(t);
    toggles.chain.sType = static_cast<WGPUSType>(WGPUSType_DawnTogglesDescriptor);
    toggles.enabledToggleCount = names.size();
    toggles.enabledToggles = names.data();
    opts.nextInChain = &toggles.chain;
    opts.powerPreference = WGPUPowerPreference_HighPerformance;
    if (const char* b = std::getenv("TORCH_WEBGPU_BACKEND"); b && *b) opts.backendType = backend_of(b);
  }
  AdapterOptions(const AdapterOptions&) = delete;
  static WGPUBackendType backend_of(const std::string& s) {
    return s == "vulkan"  ? WGPUBackendType_Vulkan
           : s == "metal" ? WGPUBackendType_Metal
           : s == "d3d12" ? WGPUBackendType_D3D12
           : s == "null"  ? WGPUBackendType_Null
                          : WGPUBackendType_Undefined;
  }
};

// Rank of an adapter in device order: discrete GPUs first, then integrated, unknown, CPU.
int adapter_rank(WGPUAdapterType t) {
  switch (t) {
    case WGPUAdapterType_DiscreteGPU: return 0;
    case WGPUAdapterType_IntegratedGPU: return 1;
    case WGPUAdapterType_CPU: return 3;
    default: return 2;
  }
}

// Every adapter through Dawn's native enumeration, one per physical device (its best backend:
// Vulkan/Metal/D3D12 before D3D11 and OpenGL), in device order; CPU adapters are left out when a
// GPU is present. Empty when this Dawn cannot enumerate.
std::vector<Adapter> enumerate_adapters_locked(WGPUInstance inst) {
  const Procs& P = procs();
  if (!P.enumerate_adapters) return {};
  AdapterOptions o;
  const size_t n = P.enumerate_adapters(inst, &o.opts, nullptr, 0);
  std::vector<WGPUAdapter> raw(n);
  const size_t got = n ? std::min(n, P.enumerate_adapters(inst, &o.opts, raw.data(), n)) : 0;
  struct Entry {
    Adapter a;
    int rank;
    int backend;
    uint32_t vendor, device;
    size_t order;
  };
  std::vector<Entry> all;
  for (size_t i = 0; i < got; ++i) {
    Adapter a(raw[i]);  // takes the reference the enumeration returned
    WGPUAdapterInfo ai{};
    P.wgpuAdapterGetInfo(a.get(), &ai);
    const WGPUBackendType bt = ai.backendType;
    const WGPUAdapterType at = ai.adapterType;
    const uint32_t vendor = ai.vendorID, device = ai.deviceID;
    P.wgpuAdapterInfoFreeMembers(ai);
    int backend;
    switch (bt) {
      case WGPUBackendType_Vulkan:
      case WGPUBackendType_Metal:
      case WGPUBackendType_D3D12: backend = 0; break;
      case WGPUBackendType_D3D11: backend = 1; break;
      case WGPUBackendType_OpenGL:
      case WGPUBackendType_OpenGLES: backend = 2; break;
      default: continue;  // Null and anything unknown
    }
    if (o.opts.backendType != WGPUBackendType_Undefined && bt != o.opts.backendType) continue;
    all.push_back({std::move(a), adapter_rank(at), backend, vendor, device, i});
  }
  std::stable_sort(all.begin(), all.end(), [](const Entry& x, const Entry& y) {
    return std::tie(x.rank, x.backend, x.order) < std::tie(y.rank, y.backend, y.order);
  });
  const bool has_gpu = std::any_of(all.begin(), all.end(), [](const Entry& e) { return e.rank < 3; });
  // A physical device seen through a second backend is left out: its (vendor, device) ids appear
  // under a better backend (ids 0 tell nothing). Identical cards (two H200s) share those ids within
  // one backend, so only entries of a worse backend than the best one holding the ids are dropped.
  std::map<std::pair<uint32_t, uint32_t>, int> best_backend;
  for (const Entry& e : all) {
    auto [it, fresh] = best_backend.try_emplace({e.vendor, e.device}, e.backend);
    if (!fresh) it->second = std::min(it->second, e.backend);
  }
  std::vector<Adapter> out;
  for (Entry& e : all) {
    if (has_gpu && e.rank == 3) continue;
    if ((e.vendor || e.device) && e.backend != best_backend[{e.vendor, e.device}]) continue;
    out.push_back(std::move(e.a));
  }
  return out;
}

// What a Dawn request (adapter, device) reports to its callback: a status, the handle, a message.
template <class Status, class Handle>
struct Requested {
  Status status{};
  Handle handle = nullptr;
  std::string msg;
};

// Runs a Dawn request to completion: `start(callback info)` issues it (returning its future), and its
// callback fills r; returns how the wait on the future ended.
template <class CallbackInfo, class Status, class Handle, class Start>
WGPUWaitStatus request(WGPUInstance inst, Requested<Status, Handle>& r, Start start) {
  CallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](Status status, Handle h, WGPUStringView msg, void* ud, void*) {
    auto* out = static_cast<Requested<Status, Handle>*>(ud);
    out->status = status;
    out->handle = h;
    out->msg = str(msg);
  };
  cb.userdata1 = &r;
  WGPUFutureWaitInfo info{start(cb), 0};
  return procs().wgpuInstanceWaitAny(inst, 1, &info, UINT64_MAX);
}

// The one adapter of wgpuInstanceRequestAdapter (Dawn's choice for high performance).
Adapter request_adapter_locked(WGPUInstance inst) {
  AdapterOptions o;
  Requested<WGPURequestAdapterStatus, WGPUAdapter> r;
  const WGPUWaitStatus st = request<WGPURequestAdapterCallbackInfo>(
      inst, r,
      [&](const WGPURequestAdapterCallbackInfo& cb) { return procs().wgpuInstanceRequestAdapter(inst, &o.opts, cb); });
  if (st != WGPUWaitStatus_Success || r.status != WGPURequestAdapterStatus_Success || !r.handle) {
    g_adapter_error = std::string(kNoAdapterAdvice) + (r.msg.empty() ? "" : " (Dawn: " + r.msg + ")");
    // Current Dawn needs Vulkan features that old drivers lack (Mesa's lavapipe before 25 has no
    // dynamic indexing of uniform arrays): say which driver to install instead of "no adapter".
    if (r.msg.find("required") != std::string::npos || r.msg.find("Vulkan") != std::string::npos)
      g_adapter_error +=
          " The Vulkan driver is too old for this Dawn: Mesa >= 25 is needed for lavapipe "
          "(Debian 13's mesa-vulkan-drivers, or on Debian 12 the one of the bookworm-backports "
          "suite: `apt-get install -t bookworm-backports mesa-vulkan-drivers`).";
    return Adapter();
  }
  return Adapter(r.handle);
}

// Device index -> adapter, decided once: every enumerated adapter (or the requested one), then
// TORCH_WEBGPU_VISIBLE_DEVICES="i,j,..." picks and orders them like CUDA_VISIBLE_DEVICES (an index
// may repeat: "0,0" gives two devices on one adapter, e.g. to test multi-device code on one GPU).
void probe_adapter_locked() {
  if (g_adapter_probed) return;
  g_adapter_probed = true;
  WGPUInstance inst = instance_locked();
  auto adapters = [inst] {
    std::vector<Adapter> found = enumerate_adapters_locked(inst);
    if (found.empty()) {
      Adapter a = request_adapter_locked(inst);
      if (a) found.push_back(std::move(a));
    }
    return found;
  };
  std::vector<Adapter> found = adapters();
  if (found.empty()) {
    if (g_adapter_error.empty()) g_adapter_error = kNoAdapterAdvice;
    return;
  }
  std::vector<int> ordinal;
  for (int i = 0, nv = 0; i < int(found.size()); ++i) {
    WGPUAdapterInfo ai{};
    procs().wgpuAdapterGetInfo(found[size_t(i)].get(), &ai);
    ordinal.push_back(ai.vendorID == kNvidiaVendor ? nv++ : -1);
    procs().wgpuAdapterInfoFreeMembers(ai);
  }
  if (const char* v = std::getenv("TORCH_WEBGPU_VISIBLE_DEVICES")) {
    std::vector<int> picked_ordinal;
    // An adapter object makes one device ("consumed" after): a repeated index takes the same
    // adapter from a further enumeration.
    std::vector<Adapter> picked;
    std::vector<std::vector<Adapter>> rounds{found};
    std::vector<size_t> uses(found.size(), 0);
    std::string list = v;
    for (size_t p = 0; p < list.size();) {
      size_t q = list.find(',', p);
      if (q == std::string::npos) q = list.size();
      const std::string item = list.substr(p, q - p);
      p = q + 1;
      char* end = nullptr;
      const long i = std::strtol(item.c_str(), &end, 10);
      // Like CUDA_VISIBLE_DEVICES, the list ends at the first entry that names no adapter.
      if (item.empty() || *end || i < 0 || size_t(i) >= found.size() || picked.size() == kMaxDevices) break;
      const size_t round = uses[i]++;
      while (rounds.size() <= round) rounds.push_back(adapters());
      if (size_t(i) >= rounds[round].size()) break;
      picked.push_back(rounds[round][i]);
      picked_ordinal.push_back(ordinal[size_t(i)]);
    }
    if (picked.empty())
      g_adapter_error = "webgpu: TORCH_WEBGPU_VISIBLE_DEVICES='" + list + "' names none of the " +
                        std::to_string(found.size()) + " adapter(s) found (indices from 0)";
    found = std::move(picked);
    ordinal = std::move(picked_ordinal);
  }
  if (found.size() > size_t(kMaxDevices)) found.resize(kMaxDevices), ordinal.resize(kMaxDevices);
  g_adapters = std::move(found);
  g_nvidia_ordinal = std::move(ordinal);
}

}  // namespace

WGPUInstance instance() {
  std::lock_guard<std::mutex> lock(g_mu);
  return instance_locked();
}

namespace {
// How long a wait polls before it blocks (ns). A blocking wait on a GPU adapter wakes ~60 us after
// the work is done (H100: a one-dispatch op + synchronize took 75 us, CUDA's 13.5 us); polling
// sees the completion at once, as CUDA's default spin-then-yield wait does. Off where every device
// is a CPU adapter (lavapipe runs the kernels on the cores a poll would take).
// TORCH_WEBGPU_SPIN_US sets it (0: always block).
std::atomic<int64_t> g_spin_ns{0};
std::atomic<uint64_t> g_wait_ns{0};  // host time in wait_future (host_wait_ns)

void note_adapter_for_spin(bool cpu_adapter) {
  static const long env = [] {
    const char* e = std::getenv("TORCH_WEBGPU_SPIN_US");
    return e && *e ? std::max(0L, std::strtol(e, nullptr, 10)) : -1L;
  }();
  if (env >= 0)
    g_spin_ns.store(int64_t(env) * 1000, std::memory_order_relaxed);
  else if (!cpu_adapter)
    g_spin_ns.store(200 * 1000, std::memory_order_relaxed);
}
}  // namespace

bool future_done(WGPUFuture f) {
  WGPUFutureWaitInfo info{f, 0};
  WGPUWaitStatus st = procs().wgpuInstanceWaitAny(instance(), 1, &info, 0);
  return st == WGPUWaitStatus_Success && info.completed;
}

uint64_t host_wait_ns() { return g_wait_ns.load(std::memory_order_relaxed); }

void wait_future(WGPUFuture f, const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  };
  bool done = false;
  if (const int64_t spin = g_spin_ns.load(std::memory_order_relaxed); spin > 0) {
    do {
      done = future_done(f);
    } while (!done && elapsed() < spin);
  }
  WGPUWaitStatus st = WGPUWaitStatus_Success;
  if (!done) {
    WGPUFutureWaitInfo info{f, 0};
    st = procs().wgpuInstanceWaitAny(instance(), 1, &info, UINT64_MAX);
  }
  g_wait_ns.fetch_add(uint64_t(elapsed()), std::memory_order_relaxed);
  TORCH_CHECK(st == WGPUWaitStatus_Success, "webgpu: waiting for ", what, " failed (status ", int(st), ")");
}

int device_count() {
  if (const int n = g_adapter_count.load(std::memory_order_acquire); n >= 0) return n;
  try {
    std::lock_guard<std::mutex> lock(g_mu);
    probe_adapter_locked();
    g_adapter_count.store(int(g_adapters.size()), std::memory_order_release);
    return int(g_adapters.size());
  } catch (const c10::Error&) {
    return 0;
  }
}

bool is_available() { return device_count() > 0; }

GpuDevice& get_device(int index) {
  TORCH_CHECK(index >= 0 && index < kMaxDevices, "webgpu: invalid device index ", index);
  if (GpuDevice* d = g_devices[index].load(std::memory_order_acquire)) return *d;  // every op: no lock
  std::lock_guard<std::mutex> lock(g_mu);
  if (GpuDevice* d = g_devices[index].load(std::memory_order_relaxed)) return *d;
  probe_adapter_locked();
  TORCH_CHECK(!g_adapters.empty(), g_adapter_error);
  TORCH_CHECK(size_t(index) < g_adapters.size(), "webgpu: device index ", index, " out of range (", g_adapters.size(),
              " webgpu device(s) available)");
  auto* d = new GpuDevice(index, g_adapters[index]);
  d->set_info("cuda_clocks", hold_cuda_clocks(g_nvidia_ordinal[size_t(index)]));
  note_device_created(index);
  g_devices[index].store(d, std::memory_order_release);
  return *d;
}

std::vector<GpuDevice*> created_devices() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<GpuDevice*> out;
  for (const auto& slot : g_devices)
    if (GpuDevice* d = slot.load(std::memory_order_acquire)) out.push_back(d);
  return out;
}

void shutdown() {
  if (g_pid != getpid()) return;  // a forked child: the parent's GPU state is not ours
  Stream::begin_exit();
  for (GpuDevice* d : created_devices()) {
    try {
      d->stream().quiesce();
    } catch (...) {
      // Exit goes on: an error here belongs to work nobody reads any more.
    }
  }
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

namespace {
const char* component_name(WGPUSubgroupMatrixComponentType t) {
  switch (t) {
    case WGPUSubgroupMatrixComponentType_F32: return "f32";
    case WGPUSubgroupMatrixComponentType_F16: return "f16";
    case WGPUSubgroupMatrixComponentType_U32: return "u32";
    case WGPUSubgroupMatrixComponentType_I32: return "i32";
    case WGPUSubgroupMatrixComponentType_U8: return "u8";
    case WGPUSubgroupMatrixComponentType_I8: return "i8";
    default: return "?";
  }
}
}  // namespace

GpuDevice::GpuDevice(int index, Adapter adapter) : index_(index), adapter_(std::move(adapter)) {
  const Procs& P = procs();
  WGPUAdapter a = adapter_.get();

  const bool has_matrix = P.wgpuAdapterHasFeature(a, WGPUFeatureName_ChromiumExperimentalSubgroupMatrix);
  const bool has_heaps =
      P.wgpuAdapterHasFeature(a, static_cast<WGPUFeatureName>(WGPUFeatureName_AdapterPropertiesMemoryHeaps));
  WGPUAdapterInfo ai{};
  WGPUAdapterPropertiesSubgroupMatrixConfigs mc{};
  WGPUAdapterPropertiesMemoryHeaps heaps{};
  WGPUChainedStruct** next = &ai.nextInChain;
  if (has_matrix) {
    mc.chain.sType = WGPUSType_AdapterPropertiesSubgroupMatrixConfigs;
    *next = &mc.chain;
    next = &mc.chain.next;
  }
  if (has_heaps) {
    heaps.chain.sType = static_cast<WGPUSType>(WGPUSType_AdapterPropertiesMemoryHeaps);  // (an int in the cdef)
    *next = &heaps.chain;
  }
  P.wgpuAdapterGetInfo(a, &ai);
  for (size_t i = 0; i < heaps.heapCount; ++i)
    if (heaps.heapInfo[i].properties & WGPUHeapProperty_DeviceLocal) memory_bytes_ += heaps.heapInfo[i].size;
  if (has_heaps) P.wgpuAdapterPropertiesMemoryHeapsFreeMembers(heaps);
  info_["adapter"] = str(ai.device);
  info_["vendor"] = str(ai.vendor);
  info_["architecture"] = str(ai.architecture);
  info_["driver"] = str(ai.description);
  info_["backend"] = backend_name(ai.backendType);
  note_adapter_for_spin(ai.adapterType == WGPUAdapterType_CPU);
  info_["adapter_type"] = ai.adapterType == WGPUAdapterType_DiscreteGPU     ? "discrete-gpu"
                          : ai.adapterType == WGPUAdapterType_IntegratedGPU ? "integrated-gpu"
                          : ai.adapterType == WGPUAdapterType_CPU           ? "cpu"
                                                                            : "unknown";
  subgroup_min_ = ai.subgroupMinSize;
  subgroup_max_ = ai.subgroupMaxSize;
  for (size_t i = 0; i < mc.configCount; ++i) {
    const WGPUSubgroupMatrixConfig& c = mc.configs[i];
    matrix_configs_.push_back({component_name(c.componentType), component_name(c.resultComponentType), c.M, c.N, c.K,
                               c.minSubgroupSize, c.maxSubgroupSize});
  }
  if (has_matrix) P.wgpuAdapterPropertiesSubgroupMatrixConfigsFreeMembers(mc);
  ai.nextInChain = nullptr;
  P.wgpuAdapterInfoFreeMembers(ai);

  WGPULimits sl{};
  P.wgpuAdapterGetLimits(a, &sl);

  // Each feature only where the adapter has it; kernels work without every one of them.
  // TORCH_WEBGPU_NO_F16=1 leaves shader-f16 off (tests the packed half path on any adapter).
  std::vector<WGPUFeatureName> want;
  const char* no_f16 = std::getenv("TORCH_WEBGPU_NO_F16");
  for (WGPUFeatureName f : {WGPUFeatureName_ShaderF16, WGPUFeatureName_Subgroups, WGPUFeatureName_TimestampQuery,
                            WGPUFeatureName_ChromiumExperimentalSubgroupMatrix}) {
    if (f == WGPUFeatureName_ShaderF16 && no_f16 && std::string(no_f16) == "1") continue;
    if (P.wgpuAdapterHasFeature(a, f)) want.push_back(f);
  }
  // Host memory as a storage buffer (import_host); TORCH_WEBGPU_HOST_IMPORT=0 leaves it off.
  const WGPUFeatureName host_mapped = static_cast<WGPUFeatureName>(WGPUFeatureName_HostMappedPointer);
  const char* no_import = std::getenv("TORCH_WEBGPU_HOST_IMPORT");
  if (!(no_import && std::string(no_import) == "0") && P.wgpuAdapterHasFeature(a, host_mapped))
    want.push_back(host_mapped);

  // allow_unsafe_apis only unlocks experimental features (subgroup matrices); it does not weaken
  // robustness. vulkan_enable_f16_on_nvidia: shader-f16 on NVIDIA's Vulkan driver, which Dawn
  // otherwise hides on some driver versions. Timestamps are not quantised, so kernel timings stay
  // meaningful. Opt-in speed: TORCH_WEBGPU_FAST=1 skips Dawn's validation, its bounds-clamping
  // robustness pass and workgroup-memory zeroing (an out-of-bounds bug may then read or write other
  // memory, so it is never the default); TORCH_WEBGPU_DAWN_TOGGLES="a,b,-c" enables a and b and
  // disables c. Toggles this Dawn does not know are left out.
  std::vector<std::string> on = {"allow_unsafe_apis", "vulkan_enable_f16_on_nvidia"}, off = {"timestamp_quantization"};
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
  std::vector<const char*> enabled, disabled;
  for (const std::string& t : on)
    if (toggle_known(t)) enabled.push_back(t.c_str()), toggles_.push_back(t);
  for (const std::string& t : off)
    if (toggle_known(t)) disabled.push_back(t.c_str()), toggles_.push_back("-" + t);
  WGPUDawnTogglesDescriptor toggles{};
  toggles.chain.sType = static_cast<WGPUSType>(WGPUSType_DawnTogglesDescriptor);
  toggles.enabledToggleCount = enabled.size();
  toggles.enabledToggles = enabled.data();
  toggles.disabledToggleCount = disabled.size();
  toggles.disabledToggles = disabled.data();

  WGPUDeviceDescriptor dd{};
  dd.nextInChain = &toggles.chain;
  dd.label = sv("torch-webgpu");
  dd.requiredFeatureCount = want.size();
  dd.requiredFeatures = want.data();
  sl.nextInChain = nullptr;
  dd.requiredLimits = &sl;
  dd.uncapturedErrorCallbackInfo.callback = &GpuDevice::on_uncaptured_error;
  dd.uncapturedErrorCallbackInfo.userdata1 = this;
  dd.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  dd.deviceLostCallbackInfo.callback = &GpuDevice::on_device_lost;
  dd.deviceLostCallbackInfo.userdata1 = this;

  Requested<WGPURequestDeviceStatus, WGPUDevice> r;
  request<WGPURequestDeviceCallbackInfo>(g_instance.get(), r, [&](const WGPURequestDeviceCallbackInfo& cb) {
    return P.wgpuAdapterRequestDevice(a, &dd, cb);
  });
  TORCH_CHECK(r.status == WGPURequestDeviceStatus_Success && r.handle,
              "webgpu: Dawn could not create a device on adapter '", info_["adapter"], "': ", r.msg);
  device_ = Device(r.handle);
  queue_ = Queue(P.wgpuDeviceGetQueue(r.handle));

  WGPULimits dl{};
  WGPUDawnHostMappedPointerLimits hl{};
  hl.chain.sType = static_cast<WGPUSType>(WGPUSType_DawnHostMappedPointerLimits);
  const bool importing = std::find(want.begin(), want.end(), host_mapped) != want.end();
  if (importing) dl.nextInChain = &hl.chain;
  P.wgpuDeviceGetLimits(r.handle, &dl);
  limits_ = dl;
  limits_.nextInChain = nullptr;
  host_align_ = importing ? std::max<uint32_t>(hl.hostMappedPointerAlignment, 4) : 0;
  // TORCH_WEBGPU_MAX_BINDING (bytes, at least 64 KiB) lowers the binding size that every kernel plans
  // against and the Stream enforces, so that tests reach the paths for operands past it with small
  // tensors (docs/design.md, "Operands past the binding limit"). info()["limits"] shows the value used.
  if (const char* e = std::getenv("TORCH_WEBGPU_MAX_BINDING")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(e, &end, 10);
    if (end != e && *end == '\0' && v >= (64u << 10))
      limits_.maxStorageBufferBindingSize = std::min<uint64_t>(limits_.maxStorageBufferBindingSize, v);
  }
  features_ = want;
  for (WGPUFeatureName f : want) {
    has_f16_ |= f == WGPUFeatureName_ShaderF16;
    has_subgroups_ |= f == WGPUFeatureName_Subgroups;
    has_timestamp_ |= f == WGPUFeatureName_TimestampQuery;
    has_subgroup_matrix_ |= f == WGPUFeatureName_ChromiumExperimentalSubgroupMatrix;
  }
  pipelines_ = std::make_unique<PipelineCache>(*this);
  pool_ = std::make_unique<BufferPool>(*this);
  stream_ = std::make_unique<Stream>(*this);
}

GpuDevice::~GpuDevice() = default;

void GpuDevice::on_uncaptured_error(WGPUDevice const*, WGPUErrorType type, WGPUStringView msg, void* self, void*) {
  auto* d = static_cast<GpuDevice*>(self);
  std::lock_guard<std::mutex> lock(d->err_mu_);
  if (d->errors_.size() < 16) d->errors_.push_back(str(msg));
}

void GpuDevice::on_device_lost(WGPUDevice const*, WGPUDeviceLostReason reason, WGPUStringView msg, void* self, void*) {
  // Destroying the device at exit reports a loss too; nothing is waiting for it then.
  if (reason == WGPUDeviceLostReason_Destroyed || reason == WGPUDeviceLostReason_CallbackCancelled) return;
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

Buffer GpuDevice::create_storage_buffer(uint64_t size, WGPUChainedStruct* chain, const char* label, std::string* err) {
  WGPUBufferDescriptor d{};
  d.nextInChain = chain;
  d.label = sv(label);
  d.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
  d.size = size;
  push_error_scope(WGPUErrorFilter_OutOfMemory);
  push_error_scope(WGPUErrorFilter_Validation);
  Buffer buf(procs().wgpuDeviceCreateBuffer(device(), &d));
  auto v = pop_error_scope();
  auto o = pop_error_scope();
  if (o.first != WGPUErrorType_NoError || v.first != WGPUErrorType_NoError) {
    *err = o.first != WGPUErrorType_NoError ? o.second : v.second;
    return Buffer();
  }
  note_buffer_owner(buf.get(), index_);
  return buf;
}

Buffer GpuDevice::import_host(void* ptr, uint64_t size, void (*dispose)(void*), void* userdata) {
  TORCH_CHECK(host_align_ != 0, "webgpu: the adapter '", info_["adapter"],
              "' cannot use host memory as a device buffer (no host-mapped-pointer feature)");
  TORCH_CHECK(reinterpret_cast<uintptr_t>(ptr) % host_align_ == 0 && size % host_align_ == 0 && size > 0,
              "webgpu: host memory used as a device buffer must start and end at multiples of ", host_align_,
              " bytes (got address ", ptr, ", ", size, " bytes)");
  WGPUBufferHostMappedPointer hp{};
  hp.chain.sType = static_cast<WGPUSType>(WGPUSType_BufferHostMappedPointer);
  hp.pointer = ptr;
  hp.disposeCallback = dispose;
  hp.userdata = userdata;
  std::string err;
  Buffer buf = create_storage_buffer(size, &hp.chain, "torch-webgpu host memory", &err);
  TORCH_CHECK(buf, "webgpu: Dawn could not use ", size, " bytes of host memory as a device buffer: ", err);
  return buf;
}

void GpuDevice::push_error_scope(uint32_t filter) {
  procs().wgpuDevicePushErrorScope(device(), static_cast<WGPUErrorFilter>(filter));
}

std::pair<uint32_t, std::string> GpuDevice::pop_error_scope() {
  struct Result {
    uint32_t type = WGPUErrorType_NoError;
    std::string msg;
  } r;
  WGPUPopErrorScopeCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUPopErrorScopeStatus status, WGPUErrorType type, WGPUStringView msg, void* ud, void*) {
    auto* r = static_cast<Result*>(ud);
    r->type = status == WGPUPopErrorScopeStatus_Success ? uint32_t(type) : uint32_t(WGPUErrorType_Unknown);
    r->msg = str(msg);
  };
  cb.userdata1 = &r;
  wait_future(procs().wgpuDevicePopErrorScope(device(), cb), "an error scope");
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
  for (WGPUFeatureName f : features_)
    out.push_back(f == WGPUFeatureName_ShaderF16                            ? "shader-f16"
                  : f == WGPUFeatureName_Subgroups                          ? "subgroups"
                  : f == WGPUFeatureName_TimestampQuery                     ? "timestamp-query"
                  : f == WGPUFeatureName_ChromiumExperimentalSubgroupMatrix ? "chromium-experimental-subgroup-matrix"
                  : f == WGPUFeatureName_HostMappedPointer                  ? "host-mapped-pointer"
                                                                            : std::to_string(int(f)));
  return out;
}

std::vector<std::string> GpuDevice::device_toggles() const {
  const Procs& P = procs();
  std::vector<const char*> names(256);
  size_t n = P.wgpu_dawn_device_toggles(device(), names.data(), names.size());
  if (n > names.size()) names.resize(n), n = P.wgpu_dawn_device_toggles(device(), names.data(), n);
  names.resize(std::min(n, names.size()));
  std::vector<std::string> out;
  for (const char* c : names)
    if (c) out.emplace_back(c);
  return out;
}

}  // namespace webgpu::rt
