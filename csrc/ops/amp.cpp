// GradScaler's two device ops, with CUDA's semantics and no host synchronisation (nothing here reads
// a tensor back; the values stay on the device and later ops read them there):
//
// _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale): every element of every
// grad is widened to float32; a non-finite one stores 1.0 into found_inf (never 0: clearing it is the
// caller's job); the element becomes x * inv_scale (x itself when inv_scale == 1), rounded once to
// the grad's dtype. float32, float16 and bfloat16 grads, mixed in one list; a grad that is dense in
// any order is done in place over its storage range, any other strided one through a contiguous copy
// written back.
//
// _amp_update_scale_(scale, growth_tracker, found_inf, growth, backoff, interval): found_inf != 0
// (NaN counts) multiplies the scale by backoff and zeroes the tracker; otherwise the tracker counts
// one more success and, at `interval`, the scale is multiplied by growth (kept only if finite) and the
// tracker restarts at 0. CUDA multiplies the float scale by the *double* factor and rounds the double
// product to float; WGSL has no f64, so the kernel forms the exact 77-bit product of the two
// significands in u32 limbs and rounds it twice, to 53 bits and then to float32 (subnormal results
// included), bit for bit what CUDA and CPU store for any factor, not only 2 and 0.5.
//
// webgpu::_amp_inv_scale(scale) -> float32 1/scale, correctly rounded: GradScaler.unscale_ computes
// inv_scale as scale.double().reciprocal().float(), and webgpu has no float64; the reciprocal taken
// through a double and rounded to float is the correctly rounded float reciprocal, which the kernel
// computes by long division of the significands (WGSL's 1.0 / x may be off by 2.5 ulp).
// torch_webgpu/_integration.py routes that expression here for webgpu scalers.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <torch/library.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

const char* kMain =
    "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
    " @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
    "  let i = linear_id(wid, nwg, lid, 256u);\n";

bool on_webgpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// One grad whose elements occupy exactly [storage_offset, storage_offset + numel) of its storage.
void unscale_range(const at::Tensor& t, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  Kernel k("amp_unscale");
  k.out(t, CT::F32);
  k.out(found_inf, CT::F32);
  k.in(inv_scale, CT::F32);
  k.param_index("n", t.numel());
  k.param_index("x_off", t.storage_offset());
  k.param_index("found_off", found_inf.storage_offset());
  k.param_index("inv_off", inv_scale.storage_offset());
  k.launch(grid(t.numel()), [] {
    // ld0 widens exactly (f16/bf16 infinities and NaNs stay non-finite), so the test is on the f32
    // bits. Every invocation that finds one stores the same 1.0: a benign race, as on CUDA.
    return kernel::library("per_element") +
           "fn run(i: u32) {\n"
           "  let x = ld0(P.x_off + i);\n"
           "  if ((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u) { st1(P.found_off, 1.0); }\n"
           "  let s = ld2(P.inv_off);\n"
           "  if (s != 1.0) { st0(P.x_off + i, x * s); }\n}\n";
  });
}

void amp_check_and_unscale(at::TensorList grads, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  if (grads.empty()) return;
  TORCH_CHECK(on_webgpu(inv_scale), "inv_scale must be a webgpu tensor, got one on ", inv_scale.device(), ".");
  TORCH_CHECK(on_webgpu(found_inf), "found_inf must be a webgpu tensor, got one on ", found_inf.device(), ".");
  TORCH_CHECK(inv_scale.numel() == 1, "inv_scale must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(inv_scale.scalar_type() == at::kFloat, "inv_scale must be a float tensor.");
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat, "found_inf must be a float tensor.");
  TORCH_CHECK(inv_scale.device() == found_inf.device(), "inv_scale and found_inf must be on the same device, got ",
              inv_scale.device(), " and ", found_inf.device(), ".");
  // Checked all first, as CUDA does, so a bad list changes nothing.
  for (const at::Tensor& t : grads) {
    TORCH_CHECK(on_webgpu(t), "one of scaled_grads was not a webgpu tensor (got one on ", t.device(), ").");
    TORCH_CHECK(t.device() == found_inf.device(), "scaled_grads must be on the same device as found_inf (",
                found_inf.device(), "), got one on ", t.device(), ".");
    TORCH_CHECK(t.layout() == at::kStrided, "one of scaled_grads was not a strided tensor.");
    const at::ScalarType dt = t.scalar_type();
    TORCH_CHECK(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16,
                "_amp_foreach_non_finite_check_and_unscale_: scaled_grads must be float32, float16 or bfloat16, "
                "got ",
                dt, ".");
    TORCH_CHECK(at::has_internal_overlap(t) != at::MemOverlap::Yes,
                "_amp_foreach_non_finite_check_and_unscale_: one of scaled_grads has elements that refer to "
                "a single memory location; clone it first.");
  }
  for (const at::Tensor& t : grads) {
    if (t.numel() == 0) continue;
    if (t.is_non_overlapping_and_dense()) {
      unscale_range(t, found_inf, inv_scale);
    } else {
      at::Tensor c = t.contiguous();
      unscale_range(c, found_inf, inv_scale);
      const_cast<at::Tensor&>(t).copy_(c);
    }
  }
}

