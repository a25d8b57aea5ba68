// Reductions over any set of dims: sum, nansum, prod, mean, amax, amin, any, all, argmax, argmin,
// max/min (full and along a dim with indices), aminmax, var/std (+ _mean), vector norms, logsumexp,
// count_nonzero (TORCH_WEBGPU_REDUCE_NO_SUBGROUPS=1 forces the shared-memory fold). ATen's
// structured kernels do shapes, dtypes and out= (ops/structured.h); the reduction kernels here
// receive the TensorIterator through the DispatchStubs, like CPU and CUDA.
//
// The kernels are the reduction engine's (engines/reduce.h): each op here names its row.
#include <ATen/native/ReduceAllOps.h>
#include <ATen/native/ReduceOps.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SharedReduceOps.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/ops/all_native.h>
#include <ATen/ops/amax_native.h>
#include <ATen/ops/amin_native.h>
#include <ATen/ops/aminmax_native.h>
#include <ATen/ops/any_native.h>
#include <ATen/ops/argmax_native.h>
#include <ATen/ops/argmin_native.h>
#include <ATen/ops/count_nonzero_native.h>
#include <ATen/ops/linalg_vector_norm_native.h>
#include <ATen/ops/max_native.h>
#include <ATen/ops/mean_native.h>
#include <ATen/ops/min_native.h>
#include <ATen/ops/norm_native.h>
#include <ATen/ops/prod_native.h>
#include <ATen/ops/std_mean_native.h>
#include <ATen/ops/std_native.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/var_mean_native.h>
#include <ATen/ops/var_native.h>
#include <torch/library.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "ops/common.h"
#include "ops/complex.h"
#include "ops/float64.h"
#include "engines/elementwise.h"
#include "engines/reduce.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "kernel/device.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

