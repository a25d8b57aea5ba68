// Random sampling on the device: a Philox4x32-10 generator (wgsl/kernels/random.wgsl) keyed by the webgpu
// generator's seed, its counter taken from the generator's offset, which advances per call as CUDA's
// philox_cuda_state does. ATen's device-generic in-place ops (uniform_, normal_, random_, bernoulli_,
// exponential_, geometric_, log_normal_, cauchy_) reach the kernels here through their DispatchStubs;
// rand/randn/randint and the *_like factories decompose into them. Also native_dropout (one fused
// kernel for output and mask), multinomial (with and without replacement) and randperm.
//
// Each invocation draws one Philox block (four words; two blocks where an element needs 64 bits) and
// fills four consecutive elements, so one call costs one dispatch whatever the size.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/NativeFunctions.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/UnaryOps.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "core/core.h"
#include "kernel/device.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/pointwise.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using Gen = std::optional<at::Generator>;

int device_index(const at::TensorBase& t) { return t.device().has_index() ? t.device().index() : 0; }

// What one op computes per element: `fns` (WGSL functions), `pre` (statements after the Philox
// blocks r, and r2 when `wide`), `lane` (the value for lane k, of the kernel's compute type `ct`).
struct Spec {
  std::string name;
  CT ct = CT::F32;
  std::string fns, pre, lane;
  bool wide = false;
  std::vector<std::pair<std::string, float>> f32s;  // named parameters the WGSL reads (P.<name>)
  std::vector<std::pair<std::string, int64_t>> i64s;  // (vec2<u32>)
  const at::Tensor* extra = nullptr;  // an input read at the same element index at P.p_off (bernoulli's p)
};

// The Philox key and counter of a launch: WGSL reads philox_at(counter word 0, counter word 1).
void param_philox(Kernel& k, const core::PhiloxState& ps) {
  k.param_i64("seed", int64_t(ps.seed));
  k.param_i64("ctr", int64_t(ps.offset));
}
std::string philox_at(const std::string& c0, const std::string& c1) {
  return "philox(vec4<u32>(" + c0 + ", " + c1 + ", P.ctr.x, P.ctr.y), P.seed)";
}

// The entry point of the four-values-per-invocation kernels, up to `n` and the Philox block r of t.
const char* kEntry4 =
    "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
    " @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
    "  let t = linear_id(wid, nwg, lid, 256u);\n"
    "  let n = P.n;\n"
    "  if (t >= n / 4u + select(0u, 1u, (n & 3u) != 0u)) { return; }\n";

