// Sorting and order statistics: sort (always stable), argsort/msort (through sort), topk, kthvalue,
// median, nanmedian, mode, unique (_unique, _unique2, unique_consecutive), searchsorted, bucketize,
// histc, bincount, isin. Kernels are in wgsl/kernels/sort.wgsl (one section per kernel).
//
// Rows along the sorted dimension are made contiguous ([rows, n]), padded to a power of two and
// sorted as (order-preserving key, index) pairs by a bitonic network: tiles of 1024 pairs in shared
// memory, plus global compare-exchange passes for rows longer than a tile. A gather kernel then
// writes the wanted positions (all, the first k, the k-th, the median) as values and int64 indices.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/Histogram.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorCompare.h>
#include <ATen/ops/_histogramdd_bin_edges_native.h>
#include <ATen/ops/_histogramdd_from_bin_cts_native.h>
#include <ATen/ops/_histogramdd_from_bin_tensors_native.h>
#include <ATen/ops/histogram_native.h>
#include <ATen/ops/isin_native.h>
#include <torch/library.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/complex.h"
#include "ops/float64.h"
#include "ops/pointwise.h"
#include "ops/rows.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

constexpr int64_t kTile = 1024;

// One section of wgsl/kernels/sort.wgsl.
std::string section(const std::string& name) { return kernel::section("sort", name); }

std::string I(int i) { return std::to_string(i); }

// Float64: binary64 bits read raw; its keys are two words, like int64's.
enum class KeyKind { Float, Int32, Int64, Float64 };

KeyKind key_kind(at::ScalarType t) {
  if (t == at::kDouble) return KeyKind::Float64;
  if (at::isFloatingType(t)) return KeyKind::Float;
  if (t == at::kLong) return KeyKind::Int64;
  if (t == at::kUInt64) return KeyKind::Int64;  // unsigned: its keys keep the sign bit (sort_rows)
  return KeyKind::Int32;
}

CT key_ct(KeyKind k) {
  return k == KeyKind::Float ? CT::F32 : k == KeyKind::Int64 ? CT::I64 : k == KeyKind::Float64 ? CT::RAW : CT::I32;
}

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
  const char* nan = !float_keys ? "false" : wide ? "a.x == 0xffffffffu && a.y == 0xffffffffu" : "a == 0xffffffffu";
  s += std::string("fn is_nan_key(a: K) -> bool { return ") + nan + "; }\n";
  return s;
}

// Readers of the flat key and index work buffers (fresh tensors: storage offset 0).
std::string kv_load(bool wide, int ok, int oi) {
  std::string s =
      wide ? "fn load_key(p: u32) -> K { return vec2<u32>(ld" + I(ok) + "(2u * p), ld" + I(ok) + "(2u * p + 1u)); }\n"
           : "fn load_key(p: u32) -> K { return ld" + I(ok) + "(p); }\n";
  return s + "fn load_idx(p: u32) -> u32 { return ld" + I(oi) + "(p); }\n";
}

