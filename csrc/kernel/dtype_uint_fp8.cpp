// The storage and conversion rules of uint16/uint32/uint64 and the four float8 dtypes (docs/design.md,
// "Dtype storage"): uint16 two per word, uint32 one word, uint64 two words, float8 four per word.
// Conversions are those of PyTorch's CPU casts; the float8 and float -> unsigned ones live in
// wgsl/lib/uint_fp8.wgsl.
#include <cstring>

#include "kernel/dtype.h"

namespace webgpu::kernel {

bool is_fp8(at::ScalarType t) {
  return t == at::kFloat8_e4m3fn || t == at::kFloat8_e5m2 || t == at::kFloat8_e4m3fnuz || t == at::kFloat8_e5m2fnuz;
}

bool is_uint_wide(at::ScalarType t) { return t == at::kUInt16 || t == at::kUInt32 || t == at::kUInt64; }

bool is_uint_fp8(at::ScalarType t) { return is_fp8(t) || is_uint_wide(t); }

namespace {
// The WGSL name part of a float8 dtype: f8e4m3fn_to_f32 / f32_to_f8e4m3fn.
std::string fp8_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat8_e4m3fn: return "f8e4m3fn";
    case at::kFloat8_e5m2: return "f8e5m2";
    case at::kFloat8_e4m3fnuz: return "f8e4m3fnuz";
    default: return "f8e5m2fnuz";
  }
}
// Whether the c10 this extension was built against turns float32 overflow (>= 464 after rounding)
// into e4m3fn's NaN rather than saturating to 448: c10 changed that between torch releases (the
// device follows the CPU of the torch it runs with).
bool e4m3fn_overflow_is_nan() {
  static const bool nan = c10::Float8_e4m3fn(500.0f).x == 0x7f;
  return nan;
}
}  // namespace

std::string convert_in_uint_fp8(at::ScalarType t, CT ct) {
  if (ct == CT::RAW) return "r";
  if (is_fp8(t)) {
    const std::string f = fp8_name(t) + "_to_f32(r)";
    return ct == CT::F32 ? f : ct == CT::I32 ? "f32_to_i32(" + f + ")" : "f32_to_i64(" + f + ")";
  }
  switch (ct) {
    case CT::F32: return t == at::kUInt16 ? "f32(r)" : t == at::kUInt32 ? "u32_to_f32(r)" : "u64_to_f32(r)";
    case CT::I32: return t == at::kUInt64 ? "bitcast<i32>(r.x)" : "bitcast<i32>(r)";
    default: return t == at::kUInt64 ? "r" : "vec2<u32>(r, 0u)";
  }
}

std::string convert_out_uint_fp8(at::ScalarType t, CT ct) {
  if (ct == CT::RAW) return "v";
  if (is_fp8(t)) {
    const std::string f = "f32_to_" + fp8_name(t) + (t == at::kFloat8_e4m3fn && e4m3fn_overflow_is_nan() ? "_nan" : "");
    return ct == CT::F32 ? f + "(v)" : ct == CT::I32 ? f + "(i32_to_f32(v))" : f + "(i64_to_f32(v))";
  }
  switch (ct) {
    case CT::F32:
      // As x86 CPU casts: uint16 through int32 (wrapping), uint32/uint64 around 2^31/2^63.
      return t == at::kUInt16   ? "(bitcast<u32>(f32_to_i32(v)) & 0xffffu)"
             : t == at::kUInt32 ? "f32_to_u32(v)"
                                : "f32_to_u64(v)";
    case CT::I32:
      return t == at::kUInt16   ? "(bitcast<u32>(v) & 0xffffu)"
             : t == at::kUInt32 ? "bitcast<u32>(v)"
                                : "i64_from_i32(v)";
    default: return t == at::kUInt16 ? "(v.x & 0xffffu)" : t == at::kUInt32 ? "v.x" : "v";
  }
}

c10::Scalar cast_scalar_uint_fp8(const c10::Scalar& v, at::ScalarType as) {
  if (is_fp8(as)) {
    const float f = static_cast<float>(v.toDouble());
    switch (as) {
      case at::kFloat8_e4m3fn: return c10::Scalar(double(float(c10::Float8_e4m3fn(f))));
      case at::kFloat8_e5m2: return c10::Scalar(double(float(c10::Float8_e5m2(f))));
      case at::kFloat8_e4m3fnuz: return c10::Scalar(double(float(c10::Float8_e4m3fnuz(f))));
      default: return c10::Scalar(double(float(c10::Float8_e5m2fnuz(f))));
    }
  }
  // The value's bits as the unsigned type, as CPU's cast makes them (a float through
  // c10::convert, an integer wrapping); uint64 keeps its 64 bits as a (possibly negative) int64.
  uint64_t u;
  if (v.isFloatingPoint()) {
    const double d = v.toDouble();
    u = as == at::kUInt64   ? c10::convert<uint64_t>(d)
        : as == at::kUInt32 ? c10::convert<uint32_t>(d)
                            : c10::convert<uint16_t>(d);
  } else if (v.isUnsigned()) {
    u = v.toUInt64();
  } else if (v.isBoolean()) {
    u = v.toBool() ? 1 : 0;
  } else {
    u = uint64_t(v.toLong());
  }
  if (as == at::kUInt16) u &= 0xffffu;
  if (as == at::kUInt32) u &= 0xffffffffu;
  int64_t i;
  std::memcpy(&i, &u, 8);
  return c10::Scalar(i);
}

}  // namespace webgpu::kernel

namespace webgpu::kernel {

std::string narrow_uint_fp8(at::ScalarType t, CT ct) {
  if (is_fp8(t)) {
    if (ct != CT::F32) return "";
    const std::string n = fp8_name(t);
    return n + "_to_f32(f32_to_" + n + "(v))";
  }
  if (t == at::kUInt16 && ct == CT::I32) return "(v & 0xffff)";
  if (t == at::kUInt16 && ct == CT::I64) return "vec2<u32>(v.x & 0xffffu, 0u)";
  if (t == at::kUInt32 && ct == CT::I64) return "vec2<u32>(v.x, 0u)";
  return "";
}

}  // namespace webgpu::kernel
