// Separable interpolation, CPU's way (aten/src/ATen/native/cpu/UpSampleKernel.cpp's separable kernels):
// antialiased bilinear/bicubic (_upsample_bilinear2d_aa, _upsample_bicubic2d_aa and their backward) and
// uint8 bilinear/bicubic (upsample_bilinear2d / upsample_bicubic2d route uint8 here, see
// ops/upsample.cpp). Width first, then height; a dimension whose size does not change is skipped, as
// CPU skips it. Taps and weights are computed on the host exactly as CPU computes them (float for
// float32, double then int16 fixed point for uint8), so uint8 results are CPU's bit for bit; the
// kernels (wgsl/kernels/upsample_sep.wgsl) only apply them.
#include "ops/upsample_sep.h"

#include <ATen/ATen.h>
#include <ATen/ops/_upsample_bicubic2d_aa_meta.h>
#include <ATen/ops/_upsample_bicubic2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_backward_meta.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/nn_common.h"
#include "ops/register.h"
#include "ops/structured.h"

namespace webgpu::ops {
namespace {

using at::Tensor;
using OS = std::optional<double>;

// One axis: per output, the first input and the number of taps, and taps weights per output.
struct Axis {
  int64_t lin = 0, lout = 0;
  int taps = 0;
  std::vector<int32_t> xmin, xsize;
  std::vector<double> w;  // lout * taps, in the precision CPU computed them (float or double)
  unsigned prec = 0;  // uint8: the fixed-point bits
};

template <typename T>
T area_scale(int64_t in, int64_t out, bool align, const OS& s) {
  if (align) return out > 1 ? T(in - 1) / T(out - 1) : T(0);
  return s.has_value() && *s > 0. ? T(1.0 / *s) : T(in) / T(out);
}

template <typename T>
T filter(T x, bool cubic, T a) {
  x = std::abs(x);
  if (!cubic) return x < T(1) ? T(1) - x : T(0);
  if (x < T(1)) return ((a + T(2)) * x - (a + T(3))) * x * x + T(1);
  if (x < T(2)) return ((a * x - T(5) * a) * x + T(8) * a) * x - T(4) * a;
  return T(0);
}

// HelperInterpBase::_compute_indices_min_size_weights_aa over every output, in T (float for float32
// inputs, double for uint8). Returns the largest weight.
template <typename T>
T aa_weights(Axis& ax, T scale, int interp, bool cubic) {
  const T support = scale >= 1.0 ? T((interp * 0.5) * scale) : T(interp * 0.5);
  ax.taps = int(std::ceil(support)) * 2 + 1;
  ax.w.assign(size_t(ax.lout * ax.taps), 0.0);
  std::vector<T> ws(size_t(ax.taps));
  T wt_max = 0;
  for (int64_t i = 0; i < ax.lout; ++i) {
    const T center = T(scale * (i + 0.5));
    const T invscale = scale >= 1.0 ? T(1.0 / scale) : T(1.0);
    const int64_t xmin = std::max(int64_t(double(center - support) + 0.5), int64_t(0));
    int64_t xsize = std::min(int64_t(double(center + support) + 0.5), ax.lin) - xmin;
    xsize = std::clamp(xsize, int64_t(0), int64_t(ax.taps));
    T total = 0;
    for (int64_t j = 0; j < xsize; ++j) {
      const T d = T((double(T(j + xmin) - center) + 0.5) * double(invscale));
      ws[j] = filter<T>(d, cubic, T(-0.5));
      total += ws[j];
    }
    T mx = 0;
    if (total != T(0))
      for (int64_t j = 0; j < xsize; ++j) {
        ws[j] /= total;
        mx = std::max(mx, ws[j]);
      }
    for (int64_t j = 0; j < xsize; ++j) ax.w[i * ax.taps + j] = double(ws[j]);
    ax.xmin.push_back(int32_t(xmin));
    ax.xsize.push_back(int32_t(xsize));
    wt_max = std::max(wt_max, mx);
  }
  return wt_max;
}

// HelperInterpBase::_compute_indices_min_size_weights (uint8 without antialiasing), in double.
double plain_weights(Axis& ax, double scale, bool align, bool cubic) {
  const int interp = cubic ? 4 : 2;
  ax.taps = interp;
  ax.w.assign(size_t(ax.lout * ax.taps), 0.0);
  const int64_t support = int64_t(interp * 0.5);
  const double a = -0.75;
  double wt_max = 0;
  for (int64_t i = 0; i < ax.lout; ++i) {
    double real;
    if (align) {
      real = scale * double(i);
    } else {
      real = scale * (double(i) + 0.5) - 0.5;
      if (!cubic && real < 0) real = 0;
    }
    // guard_index_and_lambda: floorf (through float, as CPU calls it on the double)
    const int64_t index = std::min(int64_t(std::floor(float(real))), ax.lin - 1);
    const double lambda = std::min(std::max(real - double(index), 0.0), 1.0);
    const int64_t umin = index - support + 1, umax = index + support + 1;
    const int64_t imin = std::max(umin, int64_t(0));
    int64_t isize = std::min(umax, ax.lin) - imin;
    isize = std::clamp(isize, int64_t(0), int64_t(interp));
    double* wt = &ax.w[i * ax.taps];
    int64_t w_index = 0;
    for (int64_t j = 0; j < interp; ++j) {
      wt[j] = 0.0;
      const double w = filter<double>(double(j + 1 - support) - lambda, cubic, a);
      if (umin + j <= 0)
        w_index = 0;
      else if (umin + j >= ax.lin - 1)
        w_index = isize - 1;
      wt[w_index] += w;
      wt_max = std::max(wt_max, wt[w_index]);
      ++w_index;
    }
    ax.xmin.push_back(int32_t(imin));
    ax.xsize.push_back(int32_t(isize));
  }
  return wt_max;
}

Axis make_axis(int64_t lin, int64_t lout, bool align, const OS& s, bool cubic, bool aa, bool u8) {
  Axis ax;
  ax.lin = lin;
  ax.lout = lout;
  if (!u8) {
    aa_weights<float>(ax, area_scale<float>(lin, lout, align, s), cubic ? 4 : 2, cubic);
    return ax;
  }
  const double scale = area_scale<double>(lin, lout, align, s);
  const double wt_max =
      aa ? aa_weights<double>(ax, scale, cubic ? 4 : 2, cubic) : plain_weights(ax, scale, align, cubic);
  // _compute_index_ranges_int16_weights: the most bits under which the largest weight fits int16
  unsigned prec = 0;
  for (prec = 0; prec < 22; ++prec) {
    const int next = int(0.5 + wt_max * (1 << (prec + 1)));
    if (next >= (1 << 15)) break;
  }
  ax.prec = prec;
  for (double& w : ax.w) {
    const double v = w * (1 << prec);
    w = double(int16_t(v < 0 ? int(-0.5 + v) : int(0.5 + v)));
  }
  return ax;
}

// The table operand: xmin, xsize (per output) and lo, hi (per input: the outputs whose taps cover it).
Tensor table(const Axis& ax, const Tensor& like) {
  std::vector<int32_t> t(ax.xmin);
  t.insert(t.end(), ax.xsize.begin(), ax.xsize.end());
  std::vector<int32_t> lo(size_t(ax.lin), int32_t(ax.lout)), hi(size_t(ax.lin), 0);
  for (int64_t o = 0; o < ax.lout; ++o)
    for (int64_t j = ax.xmin[o]; j < ax.xmin[o] + ax.xsize[o]; ++j) {
      lo[j] = std::min(lo[j], int32_t(o));
      hi[j] = std::max(hi[j], int32_t(o + 1));
    }
  t.insert(t.end(), lo.begin(), lo.end());
  t.insert(t.end(), hi.begin(), hi.end());
  return at::tensor(t, at::kInt).to(like.device());
}

Tensor weights(const Axis& ax, bool u8, const Tensor& like) {
  Tensor w = at::tensor(ax.w, at::kDouble);
  return w.to(u8 ? at::kInt : at::kFloat).to(like.device());
}

// One pass over src viewed as [outer, lin, inner] (forward: to lout; bwd: from lout back to lin).
Tensor pass(const Tensor& src, const Axis& ax, int64_t outer, int64_t inner, bool u8, bool bwd) {
  const int64_t lres = bwd ? ax.lin : ax.lout;
  Tensor dst = at::empty({outer, lres, inner}, src.options().dtype(u8 ? at::kInt : at::kFloat));
  const uint64_t n = uint64_t(dst.numel());
  if (n == 0) return dst;
  const char* sec = bwd ? "bwd_f32" : u8 ? "fwd_u8" : "fwd_f32";
  const CT ct = u8 ? CT::I32 : CT::F32;
  Kernel k(std::string("upsample_sep:") + sec);
  k.in(src, ct);
  k.in(table(ax, src), CT::I32);
  k.in(weights(ax, u8, src), ct);
  k.out(dst, ct);
  k.param_index("n", int64_t(n));
  k.param_index("lin", ax.lin);
  k.param_index("lout", ax.lout);
  k.param_index("inner", inner);
  k.param_index("taps", ax.taps);
  k.param_index("src_off", src.storage_offset());
  k.param_index("dst_off", dst.storage_offset());
  if (u8) k.param("prec", uint32_t(ax.prec));
  k.launch(grid(n), [&] { return per_element_main() + kernel::section("upsample_sep", sec); });
  return dst;
}

void check_dtype(const Tensor& t, bool allow_u8, const char* kernel_name) {
  const auto s = t.scalar_type();
  // (float64: NoDtypeKernel, which the registration guard hands to the CPU fallback)
  check_kernel_dtype(s == at::kFloat || (allow_u8 && s == at::kByte), s, kernel_name,
                     s == at::kDouble ? " on webgpu (float32 and uint8 only)" : "");
}

Tensor aa_forward(const Tensor& self, at::IntArrayRef out_sizes, bool align, OS sh, OS sw, bool cubic) {
  check_dtype(self, true, "compute_index_ranges_weights");
  return separable_interp2d(self, out_sizes, align, sh, sw, cubic, /*antialias=*/true);
}

Tensor aa_backward(const Tensor& grad_, at::IntArrayRef input_size, bool align, OS sh, OS sw, bool cubic,
                   const char* kernel_name) {
  check_dtype(grad_, false, kernel_name);
  Tensor grad = grad_.contiguous();
  const int64_t N = input_size[0], C = input_size[1], Hi = input_size[2], Wi = input_size[3];
  const int64_t Ho = grad.size(2), Wo = grad.size(3);
  Tensor gi = at::empty(input_size, grad.options());
  if (gi.numel() == 0) return gi;
  if (grad.numel() == 0) return gi.zero_();
  const Axis aw = make_axis(Wi, Wo, align, sw, cubic, true, false);
  const Axis ah = make_axis(Hi, Ho, align, sh, cubic, true, false);
  Tensor t = pass(grad, aw, N * C * Ho, 1, false, true);
  t = pass(t, ah, N * C, Wi, false, true);
  return t.view(input_size);
}

Tensor bilinear_aa(const Tensor& self, at::IntArrayRef os, bool ac, OS h, OS w) {
  return aa_forward(
      self, structured::meta_output<at::meta::structured__upsample_bilinear2d_aa>(0, self, os, ac, h, w).sizes(), ac, h,
      w, false);
}
Tensor bicubic_aa(const Tensor& self, at::IntArrayRef os, bool ac, OS h, OS w) {
  return aa_forward(self,
                    structured::meta_output<at::meta::structured__upsample_bicubic2d_aa>(0, self, os, ac, h, w).sizes(),
                    ac, h, w, true);
}
Tensor bilinear_aa_bwd(const Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS h, OS w) {
  structured::meta_output<at::meta::structured__upsample_bilinear2d_aa_backward>(0, g, os, is, ac, h, w);
  return aa_backward(g, is, ac, h, w, false, "upsample_bilinear2d_aa_backward_cpu");
}
Tensor bicubic_aa_bwd(const Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS h, OS w) {
  structured::meta_output<at::meta::structured__upsample_bicubic2d_aa_backward>(0, g, os, is, ac, h, w);
  return aa_backward(g, is, ac, h, w, true, "upsample_bicubic2d_aa_backward_cpu");
}

}  // namespace

Tensor separable_interp2d(const Tensor& self, at::IntArrayRef out_sizes, bool align, OS sh, OS sw, bool cubic,
                          bool antialias) {
  const bool u8 = self.scalar_type() == at::kByte;
  Tensor out = at::empty(out_sizes, self.options());
  if (out.numel() == 0) return out;
  if (self.sizes() == out_sizes) return out.copy_(self);
  const int64_t N = self.size(0), C = self.size(1), Hi = self.size(2), Wi = self.size(3);
  const int64_t Ho = out_sizes[2], Wo = out_sizes[3];
  Tensor cur = self.contiguous();
  int64_t W = Wi;
  if (Wo != Wi) {
    cur = pass(cur, make_axis(Wi, Wo, align, sw, cubic, antialias, u8), N * C * Hi, 1, u8, false);
    W = Wo;
  }
  if (Ho != Hi) cur = pass(cur, make_axis(Hi, Ho, align, sh, cubic, antialias, u8), N * C, W, u8, false);
  return out.copy_(cur.view(out_sizes));
}

}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  m.impl("_upsample_bilinear2d_aa", TORCH_FN(bilinear_aa));
  m.impl("_upsample_bicubic2d_aa", TORCH_FN(bicubic_aa));
  m.impl("_upsample_bilinear2d_aa_backward", TORCH_FN(bilinear_aa_bwd));
  m.impl("_upsample_bicubic2d_aa_backward", TORCH_FN(bicubic_aa_bwd));
}
