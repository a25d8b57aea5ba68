// The launch side of kernel/kernel.h: WGSL assembly, the Kernel binding plan (operands sharing a
// block share a binding; windows for blocks past the binding limit), typed accessors, pipeline
// lookup and one dispatch.
#include "kernel/kernel.h"

#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <sstream>

#include "kernel/device.h"
#include "kernel/internal.h"
#include "runtime/pipeline.h"
#include "ops/complex.h"

namespace webgpu::kernel {

std::pair<uint64_t, uint64_t> byte_span(const at::TensorBase& t) {
  const uint64_t isz = t.element_size();
  uint64_t lo = uint64_t(t.storage_offset()) * isz, hi = lo + isz;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return {lo, lo};
    const int64_t st = t.stride(d);
    if (st >= 0)
      hi += uint64_t(t.size(d) - 1) * uint64_t(st) * isz;
    else
      lo -= std::min<uint64_t>(lo, uint64_t(t.size(d) - 1) * uint64_t(-st) * isz);
  }
  return {lo, hi};
}

const char* numbered_name(const char* prefix, size_t i) {
  static const char* b[] = {"b0", "b1",  "b2",  "b3",  "b4",  "b5",  "b6",  "b7", "b8",
                            "b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16"};
  static const char* buf[] = {"buf0", "buf1",  "buf2",  "buf3",  "buf4",  "buf5",  "buf6",  "buf7", "buf8",
                              "buf9", "buf10", "buf11", "buf12", "buf13", "buf14", "buf15", "buf16"};
  TORCH_CHECK(i <= 16, "webgpu: internal: more than 16 storage bindings");
  return std::strcmp(prefix, "b") == 0 ? b[i] : buf[i];
}

namespace {
uint64_t max_bind_of(const DeviceInfo& dev, uint64_t unit) {
  return std::min<uint64_t>(dev.max_binding, 0xfffffff0ull) / unit * unit;
}
// The aligned window over bytes [lo, hi) of a block of `block_size` bytes (unchecked).
Window window_over(const DeviceInfo& dev, uint64_t block_size, uint64_t lo, uint64_t hi, uint64_t unit) {
  if (block_size <= max_bind_of(dev, unit)) return {0, block_size};
  const uint64_t align = std::max<uint64_t>(dev.min_storage_offset_alignment, unit);
  Window w;
  w.start = lo / align * align;
  w.size = std::min<uint64_t>((std::max(hi, lo) - w.start + unit - 1) / unit * unit, block_size - w.start);
  return w;
}
}  // namespace

Window window(const at::TensorBase& t, uint64_t lo, uint64_t hi, const std::string& op, uint64_t unit) {
  rt::Block* b = block_of(t, op.c_str());
  const DeviceInfo& dev = device_info(t);
  const uint64_t max_bind = max_bind_of(dev, unit);
  const Window w = window_over(dev, b->size, lo, hi, unit);
  TORCH_CHECK(w.size <= max_bind, "webgpu: ", op, ": an operand spans ", hi - w.start,
              " bytes, more than this adapter's maxStorageBufferBindingSize limit (", max_bind, " bytes)");
  return w;
}

bool window_fits(const at::TensorBase& t, uint64_t lo, uint64_t hi, uint64_t unit) {
  const DeviceInfo& dev = device_info(t);
  const uint64_t size = block_of(t)->size;
  return size <= max_bind_of(dev, unit) || window_over(dev, size, lo, hi, unit).size <= max_bind_of(dev, unit);
}

bool block_fits(const at::TensorBase& t, uint64_t unit) {
  return block_of(t)->size <= max_bind_of(device_info(t), unit);
}

bool fits_binding(const at::TensorBase& t, uint64_t unit) {
  if (block_fits(t, unit)) return true;
  const auto span = byte_span(t);
  return window_fits(t, span.first, span.second, unit);
}

namespace {

// Directives ("enable f16;", "diagnostic(...);") must precede every declaration.
size_t directive_end(const std::string& src) {
  size_t head = 0;
  while (head < src.size() && (src.compare(head, 7, "enable ") == 0 || src.compare(head, 11, "diagnostic(") == 0 ||
                               src.compare(head, 9, "requires ") == 0)) {
    const size_t nl = src.find('\n', head);
    head = nl == std::string::npos ? src.size() : nl + 1;
  }
  return head;
}

}  // namespace

