// Pooling with gradients: max_pool2d/3d_with_indices, avg_pool2d/3d, _adaptive_avg_pool2d/3d,
// adaptive_max_pool2d/3d (kernels: wgsl/kernels/pool.wgsl). Argument checks and output sizes come from the op's
// own meta function (ATen's C++ meta class called directly, structured::meta_output; max_pool3d's shape checks;
// meta tensors for _adaptive_avg_pool2d/3d), so errors are CPU's; the kernels read contiguous input.
// 1d pools reach these through ATen's composites.
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/adaptive_max_pool2d_meta.h>
#include <ATen/ops/adaptive_max_pool2d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool3d_meta.h>
#include <ATen/ops/avg_pool2d_meta.h>
#include <ATen/ops/avg_pool2d_backward_meta.h>
#include <ATen/ops/avg_pool3d_meta.h>
#include <ATen/ops/max_pool2d_with_indices_meta.h>
#include <ATen/ops/max_pool2d_with_indices_backward_meta.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/nn_common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"
#include "ops/rows.h"
#include "ops/structured.h"

namespace webgpu::ops {
namespace {

struct PoolGeo {
  int dims = 2;
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
};

// kernel/stride/padding/dilation as the CPU pools read them (one value for all dims, or one per dim;
// an empty stride means the kernel size).
void fill(PoolGeo& g, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef pad, at::IntArrayRef dil) {
  const int o = 3 - g.dims;
  auto pick = [](at::IntArrayRef a, int i) { return a.size() == 1 ? a[0] : a[i]; };
  for (int i = 0; i < g.dims; ++i) {
    if (!kernel.empty()) g.k[o + i] = pick(kernel, i);
    g.s[o + i] = stride.empty() ? g.k[o + i] : pick(stride, i);
    if (!pad.empty()) g.p[o + i] = pick(pad, i);
    if (!dil.empty()) g.d[o + i] = pick(dil, i);
  }
}

void sizes_from(PoolGeo& g, const at::Tensor& in, at::IntArrayRef out_sizes) {
  const int o = 3 - g.dims;
  const int64_t r = in.dim();
  g.planes = 1;
  for (int64_t i = 0; i < r - g.dims; ++i) g.planes *= in.size(i);
  for (int i = 0; i < g.dims; ++i) {
    g.in[o + i] = in.size(r - g.dims + i);
    g.out[o + i] = out_sizes[r - g.dims + i];
  }
}

CT value_ct(at::ScalarType t) {
  if (at::isFloatingType(t)) return CT::F32;
  return t == at::kLong ? CT::I64 : CT::I32;
}

std::string value_prelude(CT ct) {
  if (ct == CT::F32)
    return "alias V = f32;\nfn v_lowest() -> V { return bitcast<f32>(0xff800000u | (P.n & 0u)); }\n"
           "fn v_better(v: V, b: V) -> bool { return v > b || (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }\nfn "
           "v_zero() -> V { return 0.0; }\n"
           "fn v_add(a: V, b: V) -> V { return a + b; }\nfn v_div(a: V, n: i32) -> V { return a / f32(n); }\n";
  if (ct == CT::I32)
    return "alias V = i32;\nfn v_lowest() -> V { return i32(-2147483647) - 1; }\n"
           "fn v_better(v: V, b: V) -> bool { return v > b; }\nfn v_zero() -> V { return 0; }\n"
           "fn v_add(a: V, b: V) -> V { return a + b; }\nfn v_div(a: V, n: i32) -> V { return a / n; }\n";
  return "alias V = vec2<u32>;\nfn v_lowest() -> V { return vec2<u32>(0u, 0x80000000u); }\n"
         "fn v_better(v: V, b: V) -> bool { return i64_lt(b, v); }\nfn v_zero() -> V { return vec2<u32>(0u, 0u); }\n"
         "fn v_add(a: V, b: V) -> V { return i64_add(a, b); }\n"
         "fn v_div(a: V, n: i32) -> V { return i64_div(a, i64_from_i32(n)); }\n";
}

// Parameters shared by every pool kernel (wgsl/kernels/pool.wgsl's header): n, the geometry per dim, the
// operands' offsets by name; avg pools add count_include_pad and divisor. The kernels read the
// grid helpers of wgsl/lib/nn_grid.wgsl.
using Offsets = std::initializer_list<std::pair<const char*, const at::Tensor*>>;
void pool_params(Kernel& k, const PoolGeo& g, uint64_t count, Offsets offsets) {
  k.param_index("n", int64_t(count));
  auto dims = [](const int64_t(&v)[3]) { return std::vector<int64_t>(v, v + 3); };
  k.param_array("in_size", dims(g.in));
  k.param_array("out_size", dims(g.out));
  k.param_array("k_size", dims(g.k));
  k.param_array("stride", dims(g.s));
  k.param_array("pad", dims(g.p));
  k.param_array("dil", dims(g.d));
  for (const auto& [name, t] : offsets) k.param_index(name, t->storage_offset());
  k.library("nn_grid");
}

void avg_params(Kernel& k, bool count_include_pad, int64_t divisor) {
  k.param("count_include_pad", count_include_pad ? 1u : 0u);
  TORCH_CHECK(divisor >= INT32_MIN && divisor <= INT32_MAX, "webgpu: pooling: divisor_override too large");
  k.param_i32("divisor", int32_t(divisor));
}

std::string adaptive_const(bool adaptive) {
  return std::string("const ADAPTIVE: bool = ") + (adaptive ? "true" : "false") + ";\n";
}

// Operands past the binding limit: the kernels treat planes independently, so a launch may take a
// slice of them, each contiguous operand viewed as (planes, per-plane elements) and bound as a window
// (ops/rows.h, for_each_slice). f(parts) launches over parts' planes.
template <class F>
void per_planes(const PoolGeo& g, std::vector<at::Tensor> ts, const char* op, F&& f) {
  for (at::Tensor& t : ts) t = t.view({g.planes, -1});
  for_each_slice(ts, g.planes, op, [&](const std::vector<at::Tensor>& parts, int64_t, int64_t) { f(parts); });
}

// Max pooling (windowed or adaptive) into contiguous out and indices.
void max_forward(const at::Tensor& in, const at::Tensor& out, const at::Tensor& idx, const PoolGeo& g, bool adaptive) {
  const uint64_t n = uint64_t(out.numel());
  if (n == 0) return;
  const CT ct = value_ct(in.scalar_type());
  per_planes(g, {in, out, idx}, adaptive ? "adaptive_max_pool" : "max_pool", [&](const std::vector<at::Tensor>& t) {
    const uint64_t m = uint64_t(t[1].numel());
    Kernel k(adaptive ? "pool:adaptive_max_fwd" : "pool:max_fwd");
    k.in(t[0], ct);
    k.out(t[1], ct);
    k.out(t[2], CT::I64);
    pool_params(k, g, m, {{"in_off", &t[0]}, {"out_off", &t[1]}, {"idx_off", &t[2]}});
    k.launch(grid(m), [&] {
      return per_element_main() + adaptive_const(adaptive) + value_prelude(ct) + kernel::section("pool", "max_fwd");
    });
  });
}

// Values and int64 indices of a max pool (adaptive or not) of self, of the sizes ATen's meta function
// gave; g has its window set, the sizes come from here.
// A result (output, indices, grad_input) in the memory format CPU and CUDA give it: a batched
// channels-last input keeps channels_last (3d) for them. The kernels compute contiguous NC(D)HW.
at::Tensor in_format_of(const at::Tensor& t, const at::Tensor& self, const PoolGeo& g) {
  return self.dim() == g.dims + 2 ? in_memory_format_of(t, self) : t;
}

std::tuple<at::Tensor, at::Tensor> max_pool_outputs(const at::Tensor& self, at::IntArrayRef sizes, PoolGeo& g,
                                                    bool adaptive) {
  at::Tensor in = self.contiguous();
  sizes_from(g, in, sizes);
  at::Tensor out = at::empty(sizes, self.options());
  at::Tensor idx = at::empty(sizes, self.options().dtype(at::kLong));
  max_forward(in, out, idx, g, adaptive);
  return {in_format_of(out, self, g), in_format_of(idx, self, g)};
}

// grad_input (contiguous, self's sizes) gathered by pool.wgsl's backward section `sec` from grad
// (contiguous), one invocation per input element. idx: max pools' indices; avg: avg_pool's
// count_include_pad and divisor_override.
struct AvgArgs {
  bool count_include_pad;
  int64_t divisor;
};
at::Tensor gather_backward(const char* key, const char* sec, const std::string& prefix, const at::Tensor& grad,
                           const at::Tensor& self, const PoolGeo& g, const at::Tensor* idx = nullptr,
                           const AvgArgs* avg = nullptr) {
  at::Tensor gi = at::empty(self.sizes(), self.options().memory_format(at::MemoryFormat::Contiguous));
  const uint64_t n = uint64_t(gi.numel());
  if (n == 0) return gi;
  if (grad.numel() == 0) return in_format_of(gi.zero_(), self, g);
  per_planes(g, {gi, grad, idx ? *idx : grad}, key, [&](const std::vector<at::Tensor>& t) {
    const uint64_t m = uint64_t(t[0].numel());
    Kernel k(key);
    k.in(t[1], CT::F32);
    if (idx) k.in(t[2], CT::I64);
    k.out(t[0], CT::F32);
    if (idx)
      pool_params(k, g, m, {{"grad_off", &t[1]}, {"idx_off", &t[2]}, {"gi_off", &t[0]}});
    else
      pool_params(k, g, m, {{"grad_off", &t[1]}, {"gi_off", &t[0]}});
    if (avg) avg_params(k, avg->count_include_pad, avg->divisor);
    k.launch(grid(m), [&] { return per_element_main() + prefix + kernel::section("pool", sec); });
  });
  return in_format_of(gi, self, g);
}

// Windows that cannot overlap: the stride at least the dilated window's span in every dim.
bool disjoint_windows(const PoolGeo& g) {
  for (int i = 0; i < 3; ++i)
    if ((g.k[i] - 1) * g.d[i] + 1 > g.s[i]) return false;
  return true;
}

// max_pool backward over disjoint windows (wgsl/kernels/pool_scatter.wgsl): a zero fill and one
// write per output at its argmax. float32 only: a scattered 16-bit store would share its word with
// a neighbour another invocation writes.
at::Tensor max_backward_scatter(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& idx,
                                const PoolGeo& g) {
  at::Tensor gi = at::zeros(self.sizes(), self.options().memory_format(at::MemoryFormat::Contiguous));
  const uint64_t n = uint64_t(grad.numel());
  if (n == 0) return in_format_of(gi, self, g);
  per_planes(g, {grad, idx, gi}, "max_pool_backward", [&](const std::vector<at::Tensor>& t) {
    Kernel k("pool:max_bwd_scatter");
    k.in(t[0], CT::F32);
    k.in(t[1], CT::I64);
    k.out(t[2], CT::F32);
    k.param_index("n", t[0].numel());
    k.param_index("in_vol", g.in[0] * g.in[1] * g.in[2]);
    k.param_index("out_vol", g.out[0] * g.out[1] * g.out[2]);
    k.param_index("grad_off", t[0].storage_offset());
    k.param_index("idx_off", t[1].storage_offset());
    k.param_index("gi_off", t[2].storage_offset());
    k.launch(grid(uint64_t(t[0].numel())), [] { return per_element_main() + kernel::library("pool_scatter"); });
  });
  return in_format_of(gi, self, g);
}

at::Tensor max_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& idx_, const PoolGeo& g,
                        bool adaptive) {
  const at::Tensor idx = idx_.contiguous();
  if (!adaptive && disjoint_windows(g) && self.scalar_type() == at::kFloat && grad.scalar_type() == at::kFloat)
    return max_backward_scatter(grad.contiguous(), self, idx, g);
  return gather_backward(adaptive ? "pool:adaptive_max_bwd" : "pool:max_bwd", "max_bwd", adaptive_const(adaptive),
                         grad.contiguous(), self, g, &idx);
}

void check_grad_dtype(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t.scalar_type()), "webgpu: \"", op, "\" not implemented for '",
                              c10::toString(t.scalar_type()), "'");
}

