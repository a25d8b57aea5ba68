// The reduction engine (docs/design.md, "Engines"): one template (wgsl/kernels/reduce.wgsl) serves every
// reduction; a reduction is a row of reduction() below (accumulator, identity, element, combine,
// outputs). The planner picks one invocation per output (short rows), G lanes per row (medium rows,
// strided), or a vectorised workgroup per row slice (contiguous rows: 16-byte loads, four
// accumulators per lane), and splits long rows over several workgroups whose partials a second
// dispatch folds in a fixed order. Workgroup folds use subgroup shuffles when the device has
// subgroups (TORCH_WEBGPU_REDUCE_NO_SUBGROUPS=1 forces the shared-memory fold), else shared memory.
// Operands past maxStorageBufferBindingSize split (run_split: chunks of the reduced dims whose
// partials one fold combines, groups of outputs).
#include "engines/reduce.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "engines/elementwise.h"
#include "kernel/device.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/complex.h"
#include "ops/float64.h"

namespace webgpu::ops {
namespace {

constexpr int kMaxRank = 4;

// Accumulator types: the WGSL type, words in a partial, and how a value packs into vec4<u32>
// words (for the partials of split rows).
enum class Acc { F32, I64, U32, AF, AI, W, LS, D, AD };
struct AccType {
  const char* type;
  int words;
  const char* pack;
  const char* unpack;
};
const AccType& acc_type(Acc a) {
  static const AccType t[] = {
      {"f32", 1, "vec4<u32>(bitcast<u32>(v), 0u, 0u, 0u)", "bitcast<f32>(w.x)"},  // F32
      {"vec2<u32>", 2, "vec4<u32>(v, 0u, 0u)", "w.xy"},  // I64
      {"u32", 1, "vec4<u32>(v, 0u, 0u, 0u)", "w.x"},  // U32: bools
      {"vec2<u32>", 2, "vec4<u32>(v, 0u, 0u)", "w.xy"},  // AF: (f32 bits, index)
      {"vec3<u32>", 3, "vec4<u32>(v, 0u)", "w.xyz"},  // AI: (int64, index)
      {"vec3<f32>", 3, "vec4<u32>(bitcast<vec3<u32>>(v), 0u)", "bitcast<vec3<f32>>(w.xyz)"},  // W: Welford
      {"vec2<f32>", 2, "vec4<u32>(bitcast<vec2<u32>>(v), 0u, 0u)", "bitcast<vec2<f32>>(w.xy)"},  // LS: (max, sum)
      {"vec2<u32>", 2, "vec4<u32>(v, 0u, 0u)", "w.xy"},  // D: binary64 bits (wgsl/lib/f64.wgsl)
      {"vec3<u32>", 3, "vec4<u32>(v, 0u)", "w.xyz"},  // AD: (binary64 bits, index)
  };
  return t[int(a)];
}
int acc_words(Acc a) { return acc_type(a).words; }

// What an element enters as: its value in f32 (`f`), in int64 (`l`, vec2<u32>), in binary64 (`d`,
// vec2<u32> bits), or whether it is nonzero (`nz`, 1u or 0u; NaN is nonzero, -0.0 is zero). `idx` is
// its index along the row.
enum class In { F, L, NZ, D };

// How a reduction treats one kind of input: the accumulator, its identity, one element, the
// combine of `a` and `b`, and the row's outputs from the final accumulator `v` (output 1 when the
// op has two: var_mean's mean; max.dim/min.dim write `value` first and out0, the index, second).
struct Way {
  Acc acc;
  In in;
  const char* identity;
  const char* element;
  const char* combine;
  const char* out0;
  const char* out1 = nullptr;
  const char* value = nullptr;
};

// A row of the table, found by its name (Op::red).
struct Reduction {
  const char* name;
  Way floats;  // float16, bfloat16, float32 inputs
  Way ints;  // integer and bool inputs
  const char* partials;  // the row that folds a split row's partials (by name)
  double empty = 0.0;  // the value of a row of length zero
  bool fa_row_length = false;  // fa() is the row's length (mean), set by reduce_iter
  bool empty_inf_if_fa_negative = false;  // an empty row is +inf when fa() < 0 (p-norm with p < 0)
};

#define WEBGPU_NAN_MAX "select(select(max(a, b), b, nan(b)), a, nan(a))"
#define WEBGPU_NAN_MIN "select(select(min(a, b), b, nan(b)), a, nan(a))"
// NaN wins (the first one), then the larger (smaller) value, ties to the smaller index.
#define WEBGPU_ARG_F(GT)                                                                             \
  "let x = bitcast<f32>(a.x); let y = bitcast<f32>(b.x); let an = nan(x); let bn = nan(y);\n"        \
  "  if (an || bn) { if (an && bn) { return select(a, b, b.y < a.y); } return select(a, b, bn); }\n" \
  "  if (y " GT " x) { return b; } if (x " GT " y) { return a; }\n  return select(a, b, b.y < a.y);"
#define WEBGPU_ARG_I(XY, YX)                                                        \
  "let x = a.xy; let y = b.xy;\n  if (i64_lt(" XY ")) { return b; } if (i64_lt(" YX \
  ")) { return a; }\n"                                                              \
  "  return select(a, b, b.z < a.z);"

const Reduction& reduction(const char* name) {
  static const char* kNegInf = "inf_bits(0xff800000u)";
  static const char* kPosInf = "inf_bits(0x7f800000u)";
  static const Way kSumI{Acc::I64, In::L, "vec2<u32>(0u, 0u)", "l", "i64_add(a, b)", "v"};
  // Welford/Chan: (mean, m2, count). An infinite element starts with m2 = NaN: CPU's Welford step
  // (m2 += (x - mean) * (x - new mean)) gives NaN for it, where Chan's combine alone would give inf.
  static const char* kWelfordIn =
      "vec3<f32>(f, select(0.0, inf_bits(0x7fc00000u), (bitcast<u32>(f) & 0x7fffffffu) == 0x7f800000u), 1.0)";
  static const char* kWelford =
      "if (a.z == 0.0) { return b; } if (b.z == 0.0) { return a; }\n"
      "  let n = a.z + b.z; let d = b.x - a.x; let nb = b.z / n;\n"
      "  return vec3<f32>(a.x + d * nb, a.y + b.y + d * d * a.z * nb, n);";
  static const Way kVar{Acc::W, In::F, "vec3<f32>(0.0, 0.0, 0.0)", kWelfordIn, kWelford, "v.y * fa()", "v.x"};
  static const Way kStd{Acc::W, In::F, "vec3<f32>(0.0, 0.0, 0.0)", kWelfordIn, kWelford, "sqrt(v.y * fa())", "v.x"};
  // (m, s): the row's running maximum and the sum of exp(x - m); infinities and NaN spelled out.
  static const Way kLse{Acc::LS,
                        In::F,
                        "vec2<f32>(inf_bits(0xff800000u), 0.0)",
                        "vec2<f32>(f, 1.0)",
                        "if (nan(a.x)) { return a; } if (nan(b.x)) { return b; }\n"
                        "  let m = max(a.x, b.x);\n"
                        "  if (bitcast<u32>(m) == 0xff800000u) { return vec2<f32>(m, 0.0); }\n"
                        "  if (bitcast<u32>(m) == 0x7f800000u) { return vec2<f32>(m, 1.0); }\n"
                        "  let sa = select(0.0, a.y * f_exp(a.x - m), a.y != 0.0);\n"
                        "  let sb = select(0.0, b.y * f_exp(b.x - m), b.y != 0.0);\n"
                        "  return vec2<f32>(m, sa + sb);",
                        "v.x + f_log(v.y)"};
  auto norm = [](const char* ident, const char* elem, const char* comb, const char* out) {
    return Way{Acc::F32, In::F, ident, elem, comb, out};
  };
  static const std::vector<Reduction> table = {
      {"sum", {Acc::F32, In::F, "0.0", "f", "a + b", "v"}, kSumI, "sum"},
      // NaN elements count as 0; a NaN partial (inf + -inf) stays NaN, as on CPU.
      {"nansum", {Acc::F32, In::F, "0.0", "select(f, 0.0, nan(f))", "a + b", "v"}, kSumI, "sum"},
      {"prod",
       {Acc::F32, In::F, "1.0", "f", "a * b", "v"},
       {Acc::I64, In::L, "vec2<u32>(1u, 0u)", "l", "i64_mul(a, b)", "v"},
       "prod",
       1.0},
      {"mean",
       {Acc::F32, In::F, "0.0", "f", "a + b", "v / fa()"},
       kSumI,
       "mean",
       std::numeric_limits<double>::quiet_NaN(),
       /*fa_row_length=*/true},
      {"max",
       {Acc::F32, In::F, kNegInf, "f", WEBGPU_NAN_MAX, "v"},
       {Acc::I64, In::L, "vec2<u32>(0u, 0x80000000u)", "l", "i64_max(a, b)", "v"},
       "max"},
      {"min",
       {Acc::F32, In::F, kPosInf, "f", WEBGPU_NAN_MIN, "v"},
       {Acc::I64, In::L, "vec2<u32>(0xffffffffu, 0x7fffffffu)", "l", "i64_min(a, b)", "v"},
       "min"},
      {"any",
       {Acc::U32, In::NZ, "0u", "nz", "max(a, b)", "v"},
       {Acc::U32, In::NZ, "0u", "nz", "max(a, b)", "v"},
       "any"},
      {"all",
       {Acc::U32, In::NZ, "1u", "nz", "min(a, b)", "v"},
       {Acc::U32, In::NZ, "1u", "nz", "min(a, b)", "v"},
       "all",
       1.0},
      {"argmax",
       {Acc::AF, In::F, "vec2<u32>(0xff800000u, 0xffffffffu)", "vec2<u32>(bitcast<u32>(f), idx)", WEBGPU_ARG_F(">"),
        "vec2<u32>(v.y, 0u)", nullptr, "v.x"},
       {Acc::AI, In::L, "vec3<u32>(0u, 0x80000000u, 0xffffffffu)", "vec3<u32>(l, idx)", WEBGPU_ARG_I("x, y", "y, x"),
        "vec2<u32>(v.z, 0u)", nullptr, "v.xy"},
       "argmax"},
      {"argmin",
       {Acc::AF, In::F, "vec2<u32>(0x7f800000u, 0xffffffffu)", "vec2<u32>(bitcast<u32>(f), idx)", WEBGPU_ARG_F("<"),
        "vec2<u32>(v.y, 0u)", nullptr, "v.x"},
       {Acc::AI, In::L, "vec3<u32>(0xffffffffu, 0x7fffffffu, 0xffffffffu)", "vec3<u32>(l, idx)",
        WEBGPU_ARG_I("y, x", "x, y"), "vec2<u32>(v.z, 0u)", nullptr, "v.xy"},
       "argmin"},
      {"var", kVar, kVar, "var"},
      {"std", kStd, kStd, "std"},
      {"norm0", norm("0.0", "select(0.0, 1.0, (bitcast<u32>(f) & 0x7fffffffu) != 0u)", "a + b", "v"), {}, "norm0"},
      {"norm1", norm("0.0", "abs(f)", "a + b", "v"), {}, "norm1"},
      {"norm2", norm("0.0", "f * f", "a + b", "sqrt(v)"), {}, "norm2"},
      {"norm_inf", norm(kNegInf, "abs(f)", WEBGPU_NAN_MAX, "v"), {}, "norm_inf"},
      {"norm_neg_inf",
       norm(kPosInf, "abs(f)", WEBGPU_NAN_MIN, "v"),
       {},
       "norm_neg_inf",
       std::numeric_limits<double>::infinity()},
      // pow may lose a NaN (it is exp2(y * log2(x)) under fast-math): keep it by a bit test.
      {"norm_p",
       norm("0.0",
            "select(select(pow(abs(f), fa()), select(0.0, inf_bits(0x7f800000u), fa() < 0.0), abs(f) == 0.0), "
            "abs(f), nan(abs(f)))",
            "a + b", "select(pow(v, fb()), v, nan(v))"),
       {},
       "norm_p",
       0.0,
       false,
       /*empty_inf_if_fa_negative=*/true},
      {"logsumexp", kLse, kLse, "logsumexp"},
      {"count_nonzero",
       {Acc::I64, In::NZ, "vec2<u32>(0u, 0u)", "vec2<u32>(nz, 0u)", "i64_add(a, b)", "v"},
       {Acc::I64, In::NZ, "vec2<u32>(0u, 0u)", "vec2<u32>(nz, 0u)", "i64_add(a, b)", "v"},
       "count_nonzero"},
  };
  for (const Reduction& x : table)
    if (std::strcmp(x.name, name) == 0) return x;
  TORCH_INTERNAL_ASSERT(false, "webgpu: no reduction row named '", name, "'");
}

// float64 inputs: the rows whose result the emulated binary64 arithmetic computes exactly as CPU
// rounds each step (sums, products, extremes, counts; mean divides by the row length in float64, as
// CPU's sum-then-divide). Partials fold in a fixed tree, so results are deterministic and within a
// few ulps of CPU's pairwise order; extremes and indices are bit-identical. Rows without one
// (logsumexp, norm_p, var/std: ops/reduce.cpp composes those) raise NoDtypeKernel.
const Way* double_way(const char* r) {
  static const char* kNegInf = "vec2<u32>(0u, 0xfff00000u)";
  static const char* kPosInf = "vec2<u32>(0u, 0x7ff00000u)";
  // Sums start at +0.0, as CPU's: a row of -0.0 sums to +0.0.
  static const char* kZero = "vec2<u32>(0u, 0u)";
  static const Way kSum{Acc::D, In::D, kZero, "d", "f64_add(a, b)", "v"};
  // NaN wins (the first one), then the larger (smaller) value, ties (-0 == +0) to the smaller index.
#define WEBGPU_ARG_D(XY, YX)                                                                         \
  "let x = a.xy; let y = b.xy; let an = f64_is_nan(x); let bn = f64_is_nan(y);\n"                    \
  "  if (an || bn) { if (an && bn) { return select(a, b, b.z < a.z); } return select(a, b, bn); }\n" \
  "  if (f64_lt(" XY ")) { return b; } if (f64_lt(" YX                                               \
  ")) { return a; }\n"                                                                               \
  "  return select(a, b, b.z < a.z);"
  static const std::vector<std::pair<const char*, Way>> table = {
      {"sum", kSum},
      {"nansum", {Acc::D, In::D, kZero, "select(d, vec2<u32>(0u, 0u), f64_is_nan(d))", "f64_add(a, b)", "v"}},
      {"prod", {Acc::D, In::D, "vec2<u32>(0u, 0x3ff00000u)", "d", "f64_mul(a, b)", "v"}},
      {"mean", {Acc::D, In::D, kZero, "d", "f64_add(a, b)", "f64_div(v, da())"}},
      {"max", {Acc::D, In::D, kNegInf, "d", "f64_maximum(a, b)", "v"}},
      {"min", {Acc::D, In::D, kPosInf, "d", "f64_minimum(a, b)", "v"}},
      {"argmax",
       {Acc::AD, In::D, "vec3<u32>(0u, 0xfff00000u, 0xffffffffu)", "vec3<u32>(d, idx)", WEBGPU_ARG_D("x, y", "y, x"),
        "vec2<u32>(v.z, 0u)", nullptr, "v.xy"}},
      {"argmin",
       {Acc::AD, In::D, "vec3<u32>(0u, 0x7ff00000u, 0xffffffffu)", "vec3<u32>(d, idx)", WEBGPU_ARG_D("y, x", "x, y"),
        "vec2<u32>(v.z, 0u)", nullptr, "v.xy"}},
      {"norm0", {Acc::D, In::D, kZero, "b2d(f64_nz(d))", "f64_add(a, b)", "v"}},
      {"norm1", {Acc::D, In::D, kZero, "f64_abs(d)", "f64_add(a, b)", "v"}},
      {"norm2", {Acc::D, In::D, kZero, "f64_mul(d, d)", "f64_add(a, b)", "f64_sqrt(v)"}},
      {"norm_inf", {Acc::D, In::D, kNegInf, "f64_abs(d)", "f64_maximum(a, b)", "v"}},
      {"norm_neg_inf", {Acc::D, In::D, kPosInf, "f64_abs(d)", "f64_minimum(a, b)", "v"}},
  };
#undef WEBGPU_ARG_D
  for (const auto& [name, w] : table)
    if (std::strcmp(name, r) == 0) return &w;
  // any, all, count_nonzero test the bits, whatever the dtype.
  const Way& f = reduction(r).floats;
  return f.in == In::NZ ? &f : nullptr;
}

// The way a reduction takes this input dtype (norms of integer inputs read them as floats).
const Way& way_for(const char* r, at::ScalarType in) {
  if (in == at::kDouble) {
    const Way* w = double_way(r);
    if (w == nullptr) raise_no_float64_kernel(r);
    return *w;
  }
  const Reduction& x = reduction(r);
  return at::isFloatingType(in) || !x.ints.identity ? x.floats : x.ints;
}
Acc acc_for(at::ScalarType in, const char* r) { return way_for(r, in).acc; }

// Storage dtype of output k.
at::ScalarType out_storage(const Op& op, Acc a, int k) {
  if (op.values && k == 0) return a == Acc::AF ? at::kFloat : a == Acc::AD ? at::kDouble : at::kLong;
  if (a == Acc::AF || a == Acc::AI || a == Acc::AD) return at::kLong;
  if (a == Acc::D) return at::kDouble;
  if (a == Acc::W || a == Acc::LS) return at::kFloat;
  return a == Acc::F32 ? at::kFloat : a == Acc::I64 ? at::kLong : at::kInt;
}

// 1u when raw bits r of dtype t are a nonzero value (NaN is nonzero, -0.0 is zero), else 0u.
std::string nonzero_u32(at::ScalarType t) {
  if (t == at::kUInt64) return "select(0u, 1u, (r.x | r.y) != 0u)";
  // float8: -0.0 (0x80) is zero where it exists; in the fnuz types 0x80 is their NaN.
  if (t == at::kFloat8_e4m3fn || t == at::kFloat8_e5m2) return "select(0u, 1u, (r & 0x7fu) != 0u)";
  if (t == at::kDouble) return "select(0u, 1u, (r.x | (r.y & 0x7fffffffu)) != 0u)";
  return t == at::kLong                         ? "select(0u, 1u, (r.x | r.y) != 0u)"
         : t == at::kFloat                      ? "select(0u, 1u, (r & 0x7fffffffu) != 0u)"
         : t == at::kHalf || t == at::kBFloat16 ? "select(0u, 1u, (r & 0x7fffu) != 0u)"
                                                : "select(0u, 1u, r != 0u)";
}

// Stores expression `v` as dtype t into element e of binding `slot`.
std::string store(at::ScalarType t, const std::string& slot, const std::string& e, const std::string& v) {
  if (t == at::kLong || t == at::kDouble)
    return "{ let q = " + v + "; " + slot + "[2u * " + e + "] = q.x; " + slot + "[2u * " + e + " + 1u] = q.y; }";
  if (t == at::kFloat) return slot + "[" + e + "] = bitcast<u32>(" + v + ");";
  return slot + "[" + e + "] = " + v + ";";
}

// idx_base: element indices along the row start at P.idx_off (a chunk of a row split past the binding
// limit), for the rows whose element reads its index (argmax, argmin).
std::string functions(const Op& op, Acc acc, at::ScalarType in_dt, bool packed_in, bool final_pass, bool idx_base) {
  const Way& w = way_for(op.red, in_dt);
  TORCH_INTERNAL_ASSERT(w.acc == acc);
  const AccType& A = acc_type(acc);
  const std::string RAWT = c10::elementSize(in_dt) == 8 ? "vec2<u32>" : "u32";
  const std::string in = w.in == In::F   ? "let f = " + convert_in(in_dt, CT::F32) + ";"
                         : w.in == In::L ? "let l = " + convert_in(in_dt, CT::I64) + ";"
                         : w.in == In::D ? "let d = " + convert_in(in_dt, CT::F64) + ";"
                                         : "let nz = " + nonzero_u32(in_dt) + ";";
  const std::string comb = std::strncmp(w.combine, "let ", 4) == 0 || std::strncmp(w.combine, "if ", 3) == 0
                               ? w.combine
                               : "return " + std::string(w.combine) + ";";
  std::string s = "alias ACC = " + std::string(A.type) + ";\nconst NW: u32 = " + std::to_string(A.words) + "u;\n";
  s += "fn identity() -> ACC { return " + std::string(w.identity) + "; }\n";
  s += "fn combine(a: ACC, b: ACC) -> ACC { " + comb + " }\n";
  s += idx_base ? "fn conv(r: " + RAWT + ", idx0: u32) -> ACC { let idx = idx0 + P.idx_off; "
                : "fn conv(r: " + RAWT + ", idx: u32) -> ACC { ";
  s += in + " return " + w.element + "; }\n";
  s += "fn pack(v: ACC) -> vec4<u32> { return " + std::string(A.pack) + "; }\n";
  s += "fn unpack(w: vec4<u32>) -> ACC { return " + std::string(A.unpack) + "; }\n";
  if (packed_in) {
    s += "fn load(e: u32, idx: u32) -> ACC { var w = vec4<u32>(0u); for (var k = 0u; k < NW; k = k + 1u) "
         "{ w[k] = word(e * NW + k); } return unpack(w); }\n";
  } else {
    s += "fn load(e: u32, idx: u32) -> ACC { let r = " + raw_load(c10::elementSize(in_dt), "word") +
         "; return conv(r, idx); }\n";
  }
  // finish(o, v): o = (input base, output 0 element, output 1 element). Partial passes store packed
  // accumulators instead.
  std::string fin;
  if (final_pass) {
    if (op.values) {
      fin = store(out_storage(op, acc, 0), "dst0", "o.y", w.value) + " " +
            store(out_storage(op, acc, 1), "dst1", "o.z", w.out0);
    } else {
      fin = store(out_storage(op, acc, 0), "dst0", "o.y", w.out0);
      if (op.nouts == 2 && w.out1) fin += " " + store(out_storage(op, acc, 1), "dst1", "o.z", w.out1);
    }
  }
  s += "fn finish(o: vec3<u32>, v: ACC) { " + fin + " }\n";
  return s;
}

const char* kGroupReduceShared =
    "fn group_reduce(v: ACC, lid: u32, sg: u32) -> ACC {\n"
    "  scratch[lid] = v;\n"
    "  workgroupBarrier();\n"
    "  for (var s = G / 2u; s > 0u; s = s >> 1u) {\n"
    "    if ((lid % G) < s) { scratch[lid] = combine(scratch[lid], scratch[lid + s]); }\n"
    "    workgroupBarrier();\n"
    "  }\n"
    "  return scratch[lid];\n"
    "}\n";

// Butterfly within each subgroup (lanes of a G-segment are consecutive invocations), then the
// segment's leader folds its subgroups' results in order.
const char* kGroupReduceSubgroup =
    "fn group_reduce(v0: ACC, lid: u32, sg: u32) -> ACC {\n"
    "  var v = v0;\n"
    "  let m = min(G, sg);\n"
    "  for (var o = m / 2u; o > 0u; o = o >> 1u) { v = combine(v, subgroupShuffleXor(v, o)); }\n"
    "  if ((lid % m) == 0u) { scratch[lid / m] = v; }\n"
    "  workgroupBarrier();\n"
    "  var r = v;\n"
    "  if ((lid % G) == 0u) {\n"
    "    let b = lid / m;\n"
    "    r = scratch[b];\n"
    "    for (var i = 1u; i < G / m; i = i + 1u) { r = combine(r, scratch[b + i]); }\n"
    "  }\n"
    "  return r;\n"
    "}\n";

enum class Mode { Thread, Group, Vec };

struct Launch {
  const at::Tensor* in;  // input storage (or packed partials)
  uint64_t in_off;  // elements (packed units for partials)
  at::ScalarType in_dtype;
  bool packed_in;
  const at::Tensor* out0;  // final outputs, or the partials buffer (out1 unused)
  const at::Tensor* out1;
  uint64_t out0_off, out1_off;
  std::vector<Dim> outd, redd;
  int64_t n_out, red_len, parts, part_len;
  Mode mode;
  uint32_t G;
  bool final_pass;
  // Operands past the binding limit (run_split): the bytes of in/out0/out1 this launch reaches (hi
  // == 0: the tensor's own span), and the index along the full row of this chunk's first element
  // (-1: not a chunk).
  std::pair<uint64_t, uint64_t> in_span{0, 0}, out0_span{0, 0}, out1_span{0, 0};
  int64_t idx_off = -1;
};

// The VEC shape: 16-byte loads in flight per lane per loop iteration, loads per lane per (row,
// part), and the most workgroups one row is split over. TORCH_WEBGPU_REDUCE_VEC="unroll,loads,groups"
// overrides them for tuning.
struct VecTuning {
  uint32_t unroll = 4, loads = 16, groups = 1024;
};
const VecTuning& vec_tuning() {
  static const VecTuning v = [] {
    VecTuning r;
    if (const char* e = std::getenv("TORCH_WEBGPU_REDUCE_VEC")) {
      unsigned u = 0, l = 0, g = 0;
      if (std::sscanf(e, "%u,%u,%u", &u, &l, &g) == 3 && u >= 1 && u <= 8 && l >= 1 && g >= 1) r = {u, l, g};
    }
    return r;
  }();
  return v;
}

// The unroll of a VEC kernel: the tuned one for 32-bit floats, at most 2 otherwise. A sub-word or
// int64 row already unpacks several elements per load, each with a costlier combine (up to 32 per
// iteration at 2), and no gain from more was measured.
uint32_t vec_unroll(Acc acc, int64_t isz) {
  const uint32_t u = vec_tuning().unroll;
  return isz == 4 && acc == Acc::F32 ? u : std::min<uint32_t>(u, 2);
}

bool use_subgroups(const kernel::DeviceInfo& dev) {
  static const bool off = [] {
    const char* e = std::getenv("TORCH_WEBGPU_REDUCE_NO_SUBGROUPS");
    return e && *e && std::string(e) != "0";
  }();
  return dev.subgroups && !off;
}

// The part of t's block a kernel binds (kernel::window; 16-byte units, so vector indices stay
// aligned), as (start, size) in bytes.
std::pair<uint64_t, uint64_t> window(const at::Tensor& t, const char* name, std::pair<uint64_t, uint64_t> span) {
  if (span.second == 0) span = kernel::byte_span(t);
  const kernel::Window w = kernel::window(t, span.first, span.second, name, 16);
  return {w.start, w.size};
}

void dispatch(const kernel::DeviceInfo& dev, const Op& op, Acc acc, const Launch& L) {
  const int RO = int(L.outd.size()), RR = int(L.redd.size());
  TORCH_CHECK(RO <= kMaxRank && RR <= kMaxRank, "webgpu: reduction over a tensor with too many non-mergeable dims");
  const bool sg = L.mode != Mode::Thread && use_subgroups(dev);
  const bool two = L.final_pass && L.out1 != nullptr;
  const int64_t isz = c10::elementSize(L.in_dtype);
  const bool idx_base = L.idx_off >= 0 && !L.packed_in && std::strstr(way_for(op.red, L.in_dtype).element, "idx");
  std::string key = "reduce:" + std::string(op.red) + ":" + (op.values ? "v" : "") + std::to_string(op.nouts) + ":" +
                    std::to_string(int(acc)) + ":" + std::to_string(int(L.in_dtype)) + ":" + std::to_string(RO) + ":" +
                    std::to_string(RR) + ":" + std::to_string(int(L.mode)) + ":" + std::to_string(L.G) +
                    (L.final_pass ? "f" : "p") + (L.packed_in ? "k" : "") + (sg ? "S" : "") + (two ? "2" : "") +
                    (L.mode == Mode::Vec ? "u" + std::to_string(vec_unroll(acc, isz)) : "") + (idx_base ? "i" : "");
  auto make = [&]() {
    std::string src = sg ? "enable subgroups;\n" : "";
    const bool f64 = acc == Acc::D || acc == Acc::AD;
    if (acc == Acc::I64 || acc == Acc::AI || L.in_dtype == at::kLong || f64) src += kernel::library("int64");
    if (f64) src += kernel::library("f64");
    if (acc == Acc::LS) src += kernel::library("pointwise");
    // The store at the end of a (row, part): the row's outputs, or its partial.
    const std::string store = L.final_pass ? "finish(oo, res);" : "store_partial(slot, res);";
    std::string code;
    if (L.mode == Mode::Thread) {
      code =
          "  let t = linear_id(wid, nwg, lid, WG);\n"
          "  let parts = P.parts;\n"
          "  if (t >= P.n_out * parts) { return; }\n"
          "  let row = t % P.n_out;\n"  // neighbouring invocations: neighbouring outputs
          "  let part = t / P.n_out;\n"
          "  let slot = row * parts + part;\n"
          "  let oo = out_offsets(row);\n"
          "  let lo = part * P.part_len;\n"
          "  let hi = min(lo + P.part_len, P.row_len);\n"
          "  var res = identity();\n"
          "  for (var r = lo; r < hi; r = r + 1u) { res = combine(res, load(oo.x + red_offset(r), r)); }\n"
          "  " +
          store + "\n";
    } else {
      code = std::string(sg ? "" : "  let sg = 1u;\n") +
             "  let g = linear_id(wid, nwg, 0u, 1u);\n"
             "  let parts = P.parts;\n"
             "  let slot = g * (WG / G) + lid / G;\n"
             "  let lane = lid % G;\n"
             "  let row = slot / parts;\n"
             "  let part = slot % parts;\n"
             "  let ok = row < P.n_out;\n"
             "  var oo = vec3<u32>(0u);\n";
      if (L.mode == Mode::Group) {
        code +=
            "  var acc = identity();\n"
            "  if (ok) {\n"
            "    oo = out_offsets(row);\n"
            "    let lo = part * P.part_len;\n"
            "    let hi = min(lo + P.part_len, P.row_len);\n"
            "    for (var r = lo + lane; r < hi; r = r + G) { acc = combine(acc, load(oo.x + red_offset(r), r)); }\n"
            "  }\n";
      } else {
        // VEC: elements per 16-byte vector, per word.
        const int64_t epv = 16 / isz;
        const std::string EPV = std::to_string(epv) + "u";
        auto fold = [&](const std::string& q, const std::string& e0) {
          std::string c;
          if (isz == 8) {
            c += "    a0 = combine(a0, conv(" + q + ".xy, " + e0 + " - base));\n";
            c += "    a1 = combine(a1, conv(" + q + ".zw, " + e0 + " + 1u - base));\n";
            return c;
          }
          const int64_t epw = 4 / isz;
          const char* comp[4] = {"x", "y", "z", "w"};
          for (int k = 0; k < 4; ++k) {
            for (int j = 0; j < epw; ++j) {
              std::string raw = q + "." + comp[k];
              if (isz == 2) raw = j == 0 ? "(" + raw + " & 0xffffu)" : "(" + raw + " >> 16u)";
              if (isz == 1) raw = "((" + raw + " >> " + std::to_string(8 * j) + "u) & 0xffu)";
              c += "    a" + std::to_string(k) + " = combine(a" + std::to_string(k) + ", conv(" + raw + ", " + e0 +
                   " + " + std::to_string(k * epw + j) + "u - base));\n";
            }
          }
          return c;
        };
        code +=
            "  var a0 = identity(); var a1 = identity(); var a2 = identity(); var a3 = identity();\n"
            "  if (ok) {\n"
            "    oo = out_offsets(row);\n"
            "    let base = oo.x;\n"
            "    let end = base + P.row_len;\n"
            "    var v0 = (base + " +
            EPV + " - 1u) / " + EPV +
            ";\n"
            "    let v1 = end / " +
            EPV +
            ";\n"
            "    var hs = end; var ts = end;\n"
            "    if (v1 > v0) { hs = v0 * " +
            EPV + "; ts = v1 * " + EPV +
            "; } else { v0 = v1; }\n"
            "    let lo = v0 + part * P.part_len;\n"
            "    let hi = min(lo + P.part_len, v1);\n"
            "    var v = lo + lid;\n";
        // U loads issued before any is folded, then single loads for the rest.
        const uint32_t U = vec_unroll(acc, isz);
        if (U > 1) {
          code +=
              "    for (; v + " + std::to_string(U - 1) + "u * WG < hi; v = v + " + std::to_string(U) + "u * WG) {\n";
          for (uint32_t k = 0; k < U; ++k)
            code += "      let q" + std::to_string(k) + " = src[v + " + std::to_string(k) + "u * WG];\n";
          for (uint32_t k = 0; k < U; ++k) {
            const std::string e = "e" + std::to_string(k);
            code += "      let " + e + " = (v + " + std::to_string(k) + "u * WG) * " + EPV + ";\n" +
                    fold("q" + std::to_string(k), e);
          }
          code += "    }\n";
        }
        code +=
            "    for (; v < hi; v = v + WG) {\n"
            "      let q0 = src[v]; let e0 = v * " +
            EPV + ";\n" + fold("q0", "e0") +
            "    }\n"
            "    if (part == 0u) {\n"
            "      let h = base + lid; if (h < hs) { a0 = combine(a0, load(h, h - base)); }\n"
            "      let t = ts + lid; if (t < end) { a1 = combine(a1, load(t, t - base)); }\n"
            "    }\n"
            "  }\n"
            "  let acc = combine(combine(a0, a1), combine(a2, a3));\n";
      }
      code +=
          "  let res = group_reduce(acc, lid, sg);\n"
          "  if (ok && lane == 0u) { " +
          store + " }\n";
    }
    return src + kernel::fill(kernel::library("reduce"),
                              {{"FUNCTIONS", functions(op, acc, L.in_dtype, L.packed_in, L.final_pass, idx_base)},
                               {"GROUP_REDUCE", sg ? kGroupReduceSubgroup : kGroupReduceShared},
                               {"SG_PARAM", sg ? ", @builtin(subgroup_size) sg: u32" : ""},
                               {"BODY", code},
                               {"WG", std::to_string(kWG)},
                               {"G", std::to_string(L.G)},
                               {"RO", std::to_string(RO)},
                               {"RR", std::to_string(RR)}});
  };
  // Bound windows: element offsets become relative to each window's start.
  const auto wi = window(*L.in, "reduction input", L.in_span);
  const auto w0 = window(*L.out0, "reduction output", L.out0_span);
  const auto w1 = two ? window(*L.out1, "reduction output", L.out1_span) : std::pair<uint64_t, uint64_t>{0, 0};
  const uint64_t in_unit = L.packed_in ? 4ull * acc_words(acc) : uint64_t(isz);
  TORCH_CHECK(wi.first % in_unit == 0, "webgpu: internal: misaligned reduction window");
  const uint64_t out0_unit = L.final_pass ? L.out0->element_size() : 4;
  kernel::Params prm;
  prm.u32("n_out", uint32_t(L.n_out));
  prm.u32("row_len", uint32_t(L.red_len));
  prm.u32("parts", uint32_t(L.parts));
  prm.u32("part_len", uint32_t(L.part_len));
  prm.u32("in_off", uint32_t(L.in_off - wi.first / in_unit));
  prm.u32("out0_off", uint32_t(L.final_pass ? L.out0_off - w0.first / out0_unit : 0));
  prm.u32("out1_off", uint32_t(two ? L.out1_off - w1.first / L.out1->element_size() : 0));
  prm.f32("fa", op.fa);
  prm.f32("fb", op.fb);
  int64_t da_bits;
  std::memcpy(&da_bits, &op.da, sizeof da_bits);
  prm.i64("da", da_bits);
  prm.u32("part_off", uint32_t(L.final_pass ? 0 : L.out0_off - w0.first / 4));
  if (idx_base) prm.u32("idx_off", uint32_t(L.idx_off));
  std::vector<uint32_t> od, rd;
  for (const Dim& d : L.outd)
    od.insert(od.end(), {uint32_t(d.size), uint32_t(d.in_stride), uint32_t(d.out0_stride), uint32_t(d.out1_stride)});
  for (const Dim& d : L.redd) rd.insert(rd.end(), {uint32_t(d.size), uint32_t(d.in_stride), 0u, 0u});
  prm.array("out_dims", od.data(), od.size());
  prm.array("red_dims", rd.data(), rd.size());
  std::vector<kernel::Storage> b;
  b.push_back({L.in, "src", "vec4<u32>", false, wi.first, wi.second});
  b.push_back({L.out0, "dst0", "u32", true, w0.first, w0.second});
  if (two) b.push_back({L.out1, "dst1", "u32", true, w1.first, w1.second});
  const uint64_t slots = uint64_t(L.n_out) * L.parts;
  const uint64_t groups = L.mode == Mode::Thread ? (slots + kWG - 1) / kWG : (slots + (kWG / L.G) - 1) / (kWG / L.G);
  kernel::launch(std::move(key), b, prm, groups, make);
}

// Collapses adjacent dims that are contiguous with each other in the input and the outputs.
std::vector<Dim> coalesce(const std::vector<Dim>& d) {
  std::vector<Dim> out;
  for (const Dim& x : d) {
    if (x.size == 1) continue;
    if (!out.empty()) {
      Dim& p = out.back();
      if (p.in_stride * p.size == x.in_stride && p.out0_stride * p.size == x.out0_stride &&
          p.out1_stride * p.size == x.out1_stride) {
        p.size *= x.size;
        continue;
      }
    }
    out.push_back(x);
  }
  return out;
}

uint32_t pow2_at_least(int64_t v) {
  uint32_t g = 1;
  while (g < v && g < kWG) g <<= 1;
  return g;
}

// How rows lie over invocations: the mode, lanes per row, and the parts each row is split into.
struct Plan {
  Mode mode = Mode::Thread;
  uint32_t G = 1;
  int64_t parts = 1;
};

Plan plan_rows(int64_t n_out, int64_t red_len, const std::vector<Dim>& od, const std::vector<Dim>& rd, int64_t isz) {
  Plan p;
  const bool contig_rows = rd.size() == 1 && rd[0].in_stride == 1;
  const bool thread_mode = red_len <= 16 || (!contig_rows && n_out >= 1024 && !od.empty() && od.front().in_stride == 1);
  if (thread_mode) {
    // Few outputs for a GPU's width: split the rows too (about 64k invocations in all).
    if (red_len > 64 && n_out < 65536)
      p.parts = std::max<int64_t>(1, std::min<int64_t>((65536 + n_out - 1) / n_out, red_len / 32));
    return p;
  }
  const int64_t epv = 16 / isz;
  if (contig_rows && red_len >= int64_t(kWG) * epv) {
    // Enough 16-byte loads per lane and a bounded number of workgroups (vec_tuning()).
    const VecTuning& vt = vec_tuning();
    const int64_t nv = red_len / epv + 1, per_group = int64_t(kWG) * vt.loads;
    p.parts = std::max<int64_t>(1, std::min<int64_t>((nv + per_group - 1) / per_group, int64_t(vt.groups) / n_out));
    p.mode = Mode::Vec;
    p.G = kWG;
    return p;
  }
  if (red_len > 4096 && n_out < 1024) p.parts = std::min<int64_t>((2048 + n_out - 1) / n_out, (red_len + 2047) / 2048);
  p.mode = Mode::Group;
  // Lanes per row: about eight elements each, up to the workgroup.
  p.G = p.parts > 1 ? kWG : std::max<uint32_t>(4, pow2_at_least((red_len + 7) / 8));
  return p;
}

// Elements (VEC: 16-byte vectors) per part of a row of red_len elements.
int64_t part_len_of(const Plan& p, int64_t red_len, int64_t isz) {
  const int64_t n = p.mode == Mode::Vec ? red_len / (16 / isz) + 1 : red_len;
  return (n + p.parts - 1) / p.parts;
}

// The final pass over packed partials: row k's `total` partials lie at k * row_stride (packed
// units) through redd; L gives the outputs (targets, offsets, spans) and the output dims.
void fold_partials(const kernel::DeviceInfo& dev, const Op& op, Acc acc, const Launch& L, const at::Tensor& partial,
                   std::vector<Dim> redd, int64_t row_stride, int64_t total) {
  const int W = acc_words(acc);
  TORCH_CHECK(partial.storage_offset() % W == 0, "webgpu: internal: unaligned partials");
  std::vector<Dim> od_final = L.outd;
  int64_t s = row_stride;
  for (auto& d : od_final) {
    d.in_stride = s;
    s *= d.size;
  }
  Op op2 = op;
  op2.red = reduction(op.red).partials;
  Launch F{&partial,    uint64_t(partial.storage_offset() / W),
           L.in_dtype,  true,
           L.out0,      L.out1,
           L.out0_off,  L.out1_off,
           od_final,    std::move(redd),
           L.n_out,     total,
           1,           total,
           Mode::Group, std::max<uint32_t>(pow2_at_least(total), 4),
           true};
  F.out0_span = L.out0_span;
  F.out1_span = L.out1_span;
  dispatch(dev, op2, acc, F);
}

// One launch plan's rows: a single dispatch, or the parts' partials and then their fold.
void reduce_rows(const kernel::DeviceInfo& dev, const Op& op, Acc acc, const Launch& L) {
  if (L.parts == 1) return dispatch(dev, op, acc, L);
  const int W = acc_words(acc);
  at::Tensor partial = at::empty({L.n_out * L.parts * W}, L.in->options().dtype(at::kInt));
  Launch P = L;
  P.final_pass = false;
  P.out0 = &partial;
  P.out1 = nullptr;
  P.out0_off = partial.storage_offset();
  P.out0_span = P.out1_span = {0, 0};
  dispatch(dev, op, acc, P);
  // Fold the parts: the partials of output k are `parts` packed values at k * parts.
  fold_partials(dev, op, acc, L, partial, {{L.parts, 1, 0, 0}}, L.parts, L.parts);
}

// Operands past the binding limit (run_split): a piece of a set of dims, with dims [0, level) whole,
// dim `level` a range, and the dims above at one index each.
int64_t stride_of(const Dim& d, int ch) { return ch == 0 ? d.in_stride : ch == 1 ? d.out0_stride : d.out1_stride; }

struct Cut {
  size_t level;  // == dims.size(): one piece, the whole
  int64_t len;  // the range's length in dim `level`
};

struct Piece {
  int64_t off[3];  // element offsets of its first element: input, output 0, output 1
  int64_t lin;  // its first element's linear index over the dims (dim 0 fastest)
  std::vector<Dim> dims;
  int64_t count;
};

// The coarsest cut whose pieces fit: per channel (input, output 0, output 1, each of element size
// esz[ch], 0: unused) at most budget[ch] bytes from a piece's first to its last element, and at
// most max_count elements per piece. One element always fits (budget[ch] >= esz[ch]).
Cut choose_cut(const std::vector<Dim>& d, const uint64_t budget[3], const int64_t esz[3], int64_t max_count) {
  auto fits = [&](size_t n, int64_t c) {
    int64_t count = c;
    uint64_t ext[3] = {0, 0, 0};
    for (size_t i = 0; i <= n && i < d.size(); ++i) {
      const int64_t sz = i < n ? d[i].size : c;
      if (i < n) count *= sz;
      for (int ch = 0; ch < 3; ++ch) ext[ch] += uint64_t(sz - 1) * uint64_t(stride_of(d[i], ch));
    }
    if (count > max_count) return false;
    for (int ch = 0; ch < 3; ++ch)
      if (esz[ch] != 0 && (ext[ch] + 1) * uint64_t(esz[ch]) > budget[ch]) return false;
    return true;
  };
  if (fits(d.size(), 1)) return {d.size(), 0};
  for (size_t n = d.size(); n-- > 0;) {
    if (!fits(n, 1)) continue;
    int64_t lo = 1, hi = d[n].size;  // the longest range of dim n that fits
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (fits(n, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    return {n, lo};
  }
  TORCH_INTERNAL_ASSERT(false, "webgpu: reduction: no cut fits the binding limit");
}

std::vector<Piece> pieces(const std::vector<Dim>& d, Cut cut) {
  std::vector<int64_t> inner(d.size() + 1, 1);
  for (size_t i = 0; i < d.size(); ++i) inner[i + 1] = inner[i] * d[i].size;
  if (cut.level == d.size()) return {Piece{{0, 0, 0}, 0, d, inner[d.size()]}};
  const size_t L = cut.level;
  std::vector<int64_t> idx(d.size(), 0);  // the indices of dims above L
  std::vector<Piece> out;
  for (;;) {
    for (int64_t s = 0; s < d[L].size; s += cut.len) {
      Piece p{{0, 0, 0}, s * inner[L], {}, 0};
      for (int ch = 0; ch < 3; ++ch) p.off[ch] = s * stride_of(d[L], ch);
      for (size_t e = L + 1; e < d.size(); ++e) {
        for (int ch = 0; ch < 3; ++ch) p.off[ch] += idx[e] * stride_of(d[e], ch);
        p.lin += idx[e] * inner[e];
      }
      p.dims.assign(d.begin(), d.begin() + L);
      Dim r = d[L];
      r.size = std::min(cut.len, d[L].size - s);
      p.dims.push_back(r);
      p.count = inner[L] * r.size;
      p.dims = coalesce(p.dims);  // keeps the linear order
      out.push_back(std::move(p));
    }
    size_t e = L + 1;
    while (e < d.size() && ++idx[e] == d[e].size) idx[e++] = 0;
    if (e >= d.size()) break;
  }
  return out;
}

// Bytes [lo, hi) of elements of size esz reached from element `off` through dims (channel ch).
std::pair<uint64_t, uint64_t> span_of(uint64_t off, const std::vector<Dim>& a, const std::vector<Dim>& b, int ch,
                                      int64_t esz) {
  uint64_t ext = 0;
  for (const Dim& d : a) ext += uint64_t(d.size - 1) * uint64_t(stride_of(d, ch));
  for (const Dim& d : b) ext += uint64_t(d.size - 1) * uint64_t(stride_of(d, ch));
  return {off * esz, (off + ext + 1) * esz};
}

// A reduction whose input (or an output) spans more than one binding may cover, as CUDA splits
// reductions past 32-bit indexing: the reduced dims are cut into chunks that fit (each chunk's
// partials are packed per row, and one fold per row combines every chunk's in a fixed order), and
// the outputs into groups whose input, outputs and partials fit. With the reduced dims whole, each
// group runs the unsplit plan (the same parts, so the same results bit for bit).
void run_split(const kernel::DeviceInfo& dev, const Op& op, Acc acc, const Launch& L, const Plan& plan,
               const char* name) {
  const int64_t isz = c10::elementSize(L.in_dtype);
  const int64_t esz[3] = {isz, L.out0->element_size(), L.out1 ? L.out1->element_size() : 0};
  const uint64_t max_bind = std::min<uint64_t>(dev.max_binding, 0xfffffff0ull) / 16 * 16;
  const uint64_t align = std::max<uint64_t>(dev.min_storage_offset_alignment, 16);
  TORCH_CHECK(max_bind > 4 * align, "webgpu: ", name, ": maxStorageBufferBindingSize (", max_bind,
              " bytes) is too small to split a reduction over");
  const uint64_t lim = max_bind - align - 16;  // a span that fits once its window is aligned
  const int W = acc_words(acc);

  // The chunks of the reduced dims: whole where they fit, else cut to leave room for the outputs'
  // extent in the input (at least half the limit).
  std::vector<Piece> chunks;
  if (span_of(0, L.redd, {}, 0, isz).second <= lim) {
    chunks = pieces(L.redd, {L.redd.size(), 0});
  } else {
    const uint64_t out_ext = span_of(0, L.outd, {}, 0, isz).second - isz;
    const uint64_t budget[3] = {out_ext <= lim / 2 ? lim - out_ext : lim / 2, 0, 0};
    const int64_t e[3] = {isz, 0, 0};
    chunks = pieces(L.redd, choose_cut(L.redd, budget, e, std::numeric_limits<int64_t>::max()));
  }
  const int64_t K = int64_t(chunks.size());
  const uint64_t chunk_bytes = span_of(0, chunks[0].dims, {}, 0, isz).second;  // the first chunk is the longest
  // Outputs per group: the input left after a chunk, each output's own span, and the partials.
  int64_t max_rows = std::numeric_limits<int64_t>::max();
  if (K > 1 || plan.parts > 1) max_rows = int64_t(lim / (uint64_t(K) * (K > 1 ? 1 : plan.parts) * W * 4));
  TORCH_CHECK(max_rows >= 1, "webgpu: ", name, ": the reduction needs ", K,
              " chunks to fit the binding limit, whose partials exceed it (maxStorageBufferBindingSize ", max_bind,
              " bytes)");
  const uint64_t budget[3] = {lim - chunk_bytes + isz, lim, lim};
  const std::vector<Piece> groups = pieces(L.outd, choose_cut(L.outd, budget, esz, max_rows));

  auto group_launch = [&](const Piece& g) {
    Launch G = L;
    G.in_off += g.off[0];
    G.out0_off += g.off[1];
    G.out1_off += g.off[2];
    G.outd = g.dims;
    G.n_out = g.count;
    G.out0_span = span_of(G.out0_off, g.dims, {}, 1, esz[1]);
    if (L.out1) G.out1_span = span_of(G.out1_off, g.dims, {}, 2, esz[2]);
    return G;
  };
  if (K == 1) {
    for (const Piece& g : groups) {
      Launch G = group_launch(g);
      G.in_span = span_of(G.in_off, g.dims, L.redd, 0, isz);
      reduce_rows(dev, op, acc, G);
    }
    return;
  }
  // Chunks: one plan for all (the first group's and first chunk's, which are the largest), parts
  // bounded so that a group's partials, K * parts per row, fit one binding.
  Plan cp = plan_rows(groups[0].count, chunks[0].count, groups[0].dims, chunks[0].dims, isz);
  cp.parts = std::max<int64_t>(
      1, std::min<int64_t>(cp.parts, int64_t(lim / (uint64_t(groups[0].count) * uint64_t(K) * W * 4))));
  const int64_t per_chunk = groups[0].count * cp.parts * W;  // words
  at::Tensor partial = at::empty({per_chunk * K}, L.in->options().dtype(at::kInt));
  for (const Piece& g : groups) {
    const Launch G = group_launch(g);
    for (int64_t c = 0; c < K; ++c) {
      const Piece& ch = chunks[c];
      Launch P = G;
      P.final_pass = false;
      P.in_off = G.in_off + ch.off[0];
      P.redd = ch.dims.empty() ? std::vector<Dim>{{1, 0, 0, 0}} : ch.dims;
      P.red_len = ch.count;
      P.mode = cp.mode;
      P.G = cp.G;
      P.parts = cp.parts;
      P.part_len = part_len_of(cp, ch.count, isz);
      P.out0 = &partial;
      P.out1 = nullptr;
      P.out0_off = partial.storage_offset() + c * g.count * cp.parts * W;
      P.in_span = span_of(P.in_off, g.dims, ch.dims, 0, isz);
      P.out0_span = {P.out0_off * 4, (P.out0_off + g.count * cp.parts * W) * 4};
      P.out1_span = {0, 0};
      P.idx_off = ch.lin;
      dispatch(dev, op, acc, P);
    }
    // Row k's partials: cp.parts at k * cp.parts in each chunk's block of g.count * cp.parts.
    std::vector<Dim> redd = coalesce({{cp.parts, 1, 0, 0}, {K, g.count * cp.parts, 0, 0}});
    fold_partials(dev, op, acc, G, partial, std::move(redd), cp.parts, K * cp.parts);
  }
}

}  // namespace

// Reduces `in` over the dims described by od/rd (element strides; od's out strides in elements of
// outs[k]) into outs (1 or 2 tensors, of out_storage() dtypes, any strides).
void run(const Op& op, const at::Tensor& in_, std::vector<Dim> od, std::vector<Dim> rd,
         const std::vector<at::Tensor>& outs, const char* name) {
  const Acc acc = acc_for(in_.scalar_type(), op.red);  // before anything is recorded: may raise NoDtypeKernel
  at::Tensor in = in_;
  for (const auto& o : outs)
    if (kernel::block_id(o) == kernel::block_id(in)) in = in_.clone();  // an output overlapping the input: read a copy
  od = coalesce(od);
  rd = coalesce(rd);
  if (rd.empty()) rd.push_back({1, 0, 0, 0});  // the kernel indexes the last reduced dim
  int64_t n_out = 1, red_len = 1;
  for (auto& d : od) n_out *= d.size;
  for (auto& d : rd) red_len *= d.size;
  if (n_out == 0) return;
  TORCH_CHECK(
      in.storage().nbytes() / in.element_size() < int64_t(UINT32_MAX) - 64 && n_out * red_len <= int64_t(UINT32_MAX),
      "webgpu: ", name, ": tensors past 2^32 elements are not supported by webgpu reductions");
  const kernel::DeviceInfo& dev = kernel::device_info(in);

  // Outputs are written directly when they hold the storage dtype, else into contiguous scratch.
  std::vector<at::Tensor> targets;
  for (size_t k = 0; k < outs.size(); ++k) {
    const at::ScalarType st = out_storage(op, acc, int(k));
    const bool direct =
        outs[k].scalar_type() == st && !(k == 1 && kernel::block_id(outs[1]) == kernel::block_id(outs[0]));
    targets.push_back(direct ? outs[k] : at::empty({n_out}, outs[k].options().dtype(st)));
    if (!direct) {
      int64_t s = 1;
      for (auto& d : od) {
        (k == 0 ? d.out0_stride : d.out1_stride) = s;
        s *= d.size;
      }
    }
  }
  const int64_t isz = in.element_size();
  const uint64_t in_off = in.storage_offset();
  const uint64_t o0 = targets[0].storage_offset(), o1 = targets.size() > 1 ? targets[1].storage_offset() : 0;
  const at::Tensor* t1 = targets.size() > 1 ? &targets[1] : nullptr;

  const Plan plan = plan_rows(n_out, red_len, od, rd, isz);
  Launch L{&in,
           in_off,
           in.scalar_type(),
           false,
           &targets[0],
           t1,
           o0,
           o1,
           od,
           rd,
           n_out,
           red_len,
           plan.parts,
           part_len_of(plan, red_len, isz),
           plan.mode,
           plan.G,
           true};
  // A block past the binding limit may still be bound as one window over what the reduction reads.
  bool big = kernel::block_bytes(in) > dev.max_binding;
  for (const at::Tensor& t : targets) big = big || kernel::block_bytes(t) > dev.max_binding;
  if (big)
    run_split(dev, op, acc, L, plan, name);
  else
    reduce_rows(dev, op, acc, L);
  for (size_t k = 0; k < outs.size(); ++k) {
    if (targets[k].is_same(outs[k])) continue;
    // targets hold the outputs in iteration order (dim 0 fastest): view the output the same way.
    outs[k].copy_(targets[k].view(outs[k].sizes()));
  }
}

// From a TensorIterator reduction: outputs are operands [0, noutputs), the input follows.
void reduce_iter(at::TensorIteratorBase& iter, const Op& op_in, const char* name) {
  Op op = op_in;
  const int nout = iter.noutputs();
  TORCH_CHECK(iter.ntensors() == nout + 1 && nout >= 1 && nout <= 2, "webgpu: ", name, ": unexpected reduction form");
  const at::Tensor& in = iter.input(0);
  if (in.is_complex() || iter.output(0).is_complex()) return complex_reduce(iter, name);  // ops/complex.cpp
  // float64 is checked by the row (way_for): the rows without a float64 way raise NoDtypeKernel.
  check_kernel_dtype(in.scalar_type(), name);
  for (int k = 0; k < nout; ++k) check_kernel_dtype(iter.output(k).scalar_type(), name);
  // CPU reduces the unsigned and float8 types into int64 or bool only (sum(dtype=torch.uint32) raises).
  for (int k = 0; k < nout; ++k)
    TORCH_CHECK_NOT_IMPLEMENTED(!kernel::is_uint_fp8(iter.output(k).scalar_type()), "\"", name,
                                "\" not implemented for '", iter.output(k).scalar_type(), "' on webgpu");
  std::vector<Dim> od, rd;
  int64_t red_len = 1;
  for (int d = 0; d < iter.ndim(); ++d) {
    const int64_t s0 = iter.strides(0)[d] / iter.output(0).element_size();
    const int64_t s1 = nout > 1 ? iter.strides(1)[d] / iter.output(1).element_size() : 0;
    Dim x{iter.shape()[d], iter.strides(nout)[d] / in.element_size(), s0, s1};
    if (iter.is_dim_reduced(d)) {
      rd.push_back(x);
      red_len *= x.size;
    } else {
      od.push_back(x);
    }
  }
  const Reduction& row = reduction(op.red);
  if (row.fa_row_length) {
    op.fa = float(red_len);
    op.da = double(red_len);
  }
  if (iter.numel() == 0) {
    // Rows of length zero: the identity.
    const at::Tensor& out = iter.output(0);
    out.fill_(row.empty_inf_if_fa_negative && op.fa < 0 ? std::numeric_limits<double>::infinity() : row.empty);
    return;
  }
  // Outputs viewed through the iterator's dims (dim 0 fastest): writing through these views with
  // the iterator's strides is what the kernel does; a scratch target is copied into them.
  std::vector<at::Tensor> outs;
  for (int k = 0; k < nout; ++k) {
    std::vector<int64_t> sizes, strides;
    for (int d = iter.ndim() - 1; d >= 0; --d) {
      if (iter.is_dim_reduced(d)) continue;
      sizes.push_back(iter.shape()[d]);
      strides.push_back(iter.strides(k)[d] / iter.output(k).element_size());
    }
    outs.push_back(iter.output(k).as_strided(sizes, strides, iter.output(k).storage_offset()));
  }
  run(op, in, od, rd, outs, name);
}

}  // namespace webgpu::ops
