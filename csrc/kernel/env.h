// Switches from the environment (kernel choices for tests and measurements). Read at each call, so a
// test may set a variable at run time; getenv and a compare are cheap next to a launch.
#pragma once
#include <cstdlib>
#include <cstring>

namespace webgpu::kernel {

// 0 where the variable `name` is "0", 1 where it is "1", else `otherwise` (unset or anything else).
inline int env_switch(const char* name, int otherwise) {
  const char* e = std::getenv(name);
  if (e && std::strcmp(e, "0") == 0) return 0;
  if (e && std::strcmp(e, "1") == 0) return 1;
  return otherwise;
}

}  // namespace webgpu::kernel
