// Fused (flash-style) attention on ocl: scaled_dot_product_attention forward and backward without
// the [B, H, L, S] scores in memory (plain/kernels/plain_flash_attention.cl; decision 0064).
// attention_ops.cpp decides per call between this and its GEMM path (flash_attention_wanted below).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>

#include <ATen/core/Tensor.h>

#include "ocltune_torch/csrc/ops/random_ops.h"

namespace ocltune_torch {

// The kernels' block sizes and vector width for head dims e and ev on `device` (the compile-time
// parameters a tuned family would search), or nullopt where no block fits the device's local memory.
struct FlashBlocks {
  int bm = 0;   // query rows per tile
  int bn = 0;   // keys per tile
  int vec = 0;  // float vector width of the dot products
  int ep = 0;   // e padded to a multiple of vec
  int evp = 0;  // ev padded the same way
};
std::optional<FlashBlocks> flash_blocks(int device, std::int64_t e, std::int64_t ev);

// What the two paths are asked: q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev] (any strides), a mask
// (bool or of q's dtype, broadcastable to [B, H, L, S]; undefined for none) and the dropout's
// probability and Philox state (unused when p == 0).
struct FlashArgs {
  double scale = 1.0;
  bool is_causal = false;
  double dropout_p = 0.0;
  PhiloxState dropout_state;
};

// (out [B, H, L, Ev] in q's dtype, lse [B, H, L] in fp32); a row that may attend to no key gets
// output 0 and lse -inf, as the GEMM path gives it.
std::tuple<at::Tensor, at::Tensor> flash_attention_forward(const at::Tensor& q, const at::Tensor& k,
                                                           const at::Tensor& v, const at::Tensor& mask,
                                                           const FlashArgs& args);

// (grad q, grad k, grad v), each undefined where grad_qkv says it is not wanted; the mask gets no
// gradient here (it needs dS in full: the GEMM path computes it).
std::tuple<at::Tensor, at::Tensor, at::Tensor> flash_attention_backward(const at::Tensor& grad_out, const at::Tensor& q,
                                                                        const at::Tensor& k, const at::Tensor& v,
                                                                        const at::Tensor& out, const at::Tensor& lse,
                                                                        const at::Tensor& mask, const FlashArgs& args,
                                                                        std::array<bool, 3> grad_qkv);

// Whether a call takes the flash kernels: OCLTUNE_SDPA=flash or gemm forces one (another value
// raises), else flash wherever the scores [B*H, L, S] would not fit comfortably in the device's
// memory, and where it measured faster: causal calls with L and S of 512 and more (decision 0064).
// Forward and backward of one call answer alike (nothing else decides). Always false where flash_blocks
// finds none (the GEMM path takes every input).
bool flash_attention_wanted(const at::Tensor& q, std::int64_t s, std::int64_t ev, bool is_causal);

}  // namespace ocltune_torch
