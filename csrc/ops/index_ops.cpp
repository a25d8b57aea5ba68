// The indexing ops over the shared kernel (engines/index.h). Where ATen has a device-generic structured
// op or native function that ends in a DispatchStub (gather, scatter*, index.Tensor, _index_put_impl_,
// index_copy, index_fill_, take, put_), we register the stub and let ATen do the checks; the rest
// (index_select, index_add, index_reduce, embedding, its dense backward, masked_select,
// masked_scatter_) are written here with CPU's checks and messages.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorIterator.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/IndexKernel.h>
#include <ATen/native/ReductionType.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorAdvancedIndexing.h>
#include <ATen/ops/_index_put_impl_native.h>
#include <ATen/ops/gather_native.h>
#include <ATen/ops/index_add_meta.h>
#include <ATen/ops/index_copy_native.h>
#include <ATen/ops/index_fill_native.h>
#include <ATen/ops/index_native.h>
#include <ATen/ops/index_reduce_meta.h>
#include <ATen/ops/put_native.h>
#include <ATen/ops/scatter_add_native.h>
#include <ATen/ops/scatter_native.h>
#include <ATen/ops/scatter_reduce_native.h>
#include <ATen/ops/take_native.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>

#include "ops/common.h"
#include "engines/index.h"
#include "ops/pointwise.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::native::ReductionType;

IndexRed red_of(ReductionType r) {
  switch (r) {
    case ReductionType::SUM:
    case ReductionType::MEAN: return IndexRed::Add;
    case ReductionType::PROD: return IndexRed::Mul;
    case ReductionType::MAX: return IndexRed::Max;
    case ReductionType::MIN: return IndexRed::Min;
  }
  return IndexRed::Add;
}

int64_t size_or1(const at::TensorBase& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }
int64_t stride_or1(const at::TensorBase& t, int64_t d) { return t.dim() == 0 ? 1 : t.stride(d); }

// TensorIterator keeps its innermost dim first; plans keep it last (the fastest-varying one).
IndexOperand iter_operand(const at::TensorIteratorBase& iter, int arg) {
  IndexOperand o{iter.tensor_base(arg), {}};
  const int64_t es = iter.element_size(arg);
  for (int64_t s : iter.strides(arg)) o.strides.insert(o.strides.begin(), s / es);
  return o;
}

std::vector<int64_t> iter_shape(const at::TensorIteratorBase& iter) {
  auto s = iter.shape().vec();
  std::reverse(s.begin(), s.end());
  return s;
}

bool is_half(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }
// torch.use_deterministic_algorithms(True): scatters that may hit one element twice run in a fixed
// order (one invocation per destination slice walking the scatter dim, or one invocation in all),
// never through float atomics whose order varies run to run. The order is CPU's, so sums match it.
bool deterministic() { return at::globalContext().deterministicAlgorithms(); }
// Up to this many updates, half-precision accumulations follow CPU's order exactly (one invocation, or one
// per destination slice); past it, atomics (rounding order may differ within tolerance).
constexpr int64_t kSingleMax = 1 << 12;

// ---------------------------------------------------------------- gather / scatter (stubs)

void gather_kernel(const at::Tensor& result, const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  const int R = int(std::max<int64_t>(index.dim(), 1));
  IndexPlan p;
  p.op = "gather";
  p.runtime_error = true;
  p.shape = index.dim() ? index.sizes().vec() : std::vector<int64_t>{1};
  p.dst = {result, strides_of(result, R)};
  auto ss = strides_of(self, R);
  ss[dim] = 0;
  p.src = {self, ss};
  p.idx = {{index, strides_of(index, R)}};
  p.tgt = {{size_or1(self, dim), stride_or1(self, dim), dim}};
  run_index(p);
}

// A scatter along dim into dst over R iteration dims: dst's stride along dim is zeroed, the index
// picks the position there.
IndexPlan dim_scatter(const at::Tensor& dst, int64_t dim, int R, IndexRed red, const char* op, bool runtime_error) {
  IndexPlan p;
  p.op = op;
  p.runtime_error = runtime_error;
  p.mode = IndexMode::Scatter;
  p.red = red;
  auto ds = strides_of(dst, R);
  ds[dim] = 0;
  p.dst = {dst, ds};
  p.tgt = {{size_or1(dst, dim), stride_or1(dst, dim), dim}};
  return p;
}

// Runs a dim scatter of `updates` index values, serially along dim where CPU's order matters.
void run_dim_scatter(IndexPlan& p, int64_t dim, int64_t updates) {
  const at::ScalarType t = p.dst.t.scalar_type();
  if ((t == at::kLong && p.red != IndexRed::Add && p.red != IndexRed::Assign) ||
      (is_half(t) && p.red != IndexRed::Assign && updates <= kSingleMax) || deterministic())
    p.serial_dim = int(dim);  // CPU's order per destination slice
  run_index(p);
}

