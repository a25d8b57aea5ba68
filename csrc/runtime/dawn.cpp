// Loads Dawn's shared library by path (its SONAME differs from its file name, so we never link it)
// and fills the proc table.
#include "runtime/dawn.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include <c10/util/Exception.h>

namespace webgpu::rt {
namespace {
std::mutex g_mu;
std::string g_path;
Procs g_procs;
bool g_loaded = false;
}  // namespace

void set_dawn_library_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_loaded) g_path = path;
}

std::string dawn_library_path() {
  if (const char* env = std::getenv("TORCH_WEBGPU_DAWN_LIBRARY"); env && *env) return env;
  std::lock_guard<std::mutex> lock(g_mu);
  return g_path;
}

const Procs& procs() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_loaded) return g_procs;
  std::string path;
  if (const char* env = std::getenv("TORCH_WEBGPU_DAWN_LIBRARY"); env && *env) path = env;
  else path = g_path;
  TORCH_CHECK(!path.empty(),
              "webgpu: no Dawn library to load. Install the runtime with `pip install dawn-python==0.3.0` "
              "(it ships pydawn/lib/libwebgpu_dawn_<arch>.so), or point TORCH_WEBGPU_DAWN_LIBRARY at a "
              "Dawn build with the same C API.");
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(lib, "webgpu: could not load the Dawn library '", path, "': ", dlerror(),
              ". Reinstall it with `pip install --force-reinstall dawn-python==0.3.0`, or set "
              "TORCH_WEBGPU_DAWN_LIBRARY to a working build.");
  std::string missing;
#define WEBGPU_PROC_LOAD(name, ret, args)                                   \
  g_procs.name = reinterpret_cast<ret(*) args>(dlsym(lib, #name));          \
  if (!g_procs.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  WGPU_ABI_FUNCTIONS(WEBGPU_PROC_LOAD)
#undef WEBGPU_PROC_LOAD
  TORCH_CHECK(missing.empty(), "webgpu: the Dawn library '", path,
              "' lacks functions its ABI description declares (", missing,
              "); it is not the build dawn-python==0.3.0 ships.");
  g_path = path;
  g_loaded = true;
  return g_procs;
}

}  // namespace webgpu::rt
