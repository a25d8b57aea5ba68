// Switches from the environment (kernel choices for tests and measurements). Read at each call, so a
// test may set a variable at run time; getenv and a compare are cheap next to a launch.
#pragma once
#include <cstdlib>
#include <cstring>
#include <vector>

namespace webgpu::kernel {

// 0 where the variable `name` is "0", 1 where it is "1", else `otherwise` (unset or anything else).
inline int env_switch(const char* name, int otherwise) {
  const char* e = std::getenv(name);
  if (e && std::strcmp(e, "0") == 0) return 0;
  if (e && std::strcmp(e, "1") == 0) return 1;
  return otherwise;
}

// The comma-separated integers of the variable `name` ("1024,64,4"): empty when it is unset or
// holds anything else, or fewer than `min_count` of them. For tuning knobs, which their callers read
// once and check against their own ranges.
inline std::vector<long> env_numbers(const char* name, size_t min_count) {
  std::vector<long> v;
  const char* e = std::getenv(name);
  if (!e) return v;
  for (const char* p = e;;) {
    char* end = nullptr;
    const long x = std::strtol(p, &end, 10);
    if (end == p) return {};
    v.push_back(x);
    if (*end == '\0') break;
    if (*end != ',') return {};
    p = end + 1;
  }
  if (v.size() < min_count) return {};
  return v;
}

}  // namespace webgpu::kernel
