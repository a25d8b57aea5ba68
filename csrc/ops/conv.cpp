// Convolutions (1d/2d/3d, transposed, strides, padding, dilation, groups) with input, weight and bias
// gradients. ATen's at::convolution does the argument checks and sends a device it has no backend for to
// convolution_overrideable / convolution_backward_overrideable, which are implemented here. Every
// product is one implicit-GEMM kernel (wgsl/kernels/conv.wgsl) in one of three modes over the same geometry:
// X the large side, Y the small side, W [G*Co, Ci, k...], x = y*stride - pad + k*dilation.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <utility>

#include "engines/gemm.h"
#include "core/fallback.h"
#include "kernel/env.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/nn_common.h"
#include "ops/rows.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

constexpr uint32_t kBM = 64, kBN = 64;
constexpr int64_t kBK = 16;

struct Geo {
  int64_t N = 0, G = 1, Ci = 0, Co = 0;
  int64_t xs[3] = {1, 1, 1}, ys[3] = {1, 1, 1}, ks[3] = {1, 1, 1};
  int64_t st[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, dl[3] = {1, 1, 1};
  int64_t XS() const { return xs[0] * xs[1] * xs[2]; }
  int64_t YS() const { return ys[0] * ys[1] * ys[2]; }
  int64_t KS() const { return ks[0] * ks[1] * ks[2]; }
};

void check_dtype(const at::Tensor& t, const char* op) {
  const auto s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(s == at::kFloat || s == at::kHalf || s == at::kBFloat16 || s == at::kLong, "webgpu: ", op,
                              " not implemented for '", c10::toString(s), "'");
}

// Fills the spatial parts of g; dims is 1, 2 or 3 (leading entries stay 1 / 0).
void fill_geo(Geo& g, int dims, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation) {
  const int o = 3 - dims;
  auto at_ = [&](at::IntArrayRef a, int i) { return a.size() == 1 ? a[0] : a[i]; };
  for (int i = 0; i < dims; ++i) {
    g.st[o + i] = at_(stride, i);
    g.pd[o + i] = at_(padding, i);
    g.dl[o + i] = at_(dilation, i);
  }
}

// The geometry common to forward and backward: batch, groups, kernel size, stride, padding, dilation.
Geo geo_of(const at::Tensor& input, const at::Tensor& weight, int64_t groups, int dims, at::IntArrayRef stride,
           at::IntArrayRef padding, at::IntArrayRef dilation) {
  Geo g;
  g.N = input.size(0);
  g.G = groups;
  fill_geo(g, dims, stride, padding, dilation);
  const int o = 3 - dims;
  for (int i = 0; i < dims; ++i) g.ks[o + i] = weight.size(2 + i);
  return g;
}

// One implicit-GEMM launch. mode 0: out = Y from A = X, B = W; 1: out = X from A = Y, B = W;
// 2: out = W (or split-K partials, f32) from A = Y, B = X.
void run_gemm(int mode, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out, const at::Tensor& bias,
              const Geo& g, int64_t splits = 1, int64_t kchunk = 0) {
  int64_t M, NC, K;
  if (mode == 0) {
    M = g.N * g.YS();
    NC = g.Co;
    K = g.Ci * g.KS();
  } else if (mode == 1) {
    M = g.N * g.XS();
    NC = g.Ci;
    K = g.Co * g.KS();
  } else {
    M = g.Co;
    NC = g.Ci * g.KS();
    K = g.N * g.YS();
  }
  if (M == 0 || NC == 0 || g.G == 0) return;
  if (kchunk == 0) kchunk = K;
  const int64_t tilesM = grid(M, kBM), tilesN = grid(NC, kBN);
  const bool has_bias = bias.defined();
  // int64 (CPU supports it) accumulates exactly; the float types in float32.
  const CT ct = a.scalar_type() == at::kLong ? CT::I64 : CT::F32;
  Kernel k(std::string("conv:") + std::to_string(mode));
  k.in(a, ct);
  k.in(b, ct);
  k.out(out, ct);
  k.in(has_bias ? bias : b, ct);
  k.param_index("groups", g.G);
  k.param_index("c_in", g.Ci);
  k.param_index("c_out", g.Co);
  // Per spatial dim (depth, height, width; leading ones 1 / 0 below 3-d): sizes of X, Y and the
  // kernel, stride, padding, dilation.
  k.param_array("x_size", std::vector<int64_t>(g.xs, g.xs + 3));
  k.param_array("y_size", std::vector<int64_t>(g.ys, g.ys + 3));
  k.param_array("k_size", std::vector<int64_t>(g.ks, g.ks + 3));
  k.param_array("stride", std::vector<int64_t>(g.st, g.st + 3));
  k.param_array("pad", std::vector<int64_t>(g.pd, g.pd + 3));
  k.param_array("dilation", std::vector<int64_t>(g.dl, g.dl + 3));
  k.param_index("a_off", a.storage_offset());
  k.param_index("b_off", b.storage_offset());
  k.param_index("out_off", out.storage_offset());
  k.param_index("bias_off", has_bias ? bias.storage_offset() : 0);
  k.param("has_bias", has_bias ? 1u : 0u);
  k.param_index("M", M);
  k.param_index("NC", NC);
  k.param_index("K", K);
  k.param_index("tiles_m", tilesM);
  k.param_index("tiles_n", tilesN);
  k.param_index("part_size", out.numel() / splits);
  k.param_index("k_chunk", kchunk);
  k.param_index("splits", splits);
  const uint64_t wgs = uint64_t(splits) * g.G * tilesM * tilesN;
  k.launch(wgs, [mode, ct] {
    std::string s = "const MODE: u32 = " + std::to_string(mode) + "u;\n";
    if (ct == CT::I64)
      s += "alias T = vec2<u32>;\nfn t_zero() -> T { return vec2<u32>(0u, 0u); }\n"
           "fn t_mad(c: T, a: T, b: T) -> T { return i64_add(c, i64_mul(a, b)); }\n"
           "fn t_add(a: T, b: T) -> T { return i64_add(a, b); }\n";
    else
      s += "alias T = f32;\nfn t_zero() -> T { return 0.0; }\nfn t_mad(c: T, a: T, b: T) -> T { return c + a * b; }\n"
           "fn t_add(a: T, b: T) -> T { return a + b; }\n";
    // X is operand 0 (the source A) in modes 0 and 1, operand 1 (B) in mode 2.
    const bool x_is_b = mode == 2;
    s += std::string("fn x_off() -> u32 { return ") + (x_is_b ? "P.b_off" : "P.a_off") + "; }\n" +
         "fn ld_x(e: u32) -> T { return " + (x_is_b ? "ld1" : "ld0") + "(e); }\n" +
         "fn ld_y(e: u32) -> T { return ld0(e); }\nfn ld_w(e: u32) -> T { return ld1(e); }\n";
    return s + kernel::library("conv");
  });
}

// o3 [N, Co, P] = w3 [N, Co, K] @ b3 [N, K, P] (+ bias [Co] on every position): a forward
// convolution's batched GEMM (cols_gemm, pointwise_gemm).
void gemm_plus_bias(const at::Tensor& o3, const at::Tensor& w3, const at::Tensor& b3, const at::Tensor& bias) {
  if (bias.defined())
    engines::gemm(o3, w3, b3, bias.view({1, o3.size(1), 1}).expand(o3.sizes()), 1, 1, "convolution");
  else
    engines::gemm(o3, w3, b3, at::Tensor(), 0, 1, "convolution");
}

// The GEMM form of a forward convolution (groups 1): the input's columns [N, Ci*KS, YS]
// (wgsl/kernels/conv_cols.wgsl), then out[n] = W [Co, Ci*KS] @ cols[n] (+ bias) as one batched
// GEMM, which for float16 runs on the matrix units where the adapter has them (engines/gemm.cpp).
// TORCH_WEBGPU_CONV_GEMM: 1 takes it for every float dtype it can serve (tests on any adapter),
// 0 never; by default float16 on adapters whose f16 GEMMs use the matrix units. Batches are
// split so that the columns stay under 256 MiB and the adapter's largest storage binding.
bool cols_gemm_wanted(const at::Tensor& input, const Geo& g) {
  const auto dt = input.scalar_type();
  if (g.G != 1 || g.YS() % 2 != 0 || !(dt == at::kHalf || dt == at::kFloat || dt == at::kBFloat16)) return false;
  if (const int on = kernel::env_switch("TORCH_WEBGPU_CONV_GEMM", -1); on >= 0) return on == 1;
  return dt == at::kHalf && g.Ci * g.KS() >= 16 && g.Co >= 16 && engines::half_gemm_uses_matrix_units(input);
}

void cols_gemm(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& out,
               const Geo& g) {
  const int64_t KC = g.Ci * g.KS(), YS = g.YS();
  const int64_t per_image = KC * YS * int64_t(input.element_size());  // bytes of one image's columns
  const int64_t cap = std::min<int64_t>(int64_t(256) << 20, int64_t(kernel::device_info(input).max_binding));
  const int64_t chunk = std::max<int64_t>(1, cap / std::max<int64_t>(per_image, 1));
  const at::Tensor w3 = weight.reshape({1, g.Co, KC});
  const bool half = input.scalar_type() == at::kHalf;
  for (int64_t n0 = 0; n0 < g.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.N - n0);
    const at::Tensor x = input.narrow(0, n0, nb);
    const at::Tensor cols = at::empty({nb, KC, YS}, input.options());
    const int64_t n = half ? cols.numel() / 2 : cols.numel();
    // The geometry is compiled in (wgsl/kernels/conv_cols.wgsl): part of the kernel's key.
    std::string consts;
    auto add = [&](const char* name, const int64_t* v, const char* type) {
      for (int i = 0; i < 3; ++i)
        consts += std::string("const ") + name + std::to_string(i) + ": " + type + " = " + std::to_string(v[i]) +
                  (type[0] == 'u' ? "u;\n" : ";\n");
    };
    add("X", g.xs, "u32");
    add("Y", g.ys, "u32");
    add("K", g.ks, "u32");
    add("S", g.st, "i32");
    add("D", g.pd, "i32");
    add("L", g.dl, "i32");
    Kernel k(std::string("conv:cols:") + (half ? "h:" : "e:") + consts);
    k.in(x, CT::F32);
    k.out(cols, half ? CT::RAW : CT::F32);
    k.param_index("n", n);
    k.param_index("x_off", x.storage_offset());
    k.param_index(half ? "cols_word" : "cols_off", half ? cols.storage_offset() / 2 : cols.storage_offset());
    k.launch(grid(uint64_t(n)), [half, &consts] {
      return consts + per_element_main() + kernel::library("conv_cols") +
             (half ? "fn run(t: u32) {\n  wr1(P.cols_word + t, pack2x16float(vec2<f32>(cols_value(2u * t), "
                     "cols_value(2u * t + 1u))));\n}\n"
                   : "fn run(t: u32) { st1(P.cols_off + t, cols_value(t)); }\n");
    });
    const at::Tensor o3 = out.narrow(0, n0, nb).view({nb, g.Co, YS});
    const at::Tensor wexp = w3.expand({nb, g.Co, KC});
    gemm_plus_bias(o3, wexp, cols, bias);
  }
}

