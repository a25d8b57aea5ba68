// float64 on the device: the switch, the float64 expressions of the pointwise rows (wgsl/lib/f64.wgsl,
// IEEE binary64 rounded as the CPU rounds), and the stub fallback that runs a stub's CPU kernel.
#include "ops/float64.h"

#include <ATen/Version.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "core/fallback.h"
#include "ops/common.h"
#include "ops/pointwise.h"

namespace webgpu::ops {

bool float64_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TORCH_WEBGPU_FLOAT64");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

void raise_no_float64_kernel(const char* op) {
  throw NoDtypeKernel(c10::SourceLocation{__func__, __FILE__, uint32_t(__LINE__)},
                      std::string("webgpu: ") + op +
                          ": no float64 kernel on the webgpu device yet (float64 tensors are stored, copied and "
                          "converted natively; this op computes in float32 or integers only). Convert with "
                          "tensor.to(torch.float32), or compute on the CPU.");
}

namespace {

// name of the row -> its float64 expression (inputs x1.., scalars s0.., all vec2<u32> binary64 bits).
// Each is bit-identical to CPU's result (NaN payloads aside: a NaN stays a NaN), except the
// transcendental rows marked below.
const std::map<std::string, const char*>& float64_rows() {
  static const std::map<std::string, const char*> rows = {
      // unary
      {"abs", "f64_abs(x1)"},
      {"neg", "f64_neg(x1)"},
      {"sign", "f64_sgn(x1)"},
      {"sqrt", "f64_sqrt(x1)"},
      {"reciprocal", "f64_div(b2d(true), x1)"},
      // pow with the exponents CPU's pow_tensor_scalar kernel special-cases: x * x, x * x * x,
      // 1 / (x * x), 1 / sqrt(x).
      {"pow_2", "f64_mul(x1, x1)"},
      {"pow_3", "f64_mul(f64_mul(x1, x1), x1)"},
      {"pow_m2", "f64_div(b2d(true), f64_mul(x1, x1))"},
      {"rsqrt", "f64_div(b2d(true), f64_sqrt(x1))"},
      {"floor", "f64_round_mode(x1, 1u)"},
      {"ceil", "f64_round_mode(x1, 2u)"},
      {"trunc", "f64_round_mode(x1, 0u)"},
      {"round", "f64_round_mode(x1, 3u)"},
      {"frac", "f64_sub(x1, f64_round_mode(x1, 0u))"},
      {"round_decimals", "f64_div(f64_round_mode(f64_mul(x1, s0), 3u), s0)"},
      {"round_decimals_neg", "f64_mul(f64_round_mode(f64_div(x1, s0), 3u), s0)"},
      {"signbit", "b2d(f64_sign(x1) == 1u)"},
      {"isposinf", "b2d(f64_is_inf(x1) && f64_sign(x1) == 0u)"},
      {"isneginf", "b2d(f64_is_inf(x1) && f64_sign(x1) == 1u)"},
      {"logical_not", "b2d(!f64_nz(x1))"},
      // exp, log and what is built on them: within about 1 ulp of the exact result (CPU's are too),
      // so not always bit-identical to CPU's (wgsl/lib/f64.wgsl).
      {"exp", "f64_exp_fn(x1)"},
      {"exp2", "f64_exp2_fn(x1)"},
      {"expm1", "f64_expm1_fn(x1)"},
      {"log", "f64_log_fn(x1)"},
      {"log2", "f64_log2_fn(x1)"},
      {"log10", "f64_log10_fn(x1)"},
      {"log1p", "f64_log1p_fn(x1)"},
      {"sigmoid", "f64_sigmoid_fn(x1)"},
      {"tanh", "f64_tanh_fn(x1)"},
      {"sinh", "f64_sinh_fn(x1)"},
      {"cosh", "f64_cosh_fn(x1)"},
      {"logit", "f64_logit(x1)"},
      {"logit_eps", "f64_logit_eps(x1, s0)"},
      {"silu", "f64_div(x1, f64_add(F64_ONE, f64_exp_fn(f64_neg(x1))))"},
      {"elu", "select(f64_mul(x1, s1), f64_mul(f64_expm1_fn(f64_mul(x1, s2)), f64_mul(s0, s1)), f64_le(x1, F64_ZERO))"},
      {"softplus", "f64_softplus(x1, s0, s1)"},
      {"mish", "f64_mul(x1, f64_tanh_fn(f64_log1p_fn(f64_exp_fn(x1))))"},
      {"logaddexp", "f64_logaddexp_b(x1, x2, false)"},
      {"logaddexp2", "f64_logaddexp_b(x1, x2, true)"},
      {"xlogy", "f64_xlogy(x1, x2)"},
      {"log_sigmoid", "f64_log_sigmoid(x1)"},
      {"log_sigmoid_backward", "f64_log_sigmoid_bwd(x1, x2)"},
      {"elu_backward", "f64_elu_bwd(x1, x2, s0, s1, s2)"},
      {"elu_backward_result",
       "select(f64_mul(x1, s1), f64_mul(f64_mul(x1, s2), f64_add(x2, f64_mul(s0, s1))), f64_le(x2, F64_ZERO))"},
      {"silu_backward", "f64_silu_bwd(x1, x2)"},
      {"mish_backward", "f64_mish_bwd(x1, x2)"},
      {"softplus_backward", "f64_softplus_bwd(x1, x2, s0, s1)"},
      {"logit_backward", "f64_logit_bwd(x1, x2)"},
      {"logit_backward_eps", "f64_logit_bwd_eps(x1, x2, s0, s1)"},
      // CPU's formulas, each step rounded (its scalar tail loops may contract one into an fma).
      {"sigmoid_backward", "f64_mul(f64_mul(x1, f64_sub(F64_ONE, x2)), x2)"},
      {"tanh_backward", "f64_mul(x1, f64_sub(F64_ONE, f64_mul(x2, x2)))"},
      // binary
      {"add", "f64_add(x1, x2)"},
      // CPU's vectorised add with alpha is one fused multiply-add (vec::fmadd(other, alpha, self)).
      {"add_alpha", "f64_fma(x2, s0, x1)"},
      {"sub", "f64_sub(x1, x2)"},
      {"mul", "f64_mul(x1, x2)"},
      {"div_true", "f64_div(x1, x2)"},
      {"div_trunc", "f64_round_mode(f64_div(x1, x2), 0u)"},
      {"div_floor", "f64_div_floor(x1, x2)"},
      {"fmod", "f64_fmod(x1, x2)"},
      {"remainder", "f64_remainder(x1, x2)"},
      {"heaviside", "f64_heaviside(x1, x2)"},
      {"nextafter", "f64_nextafter(x1, x2)"},
      {"hypot", "f64_hypot(x1, x2)"},
      {"maximum", "f64_maximum(x1, x2)"},
      {"minimum", "f64_minimum(x1, x2)"},
      {"fmax", "f64_fmax(x1, x2)"},
      {"fmin", "f64_fmin(x1, x2)"},
      {"copysign", "vec2<u32>(x1.x, (x1.y & 0x7fffffffu) | (x2.y & 0x80000000u))"},
      {"eq", "b2d(f64_eq(x1, x2))"},
      {"ne", "b2d(!f64_eq(x1, x2))"},
      {"lt", "b2d(f64_lt(x1, x2))"},
      {"le", "b2d(f64_le(x1, x2))"},
      {"gt", "b2d(f64_lt(x2, x1))"},
      {"ge", "b2d(f64_le(x2, x1))"},
      {"logical_and", "b2d(f64_nz(x1) && f64_nz(x2))"},
      {"logical_or", "b2d(f64_nz(x1) || f64_nz(x2))"},
      {"logical_xor", "b2d(f64_nz(x1) != f64_nz(x2))"},
      // ternary and scalar ops
      // CPU's order: self + value * t1 * t2 (the compiler fuses the last multiply-add) and
      // self + value * t1 / t2.
      {"addcmul", "f64_fma(f64_mul(s0, x2), x3, x1)"},
      {"addcdiv", "f64_add(x1, f64_div(f64_mul(s0, x2), x3))"},
      {"lerp_scalar", "f64_lerp(x1, x2, s0)"},
      {"lerp_tensor", "f64_lerp(x1, x2, x3)"},
      {"clamp_scalar", "f64_clamp_s(x1, s0, s1)"},
      {"clamp_min_scalar", "f64_clamp_min_s(x1, s0)"},
      {"clamp_max_scalar", "f64_clamp_max_s(x1, s0)"},
      {"clamp_tensor", "f64_clamp_t(x1, x2, x3)"},
      {"where", "select(x3, x2, f64_nz(x1))"},
      {"masked_fill", "select(x1, s0, f64_nz(x2))"},
      {"threshold", "select(x2, s1, f64_le(x1, s0))"},
  };
  return rows;
}

// TensorIterator's protected flags, read from a derived class (as pointwise.cpp's CommonDtype).
struct IterFlags : at::TensorIteratorBase {
  static bool reduction(const at::TensorIteratorBase& it) { return it.*(&IterFlags::is_reduction_); }
  static at::ScalarType common(const at::TensorIteratorBase& it) { return it.*(&IterFlags::common_dtype_); }
};

// Stubs whose iterators restride their operands (index arithmetic on the original strides): a CPU
// copy would not keep those strides, so they are never mirrored.
const std::set<std::string> kNoMirror = {"index_stub",      "index_put_stub", "index_fill_stub",
                                         "index_copy_stub", "put_stub",       "take_stub"};

}  // namespace

const char* float64_expr(const char* row) {
  const auto& rows = float64_rows();
  auto it = rows.find(row);
  return it == rows.end() ? nullptr : it->second;
}

void run_row_float64(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars) {
  const char* e = float64_expr(r.name);
  if (e == nullptr) raise_no_float64_kernel(r.name);
  std::vector<ScalarBits> s;
  for (const auto& x : scalars) s.push_back(scalar_bits(x, CT::F64));
  run_elementwise(iter, r.name, e, lib::Float64, CT::F64, s, at::kDouble);
}

bool iter_has_float64(const at::TensorIteratorBase& iter) {
  for (int i = 0; i < iter.ntensors(); ++i)
    if (iter.dtype(i) == at::kDouble) return true;
  return false;
}

bool iter_has_guarded_dtype(const at::TensorIteratorBase& iter) {
  for (int i = 0; i < iter.ntensors(); ++i)
    if (iter.dtype(i) == at::kDouble || iter.dtype(i) == at::kComplexFloat) return true;
  return false;
}

namespace {

// The CPU kernel of a DispatchStub for this machine's capability, as DispatchStub::choose_cpu_impl
// picks it: the static members DEFAULT/AVX2/AVX512 of DispatchStub<FnPtr, T>, by their mangled names.
void* cpu_kernel_of(const void* stub_object, const char* stub_type) {
  Dl_info info{};
  TORCH_CHECK(dladdr(stub_object, &info) != 0 && info.dli_fname, "webgpu: internal: no library for ", stub_type);
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  TORCH_CHECK(lib, "webgpu: internal: cannot reopen ", info.dli_fname);
  std::string t(stub_type);  // "N2at6native12DispatchStubI...EE": a nested name
  const std::string base = "_Z" + t.substr(0, t.size() - 1);
  auto member = [&](const std::string& m) -> void* {
    void** p = static_cast<void**>(dlsym(lib, (base + std::to_string(m.size()) + m + "E").c_str()));
    return p ? *p : nullptr;
  };
  const std::string cap = at::get_cpu_capability();
  void* fn = nullptr;
  if (cap == "AVX512") fn = member("AVX512");
  if (!fn && (cap == "AVX512" || cap == "AVX2")) fn = member("AVX2");
  if (!fn) fn = member("DEFAULT");
  dlclose(lib);
  return fn;
}

}  // namespace

void run_stub_on_cpu(at::TensorIteratorBase& iter, const char* stub, const void* stub_object, const char* stub_type,
                     const std::function<void(void* fn, at::TensorIterator&)>& call) {
  std::string name(stub);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, "_stub") == 0) name.resize(name.size() - 5);
  const std::string dt = iter_has_float64(iter) ? "float64" : "complex64";
  // Stubs not mirrored here raise NoDtypeKernel, so that a guarded registration (ops/register.h) runs
  // the whole op on the CPU.
  void* fn = kNoMirror.count(stub) ? nullptr : cpu_kernel_of(stub_object, stub_type);
  if (fn == nullptr)
    throw NoDtypeKernel(c10::SourceLocation{__func__, __FILE__, uint32_t(__LINE__)},
                        "webgpu: " + name + ": no " + dt + " kernel on the webgpu device yet, and this op cannot run " +
                            "through the CPU fallback. Compute on the CPU.");
  core::begin_cpu_fallback(name + " (" + dt + ")");

  const bool reduction = IterFlags::reduction(iter);
  const at::ScalarType common = IterFlags::common(iter);

  // Outputs: a CPU tensor per output; an output with stride-0 dims (a reduction's result viewed over
  // the input's shape) is a compact tensor expanded the same way, so CPU's kernel sees the same
  // aliasing.
  struct Out {
    at::Tensor dev, cpu, operand;
  };
  std::vector<Out> outs;
  for (int k = 0; k < iter.noutputs(); ++k) {
    const at::Tensor& o = iter.tensor(k);
    std::vector<int64_t> compact(o.sizes().begin(), o.sizes().end());
    bool expanded = false;
    for (int64_t d = 0; d < o.dim(); ++d)
      if (o.stride(d) == 0 && o.size(d) > 1) {
        compact[d] = 1;
        expanded = true;
      }
    at::Tensor dev = expanded ? o.as_strided(compact, o.strides(), o.storage_offset()) : o;
    at::Tensor cpu = at::empty(dev.sizes(), dev.options().device(at::kCPU));
    outs.push_back({dev, cpu, expanded ? cpu.expand(o.sizes()) : cpu});
  }
  std::vector<at::Tensor> ins;
  for (int k = iter.noutputs(); k < iter.ntensors(); ++k) ins.push_back(iter.tensor(k).to(at::kCPU));

  // CPU's iterator for the op. When this one promotes, CPU's would have cast the inputs to the common
  // dtype (a dtype the op forces, such as bool for a predicate, is not a promotion: left alone) --
  // unless the op's own iterator keeps an input's dtype (ldexp's integer exponent), which its CPU
  // kernel then checks: on that refusal the kernel runs again on the inputs as they are.
  auto run = [&](bool promote) {
    at::TensorIteratorConfig cfg;
    cfg.set_check_mem_overlap(false).check_all_same_dtype(false).resize_outputs(false);
    if (reduction) cfg.is_reduction(true);
    if (promote) cfg.promote_inputs_to_common_dtype(true);
    for (const auto& o : outs) cfg.add_owned_output(o.operand);
    for (const auto& t : ins)
      cfg.add_owned_const_input(promote && t.scalar_type() != common &&
                                        (at::isFloatingType(common) || at::isComplexType(common))
                                    ? t.to(common)
                                    : t);
    at::TensorIterator cpu_iter = cfg.build();
    call(fn, cpu_iter);
  };
  // CPU's own iterator may differ from this rebuilt one (an op whose CPU stub expects operands it
  // casts itself): its error becomes NoDtypeKernel, so a guarded registration runs the whole op on the
  // CPU instead (nothing on the device is written before this point).
  try {
    try {
      run(common != at::ScalarType::Undefined);
    } catch (const c10::Error&) {
      if (common == at::ScalarType::Undefined) throw;
      run(false);
    }
  } catch (const c10::Error& e) {
    throw NoDtypeKernel(c10::SourceLocation{__func__, __FILE__, uint32_t(__LINE__)},
                        "webgpu: " + name + " (" + dt + "): " + e.what_without_backtrace());
  }
  for (auto& o : outs) o.dev.copy_(o.cpu);
}

}  // namespace webgpu::ops
