// Sequence factories on the device: arange, range, linspace, logspace (kernel: wgsl/kernels/range.wgsl)
// and eye. Sizes, checks and the host-side parts of each formula follow PyTorch's CPU code.
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/Version.h>
#include <ATen/native/RangeUtils.h>
#include <torch/library.h>

#include <cmath>
#include <cstring>

#include "ops/common.h"
#include "ops/complex.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

// Kernel kinds; the values match the constants in wgsl/kernels/range.wgsl.
enum Kind : uint32_t {
  ARANGE_I64 = 0,
  ARANGE_ACC_F32 = 1,
  ARANGE_ACC_F64 = 2,
  LINSPACE_F32 = 3,
  LINSPACE_HALF = 4,
  LINSPACE_INT = 5,
  LOGSPACE_F32 = 6,
  LOGSPACE_INT = 7,
  SEQ_F64 = 8,  // float64 outputs of arange, range and linspace: the double values themselves
};

// Whether the CPU rounds `start + step * i` once (a fused multiply-add). GCC and Clang contract
// that expression wherever the target ISA has an fma: ATen's kernels in native/cpu (arange,
// linspace) are built once per capability, AVX2 and AVX-512 with FMA and DEFAULT without; code
// outside native/cpu (range, logspace) is built for the baseline ISA, which on x86-64 has none.
bool cpu_kernel_fuses() {
#if defined(_MSC_VER)
  return false;
#elif defined(__x86_64__)
  static const bool fuses = at::get_cpu_capability() != "DEFAULT";
  return fuses;
#else
  return true;
#endif
}

bool cpu_baseline_fuses() {
#if defined(_MSC_VER) || defined(__x86_64__)
  return false;
#else
  return true;
#endif
}

bool int64_kind(Kind k) { return k == ARANGE_I64 || k == LINSPACE_INT || k == LOGSPACE_INT; }

// The dtype of the kernel's output for `k`.
at::ScalarType kind_dtype(Kind k) { return int64_kind(k) ? at::kLong : k == SEQ_F64 ? at::kDouble : at::kFloat; }

// The kernel's arguments (see wgsl/kernels/range.wgsl); each kind reads its own, the rest stay zero.
struct Args {
  uint32_t halfway = 0, steps_m1 = 0;
  bool fused = false;
  uint32_t start[4] = {}, end[4] = {}, step[4] = {};  // int64, f32 or packed double by kind
  uint32_t base_class = 0, base_int = 0, narrow = 0;  // logspace
  uint32_t log2_base[4] = {};
};

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A finite double as (significand lo, significand hi | sign << 31, exponent): v = m * 2^e, m < 2^53.
void put_double(uint32_t* p, double v) {
  TORCH_INTERNAL_ASSERT(std::isfinite(v));
  uint64_t m = 0;
  int32_t e = 0;
  if (v != 0) {
    int ex = 0;
    const double fr = std::frexp(std::fabs(v), &ex);
    m = uint64_t(std::ldexp(fr, 53));
    e = ex - 53;
  }
  p[0] = uint32_t(m);
  p[1] = uint32_t(m >> 32) | (std::signbit(v) ? 0x80000000u : 0u);
  p[2] = uint32_t(e);
}

// log2(v) to 64 bits where long double has them: (significand lo, hi, exponent, sign),
// log2(v) = +-m * 2^e with the top bit of m set.
void put_log2(uint32_t* p, double v) {
  const long double l = std::log2(static_cast<long double>(v));
  uint64_t m = 0;
  int32_t e = 0;
  if (l != 0) {
    int ex = 0;
    const long double fr = std::frexp(std::fabs(l), &ex);
    m = uint64_t(std::ldexp(fr, 64));
    e = ex - 64;
  }
  p[0] = uint32_t(m);
  p[1] = uint32_t(m >> 32);
  p[2] = uint32_t(e);
  p[3] = l < 0 ? 1u : 0u;
}

void put_i64(uint32_t* p, int64_t v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  p[0] = uint32_t(u);
  p[1] = uint32_t(u >> 32);
}

// The WGSL that rounds an f32 to dtype t's precision, as CPU arithmetic in t does.
const char* round_expr(at::ScalarType t) {
  if (t == at::kHalf) return "f16_to_f32(f32_to_f16(x))";
  if (t == at::kBFloat16) return "bitcast<f32>(f32_to_bf16(x) << 16u)";
  return "x";
}

