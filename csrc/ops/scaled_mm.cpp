// torch._scaled_mm (and .out) on float8 matrices: tensor-wise and row-wise scales, computed in float32
// (each float8 operand widened exactly, scaled, multiplied on the GEMM engine; bias added in float32;
// a float8 result divided by scale_result, as CPU's emulation does) and cast once to out_dtype. The
// argument rules are CUDA's (aten/src/ATen/native/cuda/Blas.cpp in torch 2.13): 2-D operands, a
// row-major and b column-major, dimensions multiples of 16, bias and scale_result rules; a scaling
// recipe other than tensor-wise or row-wise raises CUDA's ValueError text.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <initializer_list>
#include <optional>
#include <sstream>

#include "ops/common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;

bool is_row_major(const Tensor& t) { return t.stride(1) == 1 && (t.stride(0) >= t.size(1) || t.size(0) <= 1); }
bool is_col_major(const Tensor& t) { return t.stride(0) == 1 && (t.stride(1) >= t.size(0) || t.size(1) <= 1); }

enum class Scaling { TensorWise, RowWise };

// CUDA's recipe choice for float8 inputs: both scales float32 singletons, or (M, 1) and (1, N),
// contiguous.
Scaling scaling_of(const Tensor& a, const Tensor& b, const Tensor& sa, const Tensor& sb) {
  const bool f32 = at::isFloat8Type(a.scalar_type()) && at::isFloat8Type(b.scalar_type()) &&
                   sa.scalar_type() == at::kFloat && sb.scalar_type() == at::kFloat;
  if (f32 && sa.numel() == 1 && sb.numel() == 1) return Scaling::TensorWise;
  if (f32 && sa.dim() == 2 && sb.dim() == 2 && sa.size(0) == a.size(0) && sa.size(1) == 1 && sb.size(0) == 1 &&
      sb.size(1) == b.size(1) && sa.is_contiguous() && sb.is_contiguous())
    return Scaling::RowWise;
  std::ostringstream m;
  m << "Invalid scaling configuration.\n"
    << "- For TensorWise scaling, a and b should be float8, scales should be float and singletons.\n"
    << "- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be (" << a.size(0)
    << ", 1) and scale_b should be (1, " << b.size(1) << "), and both should be contiguous.\n"
    << "Got mat_a.dtype()=" << a.scalar_type() << ", scale_a.dtype()=" << sa.scalar_type()
    << ", scale_a.size()=" << sa.sizes() << ", scale_a.stride()=" << sa.strides()
    << ", mat_b.dtype()=" << b.scalar_type() << ", scale_b.dtype()=" << sb.scalar_type()
    << ", scale_b.size()=" << sb.sizes() << " and scale_b.stride()=" << sb.strides();
  TORCH_CHECK_VALUE(false, m.str());
}

Tensor& scaled_mm_out(const Tensor& a, const Tensor& b, const Tensor& scale_a, const Tensor& scale_b,
                      const std::optional<Tensor>& bias, const std::optional<Tensor>& scale_result,
                      std::optional<at::ScalarType> out_dtype, bool /*use_fast_accum: always float32*/, Tensor& out) {
  TORCH_CHECK(a.dim() == 2, "mat1 must be a matrix");
  TORCH_CHECK(b.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1), " and ",
              b.size(0), "x", b.size(1), ")");
  const Scaling scaling = scaling_of(a, b, scale_a, scale_b);
  TORCH_CHECK(!scale_result || (scale_result->numel() == 1 && scale_result->scalar_type() == at::kFloat),
              "scale_result must be a float scalar");
  TORCH_CHECK(!bias || bias->numel() == b.size(1), "Bias must be size ", b.size(1), " but got ", bias->numel());
  TORCH_CHECK(a.size(1) % 16 == 0, "Expected trailing dimension of mat1 to be divisible by 16 ",
              "but got mat1 shape: (", a.size(0), "x", a.size(1), ").");
  TORCH_CHECK(b.size(0) % 16 == 0 && b.size(1) % 16 == 0, "mat2 shape (", b.size(0), "x", b.size(1),
              ") must be divisible by 16");
  TORCH_CHECK(!out_dtype || *out_dtype == out.scalar_type(), "out_dtype must match output matrix type");
  TORCH_CHECK_VALUE(a.scalar_type() != at::kFloat8_e5m2 || b.scalar_type() != at::kFloat8_e5m2,
                    "Multiplication of two Float8_e5m2 matrices is not supported");
  if (bias) {
    TORCH_CHECK(out.scalar_type() != at::kFloat, "Bias is not supported when out_dtype is set to Float32");
    TORCH_CHECK(bias->scalar_type() == at::kBFloat16 || bias->scalar_type() == at::kHalf,
                "Bias must be BFloat16 or Half, but got ", bias->scalar_type());
    TORCH_CHECK(
        (out.scalar_type() != at::kFloat && out.scalar_type() != at::kBFloat16) || bias->scalar_type() == at::kBFloat16,
        "Bias must be BFloat16 to compute ", out.scalar_type(), " output, but got ", bias->scalar_type());
    TORCH_CHECK(out.scalar_type() != at::kHalf || bias->scalar_type() == at::kHalf, "Bias must be Float16 to compute ",
                out.scalar_type(), " output, but got ", bias->scalar_type());
  }
  for (const Tensor* t : std::initializer_list<const Tensor*>{&out, &a, &b, &scale_a, &scale_b})
    if (t->device() != a.device()) raise_wrong_device(*t, "_scaled_mm");
  if (bias && bias->device() != a.device()) raise_wrong_device(*bias, "_scaled_mm");
  if (scale_result && scale_result->device() != a.device()) raise_wrong_device(*scale_result, "_scaled_mm");
  TORCH_CHECK((is_row_major(a) || a.numel() == 0) && (is_col_major(b) || b.numel() == 0),
              "Only multiplication of row-major and column-major matrices is supported by cuBLASLt");
  at::native::resize_output(out, {a.size(0), b.size(1)});
  if (a.size(0) == 0 || a.size(1) == 0 || b.size(1) == 0) {
    if (a.size(1) == 0) out.zero_();
    return out;
  }
  // float32 throughout: exact widening, the scales applied to the operands as CPU's emulation does.
  Tensor fa = a.to(at::kFloat), fb = b.to(at::kFloat);
  if (scaling == Scaling::TensorWise) {
    fa = fa.mul(scale_a.reshape({}));
    fb = fb.mul(scale_b.reshape({}));
  } else {
    fa = fa.mul(scale_a);
    fb = fb.mul(scale_b);
  }
  Tensor r = at::mm(fa, fb);
  if (bias) r.add_(*bias);
  if (scale_result && at::isFloat8Type(out.scalar_type())) r = r.div(scale_result->reshape({}));
  out.copy_(r);
  return out;
}

Tensor scaled_mm(const Tensor& a, const Tensor& b, const Tensor& scale_a, const Tensor& scale_b,
                 const std::optional<Tensor>& bias, const std::optional<Tensor>& scale_result,
                 std::optional<at::ScalarType> out_dtype, bool use_fast_accum) {
  Tensor out = at::empty({0}, a.options().dtype(out_dtype.value_or(a.scalar_type())));
  return scaled_mm_out(a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum, out);
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) { WEBGPU_IMPL_OUT(m, "_scaled_mm", "out", scaled_mm); }

}  // namespace webgpu::ops
