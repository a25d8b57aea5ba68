// scaled_dot_product_attention. ATen's SDPA asks the device's _fused_sdp_choice_stub which backend to
// use; for the common case (4-d q/k/v of one batch and head count, head dims up to 128, no dropout) we
// answer "overrideable", which runs _scaled_dot_product_fused_attention_overrideable (+ _backward)
// here: a flash-attention style kernel (wgsl/kernels/attention.wgsl) with online softmax, saving the
// log-sum-exp for the backward (dQ per query block, dK/dV per key block, no atomics). Everything else
// (dropout, grouped-query heads, other ranks, larger head dims) takes ATen's math path, which is
// composite (matmul, softmax, ...). _native_multi_head_attention (nn.MultiheadAttention's inference
// fast path) is composed here from native ops the way CPU's kernel computes it.
#include <numeric>
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/transformers/attention.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "kernel/env.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/pointwise.h"
#include "ops/rows.h"
#include "ops/register.h"

namespace webgpu::ops {

namespace {

constexpr int64_t kRows = 16;  // rows per workgroup of the backward kernels (ROWS in wgsl/kernels/attention.wgsl)
constexpr int64_t kMaxHeadDim = 128;

bool is_half_or_float(at::ScalarType t) { return t == at::kFloat || t == at::kHalf || t == at::kBFloat16; }

int64_t choose_backend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                       std::optional<double> scale, bool enable_gqa) {
  (void)is_causal;
  (void)scale;
  const auto math = int64_t(at::SDPBackend::math);
  if (q.is_nested() || k.is_nested() || v.is_nested()) return math;
  if (dropout_p > 0.0) return math;  // no device RNG in the fused kernel yet
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return math;
  if (!is_half_or_float(q.scalar_type()) || k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type())
    return math;
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || v.size(1) != k.size(1) || v.size(2) != k.size(2) ||
      k.size(3) != q.size(3))
    return math;
  // Grouped-query attention: each key/value head serves q_heads / kv_heads query heads.
  if (k.size(1) != q.size(1) && !(enable_gqa && k.size(1) > 0 && q.size(1) % k.size(1) == 0)) return math;
  if (q.size(3) < 1 || q.size(3) > kMaxHeadDim || v.size(3) < 1 || v.size(3) > kMaxHeadDim) return math;
  if (q.size(2) == 0 || k.size(2) == 0 || q.size(0) == 0 || q.size(1) == 0) return math;
  if (mask.has_value() && mask->defined()) {
    if (mask->dim() > 4 || mask->is_nested()) return math;
    if (mask->scalar_type() != at::kBool && mask->scalar_type() != q.scalar_type()) return math;
    const std::vector<int64_t> want{q.size(0), q.size(1), q.size(2), k.size(2)};
    auto r = at::infer_size(mask->sizes(), want);
    if (at::IntArrayRef(r) != at::IntArrayRef(want)) return math;
  }
  return int64_t(at::SDPBackend::overrideable);
}

struct Shape {
  int64_t B, H, L, S, E, EV, HK;  // H query heads, HK key/value heads
};

// Query rows per forward workgroup (of 128 invocations, 128 / rows lanes a row): 16 where that makes
// enough workgroups to fill a GPU, else 8 or 4 (a short sequence over few heads: GPT-2's 128 tokens x
// 12 heads give 96 workgroups of 16 rows; each lane's chain of dependent sums is then shorter too).
// TORCH_WEBGPU_SDPA_ROWS=16|8|4 fixes it (tuning; tests run every shape on small problems).
int64_t forward_rows(int64_t pairs, int64_t L) {
  const std::vector<long> fixed = kernel::env_numbers("TORCH_WEBGPU_SDPA_ROWS", 1);
  if (fixed.size() == 1 && (fixed[0] == 16 || fixed[0] == 8 || fixed[0] == 4)) return fixed[0];
  for (int64_t rows : {16, 8})
    if (pairs * grid(L, uint32_t(rows)) >= 256) return rows;
  return 4;
}

