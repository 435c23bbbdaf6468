// Float64 references of pooling, forward and backward, with a bound of the fp32 kernels' error.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ops/pool/pool.h"

namespace ocltune {

struct PoolReference {
  std::vector<double> value;          // per output element (y, or the input gradient)
  std::vector<float> bound;           // absolute error an fp32 computation may carry
  std::vector<std::int64_t> indices;  // max forward: PyTorch's flat h*W+w index per output
};

// `in` holds x (forward) or the output gradient (backward), contiguous NCHW, as stored; `indices`
// are the forward's indices for max backward. Max forward scans each window row by row and keeps
// the first maximum, or the last NaN (PyTorch's rule); backward scatters each output gradient into
// the inputs of its window, independently of the kernels' gather.
PoolReference pool_reference(const PoolShape& shape, std::span<const float> in, std::span<const std::int64_t> indices);

}  // namespace ocltune