// Fills `self` (contiguous) with spec's values.
void fill_contiguous(const at::Tensor& self, const Spec& sp, const Gen& gen) {
  const int64_t n = self.numel();
  if (n == 0) return;
  if (!kernel::fits_binding(self) || (sp.extra && !kernel::fits_binding(*sp.extra))) {
    // Larger than one binding: flat parts that fit, each its own draw from the generator (the values
    // are as random, not the same as one draw's). Parts start on whole words for sub-word dtypes.
    const int64_t isz = std::max<int64_t>(self.element_size(), sp.extra ? sp.extra->element_size() : 1);
    const int64_t part =
        std::max<int64_t>(int64_t(kernel::device_info(self).max_binding / 2) / isz / 1024 * 1024, 1024);
    for (int64_t s0 = 0; s0 < n; s0 += part) {
      const int64_t len = std::min(part, n - s0);
      Spec piece = sp;
      at::Tensor pe;
      if (sp.extra) {
        pe = sp.extra->view({-1}).narrow(0, s0, len);
        piece.extra = &pe;
      }
      fill_contiguous(self.view({-1}).narrow(0, s0, len), piece, gen);
    }
    return;
  }
  const core::PhiloxState ps = core::philox_state(gen, device_index(self), 4);
  const int64_t isz = self.element_size();
  const bool packed = isz < 4 && self.storage_offset() % (4 / isz) == 0;
  Kernel k("random:" + sp.name + (sp.wide ? ":w" : "") + (packed ? ":p" : ""));
  k.out(self, sp.ct);
  at::Tensor extra;
  if (sp.extra) {
    extra = *sp.extra;
    k.in(extra, CT::F32);
  }
  k.param_index("n", n);
  k.param_index("out_off", self.storage_offset());
  param_philox(k, ps);
  if (sp.extra) k.param_index("p_off", extra.storage_offset());
  for (const auto& [name, v] : sp.f32s) k.param_f32(name, v);
  for (const auto& [name, v] : sp.i64s) k.param_i64(name, v);
  const uint64_t threads = uint64_t(n + 3) / 4;
  k.launch(grid(threads), [&] {
    std::ostringstream s;
    s << kernel::library("random") << sp.fns;
    if (packed)
      s << "fn bits_of(v: " << wgsl_type(sp.ct) << ") -> u32 { let r = " << convert_out(self.scalar_type(), sp.ct)
        << "; return r; }\n";
    s << kEntry4 << "  let r = " << philox_at("t", "0u") << ";\n";
    if (sp.wide) s << "  let r2 = " << philox_at("t", "1u") << ";\n";
    s << sp.pre;
    if (packed) {
      // Sub-word dtype, word-aligned start: the four values are packed into whole words (one store
      // per word instead of two atomics per element); a tail word keeps its bytes past the tensor.
      const bool two = isz == 2;
      s << "  var b = array<u32, 4>(0u, 0u, 0u, 0u);\n"
           "  for (var k = 0u; k < 4u; k = k + 1u) {\n"
           "    let e = t * 4u + k;\n"
           "    if (e >= n) { break; }\n"
           "    let v = "
        << sp.lane
        << ";\n"
           "    b[k] = bits_of(v);\n"
           "  }\n"
           "  let e0 = P.out_off + t * 4u;\n";
      if (two) {
        s << "  for (var j = 0u; j < 2u; j = j + 1u) {\n"
             "    let w = e0 / 2u + j;\n"
             "    let e = t * 4u + 2u * j;\n"
             "    if (e >= n) { break; }\n"
             "    var word = b[2u * j] | (b[2u * j + 1u] << 16u);\n"
             "    if (e + 1u >= n) { word = (wd0(w) & 0xffff0000u) | b[2u * j]; }\n"
             "    wr0(w, word);\n"
             "  }\n}\n";
      } else {
        s << "  let w = e0 / 4u;\n"
             "  let word = b[0] | (b[1] << 8u) | (b[2] << 16u) | (b[3] << 24u);\n"
             "  let have = min(n - t * 4u, 4u);\n"
             "  if (have == 4u) { wr0(w, word); } else {\n"
             "    let keep = 0xffffffffu << (8u * have);\n"
             "    wr0(w, (wd0(w) & keep) | (word & ~keep));\n"
             "  }\n}\n";
      }
      return s.str();
    }
    s << "  for (var k = 0u; k < 4u; k = k + 1u) {\n"
         "    let e = t * 4u + k;\n"
         "    if (e >= n) { break; }\n"
         "    let v = "
      << sp.lane
      << ";\n"
         "    st0(P.out_off + e, v);\n"
         "  }\n}\n";
    return s.str();
  });
}

// Fills any tensor: contiguous ones directly, others through a contiguous temporary.
void fill(const at::TensorBase& self_base, const Spec& sp, const Gen& gen) {
  at::Tensor self(self_base);
  if (self.numel() == 0) return;
  if (self.is_contiguous()) return fill_contiguous(self, sp, gen);
  at::Tensor tmp = at::empty(self.sizes(), self.options());
  fill_contiguous(tmp, sp, gen);
  self.copy_(tmp);
}

at::Tensor iter_tensor(at::TensorIteratorBase& iter) { return iter.tensor(0); }

// ---- stubs ----

void uniform_kernel(at::TensorIteratorBase& iter, double from, double to, Gen gen) {
  at::Tensor self = iter_tensor(iter);
  if (self.scalar_type() == at::kDouble) {
    // float64: uniform [0, 1) drawn in float32 on the device (24 random bits), widened exactly, then
    // scaled and shifted in float64 as CPU's kernel does with its 53 bits.
    at::Tensor u = at::empty(self.sizes(), self.options().dtype(at::kFloat));
    auto u_iter = at::TensorIterator::borrowing_nullary_op(u);
    uniform_kernel(u_iter, 0.0, 1.0, gen);
    self.copy_(u).mul_(to - from).add_(from);
    return;
  }
  Spec sp{"uniform"};
  sp.fns = round_fn(self.scalar_type());
  sp.f32s = {{"lo", float(from)}, {"hi", float(to)}};
  // Rounded to a half type, a value may reach `to`; it becomes `from`, as CUDA's kernel does.
  sp.lane = "uniform_at(r[k])";
  sp.fns +=
      "fn uniform_at(x: u32) -> f32 { let lo = P.lo; let hi = P.hi;"
      " let v = rnd(lo + rand_u01(x) * (hi - lo)); return select(v, lo, v >= hi && hi > lo); }\n";
  fill(self, sp, gen);
}

