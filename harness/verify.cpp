// Verification of an output buffer against float64 reference values, with canary checks.
#include "harness/verify.h"

#include <bit>
#include <cmath>
#include <random>

#include <fmt/format.h>

namespace ocltune {
namespace {

enum class Role : std::uint8_t { kUntouched, kCompared, kUnchecked };

bool matches_non_finite(double reference, float got) {
  if (std::isnan(reference)) return std::isnan(got);
  return static_cast<double>(got) == reference;  // +-Inf must match exactly
}

}  // namespace

VerifyResult verify_output(std::span<const float> after, std::span<const float> before,
                           std::span<const Expected> expected, double tolerance,
                           std::span<const std::uint8_t> written) {
  VerifyResult result;
  auto fail = [&](std::string message) {
    ++result.mismatches;
    if (result.ok) result.message = std::move(message);
    result.ok = false;
  };
  if (after.size() != before.size()) {
    fail(fmt::format("buffer size changed: {} vs {}", after.size(), before.size()));
    return result;
  }
  if (!written.empty() && written.size() != after.size()) {
    fail(fmt::format("written mask has {} entries for a buffer of {}", written.size(), after.size()));
    return result;
  }
  std::vector<Role> role(after.size(), Role::kUntouched);
  for (std::size_t i = 0; i < written.size(); ++i) {
    if (written[i]) role[i] = Role::kUnchecked;
  }
  for (const Expected& e : expected) {
    if (e.index >= after.size()) {
      fail(fmt::format("reference index {} outside the buffer of {}", e.index, after.size()));
      return result;
    }
    role[e.index] = Role::kCompared;
    const float got = after[e.index];
    if (!std::isfinite(e.value)) {
      if (!matches_non_finite(e.value, got))
        fail(fmt::format("element {}: got {}, expected {}", e.index, got, e.value));
      continue;
    }
    if (!std::isfinite(got)) {
      fail(fmt::format("element {}: got {}, expected {}", e.index, got, e.value));
      continue;
    }
    const double scale = std::max(e.scale, 1e-30);
    const double error = std::abs(static_cast<double>(got) - e.value) / scale;
    result.max_error = std::max(result.max_error, error);
    if (!(error <= tolerance)) {
      fail(fmt::format("element {}: got {:.9g}, expected {:.9g} (relative error {:.3g} > tolerance {:.3g})", e.index,
                       got, e.value, error, tolerance));
    }
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (role[i] == Role::kCompared) continue;
    if (role[i] == Role::kUnchecked) {
      if (!std::isfinite(after[i])) fail(fmt::format("element {}: got non-finite {}", i, after[i]));
      continue;
    }
    if (std::bit_cast<std::uint32_t>(after[i]) != std::bit_cast<std::uint32_t>(before[i])) {
      const bool canary = i + kCanaryWords >= after.size();
      fail(fmt::format("element {} ({}) was overwritten: {} (was {})", i,
                       canary ? "canary after the output" : "outside the output", after[i], before[i]));
    }
  }
  return result;
}

void fill_uniform(std::span<float> data, std::uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  // Our own mapping from bits to [lo, hi), so values are identical with every standard library.
  for (float& x : data) {
    const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    x = static_cast<float>(lo + (hi - lo) * unit);
  }
}

float canary_value() { return std::bit_cast<float>(0x7fc0cafeU); }

}  // namespace ocltune
