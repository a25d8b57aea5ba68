// Reflection and replication padding over the last 1, 2 or 3 dims (F.pad's 'reflect' and
// 'replicate' modes) and their backward ops. Forward: one remap dispatch (wgsl/kernels/shape.wgsl) that
// reads each output element from its mirrored / clamped source. Backward: one gather dispatch
// (wgsl/kernels/pad.wgsl) where each grad_input element sums the grad_output elements it was copied to, so
// no atomics and a fixed summation order. Constant padding (constant_pad_nd) and circular padding
// (_pad_circular) are ATen composites over fill_/copy_/cat.
#include <ATen/NativeFunctions.h>
#include <ATen/native/Padding.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/reflection_pad1d_backward_native.h>
#include <ATen/ops/reflection_pad1d_native.h>
#include <ATen/ops/reflection_pad3d_backward_native.h>
#include <ATen/ops/reflection_pad3d_native.h>
#include <ATen/ops/replication_pad1d_backward_native.h>
#include <ATen/ops/replication_pad1d_native.h>
#include <ATen/ops/replication_pad2d_native.h>
#include <ATen/ops/replication_pad3d_native.h>
#include <torch/library.h>

#include "ops/rows.h"
#include "ops/common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "engines/remap.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using shape::Mode;
using shape::RDim;

// out = pad(in) over the last K = padding.size() / 2 dims; padding is (left, right) innermost first.
void pad_forward(const at::Tensor& in, at::IntArrayRef padding, const at::Tensor& out, bool reflect) {
  check_storable_dtype(in.scalar_type(), reflect ? "reflection_pad" : "replication_pad");
  const int64_t K = int64_t(padding.size()) / 2, R = in.dim();
  // CPU's kernels dispatch over every type but bool.
  TORCH_CHECK_NOT_IMPLEMENTED(in.scalar_type() != at::kBool, "\"", reflect ? "reflection" : "replication", "_pad", K,
                              "d\" not implemented for 'Bool'");
  if (out.numel() == 0) return;
  std::vector<RDim> dims;
  for (int64_t d = 0; d < R; ++d) {
    RDim x{out.size(d), out.stride(d), in.size(d), in.stride(d), Mode::Ident, 0};
    const int64_t k = R - 1 - d;  // 0: innermost
    if (k < K) {
      x.mode = reflect ? Mode::Reflect : Mode::Replicate;
      x.a = padding[2 * k];
    }
    dims.push_back(x);
  }
  shape::remap(out, in, dims, reflect ? "reflection_pad" : "replication_pad");
}

