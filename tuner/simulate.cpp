// Strategy replay over recorded spaces.
#include "tuner/simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<double> replay(const RecordedSpace& space, const std::string& strategy_name, std::uint64_t seed,
                           std::size_t max_evals, const std::vector<PriorPoint>& prior,
                           const std::function<bool(const std::vector<double>&)>& done) {
  std::vector<Config> configs;
  std::unordered_map<std::string, const RecordedPoint*> by_params;
  for (const RecordedPoint& p : space.points) {
    configs.push_back(p.config);
    by_params.emplace(to_string(p.config), &p);
  }
  std::unique_ptr<Strategy> strategy = make_strategy(strategy_name, std::move(configs), seed, prior);
  std::vector<double> best_after;
  double best = std::numeric_limits<double>::infinity();
  const std::size_t limit = max_evals ? max_evals : space.points.size();
  while (best_after.size() < limit) {
    const std::optional<Config> config = strategy->next();
    if (!config) break;
    const RecordedPoint& point = *by_params.at(to_string(*config));
    // A cut candidate's partial median is what the tuner would have told the strategy.
    const bool timed = is_timed(point.status) && point.median_ns;
    strategy->observe(*config, timed ? point.median_ns : std::nullopt);
    if (point.status == Status::kOk && point.median_ns) best = std::min(best, *point.median_ns);
    best_after.push_back(best);
    if (done && done(best_after)) break;
  }
  return best_after;
}

std::vector<StrategyScore> score_strategies(const RecordedSpace& space, const std::vector<std::string>& strategies,
                                            int seeds, const std::vector<double>& budgets) {
  const std::optional<double> optimum = space.optimum_ns();
  if (!optimum) throw Error(fmt::format("recorded space {} has no verified configuration", space.shape_key));
  const std::size_t n = space.points.size();
  std::vector<std::size_t> evals;
  for (double b : budgets)
    evals.push_back(std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(b * static_cast<double>(n)))));
  std::vector<StrategyScore> scores;
  for (const std::string& name : strategies) {
    std::vector<std::vector<double>> fractions(budgets.size());
    std::vector<double> to_95;
    for (int seed = 1; seed <= seeds; ++seed) {
      // Long enough for every budget and for reaching 95%, at most half the space.
      const std::size_t longest = *std::max_element(evals.begin(), evals.end());
      const std::vector<double> trajectory =
          replay(space, name, static_cast<std::uint64_t>(seed), std::max(longest, n / 2), {},
                 [&](const std::vector<double>& t) { return t.size() >= longest && *optimum / t.back() >= 0.95; });
      auto at = [&](std::size_t k) {
        if (trajectory.empty()) return 0.0;
        const double found = trajectory[std::min(k, trajectory.size()) - 1];
        return std::isfinite(found) ? *optimum / found : 0.0;
      };
      for (std::size_t b = 0; b < budgets.size(); ++b) fractions[b].push_back(at(evals[b]));
      std::size_t reached = trajectory.size() + 1;
      for (std::size_t k = 0; k < trajectory.size(); ++k) {
        if (*optimum / trajectory[k] >= 0.95) {
          reached = k + 1;
          break;
        }
      }
      to_95.push_back(static_cast<double>(reached));
    }
    StrategyScore score{name, {}, median(to_95)};
    for (auto& f : fractions) score.fractions.push_back(median(f));
    scores.push_back(std::move(score));
  }
  return scores;
}

std::string format_scores(const RecordedSpace& space, const std::vector<StrategyScore>& scores,
                          const std::vector<double>& budgets, int seeds) {
  const std::size_t n = space.points.size();
  std::size_t verified = 0;
  for (const RecordedPoint& p : space.points) verified += p.status == Status::kOk;
  std::string out = fmt::format("{} {} ({} configurations, {} verified; optimum {:.0f} ns); median over {} seeds\n\n",
                                space.op, space.shape_key, n, verified, space.optimum_ns().value_or(0), seeds);
  out += "| strategy |";
  for (double b : budgets)
    out += fmt::format(" {:g}% of space ({} evals) |", b * 100,
                       static_cast<std::size_t>(std::ceil(b * static_cast<double>(n))));
  out += " evals to 95% |\n| --- |";
  for (std::size_t b = 0; b < budgets.size(); ++b) out += " ---: |";
  out += " ---: |\n";
  for (const StrategyScore& s : scores) {
    out += fmt::format("| {} |", s.strategy);
    for (double f : s.fractions) out += fmt::format(" {:.1f}% |", 100 * f);
    out += fmt::format(" {:g} ({:.1f}%) |\n", s.evals_to_95, 100 * s.evals_to_95 / static_cast<double>(n));
  }
  return out;
}

}  // namespace ocltune
