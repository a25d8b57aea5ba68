// The index engine (engines/index.h): the one kernel template behind gather, scatter (src, value,
// reduce), scatter_add, scatter_reduce, index.Tensor, index_put_, index_select, index_add,
// index_copy, index_fill, index_reduce, take, put_, embedding and its dense backward (their
// registrations and checks: ops/index_ops.cpp).
//
// The kernel template (wgsl/kernels/index.wgsl helpers) serves them all: it walks an iteration shape with a
// destination, an optional source (or a scalar) and K index operands, each with its own strides. An
// index operand's value selects a position along a "target" dimension of the indexed operand (the
// source for gathers, the destination for scatters). Indices are checked on the device: a bad one
// is reported through the Stream's error words (Kernel::error_flag) and its element is skipped, so
// the next synchronisation raises IndexError and nothing is ever written from a clamped index.
// Accumulating scatters use atomics: compare-exchange loops on the 32-bit word that holds the
// element (floats, sub-word types), atomicAdd for int32 and (with a carry) int64 sums; int64 products,
// maxima and minima loop serially over the scatter dim in one invocation per destination slice,
// which also reproduces CPU's order exactly.
#include <ATen/ATen.h>

#include <cstring>
#include <sstream>
#include <tuple>

#include "engines/index.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"

