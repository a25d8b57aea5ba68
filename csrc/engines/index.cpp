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
// An operand past maxStorageBufferBindingSize (GPT-2's 50257 x 768 embedding on a 128 MiB adapter)
// is split over several dispatches, each binding windows that fit (run_index, split() below).
#include <ATen/ATen.h>

#include <cstring>
#include <sstream>
#include <tuple>

#include "engines/index.h"
#include "kernel/device.h"
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

// A share of a plan whose operands do not all fit one binding (run_index splits it): the iteration
// shape (the plan's dims), each operand's element offset (kernel order: dst, src, indices) and, per
// target, the window [lo, hi) of index values this dispatch applies; elements whose index falls
// outside are skipped (another dispatch applies them). Of the dispatches covering one element, only
// the one with report set reports its bad indices, so each is reported once.
struct Slice {
  std::vector<int64_t> shape, off, lo, hi;
  bool report = true;
};

// The operand the index values address: the destination of a scatter, the source of a gather.
int indexed_operand(const IndexPlan& P) { return P.mode == IndexMode::Scatter ? 0 : 1; }

// The first and last element of its storage that operand j can reach in slice s.
std::pair<int64_t, int64_t> reach(const IndexPlan& P, const std::vector<IndexOperand*>& ops, const Slice& s, int j) {
  int64_t first = s.off[j], last = s.off[j];
  for (size_t d = 0; d < s.shape.size(); ++d) {
    const int64_t e = (s.shape[d] - 1) * ops[j]->strides[d];
    (e < 0 ? first : last) += e;
  }
  if (j == indexed_operand(P))
    for (size_t q = 0; q < P.tgt.size(); ++q) {
      if (s.hi[q] <= s.lo[q]) continue;  // an empty dim: every index is bad, none is applied
      const int64_t a = s.lo[q] * P.tgt[q].stride, b = (s.hi[q] - 1) * P.tgt[q].stride;
      first += std::min(a, b);
      last += std::max(a, b);
    }
  return {first, last};
}