const char* kNormalPre =
    "  let z01 = rand_normal2(r.x, r.y);\n"
    "  let z23 = rand_normal2(r.z, r.w);\n"
    "  var z = array<f32, 4>(z01.x, z01.y, z23.x, z23.y);\n";

// CPU's dtype errors, raised by its kernels' dispatch macros. float64 is a floating type there: its
// TensorIterator stubs run CPU's kernel (the float64 stub fallback, ops/float64.h).
void require_float(const at::TensorBase& t, const char* kernel) {
  if (t.scalar_type() == at::kDouble) raise_no_float64_kernel(kernel);
  TORCH_CHECK_NOT_IMPLEMENTED(is_float(t.scalar_type()), "\"", kernel, "\" not implemented for '",
                              c10::toString(t.scalar_type()), "'");
}

void normal_kernel(const at::TensorBase& self, double mean, double std, Gen gen) {
  if (self.scalar_type() == at::kDouble) {
    // float64 (a stub without an iterator, so no stub fallback): standard normals drawn in float32 on the
    // device, widened exactly, then scaled and shifted in float64 (the samples have float32 resolution).
    at::Tensor z = at::empty(self.sizes(), self.options().dtype(at::kFloat));
    normal_kernel(z, 0.0, 1.0, gen);
    at::Tensor out(self);
    out.copy_(z).mul_(std).add_(mean);
    return;
  }
  require_float(self, "normal_kernel_cpu");
  Spec sp{"normal"};
  sp.f32s = {{"mean", float(mean)}, {"stddev", float(std)}};
  sp.pre = kNormalPre;
  sp.lane = "P.mean + P.stddev * z[k]";
  fill(self, sp, gen);
}

void log_normal_kernel(at::TensorIteratorBase& iter, double mean, double std, Gen gen) {
  require_float(iter.tensor_base(0), "log_normal_cpu");
  Spec sp{"log_normal"};
  sp.f32s = {{"mean", float(mean)}, {"stddev", float(std)}};
  sp.pre = kNormalPre;
  sp.lane = "exp(P.mean + P.stddev * z[k])";
  fill(iter_tensor(iter), sp, gen);
}

// Uniform in (0, 1), both ends excluded: logs stay finite and non-zero. 23 random bits: with 24,
// (2^24 - 1) + 0.5 rounds to 2^24 in float32, so u reached 1.0 and geometric_ returned 0.
const char* kOpen01 = "fn u_open(x: u32) -> f32 { return (f32(x >> 9u) + 0.5) * 1.1920928955078125e-7; }\n";

void exponential_kernel(at::TensorIteratorBase& iter, double lambda, Gen gen) {
  const at::ScalarType dt = iter.tensor_base(0).scalar_type();
  if (dt == at::kDouble) raise_no_float64_kernel("exponential");
  TORCH_CHECK(is_float(dt),
              "Exponential distribution is a continuous probability distribution. dtype must be a "
              "floating point but you specified ",
              dt);
  Spec sp{"exponential"};
  sp.fns = kOpen01;
  sp.f32s = {{"rate", float(lambda)}};
  sp.lane = "-log(u_open(r[k])) / P.rate";
  fill(iter_tensor(iter), sp, gen);
}

void geometric_kernel(at::TensorIteratorBase& iter, double p, Gen gen) {
  TORCH_CHECK_NOT_IMPLEMENTED(iter.tensor_base(0).scalar_type() != at::kBool,
                              "\"geometric_cpu\" not implemented for 'Bool'");
  Spec sp{"geometric"};
  sp.fns = kOpen01;
  sp.f32s = {{"log1m_p", float(std::log1p(-p))}};  // log(1 - p)
  sp.lane = "ceil(log(u_open(r[k])) / P.log1m_p)";
  fill(iter_tensor(iter), sp, gen);
}

