// Strategy replay over recorded spaces: how close to the exhaustive optimum each strategy gets
// after a given share of the space, over many seeds, without a device.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tuner/recorded_space.h"
#include "tuner/strategy.h"

namespace ocltune {

// Best median found after each evaluation (infinity until something verified), over at most
// `max_evals` evaluations (0: until the strategy stops), or fewer once `done` says so.
std::vector<double> replay(const RecordedSpace& space, const std::string& strategy, std::uint64_t seed,
                           std::size_t max_evals, const std::vector<PriorPoint>& prior = {},
                           const std::function<bool(const std::vector<double>&)>& done = {});

struct StrategyScore {
  std::string strategy;
  std::vector<double> fractions;  // per budget: median over seeds of optimum / best found (1 = optimum)
  double evals_to_95 = 0;         // median over seeds of evaluations until >= 95% of the optimum
                                  // (a run that has not got there within half the space counts as more)
};

// For each strategy, runs seeds 1..seeds and scores it at each budget (a share of the space).
std::vector<StrategyScore> score_strategies(const RecordedSpace& space, const std::vector<std::string>& strategies,
                                            int seeds, const std::vector<double>& budgets);

// The scores as a Markdown table: strategy, one column per budget, evaluations to 95%.
std::string format_scores(const RecordedSpace& space, const std::vector<StrategyScore>& scores,
                          const std::vector<double>& budgets, int seeds);

}  // namespace ocltune
