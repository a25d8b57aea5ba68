// float64 on the webgpu device (docs/design.md, "Dtype storage"): stored as two words, computed by
// wgsl/lib/f64.wgsl where an op has a float64 expression, and otherwise run by the same op's CPU
// DispatchStub on CPU copies of the TensorIterator's operands (the float64 stub fallback).
#pragma once
#include <ATen/TensorIterator.h>
#include <ATen/native/DispatchStub.h>
#include <c10/util/Exception.h>

#include <functional>
#include <initializer_list>
#include <typeinfo>

#include "ops/register.h"

namespace webgpu::ops {

struct Row;

// Whether float64 tensors may live on the device (TORCH_WEBGPU_FLOAT64 != "0", read once).
bool float64_enabled();

// An op with float64 operands but no float64 kernel: NoDtypeKernel (ops/register.h), which the stub
// guard below and the registration guard catch, running the op on the CPU instead.
[[noreturn]] void raise_no_float64_kernel(const char* op);

// The float64 expression of a pointwise row (by its name), or nullptr.
const char* float64_expr(const char* row);
// Runs a row on a float64 iterator: its float64 expression, or raise_no_float64_kernel.
void run_row_float64(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars);

bool iter_has_float64(const at::TensorIteratorBase& iter);
// Whether iter has a float64 or complex64 operand: the dtypes whose kernels may be missing (the stub
// guard's condition).
bool iter_has_guarded_dtype(const at::TensorIteratorBase& iter);
// Runs the stub's CPU kernel on CPU copies of iter's operands and copies the outputs back; counted and
// warned once like the boxed CPU fallback (core/fallback.h), refused when the fallback is off.
// `stub_type` is the typeid name of the stub's DispatchStub<FnPtr, T> base: its CPU kernels are that
// class's static members, which torch exports but whose dispatch helper it does not (they are looked
// up by name in the library that defines the stub). `call` runs the kernel `fn` on the CPU iterator.
void run_stub_on_cpu(at::TensorIteratorBase& iter, const char* stub, const void* stub_object, const char* stub_type,
                     const std::function<void(void* fn, at::TensorIterator&)>& call);

// Wraps a stub kernel: float64 or complex64 operands that it has no kernel for run the CPU stub of the
// same op.
// Stubs over a TensorIterator only; any other stub signature is registered unchanged.
template <typename Stub, Stub& S, const char* Name, typename It, typename... A>
struct Float64GuardIter {
  template <void (*Fn)(It&, A...)>
  static void run(It& iter, A... a) {
    try {
      Fn(iter, a...);
    } catch (const NoDtypeKernel&) {
      if (!iter_has_guarded_dtype(iter)) throw;
      using FnPtr = typename Stub::FnPtr;
      run_stub_on_cpu(iter, Name, &S, typeid(at::native::DispatchStub<FnPtr, Stub>).name(),
                      [&](void* fn, at::TensorIterator& cpu) { reinterpret_cast<FnPtr>(fn)(cpu, a...); });
    }
  }
};
template <typename Stub, Stub& S, const char* Name, typename F, F Fn>
struct Float64Guard {
  static constexpr F run = Fn;
};
template <typename Stub, Stub& S, const char* Name, typename... A, void (*Fn)(at::TensorIteratorBase&, A...)>
struct Float64Guard<Stub, S, Name, void (*)(at::TensorIteratorBase&, A...), Fn> {
  static constexpr void (*run)(at::TensorIteratorBase&,
                               A...) = &Float64GuardIter<Stub, S, Name, at::TensorIteratorBase, A...>::template run<Fn>;
};
template <typename Stub, Stub& S, const char* Name, typename... A, void (*Fn)(at::TensorIterator&, A...)>
struct Float64Guard<Stub, S, Name, void (*)(at::TensorIterator&, A...), Fn> {
  static constexpr void (*run)(at::TensorIterator&,
                               A...) = &Float64GuardIter<Stub, S, Name, at::TensorIterator, A...>::template run<Fn>;
};

}  // namespace webgpu::ops
