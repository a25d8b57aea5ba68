// Registration by ATen's naming rules: an op's out= (and in-place) overloads go to the kernels named
// by the same rule as its functional one, so a family registers one line per op, not per overload.
//
// WEBGPU_LIBRARY_IMPL(m) opens a registration block for aten on PrivateUse1 in which every
// `m.impl(name, TORCH_FN(f))` (or a plain `f`) is guarded: when f raises NoDtypeKernel (a float64 or complex64 operand
// that f has no kernel for, raised before anything is recorded), the call runs through the boxed CPU
// fallback instead (core/fallback.h: counted, warned once, an error when the fallback is off), as an
// operator with no webgpu kernel at all does. Other registrations pass through unchanged.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/boxing/impl/boxing.h>
#include <torch/library.h>

#include <string>
#include <utility>

#include "core/fallback.h"

// "NAME" -> FN and "NAME.OVL" -> FN_out (OVL: the out= overload's name: out, output, grad_input, ...).
#define WEBGPU_IMPL_OUT(M, NAME, OVL, FN) \
  M.impl(NAME, TORCH_FN(FN));             \
  M.impl(NAME "." OVL, TORCH_FN(FN##_out))

// "NAME", "NAME_" and "NAME.out" -> ATen's device-generic at::native::NAME, NAME_ and NAME_out.
#define WEBGPU_IMPL_NATIVE(M, NAME)                 \
  M.impl(#NAME, TORCH_FN(at::native::NAME));        \
  M.impl(#NAME "_", TORCH_FN(at::native::NAME##_)); \
  M.impl(#NAME ".out", TORCH_FN(at::native::NAME##_out))

namespace webgpu::ops {
namespace via_out_detail {

template <class... T>
struct Types {};
// Types<all of T... but the last>.
template <class Done, class... T>
struct DropLast;
template <class... D, class L>
struct DropLast<Types<D...>, L> {
  using type = Types<D...>;
};
template <class... D, class A, class B, class... T>
struct DropLast<Types<D...>, A, B, T...> : DropLast<Types<D..., A>, B, T...> {};

template <auto Out, class Params>
struct Functional;
template <auto Out, class First, class... Rest>
struct Functional<Out, Types<First, Rest...>> {
  static at::Tensor call(First first, Rest... rest) {
    at::Tensor out = at::empty({0}, first.options());
    return Out(first, std::forward<Rest>(rest)..., out);
  }
};

template <auto Out, class Sig = decltype(Out)>
struct OutForm;
template <auto Out, class R, class... P>
struct OutForm<Out, R (*)(P...)> {
  using type = Functional<Out, typename DropLast<Types<>, P...>::type>;
};

}  // namespace via_out_detail

// The functional form of an out= kernel Out (its parameters those of the functional op, then the
// output): a new tensor with the first argument's options, sized and written by Out. For
// WEBGPU_IMPL_OUT's FN: `constexpr auto im2col = via_out<&im2col_out>;`.
template <auto Out>
constexpr auto via_out = &via_out_detail::OutForm<Out>::type::call;

// An operand dtype (float64, complex64) that a kernel has no way for. A NotImplementedError, like a
// missing kernel: the guards (above; ops/float64.h for DispatchStub kernels) run the op on the CPU
// instead, unless the fallback is off, where the error reaches the user.
struct NoDtypeKernel : c10::NotImplementedError {
  using c10::NotImplementedError::NotImplementedError;
};

// NotImplementedError "\"op\" not implemented for '<t>'" unless ok: NoDtypeKernel for float64 and
// complex64 (so the guards run the op on the CPU), a plain one for other dtypes (those CPU has no
// kernel for either).
inline void check_kernel_dtype(bool ok, at::ScalarType t, const char* op, const char* suffix = " on webgpu") {
  if (ok) return;
  const std::string msg = std::string("\"") + op + "\" not implemented for '" + c10::toString(t) + "'" + suffix;
  if (t == at::kDouble || t == at::kComplexFloat)
    throw NoDtypeKernel(c10::SourceLocation{__func__, __FILE__, uint32_t(__LINE__)}, msg);
  TORCH_CHECK_NOT_IMPLEMENTED(false, msg);
}

namespace guard_detail {

template <class Sig>
struct Guarded;
template <class R, class... A>
struct Guarded<R(A...)> {
  std::string name;  // "op.overload", as registered
  R (*fn)(A...);
  R operator()(A... a) const {
    try {
      return fn(a...);
    } catch (const NoDtypeKernel&) {
      // (also from an op this one called: the CPU then runs this whole op, from the caller's operands)
      if (!core::fallback_enabled()) throw;
      const auto dot = name.find('.');
      const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(
          ("aten::" + name.substr(0, dot)).c_str(), dot == std::string::npos ? "" : name.c_str() + dot + 1);
      if (!core::may_fall_back(op)) throw;  // a core operator or a view: the error goes on up
      return c10::impl::BoxedKernelWrapper<R(A...)>::call(
          c10::BoxedKernel::makeFromFunction<&core::cpu_fallback_boxed>(), op,
          c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), a...);
    }
  }
};

}  // namespace guard_detail

// The torch::Library of a WEBGPU_LIBRARY_IMPL block: impl() of a function (TORCH_FN or a plain
// pointer) registers it guarded; anything else (a lambda, a CppFunction) as it is.
class GuardedLibrary {
 public:
  explicit GuardedLibrary(torch::Library& m) : m_(m) {}
  operator torch::Library&() { return m_; }  // for helpers that register on the library itself
  template <class Sig, Sig* Fn>
  GuardedLibrary& impl(const std::string& name, c10::CompileTimeFunctionPointer<Sig, Fn> f) {
    return impl(name, f.func_ptr());
  }
  template <class R, class... A>
  GuardedLibrary& impl(const std::string& name, R (*f)(A...)) {
    m_.impl(name.c_str(), torch::CppFunction(guard_detail::Guarded<R(A...)>{name, f}));
    return *this;
  }
  template <class F>
  GuardedLibrary& impl(const std::string& name, F&& f) {
    m_.impl(name.c_str(), std::forward<F>(f));
    return *this;
  }

 private:
  torch::Library& m_;
};

}  // namespace webgpu::ops

#define WEBGPU_LIBRARY_IMPL_(M, UID)                                                  \
  static void C10_CONCATENATE(webgpu_register_, UID)(::webgpu::ops::GuardedLibrary&); \
  TORCH_LIBRARY_IMPL(aten, PrivateUse1, C10_CONCATENATE(webgpu_library_, UID)) {      \
    ::webgpu::ops::GuardedLibrary guarded(C10_CONCATENATE(webgpu_library_, UID));     \
    C10_CONCATENATE(webgpu_register_, UID)(guarded);                                  \
  }                                                                                   \
  static void C10_CONCATENATE(webgpu_register_, UID)(::webgpu::ops::GuardedLibrary & M)
#define WEBGPU_LIBRARY_IMPL(M) WEBGPU_LIBRARY_IMPL_(M, C10_UID)
