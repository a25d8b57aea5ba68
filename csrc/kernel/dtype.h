// How dtypes live in storage and compute in WGSL (docs/design.md, "Dtype storage"): every block is
// an array of 32-bit words; sub-word dtypes are packed, int64 is two words. These build the WGSL
// accessors of the kernel layer and of the engines.
#pragma once
#include <cstdint>
#include <string>

#include <ATen/ATen.h>

namespace webgpu::kernel {

// The type an expression computes in. Half types compute in F32; RAW moves bits unchanged.
enum class CT { F32, I32, I64, RAW, F64 };  // F64: binary64 bits as vec2<u32> (wgsl/lib/f64.wgsl)

// WGSL type of a compute type.
const char* wgsl_type(CT ct);
// WGSL type of a compute type for a dtype (RAW: the raw word type of the dtype).
std::string wgsl_value_type(CT ct, at::ScalarType dtype);
// The storage tag of a dtype ("f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "b8").
const char* dtype_tag(at::ScalarType t);
bool is_float(at::ScalarType t);
// The raw bits of element `e` read through word accessor `rd` (u32, or vec2<u32> for 8 bytes).
std::string raw_load(int64_t itemsize, const std::string& rd);
// Raw bits `r` of dtype t -> a value `v` of compute type ct (exact, as CPU casts).
std::string convert_in(at::ScalarType t, CT ct);
// Compute-type value `v` -> raw bits of dtype t (masked to its width; vec2<u32> for int64).
std::string convert_out(at::ScalarType t, CT ct);
// WGSL `fn rnd(x: f32) -> f32`: x rounded to float dtype t (float16, bfloat16; others unchanged), for
// kernels that compute in f32 but round every step as CPU's scalar_t arithmetic does.
std::string round_fn(at::ScalarType t);

// A scalar operand, already in the compute type's bit pattern (I64 uses both words).
struct ScalarBits {
  uint32_t lo = 0, hi = 0;
};
ScalarBits scalar_bits(const c10::Scalar& s, CT ct);
// s cast to dtype `as` as a C++ static_cast would (integers wrap), the way CPU casts an input.
c10::Scalar cast_scalar(const c10::Scalar& s, at::ScalarType as);

// uint16/uint32/uint64 and the float8 dtypes (kernel/dtype_uint_fp8.cpp): their tests, and the rules
// convert_in/convert_out/cast_scalar take for them.
bool is_fp8(at::ScalarType t);
bool is_uint_wide(at::ScalarType t);  // uint16, uint32, uint64
bool is_uint_fp8(at::ScalarType t);
std::string convert_in_uint_fp8(at::ScalarType t, CT ct);
std::string convert_out_uint_fp8(at::ScalarType t, CT ct);
c10::Scalar cast_scalar_uint_fp8(const c10::Scalar& s, at::ScalarType as);
// WGSL rounding a compute-type value v to dtype t's range or precision ("" when nothing to do).
std::string narrow_uint_fp8(at::ScalarType t, CT ct);

}  // namespace webgpu::kernel

namespace webgpu::ops {
using kernel::cast_scalar;
using kernel::convert_in;
using kernel::convert_out;
using kernel::CT;
using kernel::dtype_tag;
using kernel::is_float;
using kernel::is_fp8;
using kernel::is_uint_fp8;
using kernel::is_uint_wide;
using kernel::raw_load;
using kernel::round_fn;
using kernel::scalar_bits;
using kernel::ScalarBits;
using kernel::wgsl_type;
using kernel::wgsl_value_type;
}  // namespace webgpu::ops
