// Shape-building ops as native kernels: cat (batched: several inputs per dispatch, any dim, dtype
// promotion, out=), flip and roll (and through them rot90, fliplr, flipud and their gradients),
// tril/triu, trace, one_hot. stack/hstack/vstack/dstack/column_stack/tile/repeat/diag_embed/... are
// ATen composites over these and views. Kernels: wgsl/shape.wgsl.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/NativeFunctions.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorShape.h>
#include <ATen/ops/cat_native.h>
#include <ATen/ops/tril_native.h>
#include <ATen/ops/triu_native.h>
#include <torch/library.h>

#include <cstring>
#include <map>

#include "ops/common.h"
#include "kernel/kernel.h"
#include "ops/shape_ops.h"
#include "ops/structured.h"
#include "runtime/pipeline.h"

namespace webgpu::ops {
namespace shape {

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

uint64_t groups_for(int64_t n) { return uint64_t((n + 255) / 256); }

// The value's bits in dtype t, as a CPU cast makes them.
std::pair<uint32_t, uint32_t> raw_bits(const c10::Scalar& v, at::ScalarType t) {
  at::Tensor h = at::scalar_tensor(v, at::TensorOptions().dtype(t));
  uint64_t u = 0;
  std::memcpy(&u, h.data_ptr(), h.element_size());
  return {uint32_t(u), uint32_t(u >> 32)};
}

}  // namespace

std::string shape_wgsl(const std::string& section, const std::vector<std::pair<std::string, std::string>>& subst) {
  const std::string& src = rt::wgsl_source("shape");
  const std::string tag = "//@@ " + section + "\n";
  size_t b = src.find(tag);
  TORCH_CHECK(b != std::string::npos, "webgpu: internal: no shape.wgsl section ", section);
  b += tag.size();
  size_t e = src.find("//@@ ", b);
  std::string s = src.substr(b, e == std::string::npos ? std::string::npos : e - b);
  for (const auto& [k, v] : subst) s = replace_all(s, "{{" + k + "}}", v);
  return s;
}

bool word_mode(const at::Tensor& out) {
  const int64_t isz = out.element_size();
  if (isz >= 4 || !out.is_contiguous()) return false;
  const int64_t per = 4 / isz, off = out.storage_offset(), n = out.numel();
  return off % per == 0 && ((off + n) % per == 0 || int64_t(out.storage().nbytes()) <= (off + n) * isz);
}

void launch_elem(Kernel& k, const at::Tensor& out, int out_operand, bool word, const std::string& value_type,
                 const std::function<std::string()>& elem) {
  const int64_t per = word ? 4 / out.element_size() : 1;
  k.launch(groups_for((out.numel() + per - 1) / per), [&] {
    const std::string o = std::to_string(out_operand);
    std::string main = word ? shape_wgsl("main_word", {{"OUT", o},
                                                      {"PER", std::to_string(per)},
                                                      {"MASK", per == 4 ? "0xffu" : "0xffffu"},
                                                      {"WIDTH", per == 4 ? "8" : "16"}})
                            : shape_wgsl("main_element", {{"OUT", o}});
    return replace_all(elem(), "{{T}}", value_type) + main;
  });
}

void remap(const at::Tensor& out, const at::Tensor& in, std::vector<RDim> dims, const char* name,
           const c10::Scalar& pad_value) {
  TORCH_CHECK(out.scalar_type() == in.scalar_type(), "webgpu: internal: ", name, ": dtypes differ");
  if (out.numel() == 0) return;
  // Drop size-1 dims that always read coordinate 0; merge adjacent identity (or both-flipped) dims
  // laid out contiguously in both tensors.
  std::vector<RDim> kept;
  for (const RDim& d : dims) {
    if (d.osize == 1 && d.isize == 1 && (d.mode != Mode::Pad || d.a == 0)) continue;
    if (!kept.empty()) {
      RDim& p = kept.back();
      const bool same = p.mode == d.mode && (d.mode == Mode::Ident || d.mode == Mode::Flip) &&
                        p.osize == p.isize && d.osize == d.isize;
      if (same && p.ostride == d.ostride * d.osize && p.istride == d.istride * d.isize) {
        p.osize *= d.osize;
        p.isize = p.osize;
        p.ostride = d.ostride;
        p.istride = d.istride;
        continue;
      }
    }
    kept.push_back(d);
  }
  if (kept.empty()) kept.push_back({1, 1, 1, 1, Mode::Ident, 0});
  TORCH_CHECK(kept.size() <= 11, "webgpu: ", name, ": at most 11 non-mergeable dims are supported, got ",
              kept.size());
  std::string modes;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) modes += char(it->mode);
  const bool word = word_mode(out);
  Kernel k(std::string("remap:") + modes + (word ? ":w" : ""));
  k.in(in, CT::RAW);
  k.out(out, CT::RAW);
  k.param_index(out.numel(), "element count");
  k.param_index(out.storage_offset(), "storage offset");
  k.param_index(in.storage_offset(), "storage offset");
  auto bits = raw_bits(pad_value, out.scalar_type());
  k.param(bits.first);
  k.param(bits.second);
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    k.param_index(it->osize, "size");
    k.param_index(it->ostride, "stride");
    k.param_index(it->isize, "size");
    k.param_index(it->istride, "stride");
    TORCH_CHECK(it->a >= INT32_MIN && it->a <= INT32_MAX, "webgpu: ", name, ": offset ", it->a, " too large");
    k.param_i32(int32_t(it->a));
  }
  const bool wide = out.element_size() == 8;
  launch_elem(k, out, 1, word, wgsl_value_type(CT::RAW, out.scalar_type()), [&] {
    std::string dimcode;
    for (size_t d = 0; d < modes.size(); ++d) {
      const std::string p = std::to_string(5 + 5 * d);
      auto P = [&](int j) { return "prm(" + std::to_string(5 + 5 * d + j) + "u)"; };
      dimcode += "  {\n    let n = " + P(0) + "; let o = r % n; r = r / n; oe = oe + o * " + P(1) +
                 ";\n    let m = " + P(2) + "; let a = bitcast<i32>(" + P(4) + ");\n";
      switch (Mode(modes[d])) {
        case Mode::Ident: dimcode += "    let c = o;\n"; break;
        case Mode::Flip: dimcode += "    let c = m - 1u - o;\n"; break;
        case Mode::Roll: dimcode += "    let c = (o + u32(a)) % m;\n"; break;
        case Mode::Pad:
          dimcode += "    let ci = i32(o) - a; if (ci < 0 || ci >= i32(m)) { pad = true; }\n"
                     "    let c = u32(clamp(ci, 0, i32(m) - 1));\n";
          break;
        case Mode::Reflect:
          dimcode += "    var ci = i32(o) - a; if (ci < 0) { ci = -ci; }\n"
                     "    if (ci >= i32(m)) { ci = 2 * (i32(m) - 1) - ci; }\n"
                     "    let c = u32(clamp(ci, 0, i32(m) - 1));\n";
          break;
        case Mode::Replicate: dimcode += "    let c = u32(clamp(i32(o) - a, 0, i32(m) - 1));\n"; break;
      }
      dimcode += "    ie = ie + c * " + P(3) + ";\n  }\n";
    }
    return shape_wgsl("remap", {{"DIMS", dimcode},
                                {"PADVALUE", wide ? "vec2<u32>(prm(3u), prm(4u))" : "prm(3u)"}});
  });
}

}  // namespace shape