std::string prelude(int64_t E, int64_t EV, int64_t rows = kRows) {
  const int64_t EP = E + 1, EVP = EV + 1;
  return "const ROWS: u32 = " + std::to_string(rows) + "u;\nconst LANES: u32 = " + std::to_string(128 / rows) +
         "u;\nconst E: u32 = " + std::to_string(E) + "u;\nconst EV: u32 = " + std::to_string(EV) +
         "u;\nconst EP: u32 = " + std::to_string(EP) + "u;\nconst EVP: u32 = " + std::to_string(EVP) +
         "u;\nconst MP: u32 = " + std::to_string(std::max(EP, EVP)) +
         "u;\nfn ld_mask(e: u32) -> f32 { return ld3(e); }\n";
}

// The parameters every section of wgsl/kernels/attention.wgsl reads (its header).
void common_params(Kernel& k, const Shape& s, float scale, bool causal, const at::Tensor& mask, int64_t blocks,
                   const at::Tensor& q, const at::Tensor& kk, const at::Tensor& v) {
  k.param_index("B", s.B);
  k.param_index("H", s.H);
  k.param_index("L", s.L);
  k.param_index("S", s.S);
  k.param_index("q_per_kv", s.H / s.HK);
  k.param_f32("scale", scale);
  k.param("causal", causal ? 1u : 0u);
  k.param("has_mask", mask.defined() ? 1u : 0u);
  k.param_index("blocks", blocks);
  for (auto [name, t] : {std::pair<const char*, const at::Tensor*>{"q", &q}, {"k", &kk}, {"v", &v}, {"m", &mask}}) {
    // Without a mask, m_stride / m_off are read by code that never runs: zeros.
    const bool has = t->defined();
    k.param_array(std::string(name) + "_stride", has ? t->strides().vec() : std::vector<int64_t>(4, 0));
    k.param_index(std::string(name) + "_off", has ? t->storage_offset() : 0);
  }
}

float scale_of(std::optional<double> scale, int64_t E) {
  return scale.has_value() ? float(*scale) : float(1.0 / std::sqrt(double(E)));
}

// Operands past the binding limit (ops/rows.h): launches f(parts) over slices of the batch, or, where
// one batch entry is past the limit, per entry over slices of its key/value heads with their query
// heads. ts hold [B, H (query heads; q_head[j]) or HK, ...] operands; parts are 4-d again.
template <class F>
void attention_slices(const std::vector<at::Tensor>& ts, const std::vector<bool>& q_head, const Shape& s,
                      const char* op, F&& f) {
  if (slices_per_launch(ts, s.B, nullptr) > 0)
    return for_each_slice(ts, s.B, op, [&](const std::vector<at::Tensor>& t, int64_t, int64_t) { f(t); });
  for (int64_t b = 0; b < s.B; ++b) {
    std::vector<at::Tensor> hs;
    for (size_t j = 0; j < ts.size(); ++j) {
      if (!ts[j].defined()) {
        hs.push_back(ts[j]);
        continue;
      }
      const at::Tensor x = ts[j].select(0, ts[j].stride(0) == 0 ? 0 : b);
      hs.push_back(q_head[j] ? x.unflatten(0, {s.HK, s.H / s.HK}) : x);
    }
    for_each_slice(hs, s.HK, op, [&](const std::vector<at::Tensor>& t, int64_t, int64_t) {
      std::vector<at::Tensor> u;
      for (size_t j = 0; j < t.size(); ++j)
        u.push_back(!t[j].defined() ? t[j] : (q_head[j] ? t[j].flatten(0, 1) : t[j]).unsqueeze(0));
      f(u);
    });
  }
}

at::Tensor expanded_mask(const std::optional<at::Tensor>& bias, const Shape& s) {
  if (!bias.has_value() || !bias->defined()) return at::Tensor();
  return bias->expand({s.B, s.H, s.L, s.S});
}

