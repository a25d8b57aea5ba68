// torch.fft on the device: ATen's _fft_c2c, _fft_r2c and _fft_c2r (every torch.fft function comes
// through them) over complex64 (docs/design.md, "FFT"). One-dimensional transforms run dim by dim
// on rows made contiguous: lengths of radices 2, 3, 4, 5, 7 in workgroup memory (wgsl/kernels/fft.wgsl),
// longer ones as two such passes (four-step), any other length through Bluestein's chirp-z over a
// power-of-two FFT. Twiddles and chirps are computed on the host in double and uploaded once.
#include <ATen/NativeFunctions.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <cstdio>
#include <complex>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "kernel/device.h"
#include "kernel/env.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/common.h"
#include "ops/float64.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

constexpr double kPi = 3.14159265358979323846;

// ---- host tables ---------------------------------------------------------------------------------

std::mutex g_mutex;
std::map<std::tuple<int, int64_t, int64_t>, at::Tensor> g_tables;  // (device, kind/n, n) -> tensor

// Uploads complex values (double, rounded once to float) as a complex64 tensor on t's device.
at::Tensor upload(const at::Tensor& like, const std::vector<std::complex<double>>& v) {
  at::Tensor h = at::empty({int64_t(v.size())}, at::TensorOptions().dtype(at::kComplexFloat));
  auto* p = h.data_ptr<c10::complex<float>>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = c10::complex<float>(float(v[i].real()), float(v[i].imag()));
  return h.to(like.device());
}

// W[m] = exp(-2 pi i m / n), m < n, in double (WGSL's sin/cos are not accurate enough on every
// driver), rounded once to float.
const at::Tensor& twiddles(const at::Tensor& like, int64_t n) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto key = std::make_tuple(int(like.device().index()), int64_t(0), n);
  auto it = g_tables.find(key);
  if (it != g_tables.end()) return it->second;
  std::vector<std::complex<double>> w(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m) {
    const double a = -2.0 * kPi * double(m) / double(n);
    w[size_t(m)] = {std::cos(a), std::sin(a)};
  }
  return g_tables.emplace(key, upload(like, w)).first->second;
}

// ---- plans ---------------------------------------------------------------------------------------

// Radices of n (powers of two up to `top` first, then 4s, 2, 3, 5, 7), empty when n has another prime
// factor. A radix of 8 or 16 is a whole small FFT in registers: fewer passes through workgroup
// memory and fewer barriers.
std::vector<int> radices(int64_t n, int top = 4) {
  std::vector<int> r;
  for (int big = top; big > 4; big /= 2)
    while (n % big == 0) r.push_back(big), n /= big;
  while (n % 4 == 0) r.push_back(4), n /= 4;
  for (int p : {2, 3, 5, 7})
    while (n % p == 0) r.push_back(p), n /= p;
  if (n != 1) r.clear();
  return r;
}

// The longest row a workgroup transforms: two arrays of vec2<f32> in workgroup memory.
int64_t wg_max(const at::Tensor& t) {
  const uint32_t bytes = kernel::device_info(t).max_workgroup_storage;
  int64_t m = 1;
  while (m * 2 * 16 <= int64_t(bytes) && m < 4096) m *= 2;
  return m;
}

struct Rows {
  int64_t rows, inner;  // row g = b * inner + i
  int64_t off, bs, is, es;  // element e of row g: off + b bs + i is + e es
  // With bn > 0, a third level: b = c * bn + b', and element e of row g is off + c cs + b' bs + i is + e es.
  int64_t bn = 0, cs = 0;
};

// The kernel parameters of rows r, named after `x`: <x>_off, <x>_bs, <x>_is, <x>_es, and <x>_cs
// with three levels (wgsl/kernels/fft.wgsl).
void rows_params(Kernel& k, const std::string& x, const Rows& r) {
  k.param_index(x + "_off", r.off);
  k.param_index(x + "_bs", r.bs);
  k.param_index(x + "_is", r.is);
  k.param_index(x + "_es", r.es);
  if (r.bn) k.param_index(x + "_cs", r.cs);
}