void cauchy_kernel(at::TensorIteratorBase& iter, double median, double sigma, Gen gen) {
  Spec sp{"cauchy"};
  sp.f32s = {{"median", float(median)}, {"sigma", float(sigma)}};
  sp.lane = "P.median + P.sigma * tan(3.14159265358979 * (rand_u01(r[k]) - 0.5))";
  fill(iter_tensor(iter), sp, gen);
}

void bernoulli_scalar_kernel(const at::TensorBase& self, double p, Gen gen) {
  Spec sp{"bernoulli_scalar"};
  sp.f32s = {{"p", float(p)}};
  sp.lane = "select(0.0, 1.0, rand_u01(r[k]) < P.p)";
  fill(self, sp, gen);
}

void bernoulli_tensor_kernel(const at::TensorBase& self_base, const at::TensorBase& p_base, Gen gen) {
  at::Tensor self(self_base), p(p_base);
  if (self.numel() == 0) return;
  at::Tensor pc = p.to(self.device(), at::kFloat).expand(self.sizes()).contiguous();
  // CPU raises for p outside [0, 1] (NaN included); one readback.
  TORCH_CHECK(!at::logical_not(at::logical_and(pc.ge(0), pc.le(1))).any().item<bool>(),
              "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
              "If so, please report an enhancement request to PyTorch.)");
  Spec sp{"bernoulli_tensor"};
  sp.extra = &pc;
  sp.lane = "select(0.0, 1.0, rand_u01(r[k]) < ld1(P.p_off + e))";
  if (self.is_contiguous()) return fill_contiguous(self, sp, gen);
  at::Tensor tmp = at::empty(self.sizes(), self.options());
  fill_contiguous(tmp, sp, gen);
  self.copy_(tmp);
}

// base + (random % range) as int64; range 0 means the full 64-bit range.
void random_range(const at::Tensor& self, uint64_t range, int64_t base, Gen gen) {
  if (self.scalar_type() == at::kDouble) {
    // float64: the int64 draw converted to float64, as CPU's kernel converts its own
    at::Tensor t = at::empty(self.sizes(), self.options().dtype(at::kLong));
    random_range(t, range, base, gen);
    at::Tensor(self).copy_(t);
    return;
  }
  Spec sp{"random", CT::I64};
  const uint64_t b = uint64_t(base);
  sp.i64s = {{"base", int64_t(b)}};
  sp.fns = "fn base() -> vec2<u32> { return P.base; }\n";
  if (range != 0 && range <= (uint64_t(1) << 32)) {
    if (range == (uint64_t(1) << 32)) {
      sp.name += ":32";
      sp.lane = "i64_add(base(), vec2<u32>(r[k], 0u))";
    } else {
      sp.name += ":u32";
      sp.i64s.push_back({"range", int64_t(range)});
      sp.lane = "i64_add(base(), vec2<u32>(r[k] % P.range.x, 0u))";
    }
  } else {
    sp.wide = true;
    sp.pre = "  var w = array<u32, 8>(r.x, r.y, r.z, r.w, r2.x, r2.y, r2.z, r2.w);\n";
    const std::string bits = "vec2<u32>(w[2u * k], w[2u * k + 1u])";
    if (range == 0) {
      sp.name += ":full";
      sp.lane = "i64_add(base(), " + bits + ")";
    } else if ((range & (range - 1)) == 0) {
      sp.name += ":pow2";
      sp.i64s.push_back({"mask", int64_t(range - 1)});
      sp.lane = "i64_add(base(), " + bits + " & P.mask)";
    } else {
      sp.name += ":u64";
      sp.i64s.push_back({"range", int64_t(range)});
      sp.lane = "i64_add(base(), u64_divmod(" + bits + ", P.range).zw)";
    }
  }
  fill(self, sp, gen);
}

void random_from_to_kernel(at::TensorIteratorBase& iter, uint64_t range, int64_t base, Gen gen) {
  random_range(iter_tensor(iter), range, base, gen);
}

void random_full_kernel(at::TensorIteratorBase& iter, Gen gen) { random_range(iter_tensor(iter), 0, 0, gen); }