void copy_out(const at::Tensor& out, const at::Tensor& r) {
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
}

// ---- max_pool2d / 3d with indices ----

// max_pool3d's output size with CPU's argument and shape checks (its Meta key is a Python function,
// ~40 us of CPU a call): kernel, stride, padding and dilation of 1 or 3 values (stride: none for the
// kernel's), then ATen's pooling_output_shape and pool3d_shape_check.
std::vector<int64_t> max_pool3d_sizes(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride,
                                      at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  TORCH_CHECK(kernel.size() == 1 || kernel.size() == 3,
              "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
              "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 3,
              "max_pool3d: padding must either be a single int, or a tuple of three ints");
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 3,
              "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  auto at3 = [](at::IntArrayRef v, size_t i) {
    return c10::checked_convert<int, int64_t>(v[v.size() == 1 ? 0 : i], "int");
  };
  const at::IntArrayRef st = stride.empty() ? kernel : stride;
  const int kT = at3(kernel, 0), kH = at3(kernel, 1), kW = at3(kernel, 2);
  const int dT = at3(st, 0), dH = at3(st, 1), dW = at3(st, 2);
  const int pT = at3(padding, 0), pH = at3(padding, 1), pW = at3(padding, 2);
  const int lT = at3(dilation, 0), lH = at3(dilation, 1), lW = at3(dilation, 2);
  const int64_t C = self.size(-4), T = self.size(-3), H = self.size(-2), W = self.size(-1);
  const int64_t oT = at::native::pooling_output_shape<int64_t>(T, kT, pT, dT, lT, ceil_mode);
  const int64_t oH = at::native::pooling_output_shape<int64_t>(H, kH, pH, dH, lH, ceil_mode);
  const int64_t oW = at::native::pooling_output_shape<int64_t>(W, kW, pW, dW, lW, ceil_mode);
  at::native::pool3d_shape_check(self, C, kT, kH, kW, dT, dH, dW, pT, pH, pW, lT, lH, lW, T, H, W, oT, oH, oW,
                                 "max_pool3d_with_indices_out_cpu_template()");
  std::vector<int64_t> out = self.sizes().vec();
  out[out.size() - 3] = oT;
  out[out.size() - 2] = oH;
  out[out.size() - 1] = oW;
  return out;
}

