// The valid configurations of a space as indexed data, for the strategies.
#include "tuner/space_index.h"

#include <algorithm>
#include <set>

namespace ocltune {

SpaceIndex::SpaceIndex(std::vector<Config> configs) : configs_(std::move(configs)) {
  std::map<std::string, std::set<std::int64_t>> seen;
  for (const Config& c : configs_) {
    for (const auto& [name, value] : c) seen[name].insert(value);
  }
  for (const auto& [name, values] : seen) {
    names_.push_back(name);
    values_.emplace_back(values.begin(), values.end());
  }
  const std::size_t d = names_.size();
  levels_.assign(configs_.size() * d, -1);
  for (std::size_t i = 0; i < configs_.size(); ++i) {
    for (std::size_t p = 0; p < d; ++p) {
      auto it = configs_[i].find(names_[p]);
      if (it == configs_[i].end()) continue;
      const auto& v = values_[p];
      levels_[i * d + p] = static_cast<int>(std::lower_bound(v.begin(), v.end(), it->second) - v.begin());
    }
    by_levels_.emplace(levels_key(&levels_[i * d]), i);
  }
  proposed_.assign(configs_.size(), 0);
}

std::string SpaceIndex::levels_key(const int* levels) const {
  // Two bytes per dimension: value lists are far shorter than 65535 entries.
  std::string key(names_.size() * 2, '\0');
  for (std::size_t p = 0; p < names_.size(); ++p) {
    const auto v = static_cast<unsigned>(levels[p] + 1);
    key[2 * p] = static_cast<char>(v & 0xff);
    key[2 * p + 1] = static_cast<char>(v >> 8);
  }
  return key;
}

std::optional<std::size_t> SpaceIndex::find(const Config& config) const {
  std::vector<int> levels(names_.size(), -1);
  std::size_t matched = 0;
  for (std::size_t p = 0; p < names_.size(); ++p) {
    auto it = config.find(names_[p]);
    if (it == config.end()) continue;
    const auto& v = values_[p];
    auto pos = std::lower_bound(v.begin(), v.end(), it->second);
    if (pos == v.end() || *pos != it->second) return std::nullopt;
    levels[p] = static_cast<int>(pos - v.begin());
    ++matched;
  }
  if (matched != config.size()) return std::nullopt;  // a parameter no valid configuration has
  return find_levels(levels);
}

std::optional<std::size_t> SpaceIndex::find_levels(const std::vector<int>& levels) const {
  auto it = by_levels_.find(levels_key(levels.data()));
  if (it == by_levels_.end()) return std::nullopt;
  return it->second;
}

void SpaceIndex::mark_proposed(std::size_t i) {
  if (!proposed_[i]) ++proposed_count_;
  proposed_[i] = 1;
}

std::vector<std::size_t> SpaceIndex::neighbours(std::size_t i, int max_step) const {
  const std::size_t d = names_.size();
  std::vector<int> levels(levels_.begin() + static_cast<std::ptrdiff_t>(i * d),
                          levels_.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
  std::vector<std::size_t> out;
  for (int step = 1; step <= max_step; ++step) {
    for (std::size_t p = 0; p < d; ++p) {
      const int own = levels[p];
      if (own < 0) continue;
      for (int sign : {-1, 1}) {
        const int l = own + sign * step;
        if (l < 0 || l >= static_cast<int>(values_[p].size())) continue;
        levels[p] = l;
        if (auto j = find_levels(levels); j && !proposed_[*j]) out.push_back(*j);
        levels[p] = own;
      }
    }
  }
  return out;
}

std::optional<std::size_t> SpaceIndex::random_unproposed(Rng& rng) const {
  if (remaining() == 0) return std::nullopt;
  // Rejection sampling while most points are free; a scan from a random start once few are left.
  for (int attempt = 0; attempt < 32; ++attempt) {
    const std::size_t i = rng.index(configs_.size());
    if (!proposed_[i]) return i;
  }
  std::vector<std::size_t> free;
  free.reserve(remaining());
  for (std::size_t i = 0; i < configs_.size(); ++i) {
    if (!proposed_[i]) free.push_back(i);
  }
  return free[rng.index(free.size())];
}

}  // namespace ocltune
