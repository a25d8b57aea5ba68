// The GEMM engine (engines/gemm.h). One entry point, gemm(), takes 3-d strided views (batch, rows,
// cols) of O, A, B and optionally C:
//   O = alpha * A @ B + beta * C       (beta == 0: C is not read, so NaN in it is ignored, as CPU)
// and picks a kernel:
//   * float (f32, f16, bf16; f32 accumulation):
//       M == 1 or N == 1  -> wgsl/kernels/matmul_gemv.wgsl (rows or columns shape, split-K for long k)
//       f16 with subgroup matrices -> wgsl/kernels/matmul_sg.wgsl (sg_plan)
//       otherwise         -> wgsl/kernels/matmul.wgsl, register-tiled; tile shape per problem size (small
//                            M gets a short tile), split-K when the tiles cannot fill the GPU.
//     Results go straight to O when O is f32 and K is not split; otherwise to an f32 scratch that
//     wgsl/kernels/matmul_epilogue.wgsl sums and converts (one rounding, as CPU's opmath).
//   * integers -> wgsl/kernels/matmul_int.wgsl (exact, wrap-around like CPU; int64 emulated).
// Operands are read through their strides (transposed operands cost nothing); vec4 loads when an
// f32 operand's contiguous dimension and alignment allow.
//
// Tile shapes are specialisation parameters: TORCH_WEBGPU_MATMUL_TILES="H=128x256x8x8x8,
// L=128x128x16x8x8,M=64x64x16x4x4,S=16x128x16x4x4" (BMxBNxBKxTMxTN per class: huge, large, medium,
// small-M; N= the gathered GEMMs' narrow class) overrides
// the defaults, so each adapter can be tuned without rebuilding; TORCH_WEBGPU_DUMP_WGSL=1 prints
// each float kernel as it is compiled. The half GEMM on subgroup matrices has its own knobs:
// TORCH_WEBGPU_MATMUL_SG=0 (off), TORCH_WEBGPU_MATMUL_SG_TILES (shapes, sg_plan),
// TORCH_WEBGPU_MATMUL_SG_ALIGNED=0 (the bounds-checked kernel even where every tile is whole) and
// TORCH_WEBGPU_MATMUL_SG_SCRATCH=1 (whole tiles through the f32 scratch and its epilogue even where
// the kernel could write O): A/B switches for tuning and for testing both paths on one GPU.
//
// Kernel parameters (named, kernel/params.h) shared by the float kernels: M, N, K, batch, tiles_m,
// tiles_n, k_split (k per split-K part), per operand x in a, b, c, o: x_off (element offset),
// x_sb (batch stride) and x_s<dim> (stride along a dimension: a_sm, a_sk, b_sk, b_sn, ...), alpha,
// beta (f32) and part_stride (elements between split-K parts of a scratch output; 0 when direct).
#include "engines/gemm.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <sstream>
#include <utility>

#include "kernel/env.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/complex.h"
#include "ops/float64.h"

namespace webgpu::engines {

std::string Gathered::wgsl() const {
  return brings_section ? consts + kernel::section("conv_gather", section) : std::string();
}

namespace {

using at::Tensor;
using kernel::CT;
using kernel::dtype_tag;
using kernel::grid;
using kernel::Kernel;

// A size, stride or offset of a float kernel: must fit the kernels' 32-bit indexing.
uint32_t fit32(const std::string& name, int64_t v) {
  TORCH_CHECK(v >= 0 && v <= int64_t(UINT32_MAX), "webgpu: matmul: ", name, " (", v,
              ") does not fit the 32-bit indexing of webgpu kernels");
  return uint32_t(v);
}
void index(kernel::Params& p, const std::string& name, int64_t v) { p.u32(name, fit32(name, v)); }

// A 3-d operand: element offset and strides (batch, rows, cols).
struct View {
  Tensor t;
  int64_t off = 0, sb = 0, s0 = 0, s1 = 0;
  bool gathered = false;  // read by a gemm_gathered loader: no strides
};

View view_of(const Tensor& t3) {
  View v;
  v.t = t3;
  v.off = t3.storage_offset();
  v.sb = t3.size(0) == 1 ? 0 : t3.stride(0);
  v.s0 = t3.size(1) == 1 ? 0 : t3.stride(1);
  v.s1 = t3.size(2) == 1 ? 0 : t3.stride(2);
  return v;
}

// A view's parameters through set(name, value): <x>_off, <x>_sb, <x>_s<rows>, <x>_s<cols>.
template <class Set>
void view_params(Set&& set, const std::string& x, const View& v, const char* rows, const char* cols) {
  set(x + "_off", v.off);
  set(x + "_sb", v.sb);
  if (v.gathered) return;
  set(x + "_s" + rows, v.s0);
  set(x + "_s" + cols, v.s1);
}

// The problem's shape and the operands A, B (and C) through set(name, value), as every GEMM kernel
// reads them: M, N, K, tiles_m, tiles_n, a_off, a_sb, a_sm, a_sk, b_off, b_sb, b_sk, b_sn, c_*.
template <class Set>
void problem_params(Set&& set, int64_t M, int64_t N, int64_t K, int64_t tiles_m, int64_t tiles_n, const View& a,
                    const View& b, const View* c) {
  set("M", M);
  set("N", N);
  set("K", K);
  set("tiles_m", tiles_m);
  set("tiles_n", tiles_n);
  view_params(set, "a", a, "m", "k");
  view_params(set, "b", b, "k", "n");
  if (c) view_params(set, "c", *c, "m", "n");
}

bool is_zero(const c10::Scalar& s) { return s.toComplexDouble() == 0.0; }

// O = beta * C, or zeros without C: a GEMM with no products to sum (K == 0, or alpha == 0).
void no_products(const Tensor& o3, const Tensor& c3, const c10::Scalar& beta) {
  if (!c3.defined())
    o3.zero_();
  else if (beta.toComplexDouble() == 1.0)
    o3.copy_(c3);
  else
    o3.copy_(c3.mul(beta));
}

// ---------------------------------------------------------------------------------------------
// Tile configurations

struct Tiles {
  int bm, bn, bk, tm, tn;
};

Tiles parse_tiles(const std::string& s, Tiles d) {
  Tiles t{};
  if (std::sscanf(s.c_str(), "%dx%dx%dx%dx%d", &t.bm, &t.bn, &t.bk, &t.tm, &t.tn) != 5) return d;
  const bool ok = t.tm > 0 && t.tn > 0 && t.tm % 4 == 0 && t.tn % 4 == 0 && t.bm % t.tm == 0 && t.bn % t.tn == 0 &&
                  t.bk % 4 == 0 && t.bk > 0 && (t.bm / t.tm) * (t.bn / t.tn) <= 1024 &&
                  (t.bm / t.tm) * (t.bn / t.tn) >= 1;
  TORCH_CHECK(ok, "webgpu: TORCH_WEBGPU_MATMUL_TILES: bad tile shape '", s,
              "' (BMxBNxBKxTMxTN with TM, TN, BK multiples of 4 dividing BM, BN; at most 1024 invocations)");
  return t;
}

struct TileSet {
  // H100, 4096^3 f32: BK=8 reaches 34.5 TFLOP/s (0.67x cuBLAS), BK=16 25.2, BK=32 26.7. Problems of
  // at least 256 of the huge class's 128x256 tiles (two per SM on an H100) take those: 39.8 TFLOP/s
  // at 4096^3 against 36.0 for 128x128 in the same run (stop 43; 64x256x8x4x16 38.1, 256x128 29.6).
  Tiles huge{128, 256, 8, 8, 8}, large{128, 128, 8, 8, 8}, medium{64, 64, 16, 4, 4}, small{16, 128, 16, 4, 4};
  // The gathered GEMMs' (gemm_gathered) tile for M <= 64, e.g. a convolution's 64 output channels.
  Tiles narrow{64, 128, 8, 4, 8};
};

TileSet tile_set() {
  static std::mutex mu;
  static std::string last;
  static TileSet cached;
  const char* env = std::getenv("TORCH_WEBGPU_MATMUL_TILES");
  std::string cur = env ? env : "";
  std::lock_guard<std::mutex> g(mu);
  if (cur == last) return cached;
  TileSet t;
  std::stringstream ss(cur);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.size() < 3 || item[1] != '=') continue;
    const std::string v = item.substr(2);
    if (item[0] == 'H') t.huge = parse_tiles(v, t.huge);
    if (item[0] == 'L') t.large = parse_tiles(v, t.large);
    if (item[0] == 'M') t.medium = parse_tiles(v, t.medium);
    if (item[0] == 'S') t.small = parse_tiles(v, t.small);
    if (item[0] == 'N') t.narrow = parse_tiles(v, t.narrow);
  }
  last = cur;
  cached = t;
  return t;
}

// ---------------------------------------------------------------------------------------------
// Float kernels' storage (f32 operands bind as array<vec4<f32>> for vec4 loads, half types as
// array<vec2<u32>>: 4 elements per array element)

// WGSL reading element e of operand `name` (dtype t) as f32.
std::string elem_fn(const std::string& fn, const std::string& name, at::ScalarType t) {
  std::string body;
  if (t == at::kFloat)
    body = "return " + name + "[e >> 2u][e & 3u];";
  else {
    body = "let h = (" + name + "[e >> 2u][(e >> 1u) & 1u] >> ((e & 1u) * 16u)) & 0xffffu; return " +
           (t == at::kHalf ? "f16_to_f32(h);" : "bitcast<f32>(h << 16u);");
  }
  return "fn " + fn + "(e: u32) -> f32 { " + body + " }\n";
}

const char* elem_type(at::ScalarType t) { return t == at::kFloat ? "vec4<f32>" : "vec2<u32>"; }

// WGSL loading the 4 elements starting at element `idx` (a multiple of 4) as a vec4<f32>.
std::string vload(at::ScalarType t, const std::string& arr, const std::string& idx) {
  const std::string v = arr + "[(" + idx + ") >> 2u]";
  return t == at::kFloat ? v : t == at::kHalf ? "h4f16(" + v + ")" : "h4bf16(" + v + ")";
}

const char* kHalfVec =
    "fn h4f16(w: vec2<u32>) -> vec4<f32> { return vec4<f32>(f16_to_f32(w.x & 0xffffu), f16_to_f32(w.x >> 16u), "
    "f16_to_f32(w.y & 0xffffu), f16_to_f32(w.y >> 16u)); }\n"
    "fn h4bf16(w: vec2<u32>) -> vec4<f32> { return vec4<f32>(bitcast<f32>(w.x << 16u), bitcast<f32>(w.x & "
    "0xffff0000u), "
    "bitcast<f32>(w.y << 16u), bitcast<f32>(w.y & 0xffff0000u)); }\n";

bool vec_dtype(at::ScalarType t) { return t == at::kFloat || t == at::kHalf || t == at::kBFloat16; }

// Storage rows for operands X, W (read), O (read_write, f32) and optional C (read; read through O
// when it shares O's block). Returns the WGSL element readers el<x>, el<w>, elc.
std::string float_bindings(const Tensor& x, const char* xn, const Tensor& w, const char* wn, const Tensor& o,
                           const Tensor* c, std::vector<kernel::Storage>& storage) {
  storage = {{&x, xn, elem_type(x.scalar_type())}, {&w, wn, elem_type(w.scalar_type())}, {&o, "O", "vec4<f32>", true}};
  std::string s = kHalfVec;
  s += elem_fn(std::string("el") + char(std::tolower(xn[0])), xn, x.scalar_type());
  s += elem_fn(std::string("el") + char(std::tolower(wn[0])), wn, w.scalar_type());
  if (c) {
    if (kernel::block_id(*c) == kernel::block_id(o)) {
      s += elem_fn("elc", "O", at::kFloat);
    } else {
      storage.push_back({c, "C", elem_type(c->scalar_type())});
      s += elem_fn("elc", "C", c->scalar_type());
    }
  }
  return s;
}

