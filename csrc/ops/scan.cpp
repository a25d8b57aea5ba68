// Scans along a dimension: cumsum, cumprod (structured, through their DispatchStubs), cummax and
// cummin with indices (_cummax_helper/_cummin_helper), logcumsumexp (_logcumsumexp).
// The scanned dimension is moved last and made contiguous in a work dtype (float32 for floating
// inputs, half types included; float64 for float64, in emulated binary64; int64 for integers, as CPU
// accumulates them), rows are scanned by
// wgsl/kernels/scan.wgsl (tiles of 1024 per workgroup, a reduce + recursive scan + carry pass for long rows)
// and the result is copied back into the (possibly strided) output in its dtype.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/ReduceOps.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <torch/library.h>

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

enum class Op { Sum, Prod, Max, Min, Lse };
constexpr int64_t kTile = 1024;

const char* op_name(Op op) {
  switch (op) {
    case Op::Sum: return "sum";
    case Op::Prod: return "prod";
    case Op::Max: return "max";
    case Op::Min: return "min";
    case Op::Lse: return "lse";
  }
  return "?";
}

// WGSL definitions of T, S, ident and comb for an op over f32, int64, float64 or complex64 (all three
// vec2<u32>: complex as its (real, imag) float32 bits; sums and products only) values.
std::string scan_defs(Op op, bool i64, bool f64, bool c64) {
  std::string s = i64 || f64 || c64 ? "alias T = vec2<u32>;\n" : "alias T = f32;\n";
  s += "struct S { v: T, i: u32 }\n";
  s += "fn rt_inf() -> f32 { return bitcast<f32>(0x7f800000u | (P.n & 0u)); }\n";
  s += "fn isnanf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }\n";
  // CPU's scans start at +0.0 (a leading -0.0 sums to +0.0).
  const std::string zero = f64 || i64 || c64 ? "vec2<u32>(0u, 0u)" : "0.0";
  const std::string one = f64   ? "vec2<u32>(0u, 0x3ff00000u)"
                          : i64 ? "vec2<u32>(1u, 0u)"
                          : c64 ? "vec2<u32>(0x3f800000u, 0u)"
                                : "1.0";
  const char* add = f64   ? "f64_add(a.v, b.v)"
                    : i64 ? "i64_add(a.v, b.v)"
                    : c64 ? "bitcast<vec2<u32>>(bitcast<vec2<f32>>(a.v) + bitcast<vec2<f32>>(b.v))"
                          : "a.v + b.v";
  // c10::complex's product: (ac - bd, ad + bc).
  if (c64)
    s += "fn cmul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { let x = bitcast<vec2<f32>>(a); "
         "let y = bitcast<vec2<f32>>(b); return bitcast<vec2<u32>>(vec2<f32>(x.x * y.x - x.y * y.y, "
         "x.x * y.y + x.y * y.x)); }\n";
  const char* mul = f64 ? "f64_mul(a.v, b.v)" : i64 ? "i64_mul(a.v, b.v)" : c64 ? "cmul(a.v, b.v)" : "a.v * b.v";
  switch (op) {
    case Op::Sum:
      s += "fn ident() -> S { return S(" + zero + ", 0u); }\n";
      s += std::string("fn comb(a: S, b: S) -> S { return S(") + add + ", 0u); }\n";
      break;
    case Op::Prod:
      s += "fn ident() -> S { return S(" + one + ", 0u); }\n";
      s += std::string("fn comb(a: S, b: S) -> S { return S(") + mul + ", 0u); }\n";
      break;
    case Op::Max:
    case Op::Min: {
      // The later element wins ties; a NaN beats everything and a later NaN beats an earlier one
      // (CPU: `if (isnan(x) || (!isnan(out) && x >= out))`).
      const char* cmp = op == Op::Max ? ">=" : "<=";
      s += "fn ident() -> S { return S(" + zero + ", 0xffffffffu); }\n";
      s += "fn takes(a: T, b: T) -> bool { ";
      if (f64)
        s += std::string("return f64_is_nan(b) || (!f64_is_nan(a) && ") +
             (op == Op::Max ? "f64_le(a, b)" : "f64_le(b, a)") + "); }\n";
      else if (i64)
        s += std::string("return ") + (op == Op::Max ? "i64_le(a, b)" : "i64_le(b, a)") + "; }\n";
      else
        s += std::string("return isnanf(b) || (!isnanf(a) && b ") + cmp + " a); }\n";
      s += "fn comb(a: S, b: S) -> S { if (a.i == 0xffffffffu) { return b; } if (b.i == 0xffffffffu) { return a; }"
           " if (takes(a.v, b.v)) { return b; } return a; }\n";
      break;
    }
    case Op::Lse:
      s += "fn ident() -> S { return S(-rt_inf(), 0u); }\n";
      // log(exp(x) + exp(y)) as CPU's _log_add_exp_helper: equal infinities stay as they are.
      // log1p through log(u) * y / (u - 1), u = 1 + y (exact to a few ulp; WGSL has no log1p).
      s += "fn log1p_(y: f32) -> f32 { let u = 1.0 + y; if (u == 1.0) { return y; } return log(u) * (y / (u - 1.0)); "
           "}\n";
      s += "fn comb(a: S, b: S) -> S { let x = a.v; let y = b.v;\n"
           "  if (isnanf(x) || isnanf(y)) { return S(x + y, 0u); }\n"
           "  let mn = min(x, y); let mx = max(x, y);\n"
           "  if (mn != mx || abs(mn) < rt_inf()) { return S(mx + log1p_(exp(mn - mx)), 0u); }\n"
           "  return S(x, 0u); }\n";
      break;
  }
  return s;
}

