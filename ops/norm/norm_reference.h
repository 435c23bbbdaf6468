// Float64 references of layer_norm and batch_norm, forward and backward, on host tensors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/stored_tensor.h"
#include "harness/verify.h"
#include "ops/norm/norm.h"

namespace ocltune {

// The host side of every tensor of NormOperands (a kind leaves the ones it does not use empty).
struct NormTensors {
  StoredTensor x, dy, gamma, beta, mean, rstd, running_mean, running_var, y, dx, dgamma, dbeta;
  std::vector<StoredTensor> prologue;  // layer_norm forward: the prologue's tensor operands, like x
};

// What one output must hold: the compared elements (a sample of rows or planes for big outputs)
// and, when sampled, which elements are written (the rest must be finite).
struct OutputReference {
  std::vector<Expected> expected;
  std::vector<std::uint8_t> written;
  // Mean-like statistics: an infinite reference accepts NaN too (Welford's running mean turns
  // inf into inf - inf = NaN, a sum stays inf; PyTorch's backends differ the same way).
  bool any_non_finite = false;
};

struct NormReference {
  std::map<std::string, OutputReference> outputs;  // "y", "mean", "rstd", "running_mean", ...
  double tolerance = 0;
};

// Outputs beyond this many elements are compared on evenly spaced rows or planes.
inline constexpr std::int64_t kNormFullCheckElements = std::int64_t{1} << 22;

// Backward problems read the statistics a forward pass saved: mean and rstd (layer) or save_mean
// and save_invstd (batch) of `t.x`, computed in float64 and stored as fp32.
void fill_saved_statistics(const NormShape& shape, NormTensors& t);

NormReference norm_reference(const NormShape& shape, const NormTensors& t);

}  // namespace ocltune