void scatter_common(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor* src,
                    const c10::Scalar* value, IndexRed red, const char* op) {
  const int R = int(std::max<int64_t>(index.dim(), 1));
  IndexPlan p = dim_scatter(self, dim, R, red, op, /*runtime_error=*/true);
  p.shape = index.dim() ? index.sizes().vec() : std::vector<int64_t>{1};
  if (src)
    p.src = {*src, strides_of(*src, R)};
  else
    p.value = *value;
  p.idx = {{index, strides_of(index, R)}};
  run_dim_scatter(p, dim, index.numel());
}

void scatter_kernel(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  scatter_common(self, dim, index, &src, nullptr, IndexRed::Assign, "scatter");
}
void scatter_fill_kernel(const at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& v) {
  scatter_common(self, dim, index, nullptr, &v, IndexRed::Assign, "scatter");
}
void scatter_add_kernel(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  scatter_common(self, dim, index, &src, nullptr, IndexRed::Add, "scatter_add");
}
void scatter_reduce_kernel(const at::Tensor& self, const int64_t dim, const at::Tensor& index, const at::Tensor& src,
                           const ReductionType& r) {
  scatter_common(self, dim, index, &src, nullptr, red_of(r), "scatter");
}
void scatter_scalar_reduce_kernel(const at::Tensor& self, const int64_t dim, const at::Tensor& index,
                                  const c10::Scalar& v, const ReductionType& r) {
  scatter_common(self, dim, index, nullptr, &v, red_of(r), "scatter");
}
void scatter_reduce_two_kernel(const at::Tensor& self, const int64_t dim, const at::Tensor& index,
                               const at::Tensor& src, const ReductionType& r) {
  scatter_common(self, dim, index, &src, nullptr, red_of(r), "scatter_reduce");
}

// ---------------------------------------------------------------- TensorIterator-driven stubs

void index_kernel(at::TensorIteratorBase& iter, at::IntArrayRef sizes, at::IntArrayRef strides) {
  IndexPlan p;
  p.op = "index";
  p.allow_neg = true;
  p.shape = iter_shape(iter);
  p.dst = iter_operand(iter, 0);
  p.src = iter_operand(iter, 1);
  const int64_t es = iter.element_size(1);
  for (size_t k = 0; k < sizes.size(); ++k) {
    p.idx.push_back(iter_operand(iter, int(2 + k)));
    p.tgt.push_back({sizes[k], strides[k] / es, int64_t(k)});
  }
  run_index(p);
}

// index_put_ and put_: a scatter (summing when accumulating) over iter's shape, negative indices wrapping.
IndexPlan put_plan(const char* op, at::TensorIterator& iter, bool accumulate) {
  IndexPlan p;
  p.op = op;
  p.mode = IndexMode::Scatter;
  p.red = accumulate ? IndexRed::Add : IndexRed::Assign;
  p.allow_neg = true;
  p.shape = iter_shape(iter);
  return p;
}

void index_put_kernel(at::TensorIterator& iter, at::IntArrayRef sizes, at::IntArrayRef strides, bool accumulate) {
  IndexPlan p = put_plan("index_put_", iter, accumulate);
  p.dst = iter_operand(iter, 0);
  p.src = iter_operand(iter, 1);
  p.single = (accumulate && is_half(iter.dtype(0)) && iter.numel() <= kSingleMax) || deterministic();
  const int64_t es = iter.element_size(0);
  for (size_t k = 0; k < sizes.size(); ++k) {
    p.idx.push_back(iter_operand(iter, int(2 + k)));
    p.tgt.push_back({sizes[k], strides[k] / es, int64_t(k)});
  }
  run_index(p);
}

