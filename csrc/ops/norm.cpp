// Normalisation layers, forward and backward.
//  - layer_norm and group_norm share one row kernel (ops/rows.h, wgsl/kernels/norm.wgsl): a workgroup
//    per normalised row (a sample's trailing dims, or one (sample, group) slice), mean and variance
//    by two workgroup sums, then the affine write; the backward row kernel folds both row sums in
//    one pass. Per-element parameter gradients of layer_norm are column sums over row chunks.
//  - batch_norm: training statistics and gradient sums in per-channel passes (wgsl/kernels/batch_norm.wgsl,
//    docs/design.md "Engines"), else (eval, half parameters) through the reductions; the affine as one
//    elementwise pass.
// rms_norm is CompositeImplicitAutograd in the supported torch versions (pow, mean, rsqrt, mul).
// Half types compute in f32; statistics have CPU's dtypes (float for mixed-precision parameters).
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/_batch_norm_impl_index_native.h>
#include <torch/library.h>

#include "ops/common.h"
#include "kernel/kernel.h"
#include "ops/pointwise.h"
#include "ops/rows.h"
#include "kernel/wgsl.h"
#include "ops/nn_common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

bool reduced(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

void check_float(const at::Tensor& t, const char* op) {
  check_kernel_dtype(t.scalar_type() == at::kFloat || reduced(t.scalar_type()), t.scalar_type(), op);
}

// CPU's statistics dtype: float when the input is a half type and a parameter is float.
at::ScalarType stat_dtype(const at::Tensor& input, std::initializer_list<const at::Tensor*> params) {
  if (!reduced(input.scalar_type())) return input.scalar_type();
  for (const at::Tensor* p : params)
    if (p && p->defined() && p->scalar_type() == at::kFloat) return at::kFloat;
  return input.scalar_type();
}

// CPU's rule for the parameters (weight, bias, running statistics): all of the input's dtype or, for
// a half input, all float. Others were computed as if of the input's dtype.
void check_param_dtypes(const at::Tensor& input, std::initializer_list<const at::Tensor*> params, const char* op) {
  const at::ScalarType want = stat_dtype(input, params);
  for (const at::Tensor* p : params)
    TORCH_CHECK(!p || !p->defined() || p->scalar_type() == want, op, ": expected its parameters to have dtype ", want,
                " (the input is ", input.scalar_type(), "), got one of dtype ", p->scalar_type());
}

// Geometry of a row kernel: M rows of N contiguous elements; the affine index of row element j is
// (row % G) * CPG + j / HW (layer norm: G = 1, HW = 1, so j).
struct Rows {
  int64_t M, N, G = 1, CPG = 0, HW = 1;
  bool group = false;
  int64_t row0 = 0;  // the first row's index in the whole (a slice past the binding limit: group layouts)
};

// rows, N and, for a group layout with affine parameters (affine: w or b bound), groups, cpg and hw.
void common_params(Kernel& k, const Rows& r, bool affine) {
  k.param_index("rows", r.M);
  k.param_index("N", r.N);
  if (r.group && affine) {
    k.param_index("groups", r.G);
    k.param_index("cpg", r.CPG);  // channels per group
    k.param_index("hw", r.HW);  // spatial size
    if (r.row0 != 0) k.param_index("row0", r.row0 % r.G);
  }
}

std::string affine_index(const Rows& r) {
  if (!r.group) return "j";
  return std::string(r.row0 != 0 ? "((row + P.row0) % P.groups)" : "(row % P.groups)") + " * P.cpg + j / P.hw";
}
// The group layout's part of a kernel key.
std::string layout_key(const Rows& r) { return r.group ? (r.row0 != 0 ? "o" : "g") : "l"; }

std::string norm_libraries() { return kernel::library("norm"); }

// y = (x - mean) * rstd * w + b per row (ops/rows.h); writes mean and rstd (contiguous, M elements).
// A cached row is read once; a streaming row once per pass (mean, variance, write).
void norm_rows_forward_launch(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps, const Rows& r,
                              const at::Tensor& y, const at::Tensor& mean, const at::Tensor& rstd) {
  if (r.M == 0) return;
  const RowPlan plan = row_plan(y, r.N);
  Kernel k(std::string("nn:norm_fwd:") + layout_key(r) + (w.defined() ? "w" : "") + (b.defined() ? "b" : "") +
           row_key(plan));
  const int X = k.in(x, CT::F32);
  const int W = w.defined() ? k.in(w, CT::F32) : -1;
  const int B = b.defined() ? k.in(b, CT::F32) : -1;
  const int Y = k.out(y, CT::F32), MU = k.out(mean, CT::F32), RS = k.out(rstd, CT::F32);
  common_params(k, r, W >= 0 || B >= 0);
  k.param_index("x_off", x.storage_offset());
  k.param_index("y_off", y.storage_offset());
  k.param_index("mean_off", mean.storage_offset());
  k.param_index("rstd_off", rstd.storage_offset());
  if (W >= 0) k.param_index("w_off", w.storage_offset());
  if (B >= 0) k.param_index("b_off", b.storage_offset());
  k.param_f32("eps", float(eps));
  k.launch(uint64_t(r.M), [&] {
    auto n = [](int i) { return std::to_string(i); };
    const bool c = plan.cache > 0;
    const std::string xv = c ? "xs[i]" : "ld" + n(X) + "(base + j)";
    std::string s = row_kernel_head(plan, norm_libraries());
    s += "  let N = P.N; let base = P.x_off + row * N; let nf = f32(N);\n";
    if (c) s += "  var xs: array<f32, C>;\n";
    s += "  var a = 0.0;\n" +
         row_loop(plan, "N",
                  c ? "      let v = ld" + n(X) + "(base + j);\n      xs[i] = v;\n      a = a + v;\n"
                    : "    a = a + " + xv + ";\n") +
         "  let mean = wg_sum(lid, a) / nf;\n  var q = 0.0;\n" +
         row_loop(plan, "N", "      let d = " + xv + " - mean;\n      q = q + d * d;\n") +
         "  let rstd = norm_rstd(wg_sum(lid, q) / nf, P.eps);\n  let ybase = P.y_off + row * N;\n";
    std::string put = "      var y = (" + xv + " - mean) * rstd;\n";
    if (W >= 0) put += "      y = y * ld" + n(W) + "(P.w_off + " + affine_index(r) + ");\n";
    if (B >= 0) put += "      y = y + ld" + n(B) + "(P.b_off + " + affine_index(r) + ");\n";
    put += "      st" + n(Y) + "(ybase + j, y);\n";
    s += row_loop(plan, "N", put) + "  if (lid == 0u) { st" + n(MU) + "(P.mean_off + row, mean); st" + n(RS) +
         "(P.rstd_off + row, rstd); }\n}\n";
    return s;
  });
}

// Operands past the binding limit: slices of whole rows (ops/rows.h); a group layout's slices after
// the first offset the affine index by their first row (Rows::row0).
void norm_rows_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps, const Rows& r,
                       const at::Tensor& y, const at::Tensor& mean, const at::Tensor& rstd) {
  const int64_t per = rows_per_launch({{&x, r.N}, {&y, r.N}, {&mean, 1}, {&rstd, 1}}, r.M,
                                      r.group ? "native_group_norm" : "native_layer_norm");
  if (per >= r.M) return norm_rows_forward_launch(x, w, b, eps, r, y, mean, rstd);
  for (int64_t r0 = 0; r0 < r.M; r0 += per) {
    Rows s = r;
    s.M = std::min(per, r.M - r0);
    s.row0 = r0;
    norm_rows_forward_launch(row_slice(x, r.N, r0, s.M), w, b, eps, s, row_slice(y, r.N, r0, s.M),
                             row_slice(mean, 1, r0, s.M), row_slice(rstd, 1, r0, s.M));
  }
}

// dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)) per row, in CPU's arrangement.
void norm_rows_backward_launch(const at::Tensor& g, const at::Tensor& x, const at::Tensor& mean, const at::Tensor& rstd,
                               const at::Tensor& w, const Rows& r, const at::Tensor& gi) {
  if (r.M == 0 || r.N == 0) return;
  const RowPlan plan = row_plan(gi, r.N);
  Kernel k(std::string("nn:norm_bwd:") + layout_key(r) + (w.defined() ? "w" : "") + row_key(plan));
  const int G = k.in(g, CT::F32), X = k.in(x, CT::F32), MU = k.in(mean, CT::F32), RS = k.in(rstd, CT::F32);
  const int W = w.defined() ? k.in(w, CT::F32) : -1;
  const int GI = k.out(gi, CT::F32);
  common_params(k, r, W >= 0);
  k.param_index("g_off", g.storage_offset());
  k.param_index("x_off", x.storage_offset());
  k.param_index("mean_off", mean.storage_offset());
  k.param_index("rstd_off", rstd.storage_offset());
  if (W >= 0) k.param_index("w_off", w.storage_offset());
  k.param_index("gi_off", gi.storage_offset());
  k.launch(uint64_t(r.M), [&] {
    auto n = [](int i) { return std::to_string(i); };
    const bool c = plan.cache > 0;
    const std::string gw_load = "ld" + n(G) + "(P.g_off + row * N + j)" +
                                (W >= 0 ? " * ld" + n(W) + "(P.w_off + " + affine_index(r) + ")" : std::string());
    const std::string x_load = "ld" + n(X) + "(P.x_off + row * N + j)";
    const std::string gw = c ? "gs[i]" : gw_load, xv = c ? "xs[i]" : x_load;
    std::string s = row_kernel_head(plan, norm_libraries());
    // CPU's algebra (so rounding matches it): ds = sum g w x, db = sum g w,
    // b = (db mean - ds) rstd^3 / N, c = -b mean - db rstd / N, dx = rstd g w + b x + c.
    s += "  let N = P.N; let nf = f32(N);\n  let mean = ld" + n(MU) + "(P.mean_off + row); let rstd = ld" + n(RS) +
         "(P.rstd_off + row);\n";
    if (c) s += "  var gs: array<f32, C>;\n  var xs: array<f32, C>;\n";
    const std::string first =
        c ? "      gs[i] = " + gw_load + ";\n      xs[i] = " + x_load + ";\n" : "      let gw = " + gw_load + ";\n";
    s += "  var a = vec2<f32>(0.0);\n" +
         row_loop(plan, "N", first + "      a = a + vec2<f32>(" + gw + ", " + gw + " * " + xv + ");\n") +
         "  let t = wg_sum2(lid, a);\n"
         "  let b = (t.x * mean - t.y) * rstd * rstd * rstd / nf;\n"
         "  let c = -b * mean - t.x * rstd / nf;\n" +
         row_loop(plan, "N",
                  "      st" + n(GI) + "(P.gi_off + row * N + j, rstd * (" + gw + ") + b * " + xv + " + c);\n") +
         "}\n";
    return s;
  });
}

void norm_rows_backward(const at::Tensor& g, const at::Tensor& x, const at::Tensor& mean, const at::Tensor& rstd,
                        const at::Tensor& w, const Rows& r, const at::Tensor& gi) {
  const int64_t per = rows_per_launch({{&g, r.N}, {&x, r.N}, {&gi, r.N}, {&mean, 1}, {&rstd, 1}}, r.M,
                                      r.group ? "native_group_norm_backward" : "native_layer_norm_backward");
  if (per >= r.M) return norm_rows_backward_launch(g, x, mean, rstd, w, r, gi);
  for (int64_t r0 = 0; r0 < r.M; r0 += per) {
    Rows s = r;
    s.M = std::min(per, r.M - r0);
    s.row0 = r0;
    norm_rows_backward_launch(row_slice(g, r.N, r0, s.M), row_slice(x, r.N, r0, s.M), row_slice(mean, 1, r0, s.M),
                              row_slice(rstd, 1, r0, s.M), w, s, row_slice(gi, r.N, r0, s.M));
  }
}

// Column sums of layer_norm's parameter gradients: partial[c, j] = sum over the rows of chunk c of
// g * xhat (and g), an invocation per (chunk, column) so loads are coalesced; the chunks are then
// summed by the reduction.
constexpr int64_t kChunk = 128;
void layer_norm_param_grads_launch(const at::Tensor& g, const at::Tensor& x, const at::Tensor& mean,
                                   const at::Tensor& rstd, int64_t M, int64_t N, const at::Tensor& pw,
                                   const at::Tensor& pb) {
  const int64_t chunks = (M + kChunk - 1) / kChunk;
  Kernel k("nn:ln_param_grads");
  const int G = k.in(g, CT::F32), X = k.in(x, CT::F32), MU = k.in(mean, CT::F32), RS = k.in(rstd, CT::F32);
  const int PW = k.out(pw, CT::F32), PB = k.out(pb, CT::F32);
  k.param_index("rows", M);
  k.param_index("N", N);
  k.param_index("n", chunks * N);  // partials
  k.param_index("g_off", g.storage_offset());
  k.param_index("x_off", x.storage_offset());
  k.param_index("mean_off", mean.storage_offset());
  k.param_index("rstd_off", rstd.storage_offset());
  k.param("chunk", uint32_t(kChunk));
  k.launch(grid(uint64_t(chunks * N)), [&] {
    auto n = [](int i) { return std::to_string(i); };
    return "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
           " @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
           "  let t = linear_id(wid, nwg, lid, 256u);\n  if (t >= P.n) { return; }\n"
           "  let N = P.N; let c = t / N; let j = t % N;\n"
           "  let r0 = c * P.chunk; let r1 = min(r0 + P.chunk, P.rows);\n"
           "  var sw = 0.0; var sb = 0.0;\n"
           "  for (var r = r0; r < r1; r = r + 1u) {\n"
           "    let gv = ld" +
           n(G) +
           "(P.g_off + r * N + j);\n"
           "    let a = ld" +
           n(RS) +
           "(P.rstd_off + r);\n"
           "    sw = sw + gv * fma(ld" +
           n(X) + "(P.x_off + r * N + j), a, -(ld" + n(MU) +
           "(P.mean_off + r) * a));\n"
           "    sb = sb + gv;\n  }\n"
           "  st" +
           n(PW) + "(t, sw); st" + n(PB) + "(t, sb);\n}\n";
  });
}

