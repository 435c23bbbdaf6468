// Starting points of a search (tuner/starting_points.h).
#include "tuner/starting_points.h"

#include <algorithm>
#include <set>
#include <string>

#include "tuner/space_index.h"

namespace ocltune {

std::vector<Config> starting_points(const std::vector<Config>& nearest, const std::vector<Config>& space,
                                    std::size_t neighbours) {
  if (nearest.empty() || space.empty()) return {};
  const SpaceIndex index(space);
  std::vector<Config> out;
  std::set<std::size_t> taken;
  std::optional<std::size_t> first;
  for (const Config& c : nearest) {
    const std::optional<std::size_t> i = index.find(c);
    if (!i || !taken.insert(*i).second) continue;
    if (!first) first = i;
    out.push_back(index.config(*i));
  }
  if (!first) return out;
  // The first one's counterpart in each variant that extends its own by parameters of their own
  // (gemm.cl's tile with K split in two, conv2d's im2col row likewise): the space's first
  // configuration of that variant that agrees with it on every parameter it has.
  const Config& base = index.config(*first);
  std::set<std::vector<std::string>> variants_seen;
  for (std::size_t j = 0; j < index.size(); ++j) {
    const Config& c = index.config(j);
    if (c.size() <= base.size()) continue;
    const bool extends = std::all_of(base.begin(), base.end(), [&](const auto& entry) {
      const auto it = c.find(entry.first);
      return it != c.end() && it->second == entry.second;
    });
    if (!extends) continue;
    std::vector<std::string> names;
    for (const auto& [name, value] : c) names.push_back(name);
    if (!variants_seen.insert(std::move(names)).second) continue;
    if (taken.insert(j).second) out.push_back(c);
  }
  std::size_t added = 0;
  for (const std::size_t j : index.neighbours(*first, 1)) {
    if (added == neighbours) break;
    if (!taken.insert(j).second) continue;
    out.push_back(index.config(j));
    ++added;
  }
  return out;
}

}  // namespace ocltune