// Accessors for the sorting passes: readers, writers and the pair order (key, then index).
std::string kv_access(bool wide, int ok, int oi) {
  std::string s = kv_load(wide, ok, oi);
  s += wide ? "fn store_key(p: u32, v: K) { st" + I(ok) + "(2u * p, v.x); st" + I(ok) + "(2u * p + 1u, v.y); }\n"
            : "fn store_key(p: u32, v: K) { st" + I(ok) + "(p, v); }\n";
  s += "fn store_idx(p: u32, v: u32) { st" + I(oi) + "(p, v); }\n";
  s += "fn lt(ka: K, ia: u32, kb: K, ib: u32) -> bool { return klt(ka, kb) || (keq(ka, kb) && ia < ib); }\n";
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
  s.wide = kk == KeyKind::Int64 || kk == KeyKind::Float64;
  s.float_keys = kk == KeyKind::Float || kk == KeyKind::Float64;
  int64_t total = rows * s.npad;
  total = (total + kTile - 1) / kTile * kTile;
  TORCH_CHECK(total < (int64_t(1) << 31), "webgpu: sort: ", rows, " rows of ", n,
              " elements exceed the 32-bit indexing of webgpu kernels");
  auto opts = x.options().dtype(at::kInt);
  s.keys = at::empty({total * (s.wide ? 2 : 1)}, opts);
  s.idx = at::empty({total}, opts);
  const std::string dkey = std::string(desc ? "d" : "a");

  auto local = [&](bool first, int64_t kstart, int64_t kend) {
    // Unsigned keys (uint32, uint64) order as their bits; signed ones flip the sign bit.
    const bool unsigned_keys = x.scalar_type() == at::kUInt32 || x.scalar_type() == at::kUInt64;
    const std::string sign = unsigned_keys ? "0u" : "0x80000000u";
    Kernel k(std::string("sort:local:") + (first ? "f" : "m") + dkey + (s.wide ? "w" : "n") +
             (s.float_keys ? "f" : "i") + (unsigned_keys ? "u" : ""));
    const int ox = first ? k.in(x, key_ct(kk)) : -1;
    const int ok = k.out(s.keys, CT::RAW);
    const int oi = k.out(s.idx, CT::RAW);
    k.param_index("npad", s.npad);
    k.param_index("n", n);
    k.param_index("rows", rows);
    k.param_index("k_first", kstart);
    k.param_index("k_last", kend);
    if (first) k.param_index("x_off", x.storage_offset());
    k.launch(uint64_t(total / kTile), [&] {
      std::string w = key_defs(s.wide, s.float_keys) + kv_access(s.wide, ok, oi);
      w += std::string("const FIRST: bool = ") + (first ? "true" : "false") + ";\n";
      if (first) {
        const std::string flip = desc ? "~" : "";
        w += "fn make_key(e: u32) -> K { let v = ld" + I(ox) + "(P.x_off + e); ";
        if (kk == KeyKind::Float) {
          w += "var u = bitcast<u32>(v); if ((u & 0x7fffffffu) > 0x7f800000u) { u = 0xffffffffu; } else {"
               " if (u == 0x80000000u) { u = 0u; } u = select(u | 0x80000000u, ~u, (u >> 31u) == 1u); } return " +
               flip + "u; }\n";
        } else if (kk == KeyKind::Float64) {
          // As float32's: NaN -> all ones (last), -0.0 -> +0.0 (ties, kept in order), the sign flipped
          // for positives and every bit flipped for negatives; (high word, low word).
          w += "var h = v.y; var l = v.x; let a = h & 0x7fffffffu;"
               " if (a > 0x7ff00000u || (a == 0x7ff00000u && l != 0u)) { return " +
               flip +
               "vec2<u32>(0xffffffffu, 0xffffffffu); }"
               " if (h == 0x80000000u && l == 0u) { h = 0u; }"
               " if ((h >> 31u) == 1u) { h = ~h; l = ~l; } else { h = h | 0x80000000u; } return " +
               flip + "vec2<u32>(h, l); }\n";
        } else if (kk == KeyKind::Int64) {
          w += "return " + flip + "vec2<u32>(v.y ^ " + sign + ", v.x); }\n";
        } else {
          w += "return " + flip + "(bitcast<u32>(v) ^ " + sign + "); }\n";
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
    k.param_index("npad", s.npad);
    k.param_index("k", kst);
    k.param_index("j", j);
    k.param_index("n", total / 2);
    k.launch(grid(total / 2), [&] {
      return kernel::library("per_element") + key_defs(s.wide, false) + kv_access(s.wide, ok, oi) + section("global");
    });
  };
  local(true, 2, std::min(s.npad, kTile));
  for (int64_t kst = 2 * kTile; kst <= s.npad; kst <<= 1) {
    for (int64_t j = kst / 2; j >= kTile; j >>= 1) global(kst, j);
    local(false, kst, kst);
  }
  return s;
}

// The operands of a kernel over sorted rows (gather, mode): x, the sorted keys and indices in, values
// and int64 indices out (their operand numbers), with the rows' padded and true lengths set.
struct ResultOps {
  int x, keys, idx, v, i;
};
ResultOps result_operands(Kernel& k, const Sorted& s, const at::Tensor& x, const at::Tensor& v, const at::Tensor& i) {
  ResultOps o{k.in(x, CT::RAW), k.in(s.keys, CT::RAW), k.in(s.idx, CT::RAW), k.out(v, CT::RAW), k.out(i, CT::I64)};
  k.param_index("npad", s.npad);
  k.param_index("n", s.n);
  return o;
}

// The kernel's WGSL prologue for reading sorted rows (keys, indices, x's values at x_off) and writing
// one value and its int64 index per result: the gather and mode sections.
std::string result_defs(const Sorted& s, const at::Tensor& x, int ox, int ok, int oi, int ov, int on) {
  const std::string VT = wgsl_value_type(CT::RAW, x.scalar_type());
  return key_defs(s.wide, s.float_keys) + kv_load(s.wide, ok, oi) + "fn load_val(e: u32) -> " + VT + " { return ld" +
         I(ox) + "(P.x_off + e); }\n" + "fn store_val(t: u32, v: " + VT + ") { st" + I(ov) + "(t, v); }\n" +
         "fn store_ind(t: u32, s: u32) { st" + I(on) + "(t, vec2<u32>(s, 0u)); }\n";
}

// Writes cnt sorted elements per row (see the gather section) into contiguous [rows, cnt] tensors.
void gather(const Sorted& s, const at::Tensor& x, int64_t p0, int64_t cnt, int mode, at::Tensor& v, at::Tensor& i) {
  v = at::empty({s.rows, cnt}, x.options());
  i = at::empty({s.rows, cnt}, x.options().dtype(at::kLong));
  if (s.rows * cnt == 0) return;
  Kernel k("sort:gather:" + std::to_string(mode) + (s.wide ? "w" : "n") + (s.float_keys ? "f" : "i"));
  const ResultOps o = result_operands(k, s, x, v, i);
  k.param_index("cnt", cnt);
  k.param_index("p0", p0);
  k.param_index("total", s.rows * cnt);
  k.param_index("x_off", x.storage_offset());
  k.launch(grid(s.rows * cnt), [&] {
    return result_defs(s, x, o.x, o.keys, o.idx, o.v, o.i) + "const MODE: u32 = " + std::to_string(mode) + "u;\n" +
           section("gather");
  });
}

// The mode of each sorted row.
void mode_rows(const Sorted& s, const at::Tensor& x, at::Tensor& v, at::Tensor& i) {
  v = at::empty({s.rows, 1}, x.options());
  i = at::empty({s.rows, 1}, x.options().dtype(at::kLong));
  if (s.rows == 0) return;
  Kernel k(std::string("sort:mode:") + (s.wide ? "w" : "n") + (s.float_keys ? "f" : "i"));
  const ResultOps o = result_operands(k, s, x, v, i);
  k.param_index("rows", s.rows);
  k.param_index("x_off", x.storage_offset());
  k.launch(uint64_t(s.rows), [&] { return result_defs(s, x, o.x, o.keys, o.idx, o.v, o.i) + section("mode"); });
}

// Sorts the rows of x ([rows, n], contiguous) and writes cnt results per row into [rows, cnt] v and i:
// gather (mode `mode`, from sorted position p0) or, for mode -1, mode_rows. Operands past the
// binding limit (x, the padded key and index buffers, the results): slices of whole rows (ops/rows.h),
// each sorted on its own into results copied into their rows; a row past the limit raises naming op.
void sort_select(const at::Tensor& x, int64_t rows, int64_t n, bool desc, int64_t p0, int64_t cnt, int mode,
                 at::Tensor& v, at::Tensor& i, const char* op) {
  const kernel::DeviceInfo& dev = kernel::device_info(x);
  int64_t npad = 1;
  while (npad < n) npad <<= 1;
  const KeyKind kk = key_kind(x.scalar_type());
  const int64_t key_bytes = kk == KeyKind::Int64 || kk == KeyKind::Float64 ? 8 : 4;
  const int64_t row_bytes =
      std::max({npad * key_bytes, n * int64_t(x.element_size()), cnt * int64_t(std::max<size_t>(8, x.element_size()))});
  const uint64_t slack = uint64_t(kTile) * 8;  // the key buffers round up to whole tiles
  const uint64_t budget = binding_budget(dev) > slack ? binding_budget(dev) - slack : 0;
  auto one = [&](const at::Tensor& xs, int64_t k, at::Tensor& vs, at::Tensor& is) {
    Sorted s = sort_rows(xs, k, n, desc);
    if (mode < 0)
      mode_rows(s, xs, vs, is);
    else
      gather(s, xs, p0, cnt, mode, vs, is);
  };
  if (uint64_t(rows * row_bytes) <= budget) return one(x, rows, v, i);
  const int64_t per = int64_t(budget / uint64_t(row_bytes));
  TORCH_CHECK(per >= 1, "webgpu: ", op, ": a row of ", n, " elements (", row_bytes,
              " bytes to sort) cannot be split, and spans more than this adapter's maxStorageBufferBindingSize limit (",
              dev.max_binding, " bytes)");
  v = at::empty({rows, cnt}, x.options());
  i = at::empty({rows, cnt}, x.options().dtype(at::kLong));
  for (int64_t r0 = 0; r0 < rows; r0 += per) {
    const int64_t k = std::min(per, rows - r0);
    at::Tensor vs, is;
    one(row_slice(x, n, r0, k), k, vs, is);
    v.narrow(0, r0, k).copy_(vs);
    i.narrow(0, r0, k).copy_(is);
  }
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
  if (keepdim)
    s[dim] = cnt;
  else
    s.erase(s.begin() + dim);
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

// Fresh values and int64 indices outputs for the functional forms of the (values, indices) ops.
std::pair<at::Tensor, at::Tensor> empty_outputs(const at::Tensor& self) {
  return {at::empty({0}, self.options()), at::empty({0}, self.options().dtype(at::kLong))};
}
// The functional form of an out= op: out_fn(values, indices) fills fresh outputs.
template <class F>
std::tuple<at::Tensor, at::Tensor> functional(const at::Tensor& self, F out_fn) {
  auto [v, i] = empty_outputs(self);
  out_fn(v, i);
  return {v, i};
}

// ---- sort ----

std::tuple<at::Tensor&, at::Tensor&> sort_out(const at::Tensor& self, std::optional<bool> /*stable*/, int64_t dim,
                                              bool descending, at::Tensor& values, at::Tensor& indices) {
  check_kernel_dtype(self.scalar_type(), "sort");
  no_complex(self.scalar_type(), "sort");
  Rows r = rows_of(self, dim);
  prep_out(values, indices, self, self.sizes(), "sort");
  if (self.numel() == 0) return {values, indices};
  at::Tensor v, i;
  sort_select(r.x, r.rows, r.n, descending, 0, r.n, 0, v, i, "sort");
  write_back(values, v, r, r.n, true);
  write_back(indices, i, r, r.n, true);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                               bool descending) {
  return functional(self, [&](at::Tensor& v, at::Tensor& i) { sort_out(self, stable, dim, descending, v, i); });
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
  check_kernel_dtype(self.scalar_type(), "topk");
  no_complex(self.scalar_type(), "topk");
  Rows r = rows_of(self, dim);
  TORCH_CHECK(k >= 0 && k <= (self.dim() > 0 ? self.size(r.dim) : 1), "selected index k out of range");
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() > 0) shape[r.dim] = k;
  prep_out(values, indices, self, shape, "topk");
  if (k == 0 || self.numel() == 0) return {values, indices};
  at::Tensor v, i;
  sort_select(r.x, r.rows, r.n, largest, 0, k, 0, v, i, "topk");
  write_back(values, v, r, k, true);
  write_back(indices, i, r, k, true);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  return functional(self, [&](at::Tensor& v, at::Tensor& i) { topk_out(self, k, dim, largest, sorted, v, i); });
}

// One order statistic per row: mode 0 (position k - 1), 1 median, 2 nanmedian, 3 mode.
void select_rows(const at::Tensor& self, int64_t dim, bool keepdim, int mode, int64_t k, at::Tensor& values,
                 at::Tensor& indices, const char* name) {
  check_kernel_dtype(self.scalar_type(), name);
  no_complex(self.scalar_type(), name);
  Rows r = rows_of(self, dim);
  if (mode == 2 && !at::isFloatingType(self.scalar_type())) mode = 1;
  if (mode == 1 && !at::isFloatingType(self.scalar_type())) mode = 4;  // integer median: plain position
  prep_out(values, indices, self, reduced_shape(self, r.dim, 1, keepdim), name);
  if (self.numel() == 0) return;
  at::Tensor v, i;
  if (mode == 3)
    sort_select(r.x, r.rows, r.n, false, 0, 1, -1, v, i, name);
  else if (mode == 4)
    sort_select(r.x, r.rows, r.n, false, (r.n - 1) / 2, 1, 0, v, i, name);
  else
    sort_select(r.x, r.rows, r.n, false, mode == 0 ? k - 1 : 0, 1, mode, v, i, name);
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
  at::assert_no_overlap(self, values);
  select_rows(self, d, keepdim, 0, k, values, indices, "kthvalue");
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  return functional(self, [&](at::Tensor& v, at::Tensor& i) { kthvalue_out(self, k, dim, keepdim, v, i); });
}

// median.dim and nanmedian.dim: the lower median of each row (select_rows mode 1), NaN skipped for
// nanmedian (mode 2).
std::tuple<at::Tensor&, at::Tensor&> median_dim_impl(const at::Tensor& self, int64_t dim, bool keepdim, bool ignore_nan,
                                                     at::Tensor& values, at::Tensor& indices) {
  zero_numel_check(self, dim, ignore_nan ? "nanmedian()" : "median()");
  select_rows(self, dim, keepdim, ignore_nan ? 2 : 1, 0, values, indices, ignore_nan ? "nanmedian" : "median");
  return {values, indices};
}
std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                    at::Tensor& values, at::Tensor& indices) {
  return median_dim_impl(self, dim, keepdim, false, values, indices);
}
std::tuple<at::Tensor, at::Tensor> median_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return functional(self, [&](at::Tensor& v, at::Tensor& i) { median_dim_impl(self, dim, keepdim, false, v, i); });
}
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                       at::Tensor& values, at::Tensor& indices) {
  return median_dim_impl(self, dim, keepdim, true, values, indices);
}
std::tuple<at::Tensor, at::Tensor> nanmedian_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return functional(self, [&](at::Tensor& v, at::Tensor& i) { median_dim_impl(self, dim, keepdim, true, v, i); });
}

