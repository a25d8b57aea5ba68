// nn.functional.embedding_bag: _embedding_bag / _embedding_bag_forward_only (kernel:
// wgsl/kernels/embedding_bag.wgsl), the dense backward and the per_sample_weights backward (compositions of
// native index_select / index_add_ / scatter_add_ in f32). Indices and offsets are checked on the
// device (RuntimeError, CPU's type), never clamped. The auxiliary outputs are filled for every mode
// (offset2bag per index, bag_size counting non-padding indices, max_indices the max's source rows),
// so the backward never needs the CPU. embedding_renorm_ (max_norm) composes native ops.
#include <ATen/ATen.h>
#include <ATen/TensorUtils.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <string>
#include <tuple>

#include "ops/common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {

namespace {

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

using Out4 = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

void check_inputs(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, int64_t mode,
                  const at::Tensor& psw, bool include_last_offset) {
  at::TensorArg indices_arg(indices, "indices", 1), offsets_arg(offsets, "offsets", 1), weight_arg(weight, "weight", 1);
  at::checkScalarTypes("embedding_bag", indices_arg, {at::kLong, at::kInt});
  at::checkScalarTypes("embedding_bag", offsets_arg, {at::kLong, at::kInt});
  at::checkSameType("embedding_bag", indices_arg, offsets_arg);
  at::checkScalarTypes("embedding_bag", weight_arg, {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  TORCH_CHECK(mode >= kSum && mode <= kMax, "embedding_bag: unknown mode ", mode, " (0 sum, 1 mean, 2 max)");
  TORCH_CHECK(indices.dim() == 1, "input has to be a 1D or 2D Tensor, but got Tensor of dimension ", indices.dim());
  TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
  TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  if (include_last_offset)
    TORCH_CHECK(offsets.size(0) >= 1, "include_last_offset: number of offset should be at least 1");
  if (psw.defined()) {
    TORCH_CHECK(mode == kSum, "embedding_bag: per_sample_weights only supported with mode='sum'");
    TORCH_CHECK(psw.scalar_type() == weight.scalar_type(), "embedding_bag: Expected per_sample_weights to have dtype ",
                weight.scalar_type(), " but got ", psw.scalar_type());
    TORCH_CHECK(psw.dim() == 1, "embedding_bag: Expected per_sample_weights to be 1D tensor, got ", psw.dim(), "D");
    TORCH_CHECK(psw.numel() == indices.numel(), "embedding_bag: Expected per_sample_weights.numel() (", psw.numel(),
                " to be the same as indices.numel() (", indices.numel(), ")");
  }
  TORCH_CHECK(indices.numel() <= INT32_MAX && weight.size(0) <= INT32_MAX,
              "webgpu: embedding_bag: indices or weight rows do not fit the 32-bit indexing of webgpu kernels");
}

// A weight past the binding limit (a large vocabulary): the kernel has walked the bags against a
// stand-in row, for offset2bag, bag_size and the checks; the values come from native index ops, which
// split (docs/design.md, "Operands past the binding limit"): the rows gathered, then summed (in f32)
// or maxed per bag, max_indices the first index reaching the max (the kernel's order).
void values_from_rows(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                      const at::Tensor& psw, int64_t mode, bool include_last_offset, int64_t padding_idx,
                      const at::Tensor& out, const at::Tensor& offset2bag, const at::Tensor& bag_size,
                      const at::Tensor& max_indices) {
  const int64_t n = indices.numel(), V = weight.size(0), B = out.size(0), D = out.size(1);
  const auto lopt = offset2bag.options();
  const auto fopt = out.options().dtype(at::kFloat);
  const at::Tensor ind = indices.to(at::kLong);
  // The indices that count: in range, not padding_idx, and for sum and mean with include_last_offset
  // before the last offset (max runs the last bag to the end of the indices, as CPU; the kernel too).
  at::Tensor keep = ind.ge(0).logical_and(ind.lt(V));
  if (padding_idx >= 0) keep = keep.logical_and(ind.ne(padding_idx));
  if (include_last_offset && mode != kMax)
    keep = keep.logical_and(at::arange(n, lopt).lt(offsets.narrow(0, offsets.size(0) - 1, 1)));
  const at::Tensor idx = ind.clamp(0, V - 1);
  const at::Tensor drop = keep.logical_not().unsqueeze(1);
  at::Tensor rows = weight.index_select(0, idx).to(at::kFloat);
  at::Tensor r;
  if (mode != kMax) {
    if (psw.defined()) rows = rows * psw.to(at::kFloat).unsqueeze(1);
    r = at::zeros({B, D}, fopt).index_add_(0, offset2bag, rows.masked_fill(drop, 0));
    if (mode == kMean) r = r / bag_size.clamp_min(1).to(at::kFloat).unsqueeze(1);
  } else {
    const double inf = std::numeric_limits<double>::infinity();
    rows = rows.masked_fill(drop, -inf);
    const at::Tensor bags = offset2bag.unsqueeze(1).expand({n, D});
    r = at::full({B, D}, -inf, fopt).scatter_reduce_(0, bags, rows, "amax");
    const at::Tensor hit = rows.eq(r.index_select(0, offset2bag)).logical_and(drop.logical_not());
    const at::Tensor pos = at::arange(n, lopt).unsqueeze(1).expand({n, D}).masked_fill(hit.logical_not(), n);
    const at::Tensor first = at::full({B, D}, n, lopt).scatter_reduce_(0, bags, pos, "amin").clamp_max(n - 1);
    const at::Tensor empty = bag_size.eq(0).unsqueeze(1);
    max_indices.copy_(idx.index_select(0, first.view({-1})).view({B, D}).masked_fill(empty, 0));
    r = r.masked_fill(empty, 0);
  }
  out.copy_(r);
}

Out4 forward(const at::Tensor& weight, const at::Tensor& indices_, const at::Tensor& offsets_, bool /*scale_grad*/,
             int64_t mode, bool /*sparse*/, const std::optional<at::Tensor>& psw_opt, bool include_last_offset,
             int64_t padding_idx) {
  const at::Tensor psw_ = psw_opt.has_value() ? *psw_opt : at::Tensor();
  check_inputs(weight, indices_, offsets_, mode, psw_, include_last_offset);
  const at::Tensor indices = indices_.contiguous(), offsets = offsets_.contiguous();
  const at::Tensor psw = psw_.defined() ? psw_.contiguous() : psw_;
  const int64_t noff = offsets.size(0);
  const int64_t B = include_last_offset ? noff - 1 : noff;
  const int64_t D = weight.size(1);
  const auto lopt = offsets.options().dtype(at::kLong);
  at::Tensor out = at::empty({B, D}, weight.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor offset2bag = at::zeros({indices.numel()}, lopt);
  at::Tensor o2b_operand = indices.numel() != 0 ? offset2bag : at::zeros({1}, lopt);
  at::Tensor bag_size = at::zeros({B}, lopt);
  at::Tensor max_indices = mode == kMax ? at::zeros({B, D}, lopt) : at::zeros({B}, lopt);
  if (out.numel() == 0) return {out, offset2bag, bag_size, max_indices};
  const bool big_weight = indices.numel() != 0 && !kernel::fits_binding(weight);
  Kernel k(std::string("embedding_bag:") + std::to_string(mode) + (psw.defined() ? ":psw" : ""));
  const at::Tensor w = big_weight ? weight.narrow(0, 0, 1) : weight;  // big: a stand-in row (values_from_rows)
  k.in(w, CT::F32);
  // No indices (every bag empty): a stand-in operand that the kernel never reads; offsets are still checked.
  k.in(indices.numel() != 0 ? indices : at::zeros({1}, lopt), CT::I64);
  k.in(offsets, CT::I64);
  k.out(out, CT::F32);
  k.out(o2b_operand, CT::I64);
  k.out(bag_size, CT::I64);
  k.out(max_indices, CT::I64);
  if (psw.defined()) k.in(psw, CT::F32);
  const uint32_t code = k.error_flag("embedding_bag", /*index_error=*/false);
  k.param_index("n", out.numel());
  k.param_index("D", D);
  k.param_index("noff", noff);
  k.param_index("nbags", B);
  k.param_index("n_idx", indices.numel());
  k.param_index("num_weights", weight.size(0));
  k.param_i32("padding_idx", padding_idx >= 0 && padding_idx < weight.size(0) ? int32_t(padding_idx) : -1);
  k.param_index("w_stride0", big_weight ? 0 : weight.stride(0));
  k.param_index("w_stride1", weight.stride(1));
  k.param_index("w_off", w.storage_offset());
  k.param_index("idx_off", indices.storage_offset());
  k.param_index("offs_off", offsets.storage_offset());
  k.param_index("out_off", out.storage_offset());
  k.param_index("o2b_off", o2b_operand.storage_offset());
  k.param_index("bs_off", bag_size.storage_offset());
  k.param_index("mi_off", max_indices.storage_offset());
  k.param("err_op", code);
  k.param_index("psw_off", psw.defined() ? psw.storage_offset() : 0);  // read only under HAS_PSW
  const bool has_psw = psw.defined();
  k.launch(grid(uint64_t(out.numel())), [&] {
    return kernel::library("per_element") + "const MODE: u32 = " + std::to_string(mode) +
           "u;\nconst HAS_PSW: bool = " + (has_psw ? "true" : "false") + ";\nfn psw(e: u32) -> f32 { return " +
           (has_psw ? "ld7(e)" : "0.0") + "; }\n" + kernel::library("embedding_bag");
  });
  if (big_weight)
    values_from_rows(weight, indices, offsets, psw, mode, include_last_offset, padding_idx, out, offset2bag, bag_size,
                     max_indices);
  return {out, offset2bag, bag_size, max_indices};
}

Out4 embedding_bag(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, bool scale_grad,
                   int64_t mode, bool sparse, const std::optional<at::Tensor>& psw, bool include_last_offset,
                   int64_t padding_idx) {
  return forward(weight, indices, offsets, scale_grad, mode, sparse, psw, include_last_offset, padding_idx);
}

// The weight of each index's contribution to its row's gradient: per_sample_weights, 1 / bag size
// (mean), 1 / the index's frequency (scale_grad_by_freq), 0 for padding_idx. One per index, in acc
// (float32, or float64 for a float64 gradient).
// The frequency is the index's own, as CUDA and CPU's sparse path take it (CPU's dense path divides
// by the count of another index, the i-th in sorted order).
at::Tensor index_scale(const at::Tensor& indices, const at::Tensor& offset2bag, const at::Tensor& bag_size,
                       int64_t num_weights, bool scale_grad_by_freq, int64_t mode, const at::Tensor& psw,
                       int64_t padding_idx, at::ScalarType acc) {
  const auto fopt = indices.options().dtype(acc);
  at::Tensor scale = psw.defined() ? psw.to(acc) : at::ones({indices.numel()}, fopt);
  if (mode == kMean) scale = scale / bag_size.index_select(0, offset2bag).to(acc).clamp_min(1);
  if (scale_grad_by_freq) {
    at::Tensor counts = at::zeros({num_weights}, fopt).index_add_(0, indices, at::ones({indices.numel()}, fopt));
    scale = scale / counts.index_select(0, indices);
  }
  if (padding_idx >= 0) scale = scale.masked_fill(indices == padding_idx, 0);
  return scale;
}

at::Tensor dense_backward(const at::Tensor& grad_, const at::Tensor& indices_, const at::Tensor& offset2bag_,
                          const at::Tensor& bag_size_, const at::Tensor& max_indices_, int64_t num_weights,
                          bool scale_grad_by_freq, int64_t mode, const std::optional<at::Tensor>& psw_opt,
                          int64_t padding_idx) {
  const at::Tensor psw = psw_opt.has_value() ? *psw_opt : at::Tensor();
  TORCH_CHECK(grad_.dim() == 2, "embedding_bag_backward: expected a 2-D grad, got ", grad_.dim(), "-D");
  const int64_t D = grad_.size(1);
  // half types accumulate in float32, float64 in float64 (not rounded to float32 on the way)
  at::Tensor grad = grad_.to(at::promote_types(grad_.scalar_type(), at::kFloat));
  const at::Tensor indices = indices_.reshape(-1).to(at::kLong);
  at::Tensor gw = at::zeros({num_weights, D}, grad.options());
  if (indices.numel() != 0 && grad.numel() != 0) {
    if (mode == kMax) {
      // Empty bags (bag_size 0) contribute nothing: their gradient is zeroed, their index row 0.
      at::Tensor nonempty = (bag_size_.to(at::kLong) > 0).unsqueeze(1);
      at::Tensor idx = max_indices_.to(at::kLong).masked_fill(nonempty.logical_not(), 0);
      gw.scatter_add_(0, idx, grad.masked_fill(nonempty.logical_not(), 0));
    } else {
      const at::Tensor offset2bag = offset2bag_.to(at::kLong);
      at::Tensor scale = index_scale(indices, offset2bag, bag_size_.to(at::kLong), num_weights, scale_grad_by_freq,
                                     mode, psw, padding_idx, grad.scalar_type());
      gw.index_add_(0, indices, grad.index_select(0, offset2bag) * scale.unsqueeze(1));
    }
  }
  return gw.to(grad_.scalar_type());
}

// ATen registers _embedding_bag_backward per backend (CPU, CUDA) rather than as a composite.
at::Tensor embedding_bag_backward(const at::Tensor& grad, const at::Tensor& indices, const at::Tensor& offsets,
                                  const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                  const at::Tensor& max_indices, int64_t num_weights, bool scale_grad_by_freq,
                                  int64_t mode, bool sparse, const std::optional<at::Tensor>& psw,
                                  int64_t padding_idx) {
  TORCH_CHECK_NOT_IMPLEMENTED(!sparse,
                              "webgpu: embedding_bag with sparse=True: the webgpu device has no sparse "
                              "tensors; use sparse=False");
  TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
  return dense_backward(grad, indices, offset2bag, bag_size, max_indices, num_weights, scale_grad_by_freq, mode, psw,
                        padding_idx);
}

at::Tensor psw_backward(const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& indices_,
                        const at::Tensor& /*offsets*/, const at::Tensor& offset2bag, int64_t mode,
                        int64_t padding_idx) {
  TORCH_CHECK(mode == kSum, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  TORCH_CHECK(grad.dim() == 2 && weight.dim() == 2 && grad.size(1) == weight.size(1),
              "embedding_bag_backward: grad and weight must be 2-D with the same embedding dim");
  const at::Tensor indices = indices_.reshape(-1).to(at::kLong);
  const auto acc = at::promote_types(grad.scalar_type(), at::kFloat);  // float32, or float64 for float64
  at::Tensor r =
      (grad.index_select(0, offset2bag.to(at::kLong)).to(acc) * weight.index_select(0, indices).to(acc)).sum(1);
  if (padding_idx >= 0) r = r.masked_fill(indices == padding_idx, 0);
  return r.to(grad.scalar_type());
}

// F.embedding / F.embedding_bag with max_norm: each row that indices name is scaled in place to
// max_norm / (norm + 1e-7) when its p-norm exceeds max_norm. Duplicate indices gather the same row and
// write back the same values, so no deduplication is needed. The norm is rounded to the row's dtype
// (CPU's row.norm()), the scale computed in f32.
at::Tensor& embedding_renorm_(at::Tensor& self, const at::Tensor& indices, double max_norm, double norm_type) {
  at::TensorArg self_arg(self, "self", 1), indices_arg(indices, "indices", 2);
  at::checkDim("embedding_renorm_", self_arg, 2);
  at::checkScalarTypes("embedding_renorm_", indices_arg, {at::kLong, at::kInt});
  const at::Tensor idx = indices.reshape(-1).to(at::kLong);
  if (idx.numel() == 0 || self.size(1) == 0) return self;
  at::Tensor rows = self.index_select(0, idx);
  at::Tensor norm = at::linalg_vector_norm(rows, norm_type, {1}, /*keepdim=*/true).to(at::kFloat);
  at::Tensor scale = at::where(norm > max_norm, max_norm / (norm + 1e-7), at::ones_like(norm));
  self.index_copy_(0, idx, (rows.to(at::kFloat) * scale).to(self.scalar_type()));
  return self;
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  m.impl("_embedding_bag", TORCH_FN(embedding_bag));
  m.impl("_embedding_bag_forward_only", TORCH_FN(embedding_bag));
  m.impl("_embedding_bag_backward", TORCH_FN(embedding_bag_backward));
  m.impl("_embedding_bag_dense_backward", TORCH_FN(dense_backward));
  m.impl("_embedding_bag_per_sample_weights_backward", TORCH_FN(psw_backward));
  m.impl("embedding_renorm_", TORCH_FN(embedding_renorm_));
}