// Partials of layer_norm's parameter gradients, [chunks, N] each (the column sums of the rows of a
// chunk), for the reduction to sum. Operands past the binding limit: slices of whole chunks of rows
// where 128 rows fit (the same partials as unsplit), else of as many rows as fit (more partial rows,
// summed in another order); each slice's partials are written from element 0 by the kernel, so into
// a tensor of their own, and copied into their rows.
std::pair<at::Tensor, at::Tensor> layer_norm_param_grads(const at::Tensor& g, const at::Tensor& x,
                                                         const at::Tensor& mean, const at::Tensor& rstd, int64_t M,
                                                         int64_t N) {
  const at::TensorOptions f32 = g.options().dtype(at::kFloat);
  int64_t per = rows_per_launch({{&g, N}, {&x, N}, {&mean, 1}, {&rstd, 1}}, M, "native_layer_norm_backward");
  if (per >= M) {
    const int64_t chunks = (M + kChunk - 1) / kChunk;
    at::Tensor pw = at::empty({chunks, N}, f32), pb = at::empty({chunks, N}, f32);
    layer_norm_param_grads_launch(g, x, mean, rstd, M, N, pw, pb);
    return {pw, pb};
  }
  if (per >= kChunk) per = per / kChunk * kChunk;
  int64_t total = 0;
  for (int64_t r0 = 0; r0 < M; r0 += per) total += (std::min(per, M - r0) + kChunk - 1) / kChunk;
  at::Tensor pw = at::empty({total, N}, f32), pb = at::empty({total, N}, f32);
  int64_t c0 = 0;
  for (int64_t r0 = 0; r0 < M; r0 += per) {
    const int64_t n = std::min(per, M - r0), chunks = (n + kChunk - 1) / kChunk;
    at::Tensor sw = at::empty({chunks, N}, f32), sb = at::empty({chunks, N}, f32);
    layer_norm_param_grads_launch(row_slice(g, N, r0, n), row_slice(x, N, r0, n), row_slice(mean, 1, r0, n),
                                  row_slice(rstd, 1, r0, n), n, N, sw, sb);
    pw.narrow(0, c0, chunks).copy_(sw);
    pb.narrow(0, c0, chunks).copy_(sb);
    c0 += chunks;
  }
  return {pw, pb};
}

// ---------------------------------------------------------------------------------------------
// layer_norm

// Layer and group norm forward, after their shape checks: the input's and parameters' dtypes checked
// (op, family: the names the errors give), the operands made contiguous, and y (contiguous, shaped as
// the input), mean and rstd (stat_shape, the statistics' dtype) from norm_rows_forward over rows r.
std::tuple<at::Tensor, at::Tensor, at::Tensor> norm_forward(const at::Tensor& input, const at::Tensor& weight,
                                                            const at::Tensor& bias, double eps, const Rows& r,
                                                            at::IntArrayRef stat_shape, const char* op,
                                                            const char* family) {
  check_float(input, op);
  check_param_dtypes(input, {&weight, &bias}, family);
  const at::Tensor x = input.contiguous();
  const at::Tensor w = weight.defined() ? weight.contiguous() : weight;
  const at::Tensor b = bias.defined() ? bias.contiguous() : bias;
  at::Tensor y = at::empty(input.sizes(), input.options().memory_format(at::MemoryFormat::Contiguous));
  const auto sd = stat_dtype(input, {&weight, &bias});
  at::Tensor mean = at::empty(stat_shape, input.options().dtype(sd));
  at::Tensor rstd = at::empty(stat_shape, input.options().dtype(sd));
  norm_rows_forward(x, w, b, eps, r, y, mean, rstd);
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(const at::Tensor& input,
                                                                 at::IntArrayRef normalized_shape,
                                                                 const std::optional<at::Tensor>& weight_opt,
                                                                 const std::optional<at::Tensor>& bias_opt,
                                                                 double eps) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor()), bias = bias_opt.value_or(at::Tensor());
  auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, bias);
  const int64_t axis = input.dim() - int64_t(normalized_shape.size());
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  for (int64_t i = axis; i < input.dim(); ++i) stat_shape.push_back(1);
  return norm_forward(input, weight, bias, eps, Rows{M, N}, stat_shape, "native_layer_norm", "layer_norm");
}

// Layer and group norm backward: the operands made contiguous, and the input gradient (mask[0]), a
// contiguous tensor shaped as the input from norm_rows_backward over rows r (zeros when they are
// empty, `empty`).
struct NormGrads {
  at::Tensor g, x, mu, rs, w;
  at::Tensor input_grad(const Rows& r, bool empty) const {
    at::Tensor gi = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    if (empty) gi.zero_();
    norm_rows_backward(g, x, mu, rs, w, r, gi);
    return gi;
  }
};
NormGrads norm_grads(const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean,
                     const at::Tensor& rstd, const at::Tensor& weight) {
  return {grad_out.contiguous(), input.contiguous(), mean.contiguous(), rstd.contiguous(),
          weight.defined() ? weight.contiguous() : weight};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt, const std::optional<at::Tensor>& bias_opt,
    std::array<bool, 3> mask) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor()), bias = bias_opt.value_or(at::Tensor());
  auto [M, N] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, bias);
  check_float(input, "native_layer_norm_backward");
  const NormGrads o = norm_grads(grad_out, input, mean, rstd, weight);
  const at::Tensor &g = o.g, &x = o.x, &mu = o.mu, &rs = o.rs;
  at::Tensor gi, gw, gb;
  if (mask[0]) gi = o.input_grad(Rows{M, N}, N == 0);
  if (mask[1] || mask[2]) {
    const at::ScalarType pw_dtype = weight.defined() ? weight.scalar_type() : input.scalar_type();
    const at::ScalarType pb_dtype = bias.defined() ? bias.scalar_type() : input.scalar_type();
    at::Tensor sw, sb;
    if (M == 0 || N == 0) {
      sw = at::zeros({N}, input.options().dtype(at::kFloat));
      sb = at::zeros({N}, input.options().dtype(at::kFloat));
    } else {
      auto [pw, pb] = layer_norm_param_grads(g, x, mu, rs, M, N);
      sw = pw.size(0) == 1 ? pw.view({N}) : pw.sum(0);
      sb = pb.size(0) == 1 ? pb.view({N}) : pb.sum(0);
    }
    if (mask[1]) gw = sw.to(pw_dtype).view(normalized_shape);
    if (mask[2]) gb = sb.to(pb_dtype).view(normalized_shape);
  }
  return {gi, gw, gb};
}