at::Tensor median_all_impl(const at::Tensor& self, bool ignore_nan) {
  if (self.numel() == 0) return at::full({}, NAN, self.options());
  auto [v, i] = empty_outputs(self);
  select_rows(self.reshape({-1}), 0, false, ignore_nan ? 2 : 1, 0, v, i, ignore_nan ? "nanmedian" : "median");
  return v;
}
at::Tensor median_all(const at::Tensor& self) { return median_all_impl(self, false); }
at::Tensor nanmedian_all(const at::Tensor& self) { return median_all_impl(self, true); }

std::tuple<at::Tensor&, at::Tensor&> mode_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& values,
                                              at::Tensor& indices) {
  // CPU's checks and messages for the outputs' dtypes, before anything else.
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "expected scalar type '", self.scalar_type(), "' but got '",
              values.scalar_type(), "' for values output");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "expected scalar type 'Long' but got '", indices.scalar_type(),
              "' for indices output");
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
  return functional(self, [&](at::Tensor& v, at::Tensor& i) { mode_out(self, dim, keepdim, v, i); });
}

// ---- unique ----

// Compute type and value-equality of a dtype for the unique kernels (NaN never equals NaN).
CT value_ct(at::ScalarType t) { return t == at::kDouble ? CT::F64 : key_ct(key_kind(t)); }

std::string value_defs(at::ScalarType t, int ox) {
  const CT ct = value_ct(t);
  std::string s = "fn xval(e: u32) -> " + std::string(wgsl_type(ct)) + " { return ld" + I(ox) + "(P.x_off + e); }\n";
  s += ct == CT::F64 ? "fn veq(a: vec2<u32>, b: vec2<u32>) -> bool { return f64_eq(a, b); }\n"
       : ct == CT::I64
           ? "fn veq(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }\n"
           : std::string("fn veq(a: ") + wgsl_type(ct) + ", b: " + wgsl_type(ct) + ") -> bool { return a == b; }\n";
  return s;
}

// Lexicographic order of the n rows of x ([n * r], contiguous): stable sorts of the columns, last
// first. Returns the order as int32 (sorted position -> row).
at::Tensor lexsort_rows(const at::Tensor& x, int64_t n, int64_t r) {
  at::Tensor perm = at::arange(n, x.options().dtype(at::kInt));
  at::Tensor col = at::empty({1, n}, x.options());
  for (int64_t c = r - 1; c >= 0; --c) {
    {
      Kernel k("unique:col:g");
      const int ox = k.in(x, CT::RAW);
      const int op = k.in(perm, CT::RAW);
      const int oc = k.out(col, CT::RAW);
      k.param_index("n", n);
      k.param_index("r", r);
      k.param_index("x_off", x.storage_offset());
      k.param_index("col", c);
      k.launch(grid(n), [&] {
        const std::string VT = wgsl_value_type(CT::RAW, x.scalar_type());
        return kernel::library("per_element") + "fn load_perm(p: u32) -> u32 { return ld" + I(op) +
               "(p); }\n"
               "fn load_val(e: u32) -> " +
               VT + " { return ld" + I(ox) +
               "(P.x_off + e); }\n"
               "fn store_col(p: u32, v: " +
               VT + ") { st" + I(oc) + "(p, v); }\n" + section("ucol_gather");
      });
    }
    at::Tensor ord = sort_rows(col, 1, n, false).idx;
    at::Tensor next = at::empty({n}, perm.options());
    {
      Kernel k("unique:col:p");
      const int op = k.in(perm, CT::RAW);
      const int oo = k.in(ord, CT::RAW);
      const int on = k.out(next, CT::RAW);
      k.param_index("n", n);
      k.launch(grid(n), [&] {
        return kernel::library("per_element") + "fn load_perm(p: u32) -> u32 { return ld" + I(op) +
               "(p); }\n"
               "fn load_order(p: u32) -> u32 { return ld" +
               I(oo) +
               "(p); }\n"
               "fn store_perm(p: u32, v: u32) { st" +
               I(on) + "(p, v); }\n" + section("ucol_perm");
      });
    }
    perm = next;
  }
  return perm;
}