// One dispatch: `rows` transforms of length N (a divisor of the table's length ntab) from x to y.
// A four-step pass reads or writes its rows across memory (element stride x_es or y_es != 1); when
// neighbouring rows are neighbours in memory (x_is or y_is == 1), a workgroup takes `side` rows and
// its invocations walk them side by side, so that each 32-byte sector read or written is used
// whole (one row at a time reads 8 bytes of every sector: 4x the traffic). If two arrays of `side`
// rows do not fit workgroup memory, one array is used in place: each pass holds its butterflies'
// results in registers across a barrier before writing them back.
// TORCH_WEBGPU_FFT_TUNE="side,tmax[,radix[,len[,flags]]]" overrides the rows side by side (1: off), the
// most invocations of a four-step workgroup, the largest radix (4, 8, 16), the longest pass of a
// multi-pass transform (lengths past it take three passes) and flags (1 row padding, 2 the bank
// spread of every index, 4 twiddles of power-of-two butterflies as products of fewer loads), for
// tuning (read once). The defaults are the fastest of a sweep at 2^20 on an H100 (GPU timestamps,
// docs/design.md "FFT"): 512 invocations and twiddle products, 47.5 us against 53.8 with 1024
// invocations and every twiddle loaded; the bank spread made no difference (53.3).
struct FftTune {
  int64_t side = 4, tmax = 512, radix = 8, len = 1024, flags = 5;
};
const FftTune& fft_tune() {
  static const FftTune t = [] {
    FftTune r;
    const std::vector<long> v = kernel::env_numbers("TORCH_WEBGPU_FFT_TUNE", 2);
    // fields left out keep their defaults
    const long c = v.size() > 2 ? v[2] : r.radix, len = v.size() > 3 ? v[3] : r.len,
               flags = v.size() > 4 ? v[4] : r.flags;
    if (!v.empty() && v[0] >= 1 && v[0] <= 64 && v[1] >= 32 && v[1] <= 1024 && (c == 4 || c == 8 || c == 16) &&
        len >= 8 && len <= 4096 && flags >= 0 && flags <= 7)
      r = {v[0], v[1], c, len, flags};
    return r;
  }();
  return t;
}

// The longest row of which `side` rows side by side fit workgroup memory at `bytes_per_point`
// (16: two arrays, 8: one array in place).
int64_t side_len_cap(const at::Tensor& x, int64_t bytes_per_point) {
  return int64_t(kernel::device_info(x).max_workgroup_storage) / (fft_tune().side * bytes_per_point);
}

// y_s = sum_r v_r W_R^(r s) (W_R = exp(-+ 2 pi i / R), the sign from P.sg) for R a power of two, in
// registers: radix-2 decimation in time over the bit-reversed v_r, with the twiddles as constants
// computed in double. Returns the WGSL (lets named d<stage>_<i>) and sets y to the result names.
std::string pow2_dft(int R, std::vector<std::string>& y) {
  int bits = 0;
  while ((1 << bits) < R) ++bits;
  std::vector<std::string> a(static_cast<size_t>(R));
  for (int i = 0; i < R; ++i) {
    int r = 0;
    for (int b = 0; b < bits; ++b)
      if (i & (1 << b)) r |= 1 << (bits - 1 - b);
    a[size_t(i)] = "v" + std::to_string(r);
  }
  std::string c;
  char buf[96];
  for (int len = 2, stage = 0; len <= R; len *= 2, ++stage) {
    std::vector<std::string> nx(a.size());
    for (int b = 0; b < R; b += len)
      for (int t = 0; t < len / 2; ++t) {
        const std::string lo = a[size_t(b + t)], hi = a[size_t(b + t + len / 2)];
        std::string x;
        if (t == 0) {
          x = hi;
        } else if (4 * t == len) {
          x = "qturn(" + hi + ")";
        } else {
          const double th = 2.0 * kPi * t / len;
          std::snprintf(buf, sizeof buf, "vec2<f32>(%.9e, -P.sg * %.9e)", std::cos(th), std::sin(th));
          x = "cmul(" + hi + ", " + buf + ")";
        }
        const std::string n0 = "d" + std::to_string(stage) + "_" + std::to_string(b + t);
        const std::string n1 = "d" + std::to_string(stage) + "_" + std::to_string(b + t + len / 2);
        c += "    let " + n0 + "x = " + x + ";\n    let " + n0 + " = " + lo + " + " + n0 + "x;\n    let " + n1 + " = " +
             lo + " - " + n0 + "x;\n";
        nx[size_t(b + t)] = n0;
        nx[size_t(b + t + len / 2)] = n1;
      }
    a = nx;
  }
  y = a;
  return c;
}

