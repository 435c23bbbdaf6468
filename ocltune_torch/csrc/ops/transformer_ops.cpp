// The inference fast paths of nn.TransformerEncoderLayer and nn.MultiheadAttention on ocl.
//
// In eval mode without autograd, PyTorch calls _transformer_encoder_layer_fwd and
// _native_multi_head_attention for CPU, CUDA and PrivateUse1 alike, and ships kernels for the first
// two only. Here they are composed of the ops the backend runs on ocltune's families (linear through
// GEMM, scaled_dot_product_attention through its fused entry (attention_ops.cpp), layer_norm, gelu
// or relu), in the order of PyTorch's own slow path, so the fast path computes what training does;
// a post-norm layer's residual sums are read in their layer norms' kernels (residual_norm.h).
#include <array>
#include <cmath>
#include <optional>
#include <tuple>

#include <ATen/ATen.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/residual_norm.h"

namespace ocltune_torch {
namespace {

// A boolean mask (true = excluded, PyTorch's fast-path convention) of mask_type 0 (L x S), 1 (key
// padding, B x S) or 2 (B x H x L x S) as the B x H x L x S-broadcastable "may attend" mask SDPA takes.
at::Tensor attend_mask(const at::Tensor& mask, std::optional<std::int64_t> mask_type, std::int64_t batch) {
  at::Tensor m = mask.scalar_type() == at::kBool ? mask.logical_not() : mask;
  const std::int64_t type = mask_type.value_or(mask.dim() == 2 && mask.size(0) == batch ? 1 : 0);
  if (type == 1) return m.view({m.size(0), 1, 1, m.size(1)});
  return m;
}

// Multi-head self or cross attention with a packed in-projection: out [B, L, E] and, when asked for,
// the attention weights [B, H, L, S] (averaged over heads when `average`).
std::tuple<at::Tensor, at::Tensor> attention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                             std::int64_t embed_dim, std::int64_t heads, const at::Tensor& qkv_weight,
                                             const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
                                             const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask,
                                             std::optional<std::int64_t> mask_type, bool need_weights, bool average) {
  TORCH_CHECK(query.dim() == 3, "ocltune_torch: multi-head attention expects batch-first [B, L, E] inputs, got ",
              query.sizes());
  TORCH_CHECK(embed_dim % heads == 0, "embed_dim must be divisible by num_heads");
  const std::int64_t b = query.size(0), l = query.size(1), s = key.size(1), d = embed_dim / heads;
  const std::vector<at::Tensor> w = qkv_weight.chunk(3, 0);
  const std::vector<at::Tensor> bias = qkv_bias.chunk(3, 0);
  auto heads_of = [&](const at::Tensor& t, const at::Tensor& wi, const at::Tensor& bi, std::int64_t len) {
    return at::linear(t, wi, bi).view({b, len, heads, d}).transpose(1, 2);  // [B, H, len, D]
  };
  const at::Tensor q = heads_of(query, w[0], bias[0], l);
  const at::Tensor k = heads_of(key, w[1], bias[1], s);
  const at::Tensor v = heads_of(value, w[2], bias[2], s);
  std::optional<at::Tensor> attn_mask;
  if (mask && mask->defined()) attn_mask = attend_mask(*mask, mask_type, b);
  at::Tensor out, weights;
  if (!need_weights) {
    out = at::scaled_dot_product_attention(q, k, v, attn_mask);
  } else {
    at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(d)));
    if (attn_mask) {
      scores = attn_mask->scalar_type() == at::kBool ? scores.masked_fill(attn_mask->logical_not(), -INFINITY)
                                                     : scores + *attn_mask;
    }
    weights = at::softmax(scores, -1);
    out = at::matmul(weights, v);
    if (average) weights = weights.mean(1);
  }
  out = at::linear(out.transpose(1, 2).reshape({b, l, embed_dim}), proj_weight, proj_bias);
  return {out, weights};
}

at::Tensor encoder_layer(const at::Tensor& src, std::int64_t embed_dim, std::int64_t heads,
                         const at::Tensor& qkv_weight, const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
                         const at::Tensor& proj_bias, bool use_gelu, bool norm_first, double eps,
                         const at::Tensor& norm_weight_1, const at::Tensor& norm_bias_1,
                         const at::Tensor& norm_weight_2, const at::Tensor& norm_bias_2, const at::Tensor& ffn_weight_1,
                         const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2, const at::Tensor& ffn_bias_2,
                         const std::optional<at::Tensor>& mask, std::optional<std::int64_t> mask_type) {
  check_ocl(src, "_transformer_encoder_layer_fwd", "src");
  const std::array<std::int64_t, 1> normalized{embed_dim};  // an ArrayRef of a braced list would dangle
  const at::IntArrayRef e(normalized);
  auto self_attention = [&](const at::Tensor& x) {
    return std::get<0>(attention(x, x, x, embed_dim, heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask,
                                 mask_type, false, false));
  };
  auto feed_forward = [&](const at::Tensor& x) {
    const at::Tensor h = at::linear(x, ffn_weight_1, ffn_bias_1);
    return at::linear(use_gelu ? at::gelu(h) : at::relu(h), ffn_weight_2, ffn_bias_2);
  };
  at::Tensor x = src;
  if (norm_first) {
    x = x + self_attention(at::layer_norm(x, e, norm_weight_1, norm_bias_1, eps));
    return x + feed_forward(at::layer_norm(x, e, norm_weight_2, norm_bias_2, eps));
  }
  // Post-norm: each sum read in its layer norm's kernel, never stored (residual_norm.h).
  x = residual_layer_norm(x, self_attention(x), e, norm_weight_1, norm_bias_1, eps);
  return residual_layer_norm(x, feed_forward(x), e, norm_weight_2, norm_bias_2, eps);
}

std::tuple<at::Tensor, at::Tensor> native_multi_head_attention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, std::int64_t embed_dim, std::int64_t heads,
    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
    const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask, bool need_weights, bool average,
    std::optional<std::int64_t> mask_type) {
  check_ocl(query, "_native_multi_head_attention", "query");
  auto [out, weights] = attention(query, key, value, embed_dim, heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                  mask, mask_type, need_weights, average);
  if (!weights.defined()) weights = at::empty({0}, query.options());  // PyTorch returns an empty tensor too
  return {out, weights};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_transformer_encoder_layer_fwd", encoder_layer);
  m.impl("_native_multi_head_attention", native_multi_head_attention);
}

}  // namespace ocltune_torch
