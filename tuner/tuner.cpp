// The tuning loop for one problem: strategy proposals -> evaluations -> database rows -> best.
#include "tuner/tuner.h"

#include <set>

#include <fmt/format.h>

#include "db/database.h"
#include "harness/hash.h"
#include "harness/session.h"
#include "tuner/stop.h"
#include "tuner/strategy.h"

namespace ocltune {
namespace {

std::string files_hash(const Problem& problem) {
  ProgramSource source;
  source.files = problem.kernel_files();
  return source.files_hash();
}

bool faster(const EvalOutcome& a, const std::optional<EvalOutcome>& b) {
  return !b || a.stats->median_ns < b->stats->median_ns;
}

}  // namespace

double throughput(const Problem& problem, double median_ns) {
  if (median_ns <= 0) return 0;
  return (problem.memory_bound() ? problem.bytes() : problem.flops()) / median_ns;  // per ns = G per s
}

Tuner::Tuner(Session& session, Database& db, std::int64_t run_id, TuneOptions options, ProgressListener* progress)
    : session_(session), db_(db), run_id_(run_id), options_(std::move(options)), progress_(progress) {}

void Tuner::record(const Problem& problem, const std::string& source_hash, const EvalOutcome& o,
                   const std::string& role) {
  MeasurementRow row;
  row.run_id = run_id_;
  row.device_key = session_.device().key();
  row.op = problem.op();
  row.dtype = problem.dtype();
  row.math = problem.math();
  row.shape_key = problem.shape_key();
  row.shape_json = problem.shape_json().dump();
  row.source_hash = source_hash;
  row.params = to_string(o.config);
  row.role = role;
  row.status = o.status;
  row.error = o.error;
  if (o.stats) {
    row.median_ns = o.stats->median_ns;
    row.min_ns = o.stats->min_ns;
    row.max_ns = o.stats->max_ns;
    row.spread = o.stats->spread;
    row.samples = o.stats->samples;
    const double rate = throughput(problem, o.stats->median_ns);
    if (problem.memory_bound()) {
      row.gbs = rate;
    } else {
      row.gflops = rate;
      row.gbs = problem.bytes() / o.stats->median_ns;
    }
  }
  row.max_error = o.max_error;
  row.compile_ms = o.compile_ms;
  db_.add_measurement(std::move(row));
}

ProblemReport Tuner::tune(const Problem& problem, int index, int count) {
  ProblemReport report;
  report.op = problem.op();
  report.shape_key = problem.shape_key();
  const DeviceInfo& device = session_.device();
  const SearchSpace space = problem.space(device);
  std::vector<Config> configs = space.enumerate();
  if (!options_.restriction.empty()) {
    std::erase_if(configs, [&](const Config& c) { return !allowed(c, options_.restriction); });
  }
  report.space_size = configs.size();
  report.raw_size = space.raw_size();
  const std::string source_hash = files_hash(problem);

  // Measurements of earlier runs with the same kernel source are reused, not repeated.
  std::set<std::string> measured;
  std::vector<std::pair<Config, std::optional<double>>> earlier;
  std::optional<EvalOutcome> best;
  std::optional<EvalOutcome> runner_up;
  auto consider = [&](const EvalOutcome& o) {
    if (o.status != status::kOk || !o.stats) return;
    if (faster(o, best)) {
      runner_up = best;
      best = o;
    } else if (faster(o, runner_up)) {
      runner_up = o;
    }
  };
  for (const MeasurementRow& m : db_.measurements(device.key(), problem.op(), problem.dtype(), problem.math(),
                                                  problem.shape_key(), source_hash)) {
    if (m.role == "default" || !measured.insert(m.params).second) continue;
    ++report.reused;
    earlier.emplace_back(parse_config(m.params), m.status == status::kOk ? m.median_ns : std::nullopt);
    if (m.status == status::kOk && m.median_ns) {
      EvalOutcome o;
      o.config = parse_config(m.params);
      o.status = m.status;
      o.stats = TimingStats{.median_ns = *m.median_ns,
                            .min_ns = m.min_ns.value_or(*m.median_ns),
                            .max_ns = m.max_ns.value_or(*m.median_ns),
                            .mean_ns = *m.median_ns,
                            .spread = m.spread.value_or(0),
                            .samples = static_cast<int>(m.samples.value_or(0))};
      consider(o);
    }
  }

  const std::int64_t budget = options_.max_evals > 0 ? std::min<std::int64_t>(options_.max_evals, static_cast<std::int64_t>(configs.size()))
                                                     : static_cast<std::int64_t>(configs.size());
  const std::int64_t planned = std::max<std::int64_t>(0, budget - report.reused) +
                              static_cast<std::int64_t>(problem.default_configs(device).size());
  if (progress_) progress_->problem_started(problem, index, count, planned);

  std::unique_ptr<Evaluation> evaluation = problem.instantiate(session_);
  Evaluator evaluator(session_, *evaluation);
  std::int64_t done = 0;
  auto run_one = [&](const Config& config, const std::string& role) {
    EvalOutcome o = evaluator.evaluate(config, options_.timing);
    compile_ms_ += o.compile_ms;
    verify_ms_ += o.verify_ms;
    timing_ms_ += o.timing_ms;
    record(problem, source_hash, o, role);
    ++report.evaluated;
    ++report.by_status[o.status];
    ++done;
    if (progress_) progress_->evaluated(problem, o, best, done, planned);
    return o;
  };

  // The untuned defaults first: the baselines every tuned result is reported against. The first
  // is "the" default of the summary; the others (e.g. one per algorithm) are kept as rows.
  const std::vector<Config> defaults = problem.default_configs(device);
  EvalOutcome default_outcome;
  for (std::size_t i = 0; i < defaults.size(); ++i) {
    EvalOutcome o = run_one(defaults[i], "default");
    if (i == 0) default_outcome = o;
    consider(o);
  }
  report.default_result = default_outcome;

  std::unique_ptr<Strategy> strategy = make_strategy(options_.strategy, std::move(configs), options_.seed);
  for (const auto& [config, median] : earlier) strategy->observe(config, median);
  std::int64_t searched = report.reused;
  while (searched < budget && !stop_requested()) {
    std::optional<Config> config = strategy->next();
    if (!config) break;
    if (measured.count(to_string(*config))) continue;
    measured.insert(to_string(*config));
    EvalOutcome o = run_one(*config, "search");
    ++searched;
    strategy->observe(*config, o.status == status::kOk ? std::optional<double>(o.stats->median_ns) : std::nullopt);
    consider(o);
  }

  report.best = best;
  if (best) {
    BestRow row;
    row.device_key = device.key();
    row.op = problem.op();
    row.dtype = problem.dtype();
    row.math = problem.math();
    row.shape_key = problem.shape_key();
    row.shape_json = problem.shape_json().dump();
    row.params_json = to_json(best->config).dump();
    row.median_ns = best->stats->median_ns;
    row.min_ns = best->stats->min_ns;
    row.max_ns = best->stats->max_ns;
    row.spread = best->stats->spread;
    const double rate = throughput(problem, best->stats->median_ns);
    if (problem.memory_bound()) row.gbs = rate; else row.gflops = rate;
    if (default_outcome.stats && default_outcome.status == status::kOk) row.default_median_ns = default_outcome.stats->median_ns;
    if (runner_up) row.confidence = runner_up->stats->median_ns / best->stats->median_ns - 1.0;
    row.source_hash = source_hash;
    row.run_id = run_id_;
    row.provenance = nlohmann::json{{"device", device.name}, {"driver", device.driver_version}}.dump();
    report.best_written = db_.update_best_if_faster(std::move(row));
  }
  if (progress_) progress_->problem_finished(problem, report);
  return report;
}

}  // namespace ocltune
