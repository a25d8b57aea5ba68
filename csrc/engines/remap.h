// The remap engine (engines/remap.cpp), shared by ops/shape_ops.cpp and ops/pad.cpp: the remap
// kernel (wgsl/kernels/shape.wgsl, section remap), one dispatch that writes every output element from one
// input element chosen per dimension, and the entry points of the shape kernels (launch_elem).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "kernel/kernel.h"

namespace webgpu::ops::shape {

enum class Mode : char {
  Ident = 'i',  // c = o (sizes equal)
  Flip = 'f',  // c = n - 1 - o
  Roll = 'r',  // c = (o + a) % n
  Pad = 'p',  // c = o - a; outside [0, n): the pad value
  Reflect = 'e',  // c = |o - a| mirrored at n - 1
  Replicate = 'c',  // c = clamp(o - a, 0, n - 1)
};

struct RDim {
  int64_t osize, ostride, isize, istride;
  Mode mode = Mode::Ident;
  int64_t a = 0;
};

// dims: outer to inner, one per output dim. out and in have the same dtype; `pad_value` is used by
// Mode::Pad only.
void remap(const at::Tensor& out, const at::Tensor& in, std::vector<RDim> dims, const char* name,
           const c10::Scalar& pad_value = 0);

// Launches a kernel whose WGSL defines `fn elem(i) -> EV` (EV { oe: u32, v: VT }, the storage index
// and raw or compute-type value of output element i; VT: an alias of value_type) over operand `out_operand`: one invocation per
// element, or per output word when `word` (word_mode(out), raw values only).
void launch_elem(Kernel& k, const at::Tensor& out, int out_operand, bool word, const std::string& value_type,
                 const std::function<std::string()>& elem);

// A section of wgsl/kernels/shape.wgsl with {{KEY}} placeholders replaced (kernel::section, kernel::fill).
std::string shape_wgsl(const std::string& section, const std::vector<std::pair<std::string, std::string>>& subst);

// Whether `out` (a sub-word dtype) can be written a whole word per invocation: contiguous, starting
// on a word and owning its last word.
bool word_mode(const at::Tensor& out);

}  // namespace webgpu::ops::shape