// ---------------------------------------------------------------------------------------------
// group_norm

void check_group_norm(const at::Tensor& input, const at::Tensor& w, const at::Tensor& b, int64_t N, int64_t C,
                      int64_t HxW, int64_t group) {
  TORCH_CHECK(group > 0, "Expected number of groups to be greater than 0, got ", group);
  TORCH_CHECK(C % group == 0,
              "Expected number of channels in input to be divisible by num_groups, but got input of "
              "shape ",
              input.sizes(), " and num_groups=", group);
  TORCH_CHECK(input.numel() == N * C * HxW, "Expected the input to have ", N * C * HxW, " elements, got ",
              input.numel());
  TORCH_CHECK(!w.defined() || (w.dim() == 1 && w.numel() == C),
              "Expected weight to be a vector of size equal to the "
              "number of channels in input, but got weight of shape ",
              w.sizes(), " and input of shape ", input.sizes());
  TORCH_CHECK(!b.defined() || (b.dim() == 1 && b.numel() == C),
              "Expected bias to be a vector of size equal to the "
              "number of channels in input, but got bias of shape ",
              b.sizes(), " and input of shape ", input.sizes());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm(const at::Tensor& input,
                                                                 const std::optional<at::Tensor>& weight_opt,
                                                                 const std::optional<at::Tensor>& bias_opt, int64_t N,
                                                                 int64_t C, int64_t HxW, int64_t group, double eps) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor()), bias = bias_opt.value_or(at::Tensor());
  check_group_norm(input, weight, bias, N, C, HxW, group);
  const Rows r{N * group, (C / group) * HxW, group, C / group, std::max<int64_t>(HxW, 1), true};
  auto res = norm_forward(input, weight, bias, eps, r, {N, group}, "native_group_norm", "group_norm");
  // CPU keeps a channels-last input's layout (layer_norm does not).
  std::get<0>(res) = in_memory_format_of(std::get<0>(res), input);
  return res;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
    const std::optional<at::Tensor>& weight_opt, int64_t N, int64_t C, int64_t HxW, int64_t group,
    std::array<bool, 3> mask) {
  const at::Tensor weight = weight_opt.value_or(at::Tensor());
  check_group_norm(input, weight, at::Tensor(), N, C, HxW, group);
  check_float(input, "native_group_norm_backward");
  const NormGrads o = norm_grads(grad_out, input, mean, rstd, weight);
  const at::Tensor &g = o.g, &x = o.x, &mu = o.mu, &rs = o.rs;
  at::Tensor gi, gw, gb;
  if (mask[0])
    gi = o.input_grad(Rows{N * group, (C / group) * HxW, group, C / group, std::max<int64_t>(HxW, 1), true}, HxW == 0);
  if (mask[1] || mask[2]) {
    // Per-channel sums over (N, HxW) in f32.
    const at::Tensor g3 = g.view({N, C, HxW}).to(at::kFloat);
    if (mask[1]) {
      // As CPU: per (sample, channel) sums ds = sum g x, db = sum g, then (ds - db mean) rstd over samples.
      const int64_t cpg = C / group;
      const at::Tensor ds = (g3 * x.view({N, C, HxW}).to(at::kFloat)).sum(2);
      const at::Tensor m = mu.to(at::kFloat).view({N, group, 1}).expand({N, group, cpg}).reshape({N, C});
      const at::Tensor r = rs.to(at::kFloat).view({N, group, 1}).expand({N, group, cpg}).reshape({N, C});
      gw = ((ds - g3.sum(2) * m) * r).sum(0).to(weight.defined() ? weight.scalar_type() : input.scalar_type());
    }
    if (mask[2]) gb = g3.sum(at::IntArrayRef{0, 2}).to(weight.defined() ? weight.scalar_type() : input.scalar_type());
  }
  return {gi, gw, gb};
}

// ---------------------------------------------------------------------------------------------
// batch_norm

// Shape (1, C, 1, ...) for broadcasting a per-channel vector over the input.
std::vector<int64_t> channel_shape(const at::Tensor& input) {
  std::vector<int64_t> s(input.dim(), 1);
  if (input.dim() > 1) s[1] = input.size(1);
  return s;
}

std::vector<int64_t> reduce_dims(const at::Tensor& input) {
  std::vector<int64_t> d{0};
  for (int64_t i = 2; i < input.dim(); ++i) d.push_back(i);
  return d;
}

// One elementwise pass out = expr(x1, x2, ...) over full-size tensors and per-channel vectors
// (viewed to broadcast), computed in f32 whatever the inputs' dtypes.
void channel_pass(const char* name, const at::Tensor& out, std::initializer_list<at::Tensor> inputs, const char* expr) {
  at::TensorIteratorConfig cfg;
  cfg.add_output(out);
  for (const at::Tensor& t : inputs) cfg.add_const_input(t);
  auto it = cfg.check_all_same_dtype(false).promote_inputs_to_common_dtype(false).build();
  run_expr(name, it, CT::F32, expr, lib::None);
}

// out = x * scale + shift, scale and shift per channel (f32).
void apply_affine(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& shift, const at::Tensor& out) {
  const auto cs = channel_shape(x);
  channel_pass("batch_norm_apply", out, {x, scale.view(cs), shift.view(cs)}, "x1 * x2 + x3");
}

// ---- training-mode batch_norm in per-channel passes (wgsl/kernels/batch_norm.wgsl) ----
// The forward's statistics, running-statistics update, scale and shift take two dispatches (chunk
// partials, then one invocation per channel), the backward's sums and coefficients two more, where
// the composite of reductions and [C]-sized elementwise ops took about thirty.

// The input as [N, C, HW]: the strides of n, c and the collapsed spatial dims; false when the
// spatial dims do not collapse into one stride.
struct ChannelView {
  int64_t sN = 0, sC = 0, sHW = 1;
};
bool channel_view(const at::Tensor& t, ChannelView& v) {
  v.sN = t.stride(0);
  v.sC = t.stride(1);
  v.sHW = 1;
  int64_t next = -1;  // the stride the next collapsed dim to the left must have
  for (int64_t d = t.dim() - 1; d >= 2; --d) {
    if (t.size(d) == 1) continue;
    if (next >= 0 && t.stride(d) != next) return false;
    if (next < 0) v.sHW = t.stride(d);
    next = t.stride(d) * t.size(d);
  }
  return v.sN >= 0 && v.sC >= 0 && v.sHW >= 0;
}

