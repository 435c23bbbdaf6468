// Small samples of a search space that still exercise every declared value of every parameter.
#include "tuner/sampling.h"

#include <set>
#include <utility>

#include "tuner/strategy.h"

namespace ocltune {

std::vector<Config> covering_sample(const SearchSpace& space, std::uint64_t seed, const Config& first) {
  std::vector<Config> all = space.enumerate();
  deterministic_shuffle(all, seed);
  using Pair = std::pair<std::string, std::int64_t>;
  std::set<Pair> reachable;
  for (const Config& c : all) reachable.insert(c.begin(), c.end());
  std::set<Pair> covered;
  std::vector<Config> sample;
  if (!first.empty()) {
    sample.push_back(first);
    covered.insert(first.begin(), first.end());
  }
  auto uncovered = [&] {
    std::size_t n = 0;
    for (const Pair& p : reachable) n += covered.count(p) ? 0 : 1;
    return n;
  };
  std::size_t missing = uncovered();
  for (const Config& c : all) {
    if (missing == 0) break;
    bool adds = false;
    for (const auto& pair : c) adds = adds || !covered.count(pair);
    if (!adds) continue;
    sample.push_back(c);
    covered.insert(c.begin(), c.end());
    missing = uncovered();
  }
  return sample;
}

}  // namespace ocltune