std::tuple<at::Tensor, at::Tensor> max_pool_nd(int dims, const at::Tensor& self, at::IntArrayRef kernel,
                                               at::IntArrayRef stride, at::IntArrayRef padding,
                                               at::IntArrayRef dilation, bool ceil_mode) {
  const std::vector<int64_t> osize = dims == 2
                                         ? structured::meta_output<at::meta::structured_max_pool2d_with_indices, 2>(
                                               0, self, kernel, stride, padding, dilation, ceil_mode)
                                               .sizes()
                                               .vec()
                                         : max_pool3d_sizes(self, kernel, stride, padding, dilation, ceil_mode);
  PoolGeo g;
  g.dims = dims;
  fill(g, kernel, stride, padding, dilation);
  auto r = max_pool_outputs(self, osize, g, false);
  if (dims == 3 && self.dim() == 4) {
    // Unbatched (C, D, H, W) whose batch of one is channels_last_3d and not contiguous (a slice of a
    // channels_last_3d batch): CPU gives the results that layout (adaptive and average pools do not).
    const at::Tensor batch = self.unsqueeze(0);
    if (!batch.is_contiguous() && batch.is_contiguous(at::MemoryFormat::ChannelsLast3d))
      for (at::Tensor* t : {&std::get<0>(r), &std::get<1>(r)})
        *t = t->unsqueeze(0).contiguous(at::MemoryFormat::ChannelsLast3d).squeeze(0);
  }
  return r;
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_wi(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                                 at::IntArrayRef p, at::IntArrayRef d, bool c) {
  return max_pool_nd(2, self, k, s, p, d, c);
}
std::tuple<at::Tensor&, at::Tensor&> max_pool2d_wi_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                                       at::IntArrayRef p, at::IntArrayRef d, bool c, at::Tensor& out,
                                                       at::Tensor& idx) {
  auto r = max_pool_nd(2, self, k, s, p, d, c);
  copy_out(out, std::get<0>(r));
  copy_out(idx, std::get<1>(r));
  return {out, idx};
}
std::tuple<at::Tensor, at::Tensor> max_pool3d_wi(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                                 at::IntArrayRef p, at::IntArrayRef d, bool c) {
  return max_pool_nd(3, self, k, s, p, d, c);
}

