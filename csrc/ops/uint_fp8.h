// Which ops take uint16/uint32/uint64 and the float8 dtypes (docs/design.md, "Dtype storage"): the
// device stores and converts them everywhere, but computes only where CPU does (torch 2.13's CPU
// kernels cover few ops for them) and where the kernel moves raw bits.
#pragma once
#include <ATen/ATen.h>

#include <initializer_list>

#include "kernel/dtype.h"

namespace webgpu::ops {

struct Row;

// While alive, kernels launched on this thread accept the new dtypes (an op that checked them).
class AllowUintFp8 {
 public:
  AllowUintFp8();
  ~AllowUintFp8();

 private:
  bool prev_;
};

// check_supported_dtype's rule for the new dtypes: ops named in the allow list (raw-moving kernels)
// or inside AllowUintFp8 pass; others raise NotImplementedError as CPU's "not implemented for" does.
void check_uint_fp8(at::ScalarType t, const char* op);

// run_row for a row whose driving dtype is one of the new dtypes: runs the rows CPU implements for
// them (exact unsigned or float8 semantics) and raises NotImplementedError for the others.
void run_row_uint_fp8(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars,
                      at::ScalarType dt);

}  // namespace webgpu::ops