// grad_input = d pad / d in applied to grad_output.
void pad_backward(const at::Tensor& grad_output_, const at::Tensor& in, at::IntArrayRef padding,
                  const at::Tensor& grad_input_, bool reflect) {
  const char* name = reflect ? "reflection_pad_backward" : "replication_pad_backward";
  check_supported_dtype(grad_output_.scalar_type(), name);
  const int64_t K = int64_t(padding.size()) / 2, R = in.dim();
  TORCH_CHECK(grad_output_.dim() == R, name, ": expected grad_output of ", R, " dims, got ", grad_output_.dim());
  for (int64_t d = 0; d < R; ++d) {
    const int64_t k = R - 1 - d;
    const int64_t want = k < K ? in.size(d) + padding[2 * k] + padding[2 * k + 1] : in.size(d);
    TORCH_CHECK(grad_output_.size(d) == want, name, ": gradOutput size unexpected at dimension ", d,
                ". Expected: ", want, ", Got: ", grad_output_.size(d));
  }
  if (grad_input_.numel() == 0) return;
  at::Tensor go = grad_output_.contiguous();
  at::Tensor gi = grad_input_.is_contiguous() ? grad_input_ : at::empty(grad_input_.sizes(), grad_input_.options());
  if (go.numel() == 0) {
    gi.zero_();
  } else {
    // Operands past the binding limit: slices of the planes before the padded dims (ops/rows.h).
    int64_t planes = 1;
    for (int64_t d = 0; d < R - K; ++d) planes *= in.size(d);
    for_each_slice(
        {gi.view({planes, -1}), go.view({planes, -1})}, planes, name,
        [&](const std::vector<at::Tensor>& t, int64_t, int64_t) {
          Kernel k(std::string(reflect ? "pad_bw_reflect:" : "pad_bw_replicate:") + std::to_string(K));
          k.in(t[1], CT::F32);
          k.out(t[0], CT::F32);
          k.param_index("n", t[0].numel());
          k.param_index("go_off", t[1].storage_offset());
          k.param_index("gi_off", t[0].storage_offset());
          std::vector<int64_t> in_size, out_size;
          std::vector<uint32_t> pad_left;
          for (int64_t j = 0; j < K; ++j) {
            const int64_t d = R - 1 - j;
            in_size.push_back(in.size(d));
            out_size.push_back(go.size(d));
            TORCH_CHECK(std::abs(padding[2 * j]) <= INT32_MAX, name, ": padding too large");
            pad_left.push_back(uint32_t(int32_t(padding[2 * j])));
          }
          k.param_array("in_size", in_size);
          k.param_array("out_size", out_size);
          k.param_array("pad_left", pad_left, kernel::Params::Type::I32S);
          k.launch(grid(uint64_t(t[0].numel())), [&] {
            std::string per, loops, close, index = "ob";
            if (reflect) {
              per =
                  "    var p = vec3<i32>(c + pl, -1, -1);\n"
                  "    if (c >= 1) { p.y = pl - c; }\n"
                  "    if (c <= i32(n) - 2) { p.z = pl + 2 * (i32(n) - 1) - c; }\n"
                  "    if (p.x >= i32(on)) { p.x = -1; }\n"
                  "    if (p.y >= i32(on)) { p.y = -1; }\n"
                  "    if (p.z >= i32(on)) { p.z = -1; }\n"
                  "    cand[d] = p;\n";
            } else {
              per =
                  "    var l = c + pl;\n"
                  "    var h = c + pl;\n"
                  "    if (c == 0) { l = 0; }\n"
                  "    if (c == i32(n) - 1) { h = i32(on) - 1; }\n"
                  "    l = max(l, 0);\n"
                  "    h = min(h, i32(on) - 1);\n"
                  "    cand[d] = vec3<i32>(l, h - l + 1, 0);\n";
            }
            for (int64_t j = K - 1; j >= 0; --j) {  // outermost padded dim first
              const std::string J = std::to_string(j);
              if (reflect) {
                loops += "  for (var j" + J + " = 0; j" + J + " < 3; j" + J + " = j" + J + " + 1) {\n    let q" + J +
                         " = cand[" + J + "][j" + J + "];\n    if (q" + J + " < 0) { continue; }\n";
              } else {
                loops += "  for (var j" + J + " = 0; j" + J + " < cand[" + J + "].y; j" + J + " = j" + J +
                         " + 1) {\n    let q" + J + " = cand[" + J + "].x + j" + J + ";\n";
              }
              index += " + u32(q" + J + ") * ostr[" + J + "]";
              close += "  }\n";
            }
            loops += "    acc = acc + ld0(" + index + ");\n" + close;
            return kernel::fill(kernel::library("pad"), {{"D", std::to_string(K)}, {"PERDIM", per}, {"LOOPS", loops}});
          });
        });
  }
  if (!gi.is_same(grad_input_)) grad_input_.copy_(gi);
}

// ---- structured ops (ATen's meta functions check arguments and size the output) -----------------

#define WEBGPU_PAD_FWD(Name, Meta, reflect)                                             \
  struct Name : at::meta::Meta {                                                        \
    void impl(const at::Tensor& self, at::IntArrayRef padding, const at::Tensor& out) { \
      pad_forward(self, padding, out, reflect);                                         \
    }                                                                                   \
  };