at::Tensor max_pool_nd_backward(int dims, const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel,
                                at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                                bool ceil_mode, const at::Tensor& indices) {
  check_grad_dtype(self, dims == 2 ? "max_pool2d_with_indices_backward" : "max_pool3d_with_indices_backward");
  if (dims == 2)
    structured::meta_output<at::meta::structured_max_pool2d_with_indices_backward>(
        0, grad, self, kernel, stride, padding, dilation, ceil_mode, indices);
  PoolGeo g;
  g.dims = dims;
  fill(g, kernel, stride, padding, dilation);
  sizes_from(g, self, grad.sizes());
  TORCH_CHECK(indices.sizes() == grad.sizes(), "webgpu: max_pool", dims, "d_with_indices_backward: indices of size ",
              indices.sizes(), " do not match grad_output of size ", grad.sizes());
  return max_backward(grad, self, indices, g, false);
}

at::Tensor max_pool2d_wi_bwd(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                             at::IntArrayRef p, at::IntArrayRef d, bool c, const at::Tensor& idx) {
  return max_pool_nd_backward(2, grad, self, k, s, p, d, c, idx);
}
at::Tensor& max_pool2d_wi_bwd_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                  at::IntArrayRef p, at::IntArrayRef d, bool c, const at::Tensor& idx, at::Tensor& gi) {
  copy_out(gi, max_pool_nd_backward(2, grad, self, k, s, p, d, c, idx));
  return gi;
}
at::Tensor max_pool3d_wi_bwd(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                             at::IntArrayRef p, at::IntArrayRef d, bool c, const at::Tensor& idx) {
  return max_pool_nd_backward(3, grad, self, k, s, p, d, c, idx);
}