// A 1x1 convolution with unit stride, no padding and one group (forward or transposed) is a batched
// GEMM on the tensors as they are: out[n] [Co, P] = W [Co, Ci] @ x[n] [Ci, P] (transposed: W's two
// channel dims swapped, a strided view), P the positions. No gathered loads and no columns: a
// gathered GEMM's per-tile index work dominated such convolutions (lavapipe: a 4M-position
// single-channel ConvTranspose3d took 2.2 s, 0.02 s on CPU).
// (A transposed one's output_padding, allowed below its dilation, would add positions.)
bool pointwise_gemm_wanted(const at::Tensor& input, const Geo& g, at::IntArrayRef output_padding) {
  const auto dt = input.scalar_type();
  if (g.G != 1 || !(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16)) return false;
  for (int i = 0; i < 3; ++i)
    if (g.ks[i] != 1 || g.st[i] != 1 || g.pd[i] != 0) return false;
  for (const int64_t p : output_padding)
    if (p != 0) return false;
  return kernel::env_switch("TORCH_WEBGPU_CONV_POINTWISE", 1) == 1;
}

// The matrix F [Cout, Cin] of a 1x1 convolution (out[n] = F @ x[n]): the weight, or a view of it with
// its channel dims swapped when transposed.
at::Tensor pointwise_matrix(const at::Tensor& weight, bool transposed) {
  const at::Tensor w2 = weight.view({weight.size(0), weight.size(1)});
  return transposed ? w2.t() : w2;
}