// The row order of unique(dim): CPU's std::sort of the row indices by a lexicographic comparator
// that uses only < and >. With NaN that comparator is no strict weak order (NaN ties with every
// value, so equal rows need not end up adjacent), and with -0.0 the rows kept as representatives
// are whichever of the tied rows the introsort puts first; either way CPU's answer is whatever
// libstdc++'s introsort does. Such float inputs (checked on the device; unique syncs anyway) run
// that same sort over a host copy, so the order is CPU's exactly. Everything else takes the stable
// GPU lexsort: there tied rows are bitwise equal, so any order among them gives CPU's result.
at::Tensor unique_dim_order(const at::Tensor& x, int64_t n, int64_t r) {
  if (at::isFloatingType(x.scalar_type())) {
    const bool special = at::logical_or(at::isnan(x), at::logical_and(at::eq(x, 0), at::signbit(x))).any().item<bool>();
    if (special) {
      at::Tensor h = x.view({n, r}).cpu().contiguous();
      std::vector<int64_t> idx(static_cast<size_t>(n));
      std::iota(idx.begin(), idx.end(), int64_t(0));
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, h.scalar_type(), "unique_dim", [&] {
        const scalar_t* p = h.const_data_ptr<scalar_t>();
        std::sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
          for (int64_t i = 0; i < r; ++i) {
            const scalar_t lhs = p[i + a * r], rhs = p[i + b * r];
            if (lhs < rhs) return true;
            if (lhs > rhs) return false;
          }
          return false;
        });
      });
      at::Tensor order = at::empty({n}, at::TensorOptions().dtype(at::kInt));
      int32_t* o = order.data_ptr<int32_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = int32_t(idx[size_t(i)]);
      return order.to(x.device());
    }
  }
  return lexsort_rows(x, n, r);
}

