// The elementwise engine: one kernel template serves every pointwise op over a built
// TensorIterator (broadcasting, promotion, strides, storage offsets, CPU scalars, sub-word dtypes).
#pragma once
#include <string>
#include <vector>

#include <ATen/TensorIterator.h>

#include "kernel/dtype.h"

namespace webgpu::ops {

// Runs `out = expr` over iter (one output, operand 0; inputs are x1, x2, ...; scalars s0, s1, ...,
// all of type ct in WGSL). `name` keys the pipeline cache together with the specialisation.
// CPU-scalar operands become parameters; with scalar_dtype set they are first cast to it, as CPU's
// TensorIterator casts every input to the common dtype (so `int8_tensor // 300` wraps 300 first).
void run_elementwise(at::TensorIteratorBase& iter, const std::string& name, const std::string& expr, CT ct,
                     const std::vector<ScalarBits>& scalars = {},
                     at::ScalarType scalar_dtype = at::ScalarType::Undefined);

}  // namespace webgpu::ops
