// Verification of an output buffer against float64 reference values, with canary checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ocltune {

// Words of canary after each output buffer, to catch writes past the end.
inline constexpr std::size_t kCanaryWords = 64;

// One element the op must produce. `scale` is the magnitude the error is measured against (e.g.
// sum |a_k * b_k| for a dot product), so the tolerance is relative to the rounding an fp32
// computation of that value can incur. A non-finite `value` must be matched exactly (NaN by NaN).
struct Expected {
  std::size_t index;
  double value;
  double scale;
};

struct VerifyResult {
  bool ok = true;
  double max_error = 0;  // largest |got - value| / scale over the compared elements
  std::size_t mismatches = 0;
  std::string message;  // first failure, human-readable; empty when ok
};

// Checks `after` (the whole buffer as read back) against `before` (its contents before the run).
// `written[i]` is 1 where the op writes. Then:
//  - every element in `expected` is within `tolerance` relative error (NaN/Inf never pass unless
//    the reference is the same non-finite value);
//  - every written element not in `expected` (sampled verification of big outputs) is finite;
//  - every element not written, canaries and gaps included, is bit-identical to `before`.
// An empty `written` means: exactly the elements of `expected` are written.
VerifyResult verify_output(std::span<const float> after, std::span<const float> before,
                           std::span<const Expected> expected, double tolerance,
                           std::span<const std::uint8_t> written = {});

// Deterministic uniform values in [lo, hi): never zeros-only data.
void fill_uniform(std::span<float> data, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);

// A quiet-NaN bit pattern no kernel computes by accident.
float canary_value();

}  // namespace ocltune
