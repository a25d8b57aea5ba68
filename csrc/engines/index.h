// The index engine (engines/index.cpp), shared by the indexing ops (ops/index_ops.cpp, ...): an iteration shape, a destination, a source
// (or a scalar) and index operands, each with its strides over the shape (elements). An index value
// picks a position along its target (size, stride) in the indexed operand: the source for gathers,
// the destination for scatters. Bad indices are reported through the device error words (IndexError
// at the next synchronisation) and their element is skipped.
#pragma once
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace webgpu::ops {

enum class IndexMode { Gather, Scatter };
enum class IndexRed { Assign, Add, Mul, Max, Min };

struct IndexOperand {
  at::TensorBase t;
  std::vector<int64_t> strides;  // over the plan's shape, in elements
};

struct IndexTarget {
  int64_t size, stride;  // of the indexed dimension (stride in elements)
  int64_t dim;  // for the error message
};

struct IndexPlan {
  std::string op;  // names the op in the IndexError
  IndexMode mode = IndexMode::Gather;
  IndexRed red = IndexRed::Assign;
  bool allow_neg = false;  // indices in [-size, 0) wrap
  bool check = true;
  bool runtime_error = false;  // raise RuntimeError (CPU's type for gather/scatter) instead of IndexError
  std::vector<int64_t> shape;
  IndexOperand dst, src;  // src undefined: `value` is scattered
  c10::Scalar value;
  std::vector<IndexOperand> idx;
  std::vector<IndexTarget> tgt;
  // A dim looped inside one invocation (scatters whose destination slices are disjoint across the
  // other dims): exact CPU order, no atomics needed for int64 products and extrema.
  int serial_dim = -1;
  // One invocation walks every element in order (the last dim fastest): CPU's exact accumulation
  // order, for half-precision sums with duplicates where rounding order shows.
  bool single = false;
};

void run_index(IndexPlan& p);

// Strides of t over an iteration shape of `rank` dims (t's own dims first; 0-dim tensors get 0).
std::vector<int64_t> strides_of(const at::TensorBase& t, int rank);

}  // namespace webgpu::ops
