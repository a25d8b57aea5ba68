#include "kernel/wgsl.h"

#include <c10/util/Exception.h>

#include "runtime/pipeline.h"

namespace webgpu::kernel {

const std::string& library(const std::string& name) { return rt::wgsl_source(name); }

std::string section(const std::string& file, const std::string& name) {
  const std::string& src = rt::wgsl_source(file);
  const size_t first = src.find("//== ");
  const size_t at = src.find("//== " + name + "\n");
  TORCH_CHECK(first != std::string::npos && at != std::string::npos, "webgpu: internal: no section ", name, " in ",
              file, ".wgsl");
  const size_t end = src.find("//== ", at + 5);
  return src.substr(0, first) + src.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::string fill(std::string src, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [k, v] : values) {
    const std::string from = "{{" + k + "}}";
    for (size_t p = src.find(from); p != std::string::npos; p = src.find(from, p + v.size()))
      src.replace(p, from.size(), v);
  }
  const size_t left = src.find("{{");
  TORCH_CHECK(left == std::string::npos,
              "webgpu: internal: WGSL placeholder left unfilled: ", src.substr(left, src.find("}}", left) + 2 - left));
  return src;
}

}  // namespace webgpu::kernel