bool vec_ok(const View& v, bool along_cols) {
  // f32, the unit dimension contiguous, everything else a multiple of 4 elements (16 bytes).
  if (!vec_dtype(v.t.scalar_type())) return false;
  const int64_t unit = along_cols ? v.s1 : v.s0, other = along_cols ? v.s0 : v.s1;
  return unit == 1 && v.off % 4 == 0 && other % 4 == 0 && v.sb % 4 == 0 && kernel::block_bytes(v.t) % 16 == 0;
}

// The f32 scratch for split-K parts / non-f32 outputs, viewed as O.
struct Scratch {
  Tensor t;
  View v;
};

Scratch make_scratch(const Tensor& like, int64_t splits, int64_t batch, int64_t M, int64_t N) {
  Scratch s;
  fit32("split-K scratch elements", splits * batch * M * N);
  s.t = at::empty({splits * batch * M * N}, like.options().dtype(at::kFloat));
  s.v.t = s.t;
  s.v.off = s.t.storage_offset();
  s.v.sb = M * N;
  s.v.s0 = N;
  s.v.s1 = 1;
  return s;
}

// P (scratch, [splits][batch][M][N] f32) -> O with alpha, beta * C.
void epilogue(const Scratch& sc, int64_t splits, int64_t batch, int64_t M, int64_t N, const View& o, const View* c,
              float alpha, float beta) {
  const int64_t total = batch * M * N;
  // Few outputs summing many parts (a mat-vec's 4096 outputs of 32 parts, a weight gradient's of
  // 100+) leave most of the GPU idle with long chains: `lanes` invocations share each output's parts
  // and add their sums in workgroup memory (H200, 1x4096 @ 4096x4096: 14.3 us one lane per output).
  const int64_t lanes = splits >= 8 && total < (int64_t(1) << 16) ? (splits >= 32 ? 8 : 4) : 1;
  Kernel k("matmul_epilogue:" + std::string(c ? "c" : "-") + std::to_string(lanes));
  k.in(sc.t, CT::F32);
  k.out(o.t, CT::F32);
  if (c) k.in(c->t, CT::F32);
  auto set = [&](const std::string& name, int64_t v) { k.param_index(name, v); };
  set("total", total);
  set("M", M);
  set("N", N);
  set("splits", splits);
  set("p_off", sc.v.off);
  if (c) view_params(set, "c", *c, "m", "n");
  view_params(set, "o", o, "m", "n");
  k.param_f32("alpha", alpha);
  if (c) k.param_f32("beta", beta);
  k.launch(grid(total * lanes), [&] {
    return kernel::fill(kernel::library("matmul_epilogue"),
                        {{"LANES", std::to_string(lanes)},
                         {"C_TERM", c ? "v = v + P.beta * ld2(P.c_off + b * P.c_sb + m * P.c_sm + n * P.c_sn);" : ""}});
  });
}

// The unit strides a GEMM kernel never reads: those of operands loaded only through unchecked vector
// units (along k for A when a_k, along n for B when b_n), for gemm_params' omit.
std::vector<std::string> unread_unit_strides(bool a_unchecked, bool a_k, bool b_unchecked, bool b_n) {
  std::vector<std::string> r;
  if (a_unchecked) r.push_back(a_k ? "a_sk" : "a_sm");
  if (b_unchecked) r.push_back(b_n ? "b_sn" : "b_sk");
  return r;
}

// The parameters wgsl/kernels/matmul.wgsl and wgsl/kernels/matmul_sg.wgsl share (this file's header); direct: the
// kernel writes O itself, else f32 partial sums into a scratch of batch * M * N per split.
// o_cols: the kernel reads O's column stride (o_sn); omit: parameters the kernel does not read (an
// operand's unit stride, in kernels that only take whole 16-byte units along it).
kernel::Params gemm_params(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t tiles_m, int64_t tiles_n,
                           int64_t kps, const View& a, const View& b, const View* c, const View& out, float alpha,
                           float beta, bool direct, bool o_cols, const std::vector<std::string>& omit = {}) {
  kernel::Params p;
  auto set = [&](const std::string& name, int64_t v) {
    if (std::find(omit.begin(), omit.end(), name) == omit.end()) index(p, name, v);
  };
  problem_params(set, M, N, K, tiles_m, tiles_n, a, b, c);
  set("batch", batch);
  set("k_split", kps);
  set("o_off", out.off);
  set("o_sb", out.sb);
  set("o_sm", out.s0);
  if (o_cols) set("o_sn", out.s1);
  p.f32("alpha", alpha);
  if (c) p.f32("beta", beta);
  set("part_stride", direct ? 0 : batch * M * N);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Tiled float GEMM

std::string tiled_wgsl(const View& a, const View& b, const Tiles& T, bool a_k4, bool a_vec, bool b_n4, bool b_vec,
                       bool whole, bool o_vec, bool has_c, bool c_vec, const std::string& readers, const Gathered* ga,
                       const Gathered* gb) {
  const int RM = T.tm / 4, RN = T.tn / 4, TX = T.bn / T.tn, TY = T.bm / T.tm;
  std::ostringstream f;
  f << readers;
  // load_a(m, k): a unit of 4 elements starting at (m, k), zero outside [0, M) x [k0, k1).
  auto unit_loader = [&](const char* fn, const char* el, const char* vecname, at::ScalarType dt, bool along_second,
                         bool vec, const char* i0, const char* i1, const char* lim0, const char* lim1, const char* off,
                         const char* sb, const char* s0, const char* s1) {
    // Indices (p, q): p along the first dim (limit lim0), q along the second (limit lim1).
    // along_second: the unit spans q..q+3; otherwise p..p+3.
    f << "fn " << fn << "(" << i0 << ": u32, " << i1 << ": u32) -> vec4<f32> {\n";
    f << "  let base = P." << off << " + T.b * P." << sb << ";\n";
    const std::string P = i0, Q = i1;
    const std::string fixed = along_second ? P : Q, moving = along_second ? Q : P;
    const std::string flim = along_second ? lim0 : lim1, mlim = along_second ? lim1 : lim0;
    const std::string fs = along_second ? s0 : s1, ms = along_second ? s1 : s0;
    f << "  let fb = base + " << fixed << " * P." << fs << ";\n";
    if (vec && whole) {  // every tile lies inside the operand: one unchecked vector load
      f << "  return " << vload(dt, vecname, "fb + " + moving) << ";\n}\n";
      return;
    }
    f << "  if (" << fixed << " < " << flim << " && " << moving << " + 3u < " << mlim << ") {\n";
    if (vec)
      f << "    return " << vload(dt, vecname, "fb + " + moving) << ";\n";
    else
      f << "    let sm = P." << ms << ";\n    let e = fb + " << moving << " * sm;\n    return vec4<f32>(" << el
        << "(e), " << el << "(e + sm), " << el << "(e + 2u * sm), " << el << "(e + 3u * sm));\n";
    f << "  }\n  var v = vec4<f32>(0.0);\n";
    f << "  if (" << fixed << " < " << flim << ") {\n";
    f << "    for (var c = 0u; c < 4u; c = c + 1u) {\n";
    f << "      if (" << moving << " + c < " << mlim << ") { v[c] = " << el << "(fb + (" << moving << " + c) * P." << ms
      << "); }\n    }\n  }\n  return v;\n}\n";
  };
  // A: first dim m (limit M), second k (limit T.k1); a gathered operand brings its own loader.
  if (ga)
    f << ga->wgsl() << "\n";
  else
    unit_loader("load_a", "ela", "A", a.t.scalar_type(), a_k4, a_vec, "m", "k", "P.M", "T.k1", "a_off", "a_sb", "a_sm",
                "a_sk");
  // B: first dim k (limit T.k1), second n (limit N).
  if (gb)
    f << gb->wgsl() << "\n";
  else
    unit_loader("load_b", "elb", "Bm", b.t.scalar_type(), b_n4, b_vec, "k", "n", "T.k1", "P.N", "b_off", "b_sb", "b_sk",
                "b_sn");
  // store4(m, n, v): O[m, n..n+3] = alpha * v (+ beta * C).
  f << "fn store4(m: u32, n: u32, v: vec4<f32>) {\n  let N = P.N;\n";
  f << "  let ob = P.o_off + T.b * P.o_sb + m * P.o_sm + T.s * P.part_stride;\n";
  f << "  var o = P.alpha * v;\n";
  if (has_c) {
    f << "  let cb = P.c_off + T.b * P.c_sb + m * P.c_sm;\n  var cv = vec4<f32>(0.0);\n";
    if (c_vec)
      f << "  if (n + 3u < N) { cv = C[(cb + n) >> 2u]; } else {\n";
    else
      f << "  {\n";
    f << "    for (var c = 0u; c < 4u; c = c + 1u) { if (n + c < N) { cv[c] = elc(cb + (n + c) * P.c_sn); } }\n  }\n";
    f << "  o = o + P.beta * cv;\n";
  }
  if (o_vec) f << "  if (n + 3u < N) { O[(ob + n) >> 2u] = o; return; }\n";
  f << "  for (var c = 0u; c < 4u; c = c + 1u) {\n    if (n + c < N) { let e = ob + (n + c) * P.o_sn; O[e >> 2u][e & "
       "3u] = o[c]; }\n  }\n}\n";
  std::ostringstream regs, fetch, stash;
  {
    // One operand's tile: `units` vec4 units, `per` per invocation, each fetched into a register R by
    // `load` (over the unit's coordinates v = unit(U)) and stashed into workgroup memory arr at
    // base + outer * (dim / 4) + inner / 4: whole (R as one vec4) or spread (R's four components into
    // four rows dim / 4 apart, column inner % 4).
    const int wg = TX * TY;
    auto operand = [&](const char* r, int units, const char* units_c, const char* unit, const char* v,
                       const std::string& load, const char* arr, const char* base, const char* dim,
                       const std::string& outer, const std::string& inner, bool spread) {
      const int per = (units + wg - 1) / wg;
      for (int i = 0; i < per; ++i) {
        const std::string R = r + std::to_string(i), U = std::to_string(i * wg) + "u + lid";
        const std::string guard = units % wg ? "if (" + U + " < " + units_c + ") " : "";
        const std::string at = std::string("{ let ") + v + " = " + unit + "(" + U + "); ";
        regs << "  var " << R << ": vec4<f32>;\n";
        fetch << "  " << guard << at << R << " = " << load << "; }\n";
        stash << "  " << guard << at;
        const std::string q = std::string(base) + " + " + outer + " * (" + dim + " / 4u) + (" + inner + " >> 2u)";
        if (spread)
          stash << "let q = " << q << "; let c = " << inner << " & 3u; " << arr << "[q][c] = " << R << ".x; " << arr
                << "[q + " << dim << " / 4u][c] = " << R << ".y; " << arr << "[q + " << dim << " / 2u][c] = " << R
                << ".z; " << arr << "[q + 3u * " << dim << " / 4u][c] = " << R << ".w; }\n";
        else
          stash << arr << "[" << q << "] = " << R << "; }\n";
      }
    };
    operand("ra", T.bm * T.bk / 4, "A_UNITS", "a_unit", "mk", "load_a(T.m0 + mk.x, kf + mk.y)", "As", "ab", "BM",
            "mk.y", "mk.x", a_k4);
    operand("rb", T.bn * T.bk / 4, "B_UNITS", "b_unit", "kn", "load_b(kf + kn.x, T.n0 + kn.y)", "Bs", "bb", "BN",
            "kn.x", "kn.y", !b_n4);
  }
  std::ostringstream acc, comp, st;
  for (int i = 0; i < RM; ++i)
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < RN; ++j) acc << "  var c_" << i << "_" << r << "_" << j << " = vec4<f32>(0.0);\n";
  for (int kk = 0; kk < T.bk; ++kk) {
    comp << "    {\n";
    for (int i = 0; i < RM; ++i) comp << "      let a" << i << " = As[ab + " << kk * (T.bm / 4) + i * TY << "u];\n";
    for (int j = 0; j < RN; ++j) comp << "      let b" << j << " = Bs[bb + " << kk * (T.bn / 4) + j * TX << "u];\n";
    for (int i = 0; i < RM; ++i)
      for (int r = 0; r < 4; ++r)
        for (int j = 0; j < RN; ++j)
          comp << "      c_" << i << "_" << r << "_" << j << " = fma(vec4<f32>(a" << i << "[" << r << "]), b" << j
               << ", c_" << i << "_" << r << "_" << j << ");\n";
    comp << "    }\n";
  }
  for (int i = 0; i < RM; ++i)
    for (int r = 0; r < 4; ++r) {
      st << "  {\n    let m = T.m0 + (ty + " << i * TY << "u) * 4u + " << r << "u;\n    if (m < M) {\n";
      for (int j = 0; j < RN; ++j)
        st << "      store4(m, T.n0 + (tx + " << j * TX << "u) * 4u, c_" << i << "_" << r << "_" << j << ");\n";
      st << "    }\n  }\n";
    }
  auto I = [](int v) { return std::to_string(v); };
  return kernel::library("matmul_tile") +
         kernel::fill(kernel::library("matmul"),
                      {{"BM", I(T.bm)},
                       {"BN", I(T.bn)},
                       {"BK", I(T.bk)},
                       {"TX", I(TX)},
                       {"TY", I(TY)},
                       {"WG", I(TX * TY)},
                       {"A_ORIENT", a_k4 ? "4 along k" : "4 along m"},
                       {"FUNCS", f.str()},
                       {"A_UNIT", a_k4 ? "return vec2<u32>(u / (BK / 4u), (u % (BK / 4u)) * 4u);"
                                       : "return vec2<u32>((u % (BM / 4u)) * 4u, u / (BM / 4u));"},
                       {"B_UNIT", b_n4 ? "return vec2<u32>(u / (BN / 4u), (u % (BN / 4u)) * 4u);"
                                       : "return vec2<u32>((u % (BK / 4u)) * 4u, u / (BK / 4u));"},
                       {"REGS", regs.str()},
                       {"FETCH", fetch.str()},
                       {"STASH", stash.str()},
                       {"ACC_DECL", acc.str()},
                       {"COMPUTE", comp.str()},
                       {"STORE", st.str()}});
}

