// softmax and log_softmax, forward and backward, over any dim. ATen's structured meta functions do
// the dim wrapping, dtype and out= checks; the kernels view the (contiguous) operand as
// [outer, D, inner]. inner == 1: a workgroup per row (ops/rows.h; rows of any length, coalesced).
// inner > 1: an invocation per (outer, inner) column, so the neighbouring invocations read
// neighbouring elements. Half types compute in f32.
#include <ATen/ATen.h>
#include <ATen/ops/_log_softmax_backward_data_meta.h>
#include <ATen/ops/_log_softmax_meta.h>
#include <ATen/ops/_softmax_backward_data_meta.h>
#include <ATen/ops/_softmax_meta.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/float64.h"
#include "kernel/kernel.h"
#include "ops/rows.h"
#include "ops/structured.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

struct Geometry {
  int64_t outer = 1, d = 1, inner = 1;
};

Geometry geometry(const at::Tensor& t, int64_t dim) {
  Geometry g;
  if (t.dim() == 0) return g;
  for (int64_t i = 0; i < dim; ++i) g.outer *= t.size(i);
  g.d = t.size(dim);
  for (int64_t i = dim + 1; i < t.dim(); ++i) g.inner *= t.size(i);
  return g;
}

void check_float(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      t.scalar_type() == at::kFloat || t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16, "\"", op,
      "\" not implemented for '", c10::toString(t.scalar_type()), "' on webgpu");
}

// The kernel-key name of each mode (launch()'s `mode`: 0 softmax, 1 log_softmax, 2 and 3 their backward).
constexpr const char* kModeNames[] = {"softmax", "log_softmax", "softmax_backward", "log_softmax_backward"};

// The column kernel (inner > 1): an invocation per (outer, inner) column, one online max/sum pass
// over the column then the write pass.
void launch_columns(int mode, const std::vector<at::Tensor>& ins, const at::Tensor& out, const Geometry& g) {
  const int64_t cols = g.outer * g.inner;
  const int wg = 256;
  Kernel k(std::string("nn:") + kModeNames[mode] + ":s");
  for (const auto& t : ins) k.in(t, CT::F32);
  const int o = k.out(out, CT::F32);
  k.param_index("rows", cols);
  k.param_index("D", g.d);  // the softmax dim's size
  k.param_index("inner", g.inner);  // elements after it
  k.param_index("x_off", ins[0].storage_offset());  // input (forward) or grad_output (backward)
  if (ins.size() > 1) k.param_index("y_off", ins[1].storage_offset());  // the forward's output
  k.param_index("out_off", out.storage_offset());
  k.launch(grid(uint64_t(cols), uint32_t(wg)), [&] {
    const std::string W = std::to_string(wg), O = std::to_string(o);
    std::string s = "const WG: u32 = " + W + "u;\n" + kernel::section("softmax", "columns");
    std::string body =
        "  let t = linear_id(wid, nwg, lid, WG);\n"
        "  if (t >= P.rows) { return; }\n"
        "  let D = P.D; let inner = P.inner;\n"
        "  let base = (t / inner) * D * inner + t % inner;\n";
    const std::string loop = "  for (var j = 0u; j < D; j = j + 1u) {\n    let e = base + j * inner;\n";
    if (mode <= 1) {
      body += "  var r = MS(ninf(), 0.0);\n" + loop + "    r = ms_add(r, ld0(P.x_off + e));\n  }\n";
      if (mode == 0)
        body += "  let inv = 1.0 / r.s;\n" + loop + "    st" + O +
                "(P.out_off + e, exp(ld0(P.x_off + e) - r.m) * inv);\n  }\n";
      else
        body +=
            "  let lse = r.m + log(r.s);\n" + loop + "    st" + O + "(P.out_off + e, ld0(P.x_off + e) - lse);\n  }\n";
    } else {
      const std::string term = mode == 2 ? "ld0(P.x_off + e) * ld1(P.y_off + e)" : "ld0(P.x_off + e)";
      body += "  var sum = 0.0;\n" + loop + "    sum = sum + " + term + ";\n  }\n";
      const std::string val =
          mode == 2 ? "ld1(P.y_off + e) * (ld0(P.x_off + e) - sum)" : "ld0(P.x_off + e) - exp(ld1(P.y_off + e)) * sum";
      body += loop + "    st" + O + "(P.out_off + e, " + val + ");\n  }\n";
    }
    return s + "@compute @workgroup_size(" + W +
           ") fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,"
           " @builtin(local_invocation_index) lid: u32) {\n" +
           body + "}\n";
  });
}

