// scaled_dot_product_attention on ocl as one op of ours: PyTorch's overrideable fused entry
// (_scaled_dot_product_fused_attention_overrideable and its backward), which SDPA calls when the
// backend's _fused_sdp_choice_stub answers `overrideable`; other inputs take SDPA's math path.
//
// Why: the math path is a chain of composites (q and k scaled apart, matmul's reshapes, the mask
// added in a separate pass, softmax, dropout) whose autograd graph keeps the [B, H, L, S] weights
// alive until backward. Here the forward is baddbmm (the scale as alpha, the mask as its added
// self), one pass for softmax and dropout, and bmm on [B*H, L, E] views; the backward recomputes
// the scores from q and k (the same GEMM on the same inputs, so bit-identical) instead of keeping
// the weights, and one pass turns them and dP~ into the dropped weights and dS:
//   S = scale * Q K^T + bias (causal: col > row masked)   P = exp(S - lse)   P~ = dropout(P)   O = P~ V
//   dV = P~^T dO   dP~ = dO V^T   dS = P (dP~ mask / (1 - p) - D), D = rowsum(dP~ P~)
//   dQ = scale dS K        dK = scale dS^T Q              d(bias) = dS summed to the bias's shape
// A dropout mask is not kept either: forward returns the Philox (seed, offset) it drew at,
// and backward draws the same mask again (plain/kernels/plain_attention.cl, as native_dropout draws it).
// The two passes replaced amax, softmax, amax, dropout (forward) and softmax, dropout, dropout
// backward, softmax backward (backward): on the encoder's [96, 512, 512] scores 1.8 -> 1.0 ms a step.
//
// Each call (forward and backward apart) takes either that GEMM path or the flash kernels
// (flash_attention.h: the scores never in memory, the same lse and the same dropout mask);
// flash_attention_wanted decides, alike for a call's forward and backward, OCLTUNE_SDPA=flash|gemm
// forces one. A mask's gradient and return_debug_mask need the scores in full: the GEMM path (decision 0064),
// and forward and backward then take it together (the lse of a 16-bit call depends on the path).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/device_math.h"
#include "ocltune_torch/csrc/ops/flash_attention.h"
#include "ocltune_torch/csrc/ops/random_ops.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

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

// ---- the row-wise passes between the GEMMs (plain/kernels/plain_attention.cl) ----

double keep_scale(double dropout_p) { return dropout_p == 1.0 ? 0.0 : 1.0 / (1.0 - dropout_p); }

struct Dropout {
  double p = 0.0;
  PhiloxState state;  // where its mask is drawn, when p > 0
};

// Work items for `rows` rows: a work-group of 64 per row on a GPU, one item per row on a CPU
// (plain/kernels/plain_attention.cl, ROW_ITEMS).
std::int64_t row_items(const at::Tensor& s, std::int64_t rows) {
  return plain_cpu_device(s.device().index()) ? rows : rows * 64;
}

PlainLaunch attention_launch(const at::Tensor& scores, const char* kernel) {
  const int device = scores.device().index();
  return PlainLaunch(
      device, plain_program(device, PlainFiles{"plain_philox.cl", "plain_attention.cl"}, {{"A", scores.scalar_type()}}),
      kernel);
}

void dropout_args(PlainLaunch& launch, const Dropout& dropout) {
  launch.arg<cl_ulong>(dropout.state.seed).arg<cl_ulong>(dropout.state.base);
  launch.arg(static_cast<float>(1.0 - dropout.p)).arg(static_cast<float>(keep_scale(dropout.p)));
  launch.arg<cl_int>(dropout.p > 0.0 ? 1 : 0);
}

// S [B*H, L, S] (dense) becomes the dropped weights P~ in place; returns lse [B*H * L] in fp32.
// A row the mask excludes entirely (all -inf) gets weights 0 and lse -inf, as PyTorch's math path
// and CPU kernels give it (the softmax of such a row is NaN).
at::Tensor softmax_dropout_(at::Tensor& s, const Dropout& dropout) {
  if (!s.is_contiguous()) s = s.contiguous();  // baddbmm's results are; the kernel needs it
  const std::int64_t n = s.size(-1), rows = s.numel() / n;
  at::Tensor lse = at::empty({rows}, s.options().dtype(at::kFloat));
  PlainLaunch launch = attention_launch(s, "attention_softmax_dropout");
  launch.arg<cl_long>(rows).arg<cl_long>(n).tensor_at(s).tensor_at(lse);
  dropout_args(launch, dropout);
  launch.run(row_items(s, rows));
  return lse;
}

