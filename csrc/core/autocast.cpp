// torch.autocast("webgpu"): the AutocastPrivateUse1 dispatch key's kernels. PyTorch registers cast
// policies for its in-tree autocast keys (CUDA, CPU, XPU, MPS, ...) but none for
// AutocastPrivateUse1, not even a fallthrough: an out-of-tree backend registers its own. We register
// CUDA's policy, built from the op lists ATen shares for that purpose (ATen/autocast_mode.h,
// AT_FORALL_*), so the set follows the torch we compile against:
//   lower_precision_fp  mm, bmm, addmm, linear, matmul, conv*, sdpa, ... run in the autocast dtype
//   fp32                exp, log, pow, layer_norm, group_norm, losses, ... run in float32
//   fp32_set_opt_dtype  softmax, log_softmax, sum, prod, cumsum, ... get dtype=float32 unless given
//   fp32_append_dtype   norm: redispatched to the overload that takes a dtype, with float32
//   promote             addcmul, addcdiv, atan2, dot, index_put, scatter_add, ...: the widest input dtype
// and binary_cross_entropy refuses, as on CUDA. Every other op falls through unchanged.
// The wrappers only cast and redispatch: the kernels that then run are ops/'s, on PrivateUse1.
// See docs/design.md, "Mixed precision".
#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#if !defined(AT_FORALL_LOWER_PRECISION_FP) || !defined(AT_FORALL_FP32) || !defined(AT_FORALL_FP32_SET_OPT_DTYPE) || \
    !defined(AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE) || !defined(AT_FORALL_PROMOTE) ||                            \
    !defined(KERNEL_PRIVATEUSEONE)
#error "torch-webgpu's autocast needs ATen/autocast_mode.h's shared op lists (torch >= 2.4)"
#endif

namespace webgpu::core {
namespace {

// AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE spells its signatures without a namespace.
#if __has_include(<ATen/core/Dimname.h>)
// torch <= 2.12: named-tensor overloads (norm with DimnameList) are in the lists too.
#include <ATen/core/Dimname.h>
using at::Dimname;
using at::DimnameList;
#endif
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

at::Tensor binary_cross_entropy_refused(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                        int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast (as on "
              "CUDA): a sigmoid before them loses precision in the autocast dtype. Use "
              "torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss, which "
              "combine the two and are safe to autocast.");
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define WEBGPU_AUTOCAST_LOW(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
  AT_FORALL_LOWER_PRECISION_FP(WEBGPU_AUTOCAST_LOW)
#undef WEBGPU_AUTOCAST_LOW

#define WEBGPU_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
  AT_FORALL_FP32(WEBGPU_AUTOCAST_FP32)
#undef WEBGPU_AUTOCAST_FP32

#define WEBGPU_AUTOCAST_FP32_OPT(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
  AT_FORALL_FP32_SET_OPT_DTYPE(WEBGPU_AUTOCAST_FP32_OPT)
#undef WEBGPU_AUTOCAST_FP32_OPT

  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)

#define WEBGPU_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_PROMOTE(WEBGPU_AUTOCAST_PROMOTE)
#undef WEBGPU_AUTOCAST_PROMOTE

  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(binary_cross_entropy_refused));
}

}  // namespace
}  // namespace webgpu::core