// ATen sends accumulating (and deterministic) index_put_ on accelerators to index_put_with_sort_stub;
// atomics make the plain path exact for integers and order-only different for floats, so the stub
// rebuilds what _index_put_impl_ builds for index_put_stub (ATen's make_info is not exported).
void index_put_with_sort_kernel(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& orig,
                                const at::Tensor& value, bool accumulate, bool unsafe) {
  // Complex64 values are split into parts before ATen (index_put_impl_fn); other value dtypes get
  // CPU's error here.
  TORCH_CHECK(value.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination dtypes match, got ", self.scalar_type(),
              " for the destination and ", value.scalar_type(), " for the source.");
  TORCH_CHECK(!at::isComplexType(self.scalar_type()),
              "webgpu: internal: complex index_put_ with accumulate=True reached the sort stub");
  std::vector<at::Tensor> ind;
  for (size_t k = 0; k < orig.size(); ++k) {
    const std::optional<at::Tensor> o = orig.get(k);
    if (!o.has_value() || !o->defined()) {
      ind.emplace_back();
      continue;
    }
    const at::Tensor& t = *o;
    if (t.scalar_type() == at::kByte) {
      // ATen's expandTensors warns for every uint8 mask; this path replaces it.
      TORCH_WARN("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
    }
    if (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte) {
      const int64_t first = int64_t(ind.size());
      for (int64_t j = 0; j < t.dim(); ++j) {
        TORCH_CHECK_INDEX(first + j < self.dim() && t.size(j) == self.size(first + j), "The shape of the mask ",
                          t.sizes(), " at index ", j, " does not match the shape of the indexed tensor ", self.sizes(),
                          " at index ", first + j);
      }
      at::Tensor nz = at::nonzero(t.to(self.device()));
      for (int64_t j = 0; j < t.dim(); ++j) ind.push_back(nz.select(1, j));
    } else {
      TORCH_CHECK_INDEX(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt,
                        "tensors used as indices must be long, int, byte or bool tensors");
      ind.push_back(t.to(self.device()));
    }
  }
  TORCH_CHECK_INDEX(int64_t(ind.size()) <= self.dim(), "too many indices for tensor of dimension ", self.dim(),
                    " (got ", ind.size(), ")");
  {
    std::vector<at::Tensor> defined;
    for (auto& t : ind)
      if (t.defined()) defined.push_back(t);
    std::vector<at::Tensor> b;
    try {
      b = at::expand_outplace(defined);
    } catch (std::exception&) {
      TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together");
    }
    size_t q = 0;
    for (auto& t : ind)
      if (t.defined()) t = b[q++];
  }
  while (int64_t(ind.size()) < self.dim()) ind.emplace_back();
  // Non-adjacent index tensors: the indexed dims go to the front, as ATen does.
  at::Tensor src = self;
  {
    int state = 0;  // 0 before, 1 inside, 2 after the indexed run
    bool adjacent = true;
    for (auto& t : ind) {
      if (t.defined()) {
        if (state == 2) adjacent = false;
        state = 1;
      } else if (state == 1) {
        state = 2;
      }
    }
    if (!adjacent) {
      std::vector<int64_t> perm;
      std::vector<at::Tensor> ti;
      for (int64_t d = 0; d < self.dim(); ++d)
        if (ind[d].defined()) {
          perm.push_back(d);
          ti.push_back(ind[d]);
        }
      for (int64_t d = 0; d < self.dim(); ++d)
        if (!ind[d].defined()) {
          perm.push_back(d);
          ti.emplace_back();
        }
      src = self.permute(perm);
      ind = ti;
    }
  }
  int64_t before = 0, after = 0, nidx = 0;
  at::IntArrayRef rshape;
  std::vector<int64_t> isizes, istrides;
  for (int64_t d = 0; d < src.dim(); ++d) {
    if (!ind[d].defined()) {
      (nidx ? after : before)++;
    } else {
      ++nidx;
      rshape = ind[d].sizes();
      isizes.push_back(src.size(d));
      istrides.push_back(src.stride(d) * src.element_size());
    }
  }
  if (nidx == 0) {  // no index tensor: plain assignment or accumulation
    if (accumulate)
      src.add_(value);
    else
      src.copy_(value);
    return;
  }
  std::vector<int64_t> shape(src.sizes().begin(), src.sizes().begin() + before),
      st(src.strides().begin(), src.strides().begin() + before);
  for (int64_t s : rshape) {
    shape.push_back(s);
    st.push_back(0);
  }
  for (int64_t d = before + nidx; d < src.dim(); ++d) {
    shape.push_back(src.size(d));
    st.push_back(src.stride(d));
  }
  at::Tensor restrided = src.as_strided(shape, st);
  TORCH_CHECK_INDEX(at::is_expandable_to(value.sizes(), restrided.sizes()), "shape mismatch: value tensor of shape ",
                    value.sizes(), " cannot be broadcast to indexing result of shape ", restrided.sizes());
  TORCH_CHECK(value.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination dtypes match, got ", self.scalar_type(),
              " for the destination and ", value.scalar_type(), " for the source.");
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false).resize_outputs(false).check_all_same_dtype(false);
  config.add_output(restrided).add_const_input(value);
  std::vector<at::Tensor> views;
  for (auto& t : ind) {
    if (!t.defined()) continue;
    std::vector<int64_t> vs(before, 1);
    for (int64_t s : t.sizes()) vs.push_back(s);
    for (int64_t a = 0; a < after; ++a) vs.push_back(1);
    views.push_back(t.reshape(vs));
    config.add_const_input(views.back());
  }
  at::TensorIterator iter = config.build();
  index_put_kernel(iter, isizes, istrides, accumulate);
}

