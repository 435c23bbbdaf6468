// Search strategies: which configuration of a space to evaluate next.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/space.h"

namespace ocltune {

class Strategy {
 public:
  virtual ~Strategy() = default;
  // The next configuration to evaluate; nullopt when the strategy has nothing left to propose.
  // Never proposes a configuration twice (nor one observed before), and only valid ones. May be
  // called again before the result of the previous proposal is observed (a batch built ahead).
  virtual std::optional<Config> next() = 0;
  // The result of a proposal, or of a measurement made earlier: median time, nullopt = failed.
  // A configuration outside the space is ignored.
  virtual void observe(const Config& config, std::optional<double> median_ns) = 0;
};

// A measurement of the same op at another shape or on another device, which the model-based
// strategy warm-starts from. score: log(median time) minus the median of log(median time) over
// that problem's measurements, so problems of different sizes compare (lower = faster).
struct PriorPoint {
  Config config;
  double score = 0;
};

// Builds a strategy by name over the valid configurations of a space. Reproducible for a given
// name, seed, space and prior. Throws ocltune::Error for an unknown name.
std::unique_ptr<Strategy> make_strategy(const std::string& name, std::vector<Config> configurations, std::uint64_t seed,
                                        std::vector<PriorPoint> prior = {});
std::vector<std::string> strategy_names();

// Deterministic shuffle (Fisher-Yates over a 64-bit Mersenne twister, our own index mapping), so
// a seed gives the same order with every standard library.
void deterministic_shuffle(std::vector<Config>& configs, std::uint64_t seed);

}  // namespace ocltune