namespace {

using shape::Mode;
using shape::groups_for;
using shape::RDim;

std::vector<RDim> ident_dims(const at::Tensor& out, const at::Tensor& in) {
  std::vector<RDim> dims;
  for (int64_t d = 0; d < out.dim(); ++d)
    dims.push_back({out.size(d), out.stride(d), in.size(d), in.stride(d), Mode::Ident, 0});
  return dims;
}

// ---- flip, roll ----------------------------------------------------------------------------------

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  check_supported_dtype(self.scalar_type(), "flip");
  const int64_t n = self.dim();
  auto flipped = at::dim_list_to_bitset(dims, n);
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  std::vector<RDim> rd = ident_dims(out, self);
  for (int64_t d = 0; d < n; ++d)
    if (flipped[d] && rd[d].osize > 1) rd[d].mode = Mode::Flip;
  shape::remap(out, self, rd, "flip");
  return out;
}

at::Tensor roll(const at::Tensor& self, c10::SymIntArrayRef shifts_, at::IntArrayRef dims) {
  check_supported_dtype(self.scalar_type(), "roll");
  at::IntArrayRef shifts = C10_AS_INTARRAYREF_SLOW(shifts_);
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    at::Tensor flat = self.flatten();
    return roll(flat, shifts_, {0}).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  std::vector<int64_t> total(std::max<int64_t>(self.dim(), 1), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = at::maybe_wrap_dim(dims[i], self.dim(), /*wrap_scalar=*/false);
    total[d] += shifts[i];
  }
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  if (self.numel() == 0) return out;
  std::vector<RDim> rd = ident_dims(out, self);
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t sz = self.size(d);
    const int64_t s = ((total[d] % sz) + sz) % sz;
    if (s == 0) continue;
    rd[d].mode = Mode::Roll;
    rd[d].a = sz - s;
  }
  shape::remap(out, self, rd, "roll");
  return out;
}

