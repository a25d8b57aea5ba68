// Shape-building ops as native kernels: cat (batched: several inputs per dispatch, any dim, dtype
// promotion, out=), flip and roll (and through them rot90, fliplr, flipud and their gradients),
// tril/triu, trace, one_hot. stack/hstack/vstack/dstack/column_stack/tile/repeat/diag_embed/... are
// ATen composites over these and views. Kernels: wgsl/kernels/shape.wgsl.
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

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "engines/remap.h"
#include "kernel/device.h"
#include "kernel/kernel.h"
#include "ops/common.h"
#include "ops/structured.h"
#include "ops/register.h"
#include "ops/rows.h"

namespace webgpu::ops {

namespace {

using shape::Mode;
using shape::RDim;

std::vector<RDim> ident_dims(const at::Tensor& out, const at::Tensor& in) {
  std::vector<RDim> dims;
  for (int64_t d = 0; d < out.dim(); ++d)
    dims.push_back({out.size(d), out.stride(d), in.size(d), in.stride(d), Mode::Ident, 0});
  return dims;
}

// ---- flip, roll ----------------------------------------------------------------------------------

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  check_storable_dtype(self.scalar_type(), "flip");
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
  check_storable_dtype(self.scalar_type(), "roll");
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
  if (at::isComplexType(out) || at::isComplexType(in)) return CT::F32;  // complex64: (value, 0) / real part
  if (in == at::kDouble || out == at::kDouble) return CT::F64;
  if (at::isFloatingType(out) || at::isFloatingType(in)) return CT::F32;
  if (out == at::kLong || in == at::kLong) return CT::I64;
  if (out == at::kUInt32 || in == at::kUInt32 || out == at::kUInt64 || in == at::kUInt64) return CT::I64;
  return CT::I32;
}

void cat_kernel(const at::ITensorListRef& tensors, int64_t dim, const at::Tensor& out) {
  check_storable_dtype(out.scalar_type(), "cat");
  struct In {
    at::Tensor t;
    int64_t start;  // along dim, in out
  };
  std::vector<In> ins;
  int64_t pos = 0;
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.device() == out.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ", out.device(),
                " and ", t.device(), "!");
    if (at::native::cat_should_skip_tensor(t)) continue;
    check_storable_dtype(t.scalar_type(), "cat");
    const int64_t len = t.size(dim);
    if (len > 0) ins.push_back({t, pos});
    pos += len;
  }
  if (out.numel() == 0) return;
  bool fits = kernel::fits_binding(out);
  for (const In& x : ins) fits = fits && kernel::fits_binding(x.t);
  if (!fits) {
    // Past the binding limit (docs/design.md, "Operands past the binding limit"): one copy per input
    // into its slice of out, which the elementwise engine splits.
    for (const In& x : ins) out.narrow(dim, x.start, x.t.size(dim)).copy_(x.t);
    return;
  }
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
  auto c4 = [](int64_t n) { return (n + 3) / 4 * 4; };
  // Blocks past the binding limit are bound as windows, whose bases take parameter words too.
  const uint64_t max_binding = kernel::device_info(out).max_binding;
  bool windows = kernel::block_bytes(out) > max_binding;
  for (const In& x : ins) windows = windows || kernel::block_bytes(x.t) > max_binding;
  auto param_words = [&](int64_t K) { return 4 + 2 * c4(R) + 2 * c4(K) + c4(K * R) + (windows ? c4(K + 1) : 0); };
  int64_t kmax_params = 0;
  while (param_words(kmax_params + 1) <= int64_t(kernel::kMaxParamWords)) ++kmax_params;
  const int64_t kmax_bind = int64_t(kernel::device_info(out).max_storage_buffers) - 1;
  const int64_t kmax = std::min<int64_t>({kmax_params, kmax_bind, 16});
  size_t i = 0;
  while (i < ins.size()) {
    // Grow the chunk while parameters and distinct blocks allow.
    std::vector<const void*> blocks{kernel::block_id(out)};
    size_t j = i;
    while (j < ins.size() && int64_t(j - i) < kmax) {
      const void* b = kernel::block_id(ins[j].t);
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
    std::string key =
        "cat:" + std::to_string(R) + ":" + std::to_string(R - 1 - catg) + ":" + std::to_string(K) + (word ? ":w" : "");
    Kernel k(key);
    std::vector<CT> cts;
    CT oct = CT::RAW;
    if (!same) {
      // One compute type for the chunk, wide enough for every conversion.
      oct = CT::I32;
      for (size_t q = i; q < j; ++q) {
        CT c = cat_ct(ins[q].t.scalar_type(), out.scalar_type());
        if (c == CT::F64)
          oct = CT::F64;
        else if (c == CT::F32 && oct != CT::F64)
          oct = CT::F32;
        else if (c == CT::I64 && oct != CT::F32 && oct != CT::F64)
          oct = CT::I64;
      }
      if (at::isFloatingType(out.scalar_type()) && oct != CT::F64) oct = CT::F32;
    }
    for (size_t q = i; q < j; ++q) k.in(ins[q].t, oct);
    k.out(dst, oct);
    k.param_index("n", dst.numel());
    k.param_index("out_off", dst.storage_offset());
    std::vector<int64_t> sizes, out_strides, start, in_off, in_strides;
    for (int64_t g = R - 1; g >= 0; --g) {
      sizes.push_back(gsize(dst, g));
      out_strides.push_back(gstride(dst, g));
    }
    for (size_t q = i; q < j; ++q) {
      start.push_back(ins[q].start - c0);
      in_off.push_back(ins[q].t.storage_offset());
      for (int64_t g = R - 1; g >= 0; --g) in_strides.push_back(gsize(ins[q].t, g) == 1 ? 0 : gstride(ins[q].t, g));
    }
    k.param_array("sizes", sizes);
    k.param_array("out_strides", out_strides);
    k.param_array("start", start);
    k.param_array("in_off", in_off);
    k.param_array("in_strides", in_strides);
    shape::launch_elem(k, dst, K, word, wgsl_value_type(oct, out.scalar_type()), [&] {
      std::string pick;
      const int64_t cd = R - 1 - catg;
      auto U = [](int64_t v) { return std::to_string(v) + "u"; };
      for (int q = 0; q < K; ++q) {
        std::string body = "    var ie = P_in_off(" + U(q) + ");\n";
        for (int64_t d = 0; d < R; ++d) {
          const std::string coord = d == cd ? "(j - P_start(" + U(q) + "))" : "c[" + std::to_string(d) + "]";
          body += "    ie = ie + " + coord + " * P_in_strides(" + U(q * R + d) + ");\n";
        }
        body += "    return EV(oe, ld" + std::to_string(q) + "(ie));\n";
        if (q + 1 < K)
          pick += "  if (j < P_start(" + U(q + 1) + ")) {\n" + body + "  }\n";
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
  check_storable_dtype(self.scalar_type(), lower ? "tril" : "triu");
  if (out.numel() == 0) return;
  const int64_t rows = self.size(-2), cols = self.size(-1);
  if ((!kernel::fits_binding(self) || !kernel::fits_binding(out)) && (rows > 1 || self.dim() > 2)) {
    // Past the binding limit: halves along the outermost dim longer than 1 (a batch dim, else the
    // rows: rows r0.. of tril(A, k) are tril(A[r0..], k + r0)).
    int64_t d = 0;
    while (d < self.dim() - 2 && self.size(d) == 1) ++d;
    const int64_t n = self.size(d), h = n / 2;
    if (n > 1) {
      const bool by_rows = d == self.dim() - 2;
      for (const auto& [s0, len] : {std::pair<int64_t, int64_t>{0, h}, {h, n - h}})
        tri_kernel(self.narrow(d, s0, len), diagonal + (by_rows ? s0 : 0), out.narrow(d, s0, len), lower);
      return;
    }
  }
  diagonal = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);
  const int64_t R = self.dim();
  const bool word = shape::word_mode(out);
  Kernel k(std::string(lower ? "tril:" : "triu:") + std::to_string(R) + (word ? ":w" : ""));
  k.in(self, CT::RAW);
  k.out(out, CT::RAW);
  const int64_t words = 4 + 3 * ((R + 3) / 4 * 4);
  TORCH_CHECK(words <= int64_t(kernel::kMaxParamWords), "webgpu: ", lower ? "tril" : "triu", ": too many dims (", R,
              ")");
  k.param_index("n", out.numel());
  k.param_index("out_off", out.storage_offset());
  k.param_index("in_off", self.storage_offset());
  k.param_i32("diag", int32_t(diagonal));
  std::vector<int64_t> sizes, out_strides, in_strides;
  for (int64_t d = R - 1; d >= 0; --d) {
    sizes.push_back(self.size(d));
    out_strides.push_back(out.stride(d));
    in_strides.push_back(self.stride(d));
  }
  k.param_array("sizes", sizes);
  k.param_array("out_strides", out_strides);
  k.param_array("in_strides", in_strides);
  shape::launch_elem(k, out, 1, word, wgsl_value_type(CT::RAW, out.scalar_type()), [&] {
    return shape::shape_wgsl("tri", {{"RANK", std::to_string(R)},
                                     {"KEEP", lower ? "k <= P.diag" : "k >= P.diag"},
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
  TORCH_CHECK_NOT_IMPLEMENTED(!is_uint_fp8(self.scalar_type()), "\"trace\" not implemented for '", self.scalar_type(),
                              "' on webgpu");  // as CPU's trace kernel
  const at::ScalarType t =
      at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong : self.scalar_type();
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
  TORCH_CHECK(8 + 2 * ((R + 3) / 4 * 4) <= int64_t(kernel::kMaxParamWords), "webgpu: one_hot: too many dims (", R, ")");
  // An output past the binding limit: slices of the flattened indices (ops/rows.h).
  at::Tensor in = R == 0 ? self.view({1}) : self;
  if (!kernel::block_fits(out)) in = in.reshape({-1});
  const int64_t RK = R == 0 ? 0 : in.dim();
  for_each_slice({in, out.view({in.size(0), -1})}, in.size(0), "one_hot",
                 [&](const std::vector<at::Tensor>& t, int64_t, int64_t) {
                   Kernel k("one_hot:" + std::to_string(RK));
                   k.in(t[0], CT::RAW);
                   k.out(t[1], CT::RAW);
                   k.param_index("n", t[1].numel());
                   k.param_index("classes", num_classes);
                   k.param_index("in_off", t[0].storage_offset());
                   k.param_index("out_off", t[1].storage_offset());
                   std::vector<int64_t> sizes, strides;
                   for (int64_t d = RK - 1; d >= 0; --d) {
                     sizes.push_back(t[0].size(d));
                     strides.push_back(t[0].stride(d));
                   }
                   k.param_array("sizes", sizes);
                   k.param_array("strides", strides);
                   k.launch(grid(uint64_t(t[1].numel())),
                            [&] { return shape::shape_wgsl("one_hot", {{"RANK", std::to_string(RK)}}); });
                 });
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
    k.param_index("n", n);
    k.param_index("rep_off", repeat.storage_offset());
    k.param_index("rep_stride", repeat.stride(0));
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
  k.param_index("total", total);
  k.param_index("n", n);
  const bool wide = repeat.scalar_type() == at::kLong;
  k.launch(grid(total), [&] { return shape::shape_wgsl("ri_fill", {{"VALUE", wide ? "vec2<u32>(lo, 0u)" : "lo"}}); });
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
  at::Tensor out =
      at::empty({2, n}, at::TensorOptions().dtype(dtype).layout(layout).device(device).pinned_memory(pin_memory));
  if (n == 0) return out;
  TORCH_CHECK(row * col < (int64_t(1) << 31), "webgpu: ", name,
              ": matrices of 2^31 or more elements are not supported");
  Kernel kk{std::string(name)};
  kk.out(out, CT::I32);
  kk.param_index("n", n);
  kk.param_index("rows", row);
  kk.param_index("cols", col);
  kk.param_i32("offset", int32_t(k));
  kk.param_index("out_off", out.storage_offset());
  kk.launch(grid(n),
            [&] { return shape::shape_wgsl("tri_indices", {{"UPPER", upper ? "true" : "false"}, {"CONV", "i32"}}); });
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

WEBGPU_LIBRARY_IMPL(m) {
  WEBGPU_IMPL_OUT(m, "cat", "out", cat);
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