// Whether the fused passes take this batch_norm: every parameter float32, contiguous (or absent),
// the input and gradient in a [N, C, HW] layout within one binding.
bool bn_fused_ok(const at::Tensor& input, std::initializer_list<const at::Tensor*> params,
                 std::initializer_list<const at::Tensor*> full) {
  if (input.dim() < 2 || input.numel() == 0 || input.size(1) == 0) return false;
  for (const at::Tensor* p : params)
    if (p->defined() && (p->scalar_type() != at::kFloat || !p->is_contiguous() || p->numel() != input.size(1)))
      return false;
  ChannelView v;
  for (const at::Tensor* t : full) {
    if (t->sizes() != input.sizes() || !is_float(t->scalar_type()) || !channel_view(*t, v) ||
        !kernel::fits_binding(*t) || kernel::byte_span(*t).second / t->element_size() >= (int64_t(1) << 31))
      return false;
  }
  return true;
}

struct BnChunks {
  int64_t C, cnt, S, per;
};
BnChunks bn_chunks(const at::Tensor& input) {
  BnChunks b;
  b.C = input.size(1);
  b.cnt = input.numel() / b.C;
  // About 2048 workgroups in all, each reducing at least 2048 elements where there are that many.
  const int64_t want = std::max<int64_t>(1, std::min((b.cnt + 2047) / 2048, (2048 + b.C - 1) / b.C));
  b.per = (b.cnt + want - 1) / want;
  b.S = (b.cnt + b.per - 1) / b.per;
  return b;
}

void bn_chunk_params(Kernel& k, const BnChunks& b, const at::Tensor& input) {
  k.param_index("C", b.C);
  k.param_index("S", b.S);
  k.param_index("per", b.per);
  k.param_index("cnt", b.cnt);
  k.param_index("HW", b.cnt / std::max<int64_t>(input.size(0), 1));
}

void bn_view_params(Kernel& k, const char* prefix, const at::Tensor& t) {
  ChannelView v;
  channel_view(t, v);
  const std::string p(prefix);
  k.param_index(p + "_off", t.storage_offset());
  k.param_index(p + "_sN", v.sN);
  k.param_index(p + "_sC", v.sC);
  k.param_index(p + "_sHW", v.sHW);
}

// A chunk pass (section `name` of wgsl/kernels/batch_norm.wgsl): one workgroup per (channel, chunk)
// of input's [N, C, HW] view (chunks ch), writing `rows` float32 partials each. inputs(k) adds the
// kernel's inputs and their parameters; the partials, returned, are its last operand.
template <class Inputs>
at::Tensor bn_chunk_pass(const BnChunks& ch, const at::Tensor& input, int64_t rows, const char* name,
                         const Inputs& inputs) {
  at::Tensor part = at::empty({ch.C * ch.S * rows}, input.options().dtype(at::kFloat));
  Kernel k(std::string("nn:bn_") + name);
  inputs(k);
  k.out(part, CT::F32);
  bn_chunk_params(k, ch, input);
  k.launch(uint64_t(ch.C * ch.S), [&] { return kernel::section("batch_norm", name); });
  return part;
}

std::string num(int i) { return std::to_string(i); }

// The affine's per-channel scale and shift from mean and invstd, as the composite computes them:
// scale = invstd * w, shift = -mean * scale (+ b). W, B: the operand numbers of w and b (-1: none).
std::string bn_affine(int W, int B) {
  std::string a = W >= 0 ? "  let scale = invstd * ld" + num(W) + "(P.w_off + c);\n" : "  let scale = invstd;\n";
  a += B >= 0 ? "  let shift = -mean * scale + ld" + num(B) + "(P.b_off + c);\n" : "  let shift = -mean * scale;\n";
  return a;
}

// Training statistics: mean, invstd, the affine's per-channel scale and shift (f32, [C]), and the
// running statistics updated in place.
void bn_stats_fused(const at::Tensor& input, const at::Tensor& w, const at::Tensor& b, const at::Tensor& rm,
                    const at::Tensor& rv, double momentum, double eps, at::Tensor& mean, at::Tensor& invstd,
                    at::Tensor& scale, at::Tensor& shift) {
  const BnChunks ch = bn_chunks(input);
  const auto f32 = input.options().dtype(at::kFloat);
  const at::Tensor part = bn_chunk_pass(ch, input, 3, "stats", [&](Kernel& k) {
    k.in(input, CT::F32);
    bn_view_params(k, "x", input);
  });
  mean = at::empty({ch.C}, f32);
  invstd = at::empty({ch.C}, f32);
  scale = at::empty({ch.C}, f32);
  shift = at::empty({ch.C}, f32);
  Kernel k(std::string("nn:bn_stats_fin:") + (w.defined() ? "w" : "") + (b.defined() ? "b" : "") +
           (rm.defined() ? "m" : "") + (rv.defined() ? "v" : ""));
  k.in(part, CT::F32);
  k.out(mean, CT::F32);
  k.out(invstd, CT::F32);
  k.out(scale, CT::F32);
  k.out(shift, CT::F32);
  const int W = w.defined() ? k.in(w, CT::F32) : -1, B = b.defined() ? k.in(b, CT::F32) : -1;
  const int RM = rm.defined() ? k.out(rm, CT::F32) : -1, RV = rv.defined() ? k.out(rv, CT::F32) : -1;
  k.param_index("S", ch.S);
  k.param_index("C", ch.C);
  k.param_f32("eps", float(eps));
  if (W >= 0) k.param_index("w_off", w.storage_offset());
  if (B >= 0) k.param_index("b_off", b.storage_offset());
  if (RM >= 0 || RV >= 0) {
    k.param_f32("keep", float(1 - momentum));
    k.param_f32("mom", float(momentum));
  }
  if (RM >= 0) k.param_index("rm_off", rm.storage_offset());
  if (RV >= 0) {
    k.param_index("rv_off", rv.storage_offset());
    k.param_f32("unbias", float(momentum * double(ch.cnt) / double(ch.cnt - 1)));
  }
  k.launch(grid(uint64_t(ch.C)), [&] {
    // Running statistics r * (1 - momentum) + s * momentum, the variance unbiased.
    std::string running;
    if (RM >= 0)
      running += "  st" + num(RM) + "(P.rm_off + c, ld" + num(RM) + "(P.rm_off + c) * P.keep + mean * P.mom);\n";
    if (RV >= 0)
      running += "  st" + num(RV) + "(P.rv_off + c, ld" + num(RV) + "(P.rv_off + c) * P.keep + var_ * P.unbias);\n";
    return kernel::fill(kernel::section("batch_norm", "stats_fin"),
                        {{"AFFINE", bn_affine(W, B)}, {"RUNNING", running}});
  });
}