// Runs the kernel of `kind` over the contiguous 1-D tensor `r` (kind_dtype(kind)).
void launch(const at::Tensor& r, Kind kind, at::ScalarType round_as, const Args& args) {
  const int64_t n = r.numel();
  if (n == 0) return;
  TORCH_CHECK(n <= int64_t(UINT32_MAX), "webgpu: sequences of more than 2^32-1 elements are not supported yet");
  TORCH_INTERNAL_ASSERT(r.is_contiguous() && r.scalar_type() == kind_dtype(kind));
  const uint64_t itemsize = r.element_size();
  const uint64_t off = byte_offset_of(r);
  const kernel::Window w = kernel::window(r, off, off + uint64_t(n) * itemsize, "arange");
  const uint64_t start = w.start;
  // arange and range have no second half: halfway is the count.
  const uint32_t halfway = args.steps_m1 ? args.halfway : uint32_t(n);
  kernel::Params p;
  p.u32("n", uint32_t(n));
  p.u32("out_off", uint32_t((off - start) / itemsize));
  p.u32("halfway", halfway);
  p.u32("steps_m1", args.steps_m1);
  p.u32("zero", 0u);
  p.u32("fused", args.fused ? 1u : 0u);
  p.u32("base_class", args.base_class);
  p.u32("base_int", args.base_int);
  p.u32("narrow", args.narrow);
  p.array("start", args.start, 4);
  p.array("end", args.end, 4);
  p.array("step", args.step, 4);
  p.array("log2_base", args.log2_base, 4);

  const char* rnd = round_expr(round_as);
  const std::string key = "range:" + std::to_string(kind) + ":" + rnd;
  kernel::launch(key, {{&r, "", "", true, w.start, w.size}}, p, grid(n), [&]() {
    return kernel::fill(kernel::library("range"), {{"KIND", std::to_string(kind)}, {"ROUND", rnd}});
  });
}

// Fills the 1-D `result` (any dtype, any stride) with the kernel's values, converting on the
// device when result is not already a contiguous tensor of the kernel's dtype.
void generate(at::Tensor& result, Kind kind, const Args& args) {
  const at::ScalarType kt = kind_dtype(kind);
  if (result.is_contiguous() && result.scalar_type() == kt) {
    launch(result, kind, result.scalar_type(), args);
    return;
  }
  at::Tensor tmp = at::empty(result.sizes(), result.options().dtype(kt));
  launch(tmp, kind, result.scalar_type(), args);
  result.copy_(tmp);
}

// CPU's sequence kernels dispatch over all types but bool (after their early exits, as here).
void check_not_bool(const at::Tensor& result, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(result.scalar_type() != at::kBool, "\"", op, "\" not implemented for 'Bool'");
}

// start + step * i in the CPU's accumulation type for result's dtype (int64, float for half types,
// double for float32 and float64).
void fill_arithmetic(at::Tensor& result, const c10::Scalar& start, const c10::Scalar& step, bool fused) {
  Args a;
  a.fused = fused;
  const auto t = result.scalar_type();
  if (at::isIntegralType(t, false)) {
    put_i64(a.start, start.to<int64_t>());
    put_i64(a.step, step.to<int64_t>());
    generate(result, ARANGE_I64, a);
    return;
  }
  const bool half = t == at::kHalf || t == at::kBFloat16;
  put_double(a.start, half ? double(start.to<float>()) : start.to<double>());
  put_double(a.end, 0.0);
  put_double(a.step, half ? double(step.to<float>()) : step.to<double>());
  generate(result, half ? ARANGE_ACC_F32 : t == at::kDouble ? SEQ_F64 : ARANGE_ACC_F64, a);
}

at::Tensor& arange_out(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step, at::Tensor& result) {
  check_kernel_dtype(result.scalar_type(), "arange");
  no_complex(result.scalar_type(), "arange");
  check_not_bool(result, "arange");
  // Integer steps truncate; older torch divides by the truncated step unchecked (SIGFPE).
  if (at::isIntegralType(result.scalar_type(), false))
    TORCH_CHECK_VALUE(step.to<int64_t>() != 0, "step must be nonzero");
  int64_t size = 0;
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "arange",
                             [&]() { size = at::native::compute_arange_size<scalar_t>(start, end, step); });
  const int64_t numel = result.numel();
  if (numel != size) {
    if (numel > 0) {
      TORCH_WARN("The number of elements in the out tensor of shape ", result.sizes(), " is ", numel,
                 " which does not match the computed number of elements ", size,
                 ". Note that this may occur as a result of rounding error. "
                 "The out tensor will be resized to a tensor of shape (",
                 size, ",).");
    }
    result.resize_({size});
  }
  if (size > 0) fill_arithmetic(result, start, step, cpu_kernel_fuses());
  return result;
}

at::Tensor& range_out(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step, at::Tensor& result) {
  check_kernel_dtype(result.scalar_type(), "range");
  no_complex(result.scalar_type(), "range");
  check_not_bool(result, "range");
  int64_t size = 0;
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "range", [&]() {
    using acc_t = at::acc_type<scalar_t, false>;
    const auto xstart = start.to<acc_t>(), xend = end.to<acc_t>(), xstep = step.to<acc_t>();
    at::native::arange_check_bounds(start, end, step);
    size = static_cast<int64_t>(((xend - xstart) / xstep) + 1);
  });
  if (result.numel() != size) result.resize_({size});
  if (size > 0) fill_arithmetic(result, start, step, cpu_baseline_fuses());
  return result;
}