// mid: the four-step twiddle table W_n (n = the whole length), or null.
void wg_fft(const at::Tensor& x, const Rows& in, const at::Tensor& y, const Rows& out, int64_t N, const at::Tensor& tw,
            int64_t ntab, bool forward, float scale, const at::Tensor* mid) {
  const std::vector<int> rad = radices(N, int(fft_tune().radix));
  TORCH_CHECK(!rad.empty() || N == 1, "webgpu: fft: internal: no plan for length ", N);
  TORCH_CHECK(in.rows == out.rows && in.inner == out.inner && in.bn == out.bn,
              "webgpu: fft: internal: row maps differ");
  const int64_t cap_rows = std::max<int64_t>(1, wg_max(x) / N);
  // Several short rows per workgroup; about 256 butterflies in flight.
  int64_t G = std::min<int64_t>(cap_rows, std::max<int64_t>(1, 1024 / N));
  const bool side_in = in.es != 1 && in.is == 1, side_out = out.es != 1 && out.is == 1;
  bool inplace = false;
  const int64_t side = fft_tune().side;
  if ((side_in || side_out) && side > 1 && G < side && in.rows >= side) {
    if (N <= side_len_cap(x, 16))
      G = side;
    else if (N <= side_len_cap(x, 8))
      G = side, inplace = true;
  }
  // One butterfly per invocation up to 256 (a short transform's rows), and for the four-step passes
  // up to the adapter's limit: their workgroups are few (rows / G) and each must hide the latency
  // of its own loads.
  const int64_t t_cap =
      G == side && (side_in || side_out)
          ? std::min<int64_t>(fft_tune().tmax, std::max<int64_t>(256, kernel::device_info(x).max_invocations))
          : 256;
  const int64_t T = std::min<int64_t>(t_cap, std::max<int64_t>(32, G * N / 4));
  // Rows side by side are loaded and stored across rows: with rows N points apart in workgroup
  // memory, those accesses all fall in one bank (N a power of two); one point of padding per row
  // spreads them, where it fits (TORCH_WEBGPU_FFT_TUNE's fifth value 0 turns it off).
  const int64_t bytes = kernel::device_info(x).max_workgroup_storage;
  const int64_t per_point = inplace ? 8 : 16;
  const int64_t NP =
      (side_in || side_out) && G > 1 && (fft_tune().flags & 1) && G * (N + 1) * per_point <= bytes ? N + 1 : N;
  // The first Stockham passes store with strides of R and R p points (all in one or two banks, 8-way
  // conflicts at radix 8); index a goes to a + a / 16 (16 points of 8 bytes span the 32 banks), which
  // spreads them, where it fits.
  const auto spread = [](int64_t a) { return a + a / 16; };
  const bool tw_products = fft_tune().flags & 4;
  const bool sw = (fft_tune().flags & 2) && N >= 16 && spread(G * NP - 1) + 1 <= bytes / per_point;
  const int64_t cap_pts = sw ? spread(G * NP - 1) + 1 : G * NP;
  std::string key = "fft:" + std::to_string(N) + ":" + std::to_string(G) + ":" + std::to_string(T) + ":r" +
                    std::to_string(rad.empty() ? 0 : rad[0]) + (mid ? ":m" : "") + (side_in ? ":si" : "") +
                    (side_out ? ":so" : "") + (inplace ? ":ip" : "") + (in.bn ? ":c" : "") + (NP != N ? ":p" : "") +
                    (sw ? ":w" : "") + (tw_products ? ":t" : "");
  Kernel k(key);
  k.in(x, CT::RAW);
  k.in(tw, CT::RAW);
  k.out(y, CT::RAW);
  if (mid) k.in(*mid, CT::RAW);
  k.param_index("rows", in.rows);
  k.param_index("inner", in.inner);
  rows_params(k, "x", in);
  rows_params(k, "y", out);
  if (in.bn) k.param_index("bn", in.bn);
  k.param_index("tstride", ntab / N);
  k.param_f32("sg", forward ? 1.0f : -1.0f);
  k.param_f32("scale", scale);
  k.launch(kernel::grid(in.rows, uint32_t(G)), [&] {
    auto u = [](int64_t v) { return std::to_string(v) + "u"; };
    auto I = [](int64_t v) { return std::to_string(v); };
    std::string passes;
    int64_t p = 1;
    bool src_a = true;
    for (size_t si = 0; si < rad.size(); ++si) {
      const int R = rad[si];
      const int64_t Nr = N / R;
      // The first stage reads its butterflies' inputs from x and the last writes its outputs to y,
      // straight from and to registers (no load and store loops through workgroup memory).
      const bool first = si == 0, last = si + 1 == rad.size();
      const std::string S = src_a || inplace ? "sa" : "sb", D = src_a && !inplace ? "sb" : "sa";
      // Butterfly t: reads R values (twiddled), leaves y<q>_0..y<q>_{R-1}, and its output index o<q>.
      // Against x and y, rows side by side take butterfly t as row t % G, index t / G: neighbouring
      // invocations on neighbouring rows.
      auto butterfly = [&](const std::string& q) {
        const bool side = (first && side_in) || (last && side_out);
        std::string c = side ? "    let rr" + q + " = t % " + u(G) + ";\n    let j" + q + " = t / " + u(G) + ";\n"
                             : "    let rr" + q + " = t / " + u(Nr) + ";\n    let j" + q + " = t % " + u(Nr) + ";\n";
        c += "    let base" + q + " = rr" + q + " * " + u(NP) + ";\n    let k" + q + " = j" + q + " % " + u(p) + ";\n";
        if (first || last) c += "    let row" + q + " = g0 + rr" + q + ";\n";
        if (first)
          c += "    var at" + q + " = 0u;\n    if (row" + q + " < P.rows) { at" + q + " = row_at(row" + q + ").x; }\n";
        for (int r = 0; r < R; ++r) {
          const std::string at = "j" + q + " + " + u(r * Nr);
          if (first) {
            c += "    var v" + I(r) + " = vec2<f32>(0.0);\n    if (row" + q + " < P.rows) { v" + I(r) +
                 " = bitcast<vec2<f32>>(ld0(at" + q + " + (" + at + ") * P.x_es)); }\n";
          } else {
            c += "    var v" + I(r) + " = " + S + "[ix(base" + q + " + " + at + ")];\n";
          }
          if (p > 1 && r > 0) {
            // W^(r m): loaded, or (flag 4, power-of-two radices) loaded for r a power of two and the
            // product of two of those for the others (one more rounding).
            const int hi = 1 << (31 - __builtin_clz(unsigned(r)));
            const std::string w = !tw_products || hi == r || (R & (R - 1))
                                      ? "tws(" + u(r) + " * k" + q + " * " + u(N / (p * R)) + ")"
                                      : "cmul(tw" + I(hi) + ", tw" + I(r - hi) + ")";
            c += "    let tw" + I(r) + " = " + w + ";\n    v" + I(r) + " = cmul(v" + I(r) + ", tw" + I(r) + ");\n";
          }
        }
        std::vector<std::string> y(static_cast<size_t>(R));
        if (R == 2) {
          y = {"v0 + v1", "v0 - v1"};
        } else if (R == 4) {
          c += "    let a0 = v0 + v2;\n    let a1 = v0 - v2;\n    let a2 = v1 + v3;\n    let a3 = qturn(v1 - v3);\n";
          y = {"a0 + a2", "a1 + a3", "a0 - a2", "a1 - a3"};
        } else if ((R & (R - 1)) == 0) {
          c += pow2_dft(R, y);
        } else {
          for (int s = 0; s < R; ++s) {
            std::string e = "v0";
            for (int r = 1; r < R; ++r) {
              const int qq = (r * s) % R;
              e += qq == 0 ? " + v" + I(r) : " + cmul(v" + I(r) + ", tws(" + u(int64_t(qq) * Nr) + "))";
            }
            y[size_t(s)] = e;
          }
        }
        if (last) {
          // In the last stage p R = N, so k = j and output r is element j + r p of the row.
          c += "    if (row" + q + " < P.rows) {\n      let at = row_at(row" + q + ").y;\n";
          for (int r = 0; r < R; ++r) {
            const std::string e = "j" + q + " + " + u(r * p);
            c += "      var w" + I(r) + " = (" + y[size_t(r)] + ") * P.scale;\n";
            if (mid) c += "      w" + I(r) + " = cmul(w" + I(r) + ", twid2((row" + q + " % P.inner) * (" + e + ")));\n";
            c += "      st2(at + (" + e + ") * P.y_es, bitcast<vec2<u32>>(w" + I(r) + "));\n";
          }
          return c + "    }\n";
        }
        for (int r = 0; r < R; ++r) c += "    y" + q + "_" + I(r) + " = " + y[size_t(r)] + ";\n";
        c += "    o" + q + " = base" + q + " + (j" + q + " - k" + q + ") * " + u(R) + " + k" + q + ";\n";
        return c;
      };
      auto decl = [&](const std::string& q) {
        if (last) return std::string();
        std::string c = "  var o" + q + " = 0u;\n";
        for (int r = 0; r < R; ++r) c += "  var y" + q + "_" + I(r) + " = vec2<f32>(0.0);\n";
        return c;
      };
      auto write = [&](const std::string& q, const std::string& ind) {
        std::string c;
        if (last) return c;
        for (int r = 0; r < R; ++r) c += ind + D + "[ix(o" + q + " + " + u(r * p) + ")] = y" + q + "_" + I(r) + ";\n";
        return c;
      };
      const std::string barrier = last ? "" : "  workgroupBarrier();\n";
      std::string c;
      if (!inplace) {
        c = "  for (var t = lid; t < " + u(G * Nr) + "; t = t + " + u(T) + ") {\n" + decl("") + butterfly("") +
            write("", "    ") + "  }\n" + barrier;
      } else {
        // Every butterfly of this invocation read (into registers) before any is written back; the
        // first stage reads x, so it writes at once.
        const int64_t B = (G * Nr + T - 1) / T;
        std::string rd, wr;
        for (int64_t b = 0; b < B; ++b) {
          const std::string q = I(b), guard = "if (lid + " + u(b * T) + " < " + u(G * Nr) + ") ";
          c += decl(q);
          rd += "  " + guard + "{\n    let t = lid + " + u(b * T) + ";\n" + butterfly(q) + "  }\n";
          wr += last ? "" : "  " + guard + "{\n" + write(q, "    ") + "  }\n";
        }
        c += rd + (first || last ? "" : "  workgroupBarrier();\n") + wr + barrier;
      }
      passes += "  {\n" + c + "  }\n";
      p *= R;
      src_a = !src_a;
    }
    // Row g's first element in x and y: b = g / inner, i = g % inner (b = c bn + b' with three levels).
    const std::string at =
        in.bn ? "  let q = row / P.inner;\n  let i = row % P.inner;\n  let b = q % P.bn;\n"
                "  let c = q / P.bn;\n  return vec2<u32>(P.x_off + c * P.x_cs + b * P.x_bs + i * P.x_is, "
                "P.y_off + c * P.y_cs + b * P.y_bs + i * P.y_is);"
              : "  let b = row / P.inner;\n  let i = row % P.inner;\n  return vec2<u32>(P.x_off + b * "
                "P.x_bs + i * P.x_is, P.y_off + b * P.y_bs + i * P.y_is);";
    return kernel::fill(kernel::library("fft"),
                        {{"G", I(G)},
                         {"ROW_AT", at},
                         {"T", I(T)},
                         {"SB", inplace ? "" : "var<workgroup> sb: array<vec2<f32>, " + I(cap_pts) + ">;"},
                         {"CAP", I(cap_pts)},
                         {"IX", sw ? "a + (a >> 4u)" : "a"},
                         {"PASSES", passes},
                         {"MID_FN", mid ? "fn twm(m: u32) -> vec2<f32> {\n  let w = bitcast<vec2<f32>>(ld3(m));\n  "
                                          "return vec2<f32>(w.x, P.sg * w.y);\n}\n"
                                          "fn twid2(m: u32) -> vec2<f32> {\n  let lo = m & 1023u;\n  if (lo == m) { "
                                          "return twm(m); }\n  return cmul(twm(m - lo), twm(lo));\n}"
                                        : ""}});
  });
}

