// Interpolation with gradients: upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d,
// upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d, upsample_bicubic2d (kernels:
// wgsl/upsample.wgsl). The .vec overloads (F.interpolate) are ATen composites over these. Checks and
// output sizes come from the op's meta function; source indices and weights follow ATen's float
// arithmetic.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "ops/common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "runtime/pipeline.h"

namespace webgpu::ops {

at::Tensor meta_of(const at::Tensor& t);                                      // pool.cpp

namespace {

using Scales = std::vector<std::optional<double>>;
enum class Mode { Nearest, Exact, Linear, Cubic };


float nearest_scale(int64_t in, int64_t out, const std::optional<double>& s) {
  return s.has_value() && *s > 0. ? static_cast<float>(1.0 / *s) : static_cast<float>(in) / out;
}

float linear_scale(int64_t in, int64_t out, bool align, const std::optional<double>& s) {
  if (align) return out > 1 ? static_cast<float>(in - 1) / (out - 1) : 0.f;
  return nearest_scale(in, out, s);
}

// One launch; `in_sizes` is the full input shape, `out_sizes` the full output shape.
void run(Mode mode, bool backward, bool align, const at::Tensor& src, const at::Tensor& dst,
         at::IntArrayRef in_sizes, at::IntArrayRef out_sizes, const Scales& scales) {
  const int dims = int(scales.size());
  const int r = int(in_sizes.size());
  int64_t I[3] = {1, 1, 1}, O[3] = {1, 1, 1};
  float S[3] = {1.f, 1.f, 1.f};
  for (int i = 0; i < dims; ++i) {
    const int j = 3 - dims + i;
    I[j] = in_sizes[r - dims + i];
    O[j] = out_sizes[r - dims + i];
    S[j] = mode == Mode::Linear || mode == Mode::Cubic ? linear_scale(I[j], O[j], align, scales[i]) : nearest_scale(I[j], O[j], scales[i]);
  }
  const uint64_t n = uint64_t(dst.numel());
  if (n == 0) return;
  const bool interp = mode == Mode::Linear || mode == Mode::Cubic;
  const CT ct = !backward && !interp ? CT::RAW : CT::F32;
  const std::string sec = std::string(mode == Mode::Linear ? "linear" : mode == Mode::Cubic ? "cubic" : "nearest") +
                          (backward ? "_bwd" : "_fwd");
  const bool exact = mode == Mode::Exact;
  Kernel k("upsample:" + sec + (exact ? ":exact" : "") + (align ? ":align" : ""));
  k.in(src, ct);
  k.out(dst, ct);
  k.param_index(int64_t(n), "element count");
  for (int64_t v : I) k.param_index(v, "size");
  for (int64_t v : O) k.param_index(v, "size");
  for (float v : S) k.param_f32(v);
  k.param_index(src.storage_offset(), "offset");
  k.param_index(dst.storage_offset(), "offset");
  k.launch((n + kWG - 1) / kWG, [&] {
    return std::string("const EXACT: bool = ") + (exact ? "true" : "false") + ";\nconst ALIGN: bool = " +
           (align ? "true" : "false") + ";\n" + kernel::section("upsample", sec);
  });
}

void check_dtype(const at::Tensor& t, Mode mode, bool backward, const char* op) {
  const auto s = t.scalar_type();
  const bool ok = at::isFloatingType(s) || (s == at::kByte && (mode == Mode::Nearest || mode == Mode::Exact) && !backward);
  TORCH_CHECK_NOT_IMPLEMENTED(ok, "webgpu: \"", op, "\" not implemented for '", c10::toString(s), "'");
}

at::Tensor forward(Mode mode, bool align, const at::Tensor& self, at::IntArrayRef out_meta_sizes, const Scales& sc,
                   const char* op) {
  check_dtype(self, mode, false, op);
  at::Tensor in = self.contiguous();
  at::Tensor out = at::empty(out_meta_sizes, self.options());
  run(mode, false, align, in, out, in.sizes(), out.sizes(), sc);
  return out;
}

at::Tensor backward(Mode mode, bool align, const at::Tensor& grad_, at::IntArrayRef input_size, const Scales& sc,
                    const char* op) {
  check_dtype(grad_, mode, true, op);
  at::Tensor grad = grad_.contiguous();
  at::Tensor gi = at::empty(input_size, grad.options());
  if (gi.numel() == 0) return gi;
  if (grad.numel() == 0) return gi.zero_();
  run(mode, true, align, grad, gi, gi.sizes(), grad.sizes(), sc);
  return gi;
}

using OS = std::optional<double>;

// ---- nearest ----
at::Tensor nearest1d(const at::Tensor& self, at::IntArrayRef os, OS s) {
  return forward(Mode::Nearest, false, self, at::upsample_nearest1d(meta_of(self), os, s).sizes(), {s}, "upsample_nearest1d");
}
at::Tensor nearest2d(const at::Tensor& self, at::IntArrayRef os, OS h, OS w) {
  return forward(Mode::Nearest, false, self, at::upsample_nearest2d(meta_of(self), os, h, w).sizes(), {h, w}, "upsample_nearest2d");
}
at::Tensor nearest3d(const at::Tensor& self, at::IntArrayRef os, OS d, OS h, OS w) {
  return forward(Mode::Nearest, false, self, at::upsample_nearest3d(meta_of(self), os, d, h, w).sizes(), {d, h, w}, "upsample_nearest3d");
}
at::Tensor exact1d(const at::Tensor& self, at::IntArrayRef os, OS s) {
  return forward(Mode::Exact, false, self, at::_upsample_nearest_exact1d(meta_of(self), os, s).sizes(), {s}, "_upsample_nearest_exact1d");
}
at::Tensor exact2d(const at::Tensor& self, at::IntArrayRef os, OS h, OS w) {
  return forward(Mode::Exact, false, self, at::_upsample_nearest_exact2d(meta_of(self), os, h, w).sizes(), {h, w}, "_upsample_nearest_exact2d");
}
at::Tensor exact3d(const at::Tensor& self, at::IntArrayRef os, OS d, OS h, OS w) {
  return forward(Mode::Exact, false, self, at::_upsample_nearest_exact3d(meta_of(self), os, d, h, w).sizes(), {d, h, w}, "_upsample_nearest_exact3d");
}
at::Tensor nearest1d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, OS s) {
  at::upsample_nearest1d_backward(meta_of(g), os, is, s);
  return backward(Mode::Nearest, false, g, is, {s}, "upsample_nearest1d_backward");
}
at::Tensor nearest2d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, OS h, OS w) {
  at::upsample_nearest2d_backward(meta_of(g), os, is, h, w);
  return backward(Mode::Nearest, false, g, is, {h, w}, "upsample_nearest2d_backward");
}
at::Tensor nearest3d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, OS d, OS h, OS w) {
  at::upsample_nearest3d_backward(meta_of(g), os, is, d, h, w);
  return backward(Mode::Nearest, false, g, is, {d, h, w}, "upsample_nearest3d_backward");
}
at::Tensor exact1d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, OS s) {
  at::_upsample_nearest_exact1d_backward(meta_of(g), os, is, s);
  return backward(Mode::Exact, false, g, is, {s}, "_upsample_nearest_exact1d_backward");
}
at::Tensor exact2d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, OS h, OS w) {
  at::_upsample_nearest_exact2d_backward(meta_of(g), os, is, h, w);
  return backward(Mode::Exact, false, g, is, {h, w}, "_upsample_nearest_exact2d_backward");
}
at::Tensor exact3d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, OS d, OS h, OS w) {
  at::_upsample_nearest_exact3d_backward(meta_of(g), os, is, d, h, w);
  return backward(Mode::Exact, false, g, is, {d, h, w}, "_upsample_nearest_exact3d_backward");
}

