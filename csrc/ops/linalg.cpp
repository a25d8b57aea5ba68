// Matrix products: mm, bmm, addmm, baddbmm, _addmm_activation, addmv (mv through its composite),
// dot, vdot, addbmm: the ATen ops over the GEMM engine (engines/gemm.h), which plans and launches
// the kernels. Everything else (matmul and its broadcasting, linear, einsum, tensordot, inner, outer,
// addr, chain_matmul, multi_dot, the gradients) is ATen's composites reaching these.
#include <ATen/ops/_addmm_activation_native.h>
#include <ATen/ops/addmm_native.h>
#include <ATen/ops/addmv_native.h>
#include <ATen/ops/baddbmm_native.h>
#include <ATen/ops/bmm_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "engines/gemm.h"
#include "ops/structured.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;
using engines::gemm;

bool is_zero(const c10::Scalar& s) { return s.toComplexDouble() == 0.0; }

Tensor as3(const Tensor& t) { return t.dim() == 3 ? t : t.unsqueeze(0); }

// ---------------------------------------------------------------------------------------------
// ATen entry points

struct MmOp : at::meta::structured_mm {
  void impl(const Tensor& self, const Tensor& mat2, const Tensor& out) {
    gemm(as3(out), as3(self), as3(mat2), Tensor(), 0, 1, "mm");
  }
};

struct BmmOp : at::meta::structured_bmm {
  void impl(const Tensor& self, const Tensor& mat2, const Tensor& out) { gemm(out, self, mat2, Tensor(), 0, 1, "bmm"); }
};

struct AddmmOp : at::meta::structured_addmm {
  void impl(const Tensor& self, const Tensor& m1, const Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha,
            const Tensor& out) {
    Tensor c = is_zero(beta) ? Tensor() : self.expand({m1.size(0), m2.size(1)});
    gemm(as3(out), as3(m1), as3(m2), c.defined() ? as3(c) : c, beta, alpha, "addmm");
  }
};

// addmm followed by gelu (exact, as CPU) or relu on the result.
struct AddmmActivationOp : at::meta::structured__addmm_activation {
  void impl(const Tensor& self, const Tensor& m1, const Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha,
            bool use_gelu, const Tensor& out) {
    Tensor c = is_zero(beta) ? Tensor() : self.expand({m1.size(0), m2.size(1)});
    gemm(as3(out), as3(m1), as3(m2), c.defined() ? as3(c) : c, beta, alpha, "_addmm_activation");
    if (use_gelu)
      at::gelu_(const_cast<Tensor&>(out));
    else
      at::relu_(const_cast<Tensor&>(out));
  }
};

struct BaddbmmOp : at::meta::structured_baddbmm {
  void impl(const Tensor& self, const Tensor& b1, const Tensor& b2, const c10::Scalar& beta, const c10::Scalar& alpha,
            const Tensor& out) {
    Tensor c = is_zero(beta) ? Tensor() : self.expand({b1.size(0), b1.size(1), b2.size(2)});
    gemm(out, b1, b2, c, beta, alpha, "baddbmm");
  }
};

struct AddmvOp : at::meta::structured_addmv {
  void impl(const Tensor& self, const Tensor& mat, const Tensor& vec, const c10::Scalar& beta, const c10::Scalar& alpha,
            const Tensor& out) {
    Tensor c = is_zero(beta) ? Tensor() : self.expand({mat.size(0)}).unsqueeze(1).unsqueeze(0);
    gemm(out.unsqueeze(1).unsqueeze(0), mat.unsqueeze(0), vec.unsqueeze(1).unsqueeze(0), c, beta, alpha, "addmv");
  }
};

void dot_check(const Tensor& self, const Tensor& other, const char* name) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
              "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), name,
              " : expected both vectors to have same dtype, but found ", self.scalar_type(), " and ",
              other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(), "] and src [",
              other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ", other.numel(),
              " elements respectively");
  TORCH_CHECK(self.device() == other.device(), "Expected all tensors to be on the same device. Found: ", self.device(),
              ", ", other.device());
}

Tensor dot_impl(const Tensor& self, const Tensor& other, const char* name) {
  dot_check(self, other, name);
  Tensor out = at::empty({}, self.options());
  gemm(out.view({1, 1, 1}), self.unsqueeze(0).unsqueeze(0), other.unsqueeze(1).unsqueeze(0), Tensor(), 0, 1, name);
  return out;
}