// Evaluation mode: the affine's per-channel scale and shift from the running statistics (f32, [C]).
void bn_eval_affine(const at::Tensor& w, const at::Tensor& b, const at::Tensor& rm, const at::Tensor& rv, double eps,
                    at::Tensor& scale, at::Tensor& shift) {
  const int64_t C = rm.numel();
  scale = at::empty({C}, rm.options());
  shift = at::empty({C}, rm.options());
  Kernel k(std::string("nn:bn_eval_affine:") + (w.defined() ? "w" : "") + (b.defined() ? "b" : ""));
  k.in(rm, CT::F32);
  k.in(rv, CT::F32);
  k.out(scale, CT::F32);
  k.out(shift, CT::F32);
  const int W = w.defined() ? k.in(w, CT::F32) : -1, B = b.defined() ? k.in(b, CT::F32) : -1;
  k.param_index("C", C);
  k.param_f32("eps", float(eps));
  k.param_index("rm_off", rm.storage_offset());
  k.param_index("rv_off", rv.storage_offset());
  if (W >= 0) k.param_index("w_off", w.storage_offset());
  if (B >= 0) k.param_index("b_off", b.storage_offset());
  k.launch(grid(uint64_t(C)),
           [&] { return kernel::fill(kernel::section("batch_norm", "eval_affine"), {{"AFFINE", bn_affine(W, B)}}); });
}

// The training backward's per-channel sums: coef rows (ws, a, b) of gi = g * ws + x * a + b, and the
// parameter gradients (sum_gxh, sum_g) when asked for.
void bn_grads_fused(const at::Tensor& g, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& invstd,
                    const at::Tensor& w, at::Tensor& coef, at::Tensor& gw, at::Tensor& gb) {
  const BnChunks ch = bn_chunks(input);
  const auto f32 = input.options().dtype(at::kFloat);
  const at::Tensor part = bn_chunk_pass(ch, input, 2, "grads", [&](Kernel& k) {
    k.in(g, CT::F32);
    k.in(input, CT::F32);
    k.in(mean, CT::F32);
    bn_view_params(k, "g", g);
    bn_view_params(k, "x", input);
    k.param_index("mean_off", mean.storage_offset());
  });
  coef = at::empty({3, ch.C}, f32);
  Kernel k(std::string("nn:bn_grads_fin:") + (w.defined() ? "w" : "") + (gw.defined() ? "gw" : "") +
           (gb.defined() ? "gb" : ""));
  k.in(part, CT::F32);
  k.in(mean, CT::F32);
  k.in(invstd, CT::F32);
  k.out(coef, CT::F32);
  const int W = w.defined() ? k.in(w, CT::F32) : -1;
  const int GW = gw.defined() ? k.out(gw, CT::F32) : -1, GB = gb.defined() ? k.out(gb, CT::F32) : -1;
  k.param_index("S", ch.S);
  k.param_index("C", ch.C);
  k.param_index("mean_off", mean.storage_offset());
  k.param_index("invstd_off", invstd.storage_offset());
  k.param_f32("n", float(ch.cnt));
  if (W >= 0) k.param_index("w_off", w.storage_offset());
  k.launch(grid(uint64_t(ch.C)), [&] {
    const std::string weight = W >= 0 ? "  let w = ld" + num(W) + "(P.w_off + c);\n" : "  let w = 1.0;\n";
    std::string grads;
    if (GW >= 0) grads += "  st" + num(GW) + "(c, sum_gxh);\n";
    if (GB >= 0) grads += "  st" + num(GB) + "(c, sg);\n";
    return kernel::fill(kernel::section("batch_norm", "grads_fin"), {{"WEIGHT", weight}, {"PARAM_GRADS", grads}});
  });
}

