// The elementwise engine (docs/design.md, "Engines"): plans bindings for a TensorIterator's operands, specialises the WGSL
// template (wgsl/kernels/elementwise.wgsl) per dtype/rank/alias pattern, and records one dispatch.
#include "engines/elementwise.h"

#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <sstream>

#include "ops/common.h"
#include "ops/complex.h"
#include "ops/float64.h"
#include "kernel/device.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"

namespace webgpu::ops {
namespace {

// The vec4 path's shape: vec4 quads per invocation (strided by the thread count, so neighbours stay
// coalesced) and workgroup size. TORCH_WEBGPU_EW_VEC="quads,wg" overrides them for tuning.
struct VecShape {
  uint32_t quads = 4, wg = kWG;
};
// H100, 2^26 f32 add out=: 1 quad x 256: 0.787x CUDA; 4 x 256: 0.87-0.91x; 2 x 1024: 0.905x.
const VecShape& vec_shape(const kernel::DeviceInfo& dev) {
  static const VecShape v = [&] {
    VecShape r;
    if (dev.max_invocations >= 1024 && dev.max_workgroup_size_x >= 1024) {
      r.quads = 2;
      r.wg = 1024;
    }
    if (const char* e = std::getenv("TORCH_WEBGPU_EW_VEC")) {
      unsigned q = 0, w = 0;
      if (std::sscanf(e, "%u,%u", &q, &w) == 2 && q >= 1 && q <= 16 && w >= 32 && w <= 1024 && (w & (w - 1)) == 0) {
        r.quads = q;
        r.wg = w;
      }
    }
    return r;
  }();
  return v;
}

// Vec4: every operand a contiguous 4-byte run starting on a 16-byte boundary; four elements per
// invocation through vec4 loads and stores (the bandwidth path). Half8: the same for operands of
// 2-byte types (f16, bf16, int16), eight elements per vec4 word; float16 converts in hardware where
// the device has shader-f16 (exact widening, one rounding back, as CUDA), else in software.
enum class Mode { Elem, Word, Atomic, Vec4, Half8 };

struct Operand {
  const void* block = nullptr;
  at::ScalarType dtype;
  int64_t itemsize = 4;
  uint64_t byte_off = 0;
  c10::SmallVector<int64_t, 6> strides;  // elements
  bool cpu_scalar = false;
  ScalarBits value;
  int binding = -1;
  uint64_t lo = 0, hi = 0;  // accessed byte range
};

struct BindingPlan {
  const void* block;
  const at::TensorBase* t;
  uint64_t lo, hi;
  bool written = false, atomic = false;
  uint64_t start = 0, size = 0;
};

std::string raw_type(int64_t itemsize) { return itemsize == 8 ? "vec2<u32>" : "u32"; }

std::string ct_type(CT ct, int64_t raw_itemsize) { return ct == CT::RAW ? raw_type(raw_itemsize) : wgsl_type(ct); }

// A scalar operand as a named parameter of the compute type (RAW: the raw bits of raw_itemsize
// bytes); WGSL reads P.<name> already typed.
void scalar_param(kernel::Params& p, const std::string& name, CT ct, const ScalarBits& v, int64_t raw_itemsize) {
  if (ct == CT::F32) {
    float f;
    std::memcpy(&f, &v.lo, 4);
    p.f32(name, f);
  } else if (ct == CT::I32) {
    p.i32(name, int32_t(v.lo));
  } else if (ct == CT::RAW && raw_itemsize < 8) {
    p.u32(name, v.lo);
  } else {
    p.i64(name, int64_t(uint64_t(v.lo) | (uint64_t(v.hi) << 32)));
  }
}

// Words the parameters take: header (count, aux, numel) padded to 4, then the shape, the operands'
// offsets and their strides, each an array padded to 4 words, then the scalars (two words each).
int64_t param_words(int R, int nops, size_t nscalars) {
  auto pad4 = [](int64_t n) { return (n + 3) / 4 * 4; };
  return 4 + pad4(R) + pad4(nops) + pad4(int64_t(nops) * R) + 2 * int64_t(nscalars + nops);
}

// A CPU scalar operand's value, read straight from its one element; cast to `as` first when
// given, the way CPU's TensorIterator casts inputs to the common dtype (wrapping, no range check).
c10::Scalar cpu_scalar_value(const at::TensorBase& t, at::ScalarType as) {
  c10::Scalar v;
  const void* p = t.const_data_ptr();
  switch (t.scalar_type()) {
#define WEBGPU_READ(T, N) \
  case at::ScalarType::N: v = c10::Scalar(*static_cast<const T*>(p)); break;
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX(WEBGPU_READ)
#undef WEBGPU_READ
    default: v = at::Tensor(t).item();
  }
  if (as == at::ScalarType::Undefined || as == t.scalar_type()) return v;
  return cast_scalar(v, as);
}

// WGSL that rounds a compute-type value v to dtype t's range or precision, for outputs of another
// dtype: CPU computes in the common dtype and casts after (int8 wraps, float16 rounds) first.
std::string narrow_to(at::ScalarType t, CT ct) {
  if (kernel::is_uint_fp8(t)) return kernel::narrow_uint_fp8(t, ct);
  if (ct == CT::F32) {
    if (t == at::kHalf) return "f16_to_f32(f32_to_f16(v))";
    if (t == at::kBFloat16) return "bitcast<f32>(f32_to_bf16(v) << 16u)";
  } else if (ct == CT::I32) {
    if (t == at::kChar) return "((v << 24u) >> 24u)";
    if (t == at::kByte) return "(v & 0xff)";
    if (t == at::kShort) return "((v << 16u) >> 16u)";
    if (t == at::kBool) return "select(0i, 1i, v != 0i)";
  }
  return "";
}

// Whether one launch can take iter: at most 2^32-1 elements, and each block's operands within one
// binding window (docs/design.md, "Operands past the binding limit"). Checks the blocks alone unless
// one is larger than a binding.
bool fits_one_launch(const at::TensorIteratorBase& iter) {
  if (iter.numel() > int64_t(UINT32_MAX)) return false;
  const int n = iter.ntensors();
  bool small = true;
  for (int i = 0; i < n && small; ++i)
    if (i == 0 || !iter.is_cpu_scalar(i)) small = kernel::block_fits(iter.tensor_base(i));
  if (small) return true;
  struct Union {
    const void* block;
    const at::TensorBase* t;
    uint64_t lo, hi;
  };
  std::vector<Union> unions;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && iter.is_cpu_scalar(i)) continue;
    const at::TensorBase& t = iter.tensor_base(i);
    const uint64_t lo = static_cast<const char*>(iter.data_ptr(i)) - static_cast<const char*>(t.storage().data());
    uint64_t hi = lo + iter.element_size(i);
    for (int d = 0; d < iter.ndim(); ++d) hi += uint64_t(iter.shape()[d] - 1) * uint64_t(iter.strides(i)[d]);
    const void* b = kernel::block_id(t);
    auto u = std::find_if(unions.begin(), unions.end(), [&](const Union& x) { return x.block == b; });
    if (u == unions.end())
      unions.push_back({b, &t, lo, hi});
    else
      u->lo = std::min(u->lo, lo), u->hi = std::max(u->hi, hi);
  }
  for (const Union& u : unions)
    if (!kernel::window_fits(*u.t, u.lo, u.hi)) return false;
  return true;
}

}  // namespace