// ---- avg_pool2d / 3d ----

at::Tensor avg_pool_nd(int dims, const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride,
                       at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                       std::optional<int64_t> divisor) {
  // (CPU's message; torch 2.11's avg_pool3d meta function does not check it)
  TORCH_CHECK(!divisor.has_value() || *divisor != 0, "divisor must be not zero");
  at::Tensor m = dims == 2 ? structured::meta_output<at::meta::structured_avg_pool2d>(
                                 0, self, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
                           : structured::meta_output<at::meta::structured_avg_pool3d>(
                                 0, self, kernel, stride, padding, ceil_mode, count_include_pad, divisor);
  const auto st = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(st) || st == at::kLong, "webgpu: \"avg_pool", dims,
                              "d\" not implemented for '", c10::toString(st), "'");
  PoolGeo g;
  g.dims = dims;
  fill(g, kernel, stride, padding, {});
  at::Tensor in = self.contiguous();
  sizes_from(g, in, m.sizes());
  at::Tensor out = at::empty(m.sizes(), self.options());
  const uint64_t n = uint64_t(out.numel());
  if (n == 0) return out;
  const CT ct = value_ct(st);
  per_planes(g, {in, out}, dims == 2 ? "avg_pool2d" : "avg_pool3d", [&](const std::vector<at::Tensor>& t) {
    Kernel k("pool:avg_fwd");
    k.in(t[0], ct);
    k.out(t[1], ct);
    pool_params(k, g, uint64_t(t[1].numel()), {{"in_off", &t[0]}, {"out_off", &t[1]}});
    avg_params(k, count_include_pad, divisor.value_or(0));
    k.launch(grid(uint64_t(t[1].numel())),
             [&] { return per_element_main() + value_prelude(ct) + kernel::section("pool", "avg_fwd"); });
  });
  return in_memory_format_of(out, m);  // (the meta function's: avg_pool3d's output is contiguous)
}

at::Tensor avg_pool_nd_backward(int dims, const at::Tensor& grad_, const at::Tensor& self, at::IntArrayRef kernel,
                                at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                std::optional<int64_t> divisor) {
  TORCH_CHECK(!divisor.has_value() || *divisor != 0, "divisor must be not zero");
  if (dims == 2)
    structured::meta_output<at::meta::structured_avg_pool2d_backward>(0, grad_, self, kernel, stride, padding,
                                                                      ceil_mode, count_include_pad, divisor);
  check_grad_dtype(self, dims == 2 ? "avg_pool2d_backward" : "avg_pool3d_backward");
  PoolGeo g;
  g.dims = dims;
  fill(g, kernel, stride, padding, {});
  const at::Tensor grad = grad_.contiguous();
  sizes_from(g, self, grad.sizes());
  const AvgArgs avg{count_include_pad, divisor.value_or(0)};
  return gather_backward("pool:avg_bwd", "avg_bwd", adaptive_const(false), grad, self, g, nullptr, &avg);
}

