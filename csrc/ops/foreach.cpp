// Optimiser kernels: _fused_adam_ / _fused_adamw_ / _fused_sgd_ (lr as a float or a tensor, amsgrad,
// maximize, grad_scale / found_inf read on the device, no synchronisation), one dispatch per
// parameter doing the whole update; and _foreach_norm (one partial-reduction dispatch per tensor,
// one dispatch finishing every tensor). The multi-tensor pointwise _foreach_* ops (one dispatch per
// chunk of tensors) are in foreach_pointwise.cpp.
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include <cmath>
#include <sstream>

#include "kernel/device.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using OptT = const std::optional<at::Tensor>&;

// The small per-call values (lr, grad_scale, found_inf) gathered into one float32 device tensor,
// so a parameter's dispatch binds few buffers: [lr, grad_scale, found_inf]. Copies stay on the device.
at::Tensor aux_values(const at::Tensor& like, double lr, const std::optional<at::Tensor>& lr_t, OptT grad_scale,
                      OptT found_inf) {
  at::Tensor aux = at::empty({3}, like.options().dtype(at::kFloat));
  aux.fill_(lr);  // slots 1, 2 become 1 and 0 below when absent
  if (lr_t.has_value()) aux.narrow(0, 0, 1).copy_(lr_t->reshape({1}));
  if (grad_scale.has_value() && grad_scale->defined())
    aux.narrow(0, 1, 1).copy_(grad_scale->reshape({1}));
  else
    aux.narrow(0, 1, 1).fill_(1.0);
  if (found_inf.has_value() && found_inf->defined())
    aux.narrow(0, 2, 1).copy_(found_inf->reshape({1}));
  else
    aux.narrow(0, 2, 1).fill_(0.0);
  return aux;
}

void check_list(at::TensorList a, at::TensorList b, const char* what, const char* op) {
  TORCH_CHECK(a.size() == b.size(), op, ": ", what, " must have the same number of tensors as params (", b.size(),
              " vs ", a.size(), ")");
  for (size_t i = 0; i < a.size(); ++i)
    TORCH_CHECK(a[i].sizes() == b[i].sizes(), op, ": ", what, "[", i, "] has shape ", b[i].sizes(), ", expected ",
                a[i].sizes());
}

// Runs `body` over tensor i's group of same-shaped tensors; non-contiguous members go through
// contiguous copies that are written back.
struct Group {
  std::vector<at::Tensor> orig, work;
  void add(const at::Tensor& t) {
    orig.push_back(t);
    work.push_back(t.is_contiguous() ? t : t.contiguous());
  }
  void finish(const std::vector<bool>& written) {
    for (size_t i = 0; i < orig.size(); ++i)
      if (written[i] && !work[i].is_same(orig[i])) orig[i].copy_(work[i]);
  }
};

// The frame the fused optimisers share: for each non-empty param (floating point, else raises), the
// Group of its param, grad and the `states` lists' tensors, and a Kernel binding them in that order
// (the grad written back when unscaled by grad_scale) with their offsets as parameters p_off, g_off,
// then `state_names`; body(k, i, n) binds the rest and launches over n elements. A group larger than
// one binding runs in flat parts that fit (docs/design.md, "Operands past the binding limit").
// `written` (per Group member) says which members the kernel stores to.
template <class Body>
void for_each_param(const char* op, at::TensorList params, at::TensorList grads,
                    const std::vector<at::TensorList>& states, const std::vector<const char*>& state_names,
                    const std::string& key, bool has_scale, const std::vector<bool>& written, Body body) {
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t n = params[i].numel();
    if (n == 0) continue;
    TORCH_CHECK(is_float(params[i].scalar_type()), op, ": params must be floating point, got ",
                params[i].scalar_type());
    Group g;
    g.add(params[i]);
    g.add(grads[i]);
    for (at::TensorList l : states) g.add(l[i]);
    int64_t part = n;
    for (const at::Tensor& w : g.work)
      if (!kernel::block_fits(w))
        part = std::min<int64_t>(part, int64_t(kernel::device_info(w).max_binding / 2) / int64_t(w.element_size()));
    for (int64_t s0 = 0; s0 < n; s0 += part) {
      const int64_t len = std::min(part, n - s0);
      std::vector<at::Tensor> w;
      for (const at::Tensor& t : g.work) w.push_back(part == n ? t : t.view({-1}).narrow(0, s0, len));
      Kernel k(key);
      k.out(w[0], CT::F32);
      if (has_scale)
        k.out(w[1], CT::F32);
      else
        k.in(w[1], CT::F32);
      for (size_t j = 2; j < w.size(); ++j) k.out(w[j], CT::F32);
      k.param_index("n", len);
      k.param_index("p_off", w[0].storage_offset());
      k.param_index("g_off", w[1].storage_offset());
      for (size_t j = 2; j < w.size(); ++j) k.param_index(state_names[j - 2], w[j].storage_offset());
      body(k, i, len);
    }
    g.finish(written);
  }
}