#define WEBGPU_REDUCTION(stub, ...)                                                           \
  void stub##_kernel(at::TensorIterator& iter) { reduce_iter(iter, Op{__VA_ARGS__}, #stub); } \
  WEBGPU_STUB(stub, &stub##_kernel)

WEBGPU_REDUCTION(sum_stub, "sum")
WEBGPU_REDUCTION(nansum_stub, "nansum")
WEBGPU_REDUCTION(prod_stub, "prod")
WEBGPU_REDUCTION(mean_stub, "mean")
WEBGPU_REDUCTION(max_values_stub, "max")
WEBGPU_REDUCTION(min_values_stub, "min")
WEBGPU_REDUCTION(or_stub, "any")
WEBGPU_REDUCTION(and_stub, "all")
WEBGPU_REDUCTION(argmax_stub, "argmax")
WEBGPU_REDUCTION(argmin_stub, "argmin")

void std_var_kernel(at::TensorIterator& iter, double correction, bool take_sqrt) {
  int64_t n = 1;
  for (int d = 0; d < iter.ndim(); ++d)
    if (iter.is_dim_reduced(d)) n *= iter.shape()[d];
  Op op{take_sqrt ? "std" : "var"};
  op.nouts = iter.noutputs();
  const double div = std::max(0.0, double(n) - correction);
  op.fa = float(1.0 / div);  // inf for a non-positive divisor: m2 * inf is inf, or NaN for m2 == 0, as CPU
  reduce_iter(iter, op, "std_var");
}
WEBGPU_STUB(std_var_stub, &std_var_kernel)

void norm_kernel(at::TensorIterator& iter, const c10::Scalar& ord) {
  const double p = ord.toDouble();
  Op op{p == 0          ? "norm0"
        : p == 1        ? "norm1"
        : p == 2        ? "norm2"
        : std::isinf(p) ? (p > 0 ? "norm_inf" : "norm_neg_inf")
                        : "norm_p"};
  op.fa = float(p);
  op.fb = float(1.0 / p);
  reduce_iter(iter, op, "linalg_vector_norm");
}
WEBGPU_STUB(norm_stub, &norm_kernel)

// max.dim / min.dim: values and indices through one reduction (indices of the first extreme).
void minmax_dim(const at::Tensor& values, const at::Tensor& indices, const at::Tensor& self, int64_t dim, bool keepdim,
                const char* red, const char* name) {
  at::TensorIterator iter =
      at::meta::make_reduction(self, values, indices, dim, keepdim, self.scalar_type(), at::kLong);
  if (iter.numel() == 0) return;
  Op op{red};
  op.values = true;
  op.nouts = 2;
  reduce_iter(iter, op, name);
}
void max_dim_kernel(const at::Tensor& values, const at::Tensor& indices, const at::Tensor& self, int64_t dim,
                    bool keepdim) {
  minmax_dim(values, indices, self, dim, keepdim, "argmax", "max");
}
void min_dim_kernel(const at::Tensor& values, const at::Tensor& indices, const at::Tensor& self, int64_t dim,
                    bool keepdim) {
  minmax_dim(values, indices, self, dim, keepdim, "argmin", "min");
}
WEBGPU_STUB(max_stub, &max_dim_kernel)
WEBGPU_STUB(min_stub, &min_dim_kernel)

void max_all_kernel(at::Tensor& result, const at::Tensor& self) { result.copy_(at::amax(self)); }
void min_all_kernel(at::Tensor& result, const at::Tensor& self) { result.copy_(at::amin(self)); }
WEBGPU_STUB(max_all_stub, &max_all_kernel)
WEBGPU_STUB(min_all_stub, &min_all_kernel)

void aminmax_kernel(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& mn, at::Tensor& mx) {
  at::amin_out(mn, self, {dim}, keepdim);
  at::amax_out(mx, self, {dim}, keepdim);
}
void aminmax_all_kernel(const at::Tensor& self, at::Tensor& mn, at::Tensor& mx) {
  mn.copy_(at::amin(self));
  mx.copy_(at::amax(self));
}
WEBGPU_STUB(aminmax_stub, &aminmax_kernel)
WEBGPU_STUB(aminmax_allreduce_stub, &aminmax_all_kernel)

// Structured ops with two outputs (max.dim, min.dim, aminmax), as torchgen generates them: the
// functional overloads are structured::FunctionalOuts<B, 2>, the out= ones Given2<B>.
template <class Base>
struct Given2 final : Base {
  Given2(const at::Tensor& a, const at::Tensor& b) : out_{a, b} {}
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    structured::resize_out(out_[i], sizes, strides, options);
    if (out_[i].strides() != strides) proxy_[i] = at::empty_strided(sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    structured::resize_out(out_[i], sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return proxy_[i].defined() ? proxy_[i] : out_[i]; }
  void finish() {
    for (int i = 0; i < 2; ++i)
      if (proxy_[i].defined()) out_[i].copy_(proxy_[i]);
  }
  at::Tensor out_[2];
  at::Tensor proxy_[2];
};

template <class B>
std::tuple<at::Tensor, at::Tensor> minmax_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  structured::FunctionalOuts<B, 2> op;
  auto pre = op.meta(self, dim, keepdim);
  op.impl(self, pre.dim, keepdim, op.outs[0], op.outs[1]);
  return {std::move(op.outs[0]), std::move(op.outs[1])};
}

template <class B>
std::tuple<at::Tensor&, at::Tensor&> minmax_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& v,
                                                    at::Tensor& i) {
  Given2<B> op(v, i);
  auto pre = op.meta(self, dim, keepdim);
  op.impl(self, pre.dim, keepdim, op.maybe_get_output(0), op.maybe_get_output(1));
  op.finish();
  return {v, i};
}

std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  structured::FunctionalOuts<at::native::structured_aminmax_out, 2> op;
  op.meta(self, dim, keepdim);
  op.impl(self, dim, keepdim, op.outs[0], op.outs[1]);
  return {std::move(op.outs[0]), std::move(op.outs[1])};
}

std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& mn, at::Tensor& mx) {
  Given2<at::native::structured_aminmax_out> op(mn, mx);
  op.meta(self, dim, keepdim);
  op.impl(self, dim, keepdim, op.maybe_get_output(0), op.maybe_get_output(1));
  op.finish();
  return {mn, mx};
}

