// Starting points of a search (tuner/starting_points.h).
#include "tuner/starting_points.h"

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