// The WGSL every fused optimiser starts with (operand A: the aux values at P.aux_off): the bounds and
// found_inf checks, lr, the param p (a var when `p_var`) and its grad g, unscaled (and stored back)
// and negated as asked.
std::string grad_prologue(int aux, bool has_scale, bool maximize, bool p_var) {
  const std::string A = std::to_string(aux);
  std::string s = kernel::library("per_element") + "fn run(i: u32) {\n" + "  if (ld" + A +
                  "(P.aux_off + 2u) == 1.0) { return; }\n" + "  let lr = ld" + A + "(P.aux_off);\n" +
                  (p_var ? "  var p" : "  let p") + " = ld0(P.p_off + i);\n" + "  var g = ld1(P.g_off + i);\n";
  if (has_scale) s += "  g = g / ld" + A + "(P.aux_off + 1u);\n  st1(P.g_off + i, g);\n";
  if (maximize) s += "  g = -g;\n";
  return s;
}

enum class AdamMode { Adam, AdamW };

void fused_adam_impl(AdamMode mode, at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                     at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList steps, double lr,
                     const std::optional<at::Tensor>& lr_t, double beta1, double beta2, double weight_decay, double eps,
                     bool amsgrad, bool maximize, OptT grad_scale, OptT found_inf) {
  const char* op = mode == AdamMode::Adam ? "_fused_adam_" : "_fused_adamw_";
  if (params.empty()) return;
  check_list(params, grads, "grads", op);
  check_list(params, exp_avgs, "exp_avgs", op);
  check_list(params, exp_avg_sqs, "exp_avg_sqs", op);
  if (amsgrad)
    check_list(params, max_exp_avg_sqs, "max_exp_avg_sqs", op);
  else
    TORCH_CHECK(max_exp_avg_sqs.empty(), op, ": max_exp_avg_sqs must be empty when amsgrad is False");
  TORCH_CHECK(steps.size() == params.size(), op, ": state_steps must have one tensor per param");
  const bool has_scale = grad_scale.has_value() && grad_scale->defined();
  at::Tensor aux = aux_values(params[0], lr, lr_t, grad_scale, found_inf);
  std::vector<at::TensorList> states = {exp_avgs, exp_avg_sqs};
  std::vector<const char*> names = {"m_off", "v_off"};
  if (amsgrad) {
    states.push_back(max_exp_avg_sqs);
    names.push_back("mx_off");
  }
  const std::string key = std::string("fused_adam:") + (mode == AdamMode::AdamW ? "w" : "a") + (amsgrad ? "m" : "") +
                          (maximize ? "x" : "") + (has_scale ? "s" : "");
  for_each_param(
      op, params, grads, states, names, key, has_scale, {true, has_scale, true, true, amsgrad},
      [&](Kernel& k, size_t i, int64_t n) {
        at::Tensor step = steps[i].to(params[i].device());
        const int si = k.in(step, CT::F32);
        const int ai = k.in(aux, CT::F32);
        k.param_index("step_off", step.storage_offset());
        k.param_index("aux_off", aux.storage_offset());
        k.param_f32("beta1", float(beta1));
        k.param_f32("beta2", float(beta2));
        k.param_f32("wd", float(weight_decay));
        k.param_f32("eps", float(eps));
        // 1 - beta^step = -expm1(step * log(beta)), accurate.
        k.param_f32("log_beta1", float(std::log(beta1)));
        k.param_f32("log_beta2", float(std::log(beta2)));
        k.launch(grid(n), [&] {
          const std::string S = std::to_string(si);
          std::ostringstream s;
          s << "fn expm1f(x: f32) -> f32 {\n"
               "  if (abs(x) < 0.01) { return x * (1.0 + x * (0.5 + x * (0.16666667 + x * 0.041666668))); }\n"
               "  return exp(x) - 1.0;\n}\n";
          s << grad_prologue(ai, has_scale, maximize, true) << "  let beta1 = P.beta1; let beta2 = P.beta2;\n"
            << "  let wd = P.wd; let eps = P.eps;\n";
          if (mode == AdamMode::Adam)
            s << "  if (wd != 0.0) { g = g + wd * p; }\n";
          else
            s << "  if (wd != 0.0) { p = p - lr * wd * p; }\n";
          s << "  let m = beta1 * ld2(P.m_off + i) + (1.0 - beta1) * g;\n"
            << "  let v = beta2 * ld3(P.v_off + i) + (1.0 - beta2) * g * g;\n"
            << "  st2(P.m_off + i, m);\n  st3(P.v_off + i, v);\n"
            << "  let step = ld" << S << "(P.step_off);\n"
            << "  let bc1 = select(-expm1f(step * P.log_beta1), 1.0, beta1 == 0.0);\n"
            << "  let bc2s = sqrt(select(-expm1f(step * P.log_beta2), 1.0, beta2 == 0.0));\n";
          if (amsgrad)
            s << "  let mx = max(ld4(P.mx_off + i), v);\n  st4(P.mx_off + i, mx);\n"
              << "  let denom = sqrt(mx) / bc2s + eps;\n";
          else
            s << "  let denom = sqrt(v) / bc2s + eps;\n";
          s << "  st0(P.p_off + i, p - (lr / bc1) * m / denom);\n}\n";
          return s.str();
        });
      });
}