// norm.ScalarOpt_dim(_dtype): the dispatcher passes optional<Scalar>, the structured class takes
// OptionalScalarRef.
at::OptionalScalarRef ref(const std::optional<at::Scalar>& p) {
  return p.has_value() ? at::OptionalScalarRef(&p.value()) : at::OptionalScalarRef();
}

at::Tensor norm_dim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim) {
  return structured::functional<at::native::structured_norm_out, const at::Tensor&, at::OptionalScalarRef,
                                at::IntArrayRef, bool>(self, ref(p), dim, keepdim);
}
at::Tensor& norm_dim_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                         at::Tensor& out) {
  return structured::OutFn<at::native::structured_norm_out, const at::Tensor&, at::OptionalScalarRef, at::IntArrayRef,
                           bool>::call(self, ref(p), dim, keepdim, out);
}
at::Tensor norm_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                          at::ScalarType dtype) {
  return structured::functional<at::native::structured_norm_dtype_out, const at::Tensor&, at::OptionalScalarRef,
                                at::IntArrayRef, bool, at::ScalarType>(self, ref(p), dim, keepdim, dtype);
}
at::Tensor& norm_dim_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                               bool keepdim, at::ScalarType dtype, at::Tensor& out) {
  return structured::OutFn<at::native::structured_norm_dtype_out, const at::Tensor&, at::OptionalScalarRef,
                           at::IntArrayRef, bool, at::ScalarType>::call(self, ref(p), dim, keepdim, dtype, out);
}

// var/std (+ _mean): ATen's own entry points refuse devices other than CPU/CUDA/XPU, so these
// follow them: checks, the degrees-of-freedom warning, an empty reduction gives NaN, else Welford.
void check_std_var(const char* fname, const at::Tensor& self) {
  TORCH_CHECK(self.layout() == at::Layout::Strided, fname, " only supports strided layout, got: ", self.layout());
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  check_kernel_dtype(self.scalar_type(), fname);
}

void warn_dof(const char* fname, const at::TensorIterator& iter, double correction) {
  const int64_t n = iter.num_output_elements() == 0 ? 0 : iter.numel() / iter.num_output_elements();
  if (n - correction <= 0)
    TORCH_WARN(fname,
               "(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
               "factor (input numel divided by output numel).");
}

// float64: two passes of native float64 ops, the mean and then the sum of squared deviations divided
// by max(0, N - correction) (CPU's Welford gives the same within a few ulps; infinities and NaN give
// NaN in both). Returns (var or std, mean).
std::pair<at::Tensor, at::Tensor> std_var_float64(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                  double correction, bool keepdim, bool take_sqrt) {
  const at::Tensor x = self.to(at::kDouble);
  const at::Tensor mean = at::mean(x, dim, /*keepdim=*/true);
  const at::Tensor dev = x - mean;
  at::Tensor m2 = at::sum(dev * dev, dim, keepdim);
  const int64_t n = m2.numel() == 0 ? 0 : x.numel() / m2.numel();
  at::Tensor v = m2.div_(std::max(0.0, double(n) - correction));
  if (take_sqrt) v.sqrt_();
  return {v, keepdim ? mean : mean.view(m2.sizes())};
}