// ---- cat -----------------------------------------------------------------------------------------

// The compute type moving `in` into `out`: raw bits when the dtypes agree.
CT cat_ct(at::ScalarType in, at::ScalarType out) {
  if (in == out) return CT::RAW;
  if (at::isFloatingType(out) || at::isFloatingType(in)) return CT::F32;
  if (out == at::kLong || in == at::kLong) return CT::I64;
  return CT::I32;
}

void cat_kernel(const at::ITensorListRef& tensors, int64_t dim, const at::Tensor& out) {
  check_supported_dtype(out.scalar_type(), "cat");
  struct In {
    at::Tensor t;
    int64_t start;  // along dim, in out
  };
  std::vector<In> ins;
  int64_t pos = 0;
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.device() == out.device(), "Expected all tensors to be on the same device, but found at least two devices, ",
                out.device(), " and ", t.device(), "!");
    if (at::native::cat_should_skip_tensor(t)) continue;
    check_supported_dtype(t.scalar_type(), "cat");
    const int64_t len = t.size(dim);
    if (len > 0) ins.push_back({t, pos});
    pos += len;
  }
  if (out.numel() == 0) return;
  // Dims of the kernel: drop size-1 dims other than `dim`; merge neighbours on the same side of `dim`
  // that are laid out contiguously in out and every input.
  std::vector<int64_t> keep;
  for (int64_t d = 0; d < out.dim(); ++d)
    if (d == dim || out.size(d) != 1) keep.push_back(d);
  std::vector<std::vector<int64_t>> groups;  // each: outermost original dim, ..., innermost
  for (int64_t d : keep) {
    if (!groups.empty() && d != dim && groups.back().back() != dim) {
      const int64_t p = groups.back().back();
      bool ok = out.stride(p) == out.stride(d) * out.size(d);
      for (const In& x : ins) ok = ok && x.t.stride(p) == x.t.stride(d) * x.t.size(d);
      if (ok) {
        groups.back().push_back(d);
        continue;
      }
    }
    groups.push_back({d});
  }
  const int64_t R = int64_t(groups.size());
  int64_t catg = 0;
  for (int64_t g = 0; g < R; ++g)
    if (groups[g].front() == dim) catg = g;
  auto gsize = [&](const at::Tensor& t, int64_t g) {
    int64_t s = 1;
    for (int64_t d : groups[g]) s *= t.size(d);
    return s;
  };
  auto gstride = [&](const at::Tensor& t, int64_t g) { return t.stride(groups[g].back()); };
  // Inputs per dispatch: bounded by the parameter words and the storage bindings.
  const int64_t per_in = 2 + R;
  const int64_t kmax_params = (int64_t(rt::kParamWords) - 2 - 2 * R) / per_in;
  const int64_t kmax_bind = int64_t(gpu_of(out).limits().maxStorageBuffersPerShaderStage) - 1;
  const int64_t kmax = std::min<int64_t>({kmax_params, kmax_bind, 16});
  size_t i = 0;
  while (i < ins.size()) {
    // Grow the chunk while parameters and distinct blocks allow.
    std::vector<rt::Block*> blocks{block_of(out)};
    size_t j = i;
    while (j < ins.size() && int64_t(j - i) < kmax) {
      rt::Block* b = block_of(ins[j].t);
      const bool known = std::find(blocks.begin(), blocks.end(), b) != blocks.end();
      if (!known && int64_t(blocks.size()) > kmax_bind) break;
      if (!known) blocks.push_back(b);
      ++j;
    }
    if (j == i) j = i + 1;
    const int64_t c0 = ins[i].start;
    const int64_t c1 = j < ins.size() ? ins[j].start : out.size(dim);
    at::Tensor dst = out.narrow(dim, c0, c1 - c0);
    if (j - i == 1 || kmax < 2) {
      for (size_t q = i; q < j; ++q) out.narrow(dim, ins[q].start, ins[q].t.size(dim)).copy_(ins[q].t);
      i = j;
      continue;
    }
    const int K = int(j - i);
    bool same = true;
    for (size_t q = i; q < j; ++q) same = same && ins[q].t.scalar_type() == out.scalar_type();
    const bool word = same && shape::word_mode(dst);
    std::string key = "cat:" + std::to_string(R) + ":" + std::to_string(R - 1 - catg) + ":" + std::to_string(K) +
                      (word ? ":w" : "");
    Kernel k(key);
    std::vector<CT> cts;
    CT oct = CT::RAW;
    if (!same) {
      // One compute type for the chunk, wide enough for every conversion.
      oct = CT::I32;
      for (size_t q = i; q < j; ++q) {
        CT c = cat_ct(ins[q].t.scalar_type(), out.scalar_type());
        if (c == CT::F32) oct = CT::F32;
        else if (c == CT::I64 && oct != CT::F32) oct = CT::I64;
      }
      if (at::isFloatingType(out.scalar_type())) oct = CT::F32;
    }
    for (size_t q = i; q < j; ++q) k.in(ins[q].t, oct);
    k.out(dst, oct);
    k.param_index(dst.numel(), "element count");
    k.param_index(dst.storage_offset(), "storage offset");
    for (int64_t g = R - 1; g >= 0; --g) {
      k.param_index(gsize(dst, g), "size");
      k.param_index(gstride(dst, g), "stride");
    }
    for (size_t q = i; q < j; ++q) {
      k.param_index(ins[q].start - c0, "offset");
      k.param_index(ins[q].t.storage_offset(), "storage offset");
      for (int64_t g = R - 1; g >= 0; --g) k.param_index(gsize(ins[q].t, g) == 1 ? 0 : gstride(ins[q].t, g), "stride");
    }
    shape::launch_elem(k, dst, K, word, wgsl_value_type(oct, out.scalar_type()), [&] {
      std::string pick;
      const int64_t cd = R - 1 - catg;
      for (int q = 0; q < K; ++q) {
        const int64_t base = 2 + 2 * R + q * per_in;
        std::string body = "    var ie = prm(" + std::to_string(base + 1) + "u);\n";
        for (int64_t d = 0; d < R; ++d) {
          const std::string coord = d == cd ? "(j - prm(" + std::to_string(base) + "u))" : "c[" + std::to_string(d) + "]";
          body += "    ie = ie + " + coord + " * prm(" + std::to_string(base + 2 + d) + "u);\n";
        }
        body += "    return EV(oe, ld" + std::to_string(q) + "(ie));\n";
        if (q + 1 < K)
          pick += "  if (j < prm(" + std::to_string(base + per_in) + "u)) {\n" + body + "  }\n";
        else
          pick += "  {\n" + body + "  }\n";
      }
      return shape::shape_wgsl("cat", {{"RANK", std::to_string(R)}, {"CATDIM", std::to_string(cd)}, {"PICK", pick}});
    });
    i = j;
  }
}