WEBGPU_PAD_FWD(ReflectionPad1d, structured_reflection_pad1d, true)
WEBGPU_PAD_FWD(ReflectionPad3d, structured_reflection_pad3d, true)
WEBGPU_PAD_FWD(ReplicationPad1d, structured_replication_pad1d, false)
WEBGPU_PAD_FWD(ReplicationPad2d, structured_replication_pad2d, false)
WEBGPU_PAD_FWD(ReplicationPad3d, structured_replication_pad3d, false)
#undef WEBGPU_PAD_FWD

#define WEBGPU_PAD_BWD(Name, Meta, reflect)                                                   \
  struct Name : at::meta::Meta {                                                              \
    void impl(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef padding, \
              const at::Tensor& grad_input) {                                                 \
      pad_backward(grad_output, self, padding, grad_input, reflect);                          \
    }                                                                                         \
  };
WEBGPU_PAD_BWD(ReflectionPad1dBackward, structured_reflection_pad1d_backward, true)
WEBGPU_PAD_BWD(ReflectionPad3dBackward, structured_reflection_pad3d_backward, true)
WEBGPU_PAD_BWD(ReplicationPad1dBackward, structured_replication_pad1d_backward, false)
#undef WEBGPU_PAD_BWD

// A channels-last input (2d and 3d padding of batched images) gives a channels-last result, as on
// CPU: the output is made in that layout (the kernels write through its strides), where the padded
// sizes are valid; the op's own checks then run as for out=.
at::Tensor empty_padded_like(const at::Tensor& self, at::IntArrayRef padding) {
  const at::MemoryFormat mf = self.dim() >= 4 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
  const int64_t K = int64_t(padding.size()) / 2;
  if (mf == at::MemoryFormat::Contiguous || K > self.dim()) return at::Tensor();
  std::vector<int64_t> size = self.sizes().vec();
  for (int64_t k = 0; k < K; ++k) {
    int64_t& n = size[self.dim() - 1 - k];
    n += padding[2 * k] + padding[2 * k + 1];
    if (n < 1) return at::Tensor();
  }
  return at::empty(size, self.options().memory_format(mf));
}

template <class Op>
at::Tensor& fwd_out(const at::Tensor& self, c10::SymIntArrayRef padding, at::Tensor& out) {
  return structured::OutFn<Op, const at::Tensor&, at::IntArrayRef>::call(self, C10_AS_INTARRAYREF_SLOW(padding), out);
}
template <class Op>
at::Tensor fwd(const at::Tensor& self, c10::SymIntArrayRef padding) {
  at::Tensor out = empty_padded_like(self, C10_AS_INTARRAYREF_SLOW(padding));
  if (out.defined()) return fwd_out<Op>(self, padding, out);
  return structured::functional<Op, const at::Tensor&, at::IntArrayRef>(self, C10_AS_INTARRAYREF_SLOW(padding));
}
template <class Op>
at::Tensor bwd(const at::Tensor& g, const at::Tensor& self, c10::SymIntArrayRef padding) {
  return structured::functional<Op, const at::Tensor&, const at::Tensor&, at::IntArrayRef>(
      g, self, C10_AS_INTARRAYREF_SLOW(padding));
}
template <class Op>
at::Tensor& bwd_out(const at::Tensor& g, const at::Tensor& self, c10::SymIntArrayRef padding, at::Tensor& out) {
  return structured::OutFn<Op, const at::Tensor&, const at::Tensor&, at::IntArrayRef>::call(
      g, self, C10_AS_INTARRAYREF_SLOW(padding), out);
}

// ---- unstructured ones: reflection_pad2d and the 2d/3d backward ops -------------------------------