// The op's meta function (what torch.compile plans buffers by) gives the forward's output the query's
// memory layout (alloc_with_matching_layout) and each gradient its input's (empty_like). The forward
// kernel writes its output through strides, straight into that layout (a [B, L, H, EV] block for the
// usual q of a fused qkv projection, so `out.transpose(1, 2).reshape(B, L, H * EV)` is a view: no
// copy in eager mode nor in compiled graphs); the backward kernels write contiguous gradients, copied
// into their inputs' layouts where those differ.
at::Tensor in_layout_of(const at::Tensor& result, const at::Tensor& like) {
  if (result.strides() == like.strides()) return result;
  at::Tensor r = at::empty_like(like);
  r.copy_(result);
  return r;
}

// An uninitialised [B, H, L, EV] tensor in the query's memory layout (the meta function's rule).
at::Tensor empty_in_query_layout(at::IntArrayRef sizes, const at::Tensor& q) {
  if (sizes == q.sizes()) return at::empty_like(q.transpose(1, 2)).transpose(1, 2);
  std::vector<int64_t> order(q.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return q.stride(a) > q.stride(b); });
  std::vector<int64_t> shape, inv(q.dim());
  for (size_t i = 0; i < order.size(); ++i) {
    shape.push_back(sizes[order[i]]);
    inv[order[i]] = int64_t(i);
  }
  return at::empty(shape, q.options()).permute(inv);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