// S becomes P~ and dP~ becomes dS, both dense [B*H, L, S], from forward's lse [B*H * L] (fp32).
void softmax_dropout_backward_(at::Tensor& s, at::Tensor& dp, const at::Tensor& lse, const Dropout& dropout) {
  if (!s.is_contiguous()) s = s.contiguous();
  if (!dp.is_contiguous()) dp = dp.contiguous();
  TORCH_CHECK(lse.numel() == s.numel() / s.size(-1),
              "_scaled_dot_product_fused_attention_overrideable_backward: logsumexp has ", lse.numel(),
              " elements, one per query row ([B, H, L]) wanted: ", s.numel() / s.size(-1));
  const std::int64_t n = s.size(-1), rows = s.numel() / n;
  PlainLaunch launch = attention_launch(s, "attention_softmax_dropout_backward");
  launch.arg<cl_long>(rows).arg<cl_long>(n).tensor_at(s).tensor_at(dp).tensor_at(lse);
  dropout_args(launch, dropout);
  launch.run(row_items(s, rows));
}

// The mask as the bias added to S: a float mask as it is; a bool one (true = may attend) as 0 and
// -inf of q's dtype. SDPA converts bool masks before calling the fused entry; a direct caller may not.
at::Tensor additive_bias(const at::Tensor& mask, const at::Tensor& query) {
  if (!mask.defined() || mask.scalar_type() != at::kBool) return mask;
  return at::zeros(mask.sizes(), query.options())
      .masked_fill_(mask.logical_not(), -std::numeric_limits<double>::infinity());
}

at::Tensor cpu_int64(std::uint64_t v) {
  return at::scalar_tensor(static_cast<std::int64_t>(v), at::TensorOptions().dtype(at::kLong));
}

// ---- the layouts of the results ----