void run_elementwise(at::TensorIteratorBase& iter, const std::string& name, const std::string& expr, Libs libs, CT ct,
                     const std::vector<ScalarBits>& scalars, at::ScalarType scalar_dtype) {
  const int64_t numel = iter.numel();
  if (numel == 0) return;
  TORCH_CHECK(iter.noutputs() == 1, "webgpu: ", name, ": one output expected");
  if (numel > 1 && !fits_one_launch(iter)) {
    // Halves along the dim spanning the most bytes (TensorIterator::split, as CUDA splits for 32-bit
    // indexing) until each part fits: the parts are independent elements, so results are the same.
    at::TensorIterator rest(iter);
    std::unique_ptr<at::TensorIterator> first = rest.split(rest.get_dim_to_split());
    run_elementwise(*first, name, expr, libs, ct, scalars, scalar_dtype);
    run_elementwise(rest, name, expr, libs, ct, scalars, scalar_dtype);
    return;
  }
  const int R = std::max<int>(iter.ndim(), 1);
  const int nops = iter.ntensors();
  TORCH_CHECK(param_words(R, nops, scalars.size()) <= kernel::kMaxParamWords, "webgpu: ", name, ": ", iter.ndim(),
              " non-mergeable dimensions over ", nops,
              " tensors exceed the kernel parameter slot; make an input contiguous first");

  c10::SmallVector<int64_t, 6> shape(R, 1);
  for (int d = 0; d < iter.ndim(); ++d) shape[d] = iter.shape()[d];
  if (ct == CT::F64) libs |= lib::Float64;
  if (scalar_dtype == at::kDouble && ct != CT::F64 && ct != CT::RAW) raise_no_float64_kernel(name.c_str());

  const kernel::DeviceInfo* dev = nullptr;
  c10::SmallVector<Operand, 4> ops(nops);
  for (int i = 0; i < nops; ++i) {
    Operand& o = ops[i];
    const at::TensorBase& t = iter.tensor_base(i);
    o.dtype = iter.dtype(i);
    o.itemsize = c10::elementSize(o.dtype);
    if (i > 0 && iter.is_cpu_scalar(i)) {  // a CPU scalar (any dtype, f64 included) is a parameter
      o.cpu_scalar = true;
      o.value = scalar_bits(cpu_scalar_value(t, scalar_dtype), ct);
      continue;
    }
    if (o.dtype == at::kDouble && float64_enabled()) {
      // float64: raw moves, float64 compute, or an output widened from another compute type.
      if (i > 0 && ct != CT::F64 && ct != CT::RAW) raise_no_float64_kernel(name.c_str());
      libs |= lib::Float64;
    } else {
      // uint16/32/64 and float8 operands read or written as float32 or raw bits convert as CPU casts;
      // computing in their own type is for the ops that allow it (ops/uint_fp8.h).
      if (!kernel::is_uint_fp8(o.dtype) || (ct != CT::F32 && ct != CT::RAW))
        check_supported_dtype(o.dtype, name.c_str());
      // complex64 moves raw (or converts, in copies); computing on it takes ops/complex.cpp's rows.
      if (at::isComplexType(o.dtype) && ct != CT::RAW && name != "copy") refuse_complex(name);
    }
    if (!dev) dev = &kernel::device_info(t);
    o.block = kernel::block_id(t);
    o.byte_off = static_cast<const char*>(iter.data_ptr(i)) - static_cast<const char*>(t.storage().data());
    o.strides.assign(R, 0);
    uint64_t extent = 0;
    for (int d = 0; d < iter.ndim(); ++d) {
      const int64_t sb = iter.strides(i)[d];
      TORCH_CHECK(sb >= 0 && sb % o.itemsize == 0, "webgpu: ", name, ": unsupported stride");
      o.strides[d] = sb / o.itemsize;
      extent += uint64_t(shape[d] - 1) * uint64_t(sb);
    }
    o.lo = o.byte_off;
    o.hi = o.byte_off + extent + o.itemsize;
  }
  TORCH_CHECK(dev, "webgpu: ", name, ": no webgpu tensor among the operands");

  // Output mode: sub-word outputs are written a whole word per invocation when contiguous in
  // iteration order, else with atomics, so neighbouring elements never race.
  const Operand& out = ops[0];
  Mode mode = Mode::Elem;
  if (out.itemsize < 4) {
    bool contiguous = true;
    int64_t expect = 1;
    for (int d = 0; d < R; ++d) {
      if (shape[d] != 1 && out.strides[d] != expect) contiguous = false;
      expect *= shape[d];
    }
    mode = contiguous ? Mode::Word : Mode::Atomic;
  }

  // One binding per distinct block (aliasing views share one binding); windows when a block is
  // larger than a storage binding may be.
  c10::SmallVector<BindingPlan, 4> binds;
  for (int i = 0; i < nops; ++i) {
    Operand& o = ops[i];
    if (o.cpu_scalar) continue;
    int b = -1;
    for (size_t j = 0; j < binds.size(); ++j)
      if (binds[j].block == o.block) b = int(j);
    if (b < 0) {
      binds.push_back({o.block, &iter.tensor_base(i), o.lo, o.hi});
      b = int(binds.size()) - 1;
    }
    binds[b].lo = std::min(binds[b].lo, o.lo);
    binds[b].hi = std::max(binds[b].hi, o.hi);
    if (i == 0) {
      binds[b].written = true;
      binds[b].atomic = mode == Mode::Atomic;
    }
    o.binding = b;
  }
  for (auto& b : binds) {
    const kernel::Window w = kernel::window(*b.t, b.lo, b.hi, name);
    b.start = w.start;
    b.size = w.size;
  }

  // Parameters: each operand's element offset (relative to its binding's window) and strides.
  c10::SmallVector<uint32_t, 8> offs(nops, 0), strides(size_t(nops) * R, 0);
  for (int i = 0; i < nops; ++i) {
    const Operand& o = ops[i];
    if (o.cpu_scalar) continue;
    const uint64_t rel = (o.byte_off - binds[o.binding].start) / o.itemsize;
    TORCH_CHECK(rel <= UINT32_MAX, "webgpu: ", name, ": offset out of range");
    offs[i] = uint32_t(rel);
    for (int d = 0; d < R; ++d) strides[size_t(i) * R + d] = uint32_t(o.strides[d]);
  }
  uint64_t threads = uint64_t(numel);
  if (mode == Mode::Elem && R == 1 && numel >= 4) {
    bool vec = true;
    for (int i = 0; i < nops && vec; ++i) {
      const Operand& o = ops[i];
      if (o.cpu_scalar) continue;
      vec = o.itemsize == 4 && (o.strides[0] == 1 || shape[0] == 1) && offs[i] % 4 == 0 &&
            binds[o.binding].start == 0 && binds[o.binding].size % 16 == 0;
    }
    if (vec) {
      mode = Mode::Vec4;
      const uint64_t quads = (uint64_t(numel) + 3) / 4;
      threads = (quads + vec_shape(*dev).quads - 1) / vec_shape(*dev).quads;
    }
  }
  if ((mode == Mode::Word || mode == Mode::Elem) && R == 1 && numel >= 8) {
    bool half = true;
    for (int i = 0; i < nops && half; ++i) {
      const Operand& o = ops[i];
      if (o.cpu_scalar) continue;
      half = o.itemsize == 2 && o.strides[0] == 1 && offs[i] % 8 == 0 && binds[o.binding].start == 0 &&
             binds[o.binding].size % 16 == 0 && !binds[o.binding].atomic;
    }
    if (half) {
      mode = Mode::Half8;
      const uint64_t quads = (uint64_t(numel) + 7) / 8;
      threads = (quads + vec_shape(*dev).quads - 1) / vec_shape(*dev).quads;
    }
  }
  const bool vec_mode = mode == Mode::Vec4 || mode == Mode::Half8;
  const int64_t epw = 4 / std::min<int64_t>(out.itemsize, 4);
  uint32_t aux = 0;
  if (mode == Mode::Word) {
    const uint64_t first = offs[0] / epw, last = (offs[0] + numel - 1) / epw;
    aux = uint32_t(first);
    threads = last - first + 1;
  }
  const uint32_t wg = vec_mode ? vec_shape(*dev).wg : kWG;
  std::vector<kernel::Storage> storage;
  storage.reserve(binds.size());
  for (auto& b : binds)
    storage.push_back({b.t, kernel::numbered_name("buf", storage.size()),
                       b.atomic   ? "atomic<u32>"
                       : vec_mode ? "vec4<u32>"
                                  : "u32",
                       b.written, b.start, b.size});
  // Only what the mode's kernel reads (an unread parameter is an error, kernel/params.h).
  bool any_input = false;
  for (int i = 1; i < nops; ++i) any_input |= !ops[i].cpu_scalar;
  const bool indexed = mode == Mode::Elem || mode == Mode::Atomic || (mode == Mode::Word && any_input);
  const int64_t raw_size = ct == CT::RAW ? out.itemsize : 4;
  kernel::Params prm;
  prm.u32("count", uint32_t(threads));
  if (mode == Mode::Word) prm.u32("aux", aux);
  if (mode != Mode::Elem && mode != Mode::Atomic) prm.u32("numel", uint32_t(numel));
  if (indexed && R > 1) {
    c10::SmallVector<uint32_t, 6> s32(shape.begin(), shape.end());
    prm.array("shape", s32.data(), size_t(R));
  }
  prm.array("offs", offs.data(), offs.size());
  if (indexed) prm.array("strides", strides.data(), strides.size());
  for (int i = 1; i < nops; ++i)
    if (ops[i].cpu_scalar) scalar_param(prm, "c" + std::to_string(i), ct, ops[i].value, raw_size);
  for (size_t k = 0; k < scalars.size(); ++k) scalar_param(prm, "s" + std::to_string(k), ct, scalars[k], raw_size);

  const bool native_f16 = dev->f16;
  // Specialisation key and source.
  std::string key;
  key.reserve(96 + expr.size());
  key.append("ew:").append(name).append(":").append(std::to_string(int(ct))).append(":").append(expr);
  key.append(":R").append(std::to_string(R)).append(":m").append(std::to_string(int(mode))).append(":");
  for (size_t j = 0; j < binds.size(); ++j) {
    key.push_back(binds[j].written ? (binds[j].atomic ? 'a' : 'w') : 'r');
  }
  for (int i = 0; i < nops; ++i) {
    key.push_back(':');
    key.append(ops[i].cpu_scalar ? "s" : dtype_tag(ops[i].dtype));
    key.append(std::to_string(ops[i].binding));
  }
  key.append(":n").append(std::to_string(scalars.size()));
  if (scalar_dtype != at::ScalarType::Undefined && scalar_dtype != ops[0].dtype)
    key.append(":c").append(std::to_string(int(scalar_dtype)));

  auto make = [&]() {
    // The libraries the op names (lib::...), in this order: smaller modules compile faster.
    std::string src = native_f16 && mode == Mode::Half8 ? "enable f16;\n" : "";
    for (const auto& [bit, file] : lib::kFiles)
      if (libs & bit) src += kernel::library(file);
    if (libs & lib::kFloat64File) src += kernel::library("f64");
    if (libs & lib::kPowFile) src += kernel::library("pow");
    src += kernel::library("elementwise");
    std::ostringstream acc, body;
    for (size_t j = 0; j < binds.size(); ++j) {
      const std::string bj = "buf" + std::to_string(j);
      acc << "fn rd" << j << "(w: u32) -> u32 { return "
          << (binds[j].atomic ? "atomicLoad(&" + bj + "[w])"
              : vec_mode      ? bj + "[w >> 2u][w & 3u]"
                              : bj + "[w]")
          << "; }\n";
    }
    const std::string T = ct_type(ct, raw_size);
    for (int i = 1; i < nops; ++i) {
      const Operand& o = ops[i];
      acc << "fn ld" << i << "(e: u32) -> " << T << " { ";
      if (o.cpu_scalar)
        acc << "return P.c" << i << "; }\n";
      else
        acc << "let r = " << raw_load(o.itemsize, "rd" + std::to_string(o.binding)) << "; return "
            << convert_in(o.dtype, ct) << "; }\n";
      if (vec_mode && !o.cpu_scalar)
        acc << "fn cv" << i << "(r: u32) -> " << T << " { return " << convert_in(o.dtype, ct) << "; }\n";
      if (mode == Mode::Half8 && !o.cpu_scalar) {
        // Both 16-bit lanes of a word in the compute type.
        acc << "fn lanes" << i << "(w: u32) -> array<" << T << ", 2> { ";
        if (native_f16 && o.dtype == at::kHalf && ct == CT::F32)
          acc << "let h = vec2<f32>(bitcast<vec2<f16>>(w)); return array<f32, 2>(h.x, h.y); }\n";
        else
          acc << "return array<" << T << ", 2>(cv" << i << "(w & 0xffffu), cv" << i << "(w >> 16u)); }\n";
      }
    }
    const std::string ob = std::to_string(out.binding);
    const std::string narrow = scalar_dtype != out.dtype && scalar_dtype != at::ScalarType::Undefined
                                   ? narrow_to(scalar_dtype, ct)
                                   : std::string();
    acc << "fn bits0(v0: " << T << ") -> " << raw_type(out.itemsize)
        << " { let v = " << (narrow.empty() ? std::string("v0") : "narrow0(v0)") << "; return "
        << convert_out(out.dtype, ct) << "; }\n";
    if (!narrow.empty()) acc << "fn narrow0(v: " << T << ") -> " << T << " { return " << narrow << "; }\n";
    if (mode == Mode::Half8) {
      // The op on one element of each operand, and a word of two results.
      acc << "fn op(";
      bool first = true;
      for (int i = 1; i < nops; ++i) {
        if (ops[i].cpu_scalar) continue;
        acc << (first ? "" : ", ") << "x" << i << ": " << T;
        first = false;
      }
      acc << ") -> " << T << " {\n";
      for (int i = 1; i < nops; ++i)
        if (ops[i].cpu_scalar) acc << "  let x" << i << " = ld" << i << "(0u);\n";
      for (size_t k = 0; k < scalars.size(); ++k) acc << "  let s" << k << " = P.s" << k << ";\n";
      acc << "  return " << expr << ";\n}\n";
      acc << "fn word0(a: " << T << ", b: " << T << ") -> u32 { ";
      if (native_f16 && out.dtype == at::kHalf && ct == CT::F32 && narrow.empty())
        acc << "return bitcast<u32>(vec2<f16>(f16(a), f16(b))); }\n";
      else
        acc << "return (bits0(a) & 0xffffu) | (bits0(b) << 16u); }\n";
    }
    if (mode == Mode::Vec4) {
      acc << "fn st0(e: u32, v: " << T << ") { buf" << ob << "[e >> 2u][e & 3u] = bits0(v); }\n";
    } else if (mode == Mode::Elem) {
      acc << "fn st0(e: u32, v: " << T << ") { let b = bits0(v); ";
      if (out.itemsize == 8)
        acc << "buf" << ob << "[2u * e] = b.x; buf" << ob << "[2u * e + 1u] = b.y; }\n";
      else
        acc << "buf" << ob << "[e] = b; }\n";
    } else if (mode == Mode::Atomic) {
      const std::string bits = out.itemsize == 1 ? "8u" : "16u", per = out.itemsize == 1 ? "3u" : "1u";
      acc << "fn st0(e: u32, v: " << T << ") { let w = e >> " << (out.itemsize == 1 ? "2u" : "1u") << "; let sh = (e & "
          << per << ") * " << bits << "; let m = " << (out.itemsize == 1 ? "0xffu" : "0xffffu")
          << " << sh; atomicAnd(&buf" << ob << "[w], ~m); atomicOr(&buf" << ob << "[w], bits0(v) << sh); }\n";
    }
    // Offsets of each operand for linear index `li`.
    auto offsets = [&](const std::string& li, bool with_out) {
      std::ostringstream s;
      for (int i = with_out ? 0 : 1; i < nops; ++i)
        if (!ops[i].cpu_scalar) s << "  var o" << i << " = P_offs(" << i << "u);\n";
      s << "  var rem = " << li << ";\n";
      for (int d = 0; d < R; ++d) {
        const std::string sd = "P_shape(" + std::to_string(d) + "u)";
        if (d == R - 1)
          s << "  let c" << d << " = rem;\n";
        else
          s << "  let c" << d << " = rem % " << sd << "; rem = rem / " << sd << ";\n";
        for (int i = with_out ? 0 : 1; i < nops; ++i)
          if (!ops[i].cpu_scalar)
            s << "  o" << i << " = o" << i << " + c" << d << " * P_strides(" << i * R + d << "u);\n";
      }
      for (int i = 1; i < nops; ++i)
        s << "  let x" << i << " = ld" << i << "(" << (ops[i].cpu_scalar ? "0u" : "o" + std::to_string(i)) << ");\n";
      for (size_t k = 0; k < scalars.size(); ++k) s << "  let s" << k << " = P.s" << k << ";\n";
      return s.str();
    };
    if (mode == Mode::Vec4) {
      // Full quads through vec4 words; the ragged tail element by element.
      std::string scal;
      for (size_t k = 0; k < scalars.size(); ++k)
        scal += "  let s" + std::to_string(k) + " = P.s" + std::to_string(k) + ";\n";
      body << scal << "  for (var j = 0u; j < " << vec_shape(*dev).quads
           << "u; j = j + 1u) {\n  let q = idx + j * P.count;\n"
           << "  let base = q * 4u;\n  if (base >= P.numel) { break; }\n  if (base + 4u <= P.numel) {\n";
      for (int i = 1; i < nops; ++i)
        if (!ops[i].cpu_scalar)
          body << "    let v" << i << " = buf" << ops[i].binding << "[(P_offs(" << i << "u) >> 2u) + q];\n";
      body << "    var r: vec4<u32>;\n    for (var k = 0u; k < 4u; k = k + 1u) {\n";
      for (int i = 1; i < nops; ++i)
        body << "      let x" << i << " = "
             << (ops[i].cpu_scalar ? "ld" + std::to_string(i) + "(0u)"
                                   : "cv" + std::to_string(i) + "(v" + std::to_string(i) + "[k])")
             << ";\n";
      body << "      r[k] = bits0(" << expr << ");\n    }\n    buf" << ob << "[(P_offs(0u) >> 2u) + q] = r;\n"
           << "  } else {\n    for (var k = 0u; base + k < P.numel; k = k + 1u) {\n      let e = base + k;\n";
      for (int i = 1; i < nops; ++i)
        body << "      let x" << i << " = ld" << i << "("
             << (ops[i].cpu_scalar ? std::string("0u") : "P_offs(" + std::to_string(i) + "u) + e") << ");\n";
      body << "      st0(P_offs(0u) + e, " << expr << ");\n    }\n  }\n  }\n";
    } else if (mode == Mode::Half8) {
      // Eight elements per vec4 word; in the last, ragged one the lanes past the end keep their
      // bits (this invocation owns the whole word, so nothing races).
      auto call = [&](const std::string& lane) {
        std::string c = "op(";
        bool first = true;
        for (int i = 1; i < nops; ++i) {
          if (ops[i].cpu_scalar) continue;
          c += (first ? "" : ", ") + std::string("a") + std::to_string(i) + "[" + lane + "]";
          first = false;
        }
        return c + ")";
      };
      body << "  for (var j = 0u; j < " << vec_shape(*dev).quads << "u; j = j + 1u) {\n  let q = idx + j * P.count;\n"
           << "  let base = q * 8u;\n  if (base >= P.numel) { break; }\n";
      for (int i = 1; i < nops; ++i)
        if (!ops[i].cpu_scalar)
          body << "  let v" << i << " = buf" << ops[i].binding << "[(P_offs(" << i << "u) >> 3u) + q];\n";
      body << "  let oq = (P_offs(0u) >> 3u) + q;\n  var r: vec4<u32>;\n"
           << "  for (var k = 0u; k < 4u; k = k + 1u) {\n";
      for (int i = 1; i < nops; ++i)
        if (!ops[i].cpu_scalar) body << "    let a" << i << " = lanes" << i << "(v" << i << "[k]);\n";
      body << "    r[k] = word0(" << call("0") << ", " << call("1") << ");\n  }\n"
           << "  if (base + 8u <= P.numel) { buf" << ob << "[oq] = r; } else {\n"
           << "    var old = buf" << ob << "[oq];\n"
           << "    for (var k = 0u; k < 4u; k = k + 1u) {\n      let e = base + 2u * k;\n"
           << "      if (e + 1u < P.numel) { old[k] = r[k]; } else if (e < P.numel) { old[k] = (old[k] & 0xffff0000u) "
              "| (r[k] & 0xffffu); }\n"
           << "    }\n    buf" << ob << "[oq] = old;\n  }\n  }\n";
    } else if (mode == Mode::Word) {
      const std::string bits = out.itemsize == 1 ? "8u" : "16u", wmask = out.itemsize == 1 ? "0xffu" : "0xffffu";
      body << "  let w = P.aux + idx;\n  var word = 0u;\n  var mask = 0u;\n  let base = P_offs(0u);\n  for (var j = "
              "0u; j < "
           << epw << "u; j = j + 1u) {\n    let e = w * " << epw
           << "u + j;\n    if (e < base || e - base >= P.numel) { continue; }\n    let i = e - base;\n"
           << offsets("i", false) << "    word = word | (bits0(" << expr << ") << (j * " << bits << "));\n"
           << "    mask = mask | (" << wmask << " << (j * " << bits << "));\n  }\n"
           << "  if (mask == 0xffffffffu) { buf" << ob << "[w] = word; } else { buf" << ob << "[w] = (buf" << ob
           << "[w] & ~mask) | word; }\n";
    } else {
      body << offsets("idx", true) << "  st0(o0, " << expr << ");\n";
    }
    return kernel::fill(src, {{"ACCESSORS", acc.str()}, {"BODY", body.str()}, {"WG", std::to_string(wg)}});
  };
  // std::ref: a std::function over this many captures would allocate on every call.
  kernel::launch(std::move(key), storage, prm, grid(threads, wg), std::ref(make));
}

}  // namespace webgpu::ops