// Split-K for the plain float GEMMs whose tiles cannot fill a GPU: parts until about `target`
// workgroups, each part at least `min_k` long. TORCH_WEBGPU_GEMM_SPLIT="target,min_k" overrides
// them for tuning (read once). H200, same process as cuBLAS: 128x768x768 f32 35.0 us with parts of
// at least 256 (3 parts), 25-27 with 64 (10-12); 128x3072x768 best at its 11 parts (more: the
// epilogue grows), 128x768x2304 and 128x768x3072 unchanged (3-4 parts either way).
struct GemmSplit {
  int64_t target = 256, min_k = 64;
};
const GemmSplit& gemm_split() {
  static const GemmSplit g = [] {
    GemmSplit r;
    const std::vector<long> v = kernel::env_numbers("TORCH_WEBGPU_GEMM_SPLIT", 2);
    if (v.size() == 2 && v[0] >= 0 && v[1] >= 16) r = {v[0], v[1]};
    return r;
  }();
  return g;
}

// TORCH_WEBGPU_CONV_SPLIT="target,cap" (tiled_gemm), parsed only when it changes, as tile_set().
std::pair<int64_t, int64_t> conv_split() {
  static std::mutex mu;
  static std::string last;
  static std::pair<int64_t, int64_t> cached{1024, 16};
  const char* env = std::getenv("TORCH_WEBGPU_CONV_SPLIT");
  std::string cur = env ? env : "";
  std::lock_guard<std::mutex> g(mu);
  if (cur == last) return cached;
  long target = 1024, cap = 16;
  if (env) std::sscanf(env, "%ld,%ld", &target, &cap);
  last = cur;
  cached = {target, cap};
  return cached;
}

void tiled_gemm(const View& o, const View& a, const View& b, const View* c, int64_t batch, int64_t M, int64_t N,
                int64_t K, float alpha, float beta, const Gathered* ga = nullptr, const Gathered* gb = nullptr) {
  const TileSet ts = tile_set();
  Tiles T;
  auto ntiles = [&](const Tiles& t) { return batch * ((M + t.bm - 1) / t.bm) * ((N + t.bn - 1) / t.bn); };
  if (M <= 16)
    T = ts.small;
  else if ((ga || gb) && M <= 64)
    T = ts.narrow;
  else if (ntiles(ts.huge) >= 256)
    T = ts.huge;
  else if (ntiles(ts.large) >= 120)
    T = ts.large;
  else
    T = ts.medium;
  // Within the adapter's limits (workgroup memory: two buffers of A and B tiles).
  const kernel::DeviceInfo& dev = kernel::device_info(o.t);
  auto fits = [&](const Tiles& t) {
    const uint64_t inv = uint64_t(t.bm / t.tm) * (t.bn / t.tn), shared = 2ull * t.bk * (t.bm + t.bn) * 4;
    return inv <= dev.max_invocations && inv <= dev.max_workgroup_size_x && shared <= dev.max_workgroup_storage;
  };
  for (const Tiles& t : {ts.large, ts.medium, ts.small, Tiles{32, 32, 8, 4, 4}})
    if (!fits(T)) T = t;
  TORCH_CHECK(fits(T), "webgpu: matmul: no tile shape fits this adapter's workgroup limits");
  const int64_t tiles_m = (M + T.bm - 1) / T.bm, tiles_n = (N + T.bn - 1) / T.bn;
  const int64_t tiles = batch * tiles_m * tiles_n;
  // Split-K when the tiles are too few to fill a GPU and K is long.
  int64_t splits = 1;
  const GemmSplit& gs = gemm_split();
  if (tiles * 2 < gs.target && K >= 2 * gs.min_k)
    splits = std::min<int64_t>((gs.target + tiles - 1) / tiles, K / gs.min_k);
  if ((ga != nullptr) != (gb != nullptr)) {
    // A convolution's forward and input-gradient GEMMs are small (a CNN's layers: ~1 GFLOP, ~256
    // tiles) and their gathered loads latency-bound: split K until about `target` workgroups are in
    // flight, each split at least 64 long, at most `cap` splits (TORCH_WEBGPU_CONV_SPLIT=
    // "target,cap"; target 0: the plain rule). Weight gradients (both operands gathered, K = images
    // x positions) keep the plain rule: more splits there only grew the epilogue on the H200.
    const auto [target, cap] = conv_split();
    if (target > 0 && tiles * 2 <= target)
      splits = std::max<int64_t>(1, std::min<int64_t>({(target + tiles - 1) / tiles, K / 64, cap}));
  }
  splits = std::max<int64_t>(splits, 1);
  int64_t kps = (K + splits - 1) / splits;
  kps = (kps + T.bk - 1) / T.bk * T.bk;
  splits = (K + kps - 1) / kps;
  const bool direct = splits == 1 && o.t.scalar_type() == at::kFloat;
  Scratch sc;
  View out = o;
  if (!direct) {
    sc = make_scratch(o.t, splits, batch, M, N);
    out = sc.v;
  }
  const View* cc = direct ? c : nullptr;
  // Orientation of the 4-element load units: along each operand's contiguous dimension.
  // A gathered operand's loader says which way its units run.
  const bool a_k4 = ga ? ga->along_k : !(a.s0 == 1 && a.s1 != 1);
  const bool b_n4 = gb ? !gb->along_k : !(b.s0 == 1 && b.s1 != 1);
  const bool a_vec = !ga && vec_ok(a, a_k4) && (a_k4 ? kps % 4 == 0 : true);
  const bool b_vec = !gb && vec_ok(b, b_n4) && (b_n4 ? true : kps % 4 == 0);
  const bool o_vec = vec_ok(out, true);
  // Every tile whole (split-K parts are multiples of BK): vector operands load without bounds checks
  // (their presence cost the half GEMM a tenth, wgsl/kernels/matmul_sg.wgsl).
  const bool whole = M % T.bm == 0 && N % T.bn == 0 && K % T.bk == 0;
  const bool c_in_o = cc && kernel::block_id(cc->t) == kernel::block_id(out.t);
  const bool c_vec = cc && cc->t.scalar_type() == at::kFloat && vec_ok(*cc, true) && !c_in_o;
  std::vector<kernel::Storage> storage;
  const std::string readers = float_bindings(a.t, "A", b.t, "Bm", out.t, cc ? &cc->t : nullptr, storage);
  std::ostringstream key;
  key << "matmul:" << T.bm << "x" << T.bn << "x" << T.bk << "x" << T.tm << "x" << T.tn << ":" << a_k4 << a_vec << b_n4
      << b_vec << o_vec << (cc != nullptr) << c_vec << ":" << dtype_tag(a.t.scalar_type())
      << dtype_tag(b.t.scalar_type()) << (cc ? dtype_tag(cc->t.scalar_type()) : "") << storage.size()
      << (c_in_o ? "a" : "b") << (whole ? "w" : "");
  if (ga) key << ":ga:" << ga->key();
  if (gb) key << ":gb:" << gb->key();
  const kernel::Params prm =
      gemm_params(M, N, K, batch, tiles_m, tiles_n, kps, a, b, cc, out, direct ? alpha : 1.0f, beta, direct, true,
                  unread_unit_strides(whole && a_vec, a_k4, whole && b_vec, b_n4));
  kernel::launch(key.str(), storage, prm, uint64_t(tiles) * splits, [&] {
    return tiled_wgsl(a, b, T, a_k4, a_vec, b_n4, b_vec, whole, o_vec, cc != nullptr, c_vec, readers, ga, gb);
  });
  if (!direct) epilogue(sc, splits, batch, M, N, o, c, alpha, beta);
}

// ---------------------------------------------------------------------------------------------
// Half GEMM on subgroup matrices (wgsl/kernels/matmul_sg.wgsl)
//
// Used for f16 operands where the adapter lists an f16 x f16 -> f32 subgroup-matrix config with a
// fixed subgroup size; everything else (lavapipe, bf16, f32, integers) keeps the FMA kernels.
// The plan is a pure function of the adapter's configs, limits and the problem, so the selection
// can be tested on any adapter (torch_webgpu._C._sg_gemm_plan).

struct SgPlan {
  bool use = false;
  std::string why;  // why not (or which class)
  int sm = 0, sn = 0, sk = 0, sg = 0;  // config and subgroup size
  int wsm = 0, wsn = 0, tm = 0, tn = 0, bk = 0;
  int ns = 1;  // result matrices a subgroup stages at once (between two barriers)
  int64_t splits = 1, kps = 0, tiles_m = 0, tiles_n = 0;
  int bm() const { return wsm * tm * sm; }
  int bn() const { return wsn * tn * sn; }
  int wg() const { return wsm * wsn * sg; }
};

