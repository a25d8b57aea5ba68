// The dtype rules of kernel/dtype.h as WGSL snippets.
#include "kernel/dtype.h"

#include <cstring>

namespace webgpu::kernel {

std::string wgsl_value_type(CT ct, at::ScalarType dtype) {
  if (ct == CT::RAW) return c10::elementSize(dtype) == 8 ? "vec2<u32>" : "u32";
  return wgsl_type(ct);
}

c10::Scalar cast_scalar(const c10::Scalar& v, at::ScalarType as) {
  if (is_uint_fp8(as)) return cast_scalar_uint_fp8(v, as);
  switch (as) {
    case at::kFloat: return c10::Scalar(double(static_cast<float>(v.toDouble())));
    case at::kHalf: return c10::Scalar(double(float(c10::Half(static_cast<float>(v.toDouble())))));
    case at::kBFloat16: return c10::Scalar(double(float(c10::BFloat16(static_cast<float>(v.toDouble())))));
    case at::kBool: return c10::Scalar(v.isFloatingPoint() ? v.toDouble() != 0 : v.toLong() != 0);
    default: break;
  }
  if (!at::isIntegralType(as, false)) return v;
  const int64_t i = v.isFloatingPoint() ? c10::convert<int64_t>(v.toDouble()) : v.toLong();
  switch (as) {
    case at::kLong: return c10::Scalar(i);
    case at::kInt: return c10::Scalar(int64_t(static_cast<int32_t>(i)));
    case at::kShort: return c10::Scalar(int64_t(static_cast<int16_t>(i)));
    case at::kChar: return c10::Scalar(int64_t(static_cast<int8_t>(i)));
    case at::kByte: return c10::Scalar(int64_t(static_cast<uint8_t>(i)));
    default: return v;
  }
}

const char* dtype_tag(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "f32";
    case at::kHalf: return "f16";
    case at::kBFloat16: return "bf16";
    case at::kInt: return "i32";
    case at::kShort: return "i16";
    case at::kChar: return "i8";
    case at::kByte: return "u8";
    case at::kBool: return "b8";
    case at::kLong: return "i64";
    case at::kUInt16: return "u16";
    case at::kUInt32: return "u32";
    case at::kUInt64: return "u64";
    case at::kFloat8_e4m3fn: return "f8e4m3fn";
    case at::kFloat8_e5m2: return "f8e5m2";
    case at::kFloat8_e4m3fnuz: return "f8e4m3fnuz";
    case at::kFloat8_e5m2fnuz: return "f8e5m2fnuz";
    case at::kComplexFloat: return "c64";
    case at::kDouble: return "f64";
    default: TORCH_CHECK(false, "webgpu: internal: no storage rule for dtype ", t);
  }
}

bool is_float(at::ScalarType t) { return t == at::kFloat || t == at::kHalf || t == at::kBFloat16; }

// Raw bits of element e of an operand with this itemsize, read through accessor `rd`.
std::string raw_load(int64_t itemsize, const std::string& rd) {
  switch (itemsize) {
    case 1: return "((" + rd + "(e >> 2u) >> ((e & 3u) * 8u)) & 0xffu)";
    case 2: return "((" + rd + "(e >> 1u) >> ((e & 1u) * 16u)) & 0xffffu)";
    case 4: return rd + "(e)";
    default: return "vec2<u32>(" + rd + "(2u * e), " + rd + "(2u * e + 1u))";
  }
}