// The row kernel (inner == 1, ops/rows.h): a workgroup per row. Cached rows: the max, the sum of
// exponentials and the write, from registers (CPU's order of operations: x - max, exp, sum, times
// 1 / sum; log_softmax x - (max + log sum)). Streaming rows: one online max/sum pass, then the write.
// Backward: the row sum (of grad * output, or of grad), then the write.
void launch_rows(int mode, const std::vector<at::Tensor>& ins, const at::Tensor& out, const Geometry& g) {
  const RowPlan plan = row_plan(out, g.d);
  Kernel k(std::string("nn:") + kModeNames[mode] + ":r" + row_key(plan));
  for (const auto& t : ins) k.in(t, CT::F32);
  const int o = k.out(out, CT::F32);
  k.param_index("rows", g.outer);
  k.param_index("D", g.d);
  k.param_index("x_off", ins[0].storage_offset());  // input (forward) or grad_output (backward)
  if (ins.size() > 1) k.param_index("y_off", ins[1].storage_offset());  // the forward's output
  k.param_index("out_off", out.storage_offset());
  k.launch(uint64_t(g.outer), [&] {
    const bool c = plan.cache > 0;
    const std::string O = std::to_string(o);
    auto loop = [&](const std::string& body) { return row_loop(plan, "D", "      let e = base + j;\n" + body); };
    // An operand's value at j: its register in later passes of a cached row, else a load.
    auto x = [&] { return c ? std::string("xs[i]") : std::string("ld0(P.x_off + e)"); };
    auto y = [&] { return c ? std::string("ys[i]") : std::string("ld1(P.y_off + e)"); };
    std::string body = "  let D = P.D;\n  let base = row * D;\n";
    if (mode <= 1 && c) {
      body += "  var xs: array<f32, C>;\n  var m = ninf();\n" +
              loop("      let v = ld0(P.x_off + e);\n      xs[i] = v;\n      m = max(m, v);\n") +
              "  m = wg_max(lid, m);\n  var a = 0.0;\n";
      if (mode == 0)
        // exp again in the write pass: writing the exponentials back into xs ran slower (H200).
        body += loop("      a = a + exp(xs[i] - m);\n") + "  let inv = 1.0 / wg_sum(lid, a);\n" +
                loop("      st" + O + "(P.out_off + e, exp(xs[i] - m) * inv);\n");
      else
        body += loop("      a = a + exp(xs[i] - m);\n") + "  let lse = m + log(wg_sum(lid, a));\n" +
                loop("      st" + O + "(P.out_off + e, xs[i] - lse);\n");
    } else if (mode <= 1) {
      body += "  var a = MS(ninf(), 0.0);\n" + loop("      a = ms_add(a, ld0(P.x_off + e));\n") +
              "  let r = wg_ms(lid, a);\n";
      if (mode == 0)
        body +=
            "  let inv = 1.0 / r.s;\n" + loop("      st" + O + "(P.out_off + e, exp(ld0(P.x_off + e) - r.m) * inv);\n");
      else
        body += "  let lse = r.m + log(r.s);\n" + loop("      st" + O + "(P.out_off + e, ld0(P.x_off + e) - lse);\n");
    } else {
      if (c) body += "  var xs: array<f32, C>;\n  var ys: array<f32, C>;\n";
      const std::string first = c ? "      xs[i] = ld0(P.x_off + e);\n      ys[i] = ld1(P.y_off + e);\n" : "";
      body += "  var a = 0.0;\n" + loop(first + "      a = a + " + (mode == 2 ? x() + " * " + y() : x()) + ";\n") +
              "  let sum = wg_sum(lid, a);\n";
      const std::string val = mode == 2 ? y() + " * (" + x() + " - sum)" : x() + " - exp(" + y() + ") * sum";
      body += loop("      st" + O + "(P.out_off + e, " + val + ");\n");
    }
    return row_kernel_head(plan, kernel::section("softmax", "rows")) + body + "}\n";
  });
}

// mode: 0 softmax, 1 log_softmax, 2 softmax backward, 3 log_softmax backward.
// Operands: forward (x, out); backward (grad, output, out).
// Operands past the binding limit go in slices of whole outer indices (ops/rows.h).
void launch(int mode, const std::vector<at::Tensor>& ins, const at::Tensor& out, const Geometry& g) {
  if (g.outer * g.inner == 0 || g.d == 0) return;
  const int64_t slab = g.d * g.inner;
  const at::Tensor* y = ins.size() > 1 ? &ins[1] : nullptr;
  int64_t width = out.element_size();
  for (const auto& t : ins) width = std::max<int64_t>(width, t.element_size());
  if (g.inner > 1 && past_binding_limit({{&ins[0], slab}, {y, slab}, {&out, slab}}) &&
      uint64_t(slab * width) > binding_budget(kernel::device_info(out))) {
    // One outer index's slab past the limit: its columns interleave through all of it, so the softmax
    // dim goes last (copies, which split) and the row kernel runs in slices of rows.
    std::vector<at::Tensor> t;
    for (const auto& x : ins) t.push_back(x.view({g.outer, g.d, g.inner}).transpose(1, 2).contiguous());
    at::Tensor o = at::empty({g.outer, g.inner, g.d}, out.options());
    launch(mode, t, o, Geometry{g.outer * g.inner, g.d, 1});
    out.view({g.outer, g.d, g.inner}).copy_(o.transpose(1, 2));
    return;
  }
  const int64_t per = rows_per_launch({{&ins[0], slab}, {y, slab}, {&out, slab}}, g.outer, kModeNames[mode]);
  auto one = [&](const std::vector<at::Tensor>& i, const at::Tensor& o, const Geometry& s) {
    if (s.inner > 1)
      launch_columns(mode, i, o, s);
    else
      launch_rows(mode, i, o, s);
  };
  if (per >= g.outer) return one(ins, out, g);
  for (int64_t r0 = 0; r0 < g.outer; r0 += per) {
    const int64_t n = std::min(per, g.outer - r0);
    std::vector<at::Tensor> part;
    for (const auto& t : ins) part.push_back(row_slice(t, slab, r0, n));
    one(part, row_slice(out, slab, r0, n), Geometry{n, g.d, g.inner});
  }
}

