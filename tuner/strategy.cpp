// Search strategies: which configuration of a space to evaluate next.
#include "tuner/strategy.h"

#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/error.h"

namespace ocltune {
namespace {

// Proposes configurations in a fixed order: enumeration order (exhaustive) or shuffled (random).
class ListStrategy : public Strategy {
 public:
  explicit ListStrategy(std::vector<Config> order) : order_(std::move(order)) {}
  std::optional<Config> next() override {
    if (position_ >= order_.size()) return std::nullopt;
    return order_[position_++];
  }

 private:
  std::vector<Config> order_;
  std::size_t position_ = 0;
};

}  // namespace

void deterministic_shuffle(std::vector<Config>& configs, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t i = configs.size(); i > 1; --i) {
    // Multiply-shift maps 64 random bits onto [0, i) without the library's distribution.
    __extension__ using u128 = unsigned __int128;
    const auto j = static_cast<std::size_t>((static_cast<u128>(rng()) * i) >> 64);
    std::swap(configs[i - 1], configs[j]);
  }
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, std::vector<Config> configurations,
                                        std::uint64_t seed) {
  if (name == "exhaustive") return std::make_unique<ListStrategy>(std::move(configurations));
  if (name == "random") {
    deterministic_shuffle(configurations, seed);
    return std::make_unique<ListStrategy>(std::move(configurations));
  }
  throw Error(fmt::format("unknown strategy '{}' (known: {})", name, fmt::join(strategy_names(), ", ")));
}

std::vector<std::string> strategy_names() { return {"exhaustive", "random"}; }

}  // namespace ocltune
