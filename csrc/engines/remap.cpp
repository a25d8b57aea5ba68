// The remap engine (engines/remap.h): flip, roll, padding and identity copies as one kernel that
// reads, per output element, one input element chosen per dimension; and the one- or word-per-
// invocation entry points of the shape kernels (wgsl/kernels/shape.wgsl).
#include "engines/remap.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernel/wgsl.h"

namespace webgpu::ops::shape {

namespace {

// The value's bits in dtype t, as a CPU cast makes them.
int64_t raw_bits(const c10::Scalar& v, at::ScalarType t) {
  at::Tensor h = at::scalar_tensor(v, at::TensorOptions().dtype(t));
  uint64_t u = 0;
  std::memcpy(&u, h.data_ptr(), h.element_size());
  return int64_t(u);
}

// The tensor over `t`'s storage that dims (outer to inner) address from t's storage offset plus
// `shift` elements: sizes and strides of the input side (in) or the output side.
at::Tensor view_of(const at::Tensor& t, const std::vector<RDim>& dims, int64_t shift, bool in) {
  std::vector<int64_t> sizes, strides;
  for (const RDim& d : dims) {
    sizes.push_back(in ? d.isize : d.osize);
    strides.push_back(in ? d.istride : d.ostride);
  }
  return t.as_strided(sizes, strides, t.storage_offset() + shift);
}

// A remap whose operands do not fit one binding (docs/design.md, "Operands past the binding limit"),
// as remaps of pieces of the output along one dim, each reading only the input range its piece
// maps to: halves of an identity, flip or constant-pad dim (pieces wholly in the padding are
// fills), or a roll cut at its wrap into two identities. False when no dim can be cut so.
bool remap_in_parts(const at::Tensor& out, const at::Tensor& in, const std::vector<RDim>& dims, const char* name,
                    const c10::Scalar& pad_value) {
  int best = -1;
  int64_t reach = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const RDim& d = dims[i];
    const bool cuttable = d.mode == Mode::Ident || d.mode == Mode::Flip || d.mode == Mode::Pad || d.mode == Mode::Roll;
    const int64_t r = (d.osize - 1) * std::max(d.ostride, d.istride);
    if (cuttable && d.osize > 1 && r > reach) best = int(i), reach = r;
  }
  if (best < 0) return false;
  const RDim d = dims[size_t(best)];
  // pieces: (first output coordinate, length, first input coordinate, the piece's dim)
  struct Piece {
    int64_t o0, len, i0;
    RDim dim;
  };
  std::vector<Piece> pieces;
  auto ident = [&](int64_t len) { return RDim{len, d.ostride, len, d.istride, Mode::Ident, 0}; };
  if (d.mode == Mode::Roll) {
    const int64_t n = d.osize, a = ((d.a % n) + n) % n;  // c = (o + a) % n
    if (a == 0) {
      pieces.push_back({0, n / 2, 0, ident(n / 2)});
      pieces.push_back({n / 2, n - n / 2, n / 2, ident(n - n / 2)});
    } else {
      pieces.push_back({0, n - a, a, ident(n - a)});
      pieces.push_back({n - a, a, 0, ident(a)});
    }
  } else {
    const int64_t h = d.osize / 2;
    for (const auto& [o0, len] : {std::pair<int64_t, int64_t>{0, h}, {h, d.osize - h}}) {
      if (d.mode == Mode::Ident) {
        pieces.push_back({o0, len, o0, ident(len)});
      } else if (d.mode == Mode::Flip) {  // c = n - 1 - o
        pieces.push_back({o0, len, d.isize - o0 - len, RDim{len, d.ostride, len, d.istride, Mode::Flip, 0}});
      } else {  // Pad: c = o - a inside [0, isize), else the pad value
        const int64_t lo = std::clamp<int64_t>(o0 - d.a, 0, d.isize),
                      hi = std::clamp<int64_t>(o0 + len - d.a, 0, d.isize);
        pieces.push_back({o0, len, lo, RDim{len, d.ostride, hi - lo, d.istride, Mode::Pad, d.a + lo - o0}});
      }
    }
  }
  for (const Piece& p : pieces) {
    std::vector<RDim> sub = dims;
    sub[size_t(best)] = p.dim;
    const at::Tensor o = view_of(out, sub, p.o0 * d.ostride, false);
    if (p.dim.isize == 0) {  // wholly in the padding
      o.fill_(pad_value);
      continue;
    }
    remap(o, view_of(in, sub, p.i0 * d.istride, true), sub, name, pad_value);
  }
  return true;
}

}  // namespace

std::string shape_wgsl(const std::string& section, const std::vector<std::pair<std::string, std::string>>& subst) {
  return kernel::fill(kernel::section("shape", section), subst);
}

bool word_mode(const at::Tensor& out) {
  const int64_t isz = out.element_size();
  if (isz >= 4 || !out.is_contiguous()) return false;
  const int64_t per = 4 / isz, off = out.storage_offset(), n = out.numel();
  return off % per == 0 && ((off + n) % per == 0 || int64_t(out.storage().nbytes()) <= (off + n) * isz);
}

