// Losses, forward and backward. Pointwise losses (mse, smooth_l1, huber, binary_cross_entropy) are
// elementwise expressions reached through ATen's own structured/generic functions and stubs, then
// reduced by the reductions. nll_loss / nll_loss2d gather one element per sample (an invocation per
// sample and spatial position) into per-sample loss and weight buffers that the reductions sum in a
// fixed order (deterministic); their backward scatters into a zeroed grad_input. cross_entropy,
// l1_loss, kl_div, soft_margin_loss and binary_cross_entropy_with_logits are ATen composites over
// these and the pointwise ops.
//
// Target indices: an out-of-range class index (neither ignore_index nor in [0, C)) contributes
// nothing on the device (weight 0) and is reported through the device error words
// (Kernel::error_flag): IndexError at the next synchronisation, as CPU raises at once.
#include <ATen/ATen.h>
#include <ATen/NativeFunctions.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/PointwiseOps.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <torch/library.h>

#include "ops/common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/pointwise.h"
#include "ops/rows.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

constexpr Row kMse{"mse", lib::None, "(x1 - x2) * (x1 - x2)", nullptr, nullptr};
constexpr Row kSmoothL1{"smooth_l1", lib::None,
                        "select(abs(x1 - x2) - 0.5 * s0, 0.5 * (x1 - x2) * (x1 - x2) / s0, abs(x1 - x2) < s0)", nullptr,
                        nullptr};
constexpr Row kHuber{"huber", lib::None,
                     "select(s0 * (abs(x1 - x2) - 0.5 * s0), 0.5 * (x1 - x2) * (x1 - x2), abs(x1 - x2) < s0)", nullptr,
                     nullptr};
// Backward iterators are (grad_input; input, target, grad_output); s0 the reduction's norm.
constexpr Row kMseBackward{"mse_backward", lib::None, "s0 * (x1 - x2) * x3", nullptr, nullptr};
constexpr Row kSmoothL1Backward{
    "smooth_l1_backward", lib::None,
    "select(select(select(s0 * (x1 - x2) * x3 / s1, 0.0, s1 == 0.0), s0 * x3, x1 - x2 > s1), -s0 * x3, x1 - x2 < -s1)",
    nullptr, nullptr};
constexpr Row kHuberBackward{"huber_backward", lib::None,
                             "select(select(s0 * (x1 - x2) * x3, s0 * x3 * s1, x1 - x2 > s1), -s0 * x3 * s1, "
                             "x1 - x2 < -s1)",
                             nullptr, nullptr};

void mse_kernel(at::TensorIteratorBase& it) { run_row(kMse, it); }
void smooth_l1_kernel(at::TensorIteratorBase& it, double beta) { run_row(kSmoothL1, it, {beta}); }
void huber_kernel(at::TensorIterator& it, double delta) { run_row(kHuber, it, {delta}); }
void mse_backward_kernel(at::TensorIterator& it, const c10::Scalar& norm) { run_row(kMseBackward, it, {norm}); }
void smooth_l1_backward_kernel(at::TensorIterator& it, const c10::Scalar& norm, double beta) {
  run_row(kSmoothL1Backward, it, {norm, beta});
}
void huber_backward_kernel(at::TensorIterator& it, const c10::Scalar& norm, double delta) {
  run_row(kHuberBackward, it, {norm, delta});
}

