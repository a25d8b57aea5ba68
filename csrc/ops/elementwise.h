// The elementwise engine: one kernel template serves every pointwise op over a built
// TensorIterator (broadcasting, promotion, strides, storage offsets, CPU scalars, sub-word dtypes).
#pragma once
#include <string>
#include <vector>

#include <ATen/TensorIterator.h>

namespace webgpu::ops {

// The type the expression computes in. Half types compute in F32; RAW moves bits unchanged.
enum class CT { F32, I32, I64, RAW };

// A scalar operand, already in the compute type's bit pattern (I64 uses both words).
struct ScalarBits {
  uint32_t lo = 0, hi = 0;
};
ScalarBits scalar_bits(const c10::Scalar& s, CT ct);

// Runs `out = expr` over iter (one output, operand 0; inputs are x1, x2, ...; scalars s0, s1, ...,
// all of type ct in WGSL). `name` keys the pipeline cache together with the specialisation.
// CPU-scalar operands become parameters; with scalar_dtype set they are first cast to it, as CPU's
// TensorIterator casts every input to the common dtype (so `int8_tensor // 300` wraps 300 first).
void run_elementwise(at::TensorIteratorBase& iter, const std::string& name, const std::string& expr, CT ct,
                     const std::vector<ScalarBits>& scalars = {},
                     at::ScalarType scalar_dtype = at::ScalarType::Undefined);

const char* wgsl_type(CT ct);

// WGSL building blocks shared by hand-written kernels (ops/kernel.h):
// the storage tag of a dtype ("f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "b8"),
const char* dtype_tag(at::ScalarType t);
bool is_float(at::ScalarType t);
// the raw bits of element `e` read through word accessor `rd` (u32, or vec2<u32> for 8 bytes),
std::string raw_load(int64_t itemsize, const std::string& rd);
// raw bits `r` of dtype t -> a value `v` of compute type ct (exact, as CPU casts),
std::string convert_in(at::ScalarType t, CT ct);
// compute-type value `v` -> raw bits of dtype t (masked to its width; vec2<u32> for int64).
std::string convert_out(at::ScalarType t, CT ct);

// s cast to dtype `as` as a C++ static_cast would (integers wrap), the way CPU casts an input.
c10::Scalar cast_scalar(const c10::Scalar& s, at::ScalarType as);

}  // namespace webgpu::ops