// Two divisors n1 * n2 = n, both at most `cap` and with a plan, n1 as large as possible; 0 if none.
int64_t split(int64_t n, int64_t cap) {
  for (int64_t n1 = std::min(n, cap); n1 >= 2; --n1)
    if (n % n1 == 0 && n / n1 <= cap && !radices(n1).empty() && !radices(n / n1).empty()) return n1;
  return 0;
}

at::Tensor fft_rows(const at::Tensor& x, bool forward, float scale);

// Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_k = exp(-+ pi i k^2 / n), a circular
// convolution of power-of-two length M >= 2n - 1.
at::Tensor bluestein(const at::Tensor& x, bool forward, float scale) {
  const int64_t rows = x.size(0), n = x.size(1);
  int64_t M = 1;
  while (M < 2 * n - 1) M *= 2;
  const double sg = forward ? -1.0 : 1.0;
  std::vector<std::complex<double>> c(static_cast<size_t>(n)), cs(static_cast<size_t>(n)), b(static_cast<size_t>(M));
  for (int64_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle exact for large k.
    const int64_t q = int64_t((__int128(k) * k) % (2 * n));
    const double a = sg * kPi * double(q) / double(n);
    c[size_t(k)] = {std::cos(a), std::sin(a)};
    cs[size_t(k)] = c[size_t(k)] * (double(scale) / double(M));
    b[size_t(k)] = std::conj(c[size_t(k)]);
    if (k > 0) b[size_t(M - k)] = std::conj(c[size_t(k)]);
  }
  at::Tensor chirp, chirp_out, B;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    const int dev = int(x.device().index());
    auto k1 = std::make_tuple(dev, forward ? -1 : -2, n);
    auto it = g_tables.find(k1);
    if (it == g_tables.end()) it = g_tables.emplace(k1, upload(x, c)).first;
    chirp = it->second;
  }
  chirp_out = upload(x, cs);
  {
    std::unique_lock<std::mutex> lock(g_mutex);
    auto k2 = std::make_tuple(int(x.device().index()), forward ? -3 : -4, n);
    auto it = g_tables.find(k2);
    if (it != g_tables.end()) {
      B = it->second;
    } else {
      lock.unlock();
      at::Tensor bt = upload(x, b).view({1, M});
      B = fft_rows(bt, true, 1.0f).view({M});
      lock.lock();
      g_tables.emplace(k2, B);
    }
  }
  at::Tensor a = at::zeros({rows, M}, x.options());
  a.narrow(1, 0, n).copy_(x * chirp);
  at::Tensor A = fft_rows(a, true, 1.0f);
  A.mul_(B);
  at::Tensor r = fft_rows(A, false, 1.0f);
  return r.narrow(1, 0, n) * chirp_out;
}