// Unique values of self (flattened) in sorted order (sorted) or of its consecutive runs.
// With dim (consecutive only), the values are the slices along dim, compared whole.
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_impl(const at::Tensor& self, bool sorted, bool want_inverse,
                                                           bool want_counts, const char* name,
                                                           std::optional<int64_t> dim = std::nullopt) {
  check_kernel_dtype(self.scalar_type(), name);
  no_complex(self.scalar_type(), name);
  auto lopts = self.options().dtype(at::kLong);
  at::Tensor x;
  int64_t n = self.numel(), r = 1;
  std::vector<int64_t> moved;
  if (dim.has_value()) {
    at::Tensor m = self.movedim(*dim, 0);
    moved = m.sizes().vec();
    n = m.size(0);
    r = 1;
    for (size_t j = 1; j < moved.size(); ++j) r *= moved[j];
    if (n == 0) {
      // As CPU: an empty selected dim is fine only when it is the one zero-sized dim.
      TORCH_CHECK(std::count(moved.begin(), moved.end(), int64_t(0)) == 1,
                  "Number of zero sized dimensions is more than one, so unique cannot be applied ");
      return {at::empty(moved, self.options()).movedim(0, *dim), at::empty({0}, lopts), at::empty({0}, lopts)};
    }
    TORCH_CHECK(r > 0, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
    x = m.contiguous().view({-1});
  }
  at::Tensor inverse =
      want_inverse ? at::empty(dim.has_value() ? at::IntArrayRef{n} : self.sizes(), lopts) : at::empty({0}, lopts);
  if (n == 0) {
    return {at::empty({0}, self.options()), inverse, want_counts ? at::empty({0}, lopts) : at::empty({0}, lopts)};
  }
  if (!x.defined()) x = self.reshape({-1}).contiguous();
  // order: the sorted position -> element (or row) map, when sorting.
  at::Tensor order;
  if (sorted && !dim.has_value()) order = sort_rows(x.view({1, n}), 1, n, false).idx;
  if (sorted && dim.has_value()) order = unique_dim_order(x, n, r);
  const bool via = sorted;
  auto src_defs = [&](int oi) {
    return via ? "fn src(p: u32) -> u32 { return ld" + I(oi) + "(p); }\n"
               : std::string("fn src(p: u32) -> u32 { return p; }\n");
  };
  at::Tensor flags = at::empty({n}, self.options().dtype(at::kInt));
  {
    Kernel k(std::string("unique:flag:") + (via ? "s" : "c"));
    const int ox = k.in(x, value_ct(x.scalar_type()));
    const int oi = via ? k.in(order, CT::RAW) : -1;
    const int of = k.out(flags, CT::I32);
    k.param_index("n", n);
    k.param_index("r", r);
    k.param_index("x_off", x.storage_offset());
    k.launch(grid(n), [&] {
      return kernel::library("per_element") + value_defs(x.scalar_type(), ox) + src_defs(oi) +
             "fn store_flag(p: u32, f: u32) { st" + I(of) + "(p, i32(f)); }\n" + section("uflag");
    });
  }
  at::Tensor pos = at::cumsum(flags, 0);
  const int64_t u = pos[n - 1].item<int64_t>();
  at::Tensor values = at::empty({u * r}, self.options());
  at::Tensor starts = at::empty({u}, self.options().dtype(at::kInt));
  at::Tensor inv = at::empty({n}, lopts);
  {
    Kernel k(std::string("unique:scatter:") + (via ? "s" : "c"));
    const int ox = k.in(x, CT::RAW);
    const int oi = via ? k.in(order, CT::RAW) : -1;
    const int op = k.in(pos, CT::I64);
    const int ov = k.out(values, CT::RAW);
    const int os = k.out(starts, CT::I32);
    const int on = k.out(inv, CT::I64);
    k.param_index("n", n);
    k.param_index("r", r);
    k.param_index("x_off", x.storage_offset());
    k.launch(grid(n), [&] {
      const std::string VT = wgsl_value_type(CT::RAW, x.scalar_type());
      return kernel::library("per_element") + src_defs(oi) + "fn load_pos(p: u32) -> u32 { return ld" + I(op) +
             "(p).x; }\n" + "fn load_val(e: u32) -> " + VT + " { return ld" + I(ox) + "(P.x_off + e); }\n" +
             "fn store_val(j: u32, v: " + VT + ") { st" + I(ov) + "(j, v); }\n" +
             "fn store_start(j: u32, p: u32) { st" + I(os) + "(j, i32(p)); }\n" + "fn store_inv(s: u32, j: u32) { st" +
             I(on) + "(s, vec2<u32>(j, 0u)); }\n" + section("uscatter");
    });
  }
  if (want_inverse) inverse.view({-1}).copy_(inv);
  at::Tensor counts = at::empty({want_counts ? u : 0}, lopts);
  if (want_counts) {
    Kernel k("unique:count");
    const int os = k.in(starts, CT::I32);
    const int oc = k.out(counts, CT::I64);
    k.param_index("n", u);
    k.param_index("end", n);
    k.launch(grid(u), [&] {
      return kernel::library("per_element") + "fn load_start(j: u32) -> u32 { return u32(ld" + I(os) + "(j)); }\n" +
             "fn store_count(j: u32, c: u32) { st" + I(oc) + "(j, vec2<u32>(c, 0u)); }\n" + section("ucount");
    });
  }
  if (dim.has_value()) {
    moved[0] = u;
    values = values.view(moved).movedim(0, *dim);
  }
  return {values, inverse, counts};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool /*sorted*/, bool return_inverse,
                                                       bool return_counts) {
  // Unsorted unique may return any order; the sorted one is a valid answer (CPU sorts as well).
  return unique_impl(self, true, return_inverse, return_counts, "unique");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim(const at::Tensor& self, int64_t dim, bool /*sorted*/,
                                                          bool return_inverse, bool return_counts) {
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  return unique_impl(self, true, return_inverse, return_counts, "unique_dim", d);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim_consecutive(const at::Tensor& self, int64_t dim,
                                                                      bool return_inverse, bool return_counts) {
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  return unique_impl(self, false, return_inverse, return_counts, "unique_dim_consecutive", d);
}

std::tuple<at::Tensor, at::Tensor> unique1(const at::Tensor& self, bool /*sorted*/, bool return_inverse) {
  auto r = unique_impl(self, true, return_inverse, false, "unique");
  return {std::get<0>(r), std::get<1>(r)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self, bool return_inverse,
                                                                  bool return_counts, std::optional<int64_t> dim) {
  if (dim.has_value()) {
    const int64_t d = at::maybe_wrap_dim(*dim, self.dim());
    if (self.dim() > 1) return unique_impl(self, false, return_inverse, return_counts, "unique_consecutive", d);
  }
  return unique_impl(self, false, return_inverse, return_counts, "unique_consecutive");
}

// ---- searchsorted / bucketize ----

at::Tensor& searchsorted_out(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32, bool right,
                             std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter_opt,
                             at::Tensor& out) {
  const at::Tensor sorter = sorter_opt.has_value() ? *sorter_opt : at::Tensor();
  at::native::searchsorted_pre_check(boundaries, self, out, out_int32, right, side, at::Tensor());
  if (sorter.defined()) {
    TORCH_CHECK(sorter.device() == boundaries.device(), "torch.searchsorted(): sorter and boundary tensors should ",
                "have same device type, but got sorter tensor device type ", sorter.device(),
                " and input value tensor device type ", boundaries.device());
    TORCH_CHECK(sorter.sizes() == boundaries.sizes(),
                "torch.searchsorted(): boundary and sorter must have the same "
                "size, but got boundary tensor ",
                boundaries.sizes(), "and got sorter tensor ", sorter.sizes());
    TORCH_CHECK(sorter.scalar_type() == at::kLong, "torch.searchsorted(): sorter must be a tensor of long ",
                "dtype but got dtype ", sorter.scalar_type());
    if (sorter.numel() > 0) {
      const int64_t vmin = sorter.amin().item<int64_t>(), vmax = sorter.amax().item<int64_t>();
      TORCH_CHECK(vmin >= 0 && vmax < sorter.sizes().back(), "torch.searchsorted(): sorter index out of range");
    }
  }
  at::native::resize_output(out, self.sizes());
  if (self.numel() == 0) return out;
  // CPU's performance warnings for non-contiguous operands (BucketizationUtils.h), word for word.
  if (!self.is_contiguous())
    TORCH_WARN_ONCE(
        "torch.searchsorted(): input value tensor is non-contiguous, this will lower the performance due "
        "to extra data copy when converting non-contiguous tensor to contiguous, please use contiguous "
        "input value tensor if possible. This message will only appear once per program.");
  if (!boundaries.is_contiguous())
    TORCH_WARN_ONCE(
        "torch.searchsorted(): boundary tensor is non-contiguous, this will lower the performance due "
        "to extra data copy when converting non-contiguous tensor to contiguous, please use contiguous "
        "boundary tensor if possible. This message will only appear once per program.");
  if (sorter.defined() && !sorter.is_contiguous())
    TORCH_WARN_ONCE(
        "torch.searchsorted(): sorter tensor is non-contiguous, this will lower the performance due "
        "to extra data copy when converting non-contiguous tensor to contiguous, please use contiguous "
        "sorter tensor if possible. This message will only appear once per program.");
  const bool is_right = right || (side.has_value() && *side == "right");
  const at::ScalarType ct_t = at::result_type(boundaries, self);
  TORCH_CHECK_NOT_IMPLEMENTED(ct_t != at::kBool, "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  check_kernel_dtype(ct_t, "searchsorted");
  no_complex(ct_t, "searchsorted");
  at::Tensor bd = boundaries.to(ct_t).contiguous();
  at::Tensor v = self.to(ct_t).contiguous();
  at::Tensor srt = sorter.defined() ? sorter.contiguous() : at::Tensor();
  at::Tensor res = at::empty(self.sizes(), out.options());
  const CT ct = value_ct(ct_t);
  const int64_t bn = bd.size(-1);
  const int64_t inner = bd.dim() == 1 ? 0 : (self.dim() > 0 ? self.size(-1) : 1);
  if (bn == 0 || (inner == 0 && bd.dim() > 1)) {
    res.zero_();
  } else {
    Kernel k(std::string("searchsorted:") + (is_right ? "r" : "l") + (srt.defined() ? "s" : "") +
             (ct == CT::F64 ? "d" : ""));
    const int ov = k.in(v, ct);
    const int ob = k.in(bd, ct);
    const int os = srt.defined() ? k.in(srt, CT::I64) : -1;
    const int oo = k.out(res, out_int32 ? CT::I32 : CT::I64);
    k.param_index("n", self.numel());
    k.param_index("inner", inner);
    k.param_index("bn", bn);
    k.param_index("v_off", v.storage_offset());
    k.param_index("b_off", bd.storage_offset());
    if (srt.defined()) k.param_index("s_off", srt.storage_offset());
    k.launch(grid(self.numel()), [&] {
      const std::string T = wgsl_type(ct);
      std::string w = "const RIGHT: bool = " + std::string(is_right ? "true" : "false") + ";\n";
      w += "fn load_v(t: u32) -> " + T + " { return ld" + I(ov) + "(P.v_off + t); }\n";
      w += "fn load_b(base: u32, mid: u32) -> " + T + " { ";
      w += os >= 0 ? "let j = base + ld" + I(os) + "(P.s_off + base + mid).x; " : std::string("let j = base + mid; ");
      w += "return ld" + I(ob) + "(P.b_off + j); }\n";
      if (ct == CT::F64) {
        w += "fn gt(a: vec2<u32>, b: vec2<u32>) -> bool { return f64_lt(b, a); }\n"
             "fn ge(a: vec2<u32>, b: vec2<u32>) -> bool { return f64_le(b, a); }\n";
      } else if (ct == CT::I64) {
        w += "fn gt(a: vec2<u32>, b: vec2<u32>) -> bool { return i64_lt(b, a); }\n"
             "fn ge(a: vec2<u32>, b: vec2<u32>) -> bool { return i64_le(b, a); }\n";
      } else {
        w += "fn gt(a: " + T + ", b: " + T + ") -> bool { return a > b; }\n";
        w += "fn ge(a: " + T + ", b: " + T + ") -> bool { return a >= b; }\n";
      }
      w += out_int32 ? "fn store_out(t: u32, r: u32) { st" + I(oo) + "(t, i32(r)); }\n"
                     : "fn store_out(t: u32, r: u32) { st" + I(oo) + "(t, vec2<u32>(r, 0u)); }\n";
      return kernel::library("per_element") + w + section("search");
    });
  }
  out.copy_(res);
  return out;
}

at::Tensor searchsorted_t(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32, bool right,
                          std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  at::Tensor out = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  searchsorted_out(boundaries, self, out_int32, right, side, sorter, out);
  return out;
}

at::Tensor searchsorted_scalar(const at::Tensor& boundaries, const at::Scalar& self, bool out_int32, bool right,
                               std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  return searchsorted_t(boundaries, at::native::searchsorted_scalar_tensor(self, boundaries.device()), out_int32, right,
                        side, sorter);
}

at::Tensor& searchsorted_scalar_out(const at::Tensor& boundaries, const at::Scalar& self, bool out_int32, bool right,
                                    std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& out) {
  return searchsorted_out(boundaries, at::native::searchsorted_scalar_tensor(self, boundaries.device()), out_int32,
                          right, side, sorter, out);
}

at::Tensor& bucketize_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right,
                          at::Tensor& out) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted_out(boundaries, self, out_int32, right, std::nullopt, std::nullopt, out);
}

at::Tensor bucketize_t(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  at::Tensor out = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return bucketize_out(self, boundaries, out_int32, right, out);
}

at::Tensor bucketize_scalar(const at::Scalar& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  return bucketize_t(at::native::searchsorted_scalar_tensor(self, boundaries.device()), boundaries, out_int32, right);
}

// ---- histc / bincount ----

// Counts (or sums weights) into bins with atomics; returns the bins as int32 (or float32 sums).
// bin_of reads P.bins, P.lo and P.hi when `range` is given (histc's bounds, f32).
// `extra` (optional) adds operands and parameters after these and returns WGSL for bin_of to use;
// `samples` (default: every element) is the number of bin_of calls.
at::Tensor histogram_words(const at::Tensor& x, const at::Tensor& weights, int64_t nbins, const std::string& bin_of,
                           std::optional<std::pair<float, float>> range, const std::string& key,
                           const std::function<std::string(Kernel&)>& extra = {}, int64_t samples = -1) {
  const int64_t n = samples >= 0 ? samples : x.numel();  // invocations: one per sample
  // A 16-bit dtype makes kernel.h bind the counts atomically; the words are read back as int32.
  at::Tensor counts = at::zeros({2 * nbins}, x.options().dtype(at::kShort));
  // One launch over samples [0, np) of xp (and wp); the bins add up across launches.
  auto launch = [&](const at::Tensor& xp, const at::Tensor& wp, int64_t np) {
    Kernel k("hist:" + key + (weights.defined() || nbins > 2048 ? ":g" : ":l"));
    k.out(counts, CT::RAW);  // binding b1
    const int ox = k.in(xp, value_ct(x.scalar_type()));
    const int ow = weights.defined() ? k.in(wp, CT::F32) : -1;
    // Unweighted with few bins: shared-memory histograms per workgroup (section histl).
    const bool local = ow < 0 && nbins <= 2048;
    constexpr int64_t kPer = 4096;
    k.param_index("n", np);
    k.param_index("x_off", xp.storage_offset());
    if (ow >= 0) k.param_index("w_off", wp.storage_offset());
    if (local || range) k.param_index("bins", nbins);
    if (range) {
      k.param_f32("lo", range->first);
      k.param_f32("hi", range->second);
    }
    if (local) k.param_index("per", kPer);
    const std::string extra_wgsl = extra ? extra(k) : std::string();
    const uint64_t groups = local ? grid(np, kPer) : grid(np);
    k.launch(groups, [&] {
      std::string w = "const WEIGHTED: bool = " + std::string(ow >= 0 ? "true" : "false") + ";\n";
      w += "fn xv(t: u32) -> " + std::string(wgsl_type(value_ct(x.scalar_type()))) + " { return ld" + I(ox) +
           "(P.x_off + t); }\n";
      w += ow >= 0 ? "fn weight_of(t: u32) -> f32 { return ld" + I(ow) + "(P.w_off + t); }\n"
                   : std::string("fn weight_of(t: u32) -> f32 { return 0.0; }\n");
      w += extra_wgsl + bin_of;
      return local ? w + section("histl") : kernel::library("per_element") + w + section("hist");
    });
  };
  // Operands past the binding limit (flat samples, no extra operands): launches over flat parts (ops/rows.h).
  if (extra || samples >= 0 || n == 0 || !x.is_contiguous() || (weights.defined() && !weights.is_contiguous())) {
    launch(x, weights, n);
  } else {
    for_each_slice({x.view({-1}), weights.defined() ? weights.view({-1}) : weights}, n, "histc",
                   [&](const std::vector<at::Tensor>& t, int64_t, int64_t np) { launch(t[0], t[1], np); });
  }
  return counts.view(at::kInt);
}

// histc's bounds: the data's min and max when equal, widened by one when still equal.
template <typename T>
std::pair<T, T> histc_bounds(const at::Tensor& self, T lo, T hi) {
  if (lo == hi && self.numel() > 0) {
    lo = self.min().item<T>();
    hi = self.max().item<T>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  return {lo, hi};
}

// histc of an integer tensor, as CUDA computes it (CPU refuses integers; transformers' MoE layers
// count tokens per expert with it off the CPU): the bounds truncated to integers (the data's min and
// max when equal, widened by one when still equal), values outside [lo, hi] skipped, and the bin
// (v - lo) * bins / (hi - lo) in integer arithmetic, the top edge falling into the last bin. The
// int64 values are clamped to [lo - 1, hi + 1] and narrowed to int32 (out-of-range values stay out of
// range; the narrower types convert exactly), so the kernel works in 32 bits; ranges whose products
// do not fit raise.
at::Tensor& histc_int_out(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max,
                          at::Tensor& out) {
  const std::pair<int64_t, int64_t> b = histc_bounds(self, min.toLong(), max.toLong());
  const int64_t lo = b.first, hi = b.second;
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  constexpr int64_t kLim = int64_t(1) << 31;
  TORCH_CHECK_NOT_IMPLEMENTED(lo - 1 > -kLim && hi + 1 < kLim && (hi - lo) < kLim / bins, "histc: an integer range [",
                              lo, ", ", hi, "] with ", bins,
                              " bins is past the 32-bit arithmetic of the webgpu kernel");
  at::native::resize_output(out, {bins});
  if (self.numel() == 0) {
    out.zero_();
    return out;
  }
  at::Tensor x = self.reshape({-1});
  if (x.scalar_type() == at::kLong) x = x.clamp(lo - 1, hi + 1);  // the narrower types fit int32 as they are
  x = x.to(at::kInt).contiguous();
  const std::string bin_of =
      "fn bin_of(t: u32) -> u32 { let v = xv(t); if (v < P.ilo || v > P.ihi) { return 0xffffffffu; }"
      " let p = u32((v - P.ilo) * i32(P.nbins) / (P.ihi - P.ilo)); return min(p, P.nbins - 1u); }\n";
  at::Tensor c = histogram_words(x, {}, bins, bin_of, std::nullopt, "histc_int", [&](Kernel& k) {
    k.param_index("nbins", bins);  // its own name: histogram_words sets P.bins only for its local variant
    k.param_i32("ilo", int32_t(lo));
    k.param_i32("ihi", int32_t(hi));
    return std::string();
  });
  out.copy_(c);
  return out;
}

at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max,
                      at::Tensor& out) {
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "torch.histc: input tensor and hist tensor should have the ",
              "same dtype, but got input ", self.scalar_type(), " and hist ", out.scalar_type());
  if (at::isIntegralType(self.scalar_type(), /*includeBool=*/false)) return histc_int_out(self, bins, min, max, out);
  // CPU checks the range before the dtypes: float64 inputs with min > max raise "max must be larger
  // than min", as there.
  check_storable_dtype(self.scalar_type(), "histc");
  const std::pair<double, double> b = histc_bounds(self, min.toDouble(), max.toDouble());
  const double lo = b.first, hi = b.second;
  TORCH_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)), "torch.histc: range of [", lo,
              ", ", hi, "] is not finite");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"histc\" not implemented for '",
                              self.scalar_type(), "'");
  check_supported_dtype(self.scalar_type(), "histc");
  no_complex(self.scalar_type(), "histc");
  at::native::resize_output(out, {bins});
  if (self.numel() == 0) {
    out.zero_();
    return out;
  }
  at::Tensor x = self.reshape({-1}).contiguous();
  // The bin as CPU's histc finds it (linear interpolation without local search), every operation
  // rounded to the input dtype as CPU's Half/BFloat16 arithmetic rounds.
  const at::ScalarType st = self.scalar_type();
  const std::string bin_of = round_fn(st) +
                             "fn bin_of(t: u32) -> u32 { let v = xv(t); let lo = P.lo; let hi = P.hi; let nb = P.bins;"
                             " if (!(v >= lo && v <= hi)) { return 0xffffffffu; }"
                             " var p = u32(rnd(rnd(rnd(v - lo) * rnd(f32(nb))) / rnd(hi - lo))); p = min(p, nb);"
                             " return min(p, nb - 1u); }\n";
  const float flo = float(lo), fhi = float(hi);
  at::Tensor c = histogram_words(x, {}, bins, bin_of,
                                 std::make_pair(float(at::scalar_tensor(flo).to(st).item<float>()),
                                                float(at::scalar_tensor(fhi).to(st).item<float>())),
                                 "histc");
  out.copy_(c);
  return out;
}

