// im2col (F.unfold) and col2im (F.fold), each the other's gradient (kernels: wgsl/kernels/fold.wgsl).
// Checks are CPU's (im2col_shape_check.h), in CPU's order; any kernel, dilation, padding and stride.
// im2col moves raw values (float types and bool, as CPU); col2im sums in f32 and rounds once.
#include <ATen/ATen.h>
#include <ATen/native/im2col_shape_check.h>
#include <torch/library.h>

#include <cstring>
#include <string>

#include "ops/rows.h"
#include "ops/common.h"
#include "ops/nn_common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

void check_pairs(at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  TORCH_CHECK(kernel.size() == 2, "It is expected kernel_size equals to 2, but got size ", kernel.size());
  TORCH_CHECK(dilation.size() == 2, "It is expected dilation equals to 2, but got size ", dilation.size());
  TORCH_CHECK(padding.size() == 2, "It is expected padding equals to 2, but got size ", padding.size());
  TORCH_CHECK(stride.size() == 2, "It is expected stride equals to 2, but got size ", stride.size());
}

// One launch over dst's elements; N * C images of H x W, blocks OH x OW.
void launch(const char* sec, const at::Tensor& src, const at::Tensor& dst, CT ct, int64_t H, int64_t W,
            at::IntArrayRef k_, at::IntArrayRef d, at::IntArrayRef p, at::IntArrayRef s, int64_t OH, int64_t OW) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  // Operands past the binding limit: slices of the N * C planes (ops/rows.h).
  const int64_t planes =
      std::max<int64_t>(1, (std::strcmp(sec, "im2col") == 0 ? src.numel() : n) / std::max<int64_t>(1, H * W));
  for_each_slice({src.view({planes, -1}), dst.view({planes, -1})}, planes, sec,
                 [&](const std::vector<at::Tensor>& t, int64_t, int64_t) {
                   Kernel k(std::string("fold:") + sec);
                   k.in(t[0], ct);
                   k.out(t[1], ct);
                   k.param_index("n", t[1].numel());
                   k.param_index("H", H);
                   k.param_index("W", W);
                   k.param_index("kh", k_[0]);
                   k.param_index("kw", k_[1]);
                   k.param_index("dh", d[0]);
                   k.param_index("dw", d[1]);
                   k.param_index("ph", p[0]);
                   k.param_index("pw", p[1]);
                   k.param_index("sh", s[0]);
                   k.param_index("sw", s[1]);
                   k.param_index("OH", OH);
                   k.param_index("OW", OW);
                   k.param_index("src_off", t[0].storage_offset());
                   k.param_index("dst_off", t[1].storage_offset());
                   const std::string V = wgsl_value_type(ct, src.scalar_type());
                   k.launch(grid(uint64_t(t[1].numel())), [&] {
                     return per_element_main() + "alias V = " + V + ";\n" + kernel::section("fold", sec);
                   });
                 });
}

int64_t blocks(int64_t size, int64_t k, int64_t d, int64_t p, int64_t s) {
  return (size + 2 * p - (d * (k - 1) + 1)) / s + 1;
}

at::Tensor& im2col_out(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation,
                       at::IntArrayRef padding, at::IntArrayRef stride, at::Tensor& out) {
  check_pairs(kernel, dilation, padding, stride);
  at::native::im2col_shape_check(self, at::Tensor(), kernel[0], kernel[1], dilation[0], dilation[1], padding[0],
                                 padding[1], stride[0], stride[1]);
  check_kernel_dtype(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kBool, self.scalar_type(),
                     "im2col", "");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "im2col: expected out of dtype ", self.scalar_type(),
              " but got ", out.scalar_type());
  at::Tensor in = self.contiguous();
  const bool batched = in.dim() == 4;
  if (!batched) in = in.unsqueeze(0);
  const int64_t N = in.size(0), C = in.size(1), H = in.size(2), W = in.size(3);
  const int64_t OH = blocks(H, kernel[0], dilation[0], padding[0], stride[0]);
  const int64_t OW = blocks(W, kernel[1], dilation[1], padding[1], stride[1]);
  const int64_t planes = C * kernel[0] * kernel[1];
  if (batched)
    out.resize_({N, planes, OH * OW});
  else
    out.resize_({planes, OH * OW});
  at::Tensor dst = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  launch("im2col", in, dst, CT::RAW, H, W, kernel, dilation, padding, stride, OH, OW);
  if (!dst.is_same(out)) out.copy_(dst);
  return out;
}

constexpr auto im2col = via_out<&im2col_out>;

at::Tensor& col2im_out(const at::Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel,
                       at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride, at::Tensor& out) {
  TORCH_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size ", output_size.size());
  check_pairs(kernel, dilation, padding, stride);
  at::native::col2im_shape_check(self, at::Tensor(), output_size[0], output_size[1], kernel[0], kernel[1], dilation[0],
                                 dilation[1], padding[0], padding[1], stride[0], stride[1]);
  check_kernel_dtype(at::isFloatingType(self.scalar_type()), self.scalar_type(), "col2im", "");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "col2im: expected out of dtype ", self.scalar_type(),
              " but got ", out.scalar_type());
  at::Tensor in = self.contiguous();
  const bool batched = in.dim() == 3;
  if (!batched) in = in.unsqueeze(0);
  const int64_t N = in.size(0), H = output_size[0], W = output_size[1];
  const int64_t C = in.size(1) / (kernel[0] * kernel[1]);
  const int64_t OH = blocks(H, kernel[0], dilation[0], padding[0], stride[0]);
  const int64_t OW = blocks(W, kernel[1], dilation[1], padding[1], stride[1]);
  if (batched)
    out.resize_({N, C, H, W});
  else
    out.resize_({C, H, W});
  at::Tensor dst = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  launch("col2im", in, dst, CT::F32, H, W, kernel, dilation, padding, stride, OH, OW);
  if (!dst.is_same(out)) out.copy_(dst);
  return out;
}

constexpr auto col2im = via_out<&col2im_out>;

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  WEBGPU_IMPL_OUT(m, "im2col", "out", im2col);
  WEBGPU_IMPL_OUT(m, "col2im", "out", col2im);
}