// Three passes over rows x n, n = p1 p2 p3, m = p2 p3: x[j1 m + j2 p3 + j3] -> over j1, times
// W_n^(j k1) (j = j2 p3 + j3), into y[k1 m + j]; per (k1, j3) over j2, times W_m^(j3 k2), into
// t[k1 m + k2 p3 + j3]; per (k1, k2) over j3 into y[k1 + p1 k2 + p1 p2 k3] (rows of three levels).
// Every pass moves rows side by side.
at::Tensor three_pass(const at::Tensor& x, const at::Tensor& y, int64_t p1, int64_t p2, bool forward, float scale) {
  const int64_t rows = x.size(0), n = x.size(1), m = n / p1, p3 = m / p2;
  at::Tensor t = at::empty({rows, n}, x.options());
  wg_fft(x, {rows * m, m, x.storage_offset(), n, 1, m}, y, {rows * m, m, 0, n, 1, m}, p1, twiddles(x, p1), p1, forward,
         1.0f, &twiddles(x, n));
  wg_fft(y, {rows * p1 * p3, p3, 0, m, 1, p3}, t, {rows * p1 * p3, p3, 0, m, 1, p3}, p2, twiddles(x, p2), p2, forward,
         1.0f, &twiddles(x, m));
  wg_fft(t, {rows * p1 * p2, p1, 0, p3, m, 1, p2, n}, y, {rows * p1 * p2, p1, 0, p1, 1, p1 * p2, p2, n}, p3,
         twiddles(x, p3), p3, forward, scale, nullptr);
  return y;
}