at::Tensor& std_var_out(const char* fname, at::Tensor& result, const at::Tensor& self, at::OptionalIntArrayRef dim,
                        const std::optional<at::Scalar>& correction_opt, bool keepdim, bool take_sqrt) {
  check_std_var(fname, self);
  if (at::isComplexType(self.scalar_type())) {
    // As CPU: the variances of the real and imaginary parts (same correction), added; std its root.
    const at::ScalarType dt = c10::toRealValueType(result.scalar_type());
    const at::Tensor z = self.resolve_conj().resolve_neg();
    at::Tensor re = at::empty({0}, self.options().dtype(dt)), im = at::empty({0}, self.options().dtype(dt));
    std_var_out(fname, re, at::real(z), dim, correction_opt, keepdim, false);
    std_var_out(fname, im, at::imag(z), dim, correction_opt, keepdim, false);
    // Computed in dt, then written out (a complex64 out= gets (v, 0)).
    at::Tensor v = at::add(re, im);
    if (take_sqrt) v.sqrt_();
    at::native::resize_output(result, v.sizes());
    result.copy_(v);
    return result;
  }
  const double correction = correction_opt.value_or(1).toDouble();
  auto iter = at::native::make_reduction(fname, result, self, dim, keepdim, result.scalar_type());
  TORCH_CHECK(at::canCast(self.scalar_type(), result.scalar_type()), "result type ", self.scalar_type(),
              " can't be cast to the desired output type ", result.scalar_type());
  warn_dof(fname, iter, correction);
  if (iter.numel() == 0)
    result.fill_(std::numeric_limits<double>::quiet_NaN());
  else if (iter.input(0).scalar_type() == at::kDouble)
    result.copy_(std_var_float64(self, dim, correction, keepdim, take_sqrt).first.view(result.sizes()));
  else
    std_var_kernel(iter, correction, take_sqrt);
  return result;
}

std::tuple<at::Tensor, at::Tensor> std_var_mean(const char* fname, const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                const std::optional<at::Scalar>& correction_opt, bool keepdim,
                                                bool take_sqrt) {
  check_std_var(fname, self);
  if (at::isComplexType(self.scalar_type())) {
    // As CPU: var/std from the parts' variances (std_var_out), the mean from the parts' means.
    const at::Tensor z = self.resolve_conj().resolve_neg();
    auto [vr, mr] = std_var_mean(fname, at::real(z), dim, correction_opt, keepdim, false);
    auto [vi, mi] = std_var_mean(fname, at::imag(z), dim, correction_opt, keepdim, false);
    at::Tensor v = vr.add(vi);
    if (take_sqrt) v.sqrt_();
    return {v, at::complex(mr, mi)};
  }
  at::Tensor r1 = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  at::Tensor r2 = at::empty({0}, self.options());
  const double correction = correction_opt.value_or(1).toDouble();
  auto iter = at::native::make_reduction(fname, r1, r2, self, dim, keepdim, r1.scalar_type());
  warn_dof(fname, iter, correction);
  if (iter.numel() == 0) {
    r1.fill_(std::numeric_limits<double>::quiet_NaN());
    r2.fill_(std::numeric_limits<double>::quiet_NaN());
  } else if (self.scalar_type() == at::kDouble) {
    auto [v, m] = std_var_float64(self, dim, correction, keepdim, take_sqrt);
    r1.copy_(v.view(r1.sizes()));
    r2.copy_(m.view(r2.sizes()));
  } else {
    std_var_kernel(iter, correction, take_sqrt);
  }
  return {r1, r2};
}

using OptScalar = std::optional<at::Scalar>;
at::Tensor var_fn(const at::Tensor& self, at::OptionalIntArrayRef dim, const OptScalar& c, bool keepdim) {
  at::Tensor r = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return std_var_out("var", r, self, dim, c, keepdim, false);
}
at::Tensor std_fn(const at::Tensor& self, at::OptionalIntArrayRef dim, const OptScalar& c, bool keepdim) {
  at::Tensor r = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return std_var_out("std", r, self, dim, c, keepdim, true);
}
at::Tensor& var_out_fn(const at::Tensor& self, at::OptionalIntArrayRef dim, const OptScalar& c, bool keepdim,
                       at::Tensor& out) {
  return std_var_out("var", out, self, dim, c, keepdim, false);
}
at::Tensor& std_out_fn(const at::Tensor& self, at::OptionalIntArrayRef dim, const OptScalar& c, bool keepdim,
                       at::Tensor& out) {
  return std_var_out("std", out, self, dim, c, keepdim, true);
}
std::tuple<at::Tensor, at::Tensor> var_mean_fn(const at::Tensor& self, at::OptionalIntArrayRef dim, const OptScalar& c,
                                               bool keepdim) {
  return std_var_mean("var_mean", self, dim, c, keepdim, false);
}
std::tuple<at::Tensor, at::Tensor> std_mean_fn(const at::Tensor& self, at::OptionalIntArrayRef dim, const OptScalar& c,
                                               bool keepdim) {
  return std_var_mean("std_mean", self, dim, c, keepdim, true);
}