at::Tensor apply_reduction(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

// ---------------------------------------------------------------------------------------------
// binary_cross_entropy

at::Tensor bce(const at::Tensor& input, const at::Tensor& target, const std::optional<at::Tensor>& weight_opt,
               int64_t reduction) {
  TORCH_CHECK(input.sizes() == target.sizes(), "binary_cross_entropy: the target size (", target.sizes(),
              ") must be the same as the input size (", input.sizes(), ")");
  at::Tensor loss = at::empty_like(input, at::MemoryFormat::Contiguous);
  const at::Tensor weight = weight_opt.value_or(at::Tensor());
  at::TensorIteratorConfig cfg;
  cfg.add_output(loss).add_const_input(input).add_const_input(target);
  if (weight.defined()) cfg.add_const_input(weight);
  auto it = cfg.build();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(it.common_dtype()), "\"binary_cross_entropy\" not implemented for '",
                              c10::toString(it.common_dtype()), "'");
  const std::string e = "-(x2 * max(f_log(x1), -100.0) + (1.0 - x2) * max(f_log(1.0 - x1), -100.0))";
  run_expr("binary_cross_entropy", it, CT::F32, (weight.defined() ? "x3 * " + e : e).c_str(), lib::Pointwise);
  return apply_reduction(loss, reduction);
}

