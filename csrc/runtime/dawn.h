// The Dawn runtime and the proc table of every wgpu* function it has. Declarations come from
// webgpu_abi.h, generated at build time from the installed wgpudawn's cdef files; the addresses
// are handed over at run time (docs/design.md, "Dawn"): nothing links Dawn.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "webgpu_abi.h"

namespace webgpu::rt {

struct Procs {
#define WEBGPU_PROC_FIELD(name) decltype(&::name) name = nullptr;
  WGPU_ABI_FUNCTIONS(WEBGPU_PROC_FIELD)
#undef WEBGPU_PROC_FIELD
  // Dawn's native adapter enumeration. wgpudawn's compiled module has it but its cdef files do not
  // declare it, so the signature is written here (as the module's ffi reports it); optional:
  // without it, the one adapter that wgpuInstanceRequestAdapter returns is the only device.
  size_t (*enumerate_adapters)(WGPUInstance, const WGPURequestAdapterOptions*, WGPUAdapter*, size_t) = nullptr;
};

// The name under which Python hands over Procs::enumerate_adapters.
constexpr const char* kEnumerateAdapters = "wgpu_dawn_enumerate_adapters";

// Every function name the proc table holds (Python looks their addresses up in wgpudawn).
std::vector<std::string> proc_names();
// Addresses by name, from `import torch_webgpu` (torch_webgpu/_dawn.py) before the first use.
void set_dawn_procs(const std::unordered_map<std::string, uintptr_t>& procs);
// Where the procs came from, for info(): "wgpudawn" or the TORCH_WEBGPU_DAWN_LIBRARY path.
std::string dawn_source();

// The proc table. TORCH_WEBGPU_DAWN_LIBRARY=/path/libwebgpu_dawn.so loads a Dawn build with the
// same C API by dlopen instead. Throws c10::Error saying how to fix a missing runtime.
const Procs& procs();

inline WGPUStringView sv(const char* s) { return WGPUStringView{s, WGPU_STRLEN}; }
inline std::string str(WGPUStringView v) {
  if (!v.data) return {};
  return v.length == WGPU_STRLEN ? std::string(v.data) : std::string(v.data, v.length);
}

}  // namespace webgpu::rt