void index_copy_kernel(at::TensorIterator& iter, int64_t dim, int64_t self_dim_size, int64_t self_dim_stride) {
  IndexPlan p;
  p.op = "index_copy_";
  p.mode = IndexMode::Scatter;
  p.single = deterministic();  // duplicate indices: the last source wins, as on CPU
  p.shape = iter_shape(iter);
  p.dst = iter_operand(iter, 0);
  p.src = iter_operand(iter, 2);
  p.idx = {iter_operand(iter, 1)};
  p.tgt = {{self_dim_size, self_dim_stride, dim}};
  run_index(p);
}

void index_fill_kernel(at::TensorIterator& iter, int64_t dim, int64_t self_dim_size, int64_t self_dim_stride,
                       const c10::Scalar& source) {
  IndexPlan p;
  p.op = "index_fill_";
  p.mode = IndexMode::Scatter;
  p.allow_neg = true;
  p.shape = iter_shape(iter);
  p.dst = iter_operand(iter, 0);
  p.value = source;
  p.idx = {iter_operand(iter, 1)};
  p.tgt = {{self_dim_size, self_dim_stride, dim}};
  run_index(p);
}

void take_kernel(at::TensorIterator& iter, const at::TensorBase& input) {
  at::Tensor flat = at::Tensor(input).contiguous();
  IndexPlan p;
  p.op = "take";
  p.allow_neg = true;
  p.shape = iter_shape(iter);
  const int R = int(p.shape.size());
  p.dst = iter_operand(iter, 0);
  p.src = {flat, std::vector<int64_t>(R, 0)};
  p.idx = {iter_operand(iter, 1)};
  p.tgt = {{flat.numel(), 1, 0}};
  run_index(p);
}

void put_kernel(at::TensorIterator& iter, const at::TensorBase& self_base, const bool accumulate) {
  at::Tensor self(self_base);
  at::Tensor flat = self.is_contiguous() ? self : self.contiguous();
  IndexPlan p = put_plan("put_", iter, accumulate);
  const int R = int(p.shape.size());
  p.dst = {flat, std::vector<int64_t>(R, 0)};
  p.src = iter_operand(iter, 0);
  p.single = (accumulate && is_half(flat.scalar_type()) && iter.numel() <= kSingleMax) || deterministic();
  p.idx = {iter_operand(iter, 1)};
  p.tgt = {{flat.numel(), 1, 0}};
  run_index(p);
  if (!flat.is_same(self)) self.copy_(flat);
}

// ---------------------------------------------------------------- host-side checks of CPU indices

// Advanced-indexing index tensors that live on the CPU are checked here, at once, as CPU does.
void check_host_indices(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  int64_t d = 0;
  for (size_t k = 0; k < indices.size(); ++k) {
    const std::optional<at::Tensor> o = indices.get(k);
    if (!o.has_value() || !o->defined()) {
      ++d;
      continue;
    }
    const at::Tensor& t = *o;
    if (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte) {
      d += std::max<int64_t>(t.dim(), 1);
      continue;
    }
    if (d >= self.dim()) return;  // ATen reports too many indices
    if (t.device().is_cpu() && t.numel() > 0 && (t.scalar_type() == at::kLong || t.scalar_type() == at::kInt)) {
      const int64_t size = self.size(d);
      const at::Tensor l = t.to(at::kLong).reshape(-1);
      const at::Tensor bad = (l < -size).logical_or_(l >= size);
      if (bad.any().item<bool>()) {
        const int64_t v = l.index({bad.nonzero().select(1, 0)})[0].item<int64_t>();
        TORCH_CHECK_INDEX(false, "index ", v, " is out of bounds for dimension ", d, " with size ", size);
      }
    }
    ++d;
  }
}

at::Tensor index_fn(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  check_host_indices(self, indices);
  structured::Functional<at::native::structured_index_out> op;
  auto pre = op.meta(self, at::IOptTensorListRef(indices));
  op.impl(self, pre.sizes, pre.strides, op.out_);
  return std::move(op.out_);
}

at::Tensor& index_out_fn(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices, at::Tensor& out) {
  check_host_indices(self, indices);
  structured::Given<at::native::structured_index_out, false> op(out);
  auto pre = op.meta(self, at::IOptTensorListRef(indices));
  op.impl(self, pre.sizes, pre.strides, op.maybe_get_output(0));
  op.finish();
  return out;
}