struct SgShape {  // WSMxWSNxTMxTNxBK
  int wsm, wsn, tm, tn, bk;
};

SgShape parse_sg_shape(const std::string& s, SgShape d) {
  SgShape t{};
  if (std::sscanf(s.c_str(), "%dx%dx%dx%dx%d", &t.wsm, &t.wsn, &t.tm, &t.tn, &t.bk) != 5) return d;
  TORCH_CHECK(t.wsm > 0 && t.wsn > 0 && t.tm > 0 && t.tn > 0 && t.bk > 0 && t.bk % 16 == 0 && t.tm * t.tn <= 32,
              "webgpu: TORCH_WEBGPU_MATMUL_SG_TILES: bad shape '", s,
              "' (WSMxWSNxTMxTNxBK: subgroups along m and n, matrices per subgroup along m and n, depth a multiple "
              "of 16)");
  return t;
}

SgPlan sg_plan(const std::vector<kernel::MatrixConfig>& configs, bool has_f16, uint64_t wg_storage,
               uint64_t max_invocations, at::ScalarType dt, int64_t batch, int64_t M, int64_t N, int64_t K) {
  SgPlan p;
  const char* env = std::getenv("TORCH_WEBGPU_MATMUL_SG");
  if (env && std::string(env) == "0") return p.why = "disabled by TORCH_WEBGPU_MATMUL_SG=0", p;
  if (dt != at::kHalf) return p.why = "dtype is not float16", p;
  if (!has_f16) return p.why = "no shader-f16", p;
  const kernel::MatrixConfig* cfg = nullptr;
  for (const auto& c : configs) {
    if (c.component != "f16" || c.result != "f32" || c.min_subgroup != c.max_subgroup || c.K % 8 != 0) continue;
    // Prefer the squarest config (16x16x16 over 16x8x16), then the deepest.
    auto score = [](const kernel::MatrixConfig& x) {
      return int64_t(std::min(x.M, x.N)) * 1000 + int64_t(x.M) * x.N + x.K;
    };
    if (!cfg || score(c) > score(*cfg)) cfg = &c;
  }
  if (!cfg) return p.why = "no f16 x f16 -> f32 subgroup-matrix config with a fixed subgroup size", p;
  // Each lane writes an even run of one result row (whole f16 words).
  const uint32_t lanes = cfg->max_subgroup, per_lane = lanes ? cfg->M * cfg->N / lanes : 0;
  if (!lanes || (cfg->M * cfg->N) % lanes || per_lane % 2 || cfg->N % per_lane)
    return p.why = "the config's matrix does not split into even row runs per lane", p;
  if (M < int64_t(cfg->M) || N < int64_t(cfg->N)) return p.why = "smaller than one matrix", p;
  p.sm = cfg->M, p.sn = cfg->N, p.sk = cfg->K, p.sg = cfg->max_subgroup;
  // Size classes (TORCH_WEBGPU_MATMUL_SG_TILES="L=4x2x4x4x32,M=2x2x2x4x32,N=1x8x4x1x32,S=2x2x1x1x32"
  // overrides). L: the best of the shapes benchmarks/probe_gemm.py and probe_sg.py tried on an H200
  // (docs/benchmarks.md).
  // N: products of at most 64 rows (a convolution's, per image: Co x positions), 8 subgroups of 64 x 16
  // each: 0.39x cuDNN for the f16 conv row against 0.20x in the medium class's 4 subgroups of 32 x 64
  // (H100, benchmarks/run.py; the gathered loads want more subgroups in flight).
  SgShape large{4, 2, 4, 4, 32}, medium{2, 2, 2, 4, 32}, narrow{1, 8, 4, 1, 32}, small{2, 2, 1, 1, 32};
  if (const char* t = std::getenv("TORCH_WEBGPU_MATMUL_SG_TILES")) {
    std::stringstream ss(t);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.size() < 3 || item[1] != '=') continue;
      SgShape* dst = item[0] == 'L'   ? &large
                     : item[0] == 'M' ? &medium
                     : item[0] == 'N' ? &narrow
                     : item[0] == 'S' ? &small
                                      : nullptr;
      if (dst) *dst = parse_sg_shape(item.substr(2), *dst);
    }
  }
  auto tiles = [&](const SgShape& s) {
    const int64_t bm = s.wsm * s.tm * p.sm, bn = s.wsn * s.tn * p.sn;
    return batch * ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
  };
  auto shared = [&](const SgShape& s, int ns = 1) {
    const uint64_t bm = s.wsm * s.tm * p.sm, bn = s.wsn * s.tn * p.sn;
    // Worst orientation of each operand's buffer, in bytes, plus the f32 staging tiles.
    const uint64_t a = std::max(bm * (s.bk + 8), uint64_t(s.bk) * (bm + 8)) * 2;
    const uint64_t b = std::max(bn * (s.bk + 8), uint64_t(s.bk) * (bn + 8)) * 2;
    return a + b + uint64_t(s.wsm) * s.wsn * p.sm * p.sn * 4 * ns;
  };
  auto fits = [&](const SgShape& s) {
    return uint64_t(s.wsm) * s.wsn * p.sg <= max_invocations && s.bk % p.sk == 0 && shared(s) <= wg_storage;
  };
  // The largest class that fills the GPU (256 workgroups) without padding the output by more than a
  // quarter (a 64-row product in 256-row tiles would do four times the work).
  auto padded = [&](const SgShape& s) {
    const int64_t bm = s.wsm * s.tm * p.sm, bn = s.wsn * s.tn * p.sn;
    return double((M + bm - 1) / bm * bm) * double((N + bn - 1) / bn * bn) / (double(M) * double(N));
  };
  SgShape s = small;
  const char* cls = "small";
  if (tiles(large) >= 256 && fits(large) && padded(large) <= 1.25)
    s = large, cls = "large";
  else if (M <= 64 && tiles(narrow) >= 256 && fits(narrow) && padded(narrow) <= 1.25)
    s = narrow, cls = "narrow";
  else if (tiles(medium) >= 256 && fits(medium) && padded(medium) <= 1.25)
    s = medium, cls = "medium";
  if (!fits(s)) return p.why = "no tile shape fits the adapter's workgroup limits", p;
  p.wsm = s.wsm, p.wsn = s.wsn, p.tm = s.tm, p.tn = s.tn, p.bk = s.bk;
  // Stage as many of a row's result matrices at once as workgroup memory allows (each round costs
  // two workgroup barriers).
  for (int ns = s.tn; ns > 1; --ns)
    if (s.tn % ns == 0 && shared(s, ns) <= wg_storage) {
      p.ns = ns;
      break;
    }
  p.tiles_m = (M + p.bm() - 1) / p.bm();
  p.tiles_n = (N + p.bn() - 1) / p.bn();
  const int64_t t = batch * p.tiles_m * p.tiles_n;
  // Split-K when the tiles cannot fill a large GPU and K is long.
  int64_t splits = 1;
  if (t < 128 && K >= 1024) splits = std::min<int64_t>((256 + t - 1) / t, K / 512);
  splits = std::max<int64_t>(splits, 1);
  int64_t kps = (K + splits - 1) / splits;
  kps = (kps + p.bk - 1) / p.bk * p.bk;
  p.splits = (K + kps - 1) / kps;
  p.kps = kps;
  p.use = true;
  p.why = cls;
  return p;
}

// The plan for a half GEMM on t's adapter (not `use` where it lists no subgroup matrices).
SgPlan half_plan(const at::TensorBase& t, int64_t batch, int64_t M, int64_t N, int64_t K) {
  const kernel::DeviceInfo& dev = kernel::device_info(t);
  static const std::vector<kernel::MatrixConfig> none;
  return sg_plan(dev.subgroup_matrix ? dev.matrix_configs : none, dev.f16, dev.max_workgroup_storage,
                 std::min(dev.max_invocations, dev.max_workgroup_size_x), at::kHalf, batch, M, N, K);
}

// 0: not probed yet, 1: `subgroupMatrixLoad<T, row_major>(p, off, stride)` (current proposal),
// 2: `subgroupMatrixLoad<T>(p, off, col_major: bool, stride)` (Dawn before the majorness enum).
std::atomic<int> g_sg_syntax{0};

std::string sg_load(int syntax, const std::string& type, bool col_major, const std::string& arr, const std::string& off,
                    const std::string& stride) {
  if (syntax == 1)
    return "subgroupMatrixLoad<" + type + (col_major ? ", col_major>(&" : ", row_major>(&") + arr + ", " + off + ", " +
           stride + ")";
  return "subgroupMatrixLoad<" + type + ">(&" + arr + ", " + off + (col_major ? ", true, " : ", false, ") + stride +
         ")";
}

std::string sg_store(int syntax, const std::string& arr, const std::string& off, const std::string& v,
                     const std::string& stride) {
  if (syntax == 1) return "subgroupMatrixStore<row_major>(&" + arr + ", " + off + ", " + v + ", " + stride + ")";
  return "subgroupMatrixStore(&" + arr + ", " + off + ", " + v + ", false, " + stride + ")";
}

