// layer_norm(x + residual) with the sum read in the norm's kernel (the layer_norm family's
// prologue), never stored: the post-norm residual of nn.TransformerEncoderLayer's inference fast
// path (transformer_ops.cpp), what torch.compile's prologue pass makes of the same in a graph.
#pragma once

#include <ATen/ATen.h>

namespace ocltune_torch {

// at::layer_norm(x + residual, normalized, weight, bias, eps); x and residual of one dtype and sizes
// on one ocl device (otherwise: the sum, then the norm). $OCLTUNE_TORCH_RESIDUAL_NORM=0 computes the
// sum first always (for A/B measurements).
at::Tensor residual_layer_norm(const at::Tensor& x, const at::Tensor& residual, at::IntArrayRef normalized,
                               const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace ocltune_torch
