// Multi-tensor _foreach_* pointwise ops (add, sub, mul, div, lerp, addcmul, addcdiv, sqrt, neg,
// reciprocal, maximum, minimum, clamp_min, clamp_max, copy_, zero_): one dispatch per chunk of
// tensors instead of one per tensor.
//
// A chunk holds as many tensors as the storage bindings (at most 16 distinct blocks) and the
// parameter slot (kernel/params.h, 64 words) allow. Each tensor owns a whole number of workgroups:
// a workgroup finds its tensor j in the prefix table P_wg (uniform across the workgroup), then
// element i of tensor j of every list operand is loaded, the op's float32 expression evaluated (the
// same WGSL as the per-tensor pointwise rows, wgsl/lib/pointwise.wgsl) and the result stored, rounded
// once to the list's dtype. Float32/float16/bfloat16 lists that ATen's fast-route rules accept
// (ATen/native/ForeachUtils.h: one device and dtype, non-overlapping and dense, equal sizes and
// strides, no promotion by the scalars) run here; everything else takes ATen's per-tensor slow path,
// whose checks and errors are CPU's.
#include <ATen/native/ForeachUtils.h>
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "kernel/device.h"
#include "kernel/kernel.h"
#include "ops/common.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using TL = at::TensorList;
using SL = at::ArrayRef<at::Scalar>;

// One operand x<k> of the expression: element i of tensor j of a list, one scalar for every tensor,
// one scalar per tensor, or the single element of a device tensor.
struct Operand {
  enum Kind : char { List = 'l', Scalar = 's', PerTensor = 'p', Device = 'd' };
  Kind kind;
  TL list;
  std::vector<float> vals;
  at::Tensor dev;
};
Operand L(TL l) { return {Operand::List, l, {}, {}}; }
Operand S(const at::Scalar& s) { return {Operand::Scalar, {}, {s.to<float>()}, {}}; }
Operand PS(SL s) {
  Operand o{Operand::PerTensor, {}, {}, {}};
  for (const at::Scalar& v : s) o.vals.push_back(v.to<float>());
  return o;
}
Operand D(const at::Tensor& t) { return {Operand::Device, {}, {}, t}; }

bool native_dtype(at::ScalarType t) { return t == at::kFloat || t == at::kHalf || t == at::kBFloat16; }

// Whether the lists (and scalars, a one-element device tensor `dev` when defined) may run here.
// TORCH_WEBGPU_FOREACH=0 sends every list to the per-tensor path (to compare, profiling).
bool fast(std::vector<TL> lists, SL scalars = {}, const at::Tensor& dev = {}) {
  static const bool off = [] {
    const char* e = std::getenv("TORCH_WEBGPU_FOREACH");
    return e != nullptr && std::strcmp(e, "0") == 0;
  }();
  if (off) return false;
  const at::Tensor& t0 = lists[0][0];
  if (t0.device().type() != c10::DeviceType::PrivateUse1 || !native_dtype(t0.scalar_type())) return false;
  for (const at::Scalar& s : scalars)
    if (s.isComplex()) return false;
  if (!at::native::can_use_fast_route(lists, scalars)) return false;
  // A tensor larger than one binding goes the per-tensor way, whose ops split it.
  for (TL l : lists)
    for (const at::Tensor& t : l)
      if (t.numel() > 0 && !kernel::fits_binding(t)) return false;
  if (dev.defined()) {
    if (dev.device() != t0.device() || dev.dim() != 0 || !native_dtype(dev.scalar_type()) ||
        at::result_type(t0, dev) != t0.scalar_type())
      return false;
  }
  return true;
}

// sub with a bool scalar raises (ATen's sub_check): left to the per-tensor path, which says so.
bool bool_sub(const char* op, SL s) {
  if (std::strcmp(op, "sub") != 0) return false;
  for (const at::Scalar& v : s)
    if (v.isBoolean()) return true;
  return false;
}

uint32_t pad4(uint32_t n) { return (n + 3) / 4 * 4; }