std::string sg_wgsl(const SgPlan& P, int syntax, bool a_k8, bool a_vec, bool b_n8, bool b_vec, bool aligned,
                    bool mat_store, bool direct, bool has_c, bool c_in_o, const std::string& readers,
                    const Gathered* gb) {
  const int BM = P.bm(), BN = P.bn(), BK = P.bk, WG = P.wg();
  const int a_stride = a_k8 ? BK + 8 : BM + 8, b_stride = b_n8 ? BN + 8 : BK + 8;
  const int a_buf = a_k8 ? BM * a_stride : BK * a_stride, b_buf = b_n8 ? BK * b_stride : BN * b_stride;
  auto I = [](int64_t v) { return std::to_string(v); };
  // Global -> registers -> workgroup memory, 8 halves per unit, each invocation a fixed set of units.
  // fetch: bounds-checked loads (zero past the edges); fetch_raw: one 16-byte load per unit, for a
  // tile that lies wholly inside both operands (the kernel picks per tile, uniformly; checked loads
  // everywhere measured 75 against 196 TFLOP/s on an H200, benchmarks/probe_gemm.py).
  std::ostringstream regs, fetch, fetch_raw, stash;
  auto units = [&](const char* r, int rows, int cols /* in halves; cols along the unit */, const char* ld,
                   const char* plim, const char* qlim, const char* p0, const char* q0, const char* base, const char* sp,
                   const char* sq, const char* dst, int stride, bool vec) {
    // rows x cols tile; unit u -> (u / (cols/8), (u % (cols/8)) * 8).
    const int n = rows * cols / 8, per = (n + WG - 1) / WG;
    for (int i = 0; i < per; ++i) {
      const std::string Rn = std::string(r) + I(i), U = I(i * WG) + "u + lid";
      const std::string guard = n % WG ? "if (" + U + " < " + I(n) + "u) " : "";
      regs << "  var " << Rn << " = vec4<u32>(0u);\n";
      const std::string unit = "{ let u = " + U + "; let p = u / " + I(cols / 8) + "u; let q = (u % " + I(cols / 8) +
                               "u) * 8u; " + Rn + " = ";
      const std::string checked = ld + std::string("(") + p0 + " + p, " + q0 + " + q, " + plim + ", " + qlim + ", " +
                                  base + ", " + sp + ", " + sq + "); }\n";
      if (gb && r[1] == 'b') {  // a gathered B: its own loader, bounds included, for whole tiles too
        const std::string g = std::string("gload8_b(") + p0 + " + p, " + q0 + " + q); }\n";
        fetch << "    " << guard << unit << g;
        fetch_raw << "      " << guard << unit << g;
      } else {
        fetch << "    " << guard << unit << checked;
        if (vec)  // every term a multiple of 8 halves (vec8): the index in 16-byte units, term by term
          fetch_raw << "      " << guard << unit << (r[1] == 'a' ? "A" : "Bm") << "[(" << base << " >> 3u) + (" << p0
                    << " + p) * (" << sp << " >> 3u) + ((" << q0 << " + q) >> 3u)]; }\n";
        else
          fetch_raw << "      " << guard << unit << checked;
      }
      // The 8 halves stored inline: through a function (put8_a(i, w)) the kernel measured 143 against
      // 193 TFLOP/s at 4096^3 on an H100 (.gpu bisect of the dumped kernel, stop 35 note).
      stash << "    " << guard << "{ let u = " << U << "; let p = u / " << cols / 8 << "u; let i = p * " << stride
            << "u + (u % " << cols / 8 << "u) * 8u;";
      for (int h = 0; h < 4; ++h) stash << " let h" << h << " = bitcast<vec2<f16>>(" << Rn << "." << "xyzw"[h] << ");";
      for (int h = 0; h < 8; ++h)
        stash << " " << dst << "[i" << (h ? " + " + I(h) + "u" : "") << "] = h" << h / 2 << (h % 2 ? ".y;" : ".x;");
      stash << " }\n";
    }
  };
  // An operand's two tile dims (x, y: tile size, limit, start, stride), its rows first: x by y when
  // contiguous along y, else y by x. A: [m][k] when contiguous along k, else [k][m]; B: [k][n] when
  // contiguous along n, else [n][k].
  struct Dim {
    int size;
    const char *lim, *start, *stride;
  };
  auto operand = [&](const char* r, const char* ld, const Dim& x, const Dim& y, bool along_y, const char* base,
                     const char* dst, int stride, bool vec) {
    const Dim &p = along_y ? x : y, &q = along_y ? y : x;
    units(r, p.size, q.size, ld, p.lim, q.lim, p.start, q.start, base, p.stride, q.stride, dst, stride, vec);
  };
  operand("ra", "load8_a", {BM, "P.M", "tile.m0", "P.a_sm"}, {BK, "tile.k1", "kf", "P.a_sk"}, a_k8, "abase", "As",
          a_stride, a_vec);
  operand("rb", "load8_b", {BK, "tile.k1", "kf", "P.b_sk"}, {BN, "P.N", "tile.n0", "P.b_sn"}, b_n8, "bbase", "Bs",
          b_stride, b_vec);
  std::string fetch_all = fetch.str();
  if (aligned)  // every tile lies inside both operands: no checked loads in the kernel at all
    fetch_all = "    {\n" + fetch_raw.str() + "    }\n";
  else if (a_vec || b_vec)
    fetch_all = "    if (tile.m0 + BM <= P.M && tile.n0 + BN <= P.N && kf + BK <= tile.k1) {\n" + fetch_raw.str() +
                "    } else {\n" + fetch_all + "    }\n";
  const std::string lt = "subgroup_matrix_left<f16, " + I(P.sk) + ", " + I(P.sm) + ">";
  const std::string rt_ = "subgroup_matrix_right<f16, " + I(P.sn) + ", " + I(P.sk) + ">";
  const std::string ct = "subgroup_matrix_result<f32, " + I(P.sn) + ", " + I(P.sm) + ">";
  std::ostringstream acc, comp, store;
  for (int i = 0; i < P.tm; ++i)
    for (int j = 0; j < P.tn; ++j) acc << "  var acc_" << i << "_" << j << " = " << ct << "();\n";
  // The K steps of a tile unrolled (a loop over them measured half as fast on an H200).
  for (int kk = 0; kk < BK; kk += P.sk) {
    comp << "    {\n      let kk = " << kk << "u;\n";
    for (int i = 0; i < P.tm; ++i) {
      const std::string m = "(sm * " + I(P.tm * P.sm) + "u + " + I(i * P.sm) + "u)";
      const std::string off = a_k8 ? m + " * A_STRIDE + kk" : "kk * A_STRIDE + " + m;
      comp << "      let l" << i << " = " << sg_load(syntax, lt, !a_k8, "As", off, "A_STRIDE") << ";\n";
    }
    for (int j = 0; j < P.tn; ++j) {
      const std::string n = "(sn * " + I(P.tn * P.sn) + "u + " + I(j * P.sn) + "u)";
      const std::string off = b_n8 ? "kk * B_STRIDE + " + n : n + " * B_STRIDE + kk";
      comp << "      let r" << j << " = " << sg_load(syntax, rt_, !b_n8, "Bs", off, "B_STRIDE") << ";\n";
    }
    for (int i = 0; i < P.tm; ++i)
      for (int j = 0; j < P.tn; ++j)
        comp << "      acc_" << i << "_" << j << " = subgroupMatrixMultiplyAccumulate(l" << i << ", r" << j << ", acc_"
             << i << "_" << j << ");\n";
    comp << "    }\n";
  }
  // mat_store: whole tiles of an f32 scratch (O: array<f32>), each matrix stored where it belongs.
  for (int i = 0; mat_store && i < P.tm; ++i)
    for (int j = 0; j < P.tn; ++j)
      store << "  "
            << sg_store(syntax, "O",
                        "P.o_off + T.b * P.o_sb + T.s * P.part_stride + (T.m0 + sm * " + I(P.tm * P.sm) + "u + " +
                            I(i * P.sm) + "u) * P.o_sm + T.n0 + sn * " + I(P.tn * P.sn) + "u + " + I(j * P.sn) + "u",
                        "acc_" + I(i) + "_" + I(j), "P.o_sm")
            << ";\n";
  for (int i = 0; !mat_store && i < P.tm; ++i)
    for (int j0 = 0; j0 < P.tn; j0 += P.ns) {
      for (int j = j0; j < j0 + P.ns; ++j)
        store << "  "
              << sg_store(syntax, "Cs", "st + " + I((j - j0) * P.sm * P.sn) + "u", "acc_" + I(i) + "_" + I(j),
                          I(P.sn) + "u")
              << ";\n";
      store << "  workgroupBarrier();\n";
      for (int j = j0; j < j0 + P.ns; ++j)
        store << "  store_run(T.m0 + sm * " << P.tm * P.sm << "u + " << i * P.sm << "u + row, T.n0 + sn * "
              << P.tn * P.sn << "u + " << j * P.sn << "u + col, st + " << (j - j0) * P.sm * P.sn
              << "u + lane * PER_LANE);\n";
      store << "  workgroupBarrier();\n";
    }
  std::ostringstream run;
  const std::string c_rd = c_in_o ? "f16_to_f32((O[ce >> 1u] >> ((ce & 1u) * 16u)) & 0xffffu)" : "elc(ce)";
  if (has_c) run << "  let cb = P.c_off + T.b * P.c_sb + m * P.c_sm;\n  let beta = P.beta;\n";
  if (direct) {
    // f16 output, contiguous along n, even offset and row stride: each lane owns whole words (a
    // row's last odd element is merged into its word).
    run << "  for (var c = 0u; c < PER_LANE; c = c + 2u) {\n    let n1 = n + c;\n    if (n1 >= N) { break; }\n"
        << "    var v0 = alpha * Cs[s + c];\n    var v1 = alpha * Cs[s + c + 1u];\n";
    if (has_c)
      run << "    { let ce = cb + n1 * P.c_sn; v0 = v0 + beta * " << c_rd << "; }\n"
          << "    if (n1 + 1u < N) { let ce = cb + (n1 + 1u) * P.c_sn; v1 = v1 + beta * " << c_rd << "; }\n";
    run << "    let w = (ob + n1) >> 1u;\n"
        << "    if (n1 + 1u < N) { O[w] = f32_to_f16(v0) | (f32_to_f16(v1) << 16u); }\n"
        << "    else { O[w] = (O[w] & 0xffff0000u) | f32_to_f16(v0); }\n  }\n";
  } else {
    run << "  for (var c = 0u; c < PER_LANE; c = c + 1u) {\n    let n1 = n + c;\n    if (n1 >= N) { break; }\n"
        << "    O[ob + n1 * P.o_sn] = " << (mat_store ? "alpha * Cs[s + c]" : "bitcast<u32>(alpha * Cs[s + c])")
        << ";\n  }\n";
  }
  // A gathered B (a convolution's input with its channels last, ops/conv.cpp): its section brings
  // gload8_b(n, k), 8 halves along k; elb for the section's scalar helpers.
  const std::string funcs =
      gb ? readers + "fn elb(e: u32) -> f32 { return f16_to_f32(b_half(e)); }\n" + gb->wgsl() + "\n" : readers;
  const std::string s = kernel::library("matmul_tile") +
                        kernel::fill(kernel::library("matmul_sg"),
                                     {{"BM", I(BM)},
                                      {"BN", I(BN)},
                                      {"BK", I(BK)},
                                      {"SG", I(P.sg)},
                                      {"WG", I(WG)},
                                      {"WSN", I(P.wsn)},
                                      {"A_STRIDE", I(a_stride)},
                                      {"B_STRIDE", I(b_stride)},
                                      {"A_BUF", I(a_buf)},
                                      {"B_BUF", I(b_buf)},
                                      {"SM", I(P.sm)},
                                      {"SN", I(P.sn)},
                                      {"NS", I(P.ns)},
                                      {"FUNCS", funcs},
                                      {"A_VEC", a_vec ? "if (q + 7u < qlim) { return A[(e + q) >> 3u]; }" : ""},
                                      {"B_VEC", b_vec ? "if (q + 7u < qlim) { return Bm[(e + q) >> 3u]; }" : ""},
                                      {"REGS", regs.str()},
                                      {"FETCH", fetch_all},
                                      {"STASH", stash.str()},
                                      {"ACC_DECL", acc.str()},
                                      {"COMPUTE", comp.str()},
                                      {"STORE", store.str()},
                                      {"STORE_RUN", run.str()}});
  // Matrix loads and stores want subgroup-uniform offsets; ours depend on the subgroup's index
  // (lid / SG), uniform within each subgroup but not provably so to WGSL's workgroup-level analysis.
  return "enable f16;\nenable chromium_experimental_subgroup_matrix;\ndiagnostic(off, "
         "chromium.subgroup_matrix_uniformity);\n" +
         s;
}

