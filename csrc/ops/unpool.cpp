// max_unpool2d / max_unpool3d (F.max_unpool1d goes through max_unpool2d) with CPU's checks (kernels:
// wgsl/kernels/unpool.wgsl). Their gradients are ATen's max_pool_double_backward, a gather. Indices are
// checked on the device; repeated indices resolve as on CPU (the last input of the plane wins).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <string>

#include "ops/common.h"
#include "ops/nn_common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// out: the result, already of its final size and memory format. self/indices: [..., spatial].
void unpool(const at::Tensor& self_, const at::Tensor& indices_, at::Tensor& out, int dims, const char* op) {
  if (out.numel() == 0) return;
  if (self_.numel() == 0) {
    out.zero_();
    return;
  }
  const at::Tensor self = self_.contiguous(), indices = indices_.contiguous();
  int64_t IV = 1, OV = 1;
  for (int i = 0; i < dims; ++i) {
    IV *= self.size(self.dim() - 1 - i);
    OV *= out.size(out.dim() - 1 - i);
  }
  const int64_t planes = self.numel() / IV;
  at::Tensor winners = at::zeros({planes * OV}, self.options().dtype(at::kInt));
  {
    Kernel k("unpool:claim");
    k.in(indices, CT::I64);
    k.out_atomic(winners, CT::RAW);
    const uint32_t code = k.error_flag(op, /*index_error=*/false);
    k.param_index("n", self.numel());
    k.param_index("in_plane", IV);
    k.param_index("out_plane", OV);
    k.param_index("idx_off", indices.storage_offset());
    k.param_index("win_off", winners.storage_offset());
    k.param("err_op", code);
    k.launch(grid(uint64_t(self.numel())), [&] { return per_element_main() + kernel::section("unpool", "claim"); });
  }
  at::Tensor dst = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  Kernel k("unpool:fill");
  k.in(self, CT::RAW);
  k.in(winners, CT::RAW);
  k.out(dst, CT::RAW);
  k.param_index("n", dst.numel());
  k.param_index("in_plane", IV);
  k.param_index("out_plane", OV);
  k.param_index("in_off", self.storage_offset());
  k.param_index("win_off", winners.storage_offset());
  k.param_index("out_off", dst.storage_offset());
  const std::string V = wgsl_value_type(CT::RAW, self.scalar_type());
  k.launch(grid(uint64_t(dst.numel())),
           [&] { return per_element_main() + "alias V = " + V + ";\n" + kernel::section("unpool", "fill"); });
  if (!dst.is_same(out)) out.copy_(dst);
}

// CPU's checks of the input and indices, shared by 2-d and 3-d (`where` starts the empty-dim message).
void check_unpool_input(const at::Tensor& self, const at::Tensor& indices, const char* where) {
  TORCH_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, where, "Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
}

at::Tensor& max_unpool2d_out(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                             at::Tensor& out) {
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(output_size.size() == 2, "There should be exactly two elements (height, width) in output_size, but got ",
              output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4,
              "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with ", self.dim(),
              " dimensions.");
  check_unpool_input(self, indices, "max_unpooling2d_forward_out_cpu(): ");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "max_unpool2d: expected out of dtype ", self.scalar_type(),
              " but got ", out.scalar_type());
  const auto mf = self.suggest_memory_format();
  if (self.dim() == 3)
    out.resize_({self.size(0), output_size[0], output_size[1]});
  else
    out.resize_({self.size(0), self.size(1), output_size[0], output_size[1]}, mf);
  unpool(self, indices, out, 2, "max_unpool2d");
  return out;
}

constexpr auto max_unpool2d = via_out<&max_unpool2d_out>;

at::Tensor& max_unpool3d_out(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(indices.scalar_type() == at::kLong, "elements in indices should be type int64");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5,
              "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with ", self.dim(),
              " dimensions.");
  TORCH_CHECK(output_size.size() == 3,
              "There should be exactly three elements (depth, height, width) in output_size, but got ",
              output_size.size(), " elements.");
  TORCH_CHECK(stride.size() == 3,
              "There should be exactly three elements (depth, height, width) in stride, but got: ", stride.size(),
              " elements.");
  TORCH_CHECK(padding.size() == 3,
              "There should be exactly three elements (depth, height, width) in padding, but got: ", padding.size(),
              " elements.");
  check_unpool_input(self, indices, "max_unpooling3d(): ");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
              "strides should be greater than zero, but got stride: ", stride);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "max_unpool3d: expected out of dtype ", self.scalar_type(),
              " but got ", out.scalar_type());
  if (self.dim() == 4)
    out.resize_({self.size(0), output_size[0], output_size[1], output_size[2]});
  else
    out.resize_({self.size(0), self.size(1), output_size[0], output_size[1], output_size[2]});
  unpool(self, indices, out, 3, "max_unpool3d");
  return out;
}

constexpr auto max_unpool3d = via_out<&max_unpool3d_out>;

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  WEBGPU_IMPL_OUT(m, "max_unpool2d", "out", max_unpool2d);
  WEBGPU_IMPL_OUT(m, "max_unpool3d", "out", max_unpool3d);
}