// Runs `mode` writing `result` (any strides): contiguous operands, a contiguous temporary when
// result is not contiguous.
void run(int mode, std::vector<at::Tensor> ins, int64_t dim, const at::Tensor& result) {
  if (result.numel() == 0) return;
  const int64_t d = ins[0].dim() == 0 ? 0 : c10::maybe_wrap_dim(dim, ins[0].dim());
  for (auto& t : ins) t = t.contiguous();
  const Geometry g = geometry(ins[0], d);
  if (result.is_contiguous()) {
    launch(mode, ins, result, g);
  } else {
    at::Tensor tmp = at::empty(result.sizes(), result.options());
    launch(mode, ins, tmp, g);
    result.copy_(tmp);
  }
}

// float64 (no kernel of its own): CPU's formulas over the device's float64 ops (amax, sub, exp, sum,
// log, mul are native), by run()'s mode. softmax: e^(x - max) times 1 / sum; log_softmax:
// (x - max) - log(sum); their backward: out (g - sum(g out)) and g - e^out sum(g).
void run_float64(int mode, const std::vector<at::Tensor>& ins, int64_t dim, const at::Tensor& result) {
  const int64_t d = ins[0].dim() == 0 ? 0 : c10::maybe_wrap_dim(dim, ins[0].dim());
  at::Tensor r;
  if (mode < 2) {
    const at::Tensor shifted = ins[0] - at::amax(ins[0], d, true);
    const at::Tensor e = at::exp(shifted);
    r = mode == 0 ? e * at::reciprocal(e.sum(d, true)) : shifted - at::log(e.sum(d, true));
  } else {
    const at::Tensor &g = ins[0], &out = ins[1];
    r = mode == 2 ? out * (g - (g * out).sum(d, true)) : g - at::exp(out) * g.sum(d, true);
  }
  result.copy_(r);
}

// The structured ops of the four kernels, by run()'s mode: 0 softmax, 1 log_softmax (forward), 2 and
// 3 their backward; the names are the ones CPU's checks report.
template <class Meta, int Mode>
struct ForwardOp : Meta {
  void impl(const at::Tensor& self, int64_t dim, bool half_to_float, const at::Tensor& out) {
    const char* name = Mode == 0 ? "softmax" : "log_softmax";
    TORCH_CHECK(!half_to_float || self.scalar_type() == at::kHalf, name,
                ": conversion is supported for Half type only");
    if (self.scalar_type() == at::kDouble && float64_enabled()) {
      if (out.numel() > 0) run_float64(Mode, {self}, dim, out);
      return;
    }
    check_float(self, name);
    run(Mode, {self}, dim, out);
  }
};
template <class Meta, int Mode>
struct BackwardOp : Meta {
  void impl(const at::Tensor& grad, const at::Tensor& output, int64_t dim, at::ScalarType, const at::Tensor& out) {
    if (grad.scalar_type() == at::kDouble && output.scalar_type() == at::kDouble && float64_enabled()) {
      if (out.numel() > 0) run_float64(Mode, {grad, output}, dim, out);
      return;
    }
    check_float(grad, Mode == 2 ? "softmax_backward_data" : "log_softmax_backward_data");
    run(Mode, {grad, output}, dim, out);
  }
};
using SoftmaxOp = ForwardOp<at::meta::structured__softmax, 0>;
using LogSoftmaxOp = ForwardOp<at::meta::structured__log_softmax, 1>;
using SoftmaxBackwardOp = BackwardOp<at::meta::structured__softmax_backward_data, 2>;
using LogSoftmaxBackwardOp = BackwardOp<at::meta::structured__log_softmax_backward_data, 3>;

namespace s = structured;
using T = const at::Tensor&;

WEBGPU_LIBRARY_IMPL(m) {
  s::reg<SoftmaxOp, T, int64_t, bool>(m, "_softmax", "_softmax.out", nullptr);
  s::reg<LogSoftmaxOp, T, int64_t, bool>(m, "_log_softmax", "_log_softmax.out", nullptr);
  s::reg<SoftmaxBackwardOp, T, T, int64_t, at::ScalarType>(m, "_softmax_backward_data", "_softmax_backward_data.out",
                                                           nullptr);
  s::reg<LogSoftmaxBackwardOp, T, T, int64_t, at::ScalarType>(m, "_log_softmax_backward_data",
                                                              "_log_softmax_backward_data.out", nullptr);
}

}  // namespace
}  // namespace webgpu::ops