at::Tensor& bce_out(const at::Tensor& input, const at::Tensor& target, const std::optional<at::Tensor>& weight,
                    int64_t reduction, at::Tensor& out) {
  at::Tensor r = bce(input, target, weight, reduction);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

at::Tensor& bce_backward_out(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& target,
                             const std::optional<at::Tensor>& weight_opt, int64_t reduction, at::Tensor& gi) {
  at::native::resize_output(gi, input.sizes());
  const at::Tensor weight = weight_opt.value_or(at::Tensor());
  const double norm = reduction == at::Reduction::Mean ? 1.0 / double(std::max<int64_t>(input.numel(), 1)) : 1.0;
  at::TensorIteratorConfig cfg;
  cfg.add_output(gi)
      .add_const_input(input)
      .add_const_input(target)
      .add_const_input(grad)
      .check_all_same_dtype(false)
      .promote_inputs_to_common_dtype(false);
  if (weight.defined()) cfg.add_const_input(weight);
  auto it = cfg.build();
  const std::string e = "s0 * x3 * (x1 - x2) / max((1.0 - x1) * x1, 1e-12)";
  run_expr("binary_cross_entropy_backward", it, CT::F32, (weight.defined() ? "x4 * " + e : e).c_str(), lib::None,
           {norm});
  return gi;
}

at::Tensor bce_backward(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& target,
                        const std::optional<at::Tensor>& weight, int64_t reduction) {
  at::Tensor gi = at::empty_like(input, at::MemoryFormat::Contiguous);
  return bce_backward_out(grad, input, target, weight, reduction, gi);
}

// ---------------------------------------------------------------------------------------------
// nll_loss, nll_loss2d: input viewed as contiguous (N, C, S), target (N, S).

struct Nll {
  int64_t n, c, s;
};

// What both nll kernels share. Parameters: n (samples * positions), C (classes), S (positions),
// t_off (target), w_off (weight, when given), ignore (ignore_index, int64).
void nll_params(Kernel& k, const Nll& g, int64_t count, const at::Tensor& target, const at::Tensor& weight,
                int64_t ignore_index) {
  k.param_index("n", count);
  k.param_index("C", g.c);
  k.param_index("S", g.s);
  k.param_index("t_off", target.storage_offset());
  if (weight.defined()) k.param_index("w_off", weight.storage_offset());
  k.param_i64("ignore", ignore_index);
}

// The kernels' start: invocation i's target t (operand T), whether it is ignore_index, C and S.
std::string nll_head(int T) {
  return kernel::library("per_element") +
         "fn run(i: u32) {\n"
         "  let C = P.C; let S = P.S;\n"
         "  let t = ld" +
         std::to_string(T) +
         "(P.t_off + i);\n"
         "  let ignored = t.x == P.ignore.x && t.y == P.ignore.y;\n";
}

// The class weight of target t (operand W, -1: none).
std::string nll_weight(int W) { return W >= 0 ? "ld" + std::to_string(W) + "(P.w_off + t.x)" : std::string("1.0"); }

// Per-(sample, position) loss and weight (f32) for a reduction (loss and wsum: storage offset 0).
void nll_gather_launch(const at::Tensor& input, const at::Tensor& target, const at::Tensor& weight,
                       int64_t ignore_index, const Nll& g, const at::Tensor& loss, const at::Tensor& wsum) {
  const int64_t count = g.n * g.s;
  if (count == 0) return;
  Kernel k(std::string("nn:nll_gather:") + (weight.defined() ? "w" : ""));
  const int X = k.in(input, CT::F32), T = k.in(target, CT::I64);
  const int W = weight.defined() ? k.in(weight, CT::F32) : -1;
  const int L = k.out(loss, CT::F32), WS = k.out(wsum, CT::F32);
  nll_params(k, g, count, target, weight, ignore_index);
  k.param_index("x_off", input.storage_offset());
  k.param("err_op", k.error_flag("nll_loss"));
  k.launch(grid(uint64_t(count)), [&] {
    auto n = [](int i) { return std::to_string(i); };
    return nll_head(T) +
           "  var l = 0.0; var w = 0.0;\n"
           "  if (!ignored && t.y == 0u && t.x < C) {\n"
           "    w = " +
           nll_weight(W) +
           ";\n"
           "    l = -w * ld" +
           n(X) +
           "(P.x_off + ((i / S) * C + t.x) * S + i % S);\n"
           "  } else if (!ignored) {\n    report_index_error(P.err_op, 1u, t, C);\n  }\n"
           "  st" +
           n(L) + "(i, l); st" + n(WS) + "(i, w);\n}\n";
  });
}

// Operands past the binding limit (GPT-2's logits): slices of whole samples (ops/rows.h), each
// gathering into losses of its own that are copied into their place.
void nll_gather(const at::Tensor& input, const at::Tensor& target, const at::Tensor& weight, int64_t ignore_index,
                const Nll& g, const at::Tensor& loss, const at::Tensor& wsum) {
  const int64_t cs = g.c * g.s;
  if (g.s > 1 && uint64_t(cs * input.element_size()) > binding_budget(kernel::device_info(input))) {
    // One sample past the limit (a segmentation map's classes x positions, interleaved): the classes
    // go last (a copy, which splits), a row per position.
    const at::Tensor xt = input.view({g.n, g.c, g.s}).transpose(1, 2).contiguous();
    return nll_gather(xt, target, weight, ignore_index, {g.n * g.s, g.c, 1}, loss, wsum);
  }
  const int64_t per = rows_per_launch({{&input, cs}, {&target, g.s}, {&loss, g.s}, {&wsum, g.s}}, g.n, "nll_loss");
  if (per >= g.n) return nll_gather_launch(input, target, weight, ignore_index, g, loss, wsum);
  for (int64_t n0 = 0; n0 < g.n; n0 += per) {
    const int64_t k = std::min(per, g.n - n0);
    at::Tensor l = at::empty({k * g.s}, loss.options()), w = at::empty({k * g.s}, wsum.options());
    nll_gather_launch(row_slice(input, cs, n0, k), row_slice(target, g.s, n0, k), weight, ignore_index, {k, g.c, g.s},
                      l, w);
    loss.narrow(0, n0 * g.s, k * g.s).copy_(l);
    wsum.narrow(0, n0 * g.s, k * g.s).copy_(w);
  }
}

std::tuple<at::Tensor, at::Tensor> nll_forward(const at::Tensor& self, const at::Tensor& target,
                                               const at::Tensor& weight, int64_t reduction, int64_t ignore_index,
                                               const Nll& g, at::IntArrayRef none_shape) {
  const auto st = self.scalar_type();
  check_kernel_dtype(st == at::kFloat || st == at::kHalf || st == at::kBFloat16, st, "nll_loss");
  const at::Tensor x = self.contiguous(), t = target.contiguous();
  const at::Tensor w = weight.defined() ? weight.contiguous() : weight;
  const auto f = self.options().dtype(at::kFloat);
  at::Tensor loss = at::empty({g.n * g.s}, f), ws = at::empty({g.n * g.s}, f);
  nll_gather(x, t, w, ignore_index, g, loss, ws);
  if (reduction == at::Reduction::None) {
    return {loss.view(none_shape).to(self.scalar_type()), at::zeros({}, self.options())};
  }
  at::Tensor total = ws.sum();
  at::Tensor out = loss.sum();
  if (reduction == at::Reduction::Mean) out = out / total;
  return {out.to(self.scalar_type()), total.to(self.scalar_type())};
}

void nll_scatter_launch(const at::Tensor& grad, const at::Tensor& target, const at::Tensor& weight,
                        const at::Tensor& total_weight, int64_t reduction, int64_t ignore_index, const Nll& g,
                        const at::Tensor& gi) {
  const int64_t count = g.n * g.s;
  if (count == 0) return;
  const bool none = reduction == at::Reduction::None, mean = reduction == at::Reduction::Mean;
  Kernel k(std::string("nn:nll_scatter:") + (weight.defined() ? "w" : "") + (none ? "n" : mean ? "m" : "s"));
  const int G = k.in(grad, CT::F32), T = k.in(target, CT::I64);
  const int W = weight.defined() ? k.in(weight, CT::F32) : -1;
  const int TW = k.in(total_weight, CT::F32);
  const int GI = k.out(gi, CT::F32);
  nll_params(k, g, count, target, weight, ignore_index);
  k.param_index("grad_off", grad.storage_offset());
  if (mean) k.param_index("tw_off", total_weight.storage_offset());
  k.param_index("gi_off", gi.storage_offset());
  k.launch(grid(uint64_t(count)), [&] {
    auto n = [](int i) { return std::to_string(i); };
    std::string gv = "ld" + n(G) + "(P.grad_off" + (none ? " + i" : "") + ")";
    if (mean) gv += " / ld" + n(TW) + "(P.tw_off)";
    return nll_head(T) +
           "  if (!ignored && t.y == 0u && t.x < C) {\n"
           "    let w = " +
           nll_weight(W) +
           ";\n"
           "    st" +
           n(GI) + "(P.gi_off + ((i / S) * C + t.x) * S + i % S, -w * " + gv +
           ");\n"
           "  }\n}\n";
  });
}

// Operands past the binding limit: slices of whole samples (grad too where reduction is none).
void nll_scatter(const at::Tensor& grad, const at::Tensor& target, const at::Tensor& weight,
                 const at::Tensor& total_weight, int64_t reduction, int64_t ignore_index, const Nll& g,
                 const at::Tensor& gi) {
  const int64_t cs = g.c * g.s;
  if (g.s > 1 && uint64_t(cs * gi.element_size()) > binding_budget(kernel::device_info(gi))) {
    // One sample past the limit: as nll_gather, the classes last, then copied into place.
    at::Tensor t = at::zeros({g.n * g.s, g.c}, gi.options());
    nll_scatter(grad, target, weight, total_weight, reduction, ignore_index, {g.n * g.s, g.c, 1}, t);
    gi.view({g.n, g.c, g.s}).copy_(t.view({g.n, g.s, g.c}).transpose(1, 2));
    return;
  }
  const bool none = reduction == at::Reduction::None;
  const int64_t per = rows_per_launch({{&gi, cs}, {&target, g.s}, {none ? &grad : nullptr, g.s}}, g.n, "nll_loss");
  if (per >= g.n) return nll_scatter_launch(grad, target, weight, total_weight, reduction, ignore_index, g, gi);
  for (int64_t n0 = 0; n0 < g.n; n0 += per) {
    const int64_t k = std::min(per, g.n - n0);
    nll_scatter_launch(none ? row_slice(grad, g.s, n0, k) : grad, row_slice(target, g.s, n0, k), weight, total_weight,
                       reduction, ignore_index, {k, g.c, g.s}, row_slice(gi, cs, n0, k));
  }
}

void nll_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target, const at::Tensor& weight,
                  int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight, const Nll& g,
                  const at::Tensor& grad_input) {
  at::Tensor gi = grad_input.is_contiguous() ? grad_input : at::empty(self.sizes(), grad_input.options());
  gi.zero_();
  nll_scatter(grad.contiguous(), target.contiguous(), weight.defined() ? weight.contiguous() : weight,
              total_weight.contiguous(), reduction, ignore_index, g, gi);
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
  (void)self;
}

