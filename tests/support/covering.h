// The smallest of several covering samples (different seeds) of a space: every value of every
// parameter is still compiled and checked, with fewer configurations (and program builds).
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/sampling.h"

namespace ocltune::testing {

inline std::vector<Config> small_covering_sample(const SearchSpace& space, const Config& first, int seeds = 64) {
  std::vector<Config> best;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::vector<Config> sample = covering_sample(space, static_cast<std::uint64_t>(seed), first);
    if (best.empty() || sample.size() < best.size()) best = std::move(sample);
  }
  return best;
}

// The configurations a correctness case runs: all of `sample` when `thorough`, otherwise the
// first (the default) and two others chosen by the case index, so that across the table every
// configuration still meets several shapes, kinds and storage types.
inline std::vector<Config> configs_for_case(const std::vector<Config>& sample, std::size_t index, bool thorough) {
  if (thorough || sample.size() <= 3) return sample;
  const std::size_t n = sample.size() - 1;
  return {sample[0], sample[1 + index % n], sample[1 + (index + n / 2) % n]};
}

}  // namespace ocltune::testing