// out[j] = expr(x1, x2, ...) elementwise for every tensor j of the first list operand. `out` is that
// list for in-place ops (`inplace`), else fresh tensors shaped like it.
void run(const std::string& name, const char* expr, bool pointwise_lib, const std::vector<Operand>& ops, TL out,
         bool inplace) {
  TL self;
  size_t nlist = 0, narr = 0, nuni = 0;
  at::Tensor dev;
  for (const Operand& o : ops) {
    if (o.kind == Operand::List) {
      if (nlist == 0) self = o.list;
      ++nlist;
    }
    narr += o.kind == Operand::PerTensor;
    nuni += o.kind == Operand::Scalar;
    if (o.kind == Operand::Device) dev = o.dev;
  }
  const size_t per = nlist + (inplace ? 0 : 1);  // operands per tensor
  const kernel::DeviceInfo& info = kernel::device_info(self[0]);
  bool big = false;  // a block past the binding limit is bound as a window: its base takes params
  for (const Operand& o : ops)
    if (o.kind == Operand::List)
      for (const at::Tensor& t : o.list) big |= t.numel() > 0 && kernel::block_bytes(t) > info.max_binding;
  for (const at::Tensor& t : out) big |= t.numel() > 0 && kernel::block_bytes(t) > info.max_binding;
  const size_t max_bind = std::min<size_t>(16, info.max_storage_buffers) - (dev.defined() ? 1 : 0);
  // Parameter words: arrays wg, n, one offset per list operand (and out), the per-tensor scalars
  // (each padded to 4 words), then the uniform scalars and the device offset.
  const uint32_t fixed = pad4(uint32_t(nuni + (dev.defined() ? 1 : 0))) + (big ? 16 : 0);
  const uint32_t arrays = uint32_t(2 + per + narr);
  uint32_t max_c = 16;
  while (max_c > 1 && arrays * pad4(max_c) + fixed > kernel::kMaxParamWords) --max_c;

  auto flush = [&](const std::vector<size_t>& idx) {
    if (idx.empty()) return;
    const uint32_t C = uint32_t(idx.size());
    std::string kinds;
    for (const Operand& o : ops) kinds.push_back(char(o.kind));
    // The expression is part of the key: one op name serves several (add: x1 + x2, x1 + x3 * x2).
    Kernel k("_foreach_" + name + ":" + kinds + (inplace ? "i" : "o") + std::to_string(C) + ":" + expr);
    // Operand j * per + m: list operand m of tensor j (the output after the lists when separate).
    for (size_t j : idx) {
      size_t m = 0;
      for (const Operand& o : ops) {
        if (o.kind != Operand::List) continue;
        if (m == 0 && inplace)
          k.out(o.list[j], CT::F32);
        else
          k.in(o.list[j], CT::F32);
        ++m;
      }
      if (!inplace) k.out(out[j], CT::F32);
    }
    if (dev.defined()) k.in(dev, CT::F32);
    std::vector<int64_t> wg, n;
    int64_t groups = 0;
    for (size_t j : idx) {
      wg.push_back(groups);
      n.push_back(self[j].numel());
      groups += int64_t(grid(uint64_t(self[j].numel())));
    }
    k.param_array("wg", wg);
    k.param_array("n", n);
    size_t m = 0, a = 0, u = 0;
    for (const Operand& o : ops) {
      if (o.kind == Operand::List) {
        std::vector<int64_t> off;
        for (size_t j : idx) off.push_back(o.list[j].storage_offset());
        k.param_array(kernel::numbered_name("b", m++), off);
      } else if (o.kind == Operand::PerTensor) {
        std::vector<uint32_t> bits;
        for (size_t j : idx) {
          uint32_t w;
          std::memcpy(&w, &o.vals[j], 4);
          bits.push_back(w);
        }
        k.param_array(kernel::numbered_name("buf", a++), bits, kernel::Params::Type::F32S);
      }
    }
    if (!inplace) {
      std::vector<int64_t> off;
      for (size_t j : idx) off.push_back(out[j].storage_offset());
      k.param_array("o", off);
    }
    // Single words last: between arrays they would cost alignment padding.
    for (const Operand& o : ops)
      if (o.kind == Operand::Scalar) k.param_f32(std::string("s") + std::to_string(u++), o.vals[0]);
    if (dev.defined()) k.param_index("d_off", dev.storage_offset());
    if (pointwise_lib) k.library("pointwise");
    k.launch(uint64_t(groups), [&] {
      std::ostringstream s;
      s << "fn fe_op(";
      for (size_t i = 0; i < ops.size(); ++i) s << (i ? ", " : "") << "x" << i + 1 << ": f32";
      s << ") -> f32 { return " << expr << "; }\n"
        << "@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,"
           " @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
           "  let g = linear_id(wid, nwg, 0u, 1u);\n"
           "  var j = 0u;\n"
        << "  for (var t = 1u; t < " << C << "u; t = t + 1u) { if (g >= P_wg(t)) { j = t; } }\n"
        << "  let i = (g - P_wg(j)) * 256u + lid;\n"
           "  if (i >= P_n(j)) { return; }\n"
           "  switch j {\n";
      for (uint32_t j = 0; j < C; ++j) {
        s << "    case " << j << "u: { let r = fe_op(";
        size_t mm = 0, aa = 0, uu = 0;
        for (size_t i = 0; i < ops.size(); ++i) {
          s << (i ? ", " : "");
          switch (ops[i].kind) {
            case Operand::List:
              s << "ld" << j * per + mm << "(P_" << kernel::numbered_name("b", mm) << "(" << j << "u) + i)";
              ++mm;
              break;
            case Operand::PerTensor: s << "P_" << kernel::numbered_name("buf", aa++) << "(" << j << "u)"; break;
            case Operand::Scalar: s << "P.s" << uu++; break;
            case Operand::Device: s << "ld" << C * per << "(P.d_off)"; break;
          }
        }
        s << "); ";
        if (inplace)
          s << "st" << j * per << "(P_b0(" << j << "u) + i, r); }\n";
        else
          s << "st" << j * per + nlist << "(P_o(" << j << "u) + i, r); }\n";
      }
      s << "    default: {}\n  }\n}\n";
      return s.str();
    });
  };

  // Tensors of one chunk run concurrently, ATen's slow path one after another: a tensor whose output
  // overlaps what an earlier tensor of the chunk reads or writes, or whose inputs overlap an earlier
  // output (a list holding one parameter twice, overlapping views), starts a new chunk; dispatches
  // see each other's writes.
  struct Span {
    const void* block;
    std::pair<uint64_t, uint64_t> bytes;
    bool write;
  };
  auto overlaps = [](const Span& a, const Span& b) {
    return a.block == b.block && a.bytes.first < b.bytes.second && b.bytes.first < a.bytes.second;
  };
  std::vector<Span> spans;  // of the current chunk
  std::vector<size_t> idx;
  std::vector<const void*> blocks;
  int64_t elems = 0;
  for (size_t j = 0; j < self.size(); ++j) {
    const int64_t nj = self[j].numel();
    if (nj == 0) continue;
    std::vector<Span> mine_spans;
    {
      size_t m = 0;
      for (const Operand& o : ops)
        if (o.kind == Operand::List) {
          mine_spans.push_back({kernel::block_id(o.list[j]), kernel::byte_span(o.list[j]), inplace && m == 0});
          ++m;
        }
      if (!inplace) mine_spans.push_back({kernel::block_id(out[j]), kernel::byte_span(out[j]), true});
    }
    // As ATen's in-place ops (assert_no_partial_overlap): an input that shares some, not all, of the
    // output's memory.
    for (size_t m = 1; inplace && m < mine_spans.size(); ++m)
      TORCH_CHECK(!overlaps(mine_spans[0], mine_spans[m]) || mine_spans[0].bytes == mine_spans[m].bytes,
                  "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                  "single memory location. Please clone() the tensor before performing the operation.");
    bool hazard = false;
    for (const Span& a : mine_spans)
      for (const Span& b : spans) hazard |= (a.write || b.write) && overlaps(a, b);
    std::vector<const void*> mine;
    for (const Operand& o : ops)
      if (o.kind == Operand::List) mine.push_back(kernel::block_id(o.list[j]));
    if (!inplace) mine.push_back(kernel::block_id(out[j]));
    std::vector<const void*> merged = blocks;
    for (const void* b : mine)
      if (std::find(merged.begin(), merged.end(), b) == merged.end()) merged.push_back(b);
    if (!idx.empty() &&
        (hazard || merged.size() > max_bind || idx.size() >= max_c || elems + nj > (int64_t(1) << 31))) {
      flush(idx);
      idx.clear();
      spans.clear();
      elems = 0;
      merged = {};
      for (const void* b : mine)
        if (std::find(merged.begin(), merged.end(), b) == merged.end()) merged.push_back(b);
    }
    TORCH_CHECK(merged.size() <= max_bind, "webgpu: _foreach_", name, ": too many storage bindings for one tensor");
    blocks = std::move(merged);
    spans.insert(spans.end(), mine_spans.begin(), mine_spans.end());
    idx.push_back(j);
    elems += nj;
  }
  flush(idx);
}

std::vector<at::Tensor> fresh(TL self) {
  std::vector<at::Tensor> r;
  r.reserve(self.size());
  for (const at::Tensor& t : self) r.push_back(at::empty_like(t));
  return r;
}

// Runs in place on ops[0]'s list, or into fresh tensors it returns.
void run_(const std::string& name, const char* expr, bool lib, const std::vector<Operand>& ops) {
  run(name, expr, lib, ops, ops[0].list, true);
}
std::vector<at::Tensor> run_o(const std::string& name, const char* expr, bool lib, const std::vector<Operand>& ops) {
  std::vector<at::Tensor> r = fresh(ops[0].list);
  run(name, expr, lib, ops, r, false);
  return r;
}

namespace an = at::native;

// ---- binary: add, sub, mul, div, maximum ----

// The .List, .Scalar, .ScalarList (and .Tensor) overloads of a binary op over `expr` in x1 (self),
// x2 (the other operand) and, with alpha, x3.
#define WEBGPU_FOREACH_SCALAR(OP, EXPR, LIB)                                                                     \
  std::vector<at::Tensor> OP##_scalar(TL self, const at::Scalar& s) {                                            \
    an::check_foreach_api_restrictions(self);                                                                    \
    if (!fast({self}, {s}) || bool_sub(#OP, {s})) return an::foreach_tensor_##OP##_scalar_kernel_slow(self, s);  \
    return run_o(#OP, EXPR, LIB, {L(self), S(s)});                                                               \
  }                                                                                                              \
  void OP##_scalar_(TL self, const at::Scalar& s) {                                                              \
    an::check_foreach_api_restrictions(self);                                                                    \
    if (!fast({self}, {s}) || bool_sub(#OP, {s})) return an::foreach_tensor_##OP##_scalar_kernel_slow_(self, s); \
    run_(#OP, EXPR, LIB, {L(self), S(s)});                                                                       \
  }                                                                                                              \
  std::vector<at::Tensor> OP##_scalarlist(TL self, SL s) {                                                       \
    an::check_foreach_api_restrictions(self, s);                                                                 \
    if (!fast({self}, s) || bool_sub(#OP, s)) return an::foreach_tensor_##OP##_scalarlist_kernel_slow(self, s);  \
    return run_o(#OP, EXPR, LIB, {L(self), PS(s)});                                                              \
  }                                                                                                              \
  void OP##_scalarlist_(TL self, SL s) {                                                                         \
    an::check_foreach_api_restrictions(self, s);                                                                 \
    if (!fast({self}, s) || bool_sub(#OP, s)) return an::foreach_tensor_##OP##_scalarlist_kernel_slow_(self, s); \
    run_(#OP, EXPR, LIB, {L(self), PS(s)});                                                                      \
  }

WEBGPU_FOREACH_SCALAR(add, "x1 + x2", false)
WEBGPU_FOREACH_SCALAR(sub, "x1 - x2", false)
WEBGPU_FOREACH_SCALAR(mul, "x1 * x2", false)
WEBGPU_FOREACH_SCALAR(div, "x1 / x2", false)
// maximum/minimum with a scalar are ATen's clamp_min/clamp_max (a NaN element stays NaN).
WEBGPU_FOREACH_SCALAR(clamp_min, "f_clamp_min(x1, x2)", true)
WEBGPU_FOREACH_SCALAR(clamp_max, "f_clamp_max(x1, x2)", true)
#undef WEBGPU_FOREACH_SCALAR

// add/sub .List and add .Tensor take alpha: x1 + x3 * x2 (sub: alpha negated, as ATen's sub).
#define WEBGPU_FOREACH_ALPHA_LIST(OP, SIGN)                                                    \
  std::vector<at::Tensor> OP##_list(TL self, TL other, const at::Scalar& alpha) {              \
    an::check_foreach_api_restrictions(self, other);                                           \
    if (!fast({self, other}) || alpha.isComplex())                                             \
      return an::foreach_tensor_##OP##_list_kernel_slow(self, other, alpha);                   \
    return run_o(#OP, "x1 + x3 * x2", false, {L(self), L(other), S(SIGN alpha.to<double>())}); \
  }                                                                                            \
  void OP##_list_(TL self, TL other, const at::Scalar& alpha) {                                \
    an::check_foreach_api_restrictions(self, other);                                           \
    if (!fast({self, other}) || alpha.isComplex())                                             \
      return an::foreach_tensor_##OP##_list_kernel_slow_(self, other, alpha);                  \
    run_(#OP, "x1 + x3 * x2", false, {L(self), L(other), S(SIGN alpha.to<double>())});         \
  }
WEBGPU_FOREACH_ALPHA_LIST(add, +)
WEBGPU_FOREACH_ALPHA_LIST(sub, -)
#undef WEBGPU_FOREACH_ALPHA_LIST

// A one-element tensor operand: on the device it is read there (no synchronisation); a CPU one is a
// scalar.
std::vector<at::Tensor> add_tensor(TL self, const at::Tensor& other, const at::Scalar& alpha) {
  an::check_foreach_api_restrictions(self);
  if (other.device().is_cpu() && other.dim() == 0 && !alpha.isComplex() && fast({self}, {other.item()}) &&
      fast({self}, {alpha}))
    return run_o("add", "x1 + x3 * x2", false, {L(self), S(other.item()), S(alpha)});
  if (!fast({self}, {alpha}, other)) return an::foreach_tensor_add_tensor_kernel_slow(self, other, alpha);
  return run_o("add", "x1 + x3 * x2", false, {L(self), D(other), S(alpha)});
}
void add_tensor_(TL self, const at::Tensor& other, const at::Scalar& alpha) {
  an::check_foreach_api_restrictions(self);
  if (other.device().is_cpu() && other.dim() == 0 && !alpha.isComplex() && fast({self}, {other.item()}) &&
      fast({self}, {alpha}))
    return run_("add", "x1 + x3 * x2", false, {L(self), S(other.item()), S(alpha)});
  if (!fast({self}, {alpha}, other)) return an::foreach_tensor_add_tensor_kernel_slow_(self, other, alpha);
  run_("add", "x1 + x3 * x2", false, {L(self), D(other), S(alpha)});
}

// The list overloads of a binary op, functional and in place (LIB: the expression calls the pointwise
// library).
#define WEBGPU_FOREACH_LIST(OP, EXPR, LIB)                                                     \
  std::vector<at::Tensor> OP##_list(TL self, TL other) {                                       \
    an::check_foreach_api_restrictions(self, other);                                           \
    if (!fast({self, other})) return an::foreach_tensor_##OP##_list_kernel_slow(self, other);  \
    return run_o(#OP, EXPR, LIB, {L(self), L(other)});                                         \
  }                                                                                            \
  void OP##_list_(TL self, TL other) {                                                         \
    an::check_foreach_api_restrictions(self, other);                                           \
    if (!fast({self, other})) return an::foreach_tensor_##OP##_list_kernel_slow_(self, other); \
    run_(#OP, EXPR, LIB, {L(self), L(other)});                                                 \
  }
// ... and, for mul and div, the one-tensor overloads too.
#define WEBGPU_FOREACH_LIST_TENSOR(OP, EXPR)                                                         \
  WEBGPU_FOREACH_LIST(OP, EXPR, false)                                                               \
  std::vector<at::Tensor> OP##_tensor(TL self, const at::Tensor& other) {                            \
    an::check_foreach_api_restrictions(self);                                                        \
    if (other.device().is_cpu() && other.dim() == 0 && fast({self}, {other.item()}))                 \
      return run_o(#OP, EXPR, false, {L(self), S(other.item())});                                    \
    if (!fast({self}, {}, other)) return an::foreach_tensor_##OP##_tensor_kernel_slow(self, other);  \
    return run_o(#OP, EXPR, false, {L(self), D(other)});                                             \
  }                                                                                                  \
  void OP##_tensor_(TL self, const at::Tensor& other) {                                              \
    an::check_foreach_api_restrictions(self);                                                        \
    if (other.device().is_cpu() && other.dim() == 0 && fast({self}, {other.item()}))                 \
      return run_(#OP, EXPR, false, {L(self), S(other.item())});                                     \
    if (!fast({self}, {}, other)) return an::foreach_tensor_##OP##_tensor_kernel_slow_(self, other); \
    run_(#OP, EXPR, false, {L(self), D(other)});                                                     \
  }
WEBGPU_FOREACH_LIST_TENSOR(mul, "x1 * x2")
WEBGPU_FOREACH_LIST_TENSOR(div, "x1 / x2")
#undef WEBGPU_FOREACH_LIST_TENSOR

// With a tensor bound, clamp_min/clamp_max (and maximum/minimum, which are they) propagate NaN from
// either side, as maximum/minimum.
WEBGPU_FOREACH_LIST(clamp_min, "f_maximum(x1, x2)", true)
WEBGPU_FOREACH_LIST(clamp_max, "f_minimum(x1, x2)", true)
#undef WEBGPU_FOREACH_LIST

// ---- unary: sqrt, neg, reciprocal; zero_ ----

#define WEBGPU_FOREACH_UNARY(OP, EXPR, LIB)                          \
  std::vector<at::Tensor> fe_##OP(TL self) {                         \
    an::check_foreach_api_restrictions(self);                        \
    if (!fast({self})) return an::foreach_tensor_##OP##_slow(self);  \
    return run_o(#OP, EXPR, LIB, {L(self)});                         \
  }                                                                  \
  void fe_##OP##_(TL self) {                                         \
    an::check_foreach_api_restrictions(self);                        \
    if (!fast({self})) return an::foreach_tensor_##OP##_slow_(self); \
    run_(#OP, EXPR, LIB, {L(self)});                                 \
  }
WEBGPU_FOREACH_UNARY(sqrt, "f_sqrt(x1)", true)
WEBGPU_FOREACH_UNARY(neg, "-x1", false)
WEBGPU_FOREACH_UNARY(reciprocal, "1.0 / x1", false)
#undef WEBGPU_FOREACH_UNARY

void fe_zero_(TL self) {
  an::check_foreach_api_restrictions(self);
  if (!fast({self})) return an::foreach_tensor_zero_slow_(self);
  run_("zero", "0.0", false, {L(self)});
}

void fe_copy_(TL self, TL src, bool non_blocking) {
  an::check_foreach_api_restrictions(self, src);
  if (!fast({self, src})) return an::foreach_tensor_copy_list_kernel_slow_(self, src, non_blocking);
  run_("copy", "x2", false, {L(self), L(src)});
}

// ---- lerp ----

std::vector<at::Tensor> lerp_scalar(TL self, TL end, const at::Scalar& w) {
  an::check_foreach_api_restrictions(self, end);
  if (!fast({self, end}, {w})) return an::foreach_tensor_lerp_list_kernel_slow(self, end, w);
  return run_o("lerp", "f_lerp(x1, x2, x3)", true, {L(self), L(end), S(w)});
}
void lerp_scalar_(TL self, TL end, const at::Scalar& w) {
  an::check_foreach_api_restrictions(self, end);
  if (!fast({self, end}, {w})) return an::foreach_tensor_lerp_list_kernel_slow_(self, end, w);
  run_("lerp", "f_lerp(x1, x2, x3)", true, {L(self), L(end), S(w)});
}
std::vector<at::Tensor> lerp_scalarlist(TL self, TL end, SL w) {
  an::check_foreach_api_restrictions(self, end, w);
  if (!fast({self, end}, w)) return an::foreach_tensor_lerp_scalarlist_kernel_slow(self, end, w);
  return run_o("lerp", "f_lerp(x1, x2, x3)", true, {L(self), L(end), PS(w)});
}
void lerp_scalarlist_(TL self, TL end, SL w) {
  an::check_foreach_api_restrictions(self, end, w);
  if (!fast({self, end}, w)) return an::foreach_tensor_lerp_scalarlist_kernel_slow_(self, end, w);
  run_("lerp", "f_lerp(x1, x2, x3)", true, {L(self), L(end), PS(w)});
}
std::vector<at::Tensor> lerp_list(TL self, TL end, TL w) {
  an::check_foreach_api_restrictions(self, end, w);
  if (!fast({self, end, w})) return an::foreach_tensor_ternary_lerp_slow(self, end, w);
  return run_o("lerp", "f_lerp(x1, x2, x3)", true, {L(self), L(end), L(w)});
}
void lerp_list_(TL self, TL end, TL w) {
  an::check_foreach_api_restrictions(self, end, w);
  if (!fast({self, end, w})) return an::foreach_tensor_ternary_lerp_slow_(self, end, w);
  run_("lerp", "f_lerp(x1, x2, x3)", true, {L(self), L(end), L(w)});
}

// ---- addcmul / addcdiv: x1 + x4 * x2 * x3, x1 + x4 * (x2 / x3) as the per-tensor rows ----

#define WEBGPU_FOREACH_ADDC(OP, EXPR)                                                                 \
  std::vector<at::Tensor> OP##_scalar(TL self, TL t1, TL t2, const at::Scalar& v) {                   \
    an::check_foreach_api_restrictions(self, t1, t2);                                                 \
    if (!fast({self, t1, t2}, {v})) return an::foreach_tensor_##OP##_scalar_slow(self, t1, t2, v);    \
    return run_o(#OP, EXPR, false, {L(self), L(t1), L(t2), S(v)});                                    \
  }                                                                                                   \
  void OP##_scalar_(TL self, TL t1, TL t2, const at::Scalar& v) {                                     \
    an::check_foreach_api_restrictions(self, t1, t2);                                                 \
    if (!fast({self, t1, t2}, {v})) return an::foreach_tensor_##OP##_scalar_slow_(self, t1, t2, v);   \
    run_(#OP, EXPR, false, {L(self), L(t1), L(t2), S(v)});                                            \
  }                                                                                                   \
  std::vector<at::Tensor> OP##_scalarlist(TL self, TL t1, TL t2, SL v) {                              \
    an::check_foreach_api_restrictions(self, t1, t2, v);                                              \
    if (!fast({self, t1, t2}, v)) return an::foreach_tensor_##OP##_scalarlist_slow(self, t1, t2, v);  \
    return run_o(#OP, EXPR, false, {L(self), L(t1), L(t2), PS(v)});                                   \
  }                                                                                                   \
  void OP##_scalarlist_(TL self, TL t1, TL t2, SL v) {                                                \
    an::check_foreach_api_restrictions(self, t1, t2, v);                                              \
    if (!fast({self, t1, t2}, v)) return an::foreach_tensor_##OP##_scalarlist_slow_(self, t1, t2, v); \
    run_(#OP, EXPR, false, {L(self), L(t1), L(t2), PS(v)});                                           \
  }                                                                                                   \
  std::vector<at::Tensor> OP##_tensor(TL self, TL t1, TL t2, const at::Tensor& v) {                   \
    an::check_foreach_api_restrictions(self, t1, t2);                                                 \
    if (!v.device().is_cpu() || v.dim() != 1 || int64_t(self.size()) != v.size(0))                    \
      return an::foreach_tensor_##OP##_tensor_slow(self, t1, t2, v);                                  \
    const std::vector<at::Scalar> s = an::convert_tensor_to_scalar_list(v, int64_t(self.size()));     \
    if (!fast({self, t1, t2}, s)) return an::foreach_tensor_##OP##_tensor_slow(self, t1, t2, v);      \
    return run_o(#OP, EXPR, false, {L(self), L(t1), L(t2), PS(s)});                                   \
  }                                                                                                   \
  void OP##_tensor_(TL self, TL t1, TL t2, const at::Tensor& v) {                                     \
    an::check_foreach_api_restrictions(self, t1, t2);                                                 \
    if (!v.device().is_cpu() || v.dim() != 1 || int64_t(self.size()) != v.size(0))                    \
      return an::foreach_tensor_##OP##_tensor_slow_(self, t1, t2, v);                                 \
    const std::vector<at::Scalar> s = an::convert_tensor_to_scalar_list(v, int64_t(self.size()));     \
    if (!fast({self, t1, t2}, s)) return an::foreach_tensor_##OP##_tensor_slow_(self, t1, t2, v);     \
    run_(#OP, EXPR, false, {L(self), L(t1), L(t2), PS(s)});                                           \
  }
WEBGPU_FOREACH_ADDC(addcmul, "x1 + x4 * x2 * x3")
WEBGPU_FOREACH_ADDC(addcdiv, "x1 + x4 * (x2 / x3)")
#undef WEBGPU_FOREACH_ADDC

WEBGPU_LIBRARY_IMPL(m) {
// Overload OVL of _foreach_NAME and of its in-place _foreach_NAME_: kernels FN and FN_.
#define WEBGPU_REG(NAME, OVL, FN)                   \
  m.impl("_foreach_" #NAME "." #OVL, TORCH_FN(FN)); \
  m.impl("_foreach_" #NAME "_." #OVL, TORCH_FN(FN##_));
// The Scalar and ScalarList overloads of NAME: kernels OP_scalar, OP_scalarlist.
#define WEBGPU_REG_SCALAR(NAME, OP)     \
  WEBGPU_REG(NAME, Scalar, OP##_scalar) \
  WEBGPU_REG(NAME, ScalarList, OP##_scalarlist)
// Those and the List overload (kernel OP_list).
#define WEBGPU_REG_SCALAR_LIST(NAME, OP) \
  WEBGPU_REG_SCALAR(NAME, OP)            \
  WEBGPU_REG(NAME, List, OP##_list)
// The unary _foreach_NAME and _foreach_NAME_: kernels fe_NAME, fe_NAME_.
#define WEBGPU_REG_UNARY(NAME)                    \
  m.impl("_foreach_" #NAME, TORCH_FN(fe_##NAME)); \
  m.impl("_foreach_" #NAME "_", TORCH_FN(fe_##NAME##_));
  WEBGPU_REG_SCALAR_LIST(add, add)
  WEBGPU_REG_SCALAR_LIST(sub, sub)
  WEBGPU_REG_SCALAR_LIST(mul, mul)
  WEBGPU_REG_SCALAR_LIST(div, div)
  WEBGPU_REG(add, Tensor, add_tensor)
  WEBGPU_REG(mul, Tensor, mul_tensor)
  WEBGPU_REG(div, Tensor, div_tensor)
  // maximum and minimum are clamp_min and clamp_max.
  WEBGPU_REG_SCALAR_LIST(clamp_min, clamp_min)
  WEBGPU_REG_SCALAR_LIST(maximum, clamp_min)
  WEBGPU_REG_SCALAR_LIST(clamp_max, clamp_max)
  WEBGPU_REG_SCALAR_LIST(minimum, clamp_max)
  WEBGPU_REG_SCALAR_LIST(lerp, lerp)
  WEBGPU_REG_UNARY(sqrt)
  WEBGPU_REG_UNARY(neg)
  WEBGPU_REG_UNARY(reciprocal)
  m.impl("_foreach_zero_", TORCH_FN(fe_zero_));
  m.impl("_foreach_copy_", TORCH_FN(fe_copy_));
  WEBGPU_REG_SCALAR(addcmul, addcmul)
  WEBGPU_REG(addcmul, Tensor, addcmul_tensor)
  WEBGPU_REG_SCALAR(addcdiv, addcdiv)
  WEBGPU_REG(addcdiv, Tensor, addcdiv_tensor)
#undef WEBGPU_REG_UNARY
#undef WEBGPU_REG_SCALAR_LIST
#undef WEBGPU_REG_SCALAR
#undef WEBGPU_REG
}

}  // namespace
}  // namespace webgpu::ops
