// Dropout that can be drawn again: what random_ops.cpp lends to ops that keep the Philox state of a
// draw instead of its mask (scaled_dot_product_attention recomputes its dropped weights in backward).
#pragma once

#include <cstdint>
#include <tuple>

#include <ATen/core/Tensor.h>

namespace ocltune_torch {

// Where a draw starts: the generator's seed and its first Philox counter (each counter gives 4
// numbers, so the generator's offset then was 4 * base or a little less).
struct PhiloxState {
  std::uint64_t seed = 0;
  std::uint64_t base = 0;
};

// Reserves what native_dropout of `numel` elements takes from the default generator of t's device
// (one counter per 4 elements), so native_dropout calls and these draws never share numbers.
PhiloxState reserve_dropout(const at::Tensor& t, std::int64_t numel);

// native_dropout of `input` drawn at `state`: (input * mask / (1 - p), mask). The same state,
// sizes and strides give the same mask, element for element.
std::tuple<at::Tensor, at::Tensor> dropout_at(const at::Tensor& input, double p, PhiloxState state);

}  // namespace ocltune_torch