Tensor dot_fn(const Tensor& self, const Tensor& other) { return dot_impl(self, other, "dot"); }
// vdot conjugates its first operand (a lazy conj: the complex GEMM resolves it).
Tensor vdot_fn(const Tensor& self, const Tensor& other) {
  return dot_impl(self.is_complex() ? self.conj() : self, other, "vdot");
}

// addbmm mirrors CPU's structure (including its checks and resizes); the sum over batches is one
// product over k' = (batch, k) for f32 and integers, and one addmm_ per batch for half types, whose
// CPU result rounds after every batch.
void addbmm_impl(Tensor& result, const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                 const c10::Scalar& beta, const c10::Scalar& alpha) {
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch1.size(0) == batch2.size(0), "batch1 and batch2 must have same number of batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  TORCH_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (", batch1.size(1), "x",
              batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2), ")");
  const int64_t dim1 = batch1.size(1), dim2 = batch2.size(2);
  TORCH_CHECK(self.size(0) == dim1 && self.size(1) == dim2, "self tensor does not match matmul output shape");
  TORCH_CHECK(batch1.scalar_type() == batch2.scalar_type() && batch1.scalar_type() == result.scalar_type(),
              "addbmm: expected self, batch1 and batch2 to have the same dtype, but got ", result.scalar_type(), ", ",
              batch1.scalar_type(), " and ", batch2.scalar_type());
  result.resize_as_(self);
  if (!is_zero(beta) && !self.is_same(result)) result.copy_(self);
  const int64_t nb = batch1.size(0);
  if (nb == 0) {
    if (!is_zero(beta))
      result.mul_(beta);
    else
      result.zero_();
    return;
  }
  if (result.scalar_type() == at::kHalf || result.scalar_type() == at::kBFloat16) {
    c10::Scalar b = beta;
    for (int64_t i = 0; i < nb; ++i) {
      result.addmm_(batch1[i], batch2[i], b, alpha);
      b = 1;
    }
    return;
  }
  const int64_t k = batch1.size(2);
  Tensor a = batch1.transpose(0, 1).reshape({dim1, nb * k});
  Tensor b = batch2.reshape({nb * k, dim2});
  gemm(as3(result), as3(a), as3(b), is_zero(beta) ? Tensor() : as3(result), beta, alpha, "addbmm");
}

Tensor& addbmm_out(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar& beta,
                   const c10::Scalar& alpha, Tensor& out) {
  auto b_self = at::expand_size(self, {batch1.size(1), batch2.size(2)}, "addbmm_out");
  addbmm_impl(out, *b_self, batch1, batch2, beta, alpha);
  return out;
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar& beta,
              const c10::Scalar& alpha) {
  Tensor out = at::empty({0}, self.options());
  addbmm_out(self, batch1, batch2, beta, alpha, out);
  return out;
}

Tensor& addbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar& beta,
                const c10::Scalar& alpha) {
  return addbmm_out(self, batch1, batch2, beta, alpha, self);
}

// dot/vdot's out= overloads: the 0-d result r into out, whose dtype must be r's.
Tensor& scalar_result_out(const Tensor& r, Tensor& out, const char* op) {
  TORCH_CHECK(out.scalar_type() == r.scalar_type(), op, ": expected out tensor to have dtype ", r.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {});
  return out.copy_(r);
}
Tensor& dot_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return scalar_result_out(dot_fn(self, other), out, "dot");
}
Tensor& vdot_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return scalar_result_out(vdot_fn(self, other), out, "vdot");
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) {
  using T = const at::Tensor&;
  using S = const c10::Scalar&;
  namespace s = structured;
  s::reg<MmOp, T, T>(m, "mm", "mm.out");
  s::reg<BmmOp, T, T>(m, "bmm", "bmm.out");
  s::reg<AddmmOp, T, T, T, S, S>(m, "addmm", "addmm.out");
  s::reg<BaddbmmOp, T, T, T, S, S>(m, "baddbmm", "baddbmm.out");
  s::reg<AddmmActivationOp, T, T, T, S, S, bool>(m, "_addmm_activation", "_addmm_activation.out");
  s::reg<AddmvOp, T, T, T, S, S>(m, "addmv", "addmv.out");
  m.impl("dot", TORCH_FN(dot_fn));
  m.impl("vdot", TORCH_FN(vdot_fn));
  m.impl("dot.out", TORCH_FN(dot_out));
  m.impl("vdot.out", TORCH_FN(vdot_out));
  WEBGPU_IMPL_OUT(m, "addbmm", "out", addbmm);
  m.impl("addbmm_", TORCH_FN(addbmm_));
}

}  // namespace webgpu::ops
