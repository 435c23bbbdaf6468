// Float64 reference of conv2d, element by element: each value comes with the magnitude of its
// terms (sum of |products|), which the verification tolerance is relative to.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "ops/conv2d/conv2d.h"

namespace ocltune {

struct ReferenceValue {
  double value = 0;
  double scale = 0;  // sum of |terms|, the magnitude fp32 rounding is proportional to
};

// Tensors as dense arrays without offsets: input x (or dx's shape), weight, output y (or dy), bias.
class Conv2dReference {
 public:
  Conv2dReference(const Conv2dShape& shape, std::span<const float> input, std::span<const float> weight,
                  std::span<const float> output, std::span<const float> bias);

  // Forward output element, activation included (its scale widened as activation_value() says).
  ReferenceValue forward(std::int64_t n, std::int64_t k, std::int64_t p, std::int64_t q) const;
  ReferenceValue backward_data(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) const;
  ReferenceValue backward_weight(std::int64_t k, std::int64_t c, std::int64_t r, std::int64_t s) const;
  ReferenceValue bias_gradient(std::int64_t k) const;

 private:
  Conv2dShape shape_;
  std::span<const float> input_, weight_, output_, bias_;
};

// act(z) with its scale: the activation's Lipschitz constant times z's scale, plus a multiple of
// |act(z)| for the rounding of erf/exp in fp32.
ReferenceValue activation_value(Activation act, ReferenceValue z);

// Terms summed into one element: C/groups*R*S (+1 with bias) forward, K/groups*R*S backward-data,
// N*P*Q backward-weight (and the bias gradient).
std::int64_t accumulation_length(const Conv2dShape& shape);

// How much larger than the direct products the intermediate magnitudes of Winograd F(MxM, 3x3) are
// for random data: (max over outputs x of sum over r, t, i of |A^T[x][i]| |G[i][r]| |B^T[i][t]| / 3)^2,
// from the transform matrices (about 7.1 for M = 2, 256 for M = 4).
double winograd_magnitude_factor(int m);

// Indices (in the 4-D output of the direction) of the elements to compare: all of them when the
// reference costs at most `budget_macs`, else a sample that takes every value of every index at
// least once plus random elements up to the budget (deterministic).
std::vector<std::array<std::int64_t, 4>> reference_sample(std::array<std::int64_t, 4> dims, std::int64_t terms,
                                                          double budget_macs);

}  // namespace ocltune
