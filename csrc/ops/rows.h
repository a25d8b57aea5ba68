// Row kernels: a workgroup per row of n contiguous elements (softmax and log_softmax with their
// backward in ops/softmax.cpp, layer and group norm in ops/norm.cpp). The plan picks the workgroup
// size, whether each invocation holds its share of the row in registers (`cache`: C = a power of two
// >= n / WG values per invocation and operand, loaded once, all loads in flight together), and the
// workgroup folds of wgsl/kernels/rows.wgsl (subgroup folds where the adapter has subgroups).
// Rows longer than 32 * WG stream through the loads again per pass.
// TORCH_WEBGPU_ROW_CACHE=0 and TORCH_WEBGPU_ROW_SUBGROUPS=0 turn either off (tests, measurements).
#pragma once
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernel/device.h"
#include "kernel/env.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"

namespace webgpu::ops {

struct RowPlan {
  int wg = 64;  // invocations per row
  int cache = 0;  // values per invocation held in registers (0: streaming)
  bool sg = false;  // subgroup folds
};

inline bool row_switch(const char* name) { return kernel::env_switch(name, 1) != 0; }

inline RowPlan row_plan(const at::Tensor& t, int64_t n) {
  static const bool cache_on = row_switch("TORCH_WEBGPU_ROW_CACHE");
  static const bool sg_on = row_switch("TORCH_WEBGPU_ROW_SUBGROUPS");
  RowPlan p;
  p.wg = n >= 1024 ? 256 : 64;
  const int64_t per = (n + p.wg - 1) / p.wg;
  if (cache_on && per <= 32) {
    p.cache = 1;
    while (p.cache < per) p.cache *= 2;
  }
  p.sg = sg_on && kernel::device_info(t).subgroups;
  return p;
}

// The plan's part of a pipeline key.
inline std::string row_key(const RowPlan& p) {
  return ":" + std::to_string(p.wg) + "c" + std::to_string(p.cache) + (p.sg ? "s" : "");
}

// The kernel up to its body: directives, WG and C, the folds, the given libraries, the entry
// (`row` is the workgroup's row; rows past P.rows return).
inline std::string row_kernel_head(const RowPlan& p, const std::string& libraries) {
  std::string s = p.sg ? "enable subgroups;\n" : "";
  s += "const WG: u32 = " + std::to_string(p.wg) + "u;\nconst C: u32 = " + std::to_string(std::max(p.cache, 1)) +
       "u;\n" + kernel::section("rows", p.sg ? "subgroup" : "shared") + libraries;
  s += "@compute @workgroup_size(" + std::to_string(p.wg) +
       ") fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,"
       " @builtin(local_invocation_index) lid: u32";
  s += p.sg ? ", @builtin(subgroup_size) sgs: u32, @builtin(subgroup_invocation_id) sgi: u32) {\n"
              "  sg_n = sgs;\n  sg_i = sgi;\n"
            : ") {\n";
  s += "  let row = linear_id(wid, nwg, 0u, 1u);\n  if (row >= P.rows) { return; }\n";
  return s;
}

// A loop over the invocation's positions j < n of the row: `for i in 0..C, j = lid + i * WG` when the
// row is cached (the body indexes the register arrays with i), else a stride-WG loop over j.
inline std::string row_loop(const RowPlan& p, const std::string& n, const std::string& body) {
  if (p.cache > 0)
    return "  for (var i = 0u; i < C; i = i + 1u) {\n    let j = lid + i * WG;\n    if (j < " + n + ") {\n" + body +
           "    }\n  }\n";
  return "  for (var j = lid; j < " + n + "; j = j + WG) {\n" + body + "  }\n";
}

// Operands past maxStorageBufferBindingSize: a row kernel's rows are independent, so its launches
// may take the rows in slices whose operands each fit one binding. An operand holds `per_row`
// elements per row (contiguous); rows_per_launch() is all of them when every operand's block fits
// (one comparison each), else as many as the tightest operand allows. Where not even one row fits
// it raises, naming `op` (nullptr: returns 1, for callers that split a row themselves).
struct RowOperand {
  const at::Tensor* t;
  int64_t per_row;
};

// The bytes from an operand's first to its last element that one binding (an aligned window) covers.
inline uint64_t binding_budget(const kernel::DeviceInfo& dev) {
  const uint64_t max_bind = std::min<uint64_t>(dev.max_binding, 0xfffffff0ull) / 16 * 16;
  const uint64_t slack = std::max<uint64_t>(dev.min_storage_offset_alignment, 16) + 16;  // window alignment
  return max_bind > slack ? max_bind - slack : 0;
}

// Whether an operand's block exceeds the binding limit (then its rows may need slicing).
inline bool past_binding_limit(std::initializer_list<RowOperand> ops) {
  for (const RowOperand& o : ops)
    if (o.t != nullptr && o.t->defined() && o.t->numel() > 0 &&
        kernel::block_bytes(*o.t) > kernel::device_info(*o.t).max_binding)
      return true;
  return false;
}

inline int64_t rows_per_launch(std::initializer_list<RowOperand> ops, int64_t rows, const char* op = nullptr) {
  if (!past_binding_limit(ops)) return rows;
  const kernel::DeviceInfo* dev = nullptr;
  int64_t row_bytes = 1;
  for (const RowOperand& o : ops) {
    if (o.t == nullptr || !o.t->defined()) continue;
    dev = &kernel::device_info(*o.t);
    row_bytes = std::max<int64_t>(row_bytes, o.per_row * o.t->element_size());
  }
  const int64_t per = std::min<int64_t>(rows, int64_t(binding_budget(*dev) / uint64_t(row_bytes)));
  TORCH_CHECK(per >= 1 || op == nullptr, "webgpu: ", op, ": a row of ", row_bytes,
              " bytes cannot be split, and spans more than this adapter's maxStorageBufferBindingSize limit (",
              dev->max_binding, " bytes)");
  return std::max<int64_t>(1, per);
}

// Rows [r0, r0 + n) of a contiguous operand of `per_row` elements per row (a view: its storage
// offset moves, so the kernels' *_off parameters follow).
inline at::Tensor row_slice(const at::Tensor& t, int64_t per_row, int64_t r0, int64_t n) {
  return t.view({-1}).narrow(0, r0 * per_row, n * per_row);
}

// Kernels over independent slices of a leading dim (pooling and upsampling planes, attention's
// batch, one_hot's indices): operands whose elements span more than one binding run in launches over
// slices [i0, i0 + n) of that dim, each operand bound as a window around its slice (no copies).
// `ts` hold the dim first (`n` long, or 1 / stride 0 where an operand is the same for every slice);
// slices_per_launch() is n when every operand's block fits, else the largest count whose every
// operand's byte span fits one binding window; it raises naming `op` when not even one index fits
// (or an operand that is whole in every slice does not fit); op nullptr: returns 0 then.
inline int64_t slices_per_launch(const std::vector<at::Tensor>& ts, int64_t n, const char* op) {
  bool big = false;
  for (const at::Tensor& t : ts)
    big = big || (t.defined() && t.numel() > 0 && kernel::block_bytes(t) > kernel::device_info(t).max_binding);
  if (!big || n <= 0) return std::max<int64_t>(n, 1);
  int64_t per = n;
  for (const at::Tensor& t : ts) {
    if (!t.defined() || t.numel() == 0 || kernel::block_bytes(t) <= kernel::device_info(t).max_binding) continue;
    const uint64_t budget = binding_budget(kernel::device_info(t));
    auto span = [&](int64_t k) {
      const at::Tensor v = t.size(0) == n && t.stride(0) != 0 ? t.narrow(0, 0, k) : t;
      const auto s = kernel::byte_span(v);
      return s.second - s.first;
    };
    const uint64_t one = span(1);
    if (op == nullptr && one > budget) return 0;
    TORCH_CHECK_WITH(OutOfMemoryError, one <= budget, "webgpu: ", op, ": ",
                     t.size(0) == n && t.stride(0) != 0 ? "one slice of an operand spans " : "an operand spans ", one,
                     " bytes, more than this adapter's maxStorageBufferBindingSize limit (",
                     kernel::device_info(t).max_binding, " bytes), and cannot be split further");
    int64_t lo = 1, hi = per;  // the largest k <= per whose span fits (spans grow with k)
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (span(mid) <= budget)
        lo = mid;
      else
        hi = mid - 1;
    }
    per = lo;
  }
  return per;
}

// Runs f(parts, i0, count) over the slices slices_per_launch() plans (once, with ts themselves, when
// everything fits): parts[j] is ts[j].narrow(0, i0, count), or ts[j] where it is whole in every slice.
template <class F>
void for_each_slice(const std::vector<at::Tensor>& ts, int64_t n, const char* op, F&& f) {
  const int64_t per = slices_per_launch(ts, n, op);
  if (per >= n) {
    f(ts, int64_t(0), n);
    return;
  }
  std::vector<at::Tensor> parts(ts.size());
  for (int64_t i0 = 0; i0 < n; i0 += per) {
    const int64_t c = std::min(per, n - i0);
    for (size_t j = 0; j < ts.size(); ++j)
      parts[j] = ts[j].defined() && ts[j].dim() > 0 && ts[j].size(0) == n && ts[j].stride(0) != 0
                     ? ts[j].narrow(0, i0, c)
                     : ts[j];
    f(parts, i0, c);
  }
}

}  // namespace webgpu::ops
