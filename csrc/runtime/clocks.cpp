// See clocks.h: a CUDA primary context held per NVIDIA GPU so that the driver keeps its clocks up.
#include "runtime/clocks.h"

#include <cstdlib>
#include <mutex>
#include <set>

#if defined(__linux__)
#include <dlfcn.h>
#endif

namespace webgpu {

std::string hold_cuda_clocks(int ordinal) {
  if (ordinal < 0) return "n/a";
  if (const char* e = std::getenv("TORCH_WEBGPU_CUDA_CLOCKS"); e && std::string(e) == "0") return "off";
#if defined(__linux__)
  static std::mutex mu;
  static std::set<int> held;
  std::lock_guard<std::mutex> lock(mu);
  if (held.count(ordinal)) return "held";
  // The driver library, never unloaded: the context lives until the process exits.
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "no CUDA driver";
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using Retain = int (*)(void**, int);
  auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet"));
  auto retain = reinterpret_cast<Retain>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  if (!init || !count || !get || !retain) return "no CUDA driver";
  if (int r = init(0); r != 0) return "cuInit failed (" + std::to_string(r) + ")";
  int n = 0;
  if (count(&n) != 0 || ordinal >= n) return "no CUDA device " + std::to_string(ordinal);
  int dev = 0;
  void* ctx = nullptr;
  if (int r = get(&dev, ordinal); r != 0) return "cuDeviceGet failed (" + std::to_string(r) + ")";
  if (int r = retain(&ctx, dev); r != 0) return "cuDevicePrimaryCtxRetain failed (" + std::to_string(r) + ")";
  held.insert(ordinal);
  return "held";
#else
  return "n/a";
#endif
}

}  // namespace webgpu