bool has_idx(Op op) { return op == Op::Max || op == Op::Min; }

// One pass over x [rows, n] (contiguous, f32 or int64). reduce: y gets one S per tile ([rows, nb]).
// seg: x is a segment of one row past the binding limit whose carries c (and ci) start at the tile
// before its first (scan_long_row).
void launch_scan(const at::Tensor& x, const at::Tensor& xi, const at::Tensor& c, const at::Tensor& ci,
                 const at::Tensor& y, const at::Tensor& yi, int64_t rows, int64_t n, int64_t nb, Op op, bool reduce,
                 bool seg = false) {
  const bool i64 = x.scalar_type() == at::kLong;
  const bool f64 = x.scalar_type() == at::kDouble;
  const bool c64 = x.scalar_type() == at::kComplexFloat;
  const CT ct = i64 ? CT::I64 : f64 ? CT::F64 : c64 ? CT::RAW : CT::F32;
  const bool idx = has_idx(op), carry = c.defined(), idx_in = xi.defined();
  // float64 rows up to a tile run in order, one invocation per row: CPU's left-to-right order, so
  // cumsum/cumprod are bit-identical to CPU's there (longer rows: a fixed tree, within a few ulps).
  const bool short_rows = !reduce && !carry && (n <= 16 || (f64 && n <= kTile));
  Kernel k(std::string("scan:") + op_name(op) +
           (f64   ? ":d"
            : c64 ? ":c"
                  : "") +
           (reduce       ? ":r"
            : short_rows ? ":q"
                         : ":s") +
           (carry ? "c" : "") + (idx_in ? "i" : "") + (seg ? "g" : ""));
  const int ox = k.in(x, ct);
  const int oxi = idx_in ? k.in(xi, CT::I32) : -1;
  const int oc = carry ? k.in(c, ct) : -1;
  const int oci = carry && idx ? k.in(ci, CT::I32) : -1;
  const int oy = k.out(y, ct);
  const int oyi = idx ? k.out(yi, CT::I32) : -1;
  TORCH_CHECK(rows * n <= int64_t(UINT32_MAX), "webgpu: scan: numel (", rows * n,
              ") does not fit the 32-bit indexing of webgpu kernels");
  k.param_index("n", n);
  k.param_index("rows", rows);
  if (!short_rows) k.param_index("tiles", nb);
  k.param_index("x_off", x.storage_offset());
  if (idx_in) k.param_index("xi_off", xi.storage_offset());
  if (carry) k.param_index("c_off", c.storage_offset());
  if (oci >= 0) k.param_index("ci_off", ci.storage_offset());
  k.param_index("y_off", y.storage_offset());
  if (oyi >= 0) k.param_index("yi_off", yi.storage_offset());
  k.launch(short_rows ? grid(rows) : uint64_t(rows * nb), [&] {
    auto I = [](int i) { return std::to_string(i); };
    std::string s = scan_defs(op, i64, f64, c64);
    s += "const REDUCE: bool = " + std::string(reduce ? "true" : "false") + ";\n";
    s += "const CARRY: bool = " + std::string(carry ? "true" : "false") + ";\n";
    s += "const SEG: u32 = " + std::string(seg ? "1u" : "0u") + ";\n";
    s += "fn load_x(e: u32) -> T { return ld" + I(ox) + "(P.x_off + e); }\n";
    s += "fn load_xi(e: u32, p: u32) -> u32 { return " +
         (idx_in ? "u32(ld" + I(oxi) + "(P.xi_off + e))" : std::string("p")) + "; }\n";
    s += "fn load_c(e: u32) -> S { return S(";
    s += carry ? "ld" + I(oc) + "(P.c_off + e), " + (oci >= 0 ? "u32(ld" + I(oci) + "(P.ci_off + e))" : "0u")
               : std::string("ident().v, 0u");
    s += "); }\n";
    s += "fn store_y(e: u32, r: S) { st" + I(oy) + "(P.y_off + e, r.v); ";
    if (oyi >= 0) s += "st" + I(oyi) + "(P.yi_off + e, i32(r.i)); ";
    s += "}\n";
    return s + kernel::section("scan", short_rows ? "rows" : "tile");
  });
}