void launch(std::string key, const std::vector<Storage>& storage, const Params& params, uint64_t groups,
            const std::function<std::string()>& body, const Source& source, bool error_flag) {
  TORCH_CHECK(!storage.empty(), "webgpu: internal: kernel ", key, " has no storage binding");
  if (groups == 0) return;
  const at::TensorBase& any = *storage[0].tensor;
  rt::GpuDevice& dev = gpu_of(any);
  const size_t key_len = key.size();  // the caller's key, for messages
  if (!params.empty()) {
    static const char* kHex = "0123456789abcdef";
    char h[18] = {'|', 'P'};
    for (int i = 0; i < 16; ++i) h[2 + i] = kHex[(params.layout_hash() >> (4 * (15 - i))) & 15];
    key.append(h, 18);
  }
  uint32_t ro_mask = 0;
  c10::SmallVector<rt::Binding, 8> b;
  for (size_t j = 0; j < storage.size(); ++j) {
    const Storage& s = storage[j];
    rt::Block* blk = block_of(*s.tensor, key.c_str());
    TORCH_CHECK(blk != nullptr, "webgpu: ", key, ": an operand has no storage");
    if (!s.write) ro_mask |= 1u << j;
    b.push_back({blk->buffer.get(), s.start, s.size ? s.size : blk->size - s.start});
  }
  auto make = [&]() {
    std::string user = body();
    const size_t head = directive_end(user);
    std::ostringstream s;
    s << source.directives << user.substr(0, head) << rt::wgsl_source("common");
    // The unsigned and float8 conversions (kernel/dtype_uint_fp8.cpp), only where a kernel uses them.
    if (user.find("f8e") != std::string::npos || user.find("f32_to_u") != std::string::npos)
      s << rt::wgsl_source("uint_fp8");
    for (const std::string& lib : source.libraries) s << rt::wgsl_source(lib);
    s << params.wgsl();
    for (size_t j = 0; j < storage.size(); ++j)
      if (storage[j].name[0] != 0)
        s << "@group(0) @binding(" << j + 1 << ") var<storage, " << (storage[j].write ? "read_write" : "read") << "> "
          << storage[j].name << ": array<" << storage[j].elem << ">;\n";
    if (error_flag) {
      s << "@group(0) @binding(" << storage.size() + 1 << ") var<storage, read_write> werr: array<atomic<u32>, "
        << rt::Stream::kErrorWords << ">;\n"
        << "fn report_index_error(op: u32, dim: u32, idx: vec2<u32>, size: u32) {\n"
        << "  if (atomicExchange(&werr[0], 1u) == 0u) {\n"
        << "    atomicStore(&werr[1], op); atomicStore(&werr[2], dim); atomicStore(&werr[3], idx.x);\n"
        << "    atomicStore(&werr[4], idx.y); atomicStore(&werr[5], size); atomicStore(&werr[6], 0u);\n  }\n}\n";
    }
    const std::string rest = user.substr(head);
    params.check_used(rest, key.substr(0, key_len));
    s << rest;
    // TORCH_WEBGPU_DUMP_WGSL=1: print each new kernel (for tuning and debugging).
    if (const char* d = std::getenv("TORCH_WEBGPU_DUMP_WGSL"); d && *d)
      std::fprintf(stderr, "---- %s ----\n%s\n", key.c_str(), s.str().c_str());
    return s.str();
  };
  const uint32_t nb = uint32_t(storage.size()) + (error_flag ? 1 : 0);
  // std::ref: a std::function over a lambda of this many captures would allocate on every call.
  const rt::Pipeline& p = dev.pipelines().get(key, nb, ro_mask, std::ref(make));
  // A checking kernel's error slot is bound by the Stream (binding nb), which also records which
  // blocks the dispatch writes (they hold a poisoned result if the slot is found set).
  dev.stream().dispatch(p, b.data(), uint32_t(b.size()), params.words(), params.num_words(), groups, error_flag,
                        source.weight);
}

void Kernel::param_index(std::string_view name, int64_t v) {
  TORCH_CHECK(v >= 0 && v <= int64_t(UINT32_MAX), "webgpu: ", key_, ": ", name, " (", v,
              ") does not fit the 32-bit indexing of webgpu kernels");
  params_.u32(name, uint32_t(v));
}

