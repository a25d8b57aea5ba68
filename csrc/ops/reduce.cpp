// Reductions over any set of dims: sum, nansum, prod, mean, amax, amin, any, all. ATen's structured
// kernels do shapes, dtypes and out= (ops/structured.h); the reduction kernels here receive the
// TensorIterator through the DispatchStubs, like CPU and CUDA.
#include <ATen/native/ReduceOps.h>
#include <ATen/native/SharedReduceOps.h>
#include <ATen/ops/all_native.h>
#include <ATen/ops/amax_native.h>
#include <ATen/ops/amin_native.h>
#include <ATen/ops/any_native.h>
#include <ATen/ops/mean_native.h>
#include <ATen/ops/prod_native.h>
#include <ATen/ops/sum_native.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "runtime/pipeline.h"

namespace webgpu::ops {
namespace {

constexpr uint32_t kWG = 256;
constexpr int kMaxRank = 4;

enum class Acc { F32, I64, U32 };  // accumulator: floats, integers, booleans
enum class Red { Sum, NanSum, Prod, Max, Min, Any, All, Mean };

struct Dim {
  int64_t size, in_stride, out_stride;
};

Acc acc_for(at::ScalarType in, Red r) {
  if (r == Red::Any || r == Red::All) return Acc::U32;
  if (at::isFloatingType(in)) return Acc::F32;
  return Acc::I64;
}

const char* acc_type(Acc a) { return a == Acc::F32 ? "f32" : a == Acc::I64 ? "vec2<u32>" : "u32"; }

// WGSL reading element e of the input (dtype t) as the accumulator type.
std::string load_expr(at::ScalarType t, Acc a) {
  std::string raw;
  switch (c10::elementSize(t)) {
    case 1: raw = "((src[e >> 2u] >> ((e & 3u) * 8u)) & 0xffu)"; break;
    case 2: raw = "((src[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu)"; break;
    case 4: raw = "src[e]"; break;
    default: raw = "vec2<u32>(src[2u * e], src[2u * e + 1u])"; break;
  }
  const std::string sext = t == at::kShort ? "(bitcast<i32>(r << 16u) >> 16u)"
                         : t == at::kChar ? "(bitcast<i32>(r << 24u) >> 24u)"
                         : t == at::kInt ? "bitcast<i32>(r)"
                         : "i32(r)";
  std::string v;
  if (a == Acc::U32) {
    v = t == at::kLong ? "select(0u, 1u, (r.x | r.y) != 0u)"
      : t == at::kFloat ? "select(0u, 1u, (r & 0x7fffffffu) != 0u)"
      : t == at::kHalf ? "select(0u, 1u, (r & 0x7fffu) != 0u)"
      : t == at::kBFloat16 ? "select(0u, 1u, (r & 0x7fffu) != 0u)"
      : "select(0u, 1u, r != 0u)";
  } else if (a == Acc::F32) {
    v = t == at::kFloat ? "bitcast<f32>(r)" : t == at::kHalf ? "f16_to_f32(r)" : "bitcast<f32>(r << 16u)";
  } else {
    v = t == at::kLong ? "r" : t == at::kBool || t == at::kByte ? "vec2<u32>(r, 0u)" : "i64_from_i32(" + sext + ")";
  }
  return "let r = " + raw + "; return " + v + ";";
}

struct RedSpec {
  const char* identity_f32;
  const char* identity_i64;
  const char* identity_u32;
  const char* combine_f32;
  const char* combine_i64;
  const char* combine_u32;
};

RedSpec spec(Red r) {
  switch (r) {
    case Red::Sum: case Red::Mean:
      return {"0.0", "vec2<u32>(0u, 0u)", "0u", "a + b", "i64_add(a, b)", "a + b"};
    case Red::NanSum:
      return {"0.0", "vec2<u32>(0u, 0u)", "0u", "select(a, 0.0, nan(a)) + select(b, 0.0, nan(b))", "i64_add(a, b)", "a + b"};
    case Red::Prod:
      return {"1.0", "vec2<u32>(1u, 0u)", "1u", "a * b", "i64_mul(a, b)", "a * b"};
    case Red::Max:
      return {"inf_bits(0xff800000u)", "vec2<u32>(0u, 0x80000000u)", "0u",
              "select(select(max(a, b), b, nan(b)), a, nan(a))", "i64_max(a, b)", "max(a, b)"};
    case Red::Min:
      return {"inf_bits(0x7f800000u)", "vec2<u32>(0xffffffffu, 0x7fffffffu)", "1u",
              "select(select(min(a, b), b, nan(b)), a, nan(a))", "i64_min(a, b)", "min(a, b)"};
    case Red::Any: return {"", "", "0u", "", "", "max(a, b)"};
    case Red::All: return {"", "", "1u", "", "", "min(a, b)"};
  }
  return {};
}

// Collapses adjacent dims that are contiguous with each other in the input and the output.
std::vector<Dim> coalesce(std::vector<Dim> d) {
  std::vector<Dim> out;
  for (const Dim& x : d) {
    if (x.size == 1) continue;
    if (!out.empty()) {
      Dim& p = out.back();
      if (p.in_stride * p.size == x.in_stride && p.out_stride * p.size == x.out_stride) {
        p.size *= x.size;
        continue;
      }
    }
    out.push_back(x);
  }
  return out;
}

struct Launch {
  rt::Block* in_block;
  uint64_t in_off;      // elements
  at::ScalarType in_dtype;
  rt::Block* out_block;
  uint64_t out_off;     // elements of the accumulator's storage type
  std::vector<Dim> outd, redd;
  int64_t n_out, red_len, parts, part_len;
  bool thread_mode, final_pass;
};

void dispatch(rt::GpuDevice& dev, Red red, Acc acc, const Launch& L, float scale) {
  const int RO = int(L.outd.size()), RR = int(L.redd.size());
  TORCH_CHECK(RO <= kMaxRank && RR <= kMaxRank, "webgpu: reduction over a tensor with too many non-mergeable dims");
  std::string key = "reduce:" + std::to_string(int(red)) + ":" + std::to_string(int(acc)) + ":" +
                    std::to_string(int(L.in_dtype)) + ":" + std::to_string(RO) + ":" + std::to_string(RR) + ":" +
                    (L.thread_mode ? "t" : "w") + (L.final_pass ? "f" : "p") +
                    (L.in_block == L.out_block ? "a" : "b");
  const bool alias = L.in_block == L.out_block;
  auto make = [&]() {
    const RedSpec s = spec(red);
    const char* ident = acc == Acc::F32 ? s.identity_f32 : acc == Acc::I64 ? s.identity_i64 : s.identity_u32;
    const char* comb = acc == Acc::F32 ? s.combine_f32 : acc == Acc::I64 ? s.combine_i64 : s.combine_u32;
    const std::string A = acc_type(acc);
    std::string src = rt::wgsl_source("common");
    if (acc == Acc::I64) src += rt::wgsl_source("int64");
    std::string body = rt::wgsl_source("reduce");
    std::string binds = alias ? "@group(0) @binding(1) var<storage, read_write> src: array<u32>;\n"
                              : "@group(0) @binding(1) var<storage, read> src: array<u32>;\n"
                                "@group(0) @binding(2) var<storage, read_write> dst: array<u32>;\n";
    if (alias) binds += "fn dst_store(i: u32, v: u32) { src[i] = v; }\n";
    else binds += "fn dst_store(i: u32, v: u32) { dst[i] = v; }\n";
    // Infinities cannot be WGSL constants; a var makes the bitcast a run-time value.
    // NaN tests on the bits: shader compilers may assume floats are never NaN.
    std::string fns = "fn inf_bits(b: u32) -> f32 { var v = b; return bitcast<f32>(v); }\n"
                      "fn nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }\nalias ACC = " + A + ";\nfn identity() -> ACC { return " + ident + "; }\n"
                      "fn combine(a: ACC, b: ACC) -> ACC { return " + comb + "; }\n"
                      "fn load(e: u32) -> ACC { " + load_expr(L.in_dtype, acc) + " }\n";
    // The final value of a row, stored as the accumulator's words.
    std::string fin = red == Red::Mean && acc == Acc::F32 && L.final_pass ? "v / bitcast<f32>(prm(6u))" : "v";
    if (acc == Acc::F32) fns += "fn store(o: u32, v: f32) { dst_store(o, bitcast<u32>(" + fin + ")); }\n";
    else if (acc == Acc::I64) fns += "fn store(o: u32, v: vec2<u32>) { dst_store(2u * o, v.x); dst_store(2u * o + 1u, v.y); }\n";
    else fns += "fn store(o: u32, v: u32) { dst_store(o, v); }\n";
    std::string code;
    if (L.thread_mode) {
      code =
          "  let row = linear_id(wid, nwg, lid, WG);\n"
          "  if (row >= prm(0u)) { return; }\n"
          "  let oo = out_offsets(row);\n"
          "  var acc = identity();\n"
          "  for (var r = 0u; r < prm(1u); r = r + 1u) { acc = combine(acc, load(oo.x + red_offset(r))); }\n"
          "  store(oo.y, acc);\n";
    } else {
      code =
          "  let g = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;\n"
          "  let parts = prm(2u);\n"
          "  let row = g / parts;\n"
          "  let part = g % parts;\n"
          "  if (row >= prm(0u)) { return; }\n"
          "  let oo = out_offsets(row);\n"
          "  let lo = part * prm(3u);\n"
          "  let hi = min(lo + prm(3u), prm(1u));\n"
          "  var acc = identity();\n"
          "  for (var r = lo + lid; r < hi; r = r + WG) { acc = combine(acc, load(oo.x + red_offset(r))); }\n"
          "  scratch[lid] = acc;\n"
          "  workgroupBarrier();\n"
          "  for (var s = WG / 2u; s > 0u; s = s >> 1u) {\n"
          "    if (lid < s) { scratch[lid] = combine(scratch[lid], scratch[lid + s]); }\n"
          "    workgroupBarrier();\n"
          "  }\n"
          "  if (lid == 0u) { store(select(prm(5u) + g, oo.y, parts == 1u), scratch[0]); }\n";
    }
    auto rep = [](std::string& s, const std::string& a, const std::string& b) {
      for (size_t p = s.find(a); p != std::string::npos; p = s.find(a, p + b.size())) s.replace(p, a.size(), b);
    };
    rep(body, "{{BINDINGS}}", binds);
    rep(body, "{{FUNCTIONS}}", fns);
    rep(body, "{{BODY}}", code);
    rep(body, "{{WG}}", std::to_string(kWG));
    rep(body, "{{RO}}", std::to_string(RO));
    rep(body, "{{RR}}", std::to_string(RR));
    return src + body;
  };
  const rt::Pipeline& p = dev.pipelines().get(key, alias ? 1 : 2, alias ? 0u : 1u, make);
  std::vector<uint32_t> prm(7, 0);
  prm[0] = uint32_t(L.n_out);
  prm[1] = uint32_t(L.red_len);
  prm[2] = uint32_t(L.parts);
  prm[3] = uint32_t(L.part_len);
  prm[4] = uint32_t(L.in_off);
  prm[5] = uint32_t(L.out_off);
  std::memcpy(&prm[6], &scale, 4);
  for (const Dim& d : L.outd) {
    prm.push_back(uint32_t(d.size));
    prm.push_back(uint32_t(d.in_stride));
    prm.push_back(uint32_t(d.out_stride));
  }
  for (const Dim& d : L.redd) {
    prm.push_back(uint32_t(d.size));
    prm.push_back(uint32_t(d.in_stride));
  }
  std::vector<rt::Binding> b;
  b.push_back({L.in_block->buffer.get(), 0, L.in_block->size});
  if (!alias) b.push_back({L.out_block->buffer.get(), 0, L.out_block->size});
  const uint64_t groups = L.thread_mode ? (uint64_t(L.n_out) + kWG - 1) / kWG : uint64_t(L.n_out) * L.parts;
  dev.stream().dispatch(p, b.data(), uint32_t(b.size()), prm.data(), uint32_t(prm.size()), groups);
}

at::ScalarType acc_storage_dtype(Acc a) { return a == Acc::F32 ? at::kFloat : a == Acc::I64 ? at::kLong : at::kInt; }

void reduce(at::TensorIteratorBase& iter, Red red, const char* name) {
  TORCH_CHECK(iter.ntensors() == 2 && iter.noutputs() == 1, "webgpu: ", name, ": unexpected reduction form");
  const at::Tensor& out = iter.output(0);
  const at::Tensor& in = iter.input(0);
  check_supported_dtype(in.scalar_type(), name);
  check_supported_dtype(out.scalar_type(), name);
  const Acc acc = acc_for(iter.input_dtype(0), red);
  if (iter.numel() == 0) {
    if (red == Red::Mean) out.fill_(std::numeric_limits<float>::quiet_NaN());
    else if (red == Red::Prod || red == Red::All) out.fill_(1);
    else out.fill_(0);
    return;
  }
  TORCH_CHECK(iter.numel() <= int64_t(UINT32_MAX), "webgpu: ", name, ": more than 2^32-1 elements");
  rt::GpuDevice& dev = gpu_of(in);
  const int64_t in_item = in.element_size();
  std::vector<Dim> od, rd;
  for (int d = 0; d < iter.ndim(); ++d) {
    const int64_t s_out = iter.strides(0)[d], s_in = iter.strides(1)[d];
    Dim x{iter.shape()[d], s_in / in_item, s_out / out.element_size()};
    if (iter.is_dim_reduced(d)) rd.push_back(x);
    else od.push_back(x);
  }
  od = coalesce(od);
  rd = coalesce(rd);
  if (rd.empty()) rd.push_back({1, 0, 0});  // the kernel indexes the last reduced dim
  int64_t n_out = 1, red_len = 1;
  for (auto& d : od) n_out *= d.size;
  for (auto& d : rd) red_len *= d.size;

  // The output is written directly when it holds the accumulator's type; otherwise a contiguous
  // scratch tensor of that type is written and cast into the output.
  const at::ScalarType acc_dt = acc_storage_dtype(acc);
  at::Tensor target = out.scalar_type() == acc_dt ? out : at::empty({n_out}, out.options().dtype(acc_dt));
  if (!target.is_same(out)) {
    int64_t s = 1;
    for (auto& d : od) {
      d.out_stride = s;
      s *= d.size;
    }
  }
  const uint64_t in_off = byte_offset_of(in) / in_item;
  const uint64_t out_off = byte_offset_of(target) / target.element_size();
  const float scale = float(red_len);

  // Short rows, or rows whose elements are far apart while neighbouring outputs are adjacent in
  // memory: one invocation per output. Otherwise workgroups, splitting long rows into parts.
  const bool inner_contig = rd.empty() || rd.front().in_stride == 1;
  const bool thread_mode = red_len <= 16 || (!inner_contig && n_out >= 1024 && !od.empty() && od.front().in_stride == 1);
  if (thread_mode) {
    dispatch(dev, red, acc, {block_of(in), in_off, in.scalar_type(), block_of(target), out_off, od, rd, n_out, red_len, 1,
                             red_len, true, true}, scale);
  } else {
    int64_t parts = 1;
    if (red_len > 4096 && n_out < 1024) parts = std::min<int64_t>((2048 + n_out - 1) / n_out, (red_len + 2047) / 2048);
    const int64_t part_len = (red_len + parts - 1) / parts;
    if (parts == 1) {
      dispatch(dev, red, acc, {block_of(in), in_off, in.scalar_type(), block_of(target), out_off, od, rd, n_out, red_len,
                               1, part_len, false, true}, scale);
    } else {
      at::Tensor partial = at::empty({n_out * parts}, out.options().dtype(acc_dt));
      dispatch(dev, red, acc, {block_of(in), in_off, in.scalar_type(), block_of(partial),
                               byte_offset_of(partial) / partial.element_size(), od, rd, n_out, red_len, parts,
                               part_len, false, false}, scale);
      // Fold the parts: the partials of output k are `parts` contiguous values at k * parts.
      std::vector<Dim> od_final = od;
      int64_t s = parts;
      for (auto& d : od_final) {
        d.in_stride = s;
        s *= d.size;
      }
      const Red red2 = red == Red::NanSum ? Red::Sum : red;
      dispatch(dev, red2, acc, {block_of(partial), byte_offset_of(partial) / partial.element_size(), acc_dt,
                                block_of(target), out_off, od_final, {{parts, 1, 0}}, n_out, parts, 1, parts, false,
                                true}, scale);
    }
  }
  if (!target.is_same(out)) {
    // target holds the outputs in iteration order (dim 0 fastest): view the output the same way.
    std::vector<int64_t> sizes, strides;
    for (int d = iter.ndim() - 1; d >= 0; --d) {
      if (iter.is_dim_reduced(d)) continue;
      sizes.push_back(iter.shape()[d]);
      strides.push_back(iter.strides(0)[d] / out.element_size());
    }
    out.as_strided(sizes, strides, out.storage_offset()).copy_(target.view(sizes));
  }
}

#define WEBGPU_REDUCTION(stub, red)                                              \
  void stub##_kernel(at::TensorIterator& iter) { reduce(iter, red, #stub); } \
  WEBGPU_STUB(stub, &stub##_kernel)

WEBGPU_REDUCTION(sum_stub, Red::Sum)
WEBGPU_REDUCTION(nansum_stub, Red::NanSum)
WEBGPU_REDUCTION(prod_stub, Red::Prod)
WEBGPU_REDUCTION(mean_stub, Red::Mean)
WEBGPU_REDUCTION(max_values_stub, Red::Max)
WEBGPU_REDUCTION(min_values_stub, Red::Min)
WEBGPU_REDUCTION(or_stub, Red::Any)
WEBGPU_REDUCTION(and_stub, Red::All)

at::Tensor prod_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return at::prod(self.reshape({-1}), 0, false, dtype);
}

at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return at::native::nansum_out(self, dim, keepdim, dtype, out);
}

at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  return at::native::nansum(self, dim, keepdim, dtype);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using T = const at::Tensor&;
  using OptDims = at::OptionalIntArrayRef;
  using OptDtype = std::optional<at::ScalarType>;
  structured::reg<at::native::structured_sum_out, T, OptDims, bool, OptDtype>(m, "sum.dim_IntList", "sum.IntList_out", nullptr);
  structured::reg<at::native::structured_mean_out, T, OptDims, bool, OptDtype>(m, "mean.dim", "mean.out", nullptr);
  structured::reg<at::native::structured_prod_out, T, int64_t, bool, OptDtype>(m, "prod.dim_int", "prod.int_out", nullptr);
  structured::reg<at::native::structured_amax_out, T, at::IntArrayRef, bool>(m, "amax", "amax.out", nullptr);
  structured::reg<at::native::structured_amin_out, T, at::IntArrayRef, bool>(m, "amin", "amin.out", nullptr);
  structured::reg<at::native::structured_any_out, T, int64_t, bool>(m, "any.dim", "any.out", nullptr);
  structured::reg<at::native::structured_any_dims_out, T, OptDims, bool>(m, "any.dims", "any.dims_out", nullptr);
  structured::reg<at::native::structured_any_all_out, T>(m, "any", "any.all_out", nullptr);
  structured::reg<at::native::structured_all_out, T, int64_t, bool>(m, "all.dim", "all.out", nullptr);
  structured::reg<at::native::structured_all_dims_out, T, OptDims, bool>(m, "all.dims", "all.dims_out", nullptr);
  structured::reg<at::native::structured_all_all_out, T>(m, "all", "all.all_out", nullptr);
  m.impl("prod", TORCH_FN(prod_all));
  m.impl("nansum", TORCH_FN(nansum));
  m.impl("nansum.out", TORCH_FN(nansum_out));
}

}  // namespace webgpu::ops