at::Tensor& index_put_impl_fn(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                              const at::Tensor& values, bool accumulate, bool unsafe) {
  check_host_indices(self, indices);
  if (accumulate && self.scalar_type() == at::kComplexFloat && values.scalar_type() == at::kComplexFloat) {
    // complex64 sums are the float32 sums of the parts: the real parts, then the imaginary parts,
    // each through ATen's float32 path (atomics, or CPU's order where deterministic). Split here,
    // before ATen: torch 2.13 sends accumulation on this device to index_put_with_sort_stub, 2.11
    // to index_put_stub, whose index kernel does not take complex elements (found on the GPU
    // machine's torch 2.11). Other value dtypes go to ATen, which raises CPU's error.
    TORCH_CHECK(!self.is_conj() && !self.is_neg(),
                "webgpu: index_put_ with accumulate=True into a conjugate or negative view of a complex tensor; "
                "resolve it first (tensor.resolve_conj()).");
    const at::Tensor s2 = at::view_as_real(self);
    const at::Tensor v2 = at::view_as_real(values.resolve_conj().resolve_neg());
    for (int64_t k = 0; k < 2; ++k) {
      at::Tensor sk = s2.select(-1, k);
      at::native::_index_put_impl_(sk, indices, v2.select(-1, k), true, unsafe);
    }
    return self;
  }
  return at::native::_index_put_impl_(self, indices, values, accumulate, unsafe);
}

// ---------------------------------------------------------------- index_copy (structured, stub)

at::Tensor index_copy_fn(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  structured::Functional<at::native::structured_index_copy_out> op;
  auto pre = op.meta(self, dim, index, source);
  op.impl(self, pre.dim, index, source, op.out_);
  return std::move(op.out_);
}
at::Tensor& index_copy_out_fn(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                              at::Tensor& out) {
  structured::Given<at::native::structured_index_copy_out, false> op(out);
  auto pre = op.meta(self, dim, index, source);
  op.impl(self, pre.dim, index, source, op.maybe_get_output(0));
  op.finish();
  return out;
}
at::Tensor& index_copy_inplace_fn(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  structured::Given<at::native::structured_index_copy_out, true> op(self);
  auto pre = op.meta(self, dim, index, source);
  op.impl(self, pre.dim, index, source, op.maybe_get_output(0));
  op.finish();
  return self;
}

// ---------------------------------------------------------------- index_select / embedding

void check_index_dtype(const at::Tensor& index, const char* op) {
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op,
              "(): Expected dtype int32 or int64 for index");
}

void index_select_into(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& out,
                       const char* op) {
  const int R = int(std::max<int64_t>(self.dim(), 1));
  IndexPlan p;
  p.op = op;
  p.shape.assign(R, 1);
  for (int d = 0; d < self.dim(); ++d) p.shape[d] = self.size(d);
  p.shape[dim] = index.numel();
  p.dst = {out, strides_of(out, R)};
  auto ss = strides_of(self, R);
  ss[dim] = 0;
  p.src = {self, ss};
  std::vector<int64_t> is(R, 0);
  is[dim] = index.dim() > 0 ? index.stride(0) : 0;
  p.idx = {{index, is}};
  p.tgt = {{size_or1(self, dim), stride_or1(self, dim), dim}};
  run_index(p);
}

at::Tensor& index_select_out_fn(const at::Tensor& self, int64_t dim, const at::Tensor& index, at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(!(self.dim() == 0 && index.numel() != 1), "index_select(): Index to scalar can have only 1 value, got ",
              index.numel(), " value(s)");
  check_index_dtype(index, "index_select");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "index_select(): self and result must have the same scalar type");
  TORCH_CHECK(self.device() == index.device() && self.device() == out.device(),
              "Expected all tensors to be on the same device, but got self on ", self.device(), ", index on ",
              index.device(), " and out on ", out.device(), " (index_select)");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  auto sizes = self.sizes().vec();
  if (self.dim() > 0) sizes[dim] = index.numel();
  at::native::resize_output(out, sizes);
  index_select_into(self, dim, index, out, "index_select");
  return out;
}

constexpr auto index_select_fn = via_out<&index_select_out_fn>;

at::Tensor embedding_fn(const at::Tensor& weight, const at::Tensor& indices, c10::SymInt padding_idx,
                        bool scale_grad_by_freq, bool sparse) {
  TORCH_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
              "got ",
              indices.scalar_type(), " instead (while checking arguments for embedding)");
  TORCH_CHECK(indices.device() == weight.device(), "Expected all tensors to be on the same device, but got indices on ",
              indices.device(), " and weight on ", weight.device(), " (embedding)");
  auto sizes = indices.sizes().vec();
  sizes.push_back(weight.size(1));
  at::Tensor idx = indices.reshape(-1);
  at::Tensor out = at::empty({idx.numel(), weight.size(1)}, weight.options());
  index_select_into(weight, 0, idx, out, "embedding");
  return out.view(sizes);
}

