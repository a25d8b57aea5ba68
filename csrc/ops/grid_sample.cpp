// grid_sampler_2d / grid_sampler_3d and their backward (kernels: wgsl/kernels/grid_sample.wgsl):
// bilinear, nearest and (2-d) bicubic sampling with zeros, border or reflection padding. F.grid_sample
// and aten::grid_sampler are ATen composites over these. Checks are CPU's (GridSamplerUtils.h).
// The input gradient is a scatter (any grid point may read any input element): f32 atomic adds,
// into the result itself for float32 and into an f32 accumulator for the half types.
#include <ATen/ATen.h>
#include <ATen/native/GridSamplerUtils.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <string>
#include <tuple>

#include "ops/rows.h"
#include "ops/common.h"
#include "ops/nn_common.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

struct Geo {
  int dims;
  int64_t N, C, in[3], out[3];
  int64_t points() const { return N * out[0] * out[1] * out[2]; }
};

Geo geometry(const at::Tensor& input, const at::Tensor& grid, int dims) {
  Geo g{dims, input.size(0), input.size(1), {1, 1, 1}, {1, 1, 1}};
  for (int i = 0; i < dims; ++i) {
    g.in[3 - dims + i] = input.size(2 + i);
    g.out[3 - dims + i] = grid.size(1 + i);
  }
  return g;
}

void check(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t pad, int dims, const char* op) {
  at::native::check_grid_sampler_common(input, grid);
  if (dims == 2)
    at::native::check_grid_sampler_2d(input, grid);
  else
    at::native::check_grid_sampler_3d(input, grid, mode);
  TORCH_CHECK(mode >= 0 && mode <= 2, op, ": unknown interpolation mode ", mode, " (0 bilinear, 1 nearest, 2 bicubic)");
  TORCH_CHECK(pad >= 0 && pad <= 2, op, ": unknown padding mode ", pad, " (0 zeros, 1 border, 2 reflection)");
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(), "expected scalar type ", input.scalar_type(), " but found ",
              grid.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()), "\"", op, "\" not implemented for '",
                              c10::toString(input.scalar_type()), "'");
}

std::string consts(int64_t mode, int64_t pad, bool align, int dims, at::ScalarType dt) {
  const int half = dt == at::kHalf ? 1 : dt == at::kBFloat16 ? 2 : 0;
  return "const HALF: u32 = " + std::to_string(half) + "u;\nconst MODE: u32 = " + std::to_string(mode) +
         "u;\nconst PAD: u32 = " + std::to_string(pad) + "u;\nconst ALIGN: bool = " + (align ? "true" : "false") +
         ";\nconst DIMS: u32 = " + std::to_string(dims) + "u;\n";
}

std::string key(const char* what, int64_t mode, int64_t pad, bool align, int dims) {
  return std::string("grid_sampler:") + what + ":" + std::to_string(dims) + "d:" + std::to_string(mode) + ":" +
         std::to_string(pad) + (align ? ":align" : "");
}

void params(Kernel& k, const Geo& g) {
  k.param_index("n", g.points());
  k.param_index("C", g.C);
  k.param_array("in_size", std::vector<int64_t>(g.in, g.in + 3));
  k.param_array("out_size", std::vector<int64_t>(g.out, g.out + 3));
  // Elements are indexed in u32 (the kernel forms (n * C + c) * volume).
  const int64_t big = std::max(g.N * g.C * g.in[0] * g.in[1] * g.in[2], g.N * g.C * g.out[0] * g.out[1] * g.out[2]);
  TORCH_CHECK(big <= int64_t(UINT32_MAX), "webgpu: grid_sampler: ", big,
              " elements do not fit the 32-bit indexing of webgpu kernels");
}