Nll nll_geometry(const at::Tensor& self) {
  if (self.dim() <= 1) return {1, self.dim() == 1 ? self.size(0) : 1, 1};
  int64_t s = 1;
  for (int64_t i = 2; i < self.dim(); ++i) s *= self.size(i);
  return {self.size(0), self.size(1), s};
}

// The .output overloads: the results resized into and copied to the given tensors.
std::tuple<at::Tensor&, at::Tensor&> copy_outs(const std::tuple<at::Tensor, at::Tensor>& r, at::Tensor& output,
                                               at::Tensor& total_weight) {
  at::native::resize_output(output, std::get<0>(r).sizes());
  output.copy_(std::get<0>(r));
  at::native::resize_output(total_weight, std::get<1>(r).sizes());
  total_weight.copy_(std::get<1>(r));
  return std::forward_as_tuple(output, total_weight);
}

std::tuple<at::Tensor, at::Tensor> wg_nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                       const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                                                       int64_t ignore_index) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor());
  structured::FunctionalOuts<at::meta::structured_nll_loss_forward, 2> op;
  op.meta(self, target, weight.defined() ? at::OptionalTensorRef(weight) : at::OptionalTensorRef(), reduction,
          ignore_index);
  const Nll g = nll_geometry(self);
  auto [out, total] = nll_forward(self, target, weight, reduction, ignore_index, g, op.outs[0].sizes());
  op.outs[0].copy_(out.view(op.outs[0].sizes()));
  op.outs[1].copy_(total);
  return {op.outs[0], op.outs[1]};
}