constexpr auto histc = via_out<&histc_out>;

// torch.histogram / histogramdd: ATen's device-generic front ends (Histogram.cpp: argument checks,
// bin edges by linspace, `range` and empty-input rules) call these stubs with self [..., D] (each
// leading index a sample), one edge tensor per dimension and hist of the bins' shape. Every sample's bin is found by binary search in
// the actual edges (upper bound, the rightmost edge closing the last bin), which is where CPU's
// binary search and its linear interpolation with local search both land; samples outside the
// edges or NaN are skipped. Counts are exact; weights add in float32 with atomics (any order).
void histogramdd_kernel(const at::Tensor& self, const std::optional<at::Tensor>& weight, bool density, at::Tensor& hist,
                        const at::TensorList& bin_edges) {
  check_kernel_dtype(self.scalar_type() == at::kFloat, self.scalar_type(), "histogramdd", " on the webgpu device");
  const int64_t D = self.size(-1), M = D ? self.numel() / D : 0;  // samples: every dimension but the last
  std::vector<int64_t> starts, counts, strides(D, 1);
  std::vector<at::Tensor> edges;
  int64_t total = 0;
  for (int64_t d = 0; d < D; ++d) {
    starts.push_back(total);
    counts.push_back(bin_edges[d].numel());
    total += bin_edges[d].numel();
    edges.push_back(bin_edges[d].reshape({-1}).to(at::kFloat));
  }
  for (int64_t d = D - 2; d >= 0; --d) strides[d] = strides[d + 1] * (counts[d + 1] - 1);
  const int64_t nbins = hist.numel();
  if (M == 0 || nbins == 0) {
    hist.zero_();
  } else {
    const at::Tensor e = at::cat(edges);
    const at::Tensor w = weight.has_value() ? weight->reshape({-1}).to(at::kFloat).contiguous() : at::Tensor();
    const std::string bin_of =
        "fn bin_of(t: u32) -> u32 {\n"
        "  var idx = 0u;\n"
        "  for (var d = 0u; d < P.dims; d++) {\n"
        "    let v = xv(t * P.dims + d);\n"
        "    let s = P_es(d);\n"
        "    let n = P_en(d);\n"
        "    if (!(v >= edge(s) && v <= edge(s + n - 1u))) { return 0xffffffffu; }\n"
        "    var a = 0u;\n"
        "    var b = n;\n"
        "    while (a < b) { let m = (a + b) / 2u; if (edge(s + m) <= v) { a = m + 1u; } else { b = m; } }\n"
        "    idx += min(a - 1u, n - 2u) * P_hs(d);\n"
        "  }\n"
        "  return idx;\n"
        "}\n";
    at::Tensor c = histogram_words(
        self.reshape({M, D}).contiguous(), w, nbins, bin_of, std::nullopt, w.defined() ? "histdd:w" : "histdd",
        [&](Kernel& k) {
          const int oe = k.in(e, CT::F32);
          k.param_index("dims", D);
          k.param_index("e_off", e.storage_offset());
          k.param_array("es", starts);
          k.param_array("en", counts);
          k.param_array("hs", strides);
          return "fn edge(i: u32) -> f32 { return ld" + I(oe) + "(P.e_off + i); }\n";
        },
        M);
    hist.copy_((w.defined() ? c.view(at::kFloat) : c).reshape(hist.sizes()));
  }
  if (density) {  // as CPU: by the total, then by each dimension's bin lengths
    const auto sum = hist.sum().item();
    hist.div_(sum);
    for (int64_t d = 0; d < D; ++d) {
      std::vector<int64_t> shape(D, 1);
      shape[d] = bin_edges[d].numel() - 1;
      hist.div_(bin_edges[d].diff().reshape(shape));
    }
  }
}

