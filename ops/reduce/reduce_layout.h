// Reduction layouts: a contiguous row-major tensor of up to 4 dimensions reduced over a set of its
// dimensions, rewritten as the (outer, length, inner) passes the kernels run. Shared by the
// reduce, softmax and norm families.
//
// Dimensions of extent 1 are dropped and adjacent dimensions that are both reduced or both kept
// are merged. One run of reduced dimensions is one pass: contiguous rows (inner == 1) or columns
// `inner` apart. Two runs (e.g. N and HW of NCHW) take two passes: the inner run first, into an
// fp32 workspace, then the outer run over that. Strided (non-contiguous) inputs are not supported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ocltune {

// The smallest power of two >= x (1 for x <= 1): tunables are powers of two, bounded by this.
inline std::int64_t pow2_ceil(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

struct ReducePass {
  std::int64_t outer = 1, length = 1, inner = 1;
};

struct ReduceLayout {
  std::vector<ReducePass> passes;  // 1 or 2; empty when there is nothing to compute
  std::int64_t elements = 0;       // input elements
  std::int64_t outputs = 0;        // output elements
  std::int64_t reduced = 1;        // elements reduced into each output
};

// Throws ocltune::Error for more than 4 dimensions, negative extents, an axis out of range or
// repeated, or a reduced dimension of extent 0. Kept extents of 0 give an empty layout.
ReduceLayout reduce_layout(const std::vector<std::int64_t>& dims, const std::vector<int>& axes);

// The same dimensions with the reduced ones removed (keepdim: set to 1).
std::vector<std::int64_t> reduced_dims(const std::vector<std::int64_t>& dims, const std::vector<int>& axes,
                                       bool keepdim);

// "32x256x56x56", "0.2,3": the text forms used in shape keys.
std::string dims_text(const std::vector<std::int64_t>& dims);
std::string axes_text(const std::vector<int>& axes);

// A list of 1..max_len integers in [lo, hi] from a shape field; throws ocltune::Error naming it.
std::vector<std::int64_t> int_list_field(const nlohmann::json& shape, const char* name, std::size_t max_len,
                                         std::int64_t lo, std::int64_t hi);

}  // namespace ocltune
