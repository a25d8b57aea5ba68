// The layout of named parameters: WGSL's uniform layout rules (u32/i32/f32 on 4 bytes, vec2<u32> on
// 8, arrays of vec4<u32> on 16), padded with unnamed words where a field needs alignment.
#include "kernel/params.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>

namespace webgpu::kernel {

void Params::f32(std::string_view name, float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  scalar(name, Type::F32, b);
}

void Params::i64(std::string_view name, int64_t v) {
  align(2);
  add(name, Type::I64, 2);
  push(uint32_t(uint64_t(v)));
  push(uint32_t(uint64_t(v) >> 32));
}

void Params::array(std::string_view name, const uint32_t* v, size_t n, Type type) {
  TORCH_INTERNAL_ASSERT(type == Type::U32S || type == Type::I32S || type == Type::F32S);
  const uint32_t count = uint32_t((std::max<size_t>(n, 1) + 3) / 4 * 4);
  align(4);
  const Field& f = add(name, type, count);
  TORCH_CHECK(f.word + count <= kMaxParamWords, "webgpu: internal: kernel parameters exceed ", kMaxParamWords,
              " words (array ", f.name, ")");
  for (size_t i = 0; i < n; ++i) words_[nwords_++] = v[i];
  while (nwords_ < f.word + count) words_[nwords_++] = 0u;
}

void Params::scalar(std::string_view name, Type t, uint32_t v) {
  add(name, t, 1);
  push(v);
}

void Params::push(uint32_t v) {
  TORCH_CHECK(nwords_ < kMaxParamWords, "webgpu: internal: kernel parameters exceed ", kMaxParamWords, " words (",
              fields_[nfields_ - 1].name, ")");
  words_[nwords_++] = v;
}

void Params::align(uint32_t words) {
  while (nwords_ % words) push(0u);
}

Params::Field& Params::add(std::string_view name, Type t, uint32_t count) {
  TORCH_CHECK(nfields_ < kMaxFields, "webgpu: internal: more than ", kMaxFields, " kernel parameters");
  TORCH_CHECK(!name.empty() && name.size() <= kMaxName, "webgpu: internal: kernel parameter name '", name,
              "' is empty or longer than ", kMaxName, " characters");
  auto byte = [&](uint8_t b) { hash_ = (hash_ ^ b) * 1099511628211ull; };
  for (char c : name) byte(uint8_t(c));
  byte(0xff);
  byte(uint8_t(t));
  byte(uint8_t(count));
  Field& f = fields_[nfields_++];
  std::memcpy(f.name, name.data(), name.size());
  f.name[name.size()] = 0;
  f.type = t;
  f.word = nwords_;
  f.count = count;
  return f;
}

namespace {
const char* scalar_type(Params::Type t) {
  switch (t) {
    case Params::Type::I32:
    case Params::Type::I32S: return "i32";
    case Params::Type::F32:
    case Params::Type::F32S: return "f32";
    default: return "u32";
  }
}
}  // namespace

std::string Params::wgsl() const {
  std::ostringstream s, acc;
  s << "struct Params {";
  uint32_t at = 0, pad = 0;
  for (uint32_t i = 0; i < nfields_; ++i) {
    const Field& f = fields_[i];
    // Checked here, on a pipeline miss, rather than on every dispatch.
    for (uint32_t j = 0; j < i; ++j)
      TORCH_CHECK(std::strcmp(f.name, fields_[j].name) != 0, "webgpu: internal: kernel parameter '", f.name,
                  "' set twice");
    for (; at < f.word; ++at) s << " _pad" << pad++ << ": u32,";
    if (f.type == Type::I64) {
      s << " " << f.name << ": vec2<u32>,";
    } else if (f.count > 1 || f.type == Type::U32S || f.type == Type::I32S || f.type == Type::F32S) {
      s << " " << f.name << ": array<vec4<u32>, " << f.count / 4 << ">,";
      acc << "fn P_" << f.name << "(i: u32) -> " << scalar_type(f.type) << " { return ";
      if (f.type == Type::U32S)
        acc << "P." << f.name << "[i >> 2u][i & 3u]; }\n";
      else
        acc << "bitcast<" << scalar_type(f.type) << ">(P." << f.name << "[i >> 2u][i & 3u]); }\n";
    } else {
      s << " " << f.name << ": " << scalar_type(f.type) << ",";
    }
    at = f.word + f.count;
  }
  if (nfields_ == 0) s << " _unused: u32,";
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
    for (uint32_t i = 0; i < nfields_; ++i) known |= name == fields_[i].name;
    TORCH_CHECK(known, "webgpu: kernel ", kernel, ": unknown kernel parameter '", name, "' (the WGSL reads P.", name,
                ", the launch does not set it)");
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
  for (uint32_t i = 0; i < nfields_; ++i) {
    const Field& f = fields_[i];
    // Arrays are read through their accessor P_<name>(i) or as P.<name>[i] (vec4 words).
    const bool array = f.type == Type::U32S || f.type == Type::I32S || f.type == Type::F32S;
    const bool found = reads(std::string("P.") + f.name, false) || (array && reads(std::string("P_") + f.name, true));
    TORCH_CHECK(found, "webgpu: kernel ", kernel, ": unused kernel parameter '", f.name,
                "' (the launch sets it, the WGSL never reads P.", f.name, array ? std::string(" or P_") + f.name : "",
                ")");
  }
}

}  // namespace webgpu::kernel