std::vector<int64_t> reflection_pad2d_size(const at::Tensor& input, at::IntArrayRef padding) {
  at::native::padding::check_valid_input<2>(input, padding);
  const int64_t ndim = input.dim();
  const int64_t dim_w = ndim == 4 ? 3 : 2, dim_h = dim_w - 1;
  const int64_t pad_l = padding[0], pad_r = padding[1], pad_t = padding[2], pad_b = padding[3];
  const int64_t input_h = input.size(dim_h), input_w = input.size(dim_w);
  const int64_t output_h = input_h + pad_t + pad_b, output_w = input_w + pad_l + pad_r;
  TORCH_CHECK(pad_l < input_w && pad_r < input_w,
              "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
              pad_l, ", ", pad_r, ") at dimension ", dim_w, " of input ", input.sizes());
  TORCH_CHECK(pad_t < input_h && pad_b < input_h,
              "Argument #6: Padding size should be less than the corresponding input dimension, but got: padding (",
              pad_t, ", ", pad_b, ") at dimension ", dim_h, " of input ", input.sizes());
  TORCH_CHECK(output_w >= 1 || output_h >= 1, "input (H: ", input_h, ", W: ", input_w,
              ")is too small. Calculated output H: ", output_h, " W: ", output_w);
  std::vector<int64_t> size = input.sizes().vec();
  size[dim_h] = output_h;
  size[dim_w] = output_w;
  return size;
}

at::Tensor& reflection_pad2d_out(const at::Tensor& self, c10::SymIntArrayRef padding_, at::Tensor& out) {
  at::IntArrayRef padding = C10_AS_INTARRAYREF_SLOW(padding_);
  auto size = reflection_pad2d_size(self, padding);
  TORCH_CHECK(out.dtype() == self.dtype(), "Expected out tensor to have dtype ", self.dtype(), ", but got ",
              out.dtype(), " instead");
  at::native::resize_output(out, size);
  pad_forward(self, padding, out, true);
  return out;
}

at::Tensor reflection_pad2d(const at::Tensor& self, c10::SymIntArrayRef padding) {
  at::Tensor out = empty_padded_like(self, C10_AS_INTARRAYREF_SLOW(padding));
  if (!out.defined()) out = at::empty({0}, self.options());
  return reflection_pad2d_out(self, padding, out);
}

template <int D, bool kReflect>
at::Tensor& bwd_unstructured_out(const at::Tensor& g, const at::Tensor& self, c10::SymIntArrayRef padding_,
                                 at::Tensor& grad_input) {
  at::IntArrayRef padding = C10_AS_INTARRAYREF_SLOW(padding_);
  TORCH_CHECK(int64_t(padding.size()) == 2 * D, "padding size is expected to be ", 2 * D);
  at::native::resize_output(grad_input, self.sizes());
  pad_backward(g, self, padding, grad_input, kReflect);
  return grad_input;
}

template <int D, bool kReflect>
at::Tensor bwd_unstructured(const at::Tensor& g, const at::Tensor& self, c10::SymIntArrayRef padding) {
  at::Tensor gi = at::empty(self.sizes(), g.options());
  return bwd_unstructured_out<D, kReflect>(g, self, padding, gi);
}

// ---- constant padding: one dispatch instead of ATen's fill_ + copy_ ---------------------------------