void histogramdd_linear_kernel(const at::Tensor& self, const std::optional<at::Tensor>& weight, bool density,
                               at::Tensor& hist, const at::TensorList& bin_edges, bool /*local_search*/) {
  histogramdd_kernel(self, weight, density, hist, bin_edges);
}

// The outer edges from the data when no range is given: per-dimension min and max (aminmax over M).
void histogram_select_outer_bin_edges(const at::Tensor& input, const int64_t N, std::vector<double>& leftmost,
                                      std::vector<double>& rightmost) {
  check_kernel_dtype(input.scalar_type() == at::kFloat, input.scalar_type(), "histogramdd", " on the webgpu device");
  auto [mn, mx] = at::aminmax(input, 0);
  const at::Tensor lo = mn.cpu(), hi = mx.cpu();
  for (int64_t d = 0; d < N; ++d) {
    leftmost[d] = lo[d].item<double>();
    rightmost[d] = hi[d].item<double>();
  }
}

// ATen's front ends by name (they are overloaded).
using OptT = std::optional<at::Tensor>;
using Range = std::optional<at::ArrayRef<double>>;
std::tuple<at::Tensor, at::Tensor> histogram_bins_tensor(const at::Tensor& self, const at::Tensor& bins,
                                                         const OptT& weight, bool density) {
  return at::native::histogram(self, bins, weight, density);
}
std::tuple<at::Tensor&, at::Tensor&> histogram_bins_tensor_out(const at::Tensor& self, const at::Tensor& bins,
                                                               const OptT& weight, bool density, at::Tensor& hist,
                                                               at::Tensor& edges) {
  return at::native::histogram_out(self, bins, weight, density, hist, edges);
}
std::tuple<at::Tensor, at::Tensor> histogram_bin_ct(const at::Tensor& self, int64_t bins, Range range,
                                                    const OptT& weight, bool density) {
  return at::native::histogram(self, bins, range, weight, density);
}
std::tuple<at::Tensor&, at::Tensor&> histogram_bin_ct_out(const at::Tensor& self, int64_t bins, Range range,
                                                          const OptT& weight, bool density, at::Tensor& hist,
                                                          at::Tensor& edges) {
  return at::native::histogram_out(self, bins, range, weight, density, hist, edges);
}
at::Tensor histogramdd_from_bin_cts(const at::Tensor& self, at::IntArrayRef bins, Range range, const OptT& weight,
                                    bool density) {
  return at::native::_histogramdd(self, bins, range, weight, density);
}
at::Tensor histogramdd_from_bin_tensors(const at::Tensor& self, at::TensorList bins, const OptT& weight, bool density) {
  return at::native::_histogramdd(self, bins, weight, density);
}

at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights_opt, int64_t minlength) {
  const at::Tensor weights = weights_opt.has_value() ? *weights_opt : at::Tensor();
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(self.scalar_type(), false), "\"bincount_cpu\" not implemented for '",
                              self.scalar_type(), "'");
  if (self.dim() == 1 && self.numel() == 0) return at::zeros({minlength}, self.options().dtype(at::kLong));
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  TORCH_CHECK(self.amin().item<int64_t>() >= 0, "bincount only supports 1-d non-negative integral inputs.");
  if (weights.defined())
    TORCH_CHECK(weights.dim() == 1 && weights.size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  const int64_t nbins = std::max(self.amax().item<int64_t>() + 1, minlength);
  const bool wf = weights.defined();
  // weights of another dtype give a float64 result, as on CPU: no kernel here (the guarded fallback)
  if (wf && weights.scalar_type() != at::kFloat) raise_no_float64_kernel("bincount");
  const bool wide = self.scalar_type() == at::kLong;
  const std::string bin_of =
      std::string("fn bin_of(t: u32) -> u32 { return ") + (wide ? "xv(t).x" : "u32(xv(t))") + "; }\n";
  at::Tensor c = histogram_words(self.contiguous(), wf ? weights.contiguous() : at::Tensor(), nbins, bin_of,
                                 std::nullopt, wf ? "bincount:w" : "bincount");
  return wf ? c.view(at::kFloat).clone() : c.to(at::kLong);
}