#define WEBGPU_ADAM_FNS(NAME, MODE)                                                                                  \
  void NAME(at::TensorList p, at::TensorList g, at::TensorList m, at::TensorList v, at::TensorList mx,               \
            at::TensorList st, double lr, double b1, double b2, double wd, double eps, bool ams, bool maxi, OptT gs, \
            OptT fi) {                                                                                               \
    fused_adam_impl(MODE, p, g, m, v, mx, st, lr, std::nullopt, b1, b2, wd, eps, ams, maxi, gs, fi);                 \
  }                                                                                                                  \
  void NAME##_tensor_lr(at::TensorList p, at::TensorList g, at::TensorList m, at::TensorList v, at::TensorList mx,   \
                        at::TensorList st, const at::Tensor& lr, double b1, double b2, double wd, double eps,        \
                        bool ams, bool maxi, OptT gs, OptT fi) {                                                     \
    if (lr.device().is_cpu())                                                                                        \
      return fused_adam_impl(MODE, p, g, m, v, mx, st, lr.item<double>(), std::nullopt, b1, b2, wd, eps, ams, maxi,  \
                             gs, fi);                                                                                \
    fused_adam_impl(MODE, p, g, m, v, mx, st, 0.0, lr, b1, b2, wd, eps, ams, maxi, gs, fi);                          \
  }
WEBGPU_ADAM_FNS(fused_adam, AdamMode::Adam)
WEBGPU_ADAM_FNS(fused_adamw, AdamMode::AdamW)
#undef WEBGPU_ADAM_FNS

void fused_sgd_impl(at::TensorList params, at::TensorList grads, at::TensorList bufs, double weight_decay,
                    double momentum, double lr, const std::optional<at::Tensor>& lr_t, double dampening, bool nesterov,
                    bool maximize, bool is_first_step, OptT grad_scale, OptT found_inf) {
  const char* op = "_fused_sgd_";
  if (params.empty()) return;
  check_list(params, grads, "grads", op);
  const bool use_buf = momentum != 0;
  if (use_buf) check_list(params, bufs, "momentum_buffer_list", op);
  const bool has_scale = grad_scale.has_value() && grad_scale->defined();
  at::Tensor aux = aux_values(params[0], lr, lr_t, grad_scale, found_inf);
  std::vector<at::TensorList> states;
  std::vector<const char*> names;
  if (use_buf) {
    states.push_back(bufs);
    names.push_back("buf_off");
  }
  const std::string key = std::string("fused_sgd:") + (use_buf ? "b" : "") + (nesterov ? "n" : "") +
                          (maximize ? "x" : "") + (has_scale ? "s" : "") + (is_first_step ? "f" : "");
  for_each_param(op, params, grads, states, names, key, has_scale, {true, has_scale, use_buf},
                 [&](Kernel& k, size_t, int64_t n) {
                   const int ai = k.in(aux, CT::F32);
                   k.param_index("aux_off", aux.storage_offset());
                   k.param_f32("wd", float(weight_decay));
                   k.param_f32("mom", float(momentum));
                   k.param_f32("damp", float(dampening));
                   k.launch(grid(n), [&] {
                     std::ostringstream s;
                     s << grad_prologue(ai, has_scale, maximize, false)
                       << "  let wd = P.wd; let mom = P.mom; let damp = P.damp;\n";
                     s << "  if (wd != 0.0) { g = g + wd * p; }\n";
                     if (use_buf) {
                       if (is_first_step)
                         s << "  let buf = g;\n";
                       else
                         s << "  let buf = mom * ld2(P.buf_off + i) + (1.0 - damp) * g;\n";
                       s << "  st2(P.buf_off + i, buf);\n";
                       s << (nesterov ? "  g = g + mom * buf;\n" : "  g = buf;\n");
                     }
                     s << "  st0(P.p_off + i, p - lr * g);\n}\n";
                     return s.str();
                   });
                 });
}