at::Tensor avg_pool2d_fn(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool c,
                         bool cip, std::optional<int64_t> d) {
  return avg_pool_nd(2, self, k, s, p, c, cip, d);
}
at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool c,
                           bool cip, std::optional<int64_t> d, at::Tensor& out) {
  copy_out(out, avg_pool_nd(2, self, k, s, p, c, cip, d));
  return out;
}
at::Tensor avg_pool3d_fn(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool c,
                         bool cip, std::optional<int64_t> d) {
  return avg_pool_nd(3, self, k, s, p, c, cip, d);
}
at::Tensor avg_pool2d_bwd(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                          at::IntArrayRef p, bool c, bool cip, std::optional<int64_t> d) {
  return avg_pool_nd_backward(2, grad, self, k, s, p, c, cip, d);
}
at::Tensor& avg_pool2d_bwd_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                               at::IntArrayRef p, bool c, bool cip, std::optional<int64_t> d, at::Tensor& gi) {
  copy_out(gi, avg_pool_nd_backward(2, grad, self, k, s, p, c, cip, d));
  return gi;
}
at::Tensor avg_pool3d_bwd(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                          at::IntArrayRef p, bool c, bool cip, std::optional<int64_t> d) {
  return avg_pool_nd_backward(3, grad, self, k, s, p, c, cip, d);
}

// ---- adaptive pools ----

