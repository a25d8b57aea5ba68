// CTC loss: aten::_ctc_loss and _ctc_loss_backward (int[] and Tensor lengths) for float32 log_probs,
// int64 or int32 targets (padded [B, S] or concatenated), any strides. CPU's argument checks and
// output allocation come from ATen's own ctc_loss_meta; the kernels (wgsl/kernels/ctc.wgsl) run
// CPU's recursions in log space, one workgroup per batch element.
#include <ATen/ATen.h>
#include <ATen/ops/_ctc_loss_backward_native.h>
#include <ATen/ops/_ctc_loss_native.h>
#include <torch/library.h>

#include <vector>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

std::string section(const char* name) { return kernel::section("ctc", name); }

void check_dtype(const at::Tensor& log_probs, const char* op) {
  check_kernel_dtype(log_probs.scalar_type() == at::kFloat, log_probs.scalar_type(), op, " on the webgpu device");
}

// What both kernels share: the pointwise library, the operands 0-2 (log_probs, targets, meta [3, B]
// = input length, target length, target base offset; the kernel holds it) and their parameters;
// L is the alpha rows' width.
void add_common(Kernel& k, const at::Tensor& lp, const at::Tensor& targets, at::IntArrayRef input_lengths,
                at::IntArrayRef target_lengths, int64_t blank, int64_t L) {
  k.library("pointwise");
  const int64_t B = lp.size(1);
  std::vector<int32_t> m(3 * B);
  int64_t pos = 0;
  for (int64_t b = 0; b < B; ++b) {
    m[b] = int32_t(input_lengths[b]);
    m[B + b] = int32_t(target_lengths[b]);
    m[2 * B + b] = int32_t(targets.dim() == 1 ? pos : b * targets.stride(0));
    pos += target_lengths[b];
  }
  const at::Tensor meta = at::from_blob(m.data(), {3 * B}, at::kInt).to(lp.device());
  k.in(lp, CT::F32);
  k.in(targets, CT::I32);
  k.in(meta, CT::I32);
  k.param_index("lp_st0", lp.stride(0));
  k.param_index("lp_st1", lp.stride(1));
  k.param_index("lp_st2", lp.stride(2));
  k.param_index("lp_off", lp.storage_offset());
  k.param_index("tg_st", targets.stride(targets.dim() - 1));
  k.param_index("tg_off", targets.storage_offset());
  k.param_index("meta_off", meta.storage_offset());
  k.param_index("B", B);
  k.param_index("T", lp.size(0));
  k.param_index("L", L);
  k.param_index("blank", blank);
}

std::tuple<at::Tensor, at::Tensor> ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                            at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                                            int64_t blank, bool zero_infinity) {
  check_dtype(log_probs, "ctc_loss_cpu");
  TORCH_CHECK(log_probs.numel() > 0, "log_probs tensor must not be empty");
  // CPU's checks, messages and output shapes: [B] and [B, T, 2 * max target length + 1].
  auto [nll, log_alpha] =
      at::native::ctc_loss_meta(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
  Kernel k("ctc:forward");
  add_common(k, log_probs, targets, input_lengths, target_lengths, blank, log_alpha.size(2));
  k.out(log_alpha, CT::F32);
  k.out(nll, CT::F32);
  k.param_index("nll_off", nll.storage_offset());
  k.launch(uint64_t(log_probs.size(1)), [] { return section("forward"); });
  return {nll, log_alpha};
}

at::Tensor ctc_loss_backward(const at::Tensor& grad, const at::Tensor& log_probs, const at::Tensor& targets,
                             at::IntArrayRef input_lengths, at::IntArrayRef target_lengths, const at::Tensor& nll_,
                             const at::Tensor& log_alpha_, int64_t blank, bool zero_infinity) {
  check_dtype(log_probs, "ctc_loss_backward_cpu");
  const at::Tensor log_alpha = log_alpha_.contiguous(), nll = nll_.contiguous();
  at::Tensor out = at::empty(log_probs.sizes(), log_probs.options().memory_format(at::MemoryFormat::Contiguous));
  if (out.numel() == 0) return out;
  at::Tensor log_beta = at::empty_like(log_alpha);
  Kernel k("ctc:backward");
  add_common(k, log_probs, targets, input_lengths, target_lengths, blank, log_alpha.size(2));
  k.in(log_alpha, CT::F32);
  k.in(nll, CT::F32);
  k.in(grad, CT::F32);
  k.out(log_beta, CT::F32);
  k.out(out, CT::F32);
  k.param_index("nll_off", nll.storage_offset());
  k.param_index("gout_off", grad.storage_offset());
  k.param_index("grad_st", grad.dim() ? grad.stride(0) : 0);
  k.param_index("C", log_probs.size(2));
  k.param("zero_inf", zero_infinity ? 1u : 0u);
  k.launch(uint64_t(log_probs.size(1)), [] { return section("backward"); });
  return out;
}

}  // namespace

// clang-format off
WEBGPU_LIBRARY_IMPL(m) {
  m.impl("_ctc_loss", TORCH_FN(ctc_loss));
  m.impl("_ctc_loss.Tensor", TORCH_FN(at::native::ctc_loss_tensor));
  m.impl("_ctc_loss_backward", TORCH_FN(ctc_loss_backward));
  m.impl("_ctc_loss_backward.Tensor", TORCH_FN(at::native::ctc_loss_backward_tensor));
}
// clang-format on

}  // namespace webgpu::ops