// ---------------------------------------------------------------- index_add / index_reduce

void index_scatter(const at::Tensor& out, int64_t dim, const at::Tensor& index, const at::Tensor& source, IndexRed red,
                   const char* op, bool runtime_error = false) {
  const int R = int(std::max<int64_t>(out.dim(), 1));
  IndexPlan p = dim_scatter(out, dim, R, red, op, runtime_error);
  p.shape.assign(R, 1);
  for (int d = 0; d < source.dim(); ++d) p.shape[d] = source.size(d);
  p.shape[dim] = index.numel();
  p.src = {source, strides_of(source, R)};
  std::vector<int64_t> is(R, 0);
  is[dim] = index.dim() > 0 ? index.stride(0) : 0;
  p.idx = {{index, is}};
  run_dim_scatter(p, dim, index.numel());
}

struct IndexAdd : at::meta::structured_index_add {
  void impl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
            const c10::Scalar& alpha, const at::Tensor& out) {
    if (!out.is_same(self)) out.copy_(self);
    if (index.numel() == 0) return;
    const bool one = alpha.isBoolean() ? alpha.toBool() : alpha.equal(1);
    at::Tensor src = one ? source : at::mul(source, alpha);
    if (out.scalar_type() == at::kComplexFloat) {
      // complex64: the float32 scatter-add of the real parts, then of the imaginary parts.
      TORCH_CHECK(!out.is_conj() && !out.is_neg(),
                  "webgpu: index_add_ into a conjugate or negative view of a complex tensor; resolve it first "
                  "(tensor.resolve_conj()).");
      const at::Tensor o2 = at::view_as_real(out), s2 = at::view_as_real(src.resolve_conj().resolve_neg());
      for (int64_t k = 0; k < 2; ++k)
        index_scatter(o2.select(-1, k), dim, index, s2.select(-1, k), IndexRed::Add, "index_add_", true);
      return;
    }
    index_scatter(out, dim, index, src, IndexRed::Add, "index_add_", /*runtime_error=*/true);  // as CPU
  }
};

at::Tensor index_add_fn(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                        const c10::Scalar& alpha) {
  structured::Functional<IndexAdd> op;
  auto pre = op.meta(self, dim, index, source, alpha);
  op.impl(self, pre.dim, index, source, alpha, op.out_);
  return std::move(op.out_);
}
at::Tensor& index_add_out_fn(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                             const c10::Scalar& alpha, at::Tensor& out) {
  structured::Given<IndexAdd, false> op(out);
  auto pre = op.meta(self, dim, index, source, alpha);
  op.impl(self, pre.dim, index, source, alpha, op.maybe_get_output(0));
  op.finish();
  return out;
}
at::Tensor& index_add_inplace_fn(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                                 const c10::Scalar& alpha) {
  structured::Given<IndexAdd, true> op(self);
  auto pre = op.meta(self, dim, index, source, alpha);
  op.impl(self, pre.dim, index, source, alpha, op.maybe_get_output(0));
  op.finish();
  return self;
}

c10::Scalar reduce_identity(ReductionType r, at::ScalarType t) {
  const bool fl = at::isFloatingType(t);
  switch (r) {
    case ReductionType::PROD: return c10::Scalar(1);
    case ReductionType::SUM:
    case ReductionType::MEAN: return c10::Scalar(0);
    case ReductionType::MAX:
      if (fl) return c10::Scalar(-std::numeric_limits<double>::infinity());
      switch (t) {
        case at::kLong: return c10::Scalar(std::numeric_limits<int64_t>::lowest());
        case at::kInt: return c10::Scalar(int64_t(std::numeric_limits<int32_t>::lowest()));
        case at::kShort: return c10::Scalar(int64_t(std::numeric_limits<int16_t>::lowest()));
        case at::kChar: return c10::Scalar(int64_t(std::numeric_limits<int8_t>::lowest()));
        case at::kBool: return c10::Scalar(false);
        default: return c10::Scalar(0);
      }
    case ReductionType::MIN:
      if (fl) return c10::Scalar(std::numeric_limits<double>::infinity());
      switch (t) {
        case at::kLong: return c10::Scalar(std::numeric_limits<int64_t>::max());
        case at::kInt: return c10::Scalar(int64_t(std::numeric_limits<int32_t>::max()));
        case at::kShort: return c10::Scalar(int64_t(std::numeric_limits<int16_t>::max()));
        case at::kChar: return c10::Scalar(int64_t(std::numeric_limits<int8_t>::max()));
        case at::kByte: return c10::Scalar(int64_t(255));
        case at::kBool: return c10::Scalar(true);
        default: return c10::Scalar(0);
      }
  }
  return c10::Scalar(0);
}