void Kernel::param_array(std::string_view name, const std::vector<int64_t>& v) {
  std::vector<uint32_t> w(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    TORCH_CHECK(v[i] >= INT32_MIN && v[i] <= int64_t(UINT32_MAX), "webgpu: ", key_, ": ", name, " (", v[i],
                ") does not fit the 32-bit indexing of webgpu kernels");
    w[i] = uint32_t(v[i]);
  }
  params_.array(name, w.data(), w.size());
}

uint32_t Kernel::error_flag(const std::string& op, bool index_error) {
  error_flag_ = true;
  return rt::Stream::error_op_code(op, index_error);
}

// The op's name: the key up to its first specialisation separator.
std::string Kernel::op_name() const { return key_.substr(0, key_.find_first_of(":|")); }

int Kernel::add(const at::TensorBase& t, CT ct, bool write) {
  if (t.device().type() != c10::DeviceType::PrivateUse1) ops::raise_wrong_device(t, op_name().c_str());
  if (!args_.empty())
    TORCH_CHECK(t.device() == args_[0].t.device(), "Expected all tensors to be on the same device, but found ",
                args_[0].t.device(), " and ", t.device(), " (webgpu op ", op_name(), ")");
  // float64 is storable for raw moves and float64 compute; every other dtype takes the supported-
  // dtype check, whose unsigned/float8 branch consults the kernel allow list (ops/uint_fp8.cpp) by key.
  if (t.scalar_type() == at::kDouble && (ct == CT::RAW || ct == CT::F64))
    ops::check_storable_dtype(t.scalar_type(), key_.c_str());
  else if (t.scalar_type() == at::kDouble)
    ops::check_supported_dtype(t.scalar_type(), op_name().c_str());  // the error names the op, not the cache key
  else
    ops::check_supported_dtype(t.scalar_type(), key_.c_str());
  // complex64 moves as raw 8-byte elements; a kernel computing in a real type cannot take it.
  if (at::isComplexType(t.scalar_type()) && ct != CT::RAW) ops::refuse_complex(op_name());
  args_.push_back({t, ct, write});
  return int(args_.size()) - 1;
}