void scan_rows(const at::Tensor& x, const at::Tensor& xi, int64_t rows, int64_t n, Op op, at::Tensor& y,
               at::Tensor& yi);

// scan_rows into y and yi, with every operand within the binding limit.
void scan_rows_fit(const at::Tensor& x, const at::Tensor& xi, int64_t rows, int64_t n, Op op, const at::Tensor& y,
                   const at::Tensor& yi) {
  const int64_t nb = (n + kTile - 1) / kTile;
  at::Tensor c, ci;
  if (nb > 1) {
    at::Tensor agg = at::empty({rows, nb}, x.options());
    at::Tensor aggi = has_idx(op) ? at::empty({rows, nb}, x.options().dtype(at::kInt)) : at::Tensor();
    launch_scan(x, xi, {}, {}, agg, aggi, rows, n, nb, op, true);
    if (has_idx(op) && !xi.defined()) {
      // Tile winners carry their position in the row; the recursive scan keeps them as indices.
    }
    scan_rows(agg, aggi, rows, nb, op, c, ci);
  }
  launch_scan(x, xi, c, ci, y, yi, rows, n, nb, op, false);
}

// One row x ([n], contiguous) past the binding limit: segments of whole tiles that fit, each
// launch binding its segment only. The tiles' totals (one pass per segment) are scanned as usual,
// and each segment's final pass takes the carry of the tile before it, so the result is the unsplit
// one bit for bit. cummax/cummin's indices come from an explicit index operand per segment.
void scan_long_row(const at::Tensor& x, const at::Tensor& xi, int64_t n, Op op, const at::Tensor& y,
                   const at::Tensor& yi) {
  int64_t esz = std::max<int64_t>(x.element_size(), y.element_size());
  if (has_idx(op)) esz = std::max<int64_t>(esz, 8);  // the per-segment arange goes through int64
  const int64_t seg = std::max<int64_t>(1, int64_t(binding_budget(kernel::device_info(x))) / esz / kTile) * kTile;
  const int64_t nb = (n + kTile - 1) / kTile;
  at::Tensor agg = at::empty({1, nb}, x.options());
  at::Tensor aggi = has_idx(op) ? at::empty({1, nb}, x.options().dtype(at::kInt)) : at::Tensor();
  auto index_of = [&](int64_t p0, int64_t len) {
    if (xi.defined()) return xi.narrow(0, p0, len);
    return has_idx(op) ? at::arange(p0, p0 + len, x.options().dtype(at::kInt)) : at::Tensor();
  };
  for (int64_t p0 = 0; p0 < n; p0 += seg) {
    const int64_t len = std::min(seg, n - p0), t0 = p0 / kTile, nbs = (len + kTile - 1) / kTile;
    launch_scan(x.narrow(0, p0, len), index_of(p0, len), {}, {}, agg.narrow(1, t0, nbs),
                aggi.defined() ? aggi.narrow(1, t0, nbs) : aggi, 1, len, nbs, op, true);
  }
  at::Tensor c, ci;
  scan_rows(agg, aggi, 1, nb, op, c, ci);
  c = c.view({-1});
  if (ci.defined()) ci = ci.view({-1});
  for (int64_t p0 = 0; p0 < n; p0 += seg) {
    const int64_t len = std::min(seg, n - p0), t0 = p0 / kTile, nbs = (len + kTile - 1) / kTile;
    const int64_t c0 = t0 > 0 ? t0 - 1 : 0;
    launch_scan(x.narrow(0, p0, len), index_of(p0, len), c.narrow(0, c0, nbs),
                ci.defined() ? ci.narrow(0, c0, nbs) : ci, y.narrow(0, p0, len),
                yi.defined() ? yi.narrow(0, p0, len) : yi, 1, len, nbs, op, false, t0 > 0);
  }
}

