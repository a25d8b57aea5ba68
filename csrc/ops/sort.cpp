// Sorting and order statistics: sort (always stable), argsort/msort (through sort), topk, kthvalue,
// median, nanmedian, mode, unique (_unique, _unique2, unique_consecutive), searchsorted, bucketize,
// histc, bincount. Kernels are in wgsl/sort.wgsl (one section per kernel).
//
// Rows along the sorted dimension are made contiguous ([rows, n]), padded to a power of two and
// sorted as (order-preserving key, index) pairs by a bitonic network: tiles of 1024 pairs in shared
// memory, plus global compare-exchange passes for rows longer than a tile. A gather kernel then
// writes the wanted positions (all, the first k, the k-th, the median) as values and int64 indices.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <map>

#include "ops/common.h"
#include "ops/kernel.h"
#include "runtime/pipeline.h"

namespace webgpu::ops {
namespace {

constexpr int64_t kTile = 1024;

// One section of wgsl/sort.wgsl.
std::string section(const std::string& name) {
  const std::string& src = rt::wgsl_source("sort");
  const std::string mark = "// ==== " + name + " ====";
  size_t a = src.find(mark);
  TORCH_CHECK(a != std::string::npos, "webgpu: internal: sort.wgsl has no section ", name);
  size_t b = src.find("// ==== ", a + mark.size());
  return src.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

std::string I(int i) { return std::to_string(i); }

enum class KeyKind { Float, Int32, Int64 };

KeyKind key_kind(at::ScalarType t) {
  if (at::isFloatingType(t)) return KeyKind::Float;
  if (t == at::kLong) return KeyKind::Int64;
  return KeyKind::Int32;
}

CT key_ct(KeyKind k) { return k == KeyKind::Float ? CT::F32 : k == KeyKind::Int64 ? CT::I64 : CT::I32; }

// K, its order and the NaN test (ascending float keys: NaN maps to all ones).
std::string key_defs(bool wide, bool float_keys) {
  std::string s;
  if (wide) {
    s += "alias K = vec2<u32>;\n"
         "fn klt(a: K, b: K) -> bool { return a.x < b.x || (a.x == b.x && a.y < b.y); }\n"
         "fn keq(a: K, b: K) -> bool { return a.x == b.x && a.y == b.y; }\n"
         "fn kmax() -> K { return vec2<u32>(0xffffffffu, 0xffffffffu); }\n";
  } else {
    s += "alias K = u32;\n"
         "fn klt(a: K, b: K) -> bool { return a < b; }\n"
         "fn keq(a: K, b: K) -> bool { return a == b; }\n"
         "fn kmax() -> K { return 0xffffffffu; }\n";
  }
  s += std::string("fn is_nan_key(a: K) -> bool { return ") + (float_keys ? "a == 0xffffffffu" : "false") + "; }\n";
  return s;
}

// Accessors for the flat key and index work buffers (fresh tensors: storage offset 0).
std::string kv_access(bool wide, int ok, int oi) {
  std::string s;
  if (wide) {
    s += "fn load_key(p: u32) -> K { return vec2<u32>(ld" + I(ok) + "(2u * p), ld" + I(ok) + "(2u * p + 1u)); }\n";
    s += "fn store_key(p: u32, v: K) { st" + I(ok) + "(2u * p, v.x); st" + I(ok) + "(2u * p + 1u, v.y); }\n";
  } else {
    s += "fn load_key(p: u32) -> K { return ld" + I(ok) + "(p); }\n";
    s += "fn store_key(p: u32, v: K) { st" + I(ok) + "(p, v); }\n";
  }
  s += "fn load_idx(p: u32) -> u32 { return ld" + I(oi) + "(p); }\n";
  s += "fn store_idx(p: u32, v: u32) { st" + I(oi) + "(p, v); }\n";
  return s;
}

struct Sorted {
  at::Tensor keys, idx;
  int64_t rows = 0, n = 0, npad = 1;
  bool wide = false, float_keys = false;
};

// Stably sorts each row of x ([rows, n], contiguous) into key/index buffers.
Sorted sort_rows(const at::Tensor& x, int64_t rows, int64_t n, bool desc) {
  Sorted s;
  s.rows = rows;
  s.n = n;
  while (s.npad < n) s.npad <<= 1;
  const KeyKind kk = key_kind(x.scalar_type());
  s.wide = kk == KeyKind::Int64;
  s.float_keys = kk == KeyKind::Float;
  int64_t total = rows * s.npad;
  total = (total + kTile - 1) / kTile * kTile;
  TORCH_CHECK(total < (int64_t(1) << 31), "webgpu: sort: ", rows, " rows of ", n,
              " elements exceed the 32-bit indexing of webgpu kernels");
  auto opts = x.options().dtype(at::kInt);
  s.keys = at::empty({total * (s.wide ? 2 : 1)}, opts);
  s.idx = at::empty({total}, opts);
  const std::string dkey = std::string(desc ? "d" : "a");

  auto local = [&](bool first, int64_t kstart, int64_t kend) {
    Kernel k(std::string("sort:local:") + (first ? "f" : "m") + dkey + (s.wide ? "w" : "n") + (s.float_keys ? "f" : "i"));
    const int ox = first ? k.in(x, key_ct(kk)) : -1;
    const int ok = k.out(s.keys, CT::RAW);
    const int oi = k.out(s.idx, CT::RAW);
    k.param_index(s.npad, "padded row length");
    k.param_index(n, "row length");
    k.param_index(rows, "rows");
    k.param_index(kstart, "stage");
    k.param_index(kend, "stage");
    k.param_index(first ? x.storage_offset() : 0, "offset");
    k.launch(uint64_t(total / kTile), [&] {
      std::string w = key_defs(s.wide, s.float_keys) + kv_access(s.wide, ok, oi);
      w += std::string("const FIRST: bool = ") + (first ? "true" : "false") + ";\n";
      if (first) {
        const std::string flip = desc ? "~" : "";
        w += "fn make_key(e: u32) -> K { let v = ld" + I(ox) + "(prm(5u) + e); ";
        if (kk == KeyKind::Float) {
          w += "var u = bitcast<u32>(v); if ((u & 0x7fffffffu) > 0x7f800000u) { u = 0xffffffffu; } else {"
               " if (u == 0x80000000u) { u = 0u; } u = select(u | 0x80000000u, ~u, (u >> 31u) == 1u); } return " +
               flip + "u; }\n";
        } else if (kk == KeyKind::Int64) {
          w += "return " + flip + "vec2<u32>(v.y ^ 0x80000000u, v.x); }\n";
        } else {
          w += "return " + flip + "(bitcast<u32>(v) ^ 0x80000000u); }\n";
        }
      } else {
        w += "fn make_key(e: u32) -> K { return kmax(); }\n";
      }
      return w + section("local");
    });
  };
  auto global = [&](int64_t kst, int64_t j) {
    Kernel k(std::string("sort:global:") + (s.wide ? "w" : "n"));
    const int ok = k.out(s.keys, CT::RAW);
    const int oi = k.out(s.idx, CT::RAW);
    k.param_index(s.npad, "padded row length");
    k.param(0);
    k.param(0);
    k.param_index(kst, "stage");
    k.param_index(j, "distance");
    k.param_index(total / 2, "pairs");
    k.launch(uint64_t((total / 2 + 255) / 256),
             [&] { return key_defs(s.wide, false) + kv_access(s.wide, ok, oi) + section("global"); });
  };
  local(true, 2, std::min(s.npad, kTile));
  for (int64_t kst = 2 * kTile; kst <= s.npad; kst <<= 1) {
    for (int64_t j = kst / 2; j >= kTile; j >>= 1) global(kst, j);
    local(false, kst, kst);
  }
  return s;
}

// Writes cnt sorted elements per row (see the gather section) into contiguous [rows, cnt] tensors.
void gather(const Sorted& s, const at::Tensor& x, int64_t p0, int64_t cnt, int mode, at::Tensor& v, at::Tensor& i) {
  v = at::empty({s.rows, cnt}, x.options());
  i = at::empty({s.rows, cnt}, x.options().dtype(at::kLong));
  if (s.rows * cnt == 0) return;
  Kernel k("sort:gather:" + std::to_string(mode) + (s.wide ? "w" : "n") + (s.float_keys ? "f" : "i"));
  const int ox = k.in(x, CT::RAW);
  const int ok = k.in(s.keys, CT::RAW);
  const int oi = k.in(s.idx, CT::RAW);
  const int ov = k.out(v, CT::RAW);
  const int on = k.out(i, CT::I64);
  k.param_index(s.npad, "padded row length");
  k.param_index(s.n, "row length");
  k.param_index(cnt, "count");
  k.param_index(p0, "position");
  k.param_index(s.rows * cnt, "outputs");
  k.param_index(x.storage_offset(), "offset");
  k.launch(uint64_t((s.rows * cnt + 255) / 256), [&] {
    std::string w = key_defs(s.wide, s.float_keys);
    w += "const MODE: u32 = " + std::to_string(mode) + "u;\n";
    w += s.wide ? "fn load_key(p: u32) -> K { return vec2<u32>(ld" + I(ok) + "(2u * p), ld" + I(ok) + "(2u * p + 1u)); }\n"
                : "fn load_key(p: u32) -> K { return ld" + I(ok) + "(p); }\n";
    w += "fn load_idx(p: u32) -> u32 { return ld" + I(oi) + "(p); }\n";
    w += "fn load_val(e: u32) -> " + wgsl_value_type(CT::RAW, x.scalar_type()) + " { return ld" + I(ox) + "(prm(5u) + e); }\n";
    w += "fn store_val(t: u32, v: " + wgsl_value_type(CT::RAW, x.scalar_type()) + ") { st" + I(ov) + "(t, v); }\n";
    w += "fn store_ind(t: u32, s: u32) { st" + I(on) + "(t, vec2<u32>(s, 0u)); }\n";
    return w + section("gather");
  });
}

// The mode of each sorted row.
void mode_rows(const Sorted& s, const at::Tensor& x, at::Tensor& v, at::Tensor& i) {
  v = at::empty({s.rows, 1}, x.options());
  i = at::empty({s.rows, 1}, x.options().dtype(at::kLong));
  if (s.rows == 0) return;
  Kernel k(std::string("sort:mode:") + (s.wide ? "w" : "n") + (s.float_keys ? "f" : "i"));
  const int ox = k.in(x, CT::RAW);
  const int ok = k.in(s.keys, CT::RAW);
  const int oi = k.in(s.idx, CT::RAW);
  const int ov = k.out(v, CT::RAW);
  const int on = k.out(i, CT::I64);
  k.param_index(s.npad, "padded row length");
  k.param_index(s.n, "row length");
  k.param_index(x.storage_offset(), "offset");
  k.launch(uint64_t(s.rows), [&] {
    std::string w = key_defs(s.wide, s.float_keys);
    w += s.wide ? "fn load_key(p: u32) -> K { return vec2<u32>(ld" + I(ok) + "(2u * p), ld" + I(ok) + "(2u * p + 1u)); }\n"
                : "fn load_key(p: u32) -> K { return ld" + I(ok) + "(p); }\n";
    w += "fn load_idx(p: u32) -> u32 { return ld" + I(oi) + "(p); }\n";
    w += "fn load_val(e: u32) -> " + wgsl_value_type(CT::RAW, x.scalar_type()) + " { return ld" + I(ox) + "(prm(2u) + e); }\n";
    w += "fn store_val(t: u32, v: " + wgsl_value_type(CT::RAW, x.scalar_type()) + ") { st" + I(ov) + "(t, v); }\n";
    w += "fn store_ind(t: u32, s: u32) { st" + I(on) + "(t, vec2<u32>(s, 0u)); }\n";
    return w + section("mode");
  });
}

// self moved so that dim is last, contiguous, as [rows, n]; 0-dim as [1, 1].
struct Rows {
  at::Tensor x;  // [rows, n]
  std::vector<int64_t> moved;  // sizes of self with dim last (0-dim: {1})
  int64_t rows = 1, n = 1, dim = 0;
  bool scalar = false;
};

Rows rows_of(const at::Tensor& self, int64_t dim) {
  Rows r;
  if (self.dim() == 0) {
    at::maybe_wrap_dim(dim, 1);
    r.scalar = true;
    r.x = self.reshape({1, 1}).contiguous();
    r.moved = {1};
    return r;
  }
  r.dim = at::maybe_wrap_dim(dim, self.dim());
  at::Tensor m = self.movedim(r.dim, -1);
  r.moved = m.sizes().vec();
  r.n = self.size(r.dim);
  r.rows = r.n == 0 ? 0 : self.numel() / r.n;
  if (r.n == 0) {
    r.rows = 1;
    for (size_t j = 0; j + 1 < r.moved.size(); ++j) r.rows *= r.moved[j];
  }
  r.x = m.contiguous().view({r.rows, r.n});
  return r;
}

// Copies [rows, cnt] results into out (already shaped: self's shape with dim of size cnt, or with
// dim removed when !keepdim and cnt == 1).
void write_back(const at::Tensor& out, const at::Tensor& v, const Rows& r, int64_t cnt, bool keepdim) {
  if (v.numel() == 0) return;
  if (r.scalar) {
    out.view({1, cnt}).copy_(v);
    return;
  }
  std::vector<int64_t> sz = r.moved;
  sz.back() = cnt;
  at::Tensor t = keepdim ? out : out.unsqueeze(r.dim);
  t.movedim(r.dim, -1).copy_(v.view(sz));
}

std::vector<int64_t> reduced_shape(const at::Tensor& self, int64_t dim, int64_t cnt, bool keepdim) {
  if (self.dim() == 0) return {};
  std::vector<int64_t> s = self.sizes().vec();
  if (keepdim) s[dim] = cnt;
  else s.erase(s.begin() + dim);
  return s;
}

void prep_out(const at::Tensor& values, const at::Tensor& indices, const at::Tensor& self, at::IntArrayRef shape,
              const char* name) {
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), name, ": Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", values.scalar_type(), " instead");
  TORCH_CHECK(indices.scalar_type() == at::kLong, name, ": Expected out tensor to have dtype Long, but got ",
              indices.scalar_type(), " instead");
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
}

// ---- sort ----

std::tuple<at::Tensor&, at::Tensor&> sort_out(const at::Tensor& self, std::optional<bool> /*stable*/, int64_t dim,
                                               bool descending, at::Tensor& values, at::Tensor& indices) {
  check_supported_dtype(self.scalar_type(), "sort");
  Rows r = rows_of(self, dim);
  prep_out(values, indices, self, self.sizes(), "sort");
  if (self.numel() == 0) return {values, indices};
  Sorted s = sort_rows(r.x, r.rows, r.n, descending);
  at::Tensor v, i;
  gather(s, r.x, 0, r.n, 0, v, i);
  write_back(values, v, r, r.n, true);
  write_back(indices, i, r, r.n, true);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                               bool descending) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  sort_out(self, stable, dim, descending, v, i);
  return {v, i};
}