struct CatOp : at::meta::structured_cat {
  void impl(const at::ITensorListRef& tensors, int64_t dim, int64_t /*valid*/, bool, bool, bool, at::MemoryFormat,
            const at::Tensor& out) {
    cat_kernel(tensors, dim, out);
  }
};

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  structured::Functional<CatOp> op;
  auto pre = op.meta(tensors, dim);
  op.impl(tensors, pre.dim, pre.valid, pre.all_contiguous, pre.all_same_dtype, pre.all_same_sizes_and_stride,
          pre.memory_format, op.out_);
  return std::move(op.out_);
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  structured::Given<CatOp, false> op(out);
  auto pre = op.meta(tensors, dim);
  // CPU's checks: the output may not overlap itself or any input.
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& t : tensors) at::assert_no_overlap(out, t);
  op.impl(tensors, pre.dim, pre.valid, pre.all_contiguous, pre.all_same_dtype, pre.all_same_sizes_and_stride,
          pre.memory_format, op.maybe_get_output(0));
  op.finish();
  return out;
}

// ---- tril / triu ---------------------------------------------------------------------------------

void tri_kernel(const at::Tensor& self, int64_t diagonal, const at::Tensor& out, bool lower) {
  check_supported_dtype(self.scalar_type(), lower ? "tril" : "triu");
  if (out.numel() == 0) return;
  const int64_t rows = self.size(-2), cols = self.size(-1);
  diagonal = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);
  const int64_t R = self.dim();
  const bool word = shape::word_mode(out);
  Kernel k(std::string(lower ? "tril:" : "triu:") + std::to_string(R) + (word ? ":w" : ""));
  k.in(self, CT::RAW);
  k.out(out, CT::RAW);
  k.param_index(out.numel(), "element count");
  k.param_index(out.storage_offset(), "storage offset");
  k.param_index(self.storage_offset(), "storage offset");
  k.param_i32(int32_t(diagonal));
  TORCH_CHECK(4 + 3 * R <= int64_t(rt::kParamWords), "webgpu: ", lower ? "tril" : "triu", ": too many dims (", R, ")");
  for (int64_t d = R - 1; d >= 0; --d) {
    k.param_index(self.size(d), "size");
    k.param_index(out.stride(d), "stride");
    k.param_index(self.stride(d), "stride");
  }
  shape::launch_elem(k, out, 1, word, wgsl_value_type(CT::RAW, out.scalar_type()), [&] {
    return shape::shape_wgsl("tri", {{"RANK", std::to_string(R)},
                                     {"KEEP", lower ? "k <= bitcast<i32>(prm(3u))" : "k >= bitcast<i32>(prm(3u))"},
                                     {"ZERO", out.element_size() == 8 ? "vec2<u32>(0u, 0u)" : "0u"}});
  });
}