sdpa_fused(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::optional<at::Tensor>& attn_bias,
           double dropout_p, bool is_causal, bool return_debug_mask, std::optional<double> scale) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      dropout_p == 0.0,
      "webgpu: _scaled_dot_product_fused_attention_overrideable: dropout "
      "is not supported by the fused kernel (scaled_dot_product_attention routes it to the math path)");
  TORCH_CHECK(!return_debug_mask,
              "webgpu: _scaled_dot_product_fused_attention_overrideable: return_debug_mask is not supported");
  TORCH_CHECK(
      choose_backend(q, k, v, attn_bias, dropout_p, is_causal, scale, true) == int64_t(at::SDPBackend::overrideable),
      "webgpu: _scaled_dot_product_fused_attention_overrideable: unsupported inputs (query ", q.sizes(), ", key ",
      k.sizes(), ", value ", v.sizes(), ", ", q.scalar_type(), "); use scaled_dot_product_attention");
  const Shape s{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3), k.size(1)};
  at::Tensor mask = expanded_mask(attn_bias, s);
  at::Tensor out = empty_in_query_layout({s.B, s.H, s.L, s.EV}, q);
  at::Tensor lse = at::empty({s.B, s.H, s.L}, q.options().dtype(at::kFloat));
  const int64_t rows = forward_rows(s.B * s.H, s.L);
  const int64_t blocks = grid(s.L, uint32_t(rows));
  // Operands past the binding limit: slices of the batch (ops/rows.h).
  attention_slices(
      {q, k, v, mask, out, lse}, {true, false, false, true, true, true}, s, "scaled_dot_product_attention",
      [&](const std::vector<at::Tensor>& t) {
        Shape sb = s;
        sb.B = t[0].size(0), sb.H = t[0].size(1), sb.HK = t[1].size(1);
        Kernel kr("sdpa:fwd:" + std::to_string(s.E) + ":" + std::to_string(s.EV) + ":r" + std::to_string(rows));
        kr.in(t[0], CT::F32);
        kr.in(t[1], CT::F32);
        kr.in(t[2], CT::F32);
        kr.in(t[3].defined() ? t[3] : t[0], CT::F32);
        kr.out(t[4], CT::F32);
        kr.out(t[5], CT::F32);
        common_params(kr, sb, scale_of(scale, s.E), is_causal, t[3], blocks, t[0], t[1], t[2]);
        kr.param_index("out_off", t[4].storage_offset());
        kr.param_array("out_stride", t[4].strides().vec());
        kr.param_index("lse_off", t[5].storage_offset());
        kr.launch(uint64_t(sb.B * sb.H * blocks),
                  [&] { return prelude(s.E, s.EV, rows) + kernel::section("attention", "fwd"); });
      });
  const auto lo = q.options().dtype(at::kLong);
  return {out,
          lse,
          at::Tensor(),
          at::Tensor(),
          c10::SymInt(s.L),
          c10::SymInt(s.S),
          at::empty({}, lo),
          at::empty({}, lo),
          at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> sdpa_fused_backward(
    const at::Tensor& grad_out_, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const at::Tensor& attn_bias, std::array<bool, 4> gmask, const at::Tensor& out, const at::Tensor& lse,
    const at::Tensor&, const at::Tensor&, c10::SymInt, c10::SymInt, double dropout_p, bool is_causal, const at::Tensor&,
    const at::Tensor&, std::optional<double> scale) {
  TORCH_CHECK_NOT_IMPLEMENTED(dropout_p == 0.0,
                              "webgpu: _scaled_dot_product_fused_attention_overrideable_backward: "
                              "dropout is not supported by the fused kernel");
  const Shape s{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3), k.size(1)};
  const std::optional<at::Tensor> bias_opt = attn_bias.defined() ? std::optional<at::Tensor>(attn_bias) : std::nullopt;
  at::Tensor mask = expanded_mask(bias_opt, s);
  at::Tensor go = grad_out_.contiguous();
  at::Tensor lsec = lse.contiguous();
  at::Tensor D = (go.to(at::kFloat) * out.to(at::kFloat)).sum(-1).contiguous();
  const float sc = scale_of(scale, s.E);
  // Both backward kernels read the same seven inputs (bindings 0-6: t[0..6] of the slice, below) and
  // the same leading parameters. Operands past the binding limit: slices of the batch (ops/rows.h).
  auto bind_inputs = [&](Kernel& kr, const std::vector<at::Tensor>& t) {
    for (int i = 0; i < 7; ++i) kr.in(i == 3 && !t[3].defined() ? t[0] : t[i], CT::F32);
  };
  auto bind_params = [&](Kernel& kr, int64_t blocks, const std::vector<at::Tensor>& t) {
    Shape sb = s;
    sb.B = t[0].size(0), sb.H = t[0].size(1), sb.HK = t[1].size(1);
    common_params(kr, sb, sc, is_causal, t[3], blocks, t[0], t[1], t[2]);
    kr.param_index("go_off", t[4].storage_offset());
    kr.param_index("lse_off", t[5].storage_offset());
    kr.param_index("d_off", t[6].storage_offset());
  };
  at::Tensor dq, dk, dv, dbias;
  const bool want_bias = gmask[3] && attn_bias.defined();
  if (gmask[0] || want_bias) {
    dq = at::empty({s.B, s.H, s.L, s.E}, q.options());
    at::Tensor ds = want_bias ? at::empty({s.B, s.H, s.L, s.S}, q.options().dtype(at::kFloat)) : at::Tensor();
    const int64_t blocks = grid(s.L, uint32_t(kRows));
    attention_slices({q, k, v, mask, go, lsec, D, dq, ds}, {true, false, false, true, true, true, true, true, true}, s,
                     "scaled_dot_product_attention_backward", [&](const std::vector<at::Tensor>& t) {
                       Kernel kr("sdpa:dq:" + std::to_string(s.E) + ":" + std::to_string(s.EV));
                       bind_inputs(kr, t);
                       kr.out(t[7], CT::F32);
                       kr.out(want_bias ? t[8] : t[7], CT::F32);
                       bind_params(kr, blocks, t);
                       kr.param("write_ds", want_bias ? 1u : 0u);
                       kr.param_index("dq_off", t[7].storage_offset());
                       kr.param_index("ds_off", want_bias ? t[8].storage_offset() : 0);
                       kr.launch(uint64_t(t[0].size(0) * t[0].size(1) * blocks),
                                 [&] { return prelude(s.E, s.EV) + kernel::section("attention", "bwd_dq"); });
                     });
    if (want_bias) dbias = at::sum_to(ds, attn_bias.sizes()).to(attn_bias.scalar_type());
    if (!gmask[0]) dq = at::Tensor();
  }
  if (gmask[1] || gmask[2]) {
    dk = at::empty({s.B, s.HK, s.S, s.E}, k.options());
    dv = at::empty({s.B, s.HK, s.S, s.EV}, v.options());
    const int64_t blocks = grid(s.S, uint32_t(kRows));
    attention_slices({q, k, v, mask, go, lsec, D, dk, dv}, {true, false, false, true, true, true, true, false, false},
                     s, "scaled_dot_product_attention_backward", [&](const std::vector<at::Tensor>& t) {
                       Kernel kr("sdpa:dkv:" + std::to_string(s.E) + ":" + std::to_string(s.EV));
                       bind_inputs(kr, t);
                       kr.out(t[7], CT::F32);
                       kr.out(t[8], CT::F32);
                       bind_params(kr, blocks, t);
                       kr.param_index("dk_off", t[7].storage_offset());
                       kr.param_index("dv_off", t[8].storage_offset());
                       kr.launch(uint64_t(t[1].size(0) * t[1].size(1) * blocks),
                                 [&] { return prelude(s.E, s.EV) + kernel::section("attention", "bwd_dkv"); });
                     });
    if (!gmask[1]) dk = at::Tensor();
    if (!gmask[2]) dv = at::Tensor();
  }
  if (dq.defined()) dq = in_layout_of(dq, q);
  if (dk.defined()) dk = in_layout_of(dk, k);
  if (dv.defined()) dv = in_layout_of(dv, v);
  return {dq, dk, dv, dbias};
}