void pointwise_gemm(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& out,
                    bool transposed) {
  const int64_t N = out.size(0), Co = out.size(1), Ci = input.size(1), P = out.numel() / std::max<int64_t>(N * Co, 1);
  gemm_plus_bias(out.view({N, Co, P}), pointwise_matrix(weight, transposed).unsqueeze(0).expand({N, Co, Ci}),
                 input.view({N, Ci, P}), bias);
}

// ---------------------------------------------------------------------------------------------
// Implicit GEMMs on the register-tiled GEMM kernel (engines::gemm_gathered): the operand that
// would be the input's columns is gathered by wgsl/kernels/conv_gather.wgsl as the kernel stages its
// tiles, so nothing is written to memory in between; per group (one launch each), with the images
// as the GEMM's batch:
//   forward          out[i] [Co, YS]      = W [Co, Ci*KS]   @ cols(X[i]) [Ci*KS, YS]   (+ bias)
//   input gradient   gX[i]  [Ci, XS]      = W' [Ci, Co*KS]  @ rows(gY[i]) [Co*KS, XS]
//                    (W' = W with its two channel dims swapped: a small copy)
//   weight gradient  gW     [Co, Ci*KS]   = gY [Co, N*YS]   @ cols(X) [N*YS, Ci*KS]    (split-K)
// The transposed convolution's forward and input gradient are the last two forms with the sides
// swapped. TORCH_WEBGPU_CONV_IMPLICIT=0 keeps wgsl/kernels/conv.wgsl's kernel for everything.
bool implicit_wanted(const at::Tensor& t, const Geo& g) {
  const auto dt = t.scalar_type();
  if (!(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16)) return false;
  if (const int on = kernel::env_switch("TORCH_WEBGPU_CONV_IMPLICIT", -1); on >= 0) return on == 1;
  // Grouped convolutions with few channels per group (depthwise) keep the direct kernel: one GEMM
  // launch per group would be mostly empty tiles.
  return g.G == 1 || std::min(g.Ci, g.Co) >= 16;
}

