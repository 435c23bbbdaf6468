// The valid configurations of a space as indexed data: lookup by value, each parameter's ordered
// values, neighbours, and which points were proposed, so no strategy proposes a point twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/config.h"
#include "tuner/random.h"

namespace ocltune {

class SpaceIndex {
 public:
  explicit SpaceIndex(std::vector<Config> configs);

  std::size_t size() const { return configs_.size(); }
  const Config& config(std::size_t i) const { return configs_[i]; }
  // Position of `config` among the valid configurations; nullopt when it is not one of them.
  std::optional<std::size_t> find(const Config& config) const;

  // Parameter names (the union over all configurations, sorted) and each one's distinct values,
  // ascending: the order in which neighbours are defined.
  std::size_t dimensions() const { return names_.size(); }
  const std::string& name(std::size_t p) const { return names_[p]; }
  const std::vector<std::int64_t>& values(std::size_t p) const { return values_[p]; }
  // Position of configuration i's value of parameter p in values(p); -1 when i lacks p.
  int level(std::size_t i, std::size_t p) const { return levels_[i * names_.size() + p]; }
  // The configuration with these levels (one per dimension, -1 = absent); nullopt when invalid.
  std::optional<std::size_t> find_levels(const std::vector<int>& levels) const;

  bool proposed(std::size_t i) const { return proposed_[i] != 0; }
  void mark_proposed(std::size_t i);
  std::size_t remaining() const { return configs_.size() - proposed_count_; }

  // Unproposed valid configurations that differ from i in exactly one parameter by at most
  // `max_step` positions of its value list, nearest first.
  std::vector<std::size_t> neighbours(std::size_t i, int max_step = 1) const;
  // A uniformly chosen unproposed configuration; nullopt when none is left.
  std::optional<std::size_t> random_unproposed(Rng& rng) const;

 private:
  std::string levels_key(const int* levels) const;

  std::vector<Config> configs_;
  std::vector<std::string> names_;
  std::vector<std::vector<std::int64_t>> values_;
  std::vector<int> levels_;  // size() x dimensions()
  std::unordered_map<std::string, std::size_t> by_levels_;
  std::vector<char> proposed_;
  std::size_t proposed_count_ = 0;
};

}  // namespace ocltune