// CPU's _masked_softmax over the last dim: True masks a position out (a fully masked row is NaN, as
// on CPU). mask_type 0 is an (L, L) attention mask, 1 a (B, L) key padding mask, 2 a mask of the
// scores' own shape (ATen's meaning of the codes).
at::Tensor masked_softmax_last(const at::Tensor& scores, at::Tensor mask, std::optional<int64_t> mask_type) {
  if (mask.scalar_type() != at::kBool) mask = mask.to(at::kBool);
  int64_t type = mask_type.value_or(2);
  if (mask.dim() != 2 || scores.dim() != 4) type = 2;
  if (type == 1) {
    TORCH_CHECK(scores.size(0) == mask.size(0) && scores.size(3) == mask.size(1),
                "For mask_type == 1 mask shape should be (B, L)");
    mask = mask.view({mask.size(0), 1, 1, mask.size(1)});
  } else if (type == 0) {
    TORCH_CHECK(scores.size(2) == mask.size(0) && scores.size(2) == mask.size(1),
                "For mask_type == 0 mask shape should be (L, L)");
    mask = mask.view({1, 1, mask.size(0), mask.size(1)});
  } else {
    TORCH_CHECK(scores.sizes() == mask.sizes(), "For mask_type == 2 mask shape should match input shape");
  }
  return at::_softmax(scores.masked_fill(mask, -std::numeric_limits<double>::infinity()), -1, false);
}

