// scaled_dot_product_attention on ocl as one op of ours: PyTorch's overrideable fused entry
// (_scaled_dot_product_fused_attention_overrideable and its backward), which SDPA calls when the
// backend's _fused_sdp_choice_stub answers `overrideable`; other inputs take SDPA's math path.
//
// Why: the math path is a chain of composites (q and k scaled apart, matmul's reshapes, the mask
// added in a separate pass, softmax, dropout) whose autograd graph keeps the [B, H, L, S] weights
// alive until backward. Here the forward is baddbmm (the scale as alpha, the mask as its added
// self), softmax and bmm on [B*H, L, E] views, and the backward recomputes the weights from q and k
// (the same ops on the same inputs, so bit-identical) instead of keeping them:
//   S = scale * Q K^T + bias (causal: col > row masked)   P = softmax(S)   O = dropout(P) V
//   dV = dropout(P)^T dO   dP = dropout_backward(dO V^T)   dS = softmax_backward(dP, P)
//   dQ = scale dS K        dK = scale dS^T Q              d(bias) = dS summed to the bias's shape
// A dropout mask is not kept either: forward returns the Philox (seed, offset) it drew at, and
// backward draws the same mask again (random_ops.h).
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device_math.h"
#include "ocltune_torch/csrc/random_ops.h"
#include "ocltune_torch/csrc/tensor_util.h"

namespace ocltune_torch {
namespace {

namespace dm = device_math;

// ---- which inputs the fused entry takes ----

// 4-D q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev] of one float dtype on one ocl device, with
// elements; no grouped-query heads (k and v with fewer heads than q), no batch broadcasting; a
// mask that is bool or of q's dtype, broadcastable to [B, H, L, S] and not combined with is_causal
// (PyTorch's math path raises for that, and so it should here). Everything else: the math path.
bool takes(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::optional<at::Tensor>& mask,
           double dropout_p) {
  for (const at::Tensor* t : {&q, &k, &v}) {
    if (!is_ocl(*t) || t->is_nested() || t->layout() != at::kStrided || t->dim() != 4 || t->numel() == 0 ||
        t->scalar_type() != q.scalar_type() || t->device() != q.device()) {
      return false;
    }
  }
  if (!kernel_dtype(q.scalar_type())) return false;
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != q.size(1) || v.size(1) != q.size(1) ||
      v.size(2) != k.size(2) || k.size(3) != q.size(3)) {
    return false;
  }
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) return false;
  if (mask && mask->defined()) {
    const at::Tensor& m = *mask;
    if (!is_ocl(m) || m.device() != q.device() || m.is_nested() || m.layout() != at::kStrided || m.dim() > 4) {
      return false;
    }
    if (m.scalar_type() != at::kBool && m.scalar_type() != q.scalar_type()) return false;
    if (!at::is_expandable_to(m.sizes(), {q.size(0), q.size(1), q.size(2), k.size(2)})) return false;
  }
  return true;
}

std::int64_t choose_backend(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                            const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                            std::optional<double> /*scale*/, bool /*enable_gqa: equal heads or the math path*/) {
  const bool has_mask = attn_mask && attn_mask->defined();
  const bool fused = takes(query, key, value, attn_mask, dropout_p) && !(is_causal && has_mask);
  return static_cast<std::int64_t>(fused ? at::SDPBackend::overrideable : at::SDPBackend::math);
}

// ---- the shared steps of forward and backward ----

struct Problem {
  std::int64_t b, h, l, s, e, ev;
  double scale;

  std::int64_t batches() const { return b * h; }
};

Problem problem_of(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::optional<double> scale) {
  Problem p{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3), 0.0};
  p.scale = scale.value_or(1.0 / std::sqrt(static_cast<double>(p.e)));  // PyTorch's default
  return p;
}

// [B, H, n, d] as [B*H, n, d] (a copy when the heads cannot merge into one batch stride, as for
// the [B, L, H, E].transpose(1, 2) views that attention modules make).
at::Tensor batches_of(const at::Tensor& t) { return t.reshape({t.size(0) * t.size(1), t.size(2), t.size(3)}); }

// The uninitialised self of a baddbmm with beta 0, which ignores it (NaN and Inf too): a product
// scaled in the GEMM itself, without a separate pass.
at::Tensor unused_self(const at::Tensor& like) { return at::empty({}, like.options()); }

