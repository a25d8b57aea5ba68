// The layout of named parameters: WGSL's uniform layout rules (u32/i32/f32 on 4 bytes, vec2<u32> on
// 8, arrays of vec4<u32> on 16), padded with unnamed words where a field needs alignment.
#include "kernel/params.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>

namespace webgpu::kernel {

void Params::f32(std::string name, float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  scalar(std::move(name), Type::F32, b);
}

void Params::i64(std::string name, int64_t v) {
  align(2);
  mix(name, Type::I64, 2);
  fields_.push_back({std::move(name), Type::I64, uint32_t(words_.size()), 2});
  words_.push_back(uint32_t(uint64_t(v)));
  words_.push_back(uint32_t(uint64_t(v) >> 32));
}

void Params::array(std::string name, const uint32_t* v, size_t n, Type type) {
  TORCH_INTERNAL_ASSERT(type == Type::U32S || type == Type::I32S || type == Type::F32S);
  const uint32_t count = uint32_t((std::max<size_t>(n, 1) + 3) / 4 * 4);
  align(4);
  mix(name, type, count);
  fields_.push_back({std::move(name), type, uint32_t(words_.size()), count});
  words_.insert(words_.end(), v, v + n);
  words_.resize(fields_.back().word + count, 0u);
  TORCH_CHECK(words_.size() <= kMaxParamWords, "webgpu: internal: kernel parameters exceed ", kMaxParamWords,
              " words (array ", fields_.back().name, ")");
}

void Params::scalar(std::string name, Type t, uint32_t v) {
  mix(name, t, 1);
  fields_.push_back({std::move(name), t, uint32_t(words_.size()), 1});
  words_.push_back(v);
  TORCH_CHECK(words_.size() <= kMaxParamWords, "webgpu: internal: kernel parameters exceed ", kMaxParamWords,
              " words (", fields_.back().name, ")");
}

void Params::align(uint32_t words) {
  while (words_.size() % words) words_.push_back(0u);
}

void Params::mix(const std::string& name, Type t, uint32_t count) {
  for (const Field& f : fields_)
    TORCH_CHECK(f.name != name, "webgpu: internal: kernel parameter '", name, "' set twice");
  auto byte = [&](uint8_t b) { hash_ = (hash_ ^ b) * 1099511628211ull; };
  for (char c : name) byte(uint8_t(c));
  byte(0xff);
  byte(uint8_t(t));
  byte(uint8_t(count));
}

namespace {
const char* scalar_type(Params::Type t) {
  switch (t) {
    case Params::Type::I32: case Params::Type::I32S: return "i32";
    case Params::Type::F32: case Params::Type::F32S: return "f32";
    default: return "u32";
  }
}
}  // namespace

std::string Params::wgsl() const {
  std::ostringstream s, acc;
  s << "struct Params {";
  uint32_t at = 0, pad = 0;
  for (const Field& f : fields_) {
    for (; at < f.word; ++at) s << " _pad" << pad++ << ": u32,";
    if (f.type == Type::I64) {
      s << " " << f.name << ": vec2<u32>,";
    } else if (f.count > 1 || f.type == Type::U32S || f.type == Type::I32S || f.type == Type::F32S) {
      s << " " << f.name << ": array<vec4<u32>, " << f.count / 4 << ">,";
      acc << "fn P_" << f.name << "(i: u32) -> " << scalar_type(f.type) << " { return ";
      if (f.type == Type::U32S) acc << "P." << f.name << "[i >> 2u][i & 3u]; }\n";
      else acc << "bitcast<" << scalar_type(f.type) << ">(P." << f.name << "[i >> 2u][i & 3u]); }\n";
    } else {
      s << " " << f.name << ": " << scalar_type(f.type) << ",";
    }
    at = f.word + f.count;
  }
  if (fields_.empty()) s << " _unused: u32,";
  s << " };\n@group(1) @binding(0) var<uniform> P: Params;\n" << acc.str();
  return s.str();
}

void Params::check_used(const std::string& source, const std::string& kernel) const {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  // Every P.<name> the source reads must be set (WGSL would fail too, less clearly).
  for (size_t p = source.find("P."); p != std::string::npos; p = source.find("P.", p + 2)) {
    if (p > 0 && ident(source[p - 1])) continue;
    size_t e = p + 2;
    while (e < source.size() && ident(source[e])) ++e;
    const std::string name = source.substr(p + 2, e - p - 2);
    bool known = false;
    for (const Field& f : fields_) known |= f.name == name;
    TORCH_CHECK(known, "webgpu: kernel ", kernel, ": unknown kernel parameter '", name,
                "' (the WGSL reads P.", name, ", the launch does not set it)");
  }
  auto reads = [&](const std::string& use, bool accessor) {
    for (size_t p = source.find(use); p != std::string::npos; p = source.find(use, p + 1)) {
      const size_t e = p + use.size();
      const bool starts = p == 0 || !ident(source[p - 1]);
      const bool ends = e >= source.size() || !ident(source[e]);
      const bool decl = accessor && p >= 3 && source.compare(p - 3, 3, "fn ") == 0;
      if (starts && ends && !decl) return true;
    }
    return false;
  };
  for (const Field& f : fields_) {
    // Arrays are read through their accessor P_<name>(i) or as P.<name>[i] (vec4 words).
    const bool array = f.type == Type::U32S || f.type == Type::I32S || f.type == Type::F32S;
    const bool found = reads("P." + f.name, false) || (array && reads("P_" + f.name, true));
    TORCH_CHECK(found, "webgpu: kernel ", kernel, ": unused kernel parameter '", f.name,
                "' (the launch sets it, the WGSL never reads P.", f.name, array ? " or P_" + f.name : "", ")");
  }
}

}  // namespace webgpu::kernel
