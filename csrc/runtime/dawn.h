// The Dawn library, loaded with dlopen, and the proc table of every wgpu* function it exports.
// Declarations come from webgpu_abi.h, generated at build time from pydawn's ctypes description.
#pragma once
#include <string>

#include "webgpu_abi.h"

namespace webgpu::rt {

struct Procs {
#define WEBGPU_PROC_FIELD(name, ret, args) ret(*name) args = nullptr;
  WGPU_ABI_FUNCTIONS(WEBGPU_PROC_FIELD)
#undef WEBGPU_PROC_FIELD
};

// Where to look for the library. Python sets it from the installed pydawn package before the
// first use; TORCH_WEBGPU_DAWN_LIBRARY, when set, wins.
void set_dawn_library_path(const std::string& path);
std::string dawn_library_path();

// The proc table, loading the library on first use. Throws c10::Error saying how to fix a missing
// or unloadable library.
const Procs& procs();

inline WGPUStringView sv(const char* s) { return WGPUStringView{const_cast<char*>(s), SIZE_MAX}; }
inline std::string str(WGPUStringView v) {
  if (!v.data) return {};
  return v.length == SIZE_MAX ? std::string(v.data) : std::string(v.data, v.length);
}

}  // namespace webgpu::rt