// random_() with no bounds: [0, 2^mantissa] for floating types, [0, max] for integers, as CPU.
void random_kernel(at::TensorIteratorBase& iter, Gen gen) {
  at::Tensor self = iter_tensor(iter);
  TORCH_CHECK_NOT_IMPLEMENTED(!kernel::is_uint_fp8(self.scalar_type()), "\"random_kernel_cpu\" not implemented for '",
                              self.scalar_type(), "'");
  uint64_t range;
  switch (self.scalar_type()) {
    case at::kDouble: range = (uint64_t(1) << 53) + 1; break;
    case at::kFloat: range = (uint64_t(1) << 24) + 1; break;
    case at::kHalf: range = (uint64_t(1) << 11) + 1; break;
    case at::kBFloat16: range = (uint64_t(1) << 8) + 1; break;
    case at::kLong: range = uint64_t(1) << 63; break;
    case at::kInt: range = uint64_t(1) << 31; break;
    case at::kShort: range = uint64_t(1) << 15; break;
    case at::kChar: range = uint64_t(1) << 7; break;
    case at::kByte: range = uint64_t(1) << 8; break;
    case at::kBool: range = 2; break;
    default: TORCH_CHECK(false, "random_ not implemented for '", self.scalar_type(), "' on webgpu");
  }
  random_range(self, range, 0, gen);
}

}  // namespace
}  // namespace webgpu::ops

using namespace webgpu::ops;
WEBGPU_STUB(uniform_stub, &uniform_kernel)
WEBGPU_STUB(normal_stub, &normal_kernel)
WEBGPU_STUB(log_normal_stub, &log_normal_kernel)
WEBGPU_STUB(exponential_stub, &exponential_kernel)
WEBGPU_STUB(geometric_stub, &geometric_kernel)
WEBGPU_STUB(cauchy_stub, &cauchy_kernel)
WEBGPU_STUB(bernoulli_scalar_stub, &bernoulli_scalar_kernel)
WEBGPU_STUB(bernoulli_tensor_stub, &bernoulli_tensor_kernel)
WEBGPU_STUB(random_from_to_stub, &random_from_to_kernel)
WEBGPU_STUB(random_full_64_bits_range_stub, &random_full_kernel)
WEBGPU_STUB(random_stub, &random_kernel)

