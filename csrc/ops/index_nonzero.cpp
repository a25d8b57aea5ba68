// nonzero (and through it argwhere, torch.where(cond), x[mask], masked_select): a count pass per
// block of 1024 elements, the per-block counts read back (nonzero's output size is data-dependent:
// it synchronises on every backend), an exclusive scan on the host, and a write pass in which each
// workgroup scans its block's flags in shared memory and writes the coordinates in row-major order.
// An input past the binding limit goes by halves (nonzero_parts).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <algorithm>
#include <sstream>

#include "kernel/device.h"
#include "kernel/kernel.h"
#include "ops/common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

constexpr uint32_t kPer = 4, kBlock = kWG * kPer;

std::string nz_test(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "(r & 0x7fffffffu) != 0u";
    case at::kHalf:
    case at::kBFloat16: return "(r & 0x7fffu) != 0u";
    case at::kLong: return "(r.x | r.y) != 0u";
    default: return "r != 0u";
  }
}

// Shared WGSL: element offset of linear index li over the input's shape, and its flag.
std::string nz_common(const at::Tensor& x, int R) {
  std::ostringstream s;
  s << "var<workgroup> sh: array<u32, " << kWG << ">;\n";
  s << "fn flag(li: u32) -> u32 {\n  if (li >= P.n) { return 0u; }\n  var rem = li; var o = P.x_off;\n";
  for (int d = R - 1; d >= 0; --d) {
    const std::string D = std::to_string(d) + "u";
    s << "  { let c = " << (d == 0 ? std::string("rem") : "rem % P_sizes(" + D + ")") << ";"
      << (d == 0 ? "" : " rem = rem / P_sizes(" + D + ");") << " o = o + c * P_strides(" << D << "); }\n";
  }
  s << "  let r = ld0(o);\n  return select(0u, 1u, " << nz_test(x.scalar_type()) << ");\n}\n";
  return s.str();
}

// n elements, nblocks, x_off, the input's sizes (dim 0 is never read) and strides.
void nz_params(Kernel& k, const at::Tensor& x, int64_t nblocks) {
  k.param_index("n", x.numel());
  k.param_index("nblocks", nblocks);
  k.param_index("x_off", x.storage_offset());
  if (x.dim() > 1) k.param_array("sizes", x.sizes().vec());
  if (x.dim() > 0) k.param_array("strides", x.strides().vec());
}

const char* kEntry =
    "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>, "
    "@builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
    "  let b = linear_id(wid, nwg, 0u, 1u);\n";

at::Tensor nonzero_fn(const at::Tensor& self);

// Whether one count pass and one write pass serve x: it fits one binding, and so would its
// coordinates were every element non-zero.
bool nonzero_fits(const at::Tensor& x) {
  const uint64_t cap = std::min<uint64_t>(kernel::device_info(x).max_binding, 0xfffffff0ull) - 4096;  // window slack
  return kernel::fits_binding(x) && uint64_t(x.numel()) * uint64_t(std::max<int64_t>(x.dim(), 1)) * 8 <= cap;
}

// nonzero of an input past the binding limit: halves along its first dim longer than one, each
// done separately (recursively), their coordinates shifted along that dim. The halves come in
// row-major order (the dims before it have size 1), so the parts concatenate to nonzero's order.
void nonzero_parts(const at::Tensor& x, std::vector<at::Tensor>& parts) {
  if (nonzero_fits(x)) {
    parts.push_back(nonzero_fn(x));
    return;
  }
  int64_t d = 0;
  while (x.size(d) == 1) ++d;  // x has more than one element: some dim is longer than one
  const int64_t h = x.size(d) / 2;
  nonzero_parts(x.narrow(d, 0, h), parts);
  const size_t first = parts.size();
  nonzero_parts(x.narrow(d, h, x.size(d) - h), parts);
  for (size_t i = first; i < parts.size(); ++i)
    if (parts[i].size(0) > 0) parts[i].select(1, d).add_(h);
}