// logsumexp in one pass (ATen's composite takes amax, exp, sum and log passes); integer inputs
// reduce in the default float dtype, as CPU.
at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dims, bool keepdim, at::Tensor& result) {
  no_complex(self.scalar_type(), "logsumexp");
  TORCH_CHECK(at::isFloatingType(result.scalar_type()),
              "logsumexp(): Expected floating point type for result tensor, but got: ", result.scalar_type());
  const bool f64 = self.scalar_type() == at::kDouble && result.scalar_type() == at::kDouble && float64_enabled();
  if (!f64) check_supported_dtype(self.scalar_type(), "logsumexp");
  const at::Tensor in = at::isIntegralType(self.scalar_type(), true) ? self.to(result.scalar_type()) : self;
  if (f64 && in.numel() > 0) {
    // float64: CPU's composite over the device's float64 ops: the max, set to 0 where infinite,
    // then log(sum(e^(x - max))) + max.
    at::Tensor m = at::amax(in, dims, true);
    m = m.masked_fill(m.abs() == std::numeric_limits<double>::infinity(), 0.0);
    at::Tensor r = at::exp(in - m).sum(dims, true).log_().add_(m);
    if (!keepdim) r = dims.empty() ? r.squeeze() : r.squeeze(dims);
    at::native::resize_output(result, r.sizes());
    result.copy_(r);
    return result;
  }
  auto iter = at::native::make_reduction("logsumexp", result, in, dims, keepdim, result.scalar_type());
  if (iter.numel() == 0)
    result.fill_(-std::numeric_limits<float>::infinity());
  else
    reduce_iter(iter, Op{"logsumexp"}, "logsumexp");
  return result;
}

at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  const at::ScalarType dt = at::isIntegralType(self.scalar_type(), true)
                                ? c10::typeMetaToScalarType(c10::get_default_dtype())
                                : self.scalar_type();
  at::Tensor result = at::empty({0}, self.options().dtype(dt));
  return logsumexp_out(self, dims, keepdim, result);
}

// count_nonzero: a sum of (x != 0) in int64, in one pass over the input as it is.
at::Tensor count_nonzero_dims(const at::Tensor& self, at::IntArrayRef dims) {
  check_kernel_dtype(self.scalar_type(), "count_nonzero");
  // complex64: non-zero when either part is (NaN included), which the device's complex -> bool copy tells.
  if (at::isComplexType(self.scalar_type())) return count_nonzero_dims(self.to(at::kBool), dims);
  at::Tensor result = at::empty({0}, self.options().dtype(at::kLong));
  auto iter = at::native::make_reduction("count_nonzero", result, self, dims, false, self.scalar_type(), at::kLong);
  if (iter.numel() == 0)
    result.zero_();
  else
    reduce_iter(iter, Op{"count_nonzero"}, "count_nonzero");
  return result;
}

at::Tensor prod_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return at::prod(self.reshape({-1}), 0, false, dtype);
}

at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return at::native::nansum_out(self, dim, keepdim, dtype, out);
}

at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype) {
  return at::native::nansum(self, dim, keepdim, dtype);
}

