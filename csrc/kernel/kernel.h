// The one kernel-launch layer (docs/design.md, "Kernels"). Every dispatch of the project goes
// through kernel::launch(): it plans nothing itself but assembles the WGSL (directives, the common
// library, the libraries a kernel asks for, the storage declarations, the named parameter struct,
// the kernel's own source), checks the parameters against the source, finds or builds the pipeline
// and records the dispatch on the device's Stream.
//
// Two ways in:
// - Kernel: hand-written kernels over tensors, with typed accessors per operand (below). Indexing,
//   scans, sorting, norms, pools, matmul, ... start here.
// - launch() with Storage rows: the engines that lay out their own bindings (the elementwise
//   engine's vec4 views, reductions' packed partials, GEMM tiles).
//
//   Kernel k("cumsum:" + std::to_string(rank));   // key: must determine the WGSL together with the
//   int x = k.in(self, CT::F32);                  //   operands' dtypes (added by Kernel)
//   int y = k.out(result, CT::F32);
//   k.param("n", uint32_t(n)); k.param_f32("alpha", alpha);
//   k.launch(grid(n), [&] { return std::string(body_wgsl); });   // the body reads P.n, P.alpha
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
// plus everything in wgsl/lib/common.wgsl (and wgsl/lib/int64.wgsl when an operand is int64 or CT::I64).
// Operands sharing a storage block share one binding (a read-write binding may not alias another);
// a block larger than the adapter's maxStorageBufferBindingSize is bound as a window that covers
// the elements its operands can reach, transparently to ld/st.
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

#include "kernel/dtype.h"
#include "kernel/params.h"

namespace webgpu::rt {
struct Block;
}

namespace webgpu::kernel {

// The workgroup size of one-element-per-invocation kernels, and their grid for n invocations.
constexpr uint32_t kWG = 256;
inline uint64_t grid(uint64_t n, uint32_t per_group = kWG) { return (n + per_group - 1) / per_group; }

// Names for storage rows numbered by their binding: prefix "b" -> "b1".., "buf" -> "buf0"..
const char* numbered_name(const char* prefix, size_t i);

// One storage binding of a launch: bytes [start, start + size) of the block behind `tensor`,
// declared in WGSL as `var<storage, read|read_write> <name>: array<<elem>>` (elem "u32",
// "vec4<u32>", "atomic<u32>", "vec4<f32>", ...). size 0: the whole block from start.
struct Storage {
  const at::TensorBase* tensor;
  const char* name;  // static strings ("" when the body declares the binding itself)
  const char* elem = "u32";
  bool write = false;
  uint64_t start = 0, size = 0;
};

// The window of t's block that a binding may cover so that bytes [lo, hi) of the block are
// reachable: the whole block when the adapter allows binding it, else an aligned window (raises,
// naming `op`, when even that exceeds maxStorageBufferBindingSize). unit: the window's start and
// size are multiples of it (16 for kernels that read vec4 words).
struct Window {
  uint64_t start = 0, size = 0;
};
Window window(const at::TensorBase& t, uint64_t lo, uint64_t hi, const std::string& op, uint64_t unit = 4);
// Whether window() over bytes [lo, hi) of t's block succeeds; block_fits: whether the whole block may
// be bound (then every window fits). Engines split work that would not fit (docs/design.md, "Operands
// past the binding limit").
bool window_fits(const at::TensorBase& t, uint64_t lo, uint64_t hi, uint64_t unit = 4);
bool block_fits(const at::TensorBase& t, uint64_t unit = 4);
// Whether all of t's elements fit one binding window.
bool fits_binding(const at::TensorBase& t, uint64_t unit = 4);
// Bytes [lo, hi) of t's block that its elements can reach (storage offset, sizes, strides).
std::pair<uint64_t, uint64_t> byte_span(const at::TensorBase& t);

struct Source {
  std::vector<std::string> libraries;  // wgsl/<name>.wgsl after common, in order (e.g. "int64")
  std::string directives;  // "enable f16;\n" ..., placed first
  // The dispatch's GPU work in workgroups of a pointwise kernel, for the Stream's early-submit rule
  // (runtime/stream.h); 0: its own workgroup count. Kernels whose few workgroups each loop over
  // much data (the mat-vec) say so, so that the GPU starts on them while the CPU records more.
  uint64_t weight = 0;
};

// Records one dispatch of `groups` workgroups. `key` must determine the WGSL given the storage rows
// and the parameter layout (the layout's hash is added). `body` is called only on a pipeline miss;
// directives it starts with ("enable ...;", "diagnostic(...)") are hoisted above the libraries.
// error_flag: binds the Stream's index-error slot after the storage (see Kernel::error_flag).
void launch(std::string key, const std::vector<Storage>& storage, const Params& params, uint64_t groups,
            const std::function<std::string()>& body, const Source& source = {}, bool error_flag = false);

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

  // Named parameters (kernel/params.h): WGSL reads P.<name>.
  void param(std::string_view name, uint32_t v) { params_.u32(name, v); }
  void param_i32(std::string_view name, int32_t v) { params_.i32(name, v); }
  void param_f32(std::string_view name, float v) { params_.f32(name, v); }
  // An int64 as vec2<u32> (low word, high word).
  void param_i64(std::string_view name, int64_t v) { params_.i64(name, v); }
  // A size, stride or offset that must fit 32 bits (kernels index in u32); raises otherwise.
  void param_index(std::string_view name, int64_t v);
  // An array of words: WGSL reads P_<name>(i) (u32; Params::Type::I32S / F32S for i32 / f32).
  void param_array(std::string_view name, const std::vector<uint32_t>& v, Params::Type t = Params::Type::U32S) {
    params_.array(name, v.data(), v.size(), t);
  }
  void param_array(std::string_view name, const std::vector<int64_t>& v);  // each must fit 32 bits

  // Libraries beyond common (and int64, added when an operand needs it), e.g. "pointwise".
  void library(std::string name) { source_.libraries.push_back(std::move(name)); }
  void directive(std::string d) { source_.directives += d; }

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
  Params params_;
  Source source_;
  bool error_flag_ = false;
};

}  // namespace webgpu::kernel

namespace webgpu::ops {
using kernel::CT;
using kernel::grid;
using kernel::Kernel;
using kernel::kWG;
}  // namespace webgpu::ops