std::tuple<at::Tensor, at::Tensor> sort_plain(const at::Tensor& self, int64_t dim, bool descending) {
  return sort_stable(self, false, dim, descending);
}

std::tuple<at::Tensor&, at::Tensor&> sort_plain_out(const at::Tensor& self, int64_t dim, bool descending,
                                                     at::Tensor& values, at::Tensor& indices) {
  return sort_out(self, false, dim, descending, values, indices);
}

// ---- topk / kthvalue ----

std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, int64_t k, int64_t dim, bool largest,
                                               bool /*sorted*/, at::Tensor& values, at::Tensor& indices) {
  check_supported_dtype(self.scalar_type(), "topk");
  Rows r = rows_of(self, dim);
  TORCH_CHECK(k >= 0 && k <= (self.dim() > 0 ? self.size(r.dim) : 1), "selected index k out of range");
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() > 0) shape[r.dim] = k;
  prep_out(values, indices, self, shape, "topk");
  if (k == 0 || self.numel() == 0) return {values, indices};
  Sorted s = sort_rows(r.x, r.rows, r.n, largest);
  at::Tensor v, i;
  gather(s, r.x, 0, k, 0, v, i);
  write_back(values, v, r, k, true);
  write_back(indices, i, r, k, true);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  topk_out(self, k, dim, largest, sorted, v, i);
  return {v, i};
}

