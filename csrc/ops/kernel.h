// Hand-written kernels for op files: binds tensors' storage blocks as arrays of u32 words, generates
// typed element accessors for each operand, passes parameters through the uniform slot (prm(i) in
// WGSL) and records one dispatch on the device's Stream. The elementwise engine and reductions have
// their own planners; everything else (indexing, scans, sorting, norms, matmul, ...) starts here.
//
//   Kernel k("cumsum:" + std::to_string(rank));   // key: must determine the WGSL together with the
//   int x = k.in(self, CT::F32);                  //   operands' dtypes (added by Kernel)
//   int y = k.out(result, CT::F32);
//   k.param(uint32_t(n)); k.param_f32(alpha);
//   k.launch(workgroups, [&] { return std::string(body_wgsl); });
//
// In the body, operand i has (e = element index into the tensor's storage, storage_offset included,
// w = word index):
//   ld<i>(e) -> T          the element converted to the operand's compute type T
//                          (f32, i32, vec2<u32> for CT::I64, raw u32 / vec2<u32> for CT::RAW)
//   st<i>(e, v: T)         outputs: convert and store; sub-word dtypes (bool, u8, i8, i16, f16, bf16)
//                          store through atomics, so neighbours written by other invocations never race
//   wd<i>(w) -> u32, wr<i>(w, v)   raw words (wr on outputs only)
//   cas<i>, aadd<i>        atomic read-modify-write on outputs added with out_atomic()
//   report_index_error(op, dim, idx, size)   after error_flag()
// plus everything in wgsl/common.wgsl (and wgsl/int64.wgsl when an operand is int64 or CT::I64).
// Operands sharing a storage block share one binding (a read-write binding may not alias another).
// The body declares the entry point, e.g.
//   @compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
//       @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
//     let i = linear_id(wid, nwg, lid, 256u); ... }
// Grids past 65535 workgroups are folded by the Stream; linear_id unfolds them.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ops/elementwise.h"

namespace webgpu::ops {

class Kernel {
 public:
  explicit Kernel(std::string key) : key_(std::move(key)) {}

  int in(const at::TensorBase& t, CT ct) { return add(t, ct, false); }
  int out(const at::TensorBase& t, CT ct) { return add(t, ct, true); }
  // An output whose binding is atomic<u32> whatever its dtype, for read-modify-write kernels:
  // adds cas<i>(w, old, new) -> bool (compare-exchange of word w) and aadd<i>(w, v) -> u32 (atomicAdd).
  int out_atomic(const at::TensorBase& t, CT ct) {
    const int i = add(t, ct, true);
    args_[i].atomic = true;
    return i;
  }

  // Binds an index-error slot of the device's Stream (runtime/stream.h): a bad index is raised to
  // whoever reads a result this dispatch poisoned, or at the recording thread's next readback or
  // synchronize(). In WGSL: report_index_error(op, dim, idx: vec2<u32> (int64 bits), size: u32)
  // records the first bad index; the host raises IndexError "<op>: index <idx> is out of bounds for
  // dimension <dim> with size <size>". Returns the op code to pass (as a parameter) for `op`.
  // (index_error false: RuntimeError, where CPU raises that for the op.)
  uint32_t error_flag(const std::string& op, bool index_error = true);

  void param(uint32_t v) { params_.push_back(v); }
  void param_i32(int32_t v) { params_.push_back(uint32_t(v)); }
  void param_f32(float v);
  // An int64 as two words (lo, hi).
  void param_i64(int64_t v);
  // A size, stride or offset that must fit 32 bits (kernels index in u32); raises otherwise.
  void param_index(int64_t v, const char* what);
  size_t num_params() const { return params_.size(); }

  // Records the dispatch. `body` is called only when the pipeline is not cached yet.
  void launch(uint64_t workgroups, const std::function<std::string()>& body);

 private:
  struct Arg {
    at::TensorBase t;
    CT ct;
    bool write;
    int binding = 0;
    bool atomic = false;
  };
  int add(const at::TensorBase& t, CT ct, bool write);
  std::string op_name() const;

  std::string key_;
  std::vector<Arg> args_;
  std::vector<uint32_t> params_;
  bool error_flag_ = false;
};

// WGSL type of a compute type (RAW: the raw word type of the dtype).
std::string wgsl_value_type(CT ct, at::ScalarType dtype);

}  // namespace webgpu::ops