void launch_elem(Kernel& k, const at::Tensor& out, int out_operand, bool word, const std::string& value_type,
                 const std::function<std::string()>& elem) {
  const int64_t per = word ? 4 / out.element_size() : 1;
  k.launch(grid((out.numel() + per - 1) / per), [&] {
    const std::string o = std::to_string(out_operand);
    std::string main = word ? shape_wgsl("main_word", {{"OUT", o},
                                                       {"PER", std::to_string(per)},
                                                       {"MASK", per == 4 ? "0xffu" : "0xffffu"},
                                                       {"WIDTH", per == 4 ? "8" : "16"}})
                            : shape_wgsl("main_element", {{"OUT", o}});
    return "alias VT = " + value_type + ";\n" + elem() + main;
  });
}

void remap(const at::Tensor& out, const at::Tensor& in, std::vector<RDim> dims, const char* name,
           const c10::Scalar& pad_value) {
  TORCH_CHECK(out.scalar_type() == in.scalar_type(), "webgpu: internal: ", name, ": dtypes differ");
  if (out.numel() == 0) return;
  if ((!kernel::fits_binding(out) || (in.numel() > 0 && !kernel::fits_binding(in))) &&
      remap_in_parts(out, in, dims, name, pad_value))
    return;
  // Drop size-1 dims that always read coordinate 0; merge adjacent identity (or both-flipped) dims
  // laid out contiguously in both tensors.
  std::vector<RDim> kept;
  for (const RDim& d : dims) {
    if (d.osize == 1 && d.isize == 1 && (d.mode != Mode::Pad || d.a == 0)) continue;
    if (!kept.empty()) {
      RDim& p = kept.back();
      const bool same = p.mode == d.mode && (d.mode == Mode::Ident || d.mode == Mode::Flip) && p.osize == p.isize &&
                        d.osize == d.isize;
      if (same && p.ostride == d.ostride * d.osize && p.istride == d.istride * d.isize) {
        p.osize *= d.osize;
        p.isize = p.osize;
        p.ostride = d.ostride;
        p.istride = d.istride;
        continue;
      }
    }
    kept.push_back(d);
  }
  if (kept.empty()) kept.push_back({1, 1, 1, 1, Mode::Ident, 0});
  TORCH_CHECK(kept.size() <= 11, "webgpu: ", name, ": at most 11 non-mergeable dims are supported, got ", kept.size());
  std::string modes;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) modes += char(it->mode);
  const bool word = word_mode(out);
  Kernel k(std::string("remap:") + modes + (word ? ":w" : ""));
  k.in(in, CT::RAW);
  k.out(out, CT::RAW);
  k.param_index("n", out.numel());
  k.param_index("out_off", out.storage_offset());
  k.param_index("in_off", in.storage_offset());
  k.param_i64("pad", raw_bits(pad_value, out.scalar_type()));
  // Per dim, innermost first: out size, out stride, in size, in stride, a (one array: 11 dims fit).
  std::vector<int64_t> per_dim;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    TORCH_CHECK(it->a >= INT32_MIN && it->a <= INT32_MAX, "webgpu: ", name, ": offset ", it->a, " too large");
    for (int64_t v : {it->osize, it->ostride, it->isize, it->istride})
      TORCH_CHECK(v >= 0 && v <= int64_t(UINT32_MAX), "webgpu: ", name, ": size or stride (", v,
                  ") does not fit the 32-bit indexing of webgpu kernels");
    per_dim.insert(per_dim.end(), {it->osize, it->ostride, it->isize, it->istride, int64_t(uint32_t(int32_t(it->a)))});
  }
  k.param_array("dims", per_dim);
  const bool wide = out.element_size() == 8;
  launch_elem(k, out, 1, word, wgsl_value_type(CT::RAW, out.scalar_type()), [&] {
    std::string dimcode;
    for (size_t d = 0; d < modes.size(); ++d) {
      auto D = [&](int j) { return "P_dims(" + std::to_string(5 * d + j) + "u)"; };
      dimcode += "  {\n    let n = " + D(0) + "; let o = r % n; r = r / n; oe = oe + o * " + D(1) +
                 ";\n    let m = " + D(2) + "; let a = bitcast<i32>(" + D(4) + ");\n";
      switch (Mode(modes[d])) {
        case Mode::Ident: dimcode += "    let c = o;\n"; break;
        case Mode::Flip: dimcode += "    let c = m - 1u - o;\n"; break;
        case Mode::Roll: dimcode += "    let c = (o + u32(a)) % m;\n"; break;
        case Mode::Pad:
          dimcode +=
              "    let ci = i32(o) - a; if (ci < 0 || ci >= i32(m)) { pad = true; }\n"
              "    let c = u32(clamp(ci, 0, i32(m) - 1));\n";
          break;
        case Mode::Reflect:
          dimcode +=
              "    var ci = i32(o) - a; if (ci < 0) { ci = -ci; }\n"
              "    if (ci >= i32(m)) { ci = 2 * (i32(m) - 1) - ci; }\n"
              "    let c = u32(clamp(ci, 0, i32(m) - 1));\n";
          break;
        case Mode::Replicate: dimcode += "    let c = u32(clamp(i32(o) - a, 0, i32(m) - 1));\n"; break;
      }
      dimcode += "    ie = ie + c * " + D(3) + ";\n  }\n";
    }
    return shape_wgsl("remap", {{"DIMS", dimcode}, {"PADVALUE", wide ? "P.pad" : "P.pad.x"}});
  });
}

}  // namespace webgpu::ops::shape
