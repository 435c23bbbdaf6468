// `ocltune simulate` and `ocltune record`: strategies replayed on recorded spaces, without a device.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/usage_error.h"
#include "db/database.h"
#include "tuner/recorded_space.h"
#include "tuner/simulate.h"
#include "tuner/strategy.h"

namespace ocltune {
namespace {

std::vector<RecordedSpace> load_spaces(const CliOptions& options) {
  std::vector<RecordedSpace> spaces;
  for (const std::string& path : options.spaces) spaces.push_back(load_recorded_space(path));
  if (!options.from_db.empty()) {
    if (options.op.empty() || options.shape.empty()) throw UsageError("--from-db needs --op and --shape");
    Database db = Database::open_read_only(options.from_db);
    spaces.push_back(recorded_space_from_db(db, options.op, options.shape, options.device_key));
  }
  if (spaces.empty()) throw UsageError("give recorded spaces with --space FILE... or --from-db DB --op OP --shape KEY");
  return spaces;
}

}  // namespace

int run_simulate(const CliOptions& options) {
  std::vector<std::string> strategies = options.strategies.empty() ? strategy_names() : options.strategies;
  const std::vector<std::string> known = strategy_names();
  for (const std::string& s : strategies) {
    if (std::find(known.begin(), known.end(), s) == known.end())
      throw UsageError(fmt::format("unknown strategy '{}'", s));
  }
  std::vector<RecordedSpace> spaces = load_spaces(options);
  nlohmann::json out = nlohmann::json::array();
  for (const RecordedSpace& space : spaces) {
    std::vector<double> budgets = {0.05, 0.10, 0.20};
    const auto n = static_cast<double>(space.points.size());
    if (options.fraction > 0) budgets.push_back(options.fraction);
    if (options.max_evals > 0 && n > 0) budgets.push_back(std::min(1.0, static_cast<double>(options.max_evals) / n));
    const std::vector<StrategyScore> scores = score_strategies(space, strategies, options.seeds, budgets);
    if (options.json) {
      nlohmann::json j = {{"op", space.op},
                          {"shape_key", space.shape_key},
                          {"device", space.device},
                          {"configurations", space.points.size()},
                          {"optimum_ns", space.optimum_ns().value_or(0)},
                          {"seeds", options.seeds},
                          {"budgets", budgets},
                          {"strategies", nlohmann::json::array()}};
      for (const StrategyScore& s : scores) {
        j["strategies"].push_back(
            {{"strategy", s.strategy}, {"fraction_of_optimum", s.fractions}, {"evals_to_95", s.evals_to_95}});
      }
      out.push_back(j);
    } else {
      fmt::print("{}{}\n", space.device.empty() ? "" : space.device + ": ",
                 format_scores(space, scores, budgets, options.seeds));
    }
  }
  if (options.json) fmt::print("{}\n", out.dump(2));
  return kExitOk;
}

int run_record(const CliOptions& options) {
  Database db = Database::open_read_only(options.from_db);
  const RecordedSpace space = recorded_space_from_db(db, options.op, options.shape, options.device_key);
  save_recorded_space(space, options.out);
  std::size_t ok = 0;
  for (const RecordedPoint& p : space.points) ok += p.status == Status::kOk;
  fmt::print(stderr, "ocltune: wrote {} configurations ({} verified) of {} {} on {} to {}\n", space.points.size(), ok,
             space.op, space.shape_key, space.device.empty() ? space.device_key : space.device, options.out);
  return kExitOk;
}

}  // namespace ocltune