// One dispatch: the whole plan (s null: the operands' own tensors and storage offsets) or a slice
// of it, whose operands are bound as views over just the elements the slice reaches.
void dispatch(IndexPlan& P, const std::vector<IndexOperand*>& ops, const Slice* sl) {
  const int K = int(P.idx.size());
  const bool has_src = P.src.t.defined();
  const std::vector<int64_t>& shape = sl ? sl->shape : P.shape;
  const int64_t numel = c10::multiply_integers(shape);
  const int R0 = int(shape.size());
  // Target windows narrower than the indexed size: out-of-window elements are skipped.
  bool windowed = false;
  for (int q = 0; sl && q < K; ++q) windowed |= sl->lo[q] > 0 || sl->hi[q] < P.tgt[q].size;
  std::vector<at::Tensor> views;
  if (sl)
    for (int j = 0; j < int(ops.size()); ++j) {
      const auto [first, last] = reach(P, ops, *sl, j);
      views.push_back(at::Tensor(ops[j]->t).as_strided({last - first + 1}, {1}, first));
    }
  auto bound = [&](int j) -> const at::TensorBase& { return sl ? views[j] : ops[j]->t; };

  // Serial dim last; drop size-1 dims; merge dims that are contiguous with each other in every operand.
  std::vector<int> order;
  for (int d = 0; d < R0; ++d)
    if (d != P.serial_dim && shape[d] != 1) order.push_back(d);
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides(ops.size());
  for (int d : order) {
    bool merge = !sizes.empty();
    for (size_t j = 0; merge && j < ops.size(); ++j) merge = strides[j].back() == ops[j]->strides[d] * shape[d];
    if (merge) {
      sizes.back() *= shape[d];
      for (size_t j = 0; j < ops.size(); ++j) strides[j].back() = ops[j]->strides[d];
    } else {
      sizes.push_back(shape[d]);
      for (size_t j = 0; j < ops.size(); ++j) strides[j].push_back(ops[j]->strides[d]);
    }
  }
  const bool serial = P.serial_dim >= 0;
  const int64_t serial_n = serial ? shape[P.serial_dim] : 1;
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
           (P.single ? "1" : "") + (windowed ? "w" : ""));
  if (atomic_dst)
    k.out_atomic(bound(0), ct);
  else
    k.out(bound(0), ct);
  for (int j = 1; j < int(ops.size()); ++j) k.in(bound(j), j == 1 && has_src ? ct : CT::I64);
  const uint32_t code = P.check ? k.error_flag(P.op, !P.runtime_error) : 0u;

  // Parameters (WGSL names): n invocations, serial_n steps of the serial dim, sizes (iteration dims,
  // innermost last; dim 0 is never read), per operand j (dst, src, indices): off(j) its storage
  // offset, strides(j * R + d), serial_stride(j); per index operand q: tgt(3q) the indexed size,
  // tgt(3q + 1) its stride, tgt(3q + 2) the dim (for the error); value: the scalar's bits.
  const int nops = int(ops.size());
  auto words = [](int64_t n) { return n > 0 ? (n + 3) / 4 * 4 : 0; };
  const int64_t nwords = 4 + words(R > 1 ? R : 0) + words(nops) + words(int64_t(nops) * R) +
                         (serial ? words(nops) : 0) + words(3 * K) + (has_src ? 0 : 2) +
                         (windowed ? words(2 * K) + 1 : 0);
  TORCH_CHECK(nwords <= int64_t(kernel::kMaxParamWords), "webgpu: ", P.op, ": too many index tensors or dimensions (",
              nwords, " parameter words, at most ", kernel::kMaxParamWords, ")");
  k.param_index("n", npar);
  if (P.check) k.param("err_op", code);
  k.param_index("serial_n", serial_n);
  if (R > 1) k.param_array("sizes", sizes);
  {
    std::vector<int64_t> off, st, sst;
    for (int j = 0; j < nops; ++j) {
      off.push_back(sl ? sl->off[j] : ops[j]->t.storage_offset());
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
  if (windowed) {
    std::vector<int64_t> win;
    for (int q = 0; q < K; ++q) {
      win.push_back(sl->lo[q]);
      win.push_back(sl->hi[q]);
    }
    k.param_array("win", win);
    if (P.check) k.param("rep", sl->report ? 1u : 0u);
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
      if (P.check)
        s << (windowed ? "if (P.rep != 0u) { " : "") << "report_index_error(P.err_op, P_tgt(" << U(3 * q + 2)
          << "), v, " << size << ");" << (windowed ? " }" : "");
      s << " }";
      if (windowed)
        s << " else if (w < P_win(" << U(2 * q) << ") || w >= P_win(" << U(2 * q + 1) << ")) { ok = false; }";
      s << " else { t = t + w * P_tgt(" << U(3 * q + 1) << "); } }\n";
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

// Splits slice s until every operand in a block past the binding limit reaches at most `budget`
// bytes, then dispatches the pieces in order. An operand too wide because of its indexed dims gets
// windows of the index range (each dispatch applies the elements whose index falls in its window);
// one too wide because of the iteration shape gets pieces of the shape. Each cut splits the dim
// adding most to the offending span into as few pieces as fit (at least two). Updates to one element
// of the destination stay in one dispatch (windows of a scatter partition the destination) or in
// dispatches recorded in their iteration order, so serial and single-invocation scatters keep CPU's
// order and results are bit-identical to one dispatch's wherever that one's order is fixed.
void split(IndexPlan& P, const std::vector<IndexOperand*>& ops, const std::vector<const void*>& blocks, const Slice& s,
           uint64_t budget) {
  const int n = int(ops.size());
  std::vector<int64_t> lo(n), hi(n);  // bytes of the block each operand reaches
  for (int j = 0; j < n; ++j) {
    const auto [first, last] = reach(P, ops, s, j);
    const int64_t isz = ops[j]->t.element_size();
    lo[j] = first * isz;
    hi[j] = (last + 1) * isz;
  }
  // The widest operand of a block whose operands together reach too far (they share one binding).
  int worst = -1;
  for (int j = 0; j < n; ++j) {
    if (!blocks[j]) continue;
    int64_t a = lo[j], b = hi[j];
    for (int i = 0; i < n; ++i)
      if (blocks[i] == blocks[j]) a = std::min(a, lo[i]), b = std::max(b, hi[i]);
    if (uint64_t(b - a) > budget && (worst < 0 || hi[j] - lo[j] > hi[worst] - lo[worst])) worst = j;
  }
  if (worst < 0) {
    dispatch(P, ops, &s);
    return;
  }
  // What each dim adds to the worst operand's span: iteration dims 0..R-1, then targets R..R+K-1.
  const int R = int(s.shape.size()), K = int(P.tgt.size());
  const int64_t isz = ops[worst]->t.element_size();
  const bool indexed = worst == indexed_operand(P);
  auto extent = [&](int c) { return c < R ? s.shape[c] : s.hi[c - R] - s.lo[c - R]; };
  auto step = [&](int c) { return std::abs(c < R ? ops[worst]->strides[c] : indexed ? P.tgt[c - R].stride : 0) * isz; };
  int cut = -1;
  for (int c = 0; c < R + K; ++c)
    if (extent(c) > 1 && step(c) > 0 && (cut < 0 || (extent(c) - 1) * step(c) > (extent(cut) - 1) * step(cut))) cut = c;
  TORCH_CHECK(cut >= 0, "webgpu: ", P.op, ": an operand spans ", hi[worst] - lo[worst],
              " bytes, more than this adapter's maxStorageBufferBindingSize limit (", budget,
              " bytes usable), and its operands cannot be split to fit");
  // One invocation walking every element in order: cut iteration dims outermost first, so the
  // pieces run in that order (windows of the target are safe in any order).
  if (P.single && cut < R)
    for (int c = 0; c < R; ++c)
      if (s.shape[c] > 1) {
        cut = c;
        break;
      }
  const int64_t ext = extent(cut), st = step(cut);
  int64_t chunk = 1;
  if (st > 0) {
    const int64_t rest = (hi[worst] - lo[worst]) - (ext - 1) * st;
    if (int64_t(budget) > rest) chunk = (int64_t(budget) - rest) / st + 1;
  }
  chunk = std::max<int64_t>(1, std::min(chunk, (ext + 1) / 2));
  for (int64_t a = 0; a < ext; a += chunk) {
    const int64_t len = std::min(chunk, ext - a);
    Slice c = s;
    if (cut < R) {
      c.shape[cut] = len;
      for (int j = 0; j < n; ++j) c.off[j] += a * ops[j]->strides[cut];
    } else {
      c.lo[cut - R] = s.lo[cut - R] + a;
      c.hi[cut - R] = s.lo[cut - R] + a + len;
      c.report = s.report && a == 0;
    }
    split(P, ops, blocks, c, budget);
  }
}

}  // namespace

void run_index(IndexPlan& P) {
  int64_t numel = 1;
  for (int64_t s : P.shape) numel *= s;
  if (numel == 0) return;
  const int K = int(P.idx.size());
  TORCH_INTERNAL_ASSERT(int(P.tgt.size()) == K);
  // Operands in kernel order: dst, src, indices.
  std::vector<IndexOperand*> ops = {&P.dst};
  if (P.src.t.defined()) ops.push_back(&P.src);
  for (auto& x : P.idx) ops.push_back(&x);
  const int R = int(P.shape.size());
  for (auto* o : ops) TORCH_INTERNAL_ASSERT(int(o->strides.size()) == R);
  // Every block within one binding (the usual case): one dispatch binding whole blocks.
  std::vector<const void*> blocks(ops.size(), nullptr);  // blocks past the limit
  bool big = false;
  for (size_t j = 0; j < ops.size(); ++j)
    if (!kernel::block_fits(ops[j]->t)) {
      blocks[j] = kernel::block_id(ops[j]->t);
      big = true;
    }
  if (!big) {
    dispatch(P, ops, nullptr);
    return;
  }
  // Some block is bound as a window (kernel::window): each dispatch's operands must reach at most
  // this many bytes (the window's start is aligned down, its size rounded up to words).
  const kernel::DeviceInfo& dev = kernel::device_info(P.dst.t);
  const uint64_t max_bind = std::min<uint64_t>(dev.max_binding, 0xfffffff0ull) / 4 * 4;
  Slice s;
  s.shape = P.shape;
  for (auto* o : ops) s.off.push_back(o->t.storage_offset());
  for (const auto& t : P.tgt) {
    s.lo.push_back(0);
    s.hi.push_back(t.size);
  }
  split(P, ops, blocks, s, max_bind - std::max<uint64_t>(dev.min_storage_offset_alignment, 4) - 4);
}

// Strides of t over an iteration shape of t's rank (0-dim tensors count as [1]).
std::vector<int64_t> strides_of(const at::TensorBase& t, int rank) {
  std::vector<int64_t> s(rank, 0);
  for (int d = 0; d < rank && d < t.dim(); ++d) s[d] = t.stride(d);
  return s;
}

}  // namespace webgpu::ops