// S = scale * Q K^T + bias, [B*H, L, S] in q's dtype; causal (top-left aligned, as PyTorch):
// column > row masked with -inf.
at::Tensor scores(const Problem& p, const at::Tensor& q3, const at::Tensor& k3, const at::Tensor& bias,
                  bool is_causal) {
  at::Tensor s;
  if (bias.defined()) {
    // A view, or a copy where batch and heads cannot share one stride (a [B, 1, 1, S] padding mask).
    const at::Tensor b3 = bias.expand({p.b, p.h, p.l, p.s}).reshape({p.batches(), p.l, p.s});
    s = at::baddbmm(b3, q3, k3.transpose(1, 2), 1.0, p.scale);
  } else {
    s = at::baddbmm(unused_self(q3), q3, k3.transpose(1, 2), 0.0, p.scale);
  }
  if (is_causal) {
    const at::TensorOptions index = q3.options().dtype(at::kLong);
    const at::Tensor above = at::arange(p.s, index).gt(at::arange(p.l, index).unsqueeze(1));  // [L, S]
    s.masked_fill_(above, -std::numeric_limits<double>::infinity());
  }
  return s;
}

// P = softmax(S) along S. A row the mask excludes entirely (all -inf) has weights 0, as PyTorch's
// math path and CPU kernels give it (the softmax of such a row is NaN); `masked_rows` [B*H, L, 1]
// marks them. Only a mask can exclude a row: causal rows always keep column 0.
at::Tensor weights(const at::Tensor& s, const at::Tensor& masked_rows) {
  at::Tensor w = at::_softmax(s, -1, false);
  if (masked_rows.defined()) w.masked_fill_(masked_rows, 0.0);
  return w;
}

// The mask as the bias added to S: a float mask as it is; a bool one (true = may attend) as 0 and
// -inf of q's dtype. SDPA converts bool masks before calling the fused entry; a direct caller may not.
at::Tensor additive_bias(const at::Tensor& mask, const at::Tensor& query) {
  if (!mask.defined() || mask.scalar_type() != at::kBool) return mask;
  return at::zeros(mask.sizes(), query.options())
      .masked_fill_(mask.logical_not(), -std::numeric_limits<double>::infinity());
}

double keep_scale(double dropout_p) { return dropout_p == 1.0 ? 0.0 : 1.0 / (1.0 - dropout_p); }

at::Tensor cpu_int64(std::uint64_t v) {
  return at::scalar_tensor(static_cast<std::int64_t>(v), at::TensorOptions().dtype(at::kLong));
}

// ---- forward ----

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
fused_attention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                const std::optional<at::Tensor>& attn_bias, double dropout_p, bool is_causal, bool return_debug_mask,
                std::optional<double> scale) {
  TORCH_CHECK(takes(query, key, value, attn_bias, dropout_p),
              "_scaled_dot_product_fused_attention_overrideable: ocl takes 4-D query, key and value of one float "
              "dtype with equal batch and heads, a bool or same-dtype mask broadcastable to [B, H, L, S] and a "
              "dropout probability in [0, 1]; got query ",
              query.sizes(), ", key ", key.sizes(), ", value ", value.sizes());
  TORCH_CHECK(!(is_causal && attn_bias && attn_bias->defined()),
              "_scaled_dot_product_fused_attention_overrideable: an attn_bias with is_causal=True");
  const Problem p = problem_of(query, key, value, scale);
  const at::Tensor bias = additive_bias(attn_bias.value_or(at::Tensor()), query);
  const at::Tensor q3 = batches_of(query), k3 = batches_of(key), v3 = batches_of(value);
  const at::Tensor s = scores(p, q3, k3, bias, is_causal);
  // The row max of S, for logsumexp = m + log(sum exp(S - m)) = m - log(max P) (max P is
  // exp(0) / sum): two read-only reductions instead of a pass that exponentiates S again.
  const at::Tensor m = dm::amax(s, {2}, true);
  const at::Tensor masked_rows = bias.defined() ? at::isneginf(m) : at::Tensor();
  const at::Tensor w = weights(s, masked_rows);
  at::Tensor lse = at::sub(m.to(at::kFloat), at::log(dm::amax(w, {2}, true).to(at::kFloat)));
  if (masked_rows.defined()) lse.masked_fill_(masked_rows, -std::numeric_limits<double>::infinity());
  lse = lse.view({p.b, p.h, p.l});

  at::Tensor dropped = w;
  PhiloxState state;
  if (dropout_p > 0.0) {
    state = reserve_dropout(w, w.numel());
    dropped = std::get<0>(dropout_at(w, dropout_p, state));
  }
  const at::Tensor out = at::bmm(dropped, v3).view({p.b, p.h, p.l, p.ev});
  const at::Tensor debug = return_debug_mask ? dropped.view({p.b, p.h, p.l, p.s}) : at::empty({0}, query.options());
  // No cumulative sequence lengths (dense batches, as CUDA's flash attention returns for them);
  // philox_offset is in the generator's numbers (4 per counter), as CUDA's is.
  return std::make_tuple(out, lse, at::Tensor(), at::Tensor(), c10::SymInt(p.l), c10::SymInt(p.s),
                         cpu_int64(state.seed), cpu_int64(4 * state.base), debug);
}