// A double factor as the kernel takes it: class (0 zero, 1 finite, 2 infinite, 3 NaN), sign, and for a
// finite one its 53-bit significand (hi: bits 32..52, lo: bits 0..31) and exponent, value m * 2^e:
// five words appended to `words`.
void factor_words(std::vector<uint32_t>& words, double f) {
  uint32_t cls = 1, hi = 0, lo = 0;
  int32_t e = 0;
  if (std::isnan(f))
    cls = 3;
  else if (std::isinf(f))
    cls = 2;
  else if (f == 0.0)
    cls = 0;
  else {
    int ex = 0;
    const double m = std::frexp(std::fabs(f), &ex);  // [0.5, 1): exact, subnormals normalised
    const uint64_t mf = uint64_t(std::ldexp(m, 53));
    hi = uint32_t(mf >> 32);
    lo = uint32_t(mf);
    e = ex - 53;
  }
  words.insert(words.end(), {cls, std::signbit(f) ? 1u : 0u, hi, lo, uint32_t(e)});
}

// float32 bits * double factor -> the float32 bits of float(double(s) * f) (round to nearest even at
// both steps), as CUDA computes (*current_scale) * factor.
const char* kMulF32F64 = R"(
fn w3(x: vec3<u32>, i: u32) -> u32 {
  if (i == 0u) { return x.x; }
  if (i == 1u) { return x.y; }
  if (i == 2u) { return x.z; }
  return 0u;
}
fn shr3(x: vec3<u32>, k: u32) -> vec3<u32> {
  let q = k / 32u; let o = k % 32u;
  var r = vec3<u32>(0u);
  for (var i = 0u; i < 3u; i++) {
    var v = w3(x, i + q) >> o;
    if (o != 0u) { v = v | (w3(x, i + q + 1u) << (32u - o)); }
    r[i] = v;
  }
  return r;
}
fn any_below3(x: vec3<u32>, k: u32) -> bool {
  var acc = 0u;
  for (var i = 0u; i < 3u; i++) {
    let base = 32u * i;
    if (k >= base + 32u) { acc = acc | w3(x, i); }
    else if (k > base) { acc = acc | (w3(x, i) & ((1u << (k - base)) - 1u)); }
  }
  return acc != 0u;
}
// x >> k rounded to nearest, ties to even.
fn rne3(x: vec3<u32>, k: u32) -> vec3<u32> {
  if (k == 0u) { return x; }
  if (k > 96u) { return vec3<u32>(0u); }
  var q = shr3(x, k);
  let g = (w3(x, (k - 1u) / 32u) >> ((k - 1u) % 32u)) & 1u;
  if (g == 1u && (any_below3(x, k - 1u) || (q.x & 1u) == 1u)) {
    q.x = q.x + 1u;
    if (q.x == 0u) { q.y = q.y + 1u; if (q.y == 0u) { q.z = q.z + 1u; } }
  }
  return q;
}
fn lead3(x: vec3<u32>) -> i32 {
  if (x.z != 0u) { return 64 + i32(firstLeadingBit(x.z)); }
  if (x.y != 0u) { return 32 + i32(firstLeadingBit(x.y)); }
  return i32(firstLeadingBit(x.x));
}
// f: class, sign, significand hi/lo, exponent at P_factors(p) .. P_factors(p + 4u).
fn mul_f32_f64(sb: u32, p: u32) -> u32 {
  let fcls = P_factors(p); let fsign = P_factors(p + 1u);
  let sign = (sb & 0x80000000u) ^ (fsign << 31u);
  let ex = (sb >> 23u) & 0xffu; let frac = sb & 0x7fffffu;
  var scls = 1u;
  if (ex == 255u) { scls = select(3u, 2u, frac == 0u); } else if (ex == 0u && frac == 0u) { scls = 0u; }
  if (scls == 3u) { return sb | 0x00400000u; }
  if (fcls == 3u) { return 0x7fc00000u; }
  if ((scls == 0u && fcls == 2u) || (scls == 2u && fcls == 0u)) { return 0xffc00000u; }
  if (scls == 2u || fcls == 2u) { return sign | 0x7f800000u; }
  if (scls == 0u || fcls == 0u) { return sign; }
  var ms = frac; var es = i32(ex) - 150;
  if (ex == 0u) {
    let sh = 23u - firstLeadingBit(frac);
    ms = frac << sh; es = -149 - i32(sh);
  } else { ms = frac | 0x800000u; }
  // The exact product of the significands (24 x 53 bits) in 16-bit limbs.
  var a = array<u32, 2>(ms & 0xffffu, ms >> 16u);
  var m = array<u32, 4>(P_factors(p + 3u) & 0xffffu, P_factors(p + 3u) >> 16u, P_factors(p + 2u) & 0xffffu,
                        P_factors(p + 2u) >> 16u);
  var r = array<u32, 7>(0u, 0u, 0u, 0u, 0u, 0u, 0u);
  for (var x = 0u; x < 2u; x++) {
    for (var y = 0u; y < 4u; y++) {
      let t = a[x] * m[y];
      r[x + y] = r[x + y] + (t & 0xffffu);
      r[x + y + 1u] = r[x + y + 1u] + (t >> 16u);
    }
  }
  for (var x = 0u; x < 6u; x++) { r[x + 1u] = r[x + 1u] + (r[x] >> 16u); r[x] = r[x] & 0xffffu; }
  let prod = vec3<u32>(r[0] | (r[1] << 16u), r[2] | (r[3] << 16u), r[4] | (r[5] << 16u));
  // Round to a double's 53 bits, then to float32's 24 (or to the subnormal quantum 2^-149).
  let k1 = u32(lead3(prod) - 52);
  let D = rne3(prod, k1);
  let ed = i32(k1) + es + bitcast<i32>(P_factors(p + 4u));
  let ld = lead3(D);
  if (ld + ed > 127) { return sign | 0x7f800000u; }
  if (ld + ed >= -126) {
    let k2 = u32(ld - 23);
    var M = rne3(D, k2).x;
    var e = ed + i32(k2) + 23;
    if ((M >> 24u) != 0u) { M = M >> 1u; e = e + 1; }
    if (e > 127) { return sign | 0x7f800000u; }
    return sign | (u32(e + 127) << 23u) | (M & 0x7fffffu);
  }
  let k3 = -149 - ed;
  if (k3 > 96) { return sign; }
  return sign | rne3(D, u32(k3)).x;
}
)";

