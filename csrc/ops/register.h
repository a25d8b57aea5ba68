// Registration by ATen's naming rules: an op's out= (and in-place) overloads go to the kernels named
// by the same rule as its functional one, so a family registers one line per op, not per overload.
#pragma once
#include <ATen/ATen.h>
#include <torch/library.h>

#include <utility>

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

}  // namespace webgpu::ops