// ---- isin ----
// ATen's structured isin is device-generic: a large test set goes through isin_sorting (_unique, cat,
// stable sort, index_copy_: all native here), a small one through isin_default_stub, which is this
// kernel: each element compared with every test element in the promoted dtype, as CPU does.
void isin_default_kernel(const at::Tensor& elements, const at::Tensor& test_elements, bool invert,
                         const at::Tensor& out) {
  const at::ScalarType common = at::result_type(elements, test_elements);
  check_kernel_dtype(common, "isin");
  no_complex(common, "isin");
  const at::Tensor e = elements.to(common).contiguous();
  const at::Tensor t = test_elements.to(common).reshape(-1).contiguous();
  if (t.numel() == 0) {  // nothing to find: ATen already filled out with `invert`
    out.fill_(invert);
    return;
  }
  const at::Tensor o = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  // float64 compares as binary64 values (f64_eq: NaN is never found, -0.0 finds +0.0), as CPU's ==.
  const CT ct = common == at::kDouble ? CT::F64 : compute_type(common);
  Kernel k(std::string("isin:") + (ct == CT::F64 ? "f64" : wgsl_type(ct)));
  const int E = k.in(e, ct), TE = k.in(t, ct), O = k.out(o, CT::I32);
  k.param_index("n", e.numel());  // elements
  k.param_index("tn", t.numel());  // test elements
  k.param_index("e_off", e.storage_offset());
  k.param_index("t_off", t.storage_offset());
  k.param_index("o_off", o.storage_offset());
  k.param("invert", invert ? 1u : 0u);
  k.launch(grid(e.numel()), [&] {
    auto n = [](int i) { return std::to_string(i); };
    const std::string eq = ct == CT::F64   ? "f64_eq(x, ld" + n(TE) + "(P.t_off + j))"
                           : ct == CT::I64 ? "all(x == ld" + n(TE) + "(P.t_off + j))"
                                           : "x == ld" + n(TE) + "(P.t_off + j)";
    return kernel::library("per_element") +
           "fn run(i: u32) {\n"
           "  let x = ld" +
           n(E) +
           "(P.e_off + i);\n  var found = false;\n"
           "  for (var j = 0u; j < P.tn; j = j + 1u) { if (" +
           eq +
           ") { found = true; break; } }\n"
           "  st" +
           n(O) + "(P.o_off + i, select(0i, 1i, found != (P.invert == 1u)));\n}\n";
  });
  if (!o.is_same(out)) out.copy_(o);
}

// ATen's isin.Scalar_Tensor wraps the scalar as a float64 tensor on the device; here it becomes a
// 0-dim tensor of the promoted dtype (cast as CPU casts it: 300 against uint8 is 44).
at::Tensor& isin_scalar_tensor_out(const at::Scalar& element, const at::Tensor& test_elements, bool assume_unique,
                                   bool invert, at::Tensor& out) {
  const at::ScalarType common = at::result_type(element, test_elements);
  check_kernel_dtype(common, "isin");
  no_complex(common, "isin");
  const at::Tensor e = at::scalar_tensor(cast_scalar(element, common), test_elements.options().dtype(common));
  return at::isin_out(out, e, test_elements, assume_unique, invert);
}
at::Tensor isin_scalar_tensor(const at::Scalar& element, const at::Tensor& test_elements, bool assume_unique,
                              bool invert) {
  at::Tensor out = at::empty({}, test_elements.options().dtype(at::kBool));
  return isin_scalar_tensor_out(element, test_elements, assume_unique, invert, out);
}

}  // namespace

WEBGPU_STUB(isin_default_stub, isin_default_kernel)
WEBGPU_STUB(histogramdd_stub, histogramdd_kernel)
WEBGPU_STUB(histogramdd_linear_stub, histogramdd_linear_kernel)
WEBGPU_STUB(histogram_select_outer_bin_edges_stub, histogram_select_outer_bin_edges)

WEBGPU_LIBRARY_IMPL(m) {
  WEBGPU_IMPL_OUT(m, "sort", "values", sort_plain);
  m.impl("sort.stable", TORCH_FN(sort_stable));
  m.impl("sort.values_stable", TORCH_FN(sort_out));
  WEBGPU_IMPL_OUT(m, "topk", "values", topk);
  WEBGPU_IMPL_OUT(m, "kthvalue", "values", kthvalue);
  m.impl("median", TORCH_FN(median_all));
  m.impl("median.dim", TORCH_FN(median_dim));
  m.impl("median.dim_values", TORCH_FN(median_dim_out));
  m.impl("nanmedian", TORCH_FN(nanmedian_all));
  m.impl("nanmedian.dim", TORCH_FN(nanmedian_dim));
  m.impl("nanmedian.dim_values", TORCH_FN(nanmedian_dim_out));
  WEBGPU_IMPL_OUT(m, "mode", "values", mode);
  m.impl("_unique2", TORCH_FN(unique2));
  m.impl("_unique", TORCH_FN(unique1));
  m.impl("unique_consecutive", TORCH_FN(unique_consecutive));
  m.impl("unique_dim", TORCH_FN(unique_dim));
  m.impl("unique_dim_consecutive", TORCH_FN(unique_dim_consecutive));
  m.impl("searchsorted.Tensor", TORCH_FN(searchsorted_t));
  m.impl("searchsorted.Tensor_out", TORCH_FN(searchsorted_out));
  m.impl("searchsorted.Scalar", TORCH_FN(searchsorted_scalar));
  m.impl("searchsorted.Scalar_out", TORCH_FN(searchsorted_scalar_out));
  m.impl("bucketize.Tensor", TORCH_FN(bucketize_t));
  m.impl("bucketize.Tensor_out", TORCH_FN(bucketize_out));
  m.impl("bucketize.Scalar", TORCH_FN(bucketize_scalar));
  WEBGPU_IMPL_OUT(m, "histc", "out", histc);
  m.impl("bincount", TORCH_FN(bincount));
  m.impl("histogram.bins_tensor", TORCH_FN(histogram_bins_tensor));
  m.impl("histogram.bins_tensor_out", TORCH_FN(histogram_bins_tensor_out));
  m.impl("histogram.bin_ct", TORCH_FN(histogram_bin_ct));
  m.impl("histogram.bin_ct_out", TORCH_FN(histogram_bin_ct_out));
  m.impl("_histogramdd_bin_edges", TORCH_FN(at::native::histogramdd_bin_edges));
  m.impl("_histogramdd_from_bin_cts", TORCH_FN(histogramdd_from_bin_cts));
  m.impl("_histogramdd_from_bin_tensors", TORCH_FN(histogramdd_from_bin_tensors));
  using T = const at::Tensor&;
  using S = const at::Scalar&;
  structured::reg<at::native::structured_isin_Tensor_Tensor_out, T, T, bool, bool>(m, "isin.Tensor_Tensor",
                                                                                   "isin.Tensor_Tensor_out");
  structured::reg<at::native::structured_isin_Tensor_Scalar_out, T, S, bool, bool>(m, "isin.Tensor_Scalar",
                                                                                   "isin.Tensor_Scalar_out");
  m.impl("isin.Scalar_Tensor", TORCH_FN(isin_scalar_tensor));
  m.impl("isin.Scalar_Tensor_out", TORCH_FN(isin_scalar_tensor_out));
}

}  // namespace webgpu::ops