namespace webgpu::ops {
namespace {

// ---- normal with tensor mean/std: ATen's forms, with the std check through amin (one readback) ----

void check_normal_dtype(const at::Tensor& t) {
  TORCH_CHECK_NOT_IMPLEMENTED(is_float(t.scalar_type()) || t.scalar_type() == at::kDouble,
                              "\"normal_kernel_cpu\" not implemented for '", t.scalar_type(), "'");
}
void check_std_tensor(const at::Tensor& std) {
  TORCH_CHECK(!std.is_complex(), "normal expects standard deviation to be non-complex");
  TORCH_CHECK(std.numel() == 0 || at::amin(std).ge(0).item<bool>(), "normal expects all elements of std >= 0.0");
}

at::Tensor& normal_tf_out(const at::Tensor& mean, double std, Gen gen, at::Tensor& out) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  check_normal_dtype(out);
  at::native::resize_output(out, mean.sizes());
  out.normal_(0, std, std::move(gen));
  out.add_(mean);
  return out;
}
at::Tensor& normal_ft_out(double mean, const at::Tensor& std, Gen gen, at::Tensor& out) {
  check_std_tensor(std);
  check_normal_dtype(out);
  at::native::resize_output(out, std.sizes());
  out.normal_(0, 1, std::move(gen));
  out.mul_(std).add_(mean);
  return out;
}
at::Tensor& normal_tt_out(const at::Tensor& mean, const at::Tensor& std, Gen gen, at::Tensor& out) {
  check_std_tensor(std);
  check_normal_dtype(out);
  at::native::resize_output(out, at::infer_size(mean.sizes(), std.sizes()));
  out.normal_(0, 1, std::move(gen));
  out.mul_(std).add_(mean);
  return out;
}
at::Tensor normal_tf(const at::Tensor& mean, double std, Gen gen) {
  at::Tensor out = at::empty({0}, mean.options());
  return normal_tf_out(mean, std, std::move(gen), out);
}
at::Tensor normal_ft(double mean, const at::Tensor& std, Gen gen) {
  at::Tensor out = at::empty({0}, std.options());
  return normal_ft_out(mean, std, std::move(gen), out);
}
at::Tensor normal_tt(const at::Tensor& mean, const at::Tensor& std, Gen gen) {
  at::Tensor out = at::empty({0}, mean.options());
  return normal_tt_out(mean, std, std::move(gen), out);
}

// ---- dropout ----

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, std::optional<bool> train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (input.numel() == 0) return {input.clone(), at::empty_like(input, input.options().dtype(at::kBool))};
  if (train.has_value() && !*train) {
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  const double p1m = 1. - p;
  const double scale = p1m == 0 ? 0. : 1. / p1m;
  if (!is_float(input.scalar_type())) {
    at::Tensor mask = at::empty_like(input, input.options().dtype(at::kBool), at::MemoryFormat::Contiguous);
    mask.bernoulli_(p1m);
    return {input.mul(mask).mul_(scale), mask};
  }
  at::Tensor x = input.contiguous();
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  at::Tensor mask = at::empty(x.sizes(), x.options().dtype(at::kBool));
  const int64_t n = x.numel();
  const core::PhiloxState ps = core::philox_state(std::nullopt, device_index(x), 4);
  const bool half = out.element_size() == 2;  // fresh output: whole words, padding past the end is ours
  Kernel k(half ? "random:dropout:h" : "random:dropout");
  k.out(out, CT::F32);
  k.out(mask, CT::I32);
  k.in(x, CT::F32);
  k.param_index("n", n);
  k.param_index("x_off", x.storage_offset());
  param_philox(k, ps);
  k.param_f32("keep", float(p1m));
  k.param_f32("scale", float(scale));
  const uint64_t threads = uint64_t(n + 3) / 4;
  const at::ScalarType odt = out.scalar_type();
  k.launch(grid(threads), [half, odt] {
    std::ostringstream s;
    s << kernel::library("random");
    if (half) s << "fn bits_of(v: f32) -> u32 { let r = " << convert_out(odt, CT::F32) << "; return r; }\n";
    // The mask is fresh: invocation t owns its word t (four bool elements) and writes it whole.
    s << kEntry4 << "  let r = " << philox_at("t", "0u")
      << ";\n"
         "  let keep = P.keep;\n"
         "  let scale = P.scale;\n"
         "  var word = 0u;\n"
         "  var hb = array<u32, 4>(0u, 0u, 0u, 0u);\n"
         "  for (var k = 0u; k < 4u; k = k + 1u) {\n"
         "    let e = t * 4u + k;\n"
         "    if (e >= n) { break; }\n"
         "    let m = rand_u01(r[k]) < keep;\n"
         "    word = word | (select(0u, 1u, m) << (8u * k));\n"
         "    let y = select(0.0, ld2(P.x_off + e) * scale, m);\n"
      << (half ? "    hb[k] = bits_of(y);\n" : "    st0(e, y);\n") << "  }\n";
    if (half)
      s << "  wr0(2u * t, hb[0] | (hb[1] << 16u));\n"
           "  if (t * 4u + 2u < n) { wr0(2u * t + 1u, hb[2] | (hb[3] << 16u)); }\n";
    s << "  wr1(t, word);\n}\n";
    return s.str();
  });
  return {out, mask};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  return grad.mul(mask).mul(scale);  // as CPU: an integer grad times a float scale is float
}

// ---- randperm: a CPU permutation keyed by the generator's Philox state, uploaded ----

at::Tensor& randperm_out(int64_t n, Gen gen, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  const core::PhiloxState ps = core::philox_state(gen, device_index(out), 4);
  // A CPU generator seeded from (seed, offset) through a splitmix step: reproducible under the seed.
  uint64_t z = ps.seed + 0x9E3779B97F4A7C15ull * (ps.offset / 4 + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  at::Generator cg = at::make_generator<at::CPUGeneratorImpl>(z);
  at::Tensor cpu = at::empty({0}, out.options().device(at::kCPU));
  at::randperm_out(cpu, n, cg);
  at::native::resize_output(out, {n});
  out.copy_(cpu);
  return out;
}

// ---- multinomial ----

void multinomial_check(const at::Tensor& self, int64_t n_sample, bool replacement) {
  TORCH_CHECK(!self.is_complex() && at::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  const int64_t n_categories = self.size(-1);
  TORCH_CHECK(replacement || (n_sample <= n_categories),
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(n_categories <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
}

at::Tensor& multinomial_out(const at::Tensor& self, int64_t n_sample, bool replacement, Gen gen, at::Tensor& result) {
  multinomial_check(self, n_sample, replacement);
  TORCH_CHECK(result.device() == self.device(), "multinomial arguments must have the same device");
  TORCH_CHECK(result.scalar_type() == at::kLong, "multinomial expects Long tensor out, got: ", result.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  const int64_t n_dist = self.dim() == 1 ? 1 : self.size(0);
  const int64_t n_cat = self.size(-1);
  if (self.dim() == 1)
    at::native::resize_output(result, {n_sample});
  else
    at::native::resize_output(result, {n_dist, n_sample});
  if (result.numel() == 0) return result;
  at::Tensor p = self.to(at::kFloat).contiguous().view({n_dist, n_cat});
  // Validity, as CPU checks it: both conditions in one readback.
  {
    at::Tensor bad = at::logical_or(at::logical_or(p.lt(0), p.ne(p)), p.eq(INFINITY)).any();
    at::Tensor zero = p.sum(-1).le(0).any();
    const int flags = bad.to(at::kInt).add(zero.to(at::kInt), 2).item<int>();
    TORCH_CHECK(!(flags & 1), "probability tensor contains either `inf`, `nan` or element < 0");
    TORCH_CHECK(!(flags & 2), "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  at::Tensor out = result.is_contiguous() ? result : at::empty(result.sizes(), result.options());
  at::Tensor scratch = at::empty({n_dist, n_cat}, p.options());
  const core::PhiloxState ps = core::philox_state(gen, device_index(self), 4);
  Kernel k(replacement ? "random:multinomial_r" : "random:multinomial_n");
  k.out(out, CT::I64);
  k.out(scratch, CT::F32);
  k.in(p, CT::F32);
  k.param_index("rows", n_dist);  // distributions
  k.param_index("nc", n_cat);  // categories
  k.param_index("ns", n_sample);  // samples
  param_philox(k, ps);
  k.param_index("out_off", out.storage_offset());
  k.param_index("p_off", p.storage_offset());
  k.launch(uint64_t(n_dist), [replacement] {
    std::ostringstream s;
    s << kernel::library("random");
    s << "var<workgroup> sh: array<f32, 256>;\n"
         "var<workgroup> shi: array<u32, 256>;\n"
         "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
         " @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
         "  let row = linear_id(wid, nwg, 0u, 1u);\n"
         "  if (row >= P.rows) { return; }\n"  // a folded grid's spare workgroups (uniform)
         "  let nc = P.nc; let ns = P.ns;\n"
         "  let pbase = P.p_off + row * nc; let sbase = row * nc; let obase = P.out_off + row * ns;\n";
    if (replacement) {
      // Inclusive prefix sums of the row into scratch, 256 at a time with a running carry.
      s << "  var carry = 0.0;\n"
           "  for (var c0 = 0u; c0 < nc; c0 = c0 + 256u) {\n"
           "    let j = c0 + lid;\n"
           "    var x = 0.0;\n"
           "    if (j < nc) { x = ld2(pbase + j); }\n"
           "    sh[lid] = x;\n"
           "    workgroupBarrier();\n"
           "    for (var d = 1u; d < 256u; d = d * 2u) {\n"
           "      var y = sh[lid];\n"
           "      if (lid >= d) { y = y + sh[lid - d]; }\n"
           "      workgroupBarrier();\n"
           "      sh[lid] = y;\n"
           "      workgroupBarrier();\n"
           "    }\n"
           "    if (j < nc) { st1(sbase + j, carry + sh[lid]); }\n"
           "    carry = carry + sh[255u];\n"
           "    workgroupBarrier();\n"
           "  }\n"
           "  storageBarrier();\n"
           "  let total = ld1(sbase + nc - 1u);\n"
           "  for (var q = lid; q < ns; q = q + 256u) {\n"
           "    let r = " +
               philox_at("q", "row") +
               ";\n"
               "    var u = rand_u01(r.x) * total;\n"
               "    if (u >= total) { u = bitcast<f32>(bitcast<u32>(total) - 1u); }\n"
               "    var lo = 0u; var hi = nc - 1u;\n"
               "    while (lo < hi) {\n"
               "      let mid = (lo + hi) / 2u;\n"
               "      if (ld1(sbase + mid) > u) { hi = mid; } else { lo = mid + 1u; }\n"
               "    }\n"
               "    st0(obase + q, vec2<u32>(lo, 0u));\n"
               "  }\n";
    } else {
      // Keys p / E (E exponential): the n_sample largest, largest first, are a sample without
      // replacement. Picked one at a time by a workgroup argmax; a picked key becomes -1.
      s << "  for (var j = lid; j < nc; j = j + 256u) {\n"
           "    let r = " +
               philox_at("j", "row") +
               ";\n"
               "    let e = -log((f32(r.x >> 8u) + 0.5) * 5.9604644775390625e-8);\n"
               "    st1(sbase + j, ld2(pbase + j) / e);\n"
               "  }\n"
               "  storageBarrier();\n"
               "  workgroupBarrier();\n"
               "  for (var q = 0u; q < ns; q = q + 1u) {\n"
               "    var best = -2.0; var bi = 0xffffffffu;\n"
               "    for (var j = lid; j < nc; j = j + 256u) {\n"
               "      let v = ld1(sbase + j);\n"
               "      if (v > best) { best = v; bi = j; }\n"
               "    }\n"
               "    sh[lid] = best; shi[lid] = bi;\n"
               "    workgroupBarrier();\n"
               "    for (var d = 128u; d > 0u; d = d / 2u) {\n"
               "      if (lid < d) {\n"
               "        let ov = sh[lid + d]; let oi = shi[lid + d];\n"
               "        if (ov > sh[lid] || (ov == sh[lid] && oi < shi[lid])) { sh[lid] = ov; shi[lid] = oi; }\n"
               "      }\n"
               "      workgroupBarrier();\n"
               "    }\n"
               "    let pick = shi[0];\n"
               "    if (lid == 0u) { st0(obase + q, vec2<u32>(pick, 0u)); st1(sbase + pick, -1.0); }\n"
               "    storageBarrier();\n"
               "    workgroupBarrier();\n"
               "  }\n";
    }
    s << "}\n";
    return s.str();
  });
  if (!out.is_same(result)) result.copy_(out);
  return result;
}

at::Tensor multinomial(const at::Tensor& self, int64_t n_sample, bool replacement, Gen gen) {
  at::Tensor result = at::empty({0}, self.options().dtype(at::kLong));
  multinomial_out(self, n_sample, replacement, std::move(gen), result);
  return result;
}

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("uniform_", TORCH_FN(at::native::uniform_));
  m.impl("normal_", TORCH_FN(at::native::normal_));
  m.impl("normal.Tensor_float", TORCH_FN(normal_tf));
  m.impl("normal.float_Tensor", TORCH_FN(normal_ft));
  m.impl("normal.Tensor_Tensor", TORCH_FN(normal_tt));
  m.impl("normal.Tensor_float_out", TORCH_FN(normal_tf_out));
  m.impl("normal.float_Tensor_out", TORCH_FN(normal_ft_out));
  m.impl("normal.Tensor_Tensor_out", TORCH_FN(normal_tt_out));
  m.impl("random_", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, Gen)>(at::native::random_)));
  m.impl("random_.to", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, int64_t, Gen)>(at::native::random_)));
  m.impl(
      "random_.from",
      TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, int64_t, std::optional<int64_t>, Gen)>(at::native::random_)));
  m.impl("bernoulli_.Tensor",
         TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, const at::Tensor&, Gen)>(at::native::bernoulli_)));
  m.impl("bernoulli_.float", TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, double, Gen)>(at::native::bernoulli_)));
  m.impl("bernoulli.out", TORCH_FN(at::native::bernoulli_out));
  m.impl("exponential_", TORCH_FN(at::native::exponential_));
  m.impl("geometric_", TORCH_FN(at::native::geometric_));
  m.impl("log_normal_", TORCH_FN(at::native::log_normal_));
  m.impl("cauchy_", TORCH_FN(at::native::cauchy_));
  m.impl("native_dropout", TORCH_FN(native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(native_dropout_backward));
  m.impl("randperm.generator_out", TORCH_FN(randperm_out));
  WEBGPU_IMPL_OUT(m, "multinomial", "out", multinomial);
}

}  // namespace
}  // namespace webgpu::ops