at::Tensor& nonzero_out_fn(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero: Expected out tensor to have scalar type Long but got scalar type", out.scalar_type());
  TORCH_CHECK(self.numel() < std::numeric_limits<int32_t>::max(),
              "nonzero is not supported for tensors with more than INT_MAX elements, file a support request");
  TORCH_CHECK(self.dim() <= 25, "nonzero: input has ", self.dim(), " dims, the webgpu kernel handles at most 25");
  if (self.is_complex()) return nonzero_out_fn(self.to(at::kBool), out);  // non-zero when either part is
  // float64: the float64 comparison (NaN and subnormals are non-zero, -0.0 is zero, as on CPU)
  if (self.scalar_type() == at::kDouble) return nonzero_out_fn(at::ne(self, 0), out);
  check_supported_dtype(self.scalar_type(), "nonzero");
  const int R = int(self.dim());
  const int64_t n = self.numel();
  if (n == 0) {
    at::native::resize_output(out, {0, R});
    return out;
  }
  if (!nonzero_fits(self)) {
    std::vector<at::Tensor> parts;
    nonzero_parts(self, parts);
    int64_t total = 0;
    for (const auto& t : parts) total += t.size(0);
    at::native::resize_output(out, {total, R});
    int64_t row = 0;
    for (const auto& t : parts) {
      if (t.size(0) > 0) out.narrow(0, row, t.size(0)).copy_(t);
      row += t.size(0);
    }
    return out;
  }
  const int64_t nblocks = int64_t(grid(n, kBlock));
  at::Tensor counts = at::empty({nblocks}, self.options().dtype(at::kInt));
  {
    Kernel k("nonzero_count:" + std::to_string(R));
    k.in(self, CT::RAW);
    k.out(counts, CT::I32);
    nz_params(k, self, nblocks);
    k.launch(nblocks, [&]() {
      std::ostringstream s;
      s << nz_common(self, R) << kEntry << "  var c = 0u;\n  for (var j = 0u; j < " << kPer
        << "u; j = j + 1u) { c = c + flag((b * " << kPer << "u + j) * " << kWG << "u + lid); }\n"
        << "  sh[lid] = c;\n  workgroupBarrier();\n"
        << "  for (var s = " << kWG / 2
        << "u; s > 0u; s = s >> 1u) {\n    if (lid < s) { sh[lid] = sh[lid] + sh[lid + s]; }\n"
        << "    workgroupBarrier();\n  }\n  if (lid == 0u && b < P.nblocks) { st1(b, bitcast<i32>(sh[0])); }\n}\n";
      return s.str();
    });
  }
  // The data-dependent size: one readback (nonzero synchronises on every backend).
  at::Tensor hc = counts.cpu();
  at::Tensor hoff = at::empty({nblocks}, hc.options());
  const int32_t* c = hc.const_data_ptr<int32_t>();
  int32_t* o = hoff.data_ptr<int32_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < nblocks; ++i) {
    o[i] = int32_t(total);
    total += c[i];
  }
  at::native::resize_output(out, {total, R});
  if (total == 0 || R == 0) return out;
  at::Tensor result = out.is_contiguous() ? out : at::empty({total, R}, out.options());
  at::Tensor offsets = hoff.to(self.device());
  {
    Kernel k("nonzero_write:" + std::to_string(R));
    k.in(self, CT::RAW);
    k.in(offsets, CT::I32);
    k.out(result, CT::I64);
    nz_params(k, self, nblocks);
    k.param_index("out_off", result.storage_offset());
    TORCH_CHECK(total * R <= int64_t(UINT32_MAX), "webgpu: nonzero: output size (", total * R,
                ") does not fit the 32-bit indexing of webgpu kernels");
    k.launch(nblocks, [&]() {
      std::ostringstream s;
      s << nz_common(self, R) << kEntry << "  if (b >= P.nblocks) { return; }\n"
        << "  var base = bitcast<u32>(ld1(b));\n"
        << "  for (var j = 0u; j < " << kPer << "u; j = j + 1u) {\n"
        << "    let li = (b * " << kPer << "u + j) * " << kWG << "u + lid;\n    let f = flag(li);\n"
        << "    sh[lid] = f;\n    workgroupBarrier();\n"
        << "    for (var s = 1u; s < " << kWG << "u; s = s << 1u) {\n"
        << "      var v = sh[lid];\n      if (lid >= s) { v = v + sh[lid - s]; }\n"
        << "      workgroupBarrier();\n      sh[lid] = v;\n      workgroupBarrier();\n    }\n"
        << "    let incl = sh[lid];\n    let tot = sh[" << kWG - 1 << "u];\n"
        << "    if (f == 1u) {\n      let row = P.out_off + (base + incl - 1u) * " << R << "u;\n"
        << "      var rem = li;\n";
      for (int d = R - 1; d >= 0; --d) {
        const std::string D = std::to_string(d) + "u";
        s << "      { let c = " << (d == 0 ? std::string("rem") : "rem % P_sizes(" + D + ")") << ";"
          << (d == 0 ? "" : " rem = rem / P_sizes(" + D + ");") << " st2(row + " << d << "u, vec2<u32>(c, 0u)); }\n";
      }
      s << "    }\n    base = base + tot;\n    workgroupBarrier();\n  }\n}\n";
      return s.str();
    });
  }
  if (!result.is_same(out)) out.copy_(result);
  return out;
}

at::Tensor nonzero_fn(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return nonzero_out_fn(self, out);
}

// nonzero padded or cut to `size` rows, the rest filled with fill_value (no host sync on CUDA; here
// nonzero's count readback happens anyway).
at::Tensor nonzero_static_fn(const at::Tensor& self, c10::SymInt size_s, int64_t fill_value) {
  const int64_t size = size_s.expect_int();
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  at::Tensor nz = nonzero_fn(self);
  at::Tensor out = at::full({size, self.dim()}, fill_value, self.options().dtype(at::kLong));
  const int64_t n = std::min<int64_t>(size, nz.size(0));
  if (n > 0 && self.dim() > 0) out.narrow(0, 0, n).copy_(nz.narrow(0, 0, n));
  return out;
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("nonzero", TORCH_FN(nonzero_fn));
  m.impl("nonzero.out", TORCH_FN(nonzero_out_fn));
  m.impl("nonzero_static", TORCH_FN(nonzero_static_fn));
}

}  // namespace webgpu::ops
