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
  for (const Config& c : all) {
    if (covered.size() >= reachable.size()) break;
    bool adds = false;
    for (const auto& pair : c) adds = adds || !covered.count(pair);
    if (!adds) continue;
    sample.push_back(c);
    covered.insert(c.begin(), c.end());
  }
  return sample;
}

}  // namespace ocltune
