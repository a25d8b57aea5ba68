// Functional, in-place and out= kernels for ATen's structured ops, the way torchgen generates them
// for CPU/CUDA (RegisterCPU.cpp): ATen's own meta() does shapes, promotion and out= resizing, and
// impl() calls the op's DispatchStub, which reaches our PrivateUse1 kernels (ops/pointwise.cpp).
#pragma once
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
// torch 2.11's MetaBase output hooks take a trailing DimnameList; torch 2.13 dropped named tensors.
#if __has_include(<ATen/core/Dimname.h>)
#include <ATen/core/Dimname.h>
#define WEBGPU_NAMES_PARAM , at::DimnameList names
#define WEBGPU_NAMES_ARG , names
#else
#define WEBGPU_NAMES_PARAM
#define WEBGPU_NAMES_ARG
#endif
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ops/common.h"
#include "ops/register.h"

#include <type_traits>

namespace webgpu::ops::structured {

template <class Base>
constexpr bool kIsIter = std::is_base_of_v<at::TensorIteratorBase, Base>;

inline at::Tensor create_out(at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& o) {
  return strides.empty() ? at::empty(sizes, o) : at::empty_strided(sizes, strides, o);
}

inline void resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::IntArrayRef strides,
                       const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
              out.dtype(), " instead");
  TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ", options.device(), ", but got ",
              out.device(), " instead");
  if (at::native::resize_output(out, sizes)) {
    if (!strides.empty()) {
      out.as_strided_(sizes, strides);
    } else if (options.memory_format_opt().has_value()) {
      out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
    }
  }
}

inline void check_inplace(const at::Tensor& self, at::IntArrayRef sizes, const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == self.dtype(), "Bad in-place call: input tensor dtype ", self.dtype(),
              " and output tensor dtype ", options.dtype(), " should match");
  TORCH_CHECK(options.device() == self.device(), "Bad in-place call: input tensor device ", self.device(),
              " and output tensor device ", options.device(), " should match");
  TORCH_CHECK(sizes == self.sizes(), "Bad in-place call: input tensor size ", self.sizes(), " and output tensor size ",
              sizes, " should match");
}

template <class Base>
struct Functional final : Base {
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    set(i, sizes, strides, options WEBGPU_NAMES_ARG);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    set(i, sizes, strides, options WEBGPU_NAMES_ARG);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return out_; }
  void set(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions options WEBGPU_NAMES_PARAM) {
    out_ = create_out(sizes, strides, options);
    if constexpr (kIsIter<Base>) Base::set_output_raw_strided(i, sizes, strides, options WEBGPU_NAMES_ARG);
  }
  at::Tensor out_;
};

// The functional overload of a structured op with K outputs that is not a TensorIterator op
// (max.dim, aminmax, nll_loss_forward, ...): meta() sizes fresh tensors, outs[i]. With kMeta they are
// meta tensors (sizes, strides, memory format, dtype; no device memory): meta_output below.
template <class Base, int K, bool kMeta = false>
struct FunctionalOuts final : Base {
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    outs[i] = create_out(sizes, strides, kMeta ? options.device(at::kMeta) : options);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    outs[i] = create_out(sizes, strides, kMeta ? options.device(at::kMeta) : options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return outs[i]; }
  at::Tensor outs[K];
};

// Output i of structured class B's meta(a...), a meta tensor: ATen's meta function called directly,
// with no dispatch. The Meta key of several ops is a Python function (torch/_meta_registrations.py):
// going through the dispatcher cost max_pool2d ~30 us of CPU a call; this is CPU's own meta
// function, so the checks and their messages are CPU's.
template <class B, int K = 1, class... A>
at::Tensor meta_output(int i, const A&... a) {
  FunctionalOuts<B, K, true> m;
  m.meta(a...);
  return m.outs[i];
}

