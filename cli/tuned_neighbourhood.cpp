// The tuned neighbourhood of a run's problems (cli/tuned_neighbourhood.h).
#include "cli/tuned_neighbourhood.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "core/math_mode.h"
#include "core/storage.h"
#include "db/database.h"
#include "db/database_error.h"
#include "db/provenance.h"
#include "runtime/runtime.h"
#include "runtime/tuned_rows.h"

namespace ocltune {

std::string system_database_for_tuning() {
  const char* env = std::getenv("OCLTUNE_SYSTEM_DB");
  return env && *env ? std::string(env) : default_system_database_path();
}

TunedNeighbourhood::TunedNeighbourhood(const DeviceInfo& device, const std::string& system_db, Database& run_db,
                                       const TunedTable::Log& log)
    : device_key_(device.key()),
      system_(std::make_unique<TunedTable>(device)),
      run_db_(std::make_unique<TunedTable>(device)) {
  std::error_code ec;
  if (!system_db.empty() && std::filesystem::exists(system_db, ec)) {
    try {
      Database db = Database::open_read_only(system_db, /*accept_older=*/true);
      system_->add_layer(db, "system", log);
    } catch (const DatabaseError& e) {
      if (log) log(fmt::format("system database {} not used for starting points: {}", system_db, e.what()));
    }
  }
  run_db_->add_layer(run_db, "user", log);
}

std::vector<Config> TunedNeighbourhood::nearest(const Problem& problem, std::size_t limit) const {
  const std::string op = problem.op(), dtype = dtype_name(problem.dtype()), math = math_name(problem.math()),
                    key = problem.shape_key();
  const ShapeInfo shape = shape_info(problem.lookup_json());
  // Candidates of one rank (this device, then its class, then this run's results), nearest first.
  std::vector<std::pair<double, const Config*>> ranked;
  // The system database's own row of this shape comes first: a shipped row this run never measured
  // (the run database's rows of the shape are resumed by the tuner, not started from).
  if (const TunedEntry* own = system_->exact(op, dtype, math, key)) ranked.emplace_back(-1.0, &own->config);
  const auto take = [&](std::vector<std::pair<double, const Config*>> found) {
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    ranked.insert(ranked.end(), found.begin(), found.end());
  };
  for (const bool same_device : {true, false}) {
    std::vector<std::pair<double, const Config*>> found;
    for (const TunedTable* table : {run_db_.get(), system_.get()}) {
      for (const auto& [d, e] : table->nearest(op, dtype, math, key, shape, same_device, 1e9)) {
        found.emplace_back(d, &e->config);
      }
    }
    if (same_device) {
      for (const Tuned& t : this_run_) {
        if (t.op != op || t.dtype != dtype || t.math != math || t.shape_key == key) continue;
        const double d = shape_distance(shape, t.shape);
        if (d < 1e9) found.emplace_back(d, &t.config);
      }
    }
    take(std::move(found));
  }
  std::vector<Config> out;
  std::set<std::string> seen;
  for (const auto& [d, config] : ranked) {
    if (out.size() >= limit) break;
    if (seen.insert(to_string(*config)).second) out.push_back(*config);
  }
  return out;
}

bool TunedNeighbourhood::served_by_system(const Problem& problem) const {
  const TunedEntry* e =
      system_->exact(problem.op(), dtype_name(problem.dtype()), math_name(problem.math()), problem.shape_key());
  return e && (!e->evaluations || *e->evaluations >= kMinEvaluations);
}

void TunedNeighbourhood::add(const Problem& problem, const Config& best) {
  this_run_.push_back({problem.op(), dtype_name(problem.dtype()), math_name(problem.math()), problem.shape_key(),
                       shape_info(problem.lookup_json()), best});
}

std::size_t TunedNeighbourhood::tune_served_last(ProblemList& problems) const {
  std::vector<char> served(problems.size());
  std::size_t moved = 0;
  for (std::size_t i = 0; i < problems.size(); ++i) moved += (served[i] = served_by_system(*problems[i])) != 0;
  ProblemList first, last;
  for (std::size_t i = 0; i < problems.size(); ++i) (served[i] ? last : first).push_back(std::move(problems[i]));
  problems = std::move(first);
  for (auto& p : last) problems.push_back(std::move(p));
  return moved;
}

}  // namespace ocltune
