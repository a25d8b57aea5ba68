// Fills the proc table from the addresses Python hands over (wgpudawn exports no C symbols), or
// from a Dawn shared library named by TORCH_WEBGPU_DAWN_LIBRARY.
#include "runtime/dawn.h"

#include <dlfcn.h>

#include <cstdlib>
#include <atomic>
#include <mutex>

#include <c10/util/Exception.h>

namespace webgpu::rt {
namespace {
std::mutex g_mu;
std::unordered_map<std::string, uintptr_t> g_given;
std::string g_source;
Procs g_procs;
bool g_loaded = false;
std::atomic<bool> g_ready{false};  // g_loaded, readable without g_mu

constexpr const char* kInstall = "pip install wgpudawn==0.32.0.4";

const char* env_library() {
  const char* e = std::getenv("TORCH_WEBGPU_DAWN_LIBRARY");
  return e && *e ? e : nullptr;
}
}  // namespace

std::vector<std::string> proc_names() {
  std::vector<std::string> out;
#define WEBGPU_PROC_NAME(name) out.push_back(#name);
  WGPU_ABI_FUNCTIONS(WEBGPU_PROC_NAME)
#undef WEBGPU_PROC_NAME
  out.push_back(kEnumerateAdapters);
  return out;
}

void set_dawn_procs(const std::unordered_map<std::string, uintptr_t>& procs) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_loaded) g_given = procs;
}

std::string dawn_source() {
  if (const char* e = env_library()) return e;
  return "wgpudawn";
}

const Procs& procs() {
  // Every Dawn call goes through here: once loaded, without the lock (the table never changes again).
  if (g_ready.load(std::memory_order_acquire)) return g_procs;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_loaded) return g_procs;
  std::unordered_map<std::string, uintptr_t> addr;
  if (const char* path = env_library()) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    TORCH_CHECK(lib, "webgpu: could not load the Dawn library '", path,
                "' named by TORCH_WEBGPU_DAWN_LIBRARY: ", dlerror(),
                ". Unset it to use the runtime of the wgpudawn package.");
    auto gpa = reinterpret_cast<WGPUProc (*)(WGPUStringView)>(dlsym(lib, "wgpuGetProcAddress"));
    for (const std::string& n : proc_names()) {
      void* p = dlsym(lib, n.c_str());
      if (!p && gpa) p = reinterpret_cast<void*>(gpa(sv(n.c_str())));
      if (p) addr[n] = reinterpret_cast<uintptr_t>(p);
    }
    g_source = path;
  } else {
    TORCH_CHECK(!g_given.empty(),
                "webgpu: the Dawn runtime was not handed over; `import torch_webgpu` does that from the "
                "wgpudawn package (`",
                kInstall, "`).");
    addr = g_given;
    g_source = "wgpudawn";
  }
  std::string missing;
#define WEBGPU_PROC_LOAD(name)                                      \
  if (auto it = addr.find(#name); it != addr.end() && it->second)   \
    g_procs.name = reinterpret_cast<decltype(&::name)>(it->second); \
  else                                                              \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
  WGPU_ABI_FUNCTIONS(WEBGPU_PROC_LOAD)
#undef WEBGPU_PROC_LOAD
  if (auto it = addr.find(kEnumerateAdapters); it != addr.end() && it->second)
    g_procs.enumerate_adapters = reinterpret_cast<decltype(g_procs.enumerate_adapters)>(it->second);
  TORCH_CHECK(missing.empty(), "webgpu: the Dawn runtime (", g_source,
              ") lacks functions this build was compiled for (", missing.substr(0, 400),
              "); torch_webgpu was built against a different Dawn. Reinstall with `", kInstall,
              "` and rebuild torch_webgpu.");
  g_loaded = true;
  g_ready.store(true, std::memory_order_release);
  return g_procs;
}

}  // namespace webgpu::rt
