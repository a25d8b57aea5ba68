// Registration by ATen's naming rules: an op's out= (and in-place) overloads go to the kernels named
// by the same rule as its functional one, so a family registers one line per op, not per overload.
#pragma once
#include <torch/library.h>

// "NAME" -> FN and "NAME.OVL" -> FN_out (OVL: the out= overload's name: out, output, grad_input, ...).
#define WEBGPU_IMPL_OUT(M, NAME, OVL, FN) \
  M.impl(NAME, TORCH_FN(FN));             \
  M.impl(NAME "." OVL, TORCH_FN(FN##_out))

// "NAME", "NAME_" and "NAME.out" -> ATen's device-generic at::native::NAME, NAME_ and NAME_out.
#define WEBGPU_IMPL_NATIVE(M, NAME)                 \
  M.impl(#NAME, TORCH_FN(at::native::NAME));        \
  M.impl(#NAME "_", TORCH_FN(at::native::NAME##_)); \
  M.impl(#NAME ".out", TORCH_FN(at::native::NAME##_out))