// rows x n complex64, contiguous -> its transforms along dim 1 (a new contiguous tensor).
at::Tensor fft_rows(const at::Tensor& x, bool forward, float scale) {
  const int64_t rows = x.size(0), n = x.size(1);
  at::Tensor y = at::empty({rows, n}, x.options());
  if (rows == 0) return y;
  if (n == 1) return scale == 1.0f ? y.copy_(x) : y.copy_(x * scale);
  const int64_t cap = wg_max(x), lim = std::min({cap, side_len_cap(x, 8), fft_tune().len});
  if (!radices(n).empty()) {
    if (n <= cap) {
      const at::Tensor& tw = twiddles(x, n);
      wg_fft(x, {rows, 1, x.storage_offset(), n, 0, 1}, y, {rows, 1, 0, n, 0, 1}, n, tw, n, forward, scale, nullptr);
      return y;
    }
    // Two passes of which `side` rows fit workgroup memory (in place), up to the tuned length; else
    // two that fit without the rows side by side; else three side by side (lengths past cap^2).
    int64_t n1 = split(n, lim);
    if (!n1) n1 = split(n, cap);
    if (!n1) {
      for (int64_t a = std::min(n, lim); a >= 2; --a) {
        const int64_t b = n % a == 0 && !radices(a).empty() ? split(n / a, lim) : 0;
        if (b) return three_pass(x, y, a, b, forward, scale);
      }
    }
    if (n1) {
      // Four-step: x[j1 n2 + j2] -> per j2, a length-n1 transform over j1, times W_n^(j2 k1), into
      // t[k1 n2 + j2]; then per k1, a length-n2 transform over j2 into y[k1 + n1 k2].
      const int64_t n2 = n / n1;
      const at::Tensor& tw = twiddles(x, n);
      at::Tensor t = at::empty({rows, n}, x.options());
      // Each pass's butterflies read the table of its own length (neighbouring entries for
      // neighbouring invocations, not entries n / n1 apart in the whole table).
      const at::Tensor &tw1 = twiddles(x, n1), &tw2 = twiddles(x, n2);
      wg_fft(x, {rows * n2, n2, x.storage_offset(), n, 1, n2}, t, {rows * n2, n2, 0, n, 1, n2}, n1, tw1, n1, forward,
             1.0f, &tw);
      wg_fft(t, {rows * n1, n1, 0, n, n2, 1}, y, {rows * n1, n1, 0, n, 1, n1}, n2, tw2, n2, forward, scale, nullptr);
      return y;
    }
  }
  // Bluestein's power-of-two length M < 4n must have a plan (two or three passes).
  const int64_t most = std::max(cap * cap, lim * lim * lim) / 4;
  TORCH_CHECK(n <= most, "webgpu: fft: a transform of length ", n, " is longer than this device supports (at most ",
              most, ")");
  return bluestein(x, forward, scale);
}