// Inclusive scan of each row of x ([rows, n], contiguous, kFloat or kLong) into y (and the
// winning indices into yi, int32, for max/min). xi: the elements' indices (undefined: positions).
// Operands past the binding limit: slices of whole rows that fit (ops/rows.h), or a row at a time
// in segments where one row does not.
void scan_rows(const at::Tensor& x, const at::Tensor& xi, int64_t rows, int64_t n, Op op, at::Tensor& y,
               at::Tensor& yi) {
  y = at::empty({rows, n}, x.options());
  if (has_idx(op)) yi = at::empty({rows, n}, x.options().dtype(at::kInt));
  if (rows * n == 0) return;
  if (!past_binding_limit({{&x, n}, {&xi, n}, {&y, n}, {&yi, n}})) return scan_rows_fit(x, xi, rows, n, op, y, yi);
  if (uint64_t(n * std::max<int64_t>(x.element_size(), 4)) <= binding_budget(kernel::device_info(x))) {
    const int64_t per = rows_per_launch({{&x, n}, {&xi, n}, {&y, n}, {&yi, n}}, rows);
    for (int64_t r0 = 0; r0 < rows; r0 += per) {
      const int64_t k = std::min(per, rows - r0);
      scan_rows_fit(row_slice(x, n, r0, k), xi.defined() ? row_slice(xi, n, r0, k) : xi, k, n, op,
                    row_slice(y, n, r0, k), yi.defined() ? row_slice(yi, n, r0, k) : yi);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    scan_long_row(x[r], xi.defined() ? xi[r] : xi, n, op, y[r], yi.defined() ? yi[r] : yi);
}

at::ScalarType work_dtype(at::ScalarType t) {
  if (t == at::kDouble || t == at::kComplexFloat) return t;
  return at::isFloatingType(t) ? at::kFloat : at::kLong;
}

// Scans self along dim into values (and indices), both shaped like self.
void scan_dim(const at::Tensor& self, int64_t dim, Op op, const at::Tensor& values, const at::Tensor& indices,
              const char* name) {
  check_kernel_dtype(self.scalar_type(), name);
  check_kernel_dtype(values.scalar_type(), name);
  // logcumsumexp needs exp/log, which float64 has no exact kernel for.
  if (op == Op::Lse && (self.scalar_type() == at::kDouble || values.scalar_type() == at::kDouble))
    raise_no_float64_kernel(name);
  // CPU scans the unsigned types into int64 only (cumsum(dtype=torch.uint32) raises).
  TORCH_CHECK_NOT_IMPLEMENTED(!is_uint_fp8(values.scalar_type()), "\"", name, "\" not implemented for '",
                              values.scalar_type(), "' on webgpu");
  // complex64: cumsum and cumprod (in float32 pairs; CPU accumulates in complex128, so results agree
  // within float32 rounding).
  if (op != Op::Sum && op != Op::Prod) {
    no_complex(self.scalar_type(), name);
    no_complex(values.scalar_type(), name);
  }
  if (self.dim() == 0) {
    values.copy_(self);
    if (indices.defined()) indices.zero_();
    return;
  }
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0) return;
  const int64_t n = self.size(dim), rows = self.numel() / n;
  at::Tensor x = self.resolve_conj().resolve_neg().movedim(dim, -1).contiguous();
  const at::ScalarType wd = work_dtype(values.scalar_type());
  if (x.scalar_type() != wd) x = x.to(wd);
  at::Tensor y, yi;
  scan_rows(x.view({rows, n}), {}, rows, n, op, y, yi);
  auto shape = x.sizes();
  values.movedim(dim, -1).copy_(y.view(shape));
  if (indices.defined()) indices.movedim(dim, -1).copy_(yi.view(shape));
}

void cumsum_kernel(const at::Tensor& result, const at::Tensor& self, int64_t dim) {
  scan_dim(self, dim, Op::Sum, result, {}, "cumsum");
}
void cumprod_kernel(const at::Tensor& result, const at::Tensor& self, int64_t dim) {
  scan_dim(self, dim, Op::Prod, result, {}, "cumprod");
}

void cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  scan_dim(self, dim, Op::Max, values, indices, "cummax");
}
void cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  scan_dim(self, dim, Op::Min, values, indices, "cummin");
}