// O = alpha * A @ B (+ beta * C) on subgroup matrices, per plan P. Returns false (nothing
// dispatched) when this Dawn compiles neither load/store syntax.
bool sg_gemm(const SgPlan& P, const View& o, const View& a, const View& b, const View* c, int64_t batch, int64_t M,
             int64_t N, int64_t K, float alpha, float beta, const Gathered* gb = nullptr) {
  // Orientation: units of 8 along each operand's contiguous dimension (a gathered B: along k).
  const bool a_k8 = !(a.s0 == 1 && a.s1 != 1);
  const bool b_n8 = !gb && !(b.s0 == 1 && b.s1 != 1);
  auto vec8 = [&](const View& v, bool along_second) {
    const int64_t unit = along_second ? v.s1 : v.s0, other = along_second ? v.s0 : v.s1;
    return unit == 1 && v.off % 8 == 0 && other % 8 == 0 && v.sb % 8 == 0;
  };
  const bool a_vec = vec8(a, a_k8), b_vec = !gb && vec8(b, b_n8);
  // Whole tiles everywhere (k ranges of split-K parts are multiples of BK): the kernel without the
  // bounds-checked path, whose mere presence cost 212 -> 192 TFLOP/s at 4096^3 on an H100
  // (benchmarks/probe_gemm.py, k1raw against k1int).
  const char* al_env = std::getenv("TORCH_WEBGPU_MATMUL_SG_ALIGNED");
  const bool aligned =
      a_vec && b_vec && M % P.bm() == 0 && N % P.bn() == 0 && K % P.bk == 0 && !(al_env && std::string(al_env) == "0");
  const char* sc_env = std::getenv("TORCH_WEBGPU_MATMUL_SG_SCRATCH");
  const bool want_scratch = aligned && sc_env && std::string(sc_env) == "1";
  const bool direct_ok =
      !want_scratch && P.splits == 1 && o.s1 == 1 && o.off % 2 == 0 && o.s0 % 2 == 0 && o.sb % 2 == 0;
  // Whole tiles into the f32 scratch: the result matrices stored straight to it (no staging).
  const bool mat_store = aligned && !direct_ok;
  Scratch sc;
  View out = o;
  if (!direct_ok) {
    sc = make_scratch(o.t, P.splits, batch, M, N);
    out = sc.v;
  }
  const View* cc = direct_ok ? c : nullptr;
  const bool c_in_o = cc && kernel::block_id(cc->t) == kernel::block_id(out.t);
  std::vector<kernel::Storage> storage = {
      {&a.t, "A", "vec4<u32>"}, {&b.t, "Bm", "vec4<u32>"}, {&out.t, "O", mat_store ? "f32" : "u32", true}};
  std::string readers;
  if (cc && !c_in_o) {
    storage.push_back({&cc->t, "C", elem_type(cc->t.scalar_type())});
    readers = elem_fn("elc", "C", cc->t.scalar_type());
  }
  // The direct store writes whole f16 words along n and never reads O's column stride.
  const kernel::Params prm =
      gemm_params(M, N, K, batch, P.tiles_m, P.tiles_n, P.kps, a, b, cc, out, direct_ok ? alpha : 1.0f, beta, direct_ok,
                  !direct_ok, unread_unit_strides(aligned, a_k8, aligned, b_n8));
  const uint64_t groups = uint64_t(batch * P.tiles_m * P.tiles_n) * P.splits;
  auto key_for = [&](int syntax) {
    std::ostringstream key;
    key << "matmul_sg:" << syntax << ":" << P.sm << "x" << P.sn << "x" << P.sk << "x" << P.sg << ":" << P.wsm << "x"
        << P.wsn << "x" << P.tm << "x" << P.tn << "x" << P.bk << "x" << P.ns << ":" << a_k8 << a_vec << b_n8 << b_vec
        << aligned << mat_store << direct_ok << (cc != nullptr) << c_in_o
        << (cc && !c_in_o ? dtype_tag(cc->t.scalar_type()) : "");
    if (gb) key << ":gb:" << gb->key();
    return key.str();
  };
  const int known = g_sg_syntax.load();
  if (known < 0) return false;
  std::string first_error;
  for (int use = known ? known : 1; use <= 2; ++use) {
    try {
      kernel::launch(key_for(use), storage, prm, groups, [&] {
        return sg_wgsl(P, use, a_k8, a_vec, b_n8, b_vec, aligned, mat_store, direct_ok, cc != nullptr, c_in_o, readers,
                       gb);
      });
      g_sg_syntax.store(use);
      break;
    } catch (const c10::Error& e) {
      if (known) throw;  // a syntax that compiled before: a real error
      // Dawn's message without the WGSL listing that follows it.
      std::string msg = e.what_without_backtrace();
      // A parameter the WGSL and the launch disagree on is this file's bug, not Dawn's syntax.
      if (msg.find("kernel parameter") != std::string::npos) throw;
      msg = msg.substr(0, msg.find("---- WGSL ----"));
      if (use == 1) first_error = msg;
      if (use == 2) {
        // Neither syntax compiles on this Dawn: the FMA kernels from now on, said once.
        g_sg_syntax.store(-1);
        TORCH_WARN("webgpu: matmul: subgroup-matrix kernels do not compile on this Dawn; using the FMA kernels.\n",
                   first_error, "\n", msg);
        return false;
      }
    }
  }
  if (!direct_ok) epilogue(sc, P.splits, batch, M, N, o, c, alpha, beta);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Float mat-vec: O[b, j] = alpha * sum_k X[b, k] W[b, j, k] (+ beta C[b, j])

struct Vec {  // a vector operand: offset, batch stride, element stride
  Tensor t;
  int64_t off, sb, s;
};

// A vector's parameters: <x>_off, <x>_sb, <x>_s<dim>.
void vec_params(kernel::Params& p, const std::string& x, const Vec& v, const char* dim) {
  index(p, x + "_off", v.off);
  index(p, x + "_sb", v.sb);
  index(p, x + "_s" + dim, v.s);
}

// The mat-vec shape: the workgroups to aim for (split-K when the output alone gives fewer than half),
// the shortest k range of a split-K part, and the vector loads per loop iteration.
// TORCH_WEBGPU_GEMV="wgs,min_k,unroll" overrides them for tuning.
struct GemvTuning {
  int64_t wgs = 2048, min_k = 128;
  int unroll = 4;
};
const GemvTuning& gemv_tuning() {
  static const GemvTuning t = [] {
    GemvTuning r;
    const std::vector<long> v = kernel::env_numbers("TORCH_WEBGPU_GEMV", 3);
    if (v.size() == 3 && v[0] >= 1 && v[1] >= 64 && v[2] >= 1 && v[2] <= 8) r = {v[0], v[1], int(v[2])};
    return r;
  }();
  return t;
}

void gemv(const Vec& o, const Vec& x, const View& w /* s0: along j, s1: along k */, const Vec* c, int64_t batch,
          int64_t J, int64_t K, float alpha, float beta) {
  const bool rows = w.s1 == 1 || w.s0 != 1;  // W's rows contiguous along k (or neither dim)
  int64_t groups_j, tpr = 4;
  if (rows) {
    const int64_t want = J == 1 ? 256 : K >= 4096 ? 128 : K >= 1024 ? 64 : K >= 256 ? 32 : 16;
    tpr = want;
    groups_j = grid(J, uint32_t(256 / tpr));
  }
  // Columns: `lanes` invocations own 4 neighbouring outputs each, 256 / lanes of them split k. Narrow
  // strips (fewer lanes, more of k in one workgroup) where that gives 256 workgroups: the whole k in
  // one dispatch, no split-K parts for the epilogue to sum (TORCH_WEBGPU_GEMV_STRIP=0: 64 lanes).
  int64_t lanes = 64;
  if (!rows) {
    const std::vector<long> fixed = kernel::env_numbers("TORCH_WEBGPU_GEMV_LANES", 1);  // 4 .. 64: tuning
    if (fixed.size() == 1 && (fixed[0] == 4 || fixed[0] == 8 || fixed[0] == 16 || fixed[0] == 32 || fixed[0] == 64))
      lanes = fixed[0];
    else if (kernel::env_switch("TORCH_WEBGPU_GEMV_STRIP", 1) == 1)
      for (int64_t l : {16, 4})
        if (batch * grid(J, uint32_t(4 * lanes)) < 256 && batch * grid(J, uint32_t(4 * l)) <= 4096) lanes = l;
    groups_j = grid(J, uint32_t(4 * lanes));
  }
  // Memory-bound: enough workgroups to keep every SM's loads in flight (tuning.wgs), each part at
  // least tuning.min_k long; small problems (under 2^20 products) stay one dispatch.
  const GemvTuning& tune = gemv_tuning();
  int64_t splits = 1;
  const int64_t wgs = batch * groups_j;
  if (wgs * 2 <= tune.wgs && (rows || wgs < 256) && K >= 2 * tune.min_k && batch * J * K >= (int64_t(1) << 20))
    splits = std::min<int64_t>((tune.wgs + wgs - 1) / wgs, K / tune.min_k);
  splits = std::max<int64_t>(splits, 1);
  int64_t kps = (K + splits - 1) / splits;
  kps = (kps + 63) / 64 * 64;
  splits = (K + kps - 1) / kps;
  const bool direct = splits == 1 && o.t.scalar_type() == at::kFloat;
  Scratch sc;
  Vec out = o;
  if (!direct) {
    sc = make_scratch(o.t, splits, batch, J, 1);
    out = {sc.t, sc.t.storage_offset(), J, 1};
  }
  const Vec* cc = direct ? c : nullptr;
  auto is_f32_aligned = [](const Tensor& t) { return vec_dtype(t.scalar_type()) && kernel::block_bytes(t) % 16 == 0; };
  const bool x_vec = is_f32_aligned(x.t) && (x.s == 1 || K == 1) && x.off % 4 == 0 && x.sb % 4 == 0;
  bool w_vec;
  if (rows)
    w_vec = is_f32_aligned(w.t) && w.s1 == 1 && w.off % 4 == 0 && w.s0 % 4 == 0 && w.sb % 4 == 0;
  else
    w_vec = is_f32_aligned(w.t) && w.s0 == 1 && w.off % 4 == 0 && w.s1 % 4 == 0 && w.sb % 4 == 0;
  std::vector<kernel::Storage> storage;
  const std::string readers = float_bindings(x.t, "X", w.t, "W", out.t, cc ? &cc->t : nullptr, storage);
  std::ostringstream key;
  const int U = tune.unroll;
  key << "matmul_gemv:" << (rows ? "r" : "c") << (rows ? tpr : lanes) << "u" << U << ":" << x_vec << (x.s == 1) << w_vec
      << (cc != nullptr) << ":" << dtype_tag(x.t.scalar_type()) << dtype_tag(w.t.scalar_type())
      << (cc ? dtype_tag(cc->t.scalar_type()) : "") << storage.size();
  kernel::Params prm;
  index(prm, "J", J);
  index(prm, "K", K);
  index(prm, "batch", batch);
  index(prm, "splits", splits);
  index(prm, "k_split", kps);
  vec_params(prm, "x", x, "k");
  view_params([&](const std::string& n, int64_t v) { index(prm, n, v); }, "w", w, "j", "k");
  vec_params(prm, "o", out, "j");
  prm.f32("alpha", direct ? alpha : 1.0f);
  index(prm, "groups_j", groups_j);
  if (cc) {
    vec_params(prm, "c", *cc, "j");
    prm.f32("beta", beta);
  }
  index(prm, "part_stride", direct ? 0 : batch * J);
  auto make = [&] {
    const std::string xv4 = x_vec ? vload(x.t.scalar_type(), "X", "xb + k")
                                  : "vec4<f32>(elx(xb + k * sXk), elx(xb + (k + 1u) * sXk), elx(xb + (k + 2u) * sXk), "
                                    "elx(xb + (k + 3u) * sXk))";
    std::ostringstream b;
    if (rows) {
      b << "  let t = lid % TPR;\n  let j = jg * (256u / TPR) + lid / TPR;\n  var acc = 0.0;\n  if (j < J) {\n"
        << "    let wb = wb0 + j * sWj;\n";
      if (w_vec) {
        // U loads per iteration (independent, in flight together), then the remaining vec4s.
        b << "    let kv = k0 + ((k1 - k0) / 4u) * 4u;\n    var v4 = vec4<f32>(0.0);\n"
          << "    var k = k0 + t * 4u;\n";
        if (U > 1) {
          b << "    for (; k + " << (U - 1) << "u * TPR * 4u < kv; k = k + " << U << "u * TPR * 4u) {\n";
          for (int u = 0; u < U; ++u)
            b << "      let w" << u << " = "
              << vload(w.t.scalar_type(), "W", "wb + k + " + std::to_string(u) + "u * TPR * 4u") << ";\n";
          for (int u = 0; u < U; ++u) {
            const std::string ku = "(k + " + std::to_string(u) + "u * TPR * 4u)";
            const std::string xu = x_vec ? vload(x.t.scalar_type(), "X", "xb + " + ku)
                                         : "vec4<f32>(elx(xb + " + ku + " * sXk), elx(xb + (" + ku +
                                               " + 1u) * sXk), elx(xb + (" + ku + " + 2u) * sXk), elx(xb + (" + ku +
                                               " + 3u) * sXk))";
            b << "      v4 = fma(w" << u << ", " << xu << ", v4);\n";
          }
          b << "    }\n";
        }
        b << "    for (; k < kv; k = k + TPR * 4u) { v4 = fma(" << vload(w.t.scalar_type(), "W", "wb + k") << ", "
          << xv4 << ", v4); }\n"
          << "    acc = (v4.x + v4.y) + (v4.z + v4.w);\n"
          << "    for (var k = kv + t; k < k1; k = k + TPR) { acc = acc + elw(wb + k) * elx(xb + k * sXk); }\n";
      } else {
        b << "    for (var k = k0 + t; k < k1; k = k + TPR) { acc = acc + elw(wb + k * sWk) * elx(xb + k * sXk); }\n";
      }
      b << "  }\n  red[lid] = vec4<f32>(acc, 0.0, 0.0, 0.0);\n  workgroupBarrier();\n"
        << "  for (var st = TPR / 2u; st > 0u; st = st >> 1u) {\n"
        << "    if (t < st) { red[lid].x = red[lid].x + red[lid + st].x; }\n    workgroupBarrier();\n  }\n"
        << "  if (t == 0u && j < J) { store(b, s, j, red[lid].x); }\n";
    } else {
      const std::string L = std::to_string(lanes) + "u", R = std::to_string(256 / lanes) + "u";
      const std::string wat = vload(w.t.scalar_type(), "W", "wb0 + k * sWk + j0");
      b << "  let ky = lid / " << L << ";\n  let j0 = (jg * " << L << " + lid % " << L
        << ") * 4u;\n  var acc = vec4<f32>(0.0);\n  if (j0 < J) {\n";
      if (w_vec && x_vec && x.s == 1) {
        // Blocks of 4 consecutive rows per invocation: one vec4 of x and 4 independent row loads of W
        // per block, U blocks per iteration (4U loads in flight); H100 x @ W 4096^2: 30 us, against
        // 38 us one row at a time (benchmarks/probe_gemv.py). Rows past the last whole block of
        // 4 (K not a multiple of 4) belong to the invocation whose block they start.
        const std::string step = std::to_string(4 * (256 / lanes)) + "u";
        auto block = [&](const std::string& kb, const std::string& tag, const std::string& pad) {
          std::ostringstream o;
          o << pad << "let x" << tag << " = " << vload(x.t.scalar_type(), "X", "xb + " + kb) << ";\n";
          for (int r = 0; r < 4; ++r)
            o << pad << "let w" << tag << r << " = "
              << vload(w.t.scalar_type(), "W", "wb0 + (" + kb + " + " + std::to_string(r) + "u) * sWk + j0") << ";\n";
          return o.str();
        };
        auto fmas = [&](const std::string& tag, const std::string& pad) {
          std::ostringstream o;
          for (int r = 0; r < 4; ++r)
            o << pad << "acc = fma(w" << tag << r << ", vec4<f32>(x" << tag << "[" << r << "]), acc);\n";
          return o.str();
        };
        b << "    if (j0 + 3u < J) {\n      var k = k0 + ky * 4u;\n";
        if (U > 1) {
          b << "      for (; k + " << (U - 1) << "u * " << step << " + 3u < k1; k = k + " << U << "u * " << step
            << ") {\n";
          for (int u = 0; u < U; ++u)
            b << block("k + " + std::to_string(u) + "u * " + step, std::to_string(u), "        ");
          for (int u = 0; u < U; ++u) b << fmas(std::to_string(u), "        ");
          b << "      }\n";
        }
        b << "      for (; k + 3u < k1; k = k + " << step << ") {\n"
          << block("k", "", "        ") << fmas("", "        ") << "      }\n"
          << "      for (; k < k1; k = k + 1u) { acc = fma(" << wat << ", vec4<f32>(elx(xb + k)), acc); }\n"
          << "    } else {\n";
      } else if (w_vec) {
        b << "    if (j0 + 3u < J) {\n      var k = k0 + ky;\n";
        if (U > 1) {
          b << "      for (; k + " << (U - 1) << "u * " << R << " < k1; k = k + " << U << "u * " << R << ") {\n";
          for (int u = 0; u < U; ++u)
            b << "        let w" << u << " = "
              << vload(w.t.scalar_type(), "W", "wb0 + (k + " + std::to_string(u) + "u * " + R + ") * sWk + j0")
              << ";\n";
          for (int u = 0; u < U; ++u)
            b << "        acc = fma(w" << u << ", vec4<f32>(elx(xb + (k + " << u << "u * " << R << ") * sXk)), acc);\n";
          b << "      }\n";
        }
        b << "      for (; k < k1; k = k + " << R << ") { acc = fma(" << wat
          << ", vec4<f32>(elx(xb + k * sXk)), acc); }\n    } else {\n";
      } else
        b << "    {\n";
      b << "      for (var k = k0 + ky; k < k1; k = k + " << R << ") {\n        let xk = elx(xb + k * sXk);\n"
        << "        for (var c = 0u; c < 4u; c = c + 1u) { if (j0 + c < J) { acc[c] = acc[c] + elw(wb0 + k * sWk + (j0 "
           "+ c) * sWj) * xk; } }\n"
        << "      }\n    }\n  }\n  red[lid] = acc;\n  workgroupBarrier();\n"
        << "  for (var st = " << R << " / 2u; st > 0u; st = st >> 1u) {\n"
        << "    if (ky < st) { red[lid] = red[lid] + red[lid + st * " << L << "]; }\n    workgroupBarrier();\n  }\n"
        << "  if (ky == 0u && j0 < J) {\n    let v = red[lid];\n"
        << "    for (var c = 0u; c < 4u; c = c + 1u) { if (j0 + c < J) { store(b, s, j0 + c, v[c]); } }\n  }\n";
    }
    return kernel::fill(kernel::library("matmul_gemv"),
                        {{"TPR", std::to_string(tpr)},
                         {"FUNCS", readers},
                         {"C_TERM", cc ? "o = o + P.beta * elc(P.c_off + b * P.c_sb + j * P.c_sj);" : ""},
                         {"BODY", b.str()}});
  };
  // Each workgroup loops over k: its weight for the early-submit rule is the bytes of W it reads (a
  // pointwise workgroup moves ~12 KB). A loop of 4096^2 mat-vecs then reaches the GPU every fourth
  // call instead of at the next synchronisation (H100: 49 us per call over 50 calls, 31 over 2000).
  kernel::Source src;
  src.weight = uint64_t(batch) * J * K * c10::elementSize(w.t.scalar_type()) / 16384;
  kernel::launch(key.str(), storage, prm, uint64_t(groups_j) * batch * splits, make, src);
  if (!direct) {
    // The scratch [splits][batch][J] as a [batch][J][1] GEMM output.
    auto as_view = [](const Vec& v) {
      View r;
      r.t = v.t;
      r.off = v.off;
      r.sb = v.sb;
      r.s0 = v.s;
      r.s1 = 0;
      return r;
    };
    const View ov3 = as_view(o), cv3 = c ? as_view(*c) : View();
    epilogue(sc, splits, batch, J, 1, ov3, c ? &cv3 : nullptr, alpha, beta);
  }
}

// ---------------------------------------------------------------------------------------------
// Integer GEMM

void int_gemm(const View& o, const View& a, const View& b, const View* c, int64_t batch, int64_t M, int64_t N,
              int64_t K, const c10::Scalar& alpha, const c10::Scalar& beta) {
  const bool d = o.t.scalar_type() == at::kDouble;  // float64: products rounded, summed in k order
  const bool l = o.t.scalar_type() == at::kLong || d;
  const CT ct = d ? CT::F64 : l ? CT::I64 : CT::I32;
  Kernel k(std::string("matmul_int:") + (c ? "c" : "-") + (d ? "d" : ""));
  k.in(a.t, ct);
  k.in(b.t, ct);
  k.out(o.t, ct);
  if (c) k.in(c->t, ct);
  const int64_t tiles_m = grid(M, 16), tiles_n = grid(N, 16);
  auto set = [&](const std::string& name, int64_t v) { k.param_index(name, v); };
  problem_params(set, M, N, K, tiles_m, tiles_n, a, b, c);
  set("batch", batch);
  view_params(set, "o", o, "m", "n");
  // alpha, beta in the accumulator's type (vec2<u32> for int64; i32 keeps the low word).
  auto scalar = [&](const char* name, const c10::Scalar& v) {
    if (d) {
      const double x = v.to<double>();
      int64_t u;
      std::memcpy(&u, &x, 8);
      k.param_i64(name, u);
    } else if (l)
      k.param_i64(name, v.to<int64_t>());
    else
      k.param_i32(name, int32_t(uint32_t(uint64_t(v.to<int64_t>()))));
  };
  scalar("alpha", alpha);
  if (c) scalar("beta", beta);
  k.launch(uint64_t(batch) * tiles_m * tiles_n, [&] {
    return kernel::fill(
        kernel::library("matmul_int"),
        {{"ACC", l ? "vec2<u32>" : "i32"},
         {"ZERO", l ? "vec2<u32>(0u, 0u)" : "0i"},
         {"ADD", d   ? "f64_add(a, b)"
                 : l ? "i64_add(a, b)"
                     : "a + b"},
         {"MUL", d   ? "f64_mul(a, b)"
                 : l ? "i64_mul(a, b)"
                     : "a * b"},
         {"C_TERM", c ? "v = add(v, mul(P.beta, ld3(P.c_off + b * P.c_sb + m * P.c_sm + n * P.c_sn)));" : ""}});
  });
}

bool shares_block(const Tensor& x, const Tensor& y) {
  return x.numel() > 0 && y.numel() > 0 && kernel::block_id(x) == kernel::block_id(y);
}

// Whether every operand's block may be bound whole, as the GEMM kernels bind them (docs/design.md,
// "Operands past the binding limit").
bool blocks_fit(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->defined() && t->numel() > 0 && !kernel::block_fits(*t, 16)) return false;
  return true;
}