namespace webgpu::ops {

namespace {

CT reduce_ct(at::ScalarType t) {
  if (is_float(t)) return CT::F32;
  if (t == at::kLong) return CT::I64;
  return CT::I32;
}

// The raw bits of scalar s stored as dtype t (as CPU's cast to t).
std::pair<uint32_t, uint32_t> scalar_raw(const c10::Scalar& s, at::ScalarType t) {
  at::Tensor c = at::scalar_tensor(s, at::TensorOptions().dtype(t).device(at::kCPU));
  uint64_t bits = 0;
  std::memcpy(&bits, c.data_ptr(), c.element_size());
  return {uint32_t(bits), uint32_t(bits >> 32)};
}

std::string combine_expr(IndexRed r, CT ct) {
  switch (r) {
    case IndexRed::Assign: return "b";
    case IndexRed::Add: return ct == CT::I64 ? "i64_add(a, b)" : "a + b";
    case IndexRed::Mul: return ct == CT::I64 ? "i64_mul(a, b)" : "a * b";
    case IndexRed::Max: return ct == CT::I64 ? "i64_max(a, b)" : ct == CT::F32 ? "max_nan(a, b)" : "max(a, b)";
    case IndexRed::Min: return ct == CT::I64 ? "i64_min(a, b)" : ct == CT::F32 ? "min_nan(a, b)" : "min(a, b)";
  }
  return "b";
}

}  // namespace

void run_index(IndexPlan& P) {
  int64_t numel = 1;
  for (int64_t s : P.shape) numel *= s;
  if (numel == 0) return;
  const int K = int(P.idx.size());
  TORCH_INTERNAL_ASSERT(int(P.tgt.size()) == K);
  const bool has_src = P.src.t.defined();
  // Operands in kernel order: dst, src, indices.
  std::vector<IndexOperand*> ops = {&P.dst};
  if (has_src) ops.push_back(&P.src);
  for (auto& x : P.idx) ops.push_back(&x);
  const int R0 = int(P.shape.size());
  for (auto* o : ops) TORCH_INTERNAL_ASSERT(int(o->strides.size()) == R0);

  // Serial dim last; drop size-1 dims; merge dims that are contiguous with each other in every operand.
  std::vector<int> order;
  for (int d = 0; d < R0; ++d)
    if (d != P.serial_dim && P.shape[d] != 1) order.push_back(d);
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides(ops.size());
  for (int d : order) {
    bool merge = !sizes.empty();
    for (size_t j = 0; merge && j < ops.size(); ++j) merge = strides[j].back() == ops[j]->strides[d] * P.shape[d];
    if (merge) {
      sizes.back() *= P.shape[d];
      for (size_t j = 0; j < ops.size(); ++j) strides[j].back() = ops[j]->strides[d];
    } else {
      sizes.push_back(P.shape[d]);
      for (size_t j = 0; j < ops.size(); ++j) strides[j].push_back(ops[j]->strides[d]);
    }
  }
  const bool serial = P.serial_dim >= 0;
  const int64_t serial_n = serial ? P.shape[P.serial_dim] : 1;
  const int R = int(sizes.size());
  const int64_t npar = numel / serial_n;

  const at::ScalarType dt = P.dst.t.scalar_type();
  const bool scatter = P.mode == IndexMode::Scatter;
  const CT ct = P.red == IndexRed::Assign ? CT::RAW : reduce_ct(dt);
  TORCH_CHECK_NOT_IMPLEMENTED(P.red == IndexRed::Assign || !kernel::is_uint_fp8(dt), "\"", P.op,
                              "\" not implemented for '", c10::toString(dt), "' on webgpu");
  const int64_t isz = P.dst.t.element_size();
  const bool atomic_dst = scatter && (P.red != IndexRed::Assign || isz < 4);
  TORCH_CHECK(!serial || scatter, "webgpu: internal: serial index kernel must scatter");

  Kernel k("index:" + std::to_string(R) + ":" + std::to_string(K) + (serial ? "s" : "p") + (scatter ? "S" : "G") +
           std::to_string(int(P.red)) + (has_src ? "t" : "c") + (P.allow_neg ? "n" : "u") + (P.check ? "k" : "-") +
           (P.single ? "1" : ""));
  if (atomic_dst)
    k.out_atomic(P.dst.t, ct);
  else
    k.out(P.dst.t, ct);
  if (has_src) k.in(P.src.t, ct);
  for (auto& x : P.idx) k.in(x.t, CT::I64);
  const uint32_t code = P.check ? k.error_flag(P.op, !P.runtime_error) : 0u;

  // Parameters (WGSL names): n invocations, serial_n steps of the serial dim, sizes (iteration dims,
  // innermost last; dim 0 is never read), per operand j (dst, src, indices): off(j) its storage
  // offset, strides(j * R + d), serial_stride(j); per index operand q: tgt(3q) the indexed size,
  // tgt(3q + 1) its stride, tgt(3q + 2) the dim (for the error); value: the scalar's bits.
  const int nops = int(ops.size());
  auto words = [](int64_t n) { return n > 0 ? (n + 3) / 4 * 4 : 0; };
  const int64_t nwords = 4 + words(R > 1 ? R : 0) + words(nops) + words(int64_t(nops) * R) +
                         (serial ? words(nops) : 0) + words(3 * K) + (has_src ? 0 : 2);
  TORCH_CHECK(nwords <= int64_t(kernel::kMaxParamWords), "webgpu: ", P.op, ": too many index tensors or dimensions (",
              nwords, " parameter words, at most ", kernel::kMaxParamWords, ")");
  k.param_index("n", npar);
  if (P.check) k.param("err_op", code);
  k.param_index("serial_n", serial_n);
  if (R > 1) k.param_array("sizes", sizes);
  {
    std::vector<int64_t> off, st, sst;
    for (int j = 0; j < nops; ++j) {
      off.push_back(ops[j]->t.storage_offset());
      st.insert(st.end(), strides[j].begin(), strides[j].end());
      if (serial) sst.push_back(ops[j]->strides[P.serial_dim]);
    }
    k.param_array("off", off);
    if (R > 0) k.param_array("strides", st);
    if (serial) k.param_array("serial_stride", sst);
  }
  if (K > 0) {
    std::vector<int64_t> tg;
    for (const auto& t : P.tgt) {
      tg.push_back(t.size);
      tg.push_back(t.stride);
      tg.push_back(P.check ? t.dim : 0);
    }
    k.param_array("tgt", tg);
  }
  if (!has_src) {
    uint32_t lo, hi;
    if (ct == CT::RAW) {
      std::tie(lo, hi) = scalar_raw(P.value, dt);
    } else {
      const ScalarBits b = scalar_bits(cast_scalar(P.value, dt), ct);
      lo = b.lo;
      hi = b.hi;
    }
    k.param_i64("value", int64_t(uint64_t(lo) | (uint64_t(hi) << 32)));
  }

  k.launch(P.single ? 1 : grid(npar), [&]() {
    std::ostringstream s;
    const std::string T = wgsl_value_type(ct, dt);
    s << kernel::library("index");
    auto U = [](int64_t i) { return std::to_string(i) + "u"; };
    // Update of destination element e with value b.
    const std::string comb = combine_expr(P.red, ct);
    s << "fn combine(a: " << T << ", b: " << T << ") -> " << T << " { return " << comb << "; }\n";
    if (!scatter || (P.red == IndexRed::Assign && isz >= 4)) {
      s << "fn upd(e: u32, b: " << T << ") { st0(e, b); }\n";
    } else if (isz == 8) {
      if (P.red == IndexRed::Add) {
        s << "fn upd(e: u32, b: vec2<u32>) { let o = aadd0(2u * e, b.x); "
             "aadd0(2u * e + 1u, b.y + select(0u, 1u, o + b.x < o)); }\n";
      } else {
        // Only reached on the serial path (one invocation owns the element).
        s << "fn upd(e: u32, b: vec2<u32>) { st0(e, combine(ld0(e), b)); }\n";
      }
    } else if (isz == 4 && ct == CT::I32 && P.red == IndexRed::Add) {
      s << "fn upd(e: u32, b: i32) { aadd0(e, bitcast<u32>(b)); }\n";
    } else {
      const std::string per = isz == 1 ? "4u" : isz == 2 ? "2u" : "1u";
      const std::string width = isz == 1 ? "8u" : isz == 2 ? "16u" : "0u";
      const std::string mask = isz == 1 ? "0xffu" : isz == 2 ? "0xffffu" : "0xffffffffu";
      s << "fn cvin(r: u32) -> " << T << " { return " << convert_in(dt, ct) << "; }\n";
      s << "fn cvout(v: " << T << ") -> u32 { return " << convert_out(dt, ct) << "; }\n";
      s << "fn upd(e: u32, b: " << T << ") {\n  let w = e / " << per << "; let sh = (e % " << per << ") * " << width
        << ";\n  loop {\n    let old = wd0(w);\n    let cur = cvin((old >> sh) & " << mask
        << ");\n    let nb = (cvout(combine(cur, b)) & " << mask << ") << sh;\n    let nw = (old & ~(" << mask
        << " << sh)) | nb;\n    if (nw == old || cas0(w, old, nw)) { break; }\n  }\n}\n";
    }
    s << "fn work(i: u32) {\n  var rem = i;\n";
    for (int j = 0; j < nops; ++j) s << "  var o" << j << " = P_off(" << U(j) << ");\n";
    for (int d = R - 1; d >= 0; --d) {
      const std::string n = "P_sizes(" + U(d) + ")";
      s << "  { let c = " << (d == 0 ? std::string("rem") : "rem % " + n) << ";"
        << (d == 0 ? "" : " rem = rem / " + n + ";");
      for (int j = 0; j < nops; ++j) s << " o" << j << " = o" << j << " + c * P_strides(" << U(j * R + d) << ");";
      s << " }\n";
    }
    s << "  for (var it = 0u; it < P.serial_n; it = it + 1u) {\n";
    s << "    var ok = true; var t = 0u;\n";
    const int first_idx = has_src ? 2 : 1;
    for (int q = 0; q < K; ++q) {
      const int j = first_idx + q;
      const std::string size = "P_tgt(" + U(3 * q) + ")";
      s << "    { let v = ld" << j << "(o" << j << "); let w = wrap_index(v, " << size << ", "
        << (P.allow_neg ? "true" : "false") << ");\n      if (w == BAD_INDEX) { ok = false; ";
      if (P.check) s << "report_index_error(P.err_op, P_tgt(" << U(3 * q + 2) << "), v, " << size << ");";
      s << " } else { t = t + w * P_tgt(" << U(3 * q + 1) << "); } }\n";
    }
    std::string val;
    if (has_src) {
      val = scatter ? "ld1(o1)" : "ld1(o1 + t)";
    } else if (ct == CT::I64 || (ct == CT::RAW && isz == 8)) {
      val = "P.value";
    } else if (ct == CT::F32) {
      val = "bitcast<f32>(P.value.x)";
    } else if (ct == CT::I32) {
      val = "bitcast<i32>(P.value.x)";
    } else {
      val = "P.value.x";
    }
    s << "    if (ok) { " << (scatter ? "upd(o0 + t, " + val + ");" : "upd(o0, " + val + ");") << " }\n";
    if (serial)
      for (int j = 0; j < nops; ++j) s << "    o" << j << " = o" << j << " + P_serial_stride(" << U(j) << ");\n";
    s << "  }\n}\n";
    s << "@compute @workgroup_size(" << kernel::kWG << ") fn main(@builtin(workgroup_id) wid: vec3<u32>, "
      << "@builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
      << "  let i = linear_id(wid, nwg, lid, " << kernel::kWG << "u);\n";
    if (P.single)
      s << "  if (i == 0u) { for (var j = 0u; j < P.n; j = j + 1u) { work(j); } }\n}\n";
    else
      s << "  if (i < P.n) { work(i); }\n}\n";
    return s.str();
  });
}

// Strides of t over an iteration shape of t's rank (0-dim tensors count as [1]).
std::vector<int64_t> strides_of(const at::TensorBase& t, int rank) {
  std::vector<int64_t> s(rank, 0);
  for (int d = 0; d < rank && d < t.dim(); ++d) s[d] = t.stride(d);
  return s;
}

}  // namespace webgpu::ops