at::Tensor constant_pad_nd(const at::Tensor& self, c10::SymIntArrayRef pad_, const c10::Scalar& value) {
  at::IntArrayRef pad = C10_AS_INTARRAYREF_SLOW(pad_);
  TORCH_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  const auto input_sizes = self.sizes();
  const int64_t l_inp = self.dim(), l_pad = int64_t(pad.size()) / 2, l_diff = l_inp - l_pad;
  TORCH_CHECK(l_inp >= l_pad,
              "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
              pad.size(), "while the input has ", l_inp, "dimensions.");
  // Negative pads crop first (the same narrow() calls, so the same errors, as CPU).
  at::Tensor c_input = self;
  bool all_pads_non_positive = true;
  for (int64_t i = l_diff; i < l_inp; ++i) {
    const int64_t pad_idx = 2 * (l_inp - i - 1);
    if (pad[pad_idx] < 0)
      c_input = c_input.narrow(i, -pad[pad_idx], c_input.size(i) + pad[pad_idx]);
    else if (pad[pad_idx] != 0)
      all_pads_non_positive = false;
    if (pad[pad_idx + 1] < 0)
      c_input = c_input.narrow(i, 0, c_input.size(i) + pad[pad_idx + 1]);
    else if (pad[pad_idx + 1] != 0)
      all_pads_non_positive = false;
  }
  if (all_pads_non_positive) return c_input.clone();
  std::vector<int64_t> new_shape(input_sizes.begin(), input_sizes.begin() + l_diff);
  for (int64_t i = 0; i < l_pad; ++i) {
    const int64_t pad_idx = int64_t(pad.size()) - (i + 1) * 2;
    const int64_t new_dim = input_sizes[l_diff + i] + pad[pad_idx] + pad[pad_idx + 1];
    TORCH_CHECK(new_dim >= 0, "The input size ", input_sizes[l_diff + i], ", plus negative padding ", pad[pad_idx],
                " and ", pad[pad_idx + 1], " resulted in a negative output size, which is invalid. Check dimension ",
                l_diff + i, " of your input.");
    new_shape.push_back(new_dim);
  }
  check_storable_dtype(self.scalar_type(), "constant_pad_nd");
  at::Tensor out = at::empty(new_shape, self.options().memory_format(self.suggest_memory_format()));
  if (out.numel() == 0) return out;
  if (c_input.numel() == 0) return out.fill_(value);
  std::vector<RDim> dims;
  for (int64_t d = 0; d < l_inp; ++d) {
    RDim x{out.size(d), out.stride(d), c_input.size(d), c_input.stride(d), Mode::Ident, 0};
    if (d >= l_diff) {
      const int64_t left = pad[2 * (l_inp - d - 1)];
      if (left > 0 || out.size(d) != c_input.size(d)) {
        x.mode = Mode::Pad;
        x.a = std::max<int64_t>(left, 0);
      }
    }
    dims.push_back(x);
  }
  shape::remap(out, c_input, dims, "constant_pad_nd", value);
  return out;
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
// "NAME" -> FN<ARGS...> and "NAME.OVL" -> FN_out<ARGS...>: WEBGPU_IMPL_OUT for these templates.
#define WEBGPU_PAD(NAME, OVL, FN, ...)       \
  m.impl(NAME, TORCH_FN((FN<__VA_ARGS__>))); \
  m.impl(NAME "." OVL, TORCH_FN((FN##_out<__VA_ARGS__>)));
  m.impl("constant_pad_nd", TORCH_FN(constant_pad_nd));
  WEBGPU_PAD("reflection_pad1d", "out", fwd, ReflectionPad1d)
  WEBGPU_IMPL_OUT(m, "reflection_pad2d", "out", reflection_pad2d);
  WEBGPU_PAD("reflection_pad3d", "out", fwd, ReflectionPad3d)
  WEBGPU_PAD("replication_pad1d", "out", fwd, ReplicationPad1d)
  WEBGPU_PAD("replication_pad2d", "out", fwd, ReplicationPad2d)
  WEBGPU_PAD("replication_pad3d", "out", fwd, ReplicationPad3d)
  WEBGPU_PAD("reflection_pad1d_backward", "grad_input", bwd, ReflectionPad1dBackward)
  WEBGPU_PAD("reflection_pad2d_backward", "grad_input", bwd_unstructured, 2, true)
  WEBGPU_PAD("reflection_pad3d_backward", "grad_input", bwd, ReflectionPad3dBackward)
  WEBGPU_PAD("replication_pad1d_backward", "grad_input", bwd, ReplicationPad1dBackward)
  WEBGPU_PAD("replication_pad2d_backward", "grad_input", bwd_unstructured, 2, false)
  WEBGPU_PAD("replication_pad3d_backward", "grad_input", bwd_unstructured, 3, false)
#undef WEBGPU_PAD
}

}  // namespace webgpu::ops
