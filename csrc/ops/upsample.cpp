// Interpolation with gradients: upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d,
// upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d, upsample_bicubic2d (kernels:
// wgsl/kernels/upsample.wgsl). The .vec overloads (F.interpolate) are ATen composites over these. Checks and
// output sizes come from the op's meta function; source indices and weights follow ATen's float
// arithmetic.
#include <ATen/ATen.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward_meta.h>
#include <ATen/ops/upsample_bicubic2d_meta.h>
#include <ATen/ops/upsample_bicubic2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_linear1d_meta.h>
#include <ATen/ops/upsample_linear1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest3d_meta.h>
#include <ATen/ops/upsample_nearest3d_backward_meta.h>
#include <ATen/ops/upsample_trilinear3d_meta.h>
#include <ATen/ops/upsample_trilinear3d_backward_meta.h>
#include <torch/library.h>

#include <cstring>
#include <optional>
#include <vector>

#include "ops/structured.h"
#include "ops/common.h"
#include "ops/nn_common.h"
#include "ops/rows.h"
#include "ops/upsample_sep.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
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

// One launch (or one per slice of planes, for operands past the binding limit: ops/rows.h); `in_sizes`
// is the full input shape, `out_sizes` the full output shape.
void run(Mode mode, bool backward, bool align, const at::Tensor& src, const at::Tensor& dst, at::IntArrayRef in_sizes,
         at::IntArrayRef out_sizes, const Scales& scales) {
  const int dims = int(scales.size());
  const int r = int(in_sizes.size());
  int64_t I[3] = {1, 1, 1}, O[3] = {1, 1, 1};
  float S[3] = {1.f, 1.f, 1.f};
  for (int i = 0; i < dims; ++i) {
    const int j = 3 - dims + i;
    I[j] = in_sizes[r - dims + i];
    O[j] = out_sizes[r - dims + i];
    S[j] = mode == Mode::Linear || mode == Mode::Cubic ? linear_scale(I[j], O[j], align, scales[i])
                                                       : nearest_scale(I[j], O[j], scales[i]);
  }
  const uint64_t n = uint64_t(dst.numel());
  if (n == 0) return;
  const bool interp = mode == Mode::Linear || mode == Mode::Cubic;
  const CT ct = !backward && !interp ? CT::RAW : CT::F32;
  const std::string sec = std::string(mode == Mode::Linear  ? "linear"
                                      : mode == Mode::Cubic ? "cubic"
                                                            : "nearest") +
                          (backward ? "_bwd" : "_fwd");
  const bool exact = mode == Mode::Exact;
  // nearest's and linear's backwards are one section, gather_bwd, that LINEAR picks the weights of.
  const char* wgsl_sec = backward && mode != Mode::Cubic ? "gather_bwd" : sec.c_str();
  const bool linear = mode == Mode::Linear;
  int64_t planes = 1;
  for (int i = 0; i < r - dims; ++i) planes *= in_sizes[i];
  const std::string op = std::string("upsample_") + sec;
  for_each_slice({src.view({planes, -1}), dst.view({planes, -1})}, planes, op.c_str(),
                 [&](const std::vector<at::Tensor>& t, int64_t, int64_t) {
                   Kernel k("upsample:" + sec + (exact ? ":exact" : "") + (align ? ":align" : ""));
                   k.in(t[0], ct);
                   k.out(t[1], ct);
                   k.param_index("n", t[1].numel());
                   k.param_array("in_size", std::vector<int64_t>(I, I + 3));
                   k.param_array("out_size", std::vector<int64_t>(O, O + 3));
                   uint32_t scale_bits[3];
                   std::memcpy(scale_bits, S, sizeof(scale_bits));
                   k.param_array("scale", std::vector<uint32_t>(scale_bits, scale_bits + 3),
                                 kernel::Params::Type::F32S);
                   k.param_index("src_off", t[0].storage_offset());
                   k.param_index("dst_off", t[1].storage_offset());
                   k.library("nn_grid");
                   k.launch(grid(uint64_t(t[1].numel())), [&] {
                     return per_element_main() + "const EXACT: bool = " + (exact ? "true" : "false") +
                            ";\nconst ALIGN: bool = " + (align ? "true" : "false") +
                            ";\nconst LINEAR: bool = " + (linear ? "true" : "false") + ";\n" +
                            kernel::section("upsample", wgsl_sec);
                   });
                 });
}

void check_dtype(const at::Tensor& t, Mode mode, bool backward, const char* op) {
  const auto s = t.scalar_type();
  const bool ok =
      at::isFloatingType(s) || (s == at::kByte && (mode == Mode::Nearest || mode == Mode::Exact) && !backward);
  TORCH_CHECK_NOT_IMPLEMENTED(ok, "webgpu: \"", op, "\" not implemented for '", c10::toString(s), "'");
}