// One order statistic per row: mode 0 (position k - 1), 1 median, 2 nanmedian, 3 mode.
void select_rows(const at::Tensor& self, int64_t dim, bool keepdim, int mode, int64_t k, at::Tensor& values,
                 at::Tensor& indices, const char* name) {
  check_supported_dtype(self.scalar_type(), name);
  Rows r = rows_of(self, dim);
  if (mode == 2 && !at::isFloatingType(self.scalar_type())) mode = 1;
  if (mode == 1 && !at::isFloatingType(self.scalar_type())) mode = 4;  // integer median: plain position
  prep_out(values, indices, self, reduced_shape(self, r.dim, 1, keepdim), name);
  if (self.numel() == 0) return;
  Sorted s = sort_rows(r.x, r.rows, r.n, false);
  at::Tensor v, i;
  if (mode == 3) mode_rows(s, r.x, v, i);
  else if (mode == 4) gather(s, r.x, (r.n - 1) / 2, 1, 0, v, i);
  else gather(s, r.x, mode == 0 ? k - 1 : 0, 1, mode, v, i);
  write_back(values, v, r, 1, keepdim);
  write_back(indices, i, r, 1, keepdim);
}

void zero_numel_check(const at::Tensor& self, int64_t dim, const char* fn) {
  if (self.dim() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(self.numel() != 0 || self.size(dim) != 0, fn, ": Expected reduction dim ", dim,
                    " to have non-zero size.");
  TORCH_CHECK_INDEX(self.size(dim) != 0, fn, ": Expected reduction dim ", dim, " to have non-zero size.");
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_out(const at::Tensor& self, int64_t k, int64_t dim, bool keepdim,
                                                   at::Tensor& values, at::Tensor& indices) {
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.dim() > 0 ? self.size(d) : 1;
  zero_numel_check(self, d, "kthvalue()");
  TORCH_CHECK(k >= 1 && k <= size, "kthvalue(): selected number k out of range for dimension ", d);
  select_rows(self, d, keepdim, 0, k, values, indices, "kthvalue");
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  kthvalue_out(self, k, dim, keepdim, v, i);
  return {v, i};
}

std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                     at::Tensor& values, at::Tensor& indices) {
  zero_numel_check(self, dim, "median()");
  select_rows(self, dim, keepdim, 1, 0, values, indices, "median");
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> median_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  median_dim_out(self, dim, keepdim, v, i);
  return {v, i};
}
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                        at::Tensor& values, at::Tensor& indices) {
  zero_numel_check(self, dim, "nanmedian()");
  select_rows(self, dim, keepdim, 2, 0, values, indices, "nanmedian");
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> nanmedian_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  nanmedian_dim_out(self, dim, keepdim, v, i);
  return {v, i};
}