at::Tensor& amp_update_scale(at::Tensor& scale, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                             double growth_factor, double backoff_factor, int64_t growth_interval) {
  TORCH_CHECK(on_webgpu(growth_tracker), "growth_tracker must be a webgpu tensor, got one on ", growth_tracker.device(),
              ".");
  TORCH_CHECK(on_webgpu(scale), "current_scale must be a webgpu tensor, got one on ", scale.device(), ".");
  TORCH_CHECK(on_webgpu(found_inf), "found_inf must be a webgpu tensor, got one on ", found_inf.device(), ".");
  TORCH_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  TORCH_CHECK(scale.numel() == 1, "current_scale must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(growth_tracker.scalar_type() == at::kInt, "growth_tracker must be an int tensor.");
  TORCH_CHECK(scale.scalar_type() == at::kFloat, "current_scale must be a float tensor.");
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat, "found_inf must be a float tensor.");
  TORCH_CHECK(growth_tracker.device() == scale.device() && found_inf.device() == scale.device(),
              "_amp_update_scale_: current_scale, growth_tracker and found_inf must be on the same device, got ",
              scale.device(), ", ", growth_tracker.device(), " and ", found_inf.device(), ".");
  Kernel k("amp_update_scale");
  k.out(scale, CT::RAW);
  k.out(growth_tracker, CT::RAW);
  k.in(found_inf, CT::RAW);
  k.param_index("scale_off", scale.storage_offset());
  k.param_index("tracker_off", growth_tracker.storage_offset());
  k.param_index("found_off", found_inf.storage_offset());
  k.param_i32("interval", int32_t(growth_interval));  // CUDA's kernel takes it as an int
  std::vector<uint32_t> factors;  // growth at 0, backoff at 5
  factor_words(factors, growth_factor);
  factor_words(factors, backoff_factor);
  k.param_array("factors", factors);
  k.launch(1, [] {
    return std::string(kMulF32F64) + kMain +
           "  if (i != 0u) { return; }\n"
           "  let scale = ld0(P.scale_off);\n"
           "  if ((ld2(P.found_off) & 0x7fffffffu) != 0u) {\n"  // found_inf != 0.0, NaN included
           "    st0(P.scale_off, mul_f32_f64(scale, 5u));\n"
           "    st1(P.tracker_off, 0u);\n"
           "  } else {\n"
           "    let successful = bitcast<i32>(ld1(P.tracker_off)) + 1i;\n"
           "    if (successful == P.interval) {\n"
           "      let ns = mul_f32_f64(scale, 0u);\n"
           "      if ((ns & 0x7f800000u) != 0x7f800000u) { st0(P.scale_off, ns); }\n"
           "      st1(P.tracker_off, 0u);\n"
           "    } else {\n"
           "      st1(P.tracker_off, bitcast<u32>(successful));\n"
           "    }\n"
           "  }\n}\n";
  });
  return scale;
}

