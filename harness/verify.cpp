// Verification of an output buffer against float64 reference values, with canary checks.
#include "harness/verify.h"

#include <bit>
#include <cmath>

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
  // The message of the first mismatch only: formatting one per element made a wrong candidate's
  // verification of a 6.4M-element output take about a second (a refused first-dispatch check).
  auto fail = [&](const auto& message) {
    ++result.mismatches;
    if (result.ok) result.message = message();
    result.ok = false;
  };
  if (after.size() != before.size()) {
    fail([&] { return fmt::format("buffer size changed: {} vs {}", after.size(), before.size()); });
    return result;
  }
  if (!written.empty() && written.size() != after.size()) {
    fail([&] { return fmt::format("written mask has {} entries for a buffer of {}", written.size(), after.size()); });
    return result;
  }
  std::vector<Role> role(after.size(), Role::kUntouched);
  for (std::size_t i = 0; i < written.size(); ++i) {
    if (written[i]) role[i] = Role::kUnchecked;
  }
  for (const Expected& e : expected) {
    if (e.index >= after.size()) {
      fail([&] { return fmt::format("reference index {} outside the buffer of {}", e.index, after.size()); });
      return result;
    }
    role[e.index] = Role::kCompared;
    const float got = after[e.index];
    if (!std::isfinite(e.value)) {
      if (!matches_non_finite(e.value, got))
        fail([&] { return fmt::format("element {}: got {}, expected {}", e.index, got, e.value); });
      continue;
    }
    if (!std::isfinite(got)) {
      fail([&] { return fmt::format("element {}: got {}, expected {}", e.index, got, e.value); });
      continue;
    }
    const double scale = std::max(e.scale, 1e-30);
    const double error = std::abs(static_cast<double>(got) - e.value) / scale;
    result.max_error = std::max(result.max_error, error);
    if (!(error <= tolerance)) {
      fail([&] {
        return fmt::format("element {}: got {:.9g}, expected {:.9g} (relative error {:.3g} > tolerance {:.3g})",
                           e.index, got, e.value, error, tolerance);
      });
    }
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (role[i] == Role::kCompared) continue;
    if (role[i] == Role::kUnchecked) {
      if (!std::isfinite(after[i])) fail([&] { return fmt::format("element {}: got non-finite {}", i, after[i]); });
      continue;
    }
    if (std::bit_cast<std::uint32_t>(after[i]) != std::bit_cast<std::uint32_t>(before[i])) {
      const bool canary = i + kCanaryWords >= after.size();
      fail([&] {
        return fmt::format("element {} ({}) was overwritten: {} (was {})", i,
                           canary ? "canary after the output" : "outside the output", after[i], before[i]);
      });
    }
  }
  return result;
}

namespace {

// SplitMix64's output function: the stream is mix(seed' + i * gamma), so each value depends on the
// seed and its index only.
std::uint64_t splitmix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void fill_uniform(std::span<float> data, std::uint64_t seed, float lo, float hi) {
  // SplitMix64 rather than std::mt19937_64: a counter-based loop that vectorises. A first-dispatch
  // check fills its inputs afresh (resnet50's 64-channel layer at batch 32: 6.4M values per tensor),
  // and the twister was a fifth of a check's host time on PoCL. Our own generator and mapping from
  // bits to [lo, hi), so values are identical with every standard library.
  constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;
  const std::uint64_t start = splitmix64(seed);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const double unit = static_cast<double>(splitmix64(start + (i + 1) * kGamma) >> 11) * 0x1.0p-53;
    data[i] = static_cast<float>(lo + (hi - lo) * unit);
  }
}

float canary_value() { return std::bit_cast<float>(0x7fc0cafeU); }

}  // namespace ocltune