at::Tensor forward(Mode mode, bool align, const at::Tensor& self, at::IntArrayRef out_meta_sizes, const Scales& sc,
                   const char* op) {
  check_dtype(self, mode, false, op);
  at::Tensor in = self.contiguous();
  at::Tensor out = at::empty(out_meta_sizes, self.options());
  run(mode, false, align, in, out, in.sizes(), out.sizes(), sc);
  return in_memory_format_of(out, self);  // (ATen's upsample meta functions: the input's format)
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
// nearest / nearest-exact over 1-3 dims: the forward (Op) and its backward (Op_backward), whose scale
// arguments are DECL (parenthesised) named NAMES.
#define WEBGPU_UNPAREN(...) __VA_ARGS__
#define WEBGPU_NEAREST(fwd, bwd, mode, Op, DECL, NAMES)                                                           \
  at::Tensor fwd(const at::Tensor& self, at::IntArrayRef os, WEBGPU_UNPAREN DECL) {                               \
    return forward(mode, false, self,                                                                             \
                   structured::meta_output<at::meta::structured_##Op>(0, self, os, WEBGPU_UNPAREN NAMES).sizes(), \
                   {WEBGPU_UNPAREN NAMES}, #Op);                                                                  \
  }                                                                                                               \
  at::Tensor bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, WEBGPU_UNPAREN DECL) {              \
    structured::meta_output<at::meta::structured_##Op##_backward>(0, g, os, is, WEBGPU_UNPAREN NAMES);            \
    return backward(mode, false, g, is, {WEBGPU_UNPAREN NAMES}, #Op "_backward");                                 \
  }
WEBGPU_NEAREST(nearest1d, nearest1d_bwd, Mode::Nearest, upsample_nearest1d, (OS s), (s))
WEBGPU_NEAREST(nearest2d, nearest2d_bwd, Mode::Nearest, upsample_nearest2d, (OS h, OS w), (h, w))
WEBGPU_NEAREST(nearest3d, nearest3d_bwd, Mode::Nearest, upsample_nearest3d, (OS d, OS h, OS w), (d, h, w))
WEBGPU_NEAREST(exact1d, exact1d_bwd, Mode::Exact, _upsample_nearest_exact1d, (OS s), (s))
WEBGPU_NEAREST(exact2d, exact2d_bwd, Mode::Exact, _upsample_nearest_exact2d, (OS h, OS w), (h, w))
WEBGPU_NEAREST(exact3d, exact3d_bwd, Mode::Exact, _upsample_nearest_exact3d, (OS d, OS h, OS w), (d, h, w))
#undef WEBGPU_NEAREST
#undef WEBGPU_UNPAREN

// ---- linear ----
at::Tensor linear1d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS s) {
  return forward(Mode::Linear, ac, self,
                 structured::meta_output<at::meta::structured_upsample_linear1d>(0, self, os, ac, s).sizes(), {s},
                 "upsample_linear1d");
}
at::Tensor bilinear2d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS h, OS w) {
  const at::Tensor m = structured::meta_output<at::meta::structured_upsample_bilinear2d>(0, self, os, ac, h, w);
  if (self.scalar_type() == at::kByte)  // CPU's separable fixed-point kernel (ops/upsample_sep.cpp)
    return separable_interp2d(self, m.sizes(), ac, h, w, false, false);
  return forward(Mode::Linear, ac, self, m.sizes(), {h, w}, "upsample_bilinear2d");
}
at::Tensor trilinear3d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS d, OS h, OS w) {
  return forward(Mode::Linear, ac, self,
                 structured::meta_output<at::meta::structured_upsample_trilinear3d>(0, self, os, ac, d, h, w).sizes(),
                 {d, h, w}, "upsample_trilinear3d");
}
at::Tensor linear1d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS s) {
  structured::meta_output<at::meta::structured_upsample_linear1d_backward>(0, g, os, is, ac, s);
  return backward(Mode::Linear, ac, g, is, {s}, "upsample_linear1d_backward");
}
at::Tensor bilinear2d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS h, OS w) {
  structured::meta_output<at::meta::structured_upsample_bilinear2d_backward>(0, g, os, is, ac, h, w);
  return backward(Mode::Linear, ac, g, is, {h, w}, "upsample_bilinear2d_backward");
}
at::Tensor trilinear3d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS d, OS h, OS w) {
  structured::meta_output<at::meta::structured_upsample_trilinear3d_backward>(0, g, os, is, ac, d, h, w);
  return backward(Mode::Linear, ac, g, is, {d, h, w}, "upsample_trilinear3d_backward");
}

// ---- bicubic ----
at::Tensor bicubic2d(const at::Tensor& self, at::IntArrayRef os, bool ac, OS h, OS w) {
  const at::Tensor m = structured::meta_output<at::meta::structured_upsample_bicubic2d>(0, self, os, ac, h, w);
  if (self.scalar_type() == at::kByte) return separable_interp2d(self, m.sizes(), ac, h, w, true, false);
  return forward(Mode::Cubic, ac, self, m.sizes(), {h, w}, "upsample_bicubic2d");
}
at::Tensor bicubic2d_bwd(const at::Tensor& g, at::IntArrayRef os, at::IntArrayRef is, bool ac, OS h, OS w) {
  structured::meta_output<at::meta::structured_upsample_bicubic2d_backward>(0, g, os, is, ac, h, w);
  return backward(Mode::Cubic, ac, g, is, {h, w}, "upsample_bicubic2d_backward");
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
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