float norm_scale(int64_t normalization, int64_t n) {
  switch (normalization) {
    case 0: return 1.0f;
    case 1: return float(1.0 / std::sqrt(double(n)));
    default: return float(1.0 / double(n));
  }
}

// The transform of t (complex64) along one dim, times scale.
at::Tensor c2c_dim(const at::Tensor& t, int64_t d, bool forward, float scale) {
  const int64_t n = t.size(d);
  at::Tensor x = t.movedim(d, -1).contiguous();
  if (x.numel() == 0) return x.movedim(-1, d);
  at::Tensor y = fft_rows(x.view({x.numel() / n, n}), forward, scale);
  return y.view(x.sizes()).movedim(-1, d);
}

void check_input(const at::Tensor& self, const char* op, bool complex_in) {
  if (complex_in) {
    TORCH_CHECK(self.scalar_type() == at::kComplexFloat, op, ": expected a complex64 input, got ", self.scalar_type());
  } else {
    if (self.scalar_type() == at::kDouble) raise_no_float64_kernel(op);  // NotImplementedError, as elsewhere
    TORCH_CHECK(self.scalar_type() == at::kFloat, op, ": expected a float32 input, got ", self.scalar_type());
  }
}

// Transforms along `dim` in order (the last one carries the normalization).
at::Tensor c2c_dims(at::Tensor x, at::IntArrayRef dim, bool forward, float scale) {
  if (dim.empty()) return scale == 1.0f ? x.clone() : x * scale;
  for (size_t i = 0; i < dim.size(); ++i)
    x = c2c_dim(x, at::maybe_wrap_dim(dim[i], x.dim()), forward, i + 1 == dim.size() ? scale : 1.0f);
  return x;
}

