// The elementwise engine: one kernel template serves every pointwise op over a built
// TensorIterator (broadcasting, promotion, strides, storage offsets, CPU scalars, sub-word dtypes).
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <ATen/TensorIterator.h>

#include "kernel/dtype.h"

namespace webgpu::ops {

// The WGSL libraries (wgsl/lib/) an elementwise expression calls into, named by the op: a row's
// `libs`, run_expr's and run_elementwise's argument. Each value includes the libraries it builds on,
// so an op names only what its expressions call; common.wgsl is always there.
using Libs = uint32_t;
namespace lib {
// One bit per library file, and the order the engine emits them in.
enum File : Libs {
  kInt64 = 1u << 0,
  kPointwise = 1u << 1,
  kBesselI = 1u << 2,
  kSpecial = 1u << 3,
  kBessel = 1u << 4,
  kComplex = 1u << 5
};
inline constexpr std::pair<File, const char*> kFiles[] = {{kInt64, "int64"},      {kPointwise, "pointwise"},
                                                          {kBesselI, "bessel_i"}, {kSpecial, "special"},
                                                          {kBessel, "bessel"},    {kComplex, "complex"}};
inline constexpr File kFloat64File = File(1u << 6);  // f64.wgsl, emitted after the files above
inline constexpr File kPowFile = File(1u << 7);  // pow.wgsl, emitted after f64.wgsl
enum : Libs {
  None = 0,
  Int64 = kInt64,  // int64.wgsl: i64_*, u64_*, b2l
  Pointwise = kPointwise,  // pointwise.wgsl: f_*, i32_*, b2f, b2i, is_nan, ...
  BesselI = kBesselI | Pointwise | kFloat64File | Int64,  // bessel_i.wgsl: f_bessel_i0, i0e, i1, i1e (Cephes)
  Special = kSpecial | Int64 | Pointwise,  // special.wgsl: sp_* (gamma, erfcx, zeta, ...)
  Bessel = kBessel | Pointwise | BesselI,  // bessel.wgsl: Bessel, Airy, orthogonal polynomials
  Complex = kComplex | Pointwise,  // complex.wgsl: c_ld, c_st, c_mul, c_div, c_exp (complex64)
  Float64 = kFloat64File | Int64,  // f64.wgsl: f64_* (binary64 on vec2<u32>), added for any float64 operand
  Pow = kPowFile | Float64 | Pointwise,  // pow.wgsl: f_pow_acc (float32 pow through binary64)
};
}  // namespace lib

// Runs `out = expr` over iter (one output, operand 0; inputs are x1, x2, ...; scalars s0, s1, ...,
// all of type ct in WGSL), with the WGSL libraries `libs` (lib::...) the expression calls into. `name` keys
// the pipeline cache together with the specialisation.
// CPU-scalar operands become parameters; with scalar_dtype set they are first cast to it, as CPU's
// TensorIterator casts every input to the common dtype (so `int8_tensor // 300` wraps 300 first).
void run_elementwise(at::TensorIteratorBase& iter, const std::string& name, const std::string& expr, Libs libs, CT ct,
                     const std::vector<ScalarBits>& scalars = {},
                     at::ScalarType scalar_dtype = at::ScalarType::Undefined);

// An iterator that writes `out` as it is (never resized) from `inputs`, each kept in its own dtype
// (the kernel converts). check_overlap false: where overlapping writes store the same value, or the
// op checked its operands itself. The inputs are borrowed: they outlive the iterator.
inline at::TensorIterator as_is_iter(const at::Tensor& out,
                                     std::initializer_list<std::reference_wrapper<const at::Tensor>> inputs,
                                     bool check_overlap = true) {
  at::TensorIteratorConfig cfg;
  cfg.set_check_mem_overlap(check_overlap).add_output(out).resize_outputs(false).check_all_same_dtype(false);
  for (const at::Tensor& t : inputs) cfg.add_const_input(t);
  return cfg.build();
}

}  // namespace webgpu::ops