namespace {

// float64 conversions (wgsl/lib/f64.wgsl): as CPU casts. Half types narrow through float32, as
// c10::Half(double) and c10::BFloat16(double) do.
std::string convert_in_f64(at::ScalarType t, CT ct) {
  if (t == at::kDouble) {
    switch (ct) {
      case CT::F64:
      case CT::RAW: return "r";
      case CT::F32: return "f64_to_f32(r)";
      case CT::I32: return "f64_to_i32(r)";
      default: return "f64_to_i64(r)";
    }
  }
  switch (t) {  // ct == F64
    case at::kFloat: return "f64_from_f32_bits(r)";
    case at::kHalf: return "f64_from_f32_bits(bitcast<u32>(f16_to_f32(r)))";
    case at::kBFloat16: return "f64_from_f32_bits(r << 16u)";
    case at::kLong: return "f64_from_i64(r)";
    case at::kBool: return "b2d(r != 0u)";
    default: return "f64_from_i32(" + convert_in(t, CT::I32) + ")";
  }
}

// The raw bits of float dtype t (float32, float16, bfloat16) for the float32 value f.
std::string store_f32(at::ScalarType t, const std::string& f) {
  if (t == at::kHalf) return "f32_to_f16(" + f + ")";
  if (t == at::kBFloat16) return "f32_to_bf16(" + f + ")";
  return "bitcast<u32>(" + f + ")";
}

// The raw bits of an integer dtype t of at most 4 bytes (int32, int16; int8 and uint8 otherwise) for the
// u32 word w that holds its value in its low bits.
std::string store_word(at::ScalarType t, const std::string& w) {
  if (t == at::kInt) return w;
  if (t == at::kShort) return "(" + w + " & 0xffffu)";
  return "(" + w + " & 0xffu)";
}

std::string convert_out_f64(at::ScalarType t, CT ct) {
  if (t == at::kDouble) {
    switch (ct) {
      case CT::F64: return "v";
      case CT::F32: return "f64_from_f32_bits(bitcast<u32>(v))";
      case CT::I32: return "f64_from_i32(v)";
      default: return "f64_from_i64(v)";
    }
  }
  switch (t) {  // ct == F64
    case at::kFloat: return "f64_to_f32_bits(v)";
    case at::kHalf:
    case at::kBFloat16: return store_f32(t, "f64_to_f32(v)");
    case at::kLong: return "f64_to_i64(v)";
    case at::kInt:
    case at::kShort:
    case at::kChar: return store_word(t, "bitcast<u32>(f64_to_i32(v))");
    case at::kByte: return store_word(t, "f64_to_i64(v).x");  // through int64, as c10 casts to uint8
    case at::kBool: return "select(0u, 1u, f64_nz(v))";
    default: TORCH_CHECK(false, "webgpu: internal: no float64 conversion to ", t);
  }
}

}  // namespace

// Raw bits r of dtype t -> compute type ct.
std::string convert_in(at::ScalarType t, CT ct) {
  TORCH_CHECK_NOT_IMPLEMENTED(!(ct == CT::F64 && (is_uint_fp8(t) || t == at::kComplexFloat)),
                              "webgpu: no on-device conversion from ", t, " to float64");
  if (is_uint_fp8(t)) return convert_in_uint_fp8(t, ct);
  const std::string r = "r";
  // complex64 (vec2<u32>: real, imag) -> a real compute type keeps the real part, as CPU casts.
  if (t == at::kComplexFloat && ct != CT::RAW && ct != CT::F64) {
    std::string f = convert_in(at::kFloat, ct);
    return f.replace(f.find("bitcast<f32>(r)"), 15, "bitcast<f32>(r.x)");
  }
  if (ct == CT::F64 || t == at::kDouble) return convert_in_f64(t, ct);
  std::string sext = t == at::kShort  ? "(bitcast<i32>(r << 16u) >> 16u)"
                     : t == at::kChar ? "(bitcast<i32>(r << 24u) >> 24u)"
                     : t == at::kInt  ? "bitcast<i32>(r)"
                     : t == at::kBool ? "select(0i, 1i, r != 0u)"
                                      : "i32(r)";  // u8
  std::string as_f32 = t == at::kFloat      ? "bitcast<f32>(r)"
                       : t == at::kHalf     ? "f16_to_f32(r)"
                       : t == at::kBFloat16 ? "bitcast<f32>(r << 16u)"
                       : t == at::kLong     ? "i64_to_f32(r)"
                       : t == at::kInt      ? "i32_to_f32(bitcast<i32>(r))"
                                            : "f32(" + sext + ")";
  switch (ct) {
    case CT::RAW: return r;
    case CT::F32: return as_f32;
    case CT::I32:
      if (is_float(t)) return "f32_to_i32(" + as_f32 + ")";
      if (t == at::kLong) return "bitcast<i32>(r.x)";
      return sext;
    case CT::I64:
      if (is_float(t)) return "f32_to_i64(" + as_f32 + ")";
      if (t == at::kLong) return "r";
      return "i64_from_i32(" + sext + ")";
  }
  return r;
}