struct TrilOp : at::meta::structured_tril {
  void impl(const at::Tensor& self, int64_t diagonal, const at::Tensor& out) { tri_kernel(self, diagonal, out, true); }
};
struct TriuOp : at::meta::structured_triu {
  void impl(const at::Tensor& self, int64_t diagonal, const at::Tensor& out) { tri_kernel(self, diagonal, out, false); }
};

// ---- trace, one_hot ------------------------------------------------------------------------------

at::Tensor trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  const at::ScalarType t = at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong : self.scalar_type();
  return self.diagonal().sum(t);
}

// ATen's composite goes through index_fill_; here it is a copy into the diagonal view.
at::Tensor trace_backward(const at::Tensor& grad, c10::SymIntArrayRef sizes_) {
  at::IntArrayRef sizes = C10_AS_INTARRAYREF_SLOW(sizes_);
  TORCH_CHECK(sizes.size() == 2, "expected matrix input");
  at::Tensor gi = at::zeros(sizes, grad.options());
  at::Tensor d = gi.diagonal();
  if (d.numel() > 0) d.copy_(grad.expand(d.sizes()));
  return gi;
}

at::Tensor one_hot(const at::Tensor& self, int64_t num_classes) {
  TORCH_CHECK(self.dtype() == at::kLong, "one_hot is only applicable to index tensor of type LongTensor.");
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.numel() == 0) {
    TORCH_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return at::empty(shape, self.options());
  }
  TORCH_CHECK(at::amin(self).item().toLong() >= 0, "Class values must be non-negative.");
  if (num_classes == -1) {
    num_classes = at::amax(self).item().toLong() + 1;
  } else {
    TORCH_CHECK(num_classes > at::amax(self).item().toLong(), "Class values must be smaller than num_classes.");
  }
  shape.push_back(num_classes);
  at::Tensor out = at::empty(shape, self.options());
  const int64_t R = self.dim();
  TORCH_CHECK(3 + 2 * R <= int64_t(rt::kParamWords), "webgpu: one_hot: too many dims (", R, ")");
  Kernel k("one_hot:" + std::to_string(R));
  k.in(self, CT::RAW);
  k.out(out, CT::RAW);
  k.param_index(out.numel(), "element count");
  k.param_index(num_classes, "classes");
  k.param_index(self.storage_offset(), "storage offset");
  for (int64_t d = R - 1; d >= 0; --d) {
    k.param_index(self.size(d), "size");
    k.param_index(self.stride(d), "stride");
  }
  k.launch(groups_for(out.numel()), [&] { return shape::shape_wgsl("one_hot", {{"RANK", std::to_string(R)}}); });
  return out;
}

