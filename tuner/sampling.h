// Small samples of a search space that still exercise every declared value of every parameter:
// the configurations correctness tests run, so each code path of a kernel is compiled and checked.
#pragma once

#include <cstdint>
#include <vector>

#include "core/space.h"

namespace ocltune {

// Greedy covering sample: walks the valid configurations in a seeded random order and keeps one
// whenever it adds a (parameter, value) pair not yet covered, until every pair that occurs in some
// valid configuration is covered. `first` (e.g. the default configuration) is always included.
std::vector<Config> covering_sample(const SearchSpace& space, std::uint64_t seed, const Config& first = {});

}  // namespace ocltune
