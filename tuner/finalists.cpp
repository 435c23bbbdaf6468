// The end of a problem's search: the fastest few re-timed interleaved, the winner and how far ahead
// of the runner-up it is, and the best row.
#include <algorithm>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/claims.h"
#include "db/database.h"
#include "db/transfer.h"
#include "harness/session.h"
#include "tuner/search_state.h"
#include "tuner/stop.h"

namespace ocltune {

// Search timings of different candidates were taken minutes apart, under different machine load;
// re-timing the contenders in alternation (A, B, C, A, B, C, ...) exposes them to the same
// conditions, so noise decides the winner far less often.
bool Tuner::remeasure_finalists(const Problem& problem, Executor& executor, Search& search) {
  if (options_.final_candidates < 2) return true;
  std::vector<EvalOutcome> ranked = search.verified;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const EvalOutcome& a, const EvalOutcome& b) { return a.stats->median_ns < b.stats->median_ns; });
  std::vector<EvalOutcome> finalists;
  std::set<std::string> seen;
  for (const EvalOutcome& o : ranked) {
    if (static_cast<int>(finalists.size()) >= options_.final_candidates) break;
    if (seen.insert(to_string(o.config)).second) finalists.push_back(o);
  }
  // The default takes part too: a winner's search time and the default's may come from different
  // machine loads, so only the same interleaved rounds can show that the winner is faster.
  if (search.baseline && seen.insert(to_string(search.baseline->config)).second) finalists.push_back(*search.baseline);
  if (finalists.size() < 2) return true;
  // In a group of runs (docs/decisions/0038) one re-times the finalists: it claims the re-timing
  // with a pending final row of the first finalist; the others wait until that row is done (or
  // gone: its worker died, and one of them claims it again).
  std::optional<std::int64_t> claim;
  if (options_.group_runs.size() > 1) {
    EvalOutcome placeholder;
    placeholder.config = finalists[0].config;
    MeasurementRow row = measurement_row(problem, search.source_hash, placeholder, Role::kFinal);
    row.status = kPendingStatus;
    while (!claim) {
      if (stop_requested()) return true;
      const Claim c = claim_measurement(db_, row, options_.group_runs, 0);
      if (c.result == ClaimResult::kClaimed) {
        claim = c.measurement_id;
        break;
      }
      const auto now = rows_by_id(db_, {c.measurement_id});
      if (const auto it = now.find(c.measurement_id); it != now.end() && it->second.point.status != kPendingStatus) {
        return false;
      }
      std::this_thread::sleep_for(kGroupPoll);
    }
  }
  // The claim row holds the first finalist's re-timing, or says why there is none.
  auto settle_claim = [&](const EvalOutcome* timed, const std::string& why) {
    if (!claim) return;
    if (timed) {
      db_.complete_measurement(*claim, measurement_row(problem, search.source_hash, *timed, Role::kFinal));
      search.ok_row[to_string(timed->config)] = *claim;
    } else {
      EvalOutcome none;
      none.config = finalists[0].config;
      none.status = Status::kSkipped;
      none.error = why;
      db_.complete_measurement(*claim, measurement_row(problem, search.source_hash, none, Role::kFinal));
    }
    claim.reset();
  };
  std::vector<Config> configs;
  for (const EvalOutcome& o : finalists) configs.push_back(o.config);
  std::vector<std::vector<double>> samples;
  try {
    samples = executor.interleave(configs, options_.final_rounds, options_.final_runs);
  } catch (const Error& e) {
    settle_claim(nullptr, fmt::format("the final re-timing failed: {}", e.what()));
    return true;  // keep the search's verdict
  }
  std::vector<EvalOutcome> timed;
  for (std::size_t i = 0; i < finalists.size() && i < samples.size(); ++i) {
    if (samples[i].empty()) continue;
    EvalOutcome o = finalists[i];
    o.stats = summarize(samples[i]);
    o.status = Status::kOk;
    o.error.clear();
    o.compile_ms = o.compile_wait_ms = o.verify_ms = o.timing_ms = 0;
    if (i == 0 && claim) {
      settle_claim(&o, "");
    } else {
      search.ok_row[to_string(o.config)] = record(problem, search.source_hash, o, Role::kFinal);
    }
    if (search.baseline && o.config == search.baseline->config) search.baseline_final_ns = o.stats->median_ns;
    timed.push_back(std::move(o));
  }
  settle_claim(nullptr, "no samples in the final re-timing");
  if (timed.size() < 2) return true;
  std::stable_sort(timed.begin(), timed.end(),
                   [](const EvalOutcome& a, const EvalOutcome& b) { return a.stats->median_ns < b.stats->median_ns; });
  search.best = timed[0];
  search.runner_up = timed[1];
  search.finalists = static_cast<int>(timed.size());
  return true;
}

void Tuner::write_best(const Problem& problem, Search& search, ProblemReport& report) {
  if (!search.best) return;
  const EvalOutcome& best = *search.best;
  if (search.runner_up) search.confidence = search.runner_up->stats->median_ns / best.stats->median_ns - 1.0;
  report.confidence = search.confidence;
  const DeviceInfo& device = session_.device();
  BestRow row;
  row.device_key = device.key();
  row.op = problem.op();
  row.dtype = dtype_name(problem.dtype());
  row.math = math_name(problem.math());
  row.shape_key = problem.shape_key();
  row.shape_json = problem.shape_json().dump();
  row.params_json = to_json(best.config).dump();
  row.median_ns = best.stats->median_ns;
  row.min_ns = best.stats->min_ns;
  row.max_ns = best.stats->max_ns;
  row.spread = best.stats->spread;
  const double rate = throughput(problem, best.stats->median_ns);
  if (problem.memory_bound())
    row.gbs = rate;
  else
    row.gflops = rate;
  const auto& d = report.default_result;
  if (search.baseline_final_ns) {
    row.default_median_ns = search.baseline_final_ns;  // timed in the same rounds as the best
  } else if (d && d->stats && d->status == Status::kOk) {
    row.default_median_ns = d->stats->median_ns;
  }
  row.confidence = search.confidence;
  row.source_hash = search.source_hash;
  row.run_id = run_id_;
  // The row its time came from (the final re-timing's, or the search's when there was none).
  if (auto it = search.ok_row.find(to_string(best.config)); it != search.ok_row.end()) row.measurement_id = it->second;
  row.provenance =
      nlohmann::json{{"device", device.name}, {"driver", device.driver_version}, {"final_candidates", search.finalists}}
          .dump();
  // A stored row whose time no device could reach is no result to beat: this one replaces it.
  const std::optional<double> bandwidth = db_.device_bandwidth(device.key());
  report.best_written = db_.update_best_if_faster(std::move(row), [&](const BestRow& stored) {
    return time_problem(stored.median_ns, problem.bytes(), bandwidth);
  });
}

}  // namespace ocltune