at::Tensor forward(const at::Tensor& input_, const at::Tensor& grid_, int64_t mode, int64_t pad, bool align, int dims,
                   const char* op) {
  check(input_, grid_, mode, pad, dims, op);
  const at::Tensor input = input_.contiguous(), grid = grid_.contiguous();
  const Geo g = geometry(input, grid, dims);
  std::vector<int64_t> sizes = {g.N, g.C};
  for (int i = 0; i < dims; ++i) sizes.push_back(grid.size(1 + i));
  at::Tensor out = at::empty(sizes, input.options().memory_format(at::MemoryFormat::Contiguous));
  if (out.numel() == 0) return out;
  // Operands past the binding limit: slices of the batch (ops/rows.h).
  for_each_slice({input, grid, out}, g.N, op, [&](const std::vector<at::Tensor>& t, int64_t, int64_t nb) {
    Geo gs = g;
    gs.N = nb;
    Kernel k(key("fwd", mode, pad, align, dims));
    k.in(t[0], CT::F32);
    k.in(t[1], CT::F32);
    k.out(t[2], CT::F32);
    params(k, gs);
    k.param_index("in_off", t[0].storage_offset());
    k.param_index("grid_off", t[1].storage_offset());
    k.param_index("out_off", t[2].storage_offset());
    k.launch(kernel::grid(uint64_t(gs.points())), [&] {
      return per_element_main() + consts(mode, pad, align, dims, input.scalar_type()) +
             kernel::section("grid_sample", "fwd");
    });
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> backward(const at::Tensor& grad_, const at::Tensor& input_, const at::Tensor& grid_,
                                            int64_t mode, int64_t pad, bool align, std::array<bool, 2> mask, int dims,
                                            const char* op) {
  check(input_, grid_, mode, pad, dims, op);
  TORCH_CHECK(grad_.scalar_type() == input_.scalar_type(), op, ": expected grad_output of dtype ", input_.scalar_type(),
              " but got ", grad_.scalar_type());
  const at::Tensor input = input_.contiguous(), grid = grid_.contiguous(), grad = grad_.contiguous();
  const Geo g = geometry(input, grid, dims);
  std::vector<int64_t> out_sizes = {g.N, g.C};
  for (int i = 0; i < dims; ++i) out_sizes.push_back(grid.size(1 + i));
  TORCH_CHECK(grad.sizes() == at::IntArrayRef(out_sizes), op, ": expected grad_output of size ",
              at::IntArrayRef(out_sizes), " but got ", grad.sizes());
  const auto opts = input.options().memory_format(at::MemoryFormat::Contiguous);
  at::Tensor grad_grid = at::empty(grid.sizes(), grid.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor grad_input;
  // float32 accumulates into the result; the half types into an f32 buffer rounded once at the end.
  at::Tensor acc;
  if (mask[0]) {
    grad_input = at::zeros(input.sizes(), opts);
    acc = input.scalar_type() == at::kFloat ? grad_input : at::zeros(input.sizes(), opts.dtype(at::kFloat));
  }
  if (grad_grid.numel() == 0) return {grad_input, grad_grid};
  if (g.C == 0) return {grad_input, grad_grid.zero_()};
  const bool m0 = mask[0];
  for_each_slice({grad, input, grid, grad_grid, acc}, g.N, op,
                 [&](const std::vector<at::Tensor>& t, int64_t, int64_t nb) {
                   Geo gs = g;
                   gs.N = nb;
                   Kernel k(key(mask[0] ? "bwd" : "bwd_grid", mode, pad, align, dims));
                   k.in(t[0], CT::F32);
                   k.in(t[1], CT::F32);
                   k.in(t[2], CT::F32);
                   k.out(t[3], CT::F32);
                   if (mask[0]) k.out_atomic(t[4], CT::F32);
                   params(k, gs);
                   k.param_index("grad_off", t[0].storage_offset());
                   k.param_index("in_off", t[1].storage_offset());
                   k.param_index("grid_off", t[2].storage_offset());
                   k.param_index("gg_off", t[3].storage_offset());
                   k.param_index("gi_off", mask[0] ? t[4].storage_offset() : 0);  // read only under MASK0
                   k.launch(kernel::grid(uint64_t(gs.points())), [&] {
                     std::string pre = consts(mode, pad, align, dims, input.scalar_type()) +
                                       "const MASK0: bool = " + (m0 ? "true" : "false") + ";\n";
                     if (m0)
                       pre +=
                           "fn gi_add(e: u32, v: f32) {\n  loop {\n    let old = wd4(e);\n"
                           "    if (cas4(e, old, bitcast<u32>(bitcast<f32>(old) + v))) { break; }\n  }\n}\n";
                     else
                       pre += "fn gi_add(e: u32, v: f32) {}\n";
                     return per_element_main() + pre + kernel::section("grid_sample", "bwd");
                   });
                 });
  if (mask[0] && !acc.is_same(grad_input)) grad_input.copy_(acc);
  return {grad_input, grad_grid};
}

at::Tensor gs2d(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t pad, bool align) {
  return forward(input, grid, mode, pad, align, 2, "grid_sampler_2d");
}
at::Tensor gs3d(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t pad, bool align) {
  return forward(input, grid, mode, pad, align, 3, "grid_sampler_3d");
}
std::tuple<at::Tensor, at::Tensor> gs2d_bwd(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& grid,
                                            int64_t mode, int64_t pad, bool align, std::array<bool, 2> mask) {
  return backward(grad, input, grid, mode, pad, align, mask, 2, "grid_sampler_2d_backward");
}
std::tuple<at::Tensor, at::Tensor> gs3d_bwd(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& grid,
                                            int64_t mode, int64_t pad, bool align, std::array<bool, 2> mask) {
  return backward(grad, input, grid, mode, pad, align, mask, 3, "grid_sampler_3d_backward");
}

}  // namespace
}  // namespace webgpu::ops

WEBGPU_LIBRARY_IMPL(m) {
  using namespace webgpu::ops;
  m.impl("grid_sampler_2d", TORCH_FN(gs2d));
  m.impl("grid_sampler_3d", TORCH_FN(gs3d));
  m.impl("grid_sampler_2d_backward", TORCH_FN(gs2d_bwd));
  m.impl("grid_sampler_3d_backward", TORCH_FN(gs3d_bwd));
}