// ---- linear ----
at::Tensor linear1d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS s) {
  return forward(Mode::Linear, ac, self, at::upsample_linear1d(meta_of(self), os, ac, s).sizes(), {s}, "upsample_linear1d");
}
at::Tensor bilinear2d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS h, OS w) {
  return forward(Mode::Linear, ac, self, at::upsample_bilinear2d(meta_of(self), os, ac, h, w).sizes(), {h, w}, "upsample_bilinear2d");
}
at::Tensor trilinear3d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS d, OS h, OS w) {
  return forward(Mode::Linear, ac, self, at::upsample_trilinear3d(meta_of(self), os, ac, d, h, w).sizes(), {d, h, w}, "upsample_trilinear3d");
}
at::Tensor linear1d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS s) {
  at::upsample_linear1d_backward(meta_of(g), os, is, ac, s);
  return backward(Mode::Linear, ac, g, is, {s}, "upsample_linear1d_backward");
}
at::Tensor bilinear2d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS h, OS w) {
  at::upsample_bilinear2d_backward(meta_of(g), os, is, ac, h, w);
  return backward(Mode::Linear, ac, g, is, {h, w}, "upsample_bilinear2d_backward");
}
at::Tensor trilinear3d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS d, OS h, OS w) {
  at::upsample_trilinear3d_backward(meta_of(g), os, is, ac, d, h, w);
  return backward(Mode::Linear, ac, g, is, {d, h, w}, "upsample_trilinear3d_backward");
}