void Kernel::launch(uint64_t workgroups, const std::function<std::string()>& body) {
  TORCH_CHECK(!args_.empty(), "webgpu: internal: kernel ", key_, " has no tensor operand");
  if (workgroups == 0) return;
  // Binding plan: one binding per distinct block, over the bytes its operands can reach.
  struct Bind {
    rt::Block* block;
    const at::TensorBase* t;
    uint64_t lo, hi;
    bool write = false, atomic = false;
    Window w;
  };
  c10::SmallVector<Bind, 8> binds;
  std::string key;
  key.reserve(key_.size() + 16 * args_.size() + 8);
  key.append(key_);
  bool needs_i64 = false, needs_f64 = false;
  for (Arg& a : args_) {
    rt::Block* b = block_of(a.t);
    TORCH_CHECK(b != nullptr, "webgpu: ", key_, ": an operand has no storage");
    auto span = byte_span(a.t);
    int k = -1;
    for (size_t j = 0; j < binds.size(); ++j)
      if (binds[j].block == b) k = int(j);
    if (k < 0) {
      binds.push_back({b, &a.t, span.first, span.second});
      k = int(binds.size()) - 1;
    }
    binds[k].lo = std::min(binds[k].lo, span.first);
    binds[k].hi = std::max(binds[k].hi, span.second);
    a.binding = k;
    binds[k].write |= a.write;
    binds[k].atomic |= a.write && (a.t.element_size() < 4 || a.atomic);
    needs_i64 |= a.t.scalar_type() == at::kLong || a.ct == CT::I64;
    needs_f64 |= a.ct == CT::F64 || (a.t.scalar_type() == at::kDouble && a.ct != CT::RAW);
    key.append("|").append(dtype_tag(a.t.scalar_type())).append(":");
    key.push_back(char('0' + int(a.ct)));
    key.push_back(':');
    key.append(std::to_string(k)).push_back(a.write ? 'w' : 'r');
  }
  bool windowed = false;
  std::vector<Storage> storage;
  storage.reserve(binds.size());
  for (size_t j = 0; j < binds.size(); ++j) {
    Bind& x = binds[j];
    x.w = window(*x.t, x.lo, x.hi, op_name());
    windowed |= x.w.start != 0 || x.w.size != x.block->size;
    key += x.atomic ? "A" : "-";
    storage.push_back({x.t, numbered_name("b", j + 1), x.atomic ? "atomic<u32>" : "u32", x.write, x.w.start, x.w.size});
  }
  // Windows shift word indices: accessors subtract each binding's first word (a parameter).
  if (windowed) {
    key += "|W";
    std::vector<uint32_t> base(binds.size());
    for (size_t j = 0; j < binds.size(); ++j) base[j] = uint32_t(binds[j].w.start / 4);
    params_.array("win_base", base.data(), base.size());
  }
  if (error_flag_) key += "|E";
  // The Kernel's own Source takes int64 (no copy on the dispatch path; once, should it launch again).
  needs_i64 |= needs_f64;
  if (needs_i64 && (source_.libraries.empty() || source_.libraries.front() != "int64"))
    source_.libraries.insert(source_.libraries.begin(), "int64");
  if (needs_f64 && std::find(source_.libraries.begin(), source_.libraries.end(), "f64") == source_.libraries.end())
    source_.libraries.insert(source_.libraries.begin() + 1, "f64");  // after int64, which it builds on
  auto make = [&]() {
    std::ostringstream s;
    for (size_t i = 0; i < args_.size(); ++i) {
      const Arg& a = args_[i];
      const std::string B = "b" + std::to_string(a.binding + 1), I = std::to_string(i);
      const bool atomic = binds[a.binding].atomic;
      const std::string W = windowed ? "(w - P_win_base(" + std::to_string(a.binding) + "u))" : std::string("w");
      const at::ScalarType dt = a.t.scalar_type();
      const int64_t isz = a.t.element_size();
      const std::string T = wgsl_value_type(a.ct, dt);
      s << "fn wd" << I << "(w: u32) -> u32 { return "
        << (atomic ? "atomicLoad(&" + B + "[" + W + "])" : B + "[" + W + "]") << "; }\n";
      s << "fn ld" << I << "(e: u32) -> " << T << " { let r = " << raw_load(isz, "wd" + I) << "; "
        << (a.ct == CT::RAW ? "return r; }\n" : "let v = " + convert_in(dt, a.ct) + "; return v; }\n");
      if (!a.write) continue;
      if (atomic)
        s << "fn cas" << I << "(w: u32, o: u32, n: u32) -> bool { return atomicCompareExchangeWeak(&" << B << "[" << W
          << "], o, n).exchanged; }\n"
          << "fn aadd" << I << "(w: u32, v: u32) -> u32 { return atomicAdd(&" << B << "[" << W << "], v); }\n";
      s << "fn wr" << I << "(w: u32, v: u32) { "
        << (atomic ? "atomicStore(&" + B + "[" + W + "], v);" : B + "[" + W + "] = v;") << " }\n";
      const std::string bits = a.ct == CT::RAW ? "v" : convert_out(dt, a.ct);
      s << "fn st" << I << "(e: u32, v: " << T << ") { let r = " << bits << "; ";
      if (isz == 8) {
        s << "wr" << I << "(2u * e, r.x); wr" << I << "(2u * e + 1u, r.y); }\n";
      } else if (isz == 4) {
        s << "wr" << I << "(e, r); }\n";
      } else {
        const std::string per = isz == 1 ? "4u" : "2u", width = isz == 1 ? "8u" : "16u",
                          mask = isz == 1 ? "0xffu" : "0xffffu";
        s << "let w = e / " << per << "; let sh = (e % " << per << ") * " << width << "; "
          << "atomicAnd(&" << B << "[" << W << "], ~(" << mask << " << sh)); atomicOr(&" << B << "[" << W << "], (r & "
          << mask << ") << sh); }\n";
      }
    }
    std::string user = body();
    // Directives of the body stay first (kernel::launch hoists them above everything).
    const size_t head = directive_end(user);
    return user.substr(0, head) + s.str() + user.substr(head);
  };
  kernel::launch(std::move(key), storage, params_, workgroups, std::ref(make), source_, error_flag_);
}

}  // namespace webgpu::kernel