void check_batch_norm(const at::Tensor& input, const at::Tensor& w, const at::Tensor& b, const at::Tensor& rm,
                      const at::Tensor& rv) {
  TORCH_CHECK(input.dim() >= 2, "batch_norm: expected an input with at least 2 dims (N, C, ...), got ", input.dim());
  const int64_t C = input.size(1);
  auto chk = [&](const at::Tensor& t, const char* name) {
    TORCH_CHECK(!t.defined() || t.numel() == C, "running_mean should contain ", C, " elements not ", t.numel());
    (void)name;
  };
  chk(w, "weight");
  chk(b, "bias");
  chk(rm, "running_mean");
  chk(rv, "running_var");
  check_float(input, "native_batch_norm");
  // The affine parameters and the running statistics each by that rule (a half input with half
  // parameters and float running statistics, as the module's tests use, is accepted, as on CUDA).
  check_param_dtypes(input, {&w, &b}, "batch_norm");
  check_param_dtypes(input, {&rm, &rv}, "batch_norm");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_forward(const at::Tensor& input, const at::Tensor& weight,
                                                                  const at::Tensor& bias, const at::Tensor& rm,
                                                                  const at::Tensor& rv, bool training, double momentum,
                                                                  double eps, at::Tensor* out_given = nullptr) {
  check_batch_norm(input, weight, bias, rm, rv);
  const int64_t C = input.size(1);
  const auto fopt = input.options().dtype(at::kFloat);
  const auto sd = stat_dtype(input, {&weight, &bias, &rm, &rv});
  at::Tensor mean, var, invstd;
  at::Tensor out = out_given ? *out_given : at::empty_like(input, at::MemoryFormat::Contiguous);
  if (out_given) at::native::resize_output(out, input.sizes());
  // (the result in the input's memory format, as CPU and CUDA give it; out= keeps its own)
  auto result = [&] { return out_given ? out : in_memory_format_of(out, input); };
  if (training) {
    const int64_t n = input.numel() / std::max<int64_t>(C, 1);
    TORCH_CHECK(n > 1 || input.numel() == 0, "Expected more than 1 value per channel when training, got input size ",
                input.sizes());
    if (sd == at::kFloat && bn_fused_ok(input, {&weight, &bias, &rm, &rv}, {&input})) {
      at::Tensor scale, shift;
      bn_stats_fused(input, weight, bias, rm, rv, momentum, eps, mean, invstd, scale, shift);
      apply_affine(input, scale, shift, out);
      return {result(), mean, invstd};
    }
    const at::Tensor x = input.to(at::kFloat);
    const auto dims = reduce_dims(input);
    // One Welford pass (the reductions' var_mean) instead of a mean, a squared-deviation tensor
    // and its mean: the CNN step's BatchNorm statistics were 7% of its GPU time on an H200.
    std::tie(var, mean) = at::var_mean(x, dims, /*correction=*/0, /*keepdim=*/false);
    invstd = (var + eps).rsqrt();
    if (rm.defined()) rm.copy_(rm.to(at::kFloat) * (1 - momentum) + mean * momentum);
    if (rv.defined()) rv.copy_(rv.to(at::kFloat) * (1 - momentum) + var * (momentum * double(n) / double(n - 1)));
  } else {
    TORCH_CHECK(rm.defined() && rv.defined(), "running_mean and running_var must be defined in evaluation mode");
    if (sd == at::kFloat && bn_fused_ok(input, {&weight, &bias, &rm, &rv}, {})) {
      at::Tensor scale, shift;
      bn_eval_affine(weight, bias, rm, rv, eps, scale, shift);
      apply_affine(input, scale, shift, out);
      return {result(), at::empty({0}, input.options().dtype(sd)), at::empty({0}, input.options().dtype(sd))};
    }
    mean = rm.to(at::kFloat);
    invstd = (rv.to(at::kFloat) + eps).rsqrt();
  }
  if (training && reduced(sd)) {  // CPU normalises with the saved statistics, rounded to their dtype
    mean = mean.to(sd).to(at::kFloat);
    invstd = invstd.to(sd).to(at::kFloat);
  }
  at::Tensor scale = weight.defined() ? invstd * weight.to(at::kFloat) : invstd;
  at::Tensor shift = -mean * scale;
  if (bias.defined()) shift = shift + bias.to(at::kFloat);
  if (input.numel() > 0) apply_affine(input, scale, shift, out);
  if (!training)
    return {result(), at::empty({0}, input.options().dtype(sd)), at::empty({0}, input.options().dtype(sd))};
  return {result(), mean.to(sd), invstd.to(sd)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(const at::Tensor& input,
                                                                 const std::optional<at::Tensor>& w,
                                                                 const std::optional<at::Tensor>& b,
                                                                 const std::optional<at::Tensor>& rm,
                                                                 const std::optional<at::Tensor>& rv, bool training,
                                                                 double momentum, double eps) {
  return batch_norm_forward(input, w.value_or(at::Tensor()), b.value_or(at::Tensor()), rm.value_or(at::Tensor()),
                            rv.value_or(at::Tensor()), training, momentum, eps);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> native_batch_norm_out(
    const at::Tensor& input, const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b,
    const std::optional<at::Tensor>& rm, const std::optional<at::Tensor>& rv, bool training, double momentum,
    double eps, at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  auto [o, m, s] =
      batch_norm_forward(input, w.value_or(at::Tensor()), b.value_or(at::Tensor()), rm.value_or(at::Tensor()),
                         rv.value_or(at::Tensor()), training, momentum, eps, &out);
  at::native::resize_output(save_mean, m.sizes());
  save_mean.copy_(m);
  at::native::resize_output(save_invstd, s.sizes());
  save_invstd.copy_(s);
  return std::forward_as_tuple(out, save_mean, save_invstd);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_legit(const at::Tensor& input,
                                                                const std::optional<at::Tensor>& w,
                                                                const std::optional<at::Tensor>& b, at::Tensor& rm,
                                                                at::Tensor& rv, bool training, double momentum,
                                                                double eps) {
  return batch_norm_forward(input, w.value_or(at::Tensor()), b.value_or(at::Tensor()), rm, rv, training, momentum, eps);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_legit_out(const at::Tensor& input,
                                                                       const std::optional<at::Tensor>& w,
                                                                       const std::optional<at::Tensor>& b,
                                                                       at::Tensor& rm, at::Tensor& rv, bool training,
                                                                       double momentum, double eps, at::Tensor& out,
                                                                       at::Tensor& save_mean, at::Tensor& save_invstd) {
  return native_batch_norm_out(input, w, b, rm, rv, training, momentum, eps, out, save_mean, save_invstd);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_legit_no_stats_out(
    const at::Tensor& input, const std::optional<at::Tensor>& w, const std::optional<at::Tensor>& b, bool training,
    double momentum, double eps, at::Tensor& out, at::Tensor& save_mean, at::Tensor& save_invstd) {
  return native_batch_norm_out(input, w, b, std::nullopt, std::nullopt, training, momentum, eps, out, save_mean,
                               save_invstd);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_legit_no_stats(const at::Tensor& input,
                                                                         const std::optional<at::Tensor>& w,
                                                                         const std::optional<at::Tensor>& b,
                                                                         bool training, double momentum, double eps) {
  return batch_norm_forward(input, w.value_or(at::Tensor()), b.value_or(at::Tensor()), at::Tensor(), at::Tensor(),
                            training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward_impl(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight, const at::Tensor& rm,
    const at::Tensor& rv, const at::Tensor& save_mean, const at::Tensor& save_invstd, bool train, double eps,
    std::array<bool, 3> mask) {
  check_float(input, "native_batch_norm_backward");
  const int64_t C = input.size(1);
  const int64_t n = input.numel() / std::max<int64_t>(C, 1);
  const auto cs = channel_shape(input);
  const auto dims = reduce_dims(input);
  at::Tensor mean, invstd;
  if (train) {
    mean = save_mean.to(at::kFloat);
    invstd = save_invstd.to(at::kFloat);
  } else {
    mean = rm.to(at::kFloat);
    invstd = (rv.to(at::kFloat) + eps).rsqrt();
  }
  at::Tensor gi, gw, gb;
  const at::ScalarType pd = weight.defined() ? weight.scalar_type() : input.scalar_type();
  if (train && pd == at::kFloat && bn_fused_ok(input, {&weight, &mean, &invstd}, {&input, &grad_out})) {
    at::Tensor coef;
    if (mask[1]) gw = at::empty({C}, input.options().dtype(at::kFloat));
    if (mask[2]) gb = at::empty({C}, input.options().dtype(at::kFloat));
    bn_grads_fused(grad_out, input, mean, invstd, weight, coef, gw, gb);
    if (mask[0]) {
      gi = at::empty_like(input, at::MemoryFormat::Contiguous);
      channel_pass("batch_norm_backward_train", gi,
                   {grad_out, input, coef[0].view(cs), coef[1].view(cs), coef[2].view(cs)}, "x1 * x3 + x2 * x4 + x5");
    }
    return {gi, gw, gb};
  }
  const at::Tensor w = weight.defined() ? weight.to(at::kFloat) : at::ones({C}, input.options().dtype(at::kFloat));
  at::Tensor sum_g, sum_gxh;
  if (input.numel() == 0) {
    sum_g = at::zeros({C}, input.options().dtype(at::kFloat));
    sum_gxh = at::zeros({C}, input.options().dtype(at::kFloat));
  } else if (train || mask[1] || mask[2]) {
    const at::Tensor g = grad_out.to(at::kFloat);
    sum_g = g.sum(dims);
    // g * xhat in one elementwise pass (xhat = (x - mean) * invstd, rounded as before), then its sum.
    at::Tensor gxh = at::empty(input.sizes(), input.options().dtype(at::kFloat));
    channel_pass("batch_norm_grad_xhat", gxh, {g, input, mean.view(cs), invstd.view(cs)}, "x1 * ((x2 - x3) * x4)");
    sum_gxh = gxh.sum(dims);
  }
  if (mask[0]) {
    gi = at::empty_like(input, at::MemoryFormat::Contiguous);
    if (input.numel() > 0) {
      const at::Tensor ws = w * invstd;
      if (train) {
        // gi = ws * (g - sum_g / n - xhat * sum_gxh / n) = g * ws + x * a + c per channel.
        const at::Tensor k = sum_gxh / double(n) * invstd;  // xhat * sum_gxh / n = (x - mean) * k
        const at::Tensor a = -ws * k;
        const at::Tensor c = ws * (mean * k - sum_g / double(n));
        channel_pass("batch_norm_backward_train", gi, {grad_out, input, ws.view(cs), a.view(cs), c.view(cs)},
                     "x1 * x3 + x2 * x4 + x5");
      } else {
        apply_affine(grad_out, ws, at::zeros({C}, input.options().dtype(at::kFloat)), gi);
      }
    }
  }
  if (mask[1]) gw = sum_gxh.to(pd);
  if (mask[2]) gb = sum_g.to(pd);
  return {gi, gw, gb};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& rm, const std::optional<at::Tensor>& rv,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> mask) {
  return batch_norm_backward_impl(grad_out, input, weight.value_or(at::Tensor()), rm.value_or(at::Tensor()),
                                  rv.value_or(at::Tensor()), save_mean.value_or(at::Tensor()),
                                  save_invstd.value_or(at::Tensor()), train, eps, mask);
}

// _batch_norm_with_update / batch_norm_backward (the training path of newer torch.func/compile).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_with_update(const at::Tensor& input,
                                                                                  const std::optional<at::Tensor>& w,
                                                                                  const std::optional<at::Tensor>& b,
                                                                                  at::Tensor& rm, at::Tensor& rv,
                                                                                  double momentum, double eps) {
  auto [o, m, s] =
      batch_norm_forward(input, w.value_or(at::Tensor()), b.value_or(at::Tensor()), rm, rv, true, momentum, eps);
  return {o, m, s, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& rm,
    const std::optional<at::Tensor>& rv, const std::optional<at::Tensor>& save_mean,
    const std::optional<at::Tensor>& save_var, bool update, double eps, std::array<bool, 3> mask, const at::Tensor&) {
  return batch_norm_backward_impl(grad_out, input, weight, rm.value_or(at::Tensor()), rv.value_or(at::Tensor()),
                                  save_mean.value_or(at::Tensor()), save_var.value_or(at::Tensor()), update, eps, mask);
}

// batch_norm's composite (_batch_norm_impl_index) makes its statistics of an empty input in CPU's
// accumulate type, float64 for float32 input, which webgpu refuses; ours are float32 (CUDA's choice).
// The rest is ATen's composite. Registered for AutogradPrivateUse1 too, so autograd still sees the
// composite's pieces.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, int64_t> batch_norm_impl_index(
    const at::Tensor& input, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps, bool cudnn_enabled) {
  if (input.numel() != 0)
    return at::native::_batch_norm_impl_index(input, weight, bias, running_mean, running_var, training, momentum, eps,
                                              cudnn_enabled);
  const int64_t c = input.dim() >= 2 ? input.size(1) : 0;  // CPU checks no parameter sizes here
  const auto opts = input.options().dtype(is_float(input.scalar_type()) ? at::kFloat : input.scalar_type());
  at::Tensor out = input.clone();  // not a view, not a fresh empty tensor: keeps the gradient chain
  if (weight.has_value() && weight->defined()) out = out * (*weight)[0];
  if (bias.has_value() && bias->defined()) out = out + (*bias)[0];
  return {out, at::empty({c}, opts), at::empty({c}, opts), at::empty({0}, input.options().dtype(at::kByte)), 0};
}

// ---------------------------------------------------------------------------------------------
// weight_norm: w = g * v / ||v||, the norm over every dim but `dim` (-1: over all of v). The norms
// are float for a half v, as CUDA's kernel keeps them; both passes are compositions of the device's
// reduction and pointwise kernels (ATen's _weight_norm calls this interface off the CPU).

std::vector<int64_t> weight_norm_dims(const at::Tensor& v, int64_t dim) {
  TORCH_CHECK(dim >= -1 && dim < std::max<int64_t>(v.dim(), 1), "_weight_norm_interface: dim ", dim,
              " is out of range for a weight of ", v.dim(), " dims");
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < v.dim(); ++i)
    if (i != dim) dims.push_back(i);
  return dims;
}

std::tuple<at::Tensor, at::Tensor> weight_norm_interface(const at::Tensor& v, const at::Tensor& g, int64_t dim) {
  TORCH_CHECK(v.device() == g.device(), "_weight_norm_interface: v and g must be on the same device, got ", v.device(),
              " and ", g.device());
  const auto acc = v.scalar_type() == at::kHalf ? at::kFloat : v.scalar_type();
  at::Tensor norms = at::linalg_vector_norm(v, 2, weight_norm_dims(v, dim), /*keepdim=*/true, acc);
  if (dim == -1) norms = norms.reshape(g.sizes());
  at::Tensor w = (v * (g / norms)).to(v.scalar_type());
  return {w, norms};
}

std::tuple<at::Tensor, at::Tensor> weight_norm_interface_backward(const at::Tensor& grad_w, const at::Tensor& saved_v,
                                                                  const at::Tensor& saved_g,
                                                                  const at::Tensor& saved_norms, int64_t dim) {
  weight_norm_dims(saved_v, dim);
  return at::_weight_norm_differentiable_backward(grad_w.contiguous(), saved_v, saved_g, saved_norms, dim);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.impl("_batch_norm_impl_index", TORCH_FN(batch_norm_impl_index)); }

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("_batch_norm_impl_index", TORCH_FN(batch_norm_impl_index));
  m.impl("native_layer_norm", TORCH_FN(native_layer_norm));
  m.impl("native_layer_norm_backward", TORCH_FN(native_layer_norm_backward));
  m.impl("native_group_norm", TORCH_FN(native_group_norm));
  m.impl("native_group_norm_backward", TORCH_FN(native_group_norm_backward));
  m.impl("native_batch_norm", TORCH_FN(native_batch_norm));
  m.impl("native_batch_norm.out", TORCH_FN(native_batch_norm_out));
  m.impl("_native_batch_norm_legit", TORCH_FN(batch_norm_legit));
  m.impl("_native_batch_norm_legit.no_stats", TORCH_FN(batch_norm_legit_no_stats));
  m.impl("_native_batch_norm_legit.out", TORCH_FN(batch_norm_legit_out));
  m.impl("_native_batch_norm_legit.no_stats_out", TORCH_FN(batch_norm_legit_no_stats_out));
  m.impl("native_batch_norm_backward", TORCH_FN(native_batch_norm_backward));
  m.impl("_batch_norm_with_update", TORCH_FN(batch_norm_with_update));
  m.impl("batch_norm_backward", TORCH_FN(batch_norm_backward));
  m.impl("_weight_norm_interface", TORCH_FN(weight_norm_interface));
  m.impl("_weight_norm_interface_backward", TORCH_FN(weight_norm_interface_backward));
}

}  // namespace
}  // namespace webgpu::ops