void fused_sgd(at::TensorList p, at::TensorList g, at::TensorList b, double wd, double mom, double lr, double damp,
               bool nesterov, bool maxi, bool first, OptT gs, OptT fi) {
  fused_sgd_impl(p, g, b, wd, mom, lr, std::nullopt, damp, nesterov, maxi, first, gs, fi);
}
void fused_sgd_tensor_lr(at::TensorList p, at::TensorList g, at::TensorList b, double wd, double mom,
                         const at::Tensor& lr, double damp, bool nesterov, bool maxi, bool first, OptT gs, OptT fi) {
  if (lr.device().is_cpu())
    return fused_sgd_impl(p, g, b, wd, mom, lr.item<double>(), std::nullopt, damp, nesterov, maxi, first, gs, fi);
  fused_sgd_impl(p, g, b, wd, mom, 0.0, lr, damp, nesterov, maxi, first, gs, fi);
}

// ---- _foreach_norm ----

constexpr uint32_t kSlots = 256;  // partial results per tensor (stage 1 workgroups)

std::vector<at::Tensor> foreach_norm(at::TensorList self, const at::Scalar& ord_s,
                                     std::optional<at::ScalarType> dtype) {
  const double ord = ord_s.toDouble();
  std::vector<at::Tensor> result;
  result.reserve(self.size());
  const bool native = ord == 2.0 || ord == 1.0 || std::isinf(ord) || ord == 0.0;
  bool ok = native && !self.empty();
  for (const at::Tensor& t : self)
    ok = ok && t.device().type() == c10::DeviceType::PrivateUse1 && is_float(t.scalar_type()) &&
         (t.numel() == 0 || kernel::fits_binding(t)) && t.device() == self[0].device() && (!dtype || is_float(*dtype));
  if (!ok) {
    for (const at::Tensor& t : self) result.push_back(at::linalg_vector_norm(t, ord_s, {}, false, dtype));
    return result;
  }
  // 0: count of non-zeros, 1: sum |x|, 2: sum x^2 (then sqrt), 3: max |x|, 4: min |x|.
  const uint32_t mode = ord == 0.0 ? 0u : ord == 1.0 ? 1u : ord == 2.0 ? 2u : ord > 0 ? 3u : 4u;
  const int64_t T = int64_t(self.size());
  at::Tensor scratch = at::empty({T * int64_t(kSlots)}, self[0].options().dtype(at::kFloat));
  const char* combine = mode == 3 ? "max(a, b)" : mode == 4 ? "min(a, b)" : "a + b";
  const char* elem = mode == 0   ? "select(0.0, 1.0, (bitcast<u32>(x) & 0x7fffffffu) != 0u)"
                     : mode == 2 ? "x * x"
                                 : "abs(x)";
  const char* ident = mode == 4 ? "ident_inf()" : "0.0";
  // NaN propagates through max/min: WGSL's max(NaN, x) need not, so NaN is checked explicitly.
  const std::string nan_check = mode >= 3 ? "if (nanbits(a) || nanbits(b)) { return select(b, a, nanbits(a)); } " : "";
  const std::string fns =
      std::string("fn nanbits(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }\n") +
      "fn ident_inf() -> f32 { var b = 0x7f800000u; return bitcast<f32>(b); }\n" + "fn comb(a: f32, b: f32) -> f32 { " +
      nan_check + "return " + combine + "; }\n" + "fn el(x: f32) -> f32 { return " + elem + "; }\n" +
      "fn ident() -> f32 { return " + ident + "; }\n";
  const std::string reduce =
      "  sh[lid] = acc;\n  workgroupBarrier();\n"
      "  for (var d = 128u; d > 0u; d = d / 2u) {\n"
      "    if (lid < d) { sh[lid] = comb(sh[lid], sh[lid + d]); }\n"
      "    workgroupBarrier();\n  }\n";
  std::vector<at::Tensor> inputs;
  for (int64_t t = 0; t < T; ++t) {
    at::Tensor x = self[t].is_contiguous() ? self[t] : self[t].contiguous();
    if (x.numel() == 0) {
      TORCH_CHECK(mode < 3,
                  "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
                  "operation does not have an identity");
      scratch.narrow(0, t * kSlots, kSlots).fill_(mode == 4 ? INFINITY : 0.0);
      continue;
    }
    Kernel k("foreach_norm1:" + std::to_string(mode));
    k.in(x, CT::F32);
    k.out(scratch, CT::F32);
    k.param_index("n", x.numel());
    k.param_index("x_off", x.storage_offset());
    k.param("slot", uint32_t(t * kSlots));  // the tensor's first partial in scratch
    // As many workgroups as the tensor fills (4 elements a thread at least), at most kSlots; the
    // unused slots get the identity from workgroup 0.
    const uint32_t groups = uint32_t(std::min<int64_t>(kSlots, (x.numel() + 1023) / 1024));
    k.param("groups", groups);
    k.launch(groups, [&] {
      std::ostringstream s;
      s << fns << "var<workgroup> sh: array<f32, 256>;\n"
        << "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
           " @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
           "  let g = linear_id(wid, nwg, 0u, 1u);\n"
           "  let n = P.n;\n"
           "  let groups = P.groups;\n"
           "  if (g == 0u && lid >= groups) { st1(P.slot + lid, ident()); }\n"
           "  var acc = ident();\n"
           "  for (var i = g * 256u + lid; i < n; i = i + groups * 256u) { acc = comb(acc, el(ld0(P.x_off + i))); }\n"
        << reduce << "  if (lid == 0u) { st1(P.slot + g, sh[0]); }\n}\n";
      return s.str();
    });
  }
  at::Tensor out = at::empty({T}, scratch.options());
  Kernel k("foreach_norm2:" + std::to_string(mode));
  k.in(scratch, CT::F32);
  k.out(out, CT::F32);
  k.launch(uint64_t(T), [&] {
    std::ostringstream s;
    s << fns << "var<workgroup> sh: array<f32, 256>;\n"
      << "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
         " @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
         "  let t = linear_id(wid, nwg, 0u, 1u);\n"
         "  var acc = ld0(t * 256u + lid);\n"
      << reduce << "  if (lid == 0u) { st1(t, " << (mode == 2 ? "sqrt(sh[0])" : "sh[0]") << "); }\n}\n";
    return s.str();
  });
  for (int64_t t = 0; t < T; ++t) {
    const at::ScalarType dt = dtype.value_or(self[t].scalar_type());
    at::Tensor r = out.select(0, t);
    result.push_back(dt == at::kFloat ? r : r.to(dt));
  }
  return result;
}

