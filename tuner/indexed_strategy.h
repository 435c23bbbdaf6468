// Base of the strategies: proposals are positions in a SpaceIndex, so none is made twice.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "tuner/space_index.h"
#include "tuner/strategy.h"

namespace ocltune {

class IndexedStrategy : public Strategy {
 public:
  explicit IndexedStrategy(std::vector<Config> configs) : index_(std::move(configs)) {}

  std::optional<Config> next() final;
  void observe(const Config& config, std::optional<double> median_ns) final;

 protected:
  // An unproposed position, or nullopt when the strategy is done.
  virtual std::optional<std::size_t> propose() = 0;
  // The result for position i: log of the median time, nullopt = failed.
  virtual void observed(std::size_t i, std::optional<double> log_time) = 0;

  SpaceIndex index_;
};

// Factories of the strategies, one file each.
std::unique_ptr<Strategy> make_annealing(std::vector<Config> configs, std::uint64_t seed);
std::unique_ptr<Strategy> make_genetic(std::vector<Config> configs, std::uint64_t seed);
std::unique_ptr<Strategy> make_model(std::vector<Config> configs, std::uint64_t seed, std::vector<PriorPoint> prior);

}  // namespace ocltune