// The output in query's dimension order, as PyTorch's meta function allocates it
// (alloc_with_matching_layout in torch/_meta_registrations.py): compiled graphs view the output of
// this op as the meta function says it is laid out, so a result laid out otherwise breaks them
// (a [B, L, H, E].transpose(1, 2) query's output is viewed as [B * L, H * E] after a permute).
// Returns `result` itself where it is laid out so already.
at::Tensor in_query_order(const at::Tensor& query, const at::Tensor& result) {
  if (query.sizes() == result.sizes()) {
    const at::Tensor like = at::empty_like(query);
    if (like.strides() == result.strides()) return result;
    return like.copy_(result);
  }
  std::vector<std::int64_t> fill_order(static_cast<std::size_t>(query.dim()));
  std::iota(fill_order.begin(), fill_order.end(), 0);
  auto key = [&](std::int64_t d) {
    return query.stride(d) != 0 ? static_cast<double>(query.stride(d)) : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(fill_order.begin(), fill_order.end(),
                   [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
  std::vector<std::int64_t> strides(fill_order.size());
  std::int64_t stride = 1;
  for (std::int64_t d : fill_order) {
    strides[static_cast<std::size_t>(d)] = stride;
    stride *= result.size(d);
  }
  if (result.strides() == at::IntArrayRef(strides)) return result;
  return at::empty_strided(result.sizes(), strides, result.options()).copy_(result);
}

// A gradient laid out as empty_like(input), as the backward's meta function allocates it.
at::Tensor like_input(const at::Tensor& input, const at::Tensor& grad) {
  if (!grad.defined() || input.is_contiguous()) return grad;
  const at::Tensor like = at::empty_like(input);
  if (like.strides() == grad.strides()) return grad;
  return like.copy_(grad);
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
  // A mask that wants its gradient takes the GEMM backward, and so the GEMM forward: in 16 bits the
  // GEMM backward's recomputed scores are rounded, consistent only with the lse of rounded scores.
  const bool mask_grad = attn_bias && attn_bias->defined() && attn_bias->requires_grad();
  if (!return_debug_mask && !mask_grad && flash_attention_wanted(query, p.s, p.ev, is_causal)) {
    // The same draw as below: one reservation of B*H*L*S numbers, the mask indexed as the dense scores.
    FlashArgs args{p.scale, is_causal, dropout_p, {}};
    if (dropout_p > 0.0) args.dropout_state = reserve_dropout(query, p.batches() * p.l * p.s);
    auto [out, lse] = flash_attention_forward(query, key, value, attn_bias.value_or(at::Tensor()), args);
    return std::make_tuple(in_query_order(query, out), lse, at::Tensor(), at::Tensor(), c10::SymInt(p.l),
                           c10::SymInt(p.s), cpu_int64(args.dropout_state.seed), cpu_int64(4 * args.dropout_state.base),
                           at::empty({0}, query.options()));
  }
  const at::Tensor bias = additive_bias(attn_bias.value_or(at::Tensor()), query);
  const at::Tensor q3 = batches_of(query), k3 = batches_of(key), v3 = batches_of(value);
  at::Tensor s = scores(p, q3, k3, bias, is_causal);
  Dropout dropout{dropout_p, {}};
  if (dropout_p > 0.0) dropout.state = reserve_dropout(s, s.numel());
  const at::Tensor lse = softmax_dropout_(s, dropout).view({p.b, p.h, p.l});
  const at::Tensor out = at::bmm(s, v3).view({p.b, p.h, p.l, p.ev});
  const at::Tensor debug = return_debug_mask ? s.view({p.b, p.h, p.l, p.s}) : at::empty({0}, query.options());
  // No cumulative sequence lengths (dense batches, as CUDA's flash attention returns for them);
  // philox_offset is in the generator's numbers (4 per counter), as CUDA's is.
  return std::make_tuple(in_query_order(query, out), lse, at::Tensor(), at::Tensor(), c10::SymInt(p.l),
                         c10::SymInt(p.s), cpu_int64(dropout.state.seed), cpu_int64(4 * dropout.state.base), debug);
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
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& /*cum_seq_q*/, const at::Tensor& /*cum_seq_k*/,
    c10::SymInt /*max_q*/, c10::SymInt /*max_k*/, double dropout_p, bool is_causal, const at::Tensor& philox_seed,
    const at::Tensor& philox_offset, std::optional<double> scale) {
  check_ocl(grad_out, "_scaled_dot_product_fused_attention_overrideable_backward", "grad_out");
  const Problem p = problem_of(query, key, value, scale);
  Dropout dropout{dropout_p, {}};
  if (dropout_p > 0.0) {
    dropout.state = {static_cast<std::uint64_t>(philox_seed.item<std::int64_t>()),
                     static_cast<std::uint64_t>(philox_offset.item<std::int64_t>()) / 4};
  }
  // The forward chose by the same rule; a mask's gradient is dS summed, which only
  // the GEMM path has in full, and its forward took the GEMM path too.
  const bool mask_grad = grad_input_mask[3] && attn_bias.defined();
  if (!mask_grad && flash_attention_wanted(query, p.s, p.ev, is_causal)) {
    const FlashArgs args{p.scale, is_causal, dropout_p, dropout.state};
    auto [grad_q, grad_k, grad_v] =
        flash_attention_backward(grad_out, query, key, value, out, logsumexp, attn_bias, args,
                                 {grad_input_mask[0], grad_input_mask[1], grad_input_mask[2]});
    return {like_input(query, grad_q), like_input(key, grad_k), like_input(value, grad_v), at::Tensor()};
  }
  const at::Tensor bias = additive_bias(attn_bias, query);
  const at::Tensor q3 = batches_of(query), k3 = batches_of(key), v3 = batches_of(value);
  at::Tensor s = scores(p, q3, k3, bias, is_causal);
  const at::Tensor go3 = batches_of(grad_out);
  at::Tensor ds = at::bmm(go3, v3.transpose(1, 2));  // dP~, then dS in place
  softmax_dropout_backward_(s, ds, logsumexp.to(at::kFloat).contiguous(), dropout);
  at::Tensor grad_q, grad_k, grad_v, grad_bias;
  if (grad_input_mask[2]) grad_v = at::bmm(s.transpose(1, 2), go3).view({p.b, p.h, p.s, p.ev});
  if (grad_input_mask[0]) {
    grad_q = at::baddbmm(unused_self(ds), ds, k3, 0.0, p.scale).view({p.b, p.h, p.l, p.e});
  }
  if (grad_input_mask[1]) {
    grad_k = at::baddbmm(unused_self(ds), ds.transpose(1, 2), q3, 0.0, p.scale).view({p.b, p.h, p.s, p.e});
  }
  if (grad_input_mask[3] && attn_bias.defined()) grad_bias = bias_grad(p, ds, attn_bias.sizes());
  return {like_input(query, grad_q), like_input(key, grad_k), like_input(value, grad_v),
          like_input(attn_bias, grad_bias)};
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