// Whether every operand's elements span at most half a binding, so that a copy of it (a block of its
// own, whatever the allocator rounds it to) may be bound whole.
bool spans_fit(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (!t->defined() || t->numel() == 0) continue;
    const auto span = kernel::byte_span(*t);
    if (span.second - span.first > kernel::device_info(*t).max_binding / 2) return false;
  }
  return true;
}

// A product whose operands do not fit one binding, in parts: halves along the dim (batch, M, N or K)
// whose elements lie furthest apart in any operand, until each part fits. Batch, M and N parts are
// independent; K parts accumulate (the second adds to the first's result, in float32 for float16 and
// bfloat16 so that the sum is rounded once).
void gemm_in_parts(const Tensor& o3, const Tensor& a3, const Tensor& b3, const Tensor& c3, const c10::Scalar& beta,
                   const c10::Scalar& alpha, const char* name) {
  auto reach = [](const Tensor& t, int d) {
    return t.defined() ? (t.size(d) - 1) * std::abs(t.stride(d)) * int64_t(t.element_size()) : int64_t(0);
  };
  // dim 0 batch, 1 M, 2 N, 3 K: (operand, its dim) pairs
  const int64_t size[4] = {o3.size(0), o3.size(1), o3.size(2), a3.size(2)};
  const int64_t far[4] = {std::max({reach(o3, 0), reach(a3, 0), reach(b3, 0), reach(c3, 0)}),
                          std::max({reach(o3, 1), reach(a3, 1), reach(c3, 1)}),
                          std::max({reach(o3, 2), reach(b3, 2), reach(c3, 2)}), std::max(reach(a3, 2), reach(b3, 1))};
  int d = -1;
  for (int i = 0; i < 4; ++i)
    if (size[i] > 1 && (d < 0 || far[i] > far[d])) d = i;
  TORCH_CHECK(d >= 0, "webgpu: ", name, ": an operand is larger than this adapter's maxStorageBufferBindingSize");
  const int64_t h = size[d] / 2;
  if (d < 3) {
    // o, a, b, c narrowed along the batch (all), rows (o, a, c) or columns (o, b, c)
    const int da = d == 2 ? -1 : d, db = d == 1 ? -1 : d;
    for (int part = 0; part < 2; ++part) {
      const int64_t s0 = part == 0 ? 0 : h, len = part == 0 ? h : size[d] - h;
      auto cut = [&](const Tensor& t, int dim) { return t.defined() && dim >= 0 ? t.narrow(dim, s0, len) : t; };
      gemm(cut(o3, d), cut(a3, da), cut(b3, db), cut(c3, d), beta, alpha, name);
    }
    return;
  }
  const Tensor a0 = a3.narrow(2, 0, h), a1 = a3.narrow(2, h, size[3] - h);
  const Tensor b0 = b3.narrow(1, 0, h), b1 = b3.narrow(1, h, size[3] - h);
  const at::ScalarType dt = o3.scalar_type();
  if (dt == at::kHalf || dt == at::kBFloat16) {
    Tensor acc = at::empty(o3.sizes(), o3.options().dtype(at::kFloat));
    gemm(acc, a0.to(at::kFloat), b0.to(at::kFloat), c3.defined() ? c3.to(at::kFloat) : c3, beta, alpha, name);
    gemm(acc, a1.to(at::kFloat), b1.to(at::kFloat), acc, 1, alpha, name);
    o3.copy_(acc);
    return;
  }
  gemm(o3, a0, b0, c3, beta, alpha, name);
  gemm(o3, a1, b1, o3, 1, alpha, name);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The entry point

void gemm_gathered(const Tensor& o3, const Tensor& a3, const Gathered* ga, const Tensor& b3, const Gathered* gb,
                   const Tensor& c3, int64_t K, const char* name) {
  const int64_t batch = o3.size(0), M = o3.size(1), N = o3.size(2);
  if (o3.numel() == 0) return;
  TORCH_CHECK(vec_dtype(o3.scalar_type()), "webgpu: ", name, ": gathered GEMMs take float operands");
  auto operand = [](const Tensor& t3, const Gathered* g) {
    if (!g) return view_of(t3);
    View v;
    v.t = g->t;
    v.off = g->off;
    v.sb = g->sb;
    v.gathered = true;
    return v;
  };
  const View o = view_of(o3), a = operand(a3, ga), b = operand(b3, gb);
  TORCH_INTERNAL_ASSERT(kernel::block_id(o3) != kernel::block_id(a.t) && kernel::block_id(o3) != kernel::block_id(b.t),
                        name, ": output overlaps an operand");
  if (K == 0) return no_products(o3, c3, 1);
  View cv;
  if (c3.defined()) cv = view_of(c3);
  const View* c = c3.defined() ? &cv : nullptr;
  if (gb && gb->units8) {  // 16-byte units along k for the subgroup-matrix kernel only
    TORCH_INTERNAL_ASSERT(!ga && o3.scalar_type() == at::kHalf && a3.scalar_type() == at::kHalf &&
                              gb->t.scalar_type() == at::kHalf && (!c || c->t.scalar_type() == at::kHalf),
                          name, ": 16-byte gathered units take half operands");
    const SgPlan P = half_plan(o3, batch, M, N, K);
    TORCH_CHECK(P.use && sg_gemm(P, o, a, b, c, batch, M, N, K, 1.0f, 1.0f, gb), "webgpu: ", name,
                ": the subgroup-matrix kernel is not available for this product (", P.why, ")");
    return;
  }
  tiled_gemm(o, a, b, c, batch, M, N, K, 1.0f, 1.0f, ga, gb);
}

void gemm(const Tensor& o3, const Tensor& a3, const Tensor& b3, const Tensor& c3_in, const c10::Scalar& beta,
          const c10::Scalar& alpha, const char* name) {
  const at::ScalarType dt = o3.scalar_type();
  if (kernel::is_fp8(dt) && (std::strcmp(name, "mm") == 0 || std::strcmp(name, "addmm") == 0)) {
    // CPU's float8 mm/addmm: float32 products and sums, one rounding to float8 at the end.
    Tensor of = at::empty(o3.sizes(), o3.options().dtype(at::kFloat));
    gemm(of, a3.to(at::kFloat), b3.to(at::kFloat), c3_in.defined() ? c3_in.to(at::kFloat) : Tensor(), beta, alpha,
         name);
    o3.copy_(of);
    return;
  }
  if (dt == at::kComplexFloat) return ops::complex_gemm(o3, a3, b3, c3_in, beta, alpha, name);  // ops/complex.cpp
  if (dt != at::kDouble || !ops::float64_enabled()) ops::check_supported_dtype(dt, name);
  TORCH_CHECK(dt != at::kBool, "\"", name, "\" not implemented for 'Bool'");
  TORCH_CHECK(a3.scalar_type() == dt && b3.scalar_type() == dt, name, ": expected operands of dtype ", dt, ", got ",
              a3.scalar_type(), " and ", b3.scalar_type());
  const int64_t batch = o3.size(0), M = o3.size(1), N = o3.size(2), K = a3.size(2);
  if (o3.numel() == 0) return;
  Tensor c3 = c3_in.defined() && !is_zero(beta) ? c3_in : Tensor();
  if (c3.defined() && c3.scalar_type() != dt) c3 = c3.to(dt);
  if (K == 0 || is_zero(alpha)) return no_products(o3, c3, beta);
  // The output must not share storage with what the kernel reads at other positions.
  const bool c_same = c3.defined() && shares_block(c3, o3) &&
                      (c3.storage_offset() != o3.storage_offset() || c3.strides() != o3.strides());
  if (shares_block(o3, a3) || shares_block(o3, b3) || c_same) {
    Tensor tmp = at::empty(o3.sizes(), o3.options());
    gemm(tmp, a3, b3, c3, beta, alpha, name);
    o3.copy_(tmp);
    return;
  }
  if (!blocks_fit({&o3, &a3, &b3, &c3})) {
    // Past the binding limit: parts until each operand's elements fit, then copies of the operands
    // whose blocks are larger than they are (views of a large tensor).
    if (!spans_fit({&o3, &a3, &b3, &c3})) return gemm_in_parts(o3, a3, b3, c3, beta, alpha, name);
    auto own = [](const Tensor& t) { return t.defined() && !kernel::block_fits(t, 16) ? t.clone() : t; };
    if (kernel::block_fits(o3, 16)) return gemm(o3, own(a3), own(b3), own(c3), beta, alpha, name);
    Tensor tmp = at::empty(o3.sizes(), o3.options());
    gemm(tmp, own(a3), own(b3), own(c3), beta, alpha, name);
    o3.copy_(tmp);
    return;
  }
  const View o = view_of(o3), a = view_of(a3), b = view_of(b3);
  View cv;
  if (c3.defined()) cv = view_of(c3);
  const View* c = c3.defined() ? &cv : nullptr;
  if (!at::isFloatingType(dt) || dt == at::kDouble) {  // float64: the same tiles, emulated binary64
    int_gemm(o, a, b, c, batch, M, N, K, alpha, beta);
    return;
  }
  const float fa = alpha.to<float>(), fb = c ? beta.to<float>() : 0.0f;
  if (M == 1 || N == 1) {
    // Mat-vec: the vector is the side of length 1.
    Vec ov, xv, cvec;
    View w;
    if (M == 1) {  // O[b, 0, n] = sum_k A[b, 0, k] B[b, k, n]
      ov = {o.t, o.off, o.sb, o.s1};
      xv = {a.t, a.off, a.sb, a.s1};
      w.t = b.t;
      w.off = b.off;
      w.sb = b.sb;
      w.s0 = b.s1;
      w.s1 = b.s0;
      if (c) cvec = {c->t, c->off, c->sb, c->s1};
      gemv(ov, xv, w, c ? &cvec : nullptr, batch, N, K, fa, fb);
    } else {  // O[b, m, 0] = sum_k A[b, m, k] B[b, k, 0]
      ov = {o.t, o.off, o.sb, o.s0};
      xv = {b.t, b.off, b.sb, b.s0};
      w = a;
      if (c) cvec = {c->t, c->off, c->sb, c->s0};
      gemv(ov, xv, w, c ? &cvec : nullptr, batch, M, K, fa, fb);
    }
    return;
  }
  if (dt == at::kHalf) {
    const SgPlan P = half_plan(o3, batch, M, N, K);
    if (P.use && sg_gemm(P, o, a, b, c, batch, M, N, K, fa, fb)) return;
  }
  if (N <= 16 && M > N) {
    // Tall and narrow: O^T = B^T A^T puts the short side where the small-M tile expects it
    // (transposing a strided view is free).
    auto tr = [](View v) {
      std::swap(v.s0, v.s1);
      return v;
    };
    View ct;
    if (c) ct = tr(*c);
    tiled_gemm(tr(o), tr(b), tr(a), c ? &ct : nullptr, batch, N, M, K, fa, fb);
    return;
  }
  tiled_gemm(o, a, b, c, batch, M, N, K, fa, fb);
}

bool half_gemm_uses_matrix_units(const at::Tensor& t, int64_t batch, int64_t M, int64_t N, int64_t K) {
  return g_sg_syntax.load() >= 0 && half_plan(t, batch, M, N, K).use;
}

bool half_gemm_uses_matrix_units(const at::TensorBase& t) { return half_plan(t, 1, 4096, 4096, 4096).use; }

std::map<std::string, std::string> describe_sg_gemm_plan(const std::vector<kernel::MatrixConfig>& configs, bool has_f16,
                                                         uint64_t wg_storage, uint64_t max_invocations,
                                                         at::ScalarType dt, int64_t batch, int64_t M, int64_t N,
                                                         int64_t K) {
  const SgPlan p = sg_plan(configs, has_f16, wg_storage, max_invocations, dt, batch, M, N, K);
  std::map<std::string, std::string> d{{"use", p.use ? "1" : "0"}, {"why", p.why}};
  if (!p.use) return d;
  auto I = [](int64_t v) { return std::to_string(v); };
  d["config"] = I(p.sm) + "x" + I(p.sn) + "x" + I(p.sk);
  d["subgroup"] = I(p.sg);
  d["tile"] = I(p.bm()) + "x" + I(p.bn()) + "x" + I(p.bk);
  d["stage"] = I(p.ns);
  d["subgroups"] = I(p.wsm) + "x" + I(p.wsn);
  d["splits"] = I(p.splits);
  d["workgroups"] = I(batch * p.tiles_m * p.tiles_n * p.splits);
  return d;
}

}  // namespace webgpu::engines