int64_t signal_numel(const at::Tensor& t, at::IntArrayRef dim) {
  int64_t n = 1;
  for (int64_t d : dim) n *= t.size(at::maybe_wrap_dim(d, t.dim()));
  return n;
}

at::Tensor fft_c2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool forward) {
  check_input(self, "_fft_c2c", true);
  at::Tensor x = self.resolve_conj();
  return c2c_dims(x, dim, forward, norm_scale(normalization, signal_numel(self, dim))).contiguous();
}

at::Tensor fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided) {
  check_input(self, "_fft_r2c", false);
  at::Tensor x = self.to(at::kComplexFloat);
  at::Tensor y = c2c_dims(x, dim, true, norm_scale(normalization, signal_numel(self, dim)));
  if (onesided && !dim.empty()) {
    const int64_t last = at::maybe_wrap_dim(dim.back(), self.dim());
    y = y.narrow(last, 0, self.size(last) / 2 + 1);
  }
  return y.contiguous();
}

at::Tensor fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  check_input(self, "_fft_c2r", true);
  TORCH_CHECK(!dim.empty(), "_fft_c2r: expected at least one dim");
  const int64_t last = at::maybe_wrap_dim(dim.back(), self.dim());
  const int64_t n = last_dim_size, h = n / 2 + 1;
  TORCH_CHECK(n >= 1, "Invalid number of data points (", n, ") specified");
  int64_t numel = signal_numel(self, dim.slice(0, dim.size() - 1)) * n;
  at::Tensor x = c2c_dims(self.resolve_conj(), dim.slice(0, dim.size() - 1), false, 1.0f);
  // The Hermitian extension along the last dim: X[n - k] = conj(X[k]); imaginary parts of X[0]
  // (and X[n/2]) drop out when the real part is taken, as in a native c2r.
  TORCH_CHECK(x.size(last) >= h, "_fft_c2r: expected ", h, " elements along dim ", last, ", got ", x.size(last));
  at::Tensor head = x.narrow(last, 0, h);
  at::Tensor full = head;
  if (n - h > 0) full = at::cat({head, x.narrow(last, 1, n - h).flip({last}).conj_physical()}, last);
  at::Tensor y = c2c_dim(full, last, false, norm_scale(normalization, numel));
  return at::real(y).contiguous();
}

// out= variants: computed, then resized into out as CPU's do.
at::Tensor& write_out(const at::Tensor& r, at::Tensor& out) {
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}
at::Tensor& fft_c2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool forward,
                        at::Tensor& out) {
  return write_out(fft_c2c(self, dim, normalization, forward), out);
}
at::Tensor& fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided,
                        at::Tensor& out) {
  return write_out(fft_r2c(self, dim, normalization, onesided), out);
}
at::Tensor& fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, int64_t last_dim_size,
                        at::Tensor& out) {
  return write_out(fft_c2r(self, dim, normalization, last_dim_size), out);
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("_fft_c2c", fft_c2c);
  m.impl("_fft_r2c", fft_r2c);
  m.impl("_fft_c2r", fft_c2r);
  m.impl("_fft_c2c.out", fft_c2c_out);
  m.impl("_fft_r2c.out", fft_r2c_out);
  m.impl("_fft_c2r.out", fft_c2r_out);
}

}  // namespace webgpu::ops