std::tuple<at::Tensor&, at::Tensor&> wg_nll_loss_forward_out(const at::Tensor& self, const at::Tensor& target,
                                                             const std::optional<at::Tensor>& weight, int64_t reduction,
                                                             int64_t ignore_index, at::Tensor& output,
                                                             at::Tensor& total_weight) {
  return copy_outs(wg_nll_loss_forward(self, target, weight, reduction, ignore_index), output, total_weight);
}

at::Tensor wg_nll_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight_opt, int64_t reduction, int64_t ignore_index,
                                const at::Tensor& total_weight) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor());
  structured::FunctionalOuts<at::meta::structured_nll_loss_backward, 1> op;
  op.meta(grad, self, target, weight.defined() ? at::OptionalTensorRef(weight) : at::OptionalTensorRef(), reduction,
          ignore_index, total_weight);
  nll_backward(grad, self, target, weight, reduction, ignore_index, total_weight, nll_geometry(self), op.outs[0]);
  return op.outs[0];
}

at::Tensor& wg_nll_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                     const at::Tensor& total_weight, at::Tensor& grad_input) {
  at::Tensor r = wg_nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight);
  at::native::resize_output(grad_input, r.sizes());
  grad_input.copy_(r);
  return grad_input;
}

void check_nll2d(const at::Tensor& self, const at::Tensor& target, const at::Tensor& weight) {
  TORCH_CHECK(target.dim() == 3,
              "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  TORCH_CHECK(self.dim() == 4,
              "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  TORCH_CHECK(!weight.defined() || weight.numel() == self.size(1),
              "weight tensor should be defined either for all or no classes");
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
              "input and target batch or spatial sizes don't match: target ", target.sizes(), ", input ", self.sizes());
  TORCH_CHECK(target.scalar_type() == at::kLong || target.scalar_type() == at::kByte,
              "expected scalar type Long but found ", target.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> wg_nll_loss2d_forward(const at::Tensor& self, const at::Tensor& target,
                                                         const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                                                         int64_t ignore_index) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor());
  check_nll2d(self, target, weight);
  return nll_forward(self, target.to(at::kLong), weight, reduction, ignore_index, nll_geometry(self), target.sizes());
}