// ---- repeat_interleave(repeats): the index tensor behind every repeat_interleave overload --------

at::Tensor repeat_interleave_tensor(const at::Tensor& repeat, std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeat.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeat.scalar_type() == at::kLong || repeat.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  if (repeat.size(0) == 0) return at::empty_like(repeat, at::MemoryFormat::Contiguous);
  const int64_t n = repeat.size(0);
  at::Tensor cum = at::empty({n + 1}, repeat.options().dtype(at::kInt));
  {
    Kernel k("ri_scan");
    k.in(repeat, CT::I64);
    k.out(cum, CT::RAW);
    k.param_index(n, "repeats");
    k.param_index(repeat.storage_offset(), "storage offset");
    k.param_index(repeat.stride(0), "stride");
    k.launch(1, [&] { return shape::shape_wgsl("ri_scan", {}); });
  }
  // One readback for the total and the checks (CPU checks here too).
  at::Tensor tail = cum.narrow(0, n - 1, 2).cpu();
  const int64_t last = int64_t(uint32_t(tail[0].item<int32_t>()));
  const int32_t flags = tail[1].item<int32_t>();
  TORCH_CHECK(!(flags & 1), "repeats can not be negative");
  TORCH_CHECK(!(flags & 2), "webgpu: repeat_interleave: the repeats sum to more than 2^32 - 1");
  int64_t total = last;
  if (output_size.has_value()) {
    total = output_size->expect_int();
    TORCH_CHECK(total == last, "allocated size does not match required size");
  }
  at::Tensor result = at::empty({total}, repeat.options().memory_format(at::MemoryFormat::Contiguous));
  if (total == 0) return result;
  Kernel k("ri_fill");
  k.in(cum, CT::RAW);
  k.out(result, CT::RAW);
  k.param_index(total, "output size");
  k.param_index(n, "repeats");
  const bool wide = repeat.scalar_type() == at::kLong;
  k.launch(groups_for(total), [&] { return shape::shape_wgsl("ri_fill", {{"VALUE", wide ? "vec2<u32>(lo, 0u)" : "lo"}}); });
  return result;
}