// The correctly rounded float32 reciprocal of a float32, from its bits.
const char* kRecipF32 = R"(
fn round_shr(q: u32, d: u32, sticky: bool) -> u32 {
  var k = q >> d;
  let g = (q >> (d - 1u)) & 1u;
  let st = sticky || (q & ((1u << (d - 1u)) - 1u)) != 0u;
  if (g == 1u && (st || (k & 1u) == 1u)) { k = k + 1u; }
  return k;
}
fn recip_f32(sb: u32) -> u32 {
  let sign = sb & 0x80000000u;
  let ex = (sb >> 23u) & 0xffu; let frac = sb & 0x7fffffu;
  if (ex == 255u) { return select(sign, sb | 0x00400000u, frac != 0u); }
  if (ex == 0u && frac == 0u) { return sign | 0x7f800000u; }
  var mx = frac | 0x800000u; var e = i32(ex) - 127;
  if (ex == 0u) { let sh = 23u - firstLeadingBit(frac); mx = frac << sh; e = -126 - i32(sh); }
  // 2^23 / mx to 27 bits (weights 2^0 .. 2^-26) by long division, and whether a remainder is left.
  var rem = 0x800000u; var q = 0u;
  for (var i = 0u; i < 27u; i++) {
    q = q << 1u;
    if (rem >= mx) { rem = rem - mx; q = q | 1u; }
    rem = rem << 1u;
  }
  let sticky = rem != 0u;
  let L = i32(firstLeadingBit(q));
  var E = L - 26 - e;  // 1/x = q * 2^(-26 - e)
  if (E > 127) { return sign | 0x7f800000u; }
  if (E >= -126) {
    var k = round_shr(q, u32(L - 23), sticky);
    if (k == 0x1000000u) { k = k >> 1u; E = E + 1; }
    if (E > 127) { return sign | 0x7f800000u; }
    return sign | (u32(E + 127) << 23u) | (k & 0x7fffffu);
  }
  let d = e - 123;  // to units of 2^-149
  if (d > 31) { return sign; }
  return sign | round_shr(q, u32(d), sticky);
}
)";

at::Tensor amp_inv_scale(const at::Tensor& scale) {
  TORCH_CHECK(on_webgpu(scale), "_amp_inv_scale: scale must be a webgpu tensor, got one on ", scale.device(), ".");
  TORCH_CHECK(scale.scalar_type() == at::kFloat, "_amp_inv_scale: scale must be a float tensor.");
  TORCH_CHECK(scale.numel() == 1, "_amp_inv_scale: scale must be a 1-element tensor.");
  at::Tensor out = at::empty(scale.sizes(), scale.options());
  Kernel k("amp_inv_scale");
  k.in(scale, CT::RAW);
  k.out(out, CT::RAW);
  k.param_index("scale_off", scale.storage_offset());
  k.launch(1, [] {
    return std::string(kRecipF32) + kMain + "  if (i != 0u) { return; }\n  st1(0u, recip_f32(ld0(P.scale_off)));\n}\n";
  });
  return out;
}

TORCH_LIBRARY_FRAGMENT(webgpu, m) { m.def("_amp_inv_scale(Tensor scale) -> Tensor"); }

TORCH_LIBRARY_IMPL(webgpu, PrivateUse1, m) { m.impl("_amp_inv_scale", TORCH_FN(amp_inv_scale)); }

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", TORCH_FN(amp_check_and_unscale));
  m.impl("_amp_update_scale_", TORCH_FN(amp_update_scale));
}

}  // namespace
}  // namespace webgpu::ops