// torch.equal as CUDA's: same sizes and every element equal (with type promotion; NaN is unequal),
// true at once for the very same tensor. One readback, like any other .item().
bool equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(),
              "Expected all tensors to be on the same device, but found at least two "
              "devices, ",
              self.device(), " and ", other.device(), "! (when checking argument for torch.equal)");
  if (self.is_same(other)) return true;
  if (!self.is_same_size(other)) return false;
  if (self.numel() == 0) return true;
  return at::eq(self, other).all().item<bool>();
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("equal", TORCH_FN(equal));
  using T = const at::Tensor&;
  using OptDims = at::OptionalIntArrayRef;
  using OptDtype = std::optional<at::ScalarType>;
  structured::reg<at::native::structured_sum_out, T, OptDims, bool, OptDtype>(m, "sum.dim_IntList", "sum.IntList_out",
                                                                              nullptr);
  structured::reg<at::native::structured_mean_out, T, OptDims, bool, OptDtype>(m, "mean.dim", "mean.out", nullptr);
  structured::reg<at::native::structured_prod_out, T, int64_t, bool, OptDtype>(m, "prod.dim_int", "prod.int_out",
                                                                               nullptr);
  structured::reg<at::native::structured_amax_out, T, at::IntArrayRef, bool>(m, "amax", "amax.out", nullptr);
  structured::reg<at::native::structured_amin_out, T, at::IntArrayRef, bool>(m, "amin", "amin.out", nullptr);
  structured::reg<at::native::structured_any_out, T, int64_t, bool>(m, "any.dim", "any.out", nullptr);
  structured::reg<at::native::structured_any_dims_out, T, OptDims, bool>(m, "any.dims", "any.dims_out", nullptr);
  structured::reg<at::native::structured_any_all_out, T>(m, "any", "any.all_out", nullptr);
  structured::reg<at::native::structured_all_out, T, int64_t, bool>(m, "all.dim", "all.out", nullptr);
  structured::reg<at::native::structured_all_dims_out, T, OptDims, bool>(m, "all.dims", "all.dims_out", nullptr);
  structured::reg<at::native::structured_all_all_out, T>(m, "all", "all.all_out", nullptr);
  structured::reg<at::native::structured_argmax_out, T, std::optional<int64_t>, bool>(m, "argmax", "argmax.out",
                                                                                      nullptr);
  structured::reg<at::native::structured_argmin_out, T, std::optional<int64_t>, bool>(m, "argmin", "argmin.out",
                                                                                      nullptr);
  structured::reg<at::native::structured_linalg_vector_norm_out, T, const at::Scalar&, OptDims, bool, OptDtype>(
      m, "linalg_vector_norm", "linalg_vector_norm.out", nullptr);
  m.impl("norm.ScalarOpt_dim", TORCH_FN(norm_dim));
  m.impl("norm.out", TORCH_FN(norm_dim_out));
  m.impl("norm.ScalarOpt_dim_dtype", TORCH_FN(norm_dim_dtype));
  m.impl("norm.dtype_out", TORCH_FN(norm_dim_dtype_out));
  m.impl("max.dim", TORCH_FN(minmax_dim<at::native::structured_max_out>));
  m.impl("max.dim_max", TORCH_FN(minmax_dim_out<at::native::structured_max_out>));
  m.impl("min.dim", TORCH_FN(minmax_dim<at::native::structured_min_out>));
  m.impl("min.dim_min", TORCH_FN(minmax_dim_out<at::native::structured_min_out>));
  m.impl("max", TORCH_FN(static_cast<at::Tensor (*)(T)>(at::native::max)));
  m.impl("max.unary_out", TORCH_FN(at::native::max_unary_out));
  m.impl("min", TORCH_FN(static_cast<at::Tensor (*)(T)>(at::native::min)));
  m.impl("min.unary_out", TORCH_FN(at::native::min_unary_out));
  WEBGPU_IMPL_OUT(m, "aminmax", "out", aminmax);
  m.impl("var.correction", TORCH_FN(var_fn));
  m.impl("var.correction_out", TORCH_FN(var_out_fn));
  m.impl("std.correction", TORCH_FN(std_fn));
  m.impl("std.correction_out", TORCH_FN(std_out_fn));
  m.impl("var_mean.correction", TORCH_FN(var_mean_fn));
  m.impl("std_mean.correction", TORCH_FN(std_mean_fn));
  m.impl("count_nonzero.dim_IntList", TORCH_FN(count_nonzero_dims));
  WEBGPU_IMPL_OUT(m, "logsumexp", "out", logsumexp);
  m.impl("prod", TORCH_FN(prod_all));
  WEBGPU_IMPL_OUT(m, "nansum", "out", nansum);
}

}  // namespace webgpu::ops