// ---- tril_indices / triu_indices ------------------------------------------------------------------

// Elements of rows [0, r) of the lower triangle with offset k of a rows x cols matrix.
int64_t tril_before(int64_t r, int64_t k, int64_t cols) {
  const int64_t i0 = std::clamp<int64_t>(-k, 0, r);
  const int64_t i1 = std::clamp<int64_t>(cols - k - 1, i0, r);
  const int64_t a = i0 + k + 1, b = i1 + k, cnt = i1 - i0;
  return (cnt > 0 ? (a + b) * cnt / 2 : 0) + (r - i1) * cols;
}

at::Tensor tri_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype_,
                       std::optional<at::Layout> layout, std::optional<at::Device> device,
                       std::optional<bool> pin_memory, bool upper) {
  const char* name = upper ? "triu_indices" : "tril_indices";
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  const at::ScalarType dtype = dtype_.value_or(at::kLong);
  TORCH_CHECK_NOT_IMPLEMENTED(dtype == at::kLong || dtype == at::kInt, "\"", name, "\" not implemented for '",
                              c10::toString(dtype), "'");
  // Clamp the offset to where it stops mattering, so the kernel's arithmetic stays in 32 bits.
  const int64_t k = std::clamp<int64_t>(upper ? offset - 1 : offset, -row - 1, col + 1);
  const int64_t n = upper ? row * col - tril_before(row, k, col) : tril_before(row, k, col);
  at::Tensor out = at::empty({2, n}, at::TensorOptions().dtype(dtype).layout(layout).device(device).pinned_memory(pin_memory));
  if (n == 0) return out;
  TORCH_CHECK(row * col < (int64_t(1) << 31), "webgpu: ", name, ": matrices of 2^31 or more elements are not supported");
  Kernel kk{std::string(name)};
  kk.out(out, CT::I32);
  kk.param_index(n, "element count");
  kk.param_index(row, "rows");
  kk.param_index(col, "cols");
  kk.param_i32(int32_t(k));
  kk.param_index(out.storage_offset(), "storage offset");
  kk.launch(groups_for(n), [&] {
    return shape::shape_wgsl("tri_indices", {{"UPPER", upper ? "true" : "false"}, {"CONV", "i32"}});
  });
  return out;
}

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin) {
  return tri_indices(row, col, offset, dtype, layout, device, pin, false);
}
at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin) {
  return tri_indices(row, col, offset, dtype, layout, device, pin, true);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", TORCH_FN(cat));
  m.impl("cat.out", TORCH_FN(cat_out));
  m.impl("flip", TORCH_FN(flip));
  m.impl("roll", TORCH_FN(roll));
  using T = const at::Tensor&;
  structured::reg<TrilOp, T, int64_t>(m, "tril", "tril.out", "tril_");
  structured::reg<TriuOp, T, int64_t>(m, "triu", "triu.out", "triu_");
  m.impl("trace", TORCH_FN(trace));
  m.impl("tril_indices", TORCH_FN(tril_indices));
  m.impl("triu_indices", TORCH_FN(triu_indices));
  m.impl("trace_backward", TORCH_FN(trace_backward));
  m.impl("one_hot", TORCH_FN(one_hot));
  m.impl("repeat_interleave.Tensor", TORCH_FN(repeat_interleave_tensor));
}

}  // namespace webgpu::ops