// What linspace and logspace share before their kernels: the checks, the resize, and the cases of
// no step and of one (`first()`, the one value). False when that finished the result; otherwise the
// arguments' step counts are set. `float64` says whether the op has a float64 kernel.
template <class First>
bool spaced_prologue(at::Tensor& result, int64_t steps, const char* name, First first, Args& a, bool float64) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (float64)
    check_kernel_dtype(result.scalar_type(), name);
  else
    check_supported_dtype(result.scalar_type(), name);
  no_complex(result.scalar_type(), name);
  if (result.numel() != steps) result.resize_({steps});
  if (steps == 0) return false;
  if (steps == 1) {
    result.fill_(first());
    return false;
  }
  check_not_bool(result, name);
  TORCH_CHECK(steps <= int64_t(UINT32_MAX), "webgpu: ", name, ": more than 2^32-1 steps are not supported yet");
  a.halfway = uint32_t(steps / 2);
  a.steps_m1 = uint32_t(steps - 1);
  return true;
}

at::Tensor& linspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, at::Tensor& result) {
  Args a;
  if (!spaced_prologue(result, steps, "linspace", [&] { return start; }, a, true)) return result;
  a.fused = cpu_kernel_fuses();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "linspace", [&]() {
    // The CPU kernel's own types: the step is double for integers, scalar_t otherwise.
    using step_t = std::conditional_t<std::is_integral<scalar_t>::value, double, scalar_t>;
    const scalar_t s = start.to<scalar_t>();
    const scalar_t e = end.to<scalar_t>();
    const step_t step = (static_cast<step_t>(e) - static_cast<step_t>(s)) / (steps - 1);
    if constexpr (std::is_same_v<scalar_t, at::Half> || std::is_same_v<scalar_t, at::BFloat16>) {
      a.start[0] = f32_bits(float(s));
      a.end[0] = f32_bits(float(e));
      a.step[0] = f32_bits(float(step));
      generate(result, LINSPACE_HALF, a);
    } else {
      TORCH_CHECK(std::isfinite(double(s)) && std::isfinite(double(e)) && std::isfinite(double(step)),
                  "webgpu: linspace: start and end must be finite");
      put_double(a.start, double(s));
      put_double(a.end, double(e));
      put_double(a.step, double(step));
      generate(result,
               std::is_integral<scalar_t>::value  ? LINSPACE_INT
               : std::is_same_v<scalar_t, double> ? SEQ_F64
                                                  : LINSPACE_F32,
               a);
    }
  });
  return result;
}

at::Tensor& logspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, double base,
                         at::Tensor& result) {
  Args a;
  if (!spaced_prologue(result, steps, "logspace", [&] { return std::pow(base, start.to<double>()); }, a, false))
    return result;
  a.fused = cpu_baseline_fuses();
  // The base: its class by magnitude (see range.wgsl), |base| when it is a small integer, log2|base|.
  const double mag = std::fabs(base);
  uint32_t cls = std::isnan(base) ? 4 : std::isinf(base) ? 3 : mag == 0 ? 0 : mag == 1 ? 1 : 2;
  if (std::signbit(base) && !std::isnan(base)) cls |= 0x100;
  const uint32_t ibase =
      (cls & 0xff) == 2 && mag >= 2 && mag < 4294967296.0 && mag == std::floor(mag) ? uint32_t(mag) : 0;
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "logspace", [&]() {
    const scalar_t s = start.to<scalar_t>();
    const scalar_t e = end.to<scalar_t>();
    const double step = static_cast<double>(e - s) / (steps - 1);
    TORCH_CHECK(std::isfinite(double(s)) && std::isfinite(double(e)) && std::isfinite(step),
                "webgpu: logspace: start and end must be finite");
    put_double(a.start, double(s));
    put_double(a.end, double(e));
    put_double(a.step, step);
    a.base_class = cls;
    a.base_int = ibase;
    put_log2(a.log2_base, (cls & 0xff) == 2 ? mag : 1.0);
    a.narrow = result.scalar_type() != at::kLong;  // integers narrower than int64
    generate(result, std::is_integral<scalar_t>::value ? LOGSPACE_INT : LOGSPACE_F32, a);
  });
  return result;
}

// eye: zeros with ones on the main diagonal, written through a strided view of it.
at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& result) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  check_supported_dtype(result.scalar_type(), "eye");
  no_complex(result.scalar_type(), "eye");
  result.resize_({n, m});
  result.zero_();
  if (n > 0 && m > 0) result.diagonal().fill_(1);
  return result;
}

at::Tensor& eye_out(int64_t n, at::Tensor& result) { return eye_m_out(n, n, result); }

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("arange.start_out", arange_out);
  m.impl("range.out", range_out);
  m.impl("linspace.out", linspace_out);
  m.impl("logspace.out", logspace_out);
  m.impl("eye.out", eye_out);
  m.impl("eye.m_out", eye_m_out);
}

}  // namespace webgpu::ops