struct IndexReduce : at::meta::structured_index_reduce {
  void impl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
            c10::string_view reduce, bool include_self, const at::Tensor& out) {
    if (!out.is_same(self)) out.copy_(self);
    const ReductionType r = at::native::get_reduction_enum(reduce);
    if (index.numel() == 0) return;
    at::Tensor o = out;
    // index_fill_ takes int64 indices only; index_reduce_ takes int32 too (as on CPU).
    if (!include_self) o.index_fill_(dim, index.to(at::kLong), reduce_identity(r, out.scalar_type()));
    index_scatter(out, dim, index, source, red_of(r), "index_reduce_");
    if (r == ReductionType::MEAN) {
      at::Tensor count = include_self ? at::ones_like(out) : at::zeros_like(out);
      count.index_add_(dim, index, at::ones_like(source));
      count.masked_fill_(count == 0, 1);
      if (out.is_floating_point())
        o.div_(count);
      else
        o.div_(count, "floor");
    }
  }
};

at::Tensor index_reduce_fn(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                           c10::string_view reduce, bool include_self) {
  structured::Functional<IndexReduce> op;
  auto pre = op.meta(self, dim, index, source, reduce, include_self);
  op.impl(self, pre.dim, index, source, reduce, include_self, op.out_);
  return std::move(op.out_);
}
at::Tensor& index_reduce_out_fn(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                                c10::string_view reduce, bool include_self, at::Tensor& out) {
  structured::Given<IndexReduce, false> op(out);
  auto pre = op.meta(self, dim, index, source, reduce, include_self);
  op.impl(self, pre.dim, index, source, reduce, include_self, op.maybe_get_output(0));
  op.finish();
  return out;
}
at::Tensor& index_reduce_inplace_fn(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                                    c10::string_view reduce, bool include_self) {
  structured::Given<IndexReduce, true> op(self);
  auto pre = op.meta(self, dim, index, source, reduce, include_self);
  op.impl(self, pre.dim, index, source, reduce, include_self, op.maybe_get_output(0));
  op.finish();
  return self;
}

// ---------------------------------------------------------------- embedding backward

at::Tensor embedding_dense_backward_fn(const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights_s,
                                       c10::SymInt padding_idx_s, bool scale_grad_by_freq) {
  const int64_t num_weights = num_weights_s.expect_int(), padding_idx = padding_idx_s.expect_int();
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_dense_backward: expected indices of type Long or Int, got ", indices.scalar_type());
  const int64_t D = grad.size(-1);
  at::Tensor idx = indices.reshape(-1).to(at::kLong);
  at::Tensor g = grad.reshape({idx.numel(), D});
  // Rows equal to padding_idx go to one extra row that is dropped.
  idx = idx.masked_fill(idx == padding_idx, num_weights);
  if (scale_grad_by_freq && idx.numel() > 0) {
    at::Tensor counts = at::zeros({num_weights + 1}, idx.options());
    counts.index_add_(0, idx, at::ones_like(idx));
    g = g.div(counts.index_select(0, idx).unsqueeze(1).to(g.scalar_type()));
  }
  at::Tensor result = at::zeros({num_weights + 1, D}, grad.options());
  if (idx.numel() > 0) index_scatter(result, 0, idx, g, IndexRed::Add, "embedding_backward");
  return result.narrow(0, 0, num_weights);
}

// ---------------------------------------------------------------- masked_select / masked_scatter_

at::Tensor masked_select_fn(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  auto [m, s] = at::expand_outplace(mask, self);
  c10::List<std::optional<at::Tensor>> ind;
  ind.push_back(std::optional<at::Tensor>(m->reshape(-1)));  // 1-D: 0-dim masks too
  return at::index(s->reshape(-1), ind);
}

at::Tensor& masked_select_out_fn(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "masked_select(): self and result must have the same scalar type");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, mask);
  at::Tensor r = masked_select_fn(self, mask);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

at::Tensor& masked_scatter_inplace_fn(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter_: expected self and source to have same dtypes but got", self.scalar_type(), " and ",
              source.scalar_type());
  at::assert_no_internal_overlap(self);
  auto m = at::expand_inplace(self, mask, "masked_scatter_");
  at::Tensor pos = at::nonzero(*m);
  const int64_t count = pos.size(0);
  TORCH_CHECK(source.numel() >= count, "Number of elements of source < number of ones in mask");
  if (count == 0) return self;
  at::Tensor vals = source.reshape(-1).narrow(0, 0, count);
  if (self.dim() == 0) {
    self.copy_(vals.reshape({}));
    return self;
  }
  c10::List<std::optional<at::Tensor>> ind;
  for (int64_t d = 0; d < self.dim(); ++d) ind.push_back(std::optional<at::Tensor>(pos.select(1, d)));
  at::_index_put_impl_(self, ind, vals, false, true);
  return self;
}

}  // namespace

