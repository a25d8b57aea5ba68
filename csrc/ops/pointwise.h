// The pointwise op table's row type and the kernels that run a row over a TensorIterator. A row
// gives one WGSL expression per compute type; the iterator's dtype picks which one runs.
#pragma once
#include <ATen/TensorIterator.h>

#include <initializer_list>

#include "engines/elementwise.h"
#include "ops/float64.h"

namespace webgpu::ops {

// Which dtype selects the compute type: the iterator's common dtype (falling back to the first
// input when the op declares none, e.g. signbit/logical_not), or the output's (where, masked_fill).
enum class Drive { Common, Output };

struct Row {
  const char* name;
  Libs libs;  // the WGSL libraries its expressions call into (lib::Pointwise, ...; engines/elementwise.h)
  const char* f;  // float32 compute: float32, float16, bfloat16 (inputs x1.., scalars s0.., f32)
  const char* i;  // int32 compute: int32, int16, int8, uint8, bool (i32)
  const char* l;  // int64 compute: vec2<u32> (lo, hi), exact
  const char* b = nullptr;  // bool, when it differs from the integers' expression (i32)
  Drive drive = Drive::Common;
};

CT compute_type(at::ScalarType t);
at::ScalarType driving_dtype(const at::TensorIteratorBase& iter, Drive d);

// Runs a row; scalars become s0, s1, ... in the compute type.
void run_row(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars = {});
// Runs a row CPU computes in float32 and double but not in float16/bfloat16: where the driving dtype
// is one of those, raises NotImplementedError, `"<name><suffix>" not implemented for '<dtype>'<tail>`.
void run_row_no_half(const Row& r, at::TensorIteratorBase& iter, const char* suffix, const char* tail);
// Runs an explicit expression per compute type chosen by the caller.
void run_expr(const char* name, at::TensorIteratorBase& iter, CT ct, const char* expr, Libs libs,
              std::initializer_list<c10::Scalar> scalars = {}, at::ScalarType dtype = at::ScalarType::Undefined);

// Stub-shaped kernels for a row: one per DispatchStub signature.
template <const Row& R>
void k0(at::TensorIteratorBase& it) {
  run_row(R, it);
}
template <const Row& R>
void k0i(at::TensorIterator& it) {
  run_row(R, it);
}
template <const Row& R>
void k1(at::TensorIteratorBase& it, const c10::Scalar& a) {
  run_row(R, it, {a});
}
template <const Row& R>
void k1v(at::TensorIteratorBase& it, c10::Scalar a) {
  run_row(R, it, {a});
}
template <const Row& R>
void k2(at::TensorIteratorBase& it, const c10::Scalar& a, const c10::Scalar& b) {
  run_row(R, it, {a, b});
}
template <const Row& R>
void k3(at::TensorIteratorBase& it, const c10::Scalar& a, const c10::Scalar& b, const c10::Scalar& c) {
  run_row(R, it, {a, b, c});
}

}  // namespace webgpu::ops

// Points ATen's DispatchStub `stub` at our kernel for the PrivateUse1 device. Float64 operands the
// kernel has no float64 code for run the stub's CPU kernel instead (ops/float64.h).
#define WEBGPU_STUB(stub, fn)                                                                                   \
  static constexpr char stub##_webgpu_name_[] = #stub;                                                          \
  static at::native::RegisterPRIVATEUSE1Dispatch<at::native::stub##_DECLARE_DISPATCH_type> stub##_webgpu_(      \
      at::native::stub, ::webgpu::ops::Float64Guard<at::native::stub##_DECLARE_DISPATCH_type, at::native::stub, \
                                                    stub##_webgpu_name_, std::decay_t<decltype(fn)>, fn>::run);
