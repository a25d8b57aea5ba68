// The reduction engine (docs/design.md, "Engines"): one WGSL template (wgsl/kernels/reduce.wgsl) and a
// table of reductions (engines/reduce.cpp: reduction()); a new reduction is a row there and a
// registration in its op file.
#pragma once
#include <ATen/TensorIterator.h>

#include <vector>

namespace webgpu::ops {

struct Op {
  const char* red;  // the row of the reduction table (engines/reduce.cpp: reduction()) by name: "sum", ...
  bool values = false;  // max.dim/min.dim: also write the values, indices second
  int nouts = 1;
  float fa = 0, fb = 0;  // f32 parameters (mean: N; var: 1 / max(0, N - correction); norm: p, 1/p)
  double da = 0;  // the float64 rows' parameter (mean: N)
};

struct Dim {
  int64_t size, in_stride, out0_stride, out1_stride;
};

// Reduces `in` over the dims described by od/rd into outs (1 or 2 tensors).
void run(const Op& op, const at::Tensor& in, std::vector<Dim> od, std::vector<Dim> rd,
         const std::vector<at::Tensor>& outs, const char* name);
// From a TensorIterator reduction: outputs are operands [0, noutputs), the input follows.
void reduce_iter(at::TensorIteratorBase& iter, const Op& op, const char* name);

}  // namespace webgpu::ops