at::Tensor adaptive_avg_nd(int dims, const at::Tensor& self, c10::SymIntArrayRef osize) {
  at::Tensor m = dims == 2 ? at::_adaptive_avg_pool2d_symint(meta_of(self), osize)
                           : at::_adaptive_avg_pool3d_symint(meta_of(self), osize);
  check_grad_dtype(self, dims == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d");
  PoolGeo g;
  g.dims = dims;
  at::Tensor in = self.contiguous();
  sizes_from(g, in, m.sizes());
  at::Tensor out = at::empty(m.sizes(), self.options());
  const uint64_t n = uint64_t(out.numel());
  if (n == 0) return out;
  per_planes(g, {in, out}, "adaptive_avg_pool", [&](const std::vector<at::Tensor>& t) {
    Kernel k("pool:aavg_fwd");
    k.in(t[0], CT::F32);
    k.out(t[1], CT::F32);
    pool_params(k, g, uint64_t(t[1].numel()), {{"in_off", &t[0]}, {"out_off", &t[1]}});
    k.launch(grid(uint64_t(t[1].numel())),
             [&] { return per_element_main() + kernel::section("pool", "adaptive_avg_fwd"); });
  });
  return in_memory_format_of(out, m);
}

// CPU's check of an adaptive pool's backward (its meta functions do not make it for every op and
// torch version): an empty non-batch dimension of grad_output is an error, not an empty gradient.
void check_grad_nonempty(const at::Tensor& grad, const char* op) {
  for (int64_t i = 1; i < grad.dim(); ++i)
    TORCH_CHECK(grad.size(i) > 0, op,
                "(): Expected grad_output to have non-zero size for non-batch dimensions, but grad_output has sizes ",
                grad.sizes(), " with dimension ", i, " being empty");
}

at::Tensor adaptive_avg_nd_backward(int dims, const at::Tensor& grad_, const at::Tensor& self) {
  check_grad_nonempty(grad_, dims == 2 ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool3d_backward");
  check_grad_dtype(self, dims == 2 ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool3d_backward");
  TORCH_CHECK(grad_.dim() == self.dim(), "webgpu: adaptive_avg_pool", dims,
              "d_backward: grad_output and input ranks differ");
  PoolGeo g;
  g.dims = dims;
  const at::Tensor grad = grad_.contiguous();
  sizes_from(g, self, grad.sizes());
  const AvgArgs unused{false, 0};  // avg_bwd's adaptive windows ignore them
  return gather_backward("pool:aavg_bwd", "avg_bwd", adaptive_const(true), grad, self, g, nullptr, &unused);
}

at::Tensor aavg2d(const at::Tensor& self, c10::SymIntArrayRef o) { return adaptive_avg_nd(2, self, o); }
at::Tensor aavg3d(const at::Tensor& self, c10::SymIntArrayRef o) { return adaptive_avg_nd(3, self, o); }
at::Tensor aavg2d_bwd(const at::Tensor& g, const at::Tensor& self) { return adaptive_avg_nd_backward(2, g, self); }
at::Tensor aavg3d_bwd(const at::Tensor& g, const at::Tensor& self) { return adaptive_avg_nd_backward(3, g, self); }

std::tuple<at::Tensor, at::Tensor> adaptive_max_nd(int dims, const at::Tensor& self, at::IntArrayRef osize) {
  const at::Tensor m = dims == 2 ? structured::meta_output<at::meta::structured_adaptive_max_pool2d, 2>(0, self, osize)
                                 : structured::meta_output<at::meta::structured_adaptive_max_pool3d, 2>(0, self, osize);
  check_grad_dtype(self, dims == 2 ? "adaptive_max_pool2d" : "adaptive_max_pool3d");
  PoolGeo g;
  g.dims = dims;
  return max_pool_outputs(self, m.sizes(), g, true);
}

std::tuple<at::Tensor, at::Tensor> amax2d(const at::Tensor& self, at::IntArrayRef o) {
  return adaptive_max_nd(2, self, o);
}
std::tuple<at::Tensor&, at::Tensor&> amax2d_out(const at::Tensor& self, at::IntArrayRef o, at::Tensor& out,
                                                at::Tensor& idx) {
  auto r = adaptive_max_nd(2, self, o);
  copy_out(out, std::get<0>(r));
  copy_out(idx, std::get<1>(r));
  return {out, idx};
}
std::tuple<at::Tensor, at::Tensor> amax3d(const at::Tensor& self, at::IntArrayRef o) {
  return adaptive_max_nd(3, self, o);
}

at::Tensor adaptive_max_nd_backward(int dims, const at::Tensor& grad, const at::Tensor& self, const at::Tensor& idx) {
  if (dims == 2) structured::meta_output<at::meta::structured_adaptive_max_pool2d_backward>(0, grad, self, idx);
  check_grad_nonempty(grad, dims == 2 ? "adaptive_max_pool2d_backward" : "adaptive_max_pool3d_backward");
  check_grad_dtype(self, dims == 2 ? "adaptive_max_pool2d_backward" : "adaptive_max_pool3d_backward");
  PoolGeo g;
  g.dims = dims;
  sizes_from(g, self, grad.sizes());
  return max_backward(grad, self, idx, g, true);
}
at::Tensor amax2d_bwd(const at::Tensor& g, const at::Tensor& self, const at::Tensor& idx) {
  return adaptive_max_nd_backward(2, g, self, idx);
}
at::Tensor& amax2d_bwd_out(const at::Tensor& g, const at::Tensor& self, const at::Tensor& idx, at::Tensor& gi) {
  copy_out(gi, adaptive_max_nd_backward(2, g, self, idx));
  return gi;
}
at::Tensor amax3d_bwd(const at::Tensor& g, const at::Tensor& self, const at::Tensor& idx) {
  return adaptive_max_nd_backward(3, g, self, idx);
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  WEBGPU_IMPL_OUT(m, "max_pool2d_with_indices", "out", max_pool2d_wi);
  WEBGPU_IMPL_OUT(m, "max_pool2d_with_indices_backward", "grad_input", max_pool2d_wi_bwd);
  m.impl("max_pool3d_with_indices", TORCH_FN(max_pool3d_wi));
  m.impl("max_pool3d_with_indices_backward", TORCH_FN(max_pool3d_wi_bwd));
  m.impl("avg_pool2d", TORCH_FN(avg_pool2d_fn));
  m.impl("avg_pool2d.out", TORCH_FN(avg_pool2d_out));
  WEBGPU_IMPL_OUT(m, "avg_pool2d_backward", "grad_input", avg_pool2d_bwd);
  m.impl("avg_pool3d", TORCH_FN(avg_pool3d_fn));
  m.impl("avg_pool3d_backward", TORCH_FN(avg_pool3d_bwd));
  m.impl("_adaptive_avg_pool2d", TORCH_FN(aavg2d));
  m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(aavg2d_bwd));
  m.impl("_adaptive_avg_pool3d", TORCH_FN(aavg3d));
  m.impl("_adaptive_avg_pool3d_backward", TORCH_FN(aavg3d_bwd));
  WEBGPU_IMPL_OUT(m, "adaptive_max_pool2d", "out", amax2d);
  WEBGPU_IMPL_OUT(m, "adaptive_max_pool2d_backward", "grad_input", amax2d_bwd);
  m.impl("adaptive_max_pool3d", TORCH_FN(amax3d));
  m.impl("adaptive_max_pool3d_backward", TORCH_FN(amax3d_bwd));
}