std::tuple<at::Tensor&, at::Tensor&> wg_nll_loss2d_forward_out(const at::Tensor& self, const at::Tensor& target,
                                                               const std::optional<at::Tensor>& weight,
                                                               int64_t reduction, int64_t ignore_index,
                                                               at::Tensor& output, at::Tensor& total_weight) {
  return copy_outs(wg_nll_loss2d_forward(self, target, weight, reduction, ignore_index), output, total_weight);
}

at::Tensor& wg_nll_loss2d_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                       const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                                       int64_t ignore_index, const at::Tensor& total_weight, at::Tensor& grad_input) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor());
  check_nll2d(self, target, weight);
  at::native::resize_output(grad_input, self.sizes());
  nll_backward(grad, self, target.to(at::kLong), weight, reduction, ignore_index, total_weight, nll_geometry(self),
               grad_input);
  return grad_input;
}

at::Tensor wg_nll_loss2d_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                  const at::Tensor& total_weight) {
  at::Tensor gi = at::empty(self.sizes(), self.options());
  return wg_nll_loss2d_backward_out(grad, self, target, weight, reduction, ignore_index, total_weight, gi);
}

// The DispatchStubs ATen's kernels call, pointed at the kernels above.
WEBGPU_STUB(mse_stub, &mse_kernel)
WEBGPU_STUB(smooth_l1_stub, &smooth_l1_kernel)
WEBGPU_STUB(huber_stub, &huber_kernel)
WEBGPU_STUB(mse_backward_stub, &mse_backward_kernel)
WEBGPU_STUB(smooth_l1_backward_stub, &smooth_l1_backward_kernel)
WEBGPU_STUB(huber_backward_stub, &huber_backward_kernel)

namespace s = structured;
using T = const at::Tensor&;

WEBGPU_LIBRARY_IMPL(m) {
  s::reg<at::native::structured_mse_loss_out, T, T, int64_t>(m, "mse_loss", "mse_loss.out", nullptr);
  s::reg<at::native::structured_smooth_l1_loss_out, T, T, int64_t, double>(m, "smooth_l1_loss", "smooth_l1_loss.out",
                                                                           nullptr);
  WEBGPU_IMPL_OUT(m, "mse_loss_backward", "grad_input", at::native::mse_loss_backward);
  m.impl("smooth_l1_loss_backward.grad_input", TORCH_FN(at::native::smooth_l1_loss_backward_out));
  WEBGPU_IMPL_OUT(m, "huber_loss", "out", at::native::huber_loss);
  m.impl("huber_loss_backward.out", TORCH_FN(at::native::huber_loss_backward_out));
  WEBGPU_IMPL_OUT(m, "binary_cross_entropy", "out", bce);
  WEBGPU_IMPL_OUT(m, "binary_cross_entropy_backward", "grad_input", bce_backward);
  WEBGPU_IMPL_OUT(m, "nll_loss_forward", "output", wg_nll_loss_forward);
  WEBGPU_IMPL_OUT(m, "nll_loss_backward", "grad_input", wg_nll_loss_backward);
  WEBGPU_IMPL_OUT(m, "nll_loss2d_forward", "output", wg_nll_loss2d_forward);
  WEBGPU_IMPL_OUT(m, "nll_loss2d_backward", "grad_input", wg_nll_loss2d_backward);
}

}  // namespace
}  // namespace webgpu::ops
