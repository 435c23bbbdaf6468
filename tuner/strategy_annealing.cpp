// Simulated annealing over the parameters' value lists: a step changes one parameter to an adjacent
// value; a slower neighbour is accepted with probability exp(-(log t' - log t) / T).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tuner/indexed_strategy.h"

namespace ocltune {
namespace {

class Annealing : public IndexedStrategy {
 public:
  Annealing(std::vector<Config> configs, std::uint64_t seed) : IndexedStrategy(std::move(configs)), rng_(seed) {}

 protected:
  std::optional<std::size_t> propose() override {
    if (current_) {
      // Nearest unproposed neighbours first; farther ones once the near ones are used up.
      for (int step = 1; step <= 2; ++step) {
        std::vector<std::size_t> near = index_.neighbours(*current_, step);
        if (!near.empty()) {
          const std::size_t j = near[rng_.index(near.size())];
          parent_[j] = *current_;
          return j;
        }
      }
      // A local minimum with every neighbour measured: restart from the best point's
      // surroundings when they are not exhausted, else anywhere.
      if (best_ && *best_ != *current_ && !index_.neighbours(*best_, 2).empty()) {
        current_ = best_;
        current_time_ = best_time_;
        return propose();
      }
    }
    std::optional<std::size_t> j = index_.random_unproposed(rng_);
    if (j) restart_.insert(*j);
    return j;
  }

  void observed(std::size_t i, std::optional<double> log_time) override {
    auto from = parent_.find(i);
    const bool is_restart = restart_.erase(i) > 0;
    if (from != parent_.end() || is_restart) temperature_ *= kCooling;  // earlier measurements do not cool
    if (!log_time) return;
    if (!best_ || *log_time < best_time_) {
      best_ = i;
      best_time_ = *log_time;
    }
    // A restart point becomes the state; a point measured earlier does when it is better; a
    // neighbour is judged by the Metropolis rule against the state it was proposed from.
    if (from == parent_.end()) {
      if (is_restart || !current_ || *log_time < current_time_) accept(i, *log_time);
      return;
    }
    if (from->second != *current_) return;  // a proposal from a state since left
    const double delta = *log_time - current_time_;
    if (delta <= 0 || rng_.uniform() < std::exp(-delta / std::max(temperature_, 1e-9))) accept(i, *log_time);
  }

 private:
  // Log-time units: a neighbour 20% slower is accepted with probability e^-0.6 ~ 0.55 at the
  // start; the temperature falls by 3% per measurement, to 1/20 of that after 100.
  static constexpr double kStartTemperature = 0.3;
  static constexpr double kCooling = 0.97;

  void accept(std::size_t i, double log_time) {
    current_ = i;
    current_time_ = log_time;
  }

  Rng rng_;
  std::optional<std::size_t> current_, best_;
  double current_time_ = 0, best_time_ = 0;
  double temperature_ = kStartTemperature;
  std::map<std::size_t, std::size_t> parent_;  // proposal -> the state it neighbours
  std::set<std::size_t> restart_;
};

}  // namespace

std::unique_ptr<Strategy> make_annealing(std::vector<Config> configs, std::uint64_t seed) {
  return std::make_unique<Annealing>(std::move(configs), seed);
}

}  // namespace ocltune