void check_lse_dtype(const at::Tensor& self) {
  no_complex(self.scalar_type(), "logcumsumexp");  // CPU has one; not here (the guarded fallback)
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"logcumsumexp_out_cpu\" not implemented for '",
                              self.scalar_type(), "'");
}

at::Tensor logcumsumexp(const at::Tensor& self, int64_t dim) {
  check_lse_dtype(self);
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  scan_dim(self, dim, Op::Lse, out, {}, "logcumsumexp");
  return out;
}

at::Tensor& logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  check_lse_dtype(self);
  at::native::resize_output(out, self.sizes());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "logcumsumexp: expected out to have dtype ", self.scalar_type(),
              " but got ", out.scalar_type());
  scan_dim(self, dim, Op::Lse, out, {}, "logcumsumexp");
  return out;
}

}  // namespace

WEBGPU_STUB(cumsum_stub, &cumsum_kernel)
WEBGPU_STUB(cumprod_stub, &cumprod_kernel)

WEBGPU_LIBRARY_IMPL(m) {
  using T = const at::Tensor&;
  using OptDtype = std::optional<at::ScalarType>;
  structured::reg<at::native::structured_cumsum_out, T, int64_t, OptDtype>(m, "cumsum", "cumsum.out", "cumsum_");
  structured::reg<at::native::structured_cumprod_out, T, int64_t, OptDtype>(m, "cumprod", "cumprod.out", "cumprod_");
  m.impl("_cummax_helper", TORCH_FN(cummax_helper));
  m.impl("_cummin_helper", TORCH_FN(cummin_helper));
  WEBGPU_IMPL_OUT(m, "_logcumsumexp", "out", logcumsumexp);
}

}  // namespace webgpu::ops
