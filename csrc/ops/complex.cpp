// complex64 on the device: storage is pairs of float32 words (real, imag), CPU's layout, so copies and
// index/shape ops move it as 8-byte raw elements (int64's paths). This file holds what only complex
// needs: the views (view_as_real/complex), torch.complex/polar, conjugate and negative bits in copies,
// conj_physical, and the complex rows of pointwise ops, reductions and GEMMs (docs/design.md, "Dtype storage").
#include "ops/complex.h"

#include <ATen/native/TensorFactories.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "engines/elementwise.h"
#include "ops/common.h"
#include "ops/pointwise.h"
#include "ops/register.h"

namespace webgpu::ops {

void refuse_complex(const std::string& op) {
  throw NoDtypeKernel(c10::SourceLocation{__func__, __FILE__, uint32_t(__LINE__)},
                      "webgpu: \"" + op +
                          "\" is not implemented for complex64 on the webgpu device yet; compute on the CPU, "
                          "e.g. tensor.cpu(), or on the real and imaginary parts (torch.view_as_real).");
}

namespace {

constexpr uint32_t kSign = 0x80000000u;

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A plain (no lazy bits) float view of a complex64 tensor's real or imaginary parts.
at::Tensor part(const at::Tensor& t, int64_t k) { return at::view_as_real(t).select(-1, k); }

// dst = src with the conjugate / negative bits flipped as given (same dtype): a sign-bit xor.
void flip_copy(const at::Tensor& dst, const at::Tensor& src, bool conj, bool neg) {
  auto iter = as_is_iter(dst, {src});
  const at::ScalarType t = dst.scalar_type();
  if (t == at::kComplexFloat) {
    const uint32_t re = neg ? kSign : 0u, im = (neg ? kSign : 0u) ^ (conj ? kSign : 0u);
    const std::string e = "(x1 ^ vec2<u32>(" + std::to_string(re) + "u, " + std::to_string(im) + "u))";
    run_elementwise(iter, "copy_flip", e, lib::None, CT::RAW);
  } else if (!neg) {  // conjugating a real tensor is a copy
    run_elementwise(iter, "copy", "x1", lib::None, CT::RAW);
  } else if (t == at::kFloat) {
    run_elementwise(iter, "copy_neg", "(x1 ^ 0x80000000u)", lib::None, CT::RAW);
  } else if (t == at::kHalf || t == at::kBFloat16) {
    run_elementwise(iter, "copy_neg", "(x1 ^ 0x8000u)", lib::None, CT::RAW);
  } else if (t == at::kLong) {
    run_elementwise(iter, "copy_neg", "i64_neg(x1)", lib::Int64, CT::I64);
  } else {
    run_elementwise(iter, "copy_neg", "-x1", lib::None, CT::I32);
  }
}

}  // namespace

bool complex_copy(const at::Tensor& dst, const at::Tensor& src, void (*copy)(const at::Tensor&, const at::Tensor&)) {
  const bool fc = src.is_conj() != dst.is_conj(), fn = src.is_neg() != dst.is_neg();
  if (fc || fn) {
    if (src.scalar_type() == dst.scalar_type()) {
      flip_copy(dst, src, fc, fn);
      return true;
    }
    // A conversion with bits: resolve the source into a plain tensor, convert, then apply dst's bits.
    at::Tensor s = src;
    if (src.is_conj() || src.is_neg()) {
      s = at::empty(src.sizes(), src.options());
      copy(s, src);
    }
    if (dst.is_conj() || dst.is_neg()) {
      at::Tensor d = at::empty(dst.sizes(), dst.options());
      copy(d, s);
      copy(dst, d);
    } else {
      copy(dst, s);
    }
    return true;
  }
  if (src.scalar_type() == at::kComplexFloat && dst.scalar_type() == at::kBool) {
    // CPU: a complex is true when either part is non-zero (NaN included; -0 is zero). Bits, not
    // float compares, so subnormals count on GPUs that flush them.
    at::Tensor s = src.expand(dst.sizes());
    const at::Tensor re = part(s, 0), im = part(s, 1);
    auto iter = as_is_iter(dst, {re, im});
    run_elementwise(iter, "c64_to_bool",
                    "select(0.0, 1.0, ((bitcast<u32>(x1) | bitcast<u32>(x2)) & 0x7fffffffu) != 0u)", lib::None,
                    CT::F32);
    return true;
  }
  return false;
}

at::Tensor host_for_upload(const at::Tensor& dst, const at::Tensor& src_cpu) {
  at::Tensor h = src_cpu;
  if (dst.is_conj()) h = h.conj();
  if (dst.is_neg()) h = h.neg();
  return h.resolve_conj().resolve_neg();
}

// ---- pointwise rows ------------------------------------------------------------------------------

namespace {

// One input of a complex row: a device complex64 tensor (conjugate resolved, real inputs converted),
// or a CPU scalar's value.
struct CIn {
  bool scalar = false;
  c10::complex<float> v;
  at::Tensor t;
};

std::vector<CIn> complex_inputs(at::TensorIteratorBase& iter) {
  std::vector<CIn> in;
  for (int i = 0; i < iter.ninputs(); ++i) {
    const int op = iter.noutputs() + i;
    CIn c;
    const at::Tensor& t = iter.tensor(op);
    if (iter.is_cpu_scalar(op)) {
      c.scalar = true;
      c.v = t.item().toComplexFloat();
    } else {
      c.t = t.scalar_type() == at::kComplexFloat ? t.resolve_conj().resolve_neg() : t.to(at::kComplexFloat);
    }
    in.push_back(std::move(c));
  }
  return in;
}

// The template with each "#k" replaced by sub(k, suffix), suffix the letter after k ('r', 'i' or 0).
template <class F>
std::string expand(const std::string& tpl, F sub) {
  std::string e;
  for (size_t i = 0; i < tpl.size(); ++i) {
    if (tpl[i] != '#') {
      e += tpl[i];
      continue;
    }
    size_t j = i + 1;
    while (j < tpl.size() && std::isdigit(static_cast<unsigned char>(tpl[j]))) ++j;
    const int k = std::stoi(tpl.substr(i + 1, j - i - 1));
    const char suffix = j < tpl.size() && (tpl[j] == 'r' || tpl[j] == 'i') ? tpl[j] : 0;
    e += sub(k, suffix);
    i = suffix ? j : j - 1;
  }
  return e;
}

// out (complex64) = tpl over the inputs, "#k" being input k as vec2<f32> (then the extra scalars).
void run_c2c(const std::string& name, at::TensorIteratorBase& iter, const std::vector<CIn>& in, const std::string& tpl,
             const std::vector<c10::complex<float>>& extra = {}) {
  auto cfg = at::TensorIteratorConfig();
  cfg.add_output(iter.output(0)).resize_outputs(false).check_all_same_dtype(false).set_check_mem_overlap(false);
  std::vector<std::string> arg;
  std::vector<ScalarBits> sc;
  int x = 1;
  auto add_scalar = [&](c10::complex<float> v) {
    arg.push_back("c_ld(s" + std::to_string(sc.size()) + ")");
    sc.push_back({f32_bits(v.real()), f32_bits(v.imag())});
  };
  for (const CIn& c : in) {
    if (c.scalar) {
      add_scalar(c.v);
    } else {
      cfg.add_const_input(c.t);
      arg.push_back("c_ld(x" + std::to_string(x++) + ")");
    }
  }
  for (auto v : extra) add_scalar(v);
  const std::string e = "c_st(" + expand(tpl, [&](int k, char) { return arg.at(size_t(k)); }) + ")";
  auto it = cfg.build();
  run_elementwise(it, "c64_" + name, e, lib::Complex, CT::RAW, sc);
}

// out (real dtype) = tpl over the inputs' parts: "#kr" / "#ki" are input k's real / imaginary part (f32).
void run_c2r(const std::string& name, at::TensorIteratorBase& iter, const std::vector<CIn>& in,
             const std::string& tpl) {
  auto cfg = at::TensorIteratorConfig();
  cfg.add_output(iter.output(0)).resize_outputs(false).check_all_same_dtype(false).set_check_mem_overlap(false);
  std::vector<std::string> re, im;
  std::vector<ScalarBits> sc;
  std::vector<at::Tensor> parts;
  parts.reserve(2 * in.size());  // the config borrows them: no reallocation
  int x = 1;
  for (const CIn& c : in) {
    if (c.scalar) {
      re.push_back("s" + std::to_string(sc.size()));
      sc.push_back({f32_bits(c.v.real()), 0});
      im.push_back("s" + std::to_string(sc.size()));
      sc.push_back({f32_bits(c.v.imag()), 0});
    } else {
      parts.push_back(part(c.t, 0));
      cfg.add_const_input(parts.back());
      parts.push_back(part(c.t, 1));
      cfg.add_const_input(parts.back());
      re.push_back("x" + std::to_string(x++));
      im.push_back("x" + std::to_string(x++));
    }
  }
  const std::string e = expand(tpl, [&](int k, char c) { return c == 'i' ? im.at(size_t(k)) : re.at(size_t(k)); });
  auto it = cfg.build();
  run_elementwise(it, "c64_" + name, e, lib::Pointwise, CT::F32, sc);
}

// Truth of input k for the logical ops: a complex value is true when either part is non-zero (NaN
// included; -0 is zero), as CPU. Bits, not float compares, as complex_copy. `parts`: run_c2r's
// "#kr"/"#ki" names, else run_c2c's vec2 "#k".
std::string truth(int k, bool parts) {
  const std::string h = "#" + std::to_string(k);
  const std::string re = parts ? h + "r" : h + ".x", im = parts ? h + "i" : h + ".y";
  return "(((bitcast<u32>(" + re + ") | bitcast<u32>(" + im + ")) & 0x7fffffffu) != 0u)";
}

// The boolean expression of a logical op over complex inputs, or "" for other ops.
std::string logical_expr(const std::string& n, bool parts) {
  if (n == "logical_not") return "!" + truth(0, parts);
  if (n == "logical_and") return truth(0, parts) + " && " + truth(1, parts);
  if (n == "logical_or") return truth(0, parts) + " || " + truth(1, parts);
  if (n == "logical_xor") return truth(0, parts) + " != " + truth(1, parts);
  return "";
}

}  // namespace

// A device tensor of input k of iter (a CPU scalar moved to the device as complex64).
at::Tensor device_operand(at::TensorIteratorBase& iter, int k, at::ScalarType dt) {
  const int op = iter.noutputs() + k;
  const at::Tensor& t = iter.tensor(op);
  if (iter.is_cpu_scalar(op)) return t.to(iter.output(0).device(), dt);
  return t.scalar_type() == dt ? t.resolve_conj().resolve_neg() : t.to(dt);
}

// where / masked_fill: raw selections, run on the float32 parts (real, imag as a trailing dim of 2).
void run_select(const std::string& n, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars) {
  const at::Tensor& out = iter.output(0);
  if (n == "where") {
    const at::Tensor cond = device_operand(iter, 0, at::kBool).unsqueeze(-1);
    const at::Tensor a = at::view_as_real(device_operand(iter, 1, at::kComplexFloat));
    const at::Tensor b = at::view_as_real(device_operand(iter, 2, at::kComplexFloat));
    const at::Tensor o = at::view_as_real(out);
    auto it = as_is_iter(o, {cond, a, b}, false);
    run_elementwise(it, "c64_where", "select(x3, x2, !(x1 == 0.0))", lib::None, CT::F32);
    return;
  }
  // masked_fill: operands (self, self, mask), the value a scalar.
  const c10::complex<float> v = scalars.begin()->toComplexFloat();
  const at::Tensor mask = device_operand(iter, 1, at::kBool);
  for (int k = 0; k < 2; ++k) {
    const at::Tensor o = part(out, k);
    auto it = as_is_iter(o, {o, mask}, false);
    run_elementwise(it, "c64_masked_fill", "select(x1, s0, !(x2 == 0.0))", lib::None, CT::F32,
                    {{f32_bits(k == 0 ? v.real() : v.imag()), 0}});
  }
}

void run_complex_row(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars) {
  const std::string n = r.name;
  if (iter.noutputs() != 1) refuse_complex(n);
  if (n == "where" || n == "masked_fill") return run_select(n, iter, scalars);
  const bool c_out = iter.output(0).scalar_type() == at::kComplexFloat;
  auto in = complex_inputs(iter);
  const auto s0 = scalars.size() > 0 ? scalars.begin()->toComplexFloat() : c10::complex<float>();
  // logical_and/or/xor/not: bool (or the out= dtype) from the truth of each input; a complex out=
  // gets (1, 0) or (0, 0).
  if (const std::string l = logical_expr(n, !c_out); !l.empty())
    return c_out ? run_c2c(n, iter, in, "vec2<f32>(select(0.0, 1.0, " + l + "), 0.0)")
                 : run_c2r(n, iter, in, "b2f(" + l + ")");
  if (c_out) {
    // Written once: their own rows and pow's special exponents 0.5, -0.5 and -1 run the same formula.
    const char* sqrt_ = "c_sqrt(#0)";
    const char* rsqrt = "c_div(vec2<f32>(1.0, 0.0), c_sqrt(#0))";
    const char* reciprocal = "c_div(vec2<f32>(1.0, 0.0), #0)";
    // CPU adds as a + alpha * b in complex arithmetic even for alpha = 1 (and subtracts with alpha
    // = -1), so infinities meet 0 * inf as CPU's do.
    if (n == "add") return run_c2c(n, iter, in, "#0 + c_mul(#2, #1)", {c10::complex<float>(1.0f, 0.0f)});
    if (n == "add_alpha") return run_c2c(n, iter, in, "#0 + c_mul(#2, #1)", {s0});
    if (n == "sub") return run_c2c(n, iter, in, "#0 + c_mul(#2, #1)", {c10::complex<float>(-1.0f, 0.0f)});
    if (n == "mul") return run_c2c(n, iter, in, "c_mul(#0, #1)");
    if (n == "div_true") return run_c2c(n, iter, in, "c_div(#0, #1)");
    if (n == "neg") return run_c2c(n, iter, in, "-#0");
    if (n == "exp") return run_c2c(n, iter, in, "c_exp(#0)");
    // x / (1 + e^-x), CPU's complex silu
    if (n == "silu") return run_c2c(n, iter, in, "c_div(#0, vec2<f32>(1.0, 0.0) + c_exp(-#0))");
    if (n == "reciprocal") return run_c2c(n, iter, in, reciprocal);
    if (n == "sgn") return run_c2c(n, iter, in, "c_sgn(#0)");
    // pow as CPU: std::pow (cpowf, exp(b log a)) but for the exponents ATen's pow_tensor_scalar
    // kernel special-cases (0 and 1 never reach a kernel: ATen fills or copies).
    if (n == "pow") return run_c2c(n, iter, in, "c_pow(#0, #1)");
    if (n == "pow_scalar") {
      const c10::complex<double> e = scalars.begin()->toComplexDouble();
      if (e == 2.0) return run_c2c("pow_2", iter, in, "c_mul(#0, #0)");
      if (e == 3.0) return run_c2c("pow_3", iter, in, "c_mul(c_mul(#0, #0), #0)");
      if (e == -2.0) return run_c2c("pow_m2", iter, in, "c_div(vec2<f32>(1.0, 0.0), c_mul(#0, #0))");
      if (e == 0.5) return run_c2c("sqrt", iter, in, sqrt_);
      if (e == -0.5) return run_c2c("rsqrt", iter, in, rsqrt);
      if (e == -1.0) return run_c2c("reciprocal", iter, in, reciprocal);
      return run_c2c(n, iter, in, "c_pow(#0, #1)", {s0});
    }
    if (n == "sqrt") return run_c2c(n, iter, in, sqrt_);
    if (n == "rsqrt") return run_c2c(n, iter, in, rsqrt);
    if (n == "lerp_scalar") return run_c2c(n, iter, in, "c_lerp(#0, #1, #2)", {s0});
    if (n == "lerp_tensor") return run_c2c(n, iter, in, "c_lerp(#0, #1, #2)");
    if (n == "logaddexp") return run_c2c(n, iter, in, "c_logaddexp(#0, #1)");
    // abs / angle of a complex input: ATen runs the stub into a complex result and keeps its real part.
    if (n == "abs") return run_c2c(n, iter, in, "vec2<f32>(f_hypot(#0.x, #0.y), 0.0)");
    if (n == "angle") return run_c2c(n, iter, in, "vec2<f32>(f_atan2(#0.y, #0.x), 0.0)");
  } else {
    if (n == "eq") return run_c2r(n, iter, in, "b2f(#0r == #1r && #0i == #1i)");
    if (n == "ne") return run_c2r(n, iter, in, "b2f(!(#0r == #1r && #0i == #1i))");
    if (n == "abs") return run_c2r(n, iter, in, "f_hypot(#0r, #0i)");
    if (n == "angle") return run_c2r(n, iter, in, "f_atan2(#0i, #0r)");
  }
  refuse_complex(n);
}

// ---- reductions and GEMMs ------------------------------------------------------------------------

void complex_reduce(at::TensorIteratorBase& iter, const char* name) {
  const std::string n = name;
  const bool sum = n == "sum_stub", mean = n == "mean_stub";
  if (!(sum || mean) || iter.noutputs() != 1 || iter.dtype(0) != at::kComplexFloat ||
      iter.input_dtype(0) != at::kComplexFloat)
    refuse_complex(n.substr(0, n.find("_stub")));
  // Float views of the iterator's operands with a trailing (real, imag) dim; the output keeps its
  // reduced dims (stride 0 in the iterator) as size 1.
  std::vector<int64_t> rdims;
  auto fview = [&](int op, bool out) {
    const at::Tensor& t = iter.tensor(op);
    const auto byte_off = static_cast<const char*>(iter.data_ptr(op)) - static_cast<const char*>(t.storage().data());
    std::vector<int64_t> sizes, strides;
    for (int d = 0; d < iter.ndim(); ++d) {
      const int64_t sz = iter.shape()[d];
      const bool reduced = iter.strides(0)[d] == 0 && sz > 1;
      if (!out && reduced) rdims.push_back(d);
      sizes.push_back(out && reduced ? 1 : sz);
      strides.push_back(iter.strides(op)[d] / 4);
    }
    sizes.push_back(2);
    strides.push_back(1);
    return at::view_as_real(t).as_strided(sizes, strides, byte_off / 4);
  };
  at::Tensor o = fview(0, true), x = fview(1, false);
  if (rdims.empty()) {
    o.copy_(x);
  } else if (sum) {
    at::sum_out(o, x, rdims, /*keepdim=*/true);
  } else {
    at::mean_out(o, x, rdims, /*keepdim=*/true);
  }
}

void complex_gemm(const at::Tensor& o3, const at::Tensor& a3, const at::Tensor& b3, const at::Tensor& c3,
                  const c10::Scalar& beta, const c10::Scalar& alpha, const char* name) {
  TORCH_CHECK(a3.scalar_type() == at::kComplexFloat && b3.scalar_type() == at::kComplexFloat, name,
              ": expected operands of dtype ComplexFloat, got ", a3.scalar_type(), " and ", b3.scalar_type());
  if (o3.numel() == 0) return;
  at::Tensor a = a3.resolve_conj(), b = b3.resolve_conj();
  at::Tensor ar = part(a, 0).contiguous(), ai = part(a, 1).contiguous();
  at::Tensor br = part(b, 0).contiguous(), bi = part(b, 1).contiguous();
  // Four real GEMMs: (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br).
  at::Tensor re = at::bmm(ar, br).sub_(at::bmm(ai, bi));
  at::Tensor im = at::bmm(ar, bi).add_(at::bmm(ai, br));
  at::Tensor p = at::complex(re, im);
  const bool plain_alpha = alpha.toComplexDouble() == c10::complex<double>(1.0, 0.0);
  if (!plain_alpha) p = p.mul(alpha);
  if (c3.defined() && beta.toComplexDouble() != c10::complex<double>(0.0, 0.0)) p = p.add(c3.mul(beta));
  o3.copy_(p);
}

namespace {

// ---- views, torch.complex, torch.polar, conj_physical --------------------------------------------

void complex_kernel(at::TensorIterator& iter) {
  const at::Tensor& out = iter.output(0);
  part(out, 0).copy_(iter.input(0));
  part(out, 1).copy_(iter.input(1));
}

void polar_kernel(at::TensorIterator& iter) {
  const at::Tensor& out = iter.output(0);
  for (int k = 0; k < 2; ++k) {
    const at::Tensor o = part(out, k);
    auto it = as_is_iter(o, {iter.input(0), iter.input(1)});
    // std::polar: (abs cos(angle), abs sin(angle)).
    run_elementwise(it, k == 0 ? "polar_re" : "polar_im", k == 0 ? "x1 * f_cos(x2)" : "x1 * f_sin(x2)", lib::Pointwise,
                    CT::F32);
  }
}

void conj_physical_kernel(at::TensorIteratorBase& iter) {
  if (iter.dtype(0) != at::kComplexFloat) {
    run_elementwise(iter, "copy", "x1", lib::None, CT::RAW);
    return;
  }
  run_elementwise(iter, "conj_physical", "(x1 ^ vec2<u32>(0u, 0x80000000u))", lib::None, CT::RAW);
}

}  // namespace

// sgn's stub runs only for complex inputs (real ones take sign_stub).
constexpr Row kSgn{"sgn", lib::None, nullptr, nullptr, nullptr};
WEBGPU_STUB(sgn_stub, &k0<kSgn>)
WEBGPU_STUB(complex_stub, &complex_kernel)
WEBGPU_STUB(polar_stub, &polar_kernel)
WEBGPU_STUB(conj_physical_stub, &conj_physical_kernel)

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("complex.out", at::native::complex_out);
  m.impl("polar.out", at::native::polar_out);
  m.impl("conj_physical.out", at::native::conj_physical_out);
}

}  // namespace webgpu::ops

// The device's _copy_from resolves conjugate and negative bits itself (complex_copy, download,
// host_for_upload). Without these, ATen's Conjugate / Negative fallbacks would materialize a lazy
// operand with clone(), whose copy_ reaches _copy_from again, without end.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
