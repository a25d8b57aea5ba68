// torch.segment_reduce (lengths or offsets; max, mean, min, sum, prod; `initial`) and its backward.
// ATen's own front ends (segment_reduce_kernel, _segment_reduce_backward_kernel) do the argument
// checks with CPU's messages and call the DispatchStubs registered here for PrivateUse1. Kernels:
// wgsl/kernels/segment.wgsl, one invocation per output (forward) or data element (backward), CPU's
// order of accumulation and rounding per step.
#include <ATen/ATen.h>
#include <ATen/native/SegmentReduce.h>
#include <torch/library.h>

#include <limits>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/nn_common.h"
#include "ops/pointwise.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::native::ReductionType;

void check_dtype(const at::Tensor& data, const char* op) {
  const auto t = data.scalar_type();
  // (float64: NoDtypeKernel, which the registration guard hands to the CPU fallback)
  check_kernel_dtype(t == at::kFloat || t == at::kHalf || t == at::kBFloat16, t, op, "");
}

// [outer, S + 1] int offsets from lengths [outer..., S] (a zero column, then running sums).
at::Tensor offsets_of_lengths(const at::Tensor& lengths) {
  at::Tensor l = lengths.reshape({-1, lengths.size(-1)});
  return at::cat({at::zeros({l.size(0), 1}, l.options()), l.cumsum(1, l.scalar_type())}, 1);
}

// The reduction's starting value as CPU picks it, cast to the data's dtype.
float initial_value(ReductionType r, const std::optional<at::Scalar>& initial, at::ScalarType t) {
  if (initial.has_value()) return float(cast_scalar(*initial, t).toDouble());
  switch (r) {
    case ReductionType::MAX: return -std::numeric_limits<float>::infinity();
    case ReductionType::MIN: return std::numeric_limits<float>::infinity();
    case ReductionType::PROD: return 1.0f;
    default: return 0.0f;
  }
}

// Shape facts shared by forward and backward: data [outer, A, inner] with A = data.size(axis).
struct Geometry {
  int64_t outer = 1, A = 1, inner = 1, S = 0;
};

Geometry geometry(const at::Tensor& data, const at::Tensor& offsets, int64_t axis) {
  Geometry g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= data.size(d);
  for (int64_t d = axis + 1; d < data.dim(); ++d) g.inner *= data.size(d);
  g.A = data.size(axis);
  g.S = offsets.size(-1) - 1;
  return g;
}

// What both kernels share: the pointwise library, operands 0 (data) and 1 (offsets), and the
// geometry, reduction and offset parameters.
void add_common(Kernel& k, const at::Tensor& data, const at::Tensor& offsets, const Geometry& g, ReductionType r,
                float init) {
  k.library("pointwise");
  k.in(data, CT::F32);
  k.in(offsets, CT::I32);
  k.param_index("S", g.S);
  k.param_index("A", g.A);
  k.param_index("inner", g.inner);
  k.param("red", uint32_t(r));
  k.param_f32("init", init);
  k.param_index("data_off", data.storage_offset());
  k.param_index("offs_off", offsets.storage_offset());
}

// Runs section `sec` of wgsl/kernels/segment.wgsl once per element of `per` (P.n of them), rounding
// to dtype t.
void launch_segment(Kernel& k, const at::Tensor& per, at::ScalarType t, const char* sec) {
  k.param_index("n", per.numel());
  k.launch(grid(uint64_t(per.numel())),
           [&] { return per_element_main() + round_fn(t) + kernel::section("segment", sec); });
}

at::Tensor forward(ReductionType r, const at::Tensor& data_, const at::Tensor& offsets_, int64_t axis,
                   const std::optional<at::Scalar>& initial) {
  check_dtype(data_, "segment_reduce");
  const at::Tensor data = data_.contiguous(), offsets = offsets_.reshape({-1, offsets_.size(-1)}).contiguous();
  const Geometry g = geometry(data, offsets, axis);
  auto shape = data.sizes().vec();
  shape[axis] = g.S;
  at::Tensor out = at::empty(shape, data.options());
  if (out.numel() == 0) return out;
  Kernel k("segment:forward");
  add_common(k, data, offsets, g, r, initial_value(r, initial, data.scalar_type()));
  k.out(out, CT::F32);
  k.param("has_init", initial.has_value() ? 1u : 0u);
  k.param_index("out_off", out.storage_offset());
  launch_segment(k, out, data.scalar_type(), "forward");
  return out;
}

at::Tensor backward(const at::Tensor& grad_, const at::Tensor& output_, const at::Tensor& data_, ReductionType r,
                    const at::Tensor& offsets_, int64_t axis, const std::optional<at::Scalar>& initial) {
  check_dtype(data_, "_segment_reduce_backward");
  const at::Tensor data = data_.contiguous(), offsets = offsets_.reshape({-1, offsets_.size(-1)}).contiguous();
  const at::Tensor grad = grad_.to(data.scalar_type()).contiguous();
  const at::Tensor output = output_.to(data.scalar_type()).contiguous();
  const Geometry g = geometry(data, offsets, axis);
  at::Tensor gin = at::empty(data.sizes(), grad_.options());
  if (gin.numel() == 0) return gin;
  Kernel k("segment:backward");
  // The backward's starting value is prod's exclusive product: `initial`, else 1.
  add_common(k, data, offsets, g, r, initial.has_value() ? initial_value(r, initial, data.scalar_type()) : 1.0f);
  k.in(grad, CT::F32);
  k.in(output, CT::F32);
  k.out(gin, CT::F32);
  k.param_index("grad_off", grad.storage_offset());
  k.param_index("outv_off", output.storage_offset());
  k.param_index("gin_off", gin.storage_offset());
  launch_segment(k, gin, data.scalar_type(), "backward");
  return gin;
}

at::Tensor lengths_fwd(ReductionType r, const at::Tensor& data, const at::Tensor& lengths, int64_t axis,
                       const std::optional<at::Scalar>& initial) {
  return forward(r, data, offsets_of_lengths(lengths), axis, initial);
}

at::Tensor offsets_fwd(ReductionType r, const at::Tensor& data, const at::Tensor& offsets, int64_t axis,
                       const std::optional<at::Scalar>& initial) {
  return forward(r, data, offsets, axis, initial);
}

at::Tensor lengths_bwd(const at::Tensor& grad, const at::Tensor& output, const at::Tensor& data, ReductionType r,
                       const at::Tensor& lengths, int64_t axis, const std::optional<at::Scalar>& initial) {
  return backward(grad, output, data, r, offsets_of_lengths(lengths), axis, initial);
}

at::Tensor offsets_bwd(const at::Tensor& grad, const at::Tensor& output, const at::Tensor& data, ReductionType r,
                       const at::Tensor& offsets, int64_t axis, const std::optional<at::Scalar>& initial) {
  return backward(grad, output, data, r, offsets, axis, initial);
}

}  // namespace

WEBGPU_STUB(_segment_reduce_lengths_stub, &lengths_fwd)
WEBGPU_STUB(_segment_reduce_offsets_stub, &offsets_fwd)
WEBGPU_STUB(_segment_reduce_lengths_backward_stub, &lengths_bwd)
WEBGPU_STUB(_segment_reduce_offsets_backward_stub, &offsets_bwd)

// clang-format off
WEBGPU_LIBRARY_IMPL(m) {
  m.impl("segment_reduce", TORCH_FN(at::native::segment_reduce_kernel));
  m.impl("_segment_reduce_backward", TORCH_FN(at::native::_segment_reduce_backward_kernel));
}
// clang-format on

}  // namespace webgpu::ops