at::Tensor median_all_impl(const at::Tensor& self, bool ignore_nan) {
  if (self.numel() == 0) return at::full({}, NAN, self.options());
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  select_rows(self.reshape({-1}), 0, false, ignore_nan ? 2 : 1, 0, v, i, ignore_nan ? "nanmedian" : "median");
  return v;
}
at::Tensor median_all(const at::Tensor& self) { return median_all_impl(self, false); }
at::Tensor nanmedian_all(const at::Tensor& self) { return median_all_impl(self, true); }

std::tuple<at::Tensor&, at::Tensor&> mode_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& values,
                                               at::Tensor& indices) {
  if (self.dim() > 0) {
    const int64_t d = at::maybe_wrap_dim(dim, self.dim());
    TORCH_CHECK_INDEX(self.numel() == 0 || self.size(d) > 0, "mode(): Expected reduction dim ", d,
                      " to have non-zero size.");
    if (self.numel() == 0) {
      // CPU: an empty result shaped like the reduction.
      prep_out(values, indices, self, reduced_shape(self, d, 1, keepdim), "mode");
      return {values, indices};
    }
  }
  select_rows(self, dim, keepdim, 3, 0, values, indices, "mode");
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor v = at::empty({0}, self.options()), i = at::empty({0}, self.options().dtype(at::kLong));
  mode_out(self, dim, keepdim, v, i);
  return {v, i};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sort", TORCH_FN(sort_plain));
  m.impl("sort.values", TORCH_FN(sort_plain_out));
  m.impl("sort.stable", TORCH_FN(sort_stable));
  m.impl("sort.values_stable", TORCH_FN(sort_out));
  m.impl("topk", TORCH_FN(topk));
  m.impl("topk.values", TORCH_FN(topk_out));
  m.impl("kthvalue", TORCH_FN(kthvalue));
  m.impl("kthvalue.values", TORCH_FN(kthvalue_out));
  m.impl("median", TORCH_FN(median_all));
  m.impl("median.dim", TORCH_FN(median_dim));
  m.impl("median.dim_values", TORCH_FN(median_dim_out));
  m.impl("nanmedian", TORCH_FN(nanmedian_all));
  m.impl("nanmedian.dim", TORCH_FN(nanmedian_dim));
  m.impl("nanmedian.dim_values", TORCH_FN(nanmedian_dim_out));
  m.impl("mode", TORCH_FN(mode));
  m.impl("mode.values", TORCH_FN(mode_out));
}

}  // namespace webgpu::ops