std::tuple<at::Tensor, at::Tensor> native_mha(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                              int64_t embed_dim, int64_t num_head, const at::Tensor& qkv_weight,
                                              const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
                                              const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask,
                                              bool need_weights, bool average_attn_weights,
                                              std::optional<int64_t> mask_type) {
  const int64_t D = embed_dim;
  TORCH_CHECK(!query.is_nested() && !key.is_nested() && !value.is_nested(),
              "webgpu: _native_multi_head_attention: nested tensors are not supported");
  TORCH_CHECK(query.dim() == 3, "expected 3-D `query`, got ", query.dim(), "-D tensor");
  TORCH_CHECK(query.size(2) == embed_dim, "passed-in embed_dim ", embed_dim, " didn't match last dim of query ",
              query.size(2));
  TORCH_CHECK(key.dim() == 3, "expected 3-D `key`, got ", key.dim(), "-D tensor");
  TORCH_CHECK(value.dim() == 3, "expected 3-D `value`, got ", value.dim(), "-D tensor");
  TORCH_CHECK(query.sizes() == key.sizes() && key.sizes() == value.sizes(),
              "expected `query`/`key`/`value` shapes to match");
  TORCH_CHECK(qkv_weight.dim() == 2, "expected 2-D `qkv_weight`, got ", qkv_weight.dim(), "-D tensor");
  TORCH_CHECK(D * 3 == qkv_weight.size(0), "expected `qkv_weight` first dim to be 3x embed_dim");
  TORCH_CHECK(D == qkv_weight.size(1), "expected `qkv_weight` second dim to be embed_Dim");
  TORCH_CHECK(qkv_bias.dim() == 1, "expected 1-D `qkv_bias`, got ", qkv_bias.dim(), "-D tensor");
  TORCH_CHECK(qkv_bias.size(0) == 3 * D, "expected `qkv_bias` first dim and first dim of query to be equal");
  TORCH_CHECK(num_head > 0 && D % num_head == 0, "`embed_dim` must divide evenly by `num_heads`");
  const int64_t B = query.size(0), T = query.size(1), dh = D / num_head;

  // Projections without bias, as CPU's qkv_projection: one GEMM for self-attention.
  at::Tensor q, k, v;
  if (query.is_same(key) && key.is_same(value)) {
    const auto c = at::matmul(query, qkv_weight.t()).chunk(3, -1);
    q = c[0], k = c[1], v = c[2];
  } else {
    const auto w = qkv_weight.chunk(3, 0);
    q = at::matmul(query, w[0].t()), k = at::matmul(key, w[1].t()), v = at::matmul(value, w[2].t());
  }
  if (q.numel() == 0) return {at::empty_like(query), at::Tensor()};
  // _transform_bias_rescale_qkv: q = (q + bq) * (1 / sqrt(dh)) with the factor in the input's dtype.
  const auto b = qkv_bias.chunk(3, 0);
  const double inv = double(c10::Scalar(1.0 / std::sqrt(double(dh))).to<float>());
  auto heads = [&](const at::Tensor& x) { return x.view({B, T, num_head, dh}).transpose(1, 2); };
  q = heads(at::mul(at::add(q, b[0]), inv));
  k = heads(at::add(k, b[1]));
  v = heads(at::add(v, b[2]));
  at::Tensor p = at::matmul(q, k.transpose(-2, -1));  // [B, H, T, T]
  p = mask.has_value() && mask->defined() ? masked_softmax_last(p, *mask, mask_type) : at::_softmax(p, -1, false);
  const at::Tensor ctx = at::matmul(p, v).transpose(1, 2).reshape({B, T, D});
  at::Tensor proj = at::linear(ctx, proj_weight, proj_bias);
  if (!need_weights) return {proj, at::Tensor()};
  if (average_attn_weights) p = p.sum(1).div_(num_head);
  return {proj, p};
}

}  // namespace
}  // namespace webgpu::ops

namespace at::native {
WEBGPU_STUB(_fused_sdp_choice_stub, &webgpu::ops::choose_backend)
}

WEBGPU_LIBRARY_IMPL(m) {
  m.impl("_fused_sdp_choice", TORCH_FN(webgpu::ops::choose_backend));
  m.impl("_scaled_dot_product_fused_attention_overrideable", TORCH_FN(webgpu::ops::sdpa_fused));
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", TORCH_FN(webgpu::ops::sdpa_fused_backward));
  m.impl("_native_multi_head_attention", TORCH_FN(webgpu::ops::native_mha));
}
