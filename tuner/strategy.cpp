// Search strategies: the factory, and the list strategies (exhaustive and random).
#include "tuner/strategy.h"

#include <cmath>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/error.h"
#include "tuner/indexed_strategy.h"

namespace ocltune {
namespace {

// Proposes configurations in a fixed order: enumeration order (exhaustive) or shuffled (random).
class ListStrategy : public IndexedStrategy {
 public:
  using IndexedStrategy::IndexedStrategy;

 protected:
  std::optional<std::size_t> propose() override {
    while (position_ < index_.size() && index_.proposed(position_)) ++position_;
    if (position_ >= index_.size()) return std::nullopt;
    return position_++;
  }
  void observed(std::size_t, std::optional<double>) override {}

 private:
  std::size_t position_ = 0;
};

}  // namespace

std::optional<Config> IndexedStrategy::next() {
  std::optional<std::size_t> i = propose();
  if (!i) return std::nullopt;
  // A broken strategy must not make the tuner measure a point twice.
  if (index_.proposed(*i)) throw Error("internal: strategy proposed a configuration twice");
  index_.mark_proposed(*i);
  return index_.config(*i);
}

void IndexedStrategy::observe(const Config& config, std::optional<double> median_ns) {
  const std::optional<std::size_t> i = index_.find(config);
  if (!i) return;
  index_.mark_proposed(*i);
  const bool usable = median_ns && *median_ns > 0 && std::isfinite(*median_ns);
  observed(*i, usable ? std::optional<double>(std::log(*median_ns)) : std::nullopt);
}

void deterministic_shuffle(std::vector<Config>& configs, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t i = configs.size(); i > 1; --i) {
    // Multiply-shift maps 64 random bits onto [0, i) without the library's distribution.
    __extension__ using u128 = unsigned __int128;
    const auto j = static_cast<std::size_t>((static_cast<u128>(rng()) * i) >> 64);
    std::swap(configs[i - 1], configs[j]);
  }
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, std::vector<Config> configurations, std::uint64_t seed,
                                        std::vector<PriorPoint> prior) {
  if (name == "exhaustive") return std::make_unique<ListStrategy>(std::move(configurations));
  if (name == "random") {
    deterministic_shuffle(configurations, seed);
    return std::make_unique<ListStrategy>(std::move(configurations));
  }
  if (name == "annealing") return make_annealing(std::move(configurations), seed);
  if (name == "genetic") return make_genetic(std::move(configurations), seed);
  if (name == "model") return make_model(std::move(configurations), seed, std::move(prior));
  throw Error(fmt::format("unknown strategy '{}' (known: {})", name, fmt::join(strategy_names(), ", ")));
}

std::vector<std::string> strategy_names() { return {"exhaustive", "random", "annealing", "genetic", "model"}; }

}  // namespace ocltune