// The geometry as WGSL constants, which the gathered loaders of wgsl/kernels/conv_gather.wgsl read:
// built per call for the pipeline's key; the loaders' section is added only when a pipeline is built
// (engines::Gathered::wgsl).
std::string gather_consts(const Geo& g) {
  std::string s;
  auto add = [&](const char* name, const int64_t* v, bool i32) {
    for (int i = 0; i < 3; ++i)
      s += std::string("const ") + name + std::to_string(i) + (i32 ? ": i32 = " : ": u32 = ") + std::to_string(v[i]) +
           (i32 ? ";\n" : "u;\n");
  };
  add("X", g.xs, false);
  add("Y", g.ys, false);
  add("K", g.ks, false);
  add("S", g.st, true);
  add("D", g.pd, true);
  add("L", g.dl, true);
  // Channels per group and per position of a channels-last input (forward_nhwc).
  s += "const CI: u32 = " + std::to_string(g.Ci) + "u;\nconst XC: u32 = " + std::to_string(g.G * g.Ci) + "u;\n";
  return s;
}

// [N, G*C, S] as the 3-d view of group g's channels: [N, C, S].
at::Tensor group_view(const at::Tensor& t, const Geo& g, int64_t C, int64_t S, int64_t gi) {
  return t.view({g.N, g.G * C, S}).narrow(1, gi * C, C);
}

// Group gi's part of bias ([G*C]) as the GEMM's C operand over [N, C, S] (undefined without bias).
at::Tensor group_bias(const at::Tensor& bias, const Geo& g, int64_t C, int64_t S, int64_t gi) {
  if (!bias.defined()) return {};
  return bias.narrow(0, gi * C, C).view({1, C, 1}).expand({g.N, C, S});
}

engines::Gathered gathered(const at::Tensor& t, int64_t off, int64_t sb, const Geo& g, const char* section,
                           bool along_k) {
  engines::Gathered r;
  r.t = t;
  r.off = off;
  r.sb = sb;
  r.consts = gather_consts(g);
  r.section = section;
  r.along_k = along_k;
  return r;
}

// gathered() over group gi's C channels (S positions each) of t [N, G*C, positions...].
engines::Gathered group_gathered(const at::Tensor& t, const Geo& g, int64_t C, int64_t S, int64_t gi,
                                 const char* section, bool along_k) {
  return gathered(t, t.storage_offset() + gi * C * S, g.G * C * S, g, section, along_k);
}

// Group gi's rows of m [G*C, K] as the per-group GEMMs' A operand: [N, C, K], the same for every sample.
at::Tensor group_rows(const at::Tensor& m, const Geo& g, int64_t C, int64_t gi) {
  return m.narrow(0, gi * C, C).unsqueeze(0).expand({g.N, C, m.size(1)});
}

// Half convolutions on the matrix units: X with its channels last feeds the subgroup-matrix GEMM
// 8 channels (16 bytes) at a time (wgsl/kernels/conv_gather.wgsl, forward_nhwc), W as [Co, kernel
// position, Ci]. Needs Ci a multiple of 8 and a plan for the per-group product.
// TORCH_WEBGPU_CONV_NHWC=0 keeps the other paths.
bool nhwc_wanted(const at::Tensor& x, const Geo& g) {
  if (x.scalar_type() != at::kHalf || g.Ci % 8 != 0 || kernel::env_switch("TORCH_WEBGPU_CONV_NHWC", 1) == 0)
    return false;
  return engines::half_gemm_uses_matrix_units(x, g.N, g.Co, g.YS(), g.Ci * g.KS());
}

}  // namespace

// x [N, C, positions...] (16-bit) with its channels last: [N, S, C], S the positions; a view where it
// already is so (a channels-last tensor), else wgsl/kernels/transpose16.wgsl (C, S even) or a copy.
at::Tensor to_positions_channels(const at::Tensor& x) {
  TORCH_CHECK(x.element_size() == 2 && x.dim() >= 2, "webgpu: to_positions_channels takes a 16-bit tensor");
  const int64_t N = x.size(0), C = x.size(1), S = x.numel() / std::max<int64_t>(N * C, 1);
  const at::Tensor moved = x.movedim(1, -1);
  if (moved.is_contiguous()) return moved.view({N, S, C});
  // (a device copy of a transposed source: wgsl/kernels/transpose16.wgsl where sizes and offsets are
  // even, ops/copy.cpp transpose_copy)
  return at::empty({N, S, C}, x.options()).copy_(x.contiguous().view({N, C, S}).transpose(1, 2));
}

