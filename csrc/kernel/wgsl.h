// WGSL assembly for kernels (docs/design.md, "WGSL sources"): the embedded wgsl/ files, their
// sections, and the one `{{KEY}}` substitution.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace webgpu::kernel {

// wgsl/<name>.wgsl as embedded at build time.
const std::string& library(const std::string& name);
// One section of wgsl/<file>.wgsl: the file's preamble (everything before its first `//== ` line)
// followed by the lines from `//== <name>` to the next `//== ` line.
std::string section(const std::string& file, const std::string& name);
// Replaces every {{KEY}} of src; raises if a placeholder is left unfilled.
std::string fill(std::string src, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace webgpu::kernel