WEBGPU_STUB(gather_stub, gather_kernel)
WEBGPU_STUB(scatter_stub, scatter_kernel)
WEBGPU_STUB(scatter_fill_stub, scatter_fill_kernel)
WEBGPU_STUB(scatter_add_stub, scatter_add_kernel)
WEBGPU_STUB(scatter_reduce_stub, scatter_reduce_kernel)
WEBGPU_STUB(scatter_scalar_reduce_stub, scatter_scalar_reduce_kernel)
WEBGPU_STUB(scatter_reduce_two_stub, scatter_reduce_two_kernel)
WEBGPU_STUB(index_stub, index_kernel)
WEBGPU_STUB(index_put_stub, index_put_kernel)
WEBGPU_STUB(index_copy_stub, index_copy_kernel)
WEBGPU_STUB(index_put_with_sort_stub, index_put_with_sort_kernel)
WEBGPU_STUB(index_fill_stub, index_fill_kernel)
WEBGPU_STUB(take_stub, take_kernel)
WEBGPU_STUB(put_stub, put_kernel)

WEBGPU_LIBRARY_IMPL(m) {
  using T = const at::Tensor&;
  using SV = c10::string_view;
  structured::reg<at::native::structured_gather_out, T, int64_t, T, bool>(m, "gather", "gather.out", nullptr);
  structured::reg<at::native::structured_scatter_src_out, T, int64_t, T, T>(m, "scatter.src", "scatter.src_out");
  structured::reg<at::native::structured_scatter_value_out, T, int64_t, T, const c10::Scalar&>(m, "scatter.value",
                                                                                               "scatter.value_out");
  structured::reg<at::native::structured_scatter_reduce_out, T, int64_t, T, T, SV>(m, "scatter.reduce",
                                                                                   "scatter.reduce_out");
  structured::reg<at::native::structured_scatter_value_reduce_out, T, int64_t, T, const c10::Scalar&, SV>(
      m, "scatter.value_reduce", "scatter.value_reduce_out");
  structured::reg<at::native::structured_scatter_add, T, int64_t, T, T>(m, "scatter_add", "scatter_add.out");
  structured::reg<at::native::structured_scatter_reduce_two, T, int64_t, T, T, SV, bool>(m, "scatter_reduce.two",
                                                                                         "scatter_reduce.two_out");
  m.impl("index.Tensor", TORCH_FN(index_fn));
  m.impl("index.Tensor_out", TORCH_FN(index_out_fn));
  m.impl("_index_put_impl_", TORCH_FN(index_put_impl_fn));
  m.impl("index_copy", TORCH_FN(index_copy_fn));
  m.impl("index_copy.out", TORCH_FN(index_copy_out_fn));
  m.impl("index_copy_", TORCH_FN(index_copy_inplace_fn));
  m.impl("index_fill_.int_Scalar",
         TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, int64_t, const at::Tensor&, const c10::Scalar&)>(
             at::native::index_fill_)));
  m.impl("index_fill_.int_Tensor",
         TORCH_FN(static_cast<at::Tensor& (*)(at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&)>(
             at::native::index_fill_)));
  m.impl("index_select", TORCH_FN(index_select_fn));
  m.impl("index_select.out", TORCH_FN(index_select_out_fn));
  m.impl("embedding", TORCH_FN(embedding_fn));
  m.impl("embedding_dense_backward", TORCH_FN(embedding_dense_backward_fn));
  m.impl("index_add", TORCH_FN(index_add_fn));
  m.impl("index_add.out", TORCH_FN(index_add_out_fn));
  m.impl("index_add_", TORCH_FN(index_add_inplace_fn));
  m.impl("index_reduce", TORCH_FN(index_reduce_fn));
  m.impl("index_reduce.out", TORCH_FN(index_reduce_out_fn));
  m.impl("index_reduce_", TORCH_FN(index_reduce_inplace_fn));
  WEBGPU_IMPL_OUT(m, "take", "out", at::native::take);
  m.impl("put_", TORCH_FN(at::native::put_));
  m.impl("masked_select", TORCH_FN(masked_select_fn));
  m.impl("masked_select.out", TORCH_FN(masked_select_out_fn));
  m.impl("masked_scatter_", TORCH_FN(masked_scatter_inplace_fn));
}

}  // namespace webgpu::ops