namespace {

// The per-group implicit GEMMs: for each group gi, out's group view (C channels over S positions) :=
// a(gi) [N, C, K] times the gathered operand b(gi), plus bias's group (none without bias).
template <class AOf, class BOf>
void group_gemms(const at::Tensor& out, const at::Tensor& bias, const Geo& g, int64_t C, int64_t S, int64_t K,
                 const AOf& a_of, const BOf& b_of, const char* op) {
  for (int64_t gi = 0; gi < g.G; ++gi) {
    const at::Tensor o3 = group_view(out, g, C, S, gi);
    const at::Tensor a3 = a_of(gi);
    const engines::Gathered gb = b_of(gi);
    const at::Tensor c3 = group_bias(bias, g, C, S, gi);
    engines::gemm_gathered(o3, a3, nullptr, at::Tensor(), &gb, c3, K, op);
  }
}

void nhwc_forward(const at::Tensor& X, const at::Tensor& W, const at::Tensor& bias, const at::Tensor& out,
                  const Geo& g) {
  const int64_t KC = g.Ci * g.KS(), XS = g.XS();
  // [N, positions, G * Ci]: free for a channels-last input; its first element on a 16-byte unit.
  at::Tensor Xl = to_positions_channels(X);
  if (Xl.storage_offset() % 8 != 0) Xl = Xl.clone();
  const at::Tensor Wl = W.reshape({g.G * g.Co, g.Ci, g.KS()}).permute({0, 2, 1}).contiguous().view({g.G * g.Co, KC});
  group_gemms(
      out, bias, g, g.Co, g.YS(), KC, [&](int64_t gi) { return group_rows(Wl, g, g.Co, gi); },
      [&](int64_t gi) {
        engines::Gathered gb = gathered(Xl, Xl.storage_offset() + gi * g.Ci, XS * g.G * g.Ci, g, "forward_nhwc", true);
        gb.units8 = true;
        return gb;
      },
      "convolution");
}

// Y (out) from X and W, + bias over Co.
void implicit_forward(const at::Tensor& X, const at::Tensor& W, const at::Tensor& bias, const at::Tensor& out,
                      const Geo& g) {
  const int64_t KC = g.Ci * g.KS(), XS = g.XS();
  group_gemms(
      out, bias, g, g.Co, g.YS(), KC, [&](int64_t gi) { return group_rows(W.view({g.G * g.Co, KC}), g, g.Co, gi); },
      [&](int64_t gi) { return group_gathered(X, g, g.Ci, XS, gi, "forward", false); }, "convolution");
}

// X (out) from Y and W, + bias over Ci (a transposed convolution's).
void implicit_input_grad(const at::Tensor& Y, const at::Tensor& W, const at::Tensor& bias, const at::Tensor& out,
                         const Geo& g) {
  const int64_t KC = g.Co * g.KS(), YS = g.YS();
  group_gemms(
      out, bias, g, g.Ci, g.XS(), KC,
      [&](int64_t gi) {
        // W' [Ci, Co * KS] of this group.
        return W.view({g.G, g.Co, g.Ci, g.KS()})
            .select(0, gi)
            .permute({1, 0, 2})
            .contiguous()
            .view({1, g.Ci, KC})
            .expand({g.N, g.Ci, KC});
      },
      [&](int64_t gi) { return group_gathered(Y, g, g.Co, YS, gi, "input_grad", false); }, "convolution_backward");
}

// gW [G*Co, Ci, k...] from Y (the gradient on the small side) and X.
at::Tensor implicit_weight_grad(const at::Tensor& Y, const at::Tensor& X, const Geo& g, at::IntArrayRef wsizes,
                                const at::TensorOptions& opts) {
  at::Tensor gw = at::empty(wsizes, opts);
  const int64_t KC = g.Ci * g.KS(), YS = g.YS(), XS = g.XS();
  for (int64_t gi = 0; gi < g.G; ++gi) {
    const at::Tensor o3 = gw.view({g.G * g.Co, KC}).narrow(0, gi * g.Co, g.Co).unsqueeze(0);
    const engines::Gathered ga = group_gathered(Y, g, g.Co, YS, gi, "weight_grad", true);
    engines::Gathered gb = group_gathered(X, g, g.Ci, XS, gi, "weight_grad", true);
    gb.brings_section = false;  // the section defines both loaders: A's copy brings it
    engines::gemm_gathered(o3, at::Tensor(), &ga, at::Tensor(), &gb, at::Tensor(), g.N * YS, "convolution_backward");
  }
  return gw;
}

// Weight gradient with split-K when the reduction (N * output pixels) dwarfs the output.
at::Tensor weight_grad(const at::Tensor& y, const at::Tensor& x, const Geo& g, at::IntArrayRef wsizes,
                       const at::TensorOptions& opts) {
  at::Tensor gw = at::empty(wsizes, opts);
  const int64_t M = g.Co, NC = g.Ci * g.KS(), K = g.N * g.YS();
  const int64_t tiles = g.G * grid(M, kBM) * grid(NC, kBN);
  int64_t splits = 1;
  if (K >= 1024 && tiles < 256) splits = std::min<int64_t>((K + 511) / 512, std::max<int64_t>(1, 256 / tiles));
  if (splits <= 1) {
    run_gemm(2, y, x, gw, at::Tensor(), g);
    return gw;
  }
  int64_t kchunk = (K + splits - 1) / splits;
  kchunk = (kchunk + kBK - 1) / kBK * kBK;
  splits = (K + kchunk - 1) / kchunk;
  at::Tensor part = at::empty({splits, gw.numel()}, opts.dtype(opts.dtype() == at::kLong ? at::kLong : at::kFloat));
  run_gemm(2, y, x, part, at::Tensor(), g, splits, kchunk);
  gw.view({gw.numel()}).copy_(part.sum(0));
  return gw;
}

// float64 (or complex64) operands: no kernel. The registration guard cannot hand these to the boxed
// CPU fallback (CPU has no convolution_overrideable: its convolutions dispatch below
// at::convolution), so they run CPU's at::convolution / at::convolution_backward on copies here, counted
// and warned like the fallback, and refused like it when the fallback is off.
bool conv_on_cpu(std::initializer_list<const at::Tensor*> ts, const char* op) {
  for (const at::Tensor* t : ts) {
    if (!t->defined() || (t->scalar_type() != at::kDouble && t->scalar_type() != at::kComplexFloat)) continue;
    core::begin_cpu_fallback(std::string("aten::") + op + " (" + c10::toString(t->scalar_type()) + ")");
    return true;
  }
  return false;
}

at::Tensor cpu_of(const at::Tensor& t) { return t.defined() ? t.cpu() : t; }
// ... and a result back to the device.
at::Tensor to_device_of(const at::Tensor& t, const at::Tensor& like) { return t.defined() ? t.to(like.device()) : t; }

// The GEMM kernels (engines/gemm.cpp) bind whole blocks: an operand that is a small view of a block
// past the binding limit (a slice of a large tensor) gets a block of its own. Operands whose own
// elements pass the limit are split by images instead (rows_per_launch below).
void own_block(at::Tensor& t) {
  if (t.defined() && t.numel() > 0 && !kernel::block_fits(t)) t = t.clone();
}

// CPU's and cuDNN's rule: a channels-last input or weight gives a channels-last output.
at::Tensor conv_output_format(const at::Tensor& out, const at::Tensor& input, const at::Tensor& weight) {
  return in_memory_format_of(out, input.suggest_memory_format() != at::MemoryFormat::Contiguous ? input : weight);
}

at::Tensor conv_forward(const at::Tensor& input_, const at::Tensor& weight_, const std::optional<at::Tensor>& bias_,
                        at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                        at::IntArrayRef output_padding, int64_t groups) {
  if (conv_on_cpu({&input_, &weight_}, "convolution_overrideable")) {
    const std::optional<at::Tensor> bias = bias_.has_value() ? std::optional<at::Tensor>(cpu_of(*bias_)) : bias_;
    return at::convolution(input_.cpu(), weight_.cpu(), bias, stride, padding, dilation, transposed, output_padding,
                           groups)
        .to(input_.device());
  }
  check_dtype(input_, "convolution");
  check_dtype(weight_, "convolution");
  // ATen checks the bias's dtype against the input's before dispatch, the weight's only in each
  // backend's kernel (CPU and CUDA raise this too): computing with the input's dtype is wrong.
  TORCH_CHECK(input_.scalar_type() == weight_.scalar_type(), "Input type (", input_.scalar_type(),
              ") and weight type (", weight_.scalar_type(), ") should be the same");
  const int64_t dim = input_.dim();
  TORCH_CHECK(dim >= 3 && dim <= 5, "webgpu: convolution expects a 3-, 4- or 5-dimensional input, got ", dim, "-d");
  const int dims = int(dim - 2);
  at::Tensor input = input_.contiguous(), weight = weight_.contiguous();
  at::Tensor bias = bias_.has_value() && bias_->defined() ? bias_->contiguous() : at::Tensor();
  Geo g = geo_of(input, weight, groups, dims, stride, padding, dilation);
  const int o = 3 - dims;
  std::vector<int64_t> out_sizes{g.N};
  if (!transposed) {
    g.Ci = weight.size(1);
    g.Co = weight.size(0) / groups;
    out_sizes.push_back(weight.size(0));
    for (int i = 0; i < dims; ++i) {
      g.xs[o + i] = input.size(2 + i);
      g.ys[o + i] = (g.xs[o + i] + 2 * g.pd[o + i] - g.dl[o + i] * (g.ks[o + i] - 1) - 1) / g.st[o + i] + 1;
      out_sizes.push_back(g.ys[o + i]);
    }
  } else {
    g.Co = input.size(1) / groups;
    g.Ci = weight.size(1);
    out_sizes.push_back(weight.size(1) * groups);
    for (int i = 0; i < dims; ++i) {
      const int64_t op =
          output_padding.empty() ? 0 : (output_padding.size() == 1 ? output_padding[0] : output_padding[i]);
      g.ys[o + i] = input.size(2 + i);
      g.xs[o + i] = (g.ys[o + i] - 1) * g.st[o + i] - 2 * g.pd[o + i] + g.dl[o + i] * (g.ks[o + i] - 1) + op + 1;
      out_sizes.push_back(g.xs[o + i]);
    }
  }
  for (size_t i = 2; i < out_sizes.size(); ++i)
    TORCH_CHECK(out_sizes[i] > 0, "webgpu: convolution: computed output size ", at::IntArrayRef(out_sizes),
                " is too small");
  at::Tensor out = at::empty(out_sizes, input.options());
  if (out.numel() == 0) return out;
  // Operands past the binding limit: the images in slices whose input and output each fit one
  // binding (docs/design.md, "Operands past the binding limit").
  // Half operands count at float32 width: some paths compute on float32 copies.
  const int64_t wide = std::max<int64_t>(1, 4 / input.element_size());
  const int64_t per =
      rows_per_launch({{&input, wide * input.numel() / g.N}, {&out, wide * out.numel() / g.N}}, g.N, "convolution");
  if (per < g.N) {
    for (int64_t n0 = 0; n0 < g.N; n0 += per) {
      const int64_t nb = std::min(per, g.N - n0);
      out.narrow(0, n0, nb).copy_(conv_forward(input.narrow(0, n0, nb).clone(), weight, bias, stride, padding, dilation,
                                               transposed, output_padding, groups));
    }
    return conv_output_format(out, input_, weight_);
  }
  own_block(input);
  own_block(weight);
  own_block(bias);
  // A 1x1 convolution of a contiguous input is a plain GEMM; a channels-last half one goes on to the
  // NHWC kernel where that applies (it reads the input as it is, where the GEMM would need a copy).
  const bool nhwc = !transposed && nhwc_wanted(input, g);
  if (pointwise_gemm_wanted(input, g, output_padding) && (input_.is_contiguous() || !nhwc))
    pointwise_gemm(input, weight, bias, out, transposed);
  else if (nhwc)
    nhwc_forward(input_, weight, bias, out, g);  // input_: a channels-last input needs no copy
  else if (!transposed && cols_gemm_wanted(input, g))
    cols_gemm(input, weight, bias, out, g);
  else if (implicit_wanted(input, g))
    transposed ? implicit_input_grad(input, weight, bias, out, g) : implicit_forward(input, weight, bias, out, g);
  else
    run_gemm(transposed ? 1 : 0, input, weight, out, bias, g);
  return conv_output_format(out, input_, weight_);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv_backward(const at::Tensor& grad_output_, const at::Tensor& input_,
                                                             const at::Tensor& weight_, at::IntArrayRef stride,
                                                             at::IntArrayRef padding, at::IntArrayRef dilation,
                                                             bool transposed, at::IntArrayRef output_padding,
                                                             int64_t groups, std::array<bool, 3> mask) {
  if (conv_on_cpu({&grad_output_, &input_, &weight_}, "convolution_backward_overrideable")) {
    const std::vector<int64_t> bias_sizes{transposed ? weight_.size(1) * groups : weight_.size(0)};
    auto [gi, gw, gb] = at::convolution_backward(grad_output_.cpu(), input_.cpu(), weight_.cpu(), bias_sizes, stride,
                                                 padding, dilation, transposed, output_padding, groups, mask);
    return {to_device_of(gi, input_), to_device_of(gw, input_), to_device_of(gb, input_)};
  }
  check_dtype(grad_output_, "convolution_backward");
  check_dtype(input_, "convolution_backward");
  check_dtype(weight_, "convolution_backward");
  const int dims = int(input_.dim() - 2);
  TORCH_CHECK(dims >= 1 && dims <= 3, "webgpu: convolution_backward expects a 3-, 4- or 5-dimensional input");
  at::Tensor go = grad_output_.contiguous(), input = input_.contiguous(), weight = weight_.contiguous();
  Geo g = geo_of(input, weight, groups, dims, stride, padding, dilation);
  const int o = 3 - dims;
  // X, Y: the large and small sides.
  const at::Tensor& X = transposed ? go : input;
  const at::Tensor& Y = transposed ? input : go;
  g.Ci = weight.size(1);
  g.Co = weight.size(0) / groups;
  for (int i = 0; i < dims; ++i) {
    g.xs[o + i] = X.size(2 + i);
    g.ys[o + i] = Y.size(2 + i);
  }
  at::Tensor gi, gw, gb;
  // Past the binding limit: per slice of images, the input gradient's slice and a part of the
  // weight gradient (summed); the bias gradient is a reduction, which splits itself.
  const int64_t N = input.size(0);
  const int64_t wide = std::max<int64_t>(1, 4 / input.element_size());
  const int64_t per = N == 0 ? N
                             : rows_per_launch({{&go, wide * go.numel() / N}, {&input, wide * input.numel() / N}}, N,
                                               "convolution_backward");
  if (per < N) {
    if (mask[0]) gi = at::empty(input.sizes(), input.options());
    for (int64_t n0 = 0; n0 < N; n0 += per) {
      const int64_t nb = std::min(per, N - n0);
      auto part = conv_backward(go.narrow(0, n0, nb).clone(), input.narrow(0, n0, nb).clone(), weight, stride, padding,
                                dilation, transposed, output_padding, groups, {mask[0], mask[1], false});
      if (mask[0]) gi.narrow(0, n0, nb).copy_(std::get<0>(part));
      if (mask[1]) gw = gw.defined() ? gw.add_(std::get<1>(part)) : std::get<1>(part);
    }
  }
  own_block(weight);
  if (per >= N) {
    own_block(go);
    own_block(input);
  }
  // 1x1, unit stride, no padding, one group: the gradients are plain GEMMs too. F [Cout, Cin] is the
  // forward's matrix (W, or W's channel dims swapped when transposed): gI[n] = F^T @ gO[n], and
  // dF = sum_n gO[n] @ X[n]^T as a batched GEMM and a sum over the images where that [N, Cout, Cin]
  // is no larger than gO, in float32 (else the gathered weight-gradient GEMM, which splits
  // K = N x positions and rounds half results once).
  if (per >= N && input.numel() > 0 && go.numel() > 0 && pointwise_gemm_wanted(input, g, output_padding)) {
    const int64_t Cin = input.size(1), Cout = go.size(1), P = go.numel() / (N * Cout);
    const at::Tensor F = pointwise_matrix(weight, transposed);  // [Cout, Cin]
    const at::Tensor go3 = go.view({N, Cout, P}), x3 = input.view({N, Cin, P});
    if (mask[0]) {
      gi = at::empty(input.sizes(), input.options());
      engines::gemm(gi.view({N, Cin, P}), F.t().unsqueeze(0).expand({N, Cin, Cout}), go3, at::Tensor(), 0, 1,
                    "convolution_backward");
      mask[0] = false;
    }
    if (mask[1] && go.scalar_type() == at::kFloat && N * Cout * Cin <= go.numel()) {
      const at::Tensor parts = at::empty({N, Cout, Cin}, go.options());
      engines::gemm(parts, go3, x3.transpose(1, 2), at::Tensor(), 0, 1, "convolution_backward");
      const at::Tensor dF = parts.sum(0);
      gw = (transposed ? dF.t() : dF).contiguous().view(weight.sizes());
      mask[1] = false;
    }
  }
  // A stride-1 convolution's input gradient is the forward convolution of the output gradient with
  // the weights flipped and their channel dims swapped, padding dilation * (k - 1) - padding: for
  // half on matrix units that is the channels-last form above. TORCH_WEBGPU_CONV_GRAD_AS_CONV=1 takes
  // it for every dtype (tests), 0 never.
  bool as_conv = !transposed && mask[0] && per >= N;
  std::vector<int64_t> ones(dims, 1), pad2(dims);
  for (int i = 0; i < dims && as_conv; ++i) {
    pad2[i] = g.dl[o + i] * (g.ks[o + i] - 1) - g.pd[o + i];
    as_conv = g.st[o + i] == 1 && pad2[i] >= 0;
  }
  if (as_conv) {
    // The flipped convolution's geometry: Co channels in, Ci out, at X's positions.
    Geo flipped = g;
    std::swap(flipped.Ci, flipped.Co);
    std::copy(g.xs, g.xs + 3, flipped.ys);
    const int on = kernel::env_switch("TORCH_WEBGPU_CONV_GRAD_AS_CONV", -1);
    as_conv = on >= 0 ? on == 1 : nhwc_wanted(go, flipped);
  }
  if (as_conv) {
    std::vector<int64_t> wsizes{groups * g.Ci, g.Co};
    std::vector<int64_t> flip;
    for (int i = 0; i < dims; ++i) {
      wsizes.push_back(weight.size(2 + i));
      flip.push_back(2 + i);
    }
    const at::Tensor w2 = weight.view({groups, g.Co, g.Ci, g.KS()}).transpose(1, 2).reshape(wsizes).flip(flip);
    gi = conv_forward(go, w2, std::nullopt, ones, pad2, dilation, false, {}, groups);
    TORCH_INTERNAL_ASSERT(gi.sizes() == input.sizes(), "convolution_backward: input gradient as a convolution");
  } else if (mask[0] && per >= N) {
    gi = at::empty(input.sizes(), input.options());
    if (gi.numel() > 0) {
      const bool implicit = implicit_wanted(go, g);
      if (transposed)  // Y from X
        implicit ? implicit_forward(go, weight, at::Tensor(), gi, g) : run_gemm(0, go, weight, gi, at::Tensor(), g);
      else  // X from Y
        implicit ? implicit_input_grad(go, weight, at::Tensor(), gi, g) : run_gemm(1, go, weight, gi, at::Tensor(), g);
    }
  }
  if (mask[1] && per >= N) {
    gw = implicit_wanted(go, g) ? implicit_weight_grad(Y, X, g, weight.sizes(), weight.options())
                                : weight_grad(Y, X, g, weight.sizes(), weight.options());
  }
  if (mask[2]) {
    std::vector<int64_t> red{0};
    for (int i = 0; i < dims; ++i) red.push_back(2 + i);
    gb = go.sum(red);
  }
  return {gi, gw, gb};
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("convolution_overrideable", TORCH_FN(webgpu::ops::conv_forward));
  m.impl("convolution_backward_overrideable", TORCH_FN(webgpu::ops::conv_backward));
}