// _foreach_pow(Scalar, Tensor[]) (capturable Adam's bias corrections): ATen's composite goes
// through pow.Scalar, which wraps the base as a float64 device tensor; here the base is a 0-dim tensor
// of the result dtype.
std::vector<at::Tensor> foreach_pow_scalar_tensor(const at::Scalar& base, at::TensorList exps) {
  std::vector<at::Tensor> out;
  out.reserve(exps.size());
  for (const at::Tensor& e : exps) {
    const at::ScalarType dt = at::result_type(base, e);
    out.push_back(at::pow(at::scalar_tensor(base, e.options().dtype(dt)), e));
  }
  return out;
}

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("_foreach_pow.ScalarAndTensor", TORCH_FN(foreach_pow_scalar_tensor));
  m.impl("_fused_adam_", TORCH_FN(fused_adam));
  m.impl("_fused_adam_.tensor_lr", TORCH_FN(fused_adam_tensor_lr));
  m.impl("_fused_adamw_", TORCH_FN(fused_adamw));
  m.impl("_fused_adamw_.tensor_lr", TORCH_FN(fused_adamw_tensor_lr));
  m.impl("_fused_sgd_", TORCH_FN(fused_sgd));
  m.impl("_fused_sgd_.tensor_lr", TORCH_FN(fused_sgd_tensor_lr));
  m.impl("_foreach_norm.Scalar", TORCH_FN(foreach_norm));
}

}  // namespace
}  // namespace webgpu::ops