// ---- bicubic ----
at::Tensor bicubic2d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS h, OS w) {
  return forward(Mode::Cubic, ac, self, at::upsample_bicubic2d(meta_of(self), os, ac, h, w).sizes(), {h, w}, "upsample_bicubic2d");
}
at::Tensor bicubic2d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS h, OS w) {
  at::upsample_bicubic2d_backward(meta_of(g), os, is, ac, h, w);
  return backward(Mode::Cubic, ac, g, is, {h, w}, "upsample_bicubic2d_backward");
}

}  // namespace
}  // namespace webgpu::ops

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using namespace webgpu::ops;
  m.impl("upsample_nearest1d", TORCH_FN(nearest1d));
  m.impl("upsample_nearest2d", TORCH_FN(nearest2d));
  m.impl("upsample_nearest3d", TORCH_FN(nearest3d));
  m.impl("_upsample_nearest_exact1d", TORCH_FN(exact1d));
  m.impl("_upsample_nearest_exact2d", TORCH_FN(exact2d));
  m.impl("_upsample_nearest_exact3d", TORCH_FN(exact3d));
  m.impl("upsample_nearest1d_backward", TORCH_FN(nearest1d_bwd));
  m.impl("upsample_nearest2d_backward", TORCH_FN(nearest2d_bwd));
  m.impl("upsample_nearest3d_backward", TORCH_FN(nearest3d_bwd));
  m.impl("_upsample_nearest_exact1d_backward", TORCH_FN(exact1d_bwd));
  m.impl("_upsample_nearest_exact2d_backward", TORCH_FN(exact2d_bwd));
  m.impl("_upsample_nearest_exact3d_backward", TORCH_FN(exact3d_bwd));
  m.impl("upsample_linear1d", TORCH_FN(linear1d));
  m.impl("upsample_bilinear2d", TORCH_FN(bilinear2d));
  m.impl("upsample_trilinear3d", TORCH_FN(trilinear3d));
  m.impl("upsample_linear1d_backward", TORCH_FN(linear1d_bwd));
  m.impl("upsample_bilinear2d_backward", TORCH_FN(bilinear2d_bwd));
  m.impl("upsample_trilinear3d_backward", TORCH_FN(trilinear3d_bwd));
  m.impl("upsample_bicubic2d", TORCH_FN(bicubic2d));
  m.impl("upsample_bicubic2d_backward", TORCH_FN(bicubic2d_bwd));
}