// Compute-type value v -> raw bits of dtype t (u32 masked to the width, or vec2 for 8 bytes).
std::string round_fn(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return "fn rnd(x: f32) -> f32 { return f16_to_f32(f32_to_f16(x)); }\n";
    case at::kBFloat16: return "fn rnd(x: f32) -> f32 { return bitcast<f32>(f32_to_bf16(x) << 16u); }\n";
    default: return "fn rnd(x: f32) -> f32 { return x; }\n";
  }
}

std::string convert_out(at::ScalarType t, CT ct) {
  if (ct == CT::RAW) return "v";
  TORCH_CHECK_NOT_IMPLEMENTED(!(ct == CT::F64 && is_uint_fp8(t)), "webgpu: no on-device conversion from float64 to ",
                              t);
  if (is_uint_fp8(t)) return convert_out_uint_fp8(t, ct);
  // A real value -> complex64: (value as float32, 0), as CPU casts.
  if (t == at::kComplexFloat) return "vec2<u32>(" + convert_out(at::kFloat, ct) + ", 0u)";
  if (ct == CT::F64 || t == at::kDouble) return convert_out_f64(t, ct);
  const bool bool_out = t == at::kBool;
  if (ct == CT::F32) {
    // Compare bits, not values: GPUs may flush subnormals to zero in float compares.
    if (bool_out) return "select(0u, 1u, (bitcast<u32>(v) & 0x7fffffffu) != 0u)";
    switch (t) {
      case at::kFloat:
      case at::kHalf:
      case at::kBFloat16: return store_f32(t, "v");
      case at::kLong: return "f32_to_i64(v)";
      case at::kByte: return store_word(t, "f32_to_i64(v).x");  // c10 casts float->uint8 through int64
      case at::kInt:
      case at::kShort:
      case at::kChar: return store_word(t, "bitcast<u32>(f32_to_i32(v))");
      default: break;
    }
  }
  if (ct == CT::I32) {
    if (bool_out) return "select(0u, 1u, v != 0i)";
    switch (t) {
      case at::kFloat:
      case at::kHalf:
      case at::kBFloat16: return store_f32(t, "i32_to_f32(v)");
      case at::kLong: return "i64_from_i32(v)";
      default: return store_word(t, "bitcast<u32>(v)");
    }
  }
  // I64
  if (bool_out) return "select(0u, 1u, (v.x | v.y) != 0u)";
  switch (t) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16: return store_f32(t, "i64_to_f32(v)");
    case at::kLong: return "v";
    default: return store_word(t, "v.x");
  }
}

const char* wgsl_type(CT ct) {
  switch (ct) {
    case CT::F32: return "f32";
    case CT::I32: return "i32";
    case CT::I64: return "vec2<u32>";
    case CT::F64: return "vec2<u32>";
    default: return "u32";
  }
}

ScalarBits scalar_bits(const c10::Scalar& s, CT ct) {
  ScalarBits b;
  switch (ct) {
    case CT::F32: {
      float f = s.to<float>();
      std::memcpy(&b.lo, &f, 4);
      break;
    }
    case CT::F64: {
      double d = s.to<double>();
      uint64_t u;
      std::memcpy(&u, &d, 8);
      b.lo = uint32_t(u);
      b.hi = uint32_t(u >> 32);
      break;
    }
    case CT::I32: {
      int32_t i = s.isIntegral(true) ? int32_t(s.to<int64_t>()) : s.to<int32_t>();
      std::memcpy(&b.lo, &i, 4);
      break;
    }
    default: {
      int64_t i = s.isUnsigned() ? int64_t(s.toUInt64()) : s.to<int64_t>();
      uint64_t u;
      std::memcpy(&u, &i, 8);
      b.lo = uint32_t(u);
      b.hi = uint32_t(u >> 32);
    }
  }
  return b;
}

}  // namespace webgpu::kernel
