// A steady-state genetic algorithm: tournament selection, uniform crossover of the parents'
// parameter values, mutation by one step along a value list; a child that is invalid or already
// proposed is bred again, so constraints never cost a measurement.
#include <algorithm>

#include "tuner/indexed_strategy.h"

namespace ocltune {
namespace {

class Genetic : public IndexedStrategy {
 public:
  Genetic(std::vector<Config> configs, std::uint64_t seed) : IndexedStrategy(std::move(configs)), rng_(seed) {}

 protected:
  std::optional<std::size_t> propose() override {
    if (population_.size() >= kMinParents) {
      for (int attempt = 0; attempt < kBreedAttempts; ++attempt) {
        if (auto child = breed(); child && !index_.proposed(*child)) return child;
      }
    }
    // Seed the population (and refill it when breeding finds nothing new) with random points.
    return index_.random_unproposed(rng_);
  }

  void observed(std::size_t i, std::optional<double> log_time) override {
    if (!log_time) return;  // failures never breed
    population_.push_back({i, *log_time});
    // Elitist: the fittest kPopulation individuals survive.
    std::sort(population_.begin(), population_.end(), [](const Member& a, const Member& b) {
      return a.log_time != b.log_time ? a.log_time < b.log_time : a.index < b.index;
    });
    if (population_.size() > kPopulation) population_.resize(kPopulation);
  }

 private:
  static constexpr std::size_t kPopulation = 16;
  static constexpr std::size_t kMinParents = 6;
  static constexpr int kBreedAttempts = 64;

  struct Member {
    std::size_t index;
    double log_time;
  };

  // Tournament of three: the best of three random members.
  std::size_t select() {
    std::size_t winner = rng_.index(population_.size());
    for (int k = 1; k < 3; ++k) winner = std::min(winner, rng_.index(population_.size()));  // sorted: lower = fitter
    return population_[winner].index;
  }

  std::optional<std::size_t> breed() {
    const std::size_t a = select(), b = select();
    const std::size_t d = index_.dimensions();
    std::vector<int> levels(d);
    for (std::size_t p = 0; p < d; ++p) levels[p] = index_.level(rng_.chance(0.5) ? a : b, p);
    // A variant's parameters come from one parent: crossing variants would only make invalid points.
    for (std::size_t p = 0; p < d; ++p) {
      if ((levels[p] < 0) != (index_.level(a, p) < 0)) levels[p] = index_.level(a, p);
    }
    // Mutation: each parameter moves one step with probability 1/d, and at least one always does,
    // so a child is rarely a copy of a parent.
    bool mutated = false;
    for (std::size_t p = 0; p < d; ++p) {
      if (levels[p] >= 0 && rng_.chance(1.0 / static_cast<double>(d))) mutated = step(levels, p) || mutated;
    }
    for (int tries = 0; !mutated && tries < 8; ++tries) mutated = step(levels, rng_.index(d));
    return index_.find_levels(levels);
  }

  // Moves parameter p one position up or down its value list; false when it cannot.
  bool step(std::vector<int>& levels, std::size_t p) {
    const int n = static_cast<int>(index_.values(p).size());
    if (levels[p] < 0 || n < 2) return false;
    int l = levels[p] + (rng_.chance(0.5) ? 1 : -1);
    if (l < 0 || l >= n) l = levels[p] + (l < 0 ? 1 : -1);
    levels[p] = l;
    return true;
  }

  Rng rng_;
  std::vector<Member> population_;
};

}  // namespace

std::unique_ptr<Strategy> make_genetic(std::vector<Config> configs, std::uint64_t seed) {
  return std::make_unique<Genetic>(std::move(configs), seed);
}

}  // namespace ocltune