// out= and in-place: the given tensor is checked (in-place) or resized (out=); when a meta
// function insists on strides the tensor lacks, a proxy is written and copied back.
template <class Base, bool kInplace>
struct Given final : Base {
  explicit Given(const at::Tensor& out) : out_(out) {}
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    check(sizes, strides, options);
    if (out_.strides() != strides) proxy_ = at::empty_strided(sizes, strides, options);
    if constexpr (kIsIter<Base>) Base::set_output_raw_strided(i, sizes, strides, options WEBGPU_NAMES_ARG);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options WEBGPU_NAMES_PARAM) override {
    check(sizes, strides, options);
    if constexpr (kIsIter<Base>) Base::set_output_raw_strided(i, sizes, strides, options WEBGPU_NAMES_ARG);
  }
  const at::Tensor& maybe_get_output(int64_t) override { return proxy_.defined() ? proxy_ : out_; }
  void check(at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
    if constexpr (kInplace)
      check_inplace(out_, sizes, options);
    else
      resize_out(out_, sizes, strides, options);
  }
  void finish() {
    if (proxy_.defined()) out_.copy_(proxy_);
  }
  const at::Tensor& out_;
  at::Tensor proxy_;
};

// The op's name, for errors: set when `reg` registers B.
template <class B>
struct OpName {
  static inline const char* name = nullptr;
};

// Tensor arguments on another device (a CPU operand of mm, ...) are refused with the op's name, as
// CUDA's generated wrappers do. TensorIterator ops are left to TensorIterator, which accepts
// zero-dim CPU tensors as scalars.
template <class B, class... A>
void check_devices(const A&... a) {
  if constexpr (!kIsIter<B>) {
    auto one = [](const auto& x) {
      using X = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<X, at::Tensor>) {
        if (x.defined() && x.device().type() != c10::DeviceType::PrivateUse1) raise_wrong_device(x, OpName<B>::name);
      } else if constexpr (std::is_same_v<X, std::optional<at::Tensor>>) {
        if (x.has_value() && x->defined() && x->device().type() != c10::DeviceType::PrivateUse1)
          raise_wrong_device(*x, OpName<B>::name);
      }
    };
    (one(a), ...);
  }
}

template <class B, class... A>
at::Tensor functional(A... a) {
  check_devices<B>(a...);
  Functional<B> op;
  op.meta(a...);
  op.impl(a..., op.out_);
  return std::move(op.out_);
}

template <class B, class... A>
at::Tensor& inplace(at::Tensor& self, A... a) {
  check_devices<B>(self, a...);
  Given<B, true> op(self);
  op.meta(self, a...);
  op.impl(self, a..., op.maybe_get_output(0));
  op.finish();
  return self;
}

template <class B, class... A>
struct OutFn {
  static at::Tensor& call(A... a, at::Tensor& out) {
    check_devices<B>(a..., out);
    Given<B, false> op(out);
    op.meta(a...);
    op.impl(a..., op.maybe_get_output(0));
    op.finish();
    return out;
  }
};

// Registers the functional overload `fn`, `out`, and the in-place sibling: `inplace_name` when
// given, else `name_.overload` when that schema exists; for structured class B whose meta() takes
// (Self, Rest...).
template <class B, class Self, class... Rest>
void reg(GuardedLibrary& m, const char* fn, const char* out, const char* inplace_name = "") {
  if (!OpName<B>::name) OpName<B>::name = fn ? fn : out;
  if (fn) m.impl(fn, TORCH_FN((functional<B, Self, Rest...>)));
  if (out) m.impl(out, TORCH_FN((OutFn<B, Self, Rest...>::call)));
  if constexpr (std::is_same_v<Self, const at::Tensor&>) {
    if (!fn || !inplace_name) return;
    std::string in = inplace_name;
    if (in.empty()) {
      std::string name(fn), overload;
      const auto dot = name.find('.');
      if (dot != std::string::npos) {
        overload = name.substr(dot + 1);
        name = name.substr(0, dot);
      }
      if (!c10::Dispatcher::singleton().findSchema({"aten::" + name + "_", overload}).has_value()) return;
      in = name + "_" + (overload.empty() ? "" : "." + overload);
    }
    m.impl(in.c_str(), TORCH_FN((inplace<B, Rest...>)));
  }
}

}  // namespace webgpu::ops::structured