// ---- backward ----

// The gradient of a bias of `shape` broadcast to [B, H, L, S]: dS summed over the dims it repeats.
at::Tensor bias_grad(const Problem& p, const at::Tensor& ds, at::IntArrayRef shape) {
  const at::Tensor full = ds.view({p.b, p.h, p.l, p.s});
  const std::int64_t lead = 4 - static_cast<std::int64_t>(shape.size());
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 0; d < 4; ++d) {
    const std::int64_t size = d < lead ? 1 : shape[static_cast<std::size_t>(d - lead)];
    if (size == 1 && full.size(d) != 1) dims.push_back(d);
  }
  return (dims.empty() ? full : dm::sum(full, dims, true)).reshape(shape);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_attention_backward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& /*out*/,
    const at::Tensor& logsumexp, const at::Tensor& /*cum_seq_q*/, const at::Tensor& /*cum_seq_k*/,
    c10::SymInt /*max_q*/, c10::SymInt /*max_k*/, double dropout_p, bool is_causal, const at::Tensor& philox_seed,
    const at::Tensor& philox_offset, std::optional<double> scale) {
  check_ocl(grad_out, "_scaled_dot_product_fused_attention_overrideable_backward", "grad_out");
  const Problem p = problem_of(query, key, value, scale);
  const at::Tensor bias = additive_bias(attn_bias, query);
  const at::Tensor q3 = batches_of(query), k3 = batches_of(key), v3 = batches_of(value);
  const at::Tensor s = scores(p, q3, k3, bias, is_causal);
  // Forward's logsumexp is -inf exactly on the rows the mask excludes entirely (elsewhere it is at
  // least the row max): it marks them without another reduction over S.
  const at::Tensor masked_rows = bias.defined() ? at::isneginf(logsumexp).reshape({p.batches(), p.l, 1}) : at::Tensor();
  const at::Tensor w = weights(s, masked_rows);
  at::Tensor dropped = w, keep;
  if (dropout_p > 0.0) {
    const PhiloxState state{static_cast<std::uint64_t>(philox_seed.item<std::int64_t>()),
                            static_cast<std::uint64_t>(philox_offset.item<std::int64_t>()) / 4};
    std::tie(dropped, keep) = dropout_at(w, dropout_p, state);
  }
  const at::Tensor go3 = batches_of(grad_out);
  at::Tensor grad_q, grad_k, grad_v, grad_bias;
  if (grad_input_mask[2]) grad_v = at::bmm(dropped.transpose(1, 2), go3).view({p.b, p.h, p.s, p.ev});
  if (grad_input_mask[0] || grad_input_mask[1] || grad_input_mask[3]) {
    at::Tensor dw = at::bmm(go3, v3.transpose(1, 2));
    if (keep.defined()) dw = at::native_dropout_backward(dw, keep, keep_scale(dropout_p));
    const at::Tensor ds = at::_softmax_backward_data(dw, w, -1, w.scalar_type());
    if (grad_input_mask[0]) {
      grad_q = at::baddbmm(unused_self(ds), ds, k3, 0.0, p.scale).view({p.b, p.h, p.l, p.e});
    }
    if (grad_input_mask[1]) {
      grad_k = at::baddbmm(unused_self(ds), ds.transpose(1, 2), q3, 0.0, p.scale).view({p.b, p.h, p.s, p.e});
    }
    if (grad_input_mask[3] && attn_bias.defined()) grad_bias = bias_grad(p, ds, attn_bias.sizes());
  }
  return {grad_q, grad_k, grad_v, grad_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_scaled_dot_product_fused_attention_overrideable", fused_attention);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", fused_attention_backward);
}

}  // namespace ocltune_torch

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &ocltune_torch::choose_backend)
}  // namespace at::native
