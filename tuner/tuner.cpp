// The tuning loop for one problem: strategy proposals -> evaluations -> database rows -> best.
#include "tuner/tuner.h"

#include <algorithm>
#include <deque>
#include <set>

#include <fmt/format.h>

#include "db/database.h"
#include "db/space_records.h"
#include "db/transfer.h"
#include "harness/session.h"
#include "tuner/budget.h"
#include "tuner/compile_pool.h"
#include "tuner/prior.h"
#include "tuner/search_state.h"
#include "tuner/stop.h"
#include "tuner/strategy.h"

namespace ocltune {

namespace {

std::string files_hash(const Problem& problem) {
  ProgramSource source;
  source.files = problem.kernel_files();
  return source.files_hash();
}

EvalOutcome outcome_of(const MeasuredPoint& m) {
  EvalOutcome o;
  o.config = parse_config(m.params);
  // An unknown status (a foreign or hostile row) counts as never run: it is measured again.
  o.status = parse_status(m.status).value_or(Status::kSkipped);
  if (m.median_ns) {
    o.stats = TimingStats{.median_ns = *m.median_ns,
                          .min_ns = *m.median_ns,
                          .max_ns = *m.median_ns,
                          .mean_ns = *m.median_ns,
                          .spread = 0,
                          .samples = 0};
  }
  return o;
}

// What a strategy learns from an outcome: a cut candidate's partial median is still a (high)
// estimate of its time.
std::optional<double> observed_time(const EvalOutcome& o) {
  if (is_timed(o.status) && o.stats) return o.stats->median_ns;
  return std::nullopt;
}

std::optional<double> ok_time(const EvalOutcome& o) {
  return o.status == Status::kOk && o.stats ? std::optional(o.stats->median_ns) : std::nullopt;
}

}  // namespace

double throughput(const Problem& problem, double median_ns) {
  if (median_ns <= 0) return 0;
  return (problem.memory_bound() ? problem.bytes() : problem.flops()) / median_ns;  // per ns = G per s
}

Tuner::Tuner(Session& session, Database& db, std::int64_t run_id, TuneOptions options, ProgressListener* progress)
    : session_(session), db_(db), run_id_(run_id), options_(std::move(options)), progress_(progress) {
  if (!options_.isolate && options_.compile_threads > 0) {
    pool_ = std::make_unique<CompilePool>(session_.programs(), options_.compile_threads);
  }
  if (options_.time_budget_s > 0) {
    run_deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(options_.time_budget_s));
  }
}

Tuner::~Tuner() = default;

MeasurementRow Tuner::measurement_row(const Problem& problem, const std::string& source_hash, const EvalOutcome& o,
                                      Role role) const {
  MeasurementRow row;
  row.run_id = run_id_;
  row.device_key = session_.device().key();
  row.op = problem.op();
  row.dtype = dtype_name(problem.dtype());
  row.math = math_name(problem.math());
  row.shape_key = problem.shape_key();
  row.shape_json = problem.shape_json().dump();
  row.source_hash = source_hash;
  row.params = to_string(o.config);
  row.role = role_name(role);
  row.status = status_name(o.status);
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
  return row;
}

std::int64_t Tuner::record(const Problem& problem, const std::string& source_hash, const EvalOutcome& o, Role role) {
  return db_.add_measurement(measurement_row(problem, source_hash, o, role));
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

  Search search;
  search.source_hash = files_hash(problem);
  std::optional<SearchBudget::Clock::time_point> deadline;
  if (run_deadline_)
    deadline = SearchBudget::Clock::now() + (*run_deadline_ - SearchBudget::Clock::now()) / std::max(1, count - index);
  SearchBudget budget(static_cast<std::int64_t>(configs.size()), options_.max_evals, options_.fraction, deadline,
                      options_.patience);

  // Measurements of earlier runs with the same kernel source are reused, not repeated.
  std::vector<EvalOutcome> earlier;
  auto reject = [&](const MeasuredPoint& m, const std::string& why) {
    if (report.rejected++ == 0) {
      report.first_rejection = fmt::format("measurement {} ({}): {}", m.measurement_id, printable(m.params, 120), why);
    }
  };
  // Configurations that crashed their process before (in any role): never evaluated again.
  std::set<std::string> crashed;
  auto take_row = [&](const MeasuredPoint& m) {
    search.last_seen_id = std::max(search.last_seen_id, m.measurement_id);
    if (m.status == status_name(Status::kCrash)) crashed.insert(m.params);
    if (m.role != role_name(Role::kSearch) || !search.measured.insert(m.params).second) return false;
    // Being evaluated by a live concurrent tuner (a dead one's became `crash` when this run
    // started): not measured again here, and never a result.
    if (m.status == kPendingStatus) return false;
    EvalOutcome o;
    try {
      o = outcome_of(m);
    } catch (const Error& e) {
      reject(m, e.what());  // a malformed row of an untrusted database
      return false;
    }
    // The same checks as a best row's (docs/decisions/0009): a row outside the space is never
    // reused, so it can neither become the best nor reach a compiler in the final re-timing.
    if (const std::string why = space.check(o.config); !why.empty()) {
      reject(m, why);
      return false;
    }
    ++report.reused;
    if (o.status == Status::kOk) search.ok_row[to_string(o.config)] = m.measurement_id;
    budget.count(ok_time(o));
    search.consider(o);
    earlier.push_back(std::move(o));
    return true;
  };
  for (const MeasuredPoint& m :
       measurements_after(db_, device.key(), problem.op(), dtype_name(problem.dtype()), math_name(problem.math()),
                          problem.shape_key(), search.source_hash, 0)) {
    take_row(m);
  }

  const std::vector<Config> defaults = problem.default_configs(device);
  const std::int64_t planned =
      std::max<std::int64_t>(0, budget.limit() - report.reused) + static_cast<std::int64_t>(defaults.size());
  if (progress_) progress_->problem_started(problem, index, count, planned);

  std::unique_ptr<Executor> executor = options_.isolate ? make_isolated_executor(*options_.isolate, problem)
                                                        : make_local_executor(session_, problem, pool_.get());
  std::int64_t done = 0;
  auto run_one = [&](const Config& config, Role role) {
    TimingPolicy timing = options_.timing;
    // Defaults are baselines and always timed in full.
    if (role == Role::kSearch && options_.cut_factor > 0 && search.best) {
      timing.abandon_above_ns = options_.cut_factor * search.best->stats->median_ns;
    }
    // In process, a kernel that kills the process would leave no row, and the same command would
    // crash at the same configuration forever: a pending row is committed first, and the next run
    // records it as a crash when its process is gone (db/abandoned_runs.h). An isolated worker's
    // death is seen and recorded by this process itself, so --isolate writes none.
    std::optional<std::int64_t> pending;
    if (!options_.isolate) {
      EvalOutcome placeholder;
      placeholder.config = config;
      MeasurementRow row = measurement_row(problem, search.source_hash, placeholder, role);
      row.status = kPendingStatus;
      pending = db_.add_measurement(std::move(row));
    }
    EvalOutcome o;
    try {
      o = executor->evaluate(config, timing);
    } catch (const std::exception& e) {
      // Not the configuration's fault (the run fails): the row must not read as a crash later.
      if (pending) {
        EvalOutcome failed;
        failed.config = config;
        failed.error = fmt::format("the evaluation failed: {}", e.what());
        db_.complete_measurement(*pending, measurement_row(problem, search.source_hash, failed, role));
      }
      throw;
    }
    compile_ms_ += o.compile_ms;
    compile_wait_ms_ += o.compile_wait_ms;
    verify_ms_ += o.verify_ms;
    timing_ms_ += o.timing_ms;
    std::int64_t id = 0;
    if (pending) {
      db_.complete_measurement(*pending, measurement_row(problem, search.source_hash, o, role));
      id = *pending;
    } else {
      id = record(problem, search.source_hash, o, role);
    }
    search.last_seen_id = std::max(search.last_seen_id, id);
    if (o.status == Status::kOk) search.ok_row[to_string(config)] = id;
    if (o.status == Status::kCrash && !options_.isolate) {
      // In-process, a lost context fails everything after it: stop here. The crash is recorded, so
      // the same command resumes without this configuration.
      throw Error(
          fmt::format("{} {}: {}. The configuration {} is recorded as a crash; run the same command to "
                      "resume, or add --isolate to run each evaluation in its own process",
                      problem.op(), problem.shape_key(), o.error, to_string(config)));
    }
    ++report.evaluated;
    ++report.by_status[o.status];
    ++done;
    if (progress_) progress_->evaluated(problem, o, search.best, done, planned);
    return o;
  };

  // The untuned defaults first: the baselines every tuned result is reported against. The first
  // is "the" default of the summary; the others (e.g. one per algorithm) are kept as rows.
  executor->prefetch(defaults);
  for (std::size_t i = 0; i < defaults.size(); ++i) {
    EvalOutcome o;
    if (crashed.count(to_string(defaults[i]))) {
      o.config = defaults[i];
      o.status = Status::kCrash;
      o.error = "crashed its process in an earlier run; not evaluated again";
    } else {
      o = run_one(defaults[i], Role::kDefault);
    }
    if (i == 0) report.default_result = o;
    if (i == 0 && o.status == Status::kOk && o.stats) search.baseline = o;
    search.consider(o);
  }

  std::vector<PriorPoint> prior;
  if (options_.strategy == "model" && options_.warm_start) prior = load_prior(db_, problem, device.key());
  std::unique_ptr<Strategy> strategy =
      make_strategy(options_.strategy, std::move(configs), options_.seed, std::move(prior));
  for (const EvalOutcome& o : earlier) strategy->observe(o.config, observed_time(o));

  // Proposals drawn ahead of the device, so their programs build while it times the current one.
  // The problem's seeds (known-good points for this device class) go first.
  std::deque<Config> ahead;
  for (const Config& seed : problem.seed_configs(device)) {
    if (space.contains(seed) && allowed(seed, options_.restriction) && !search.measured.count(to_string(seed))) {
      ahead.push_back(seed);
    }
  }
  if (!ahead.empty()) executor->prefetch(std::vector<Config>(ahead.begin(), ahead.end()));
  const std::size_t lookahead =
      pool_ || options_.isolate ? static_cast<std::size_t>(std::max(1, options_.compile_threads)) : 0;
  while (true) {
    if (stop_requested()) {
      report.stop_reason = "interrupted";
      break;
    }
    if (auto reason = budget.exhausted()) {
      report.stop_reason = *reason;
      break;
    }
    // Rows another tuner wrote into the same database meanwhile: measured, not to be repeated.
    for (const MeasuredPoint& m :
         measurements_after(db_, device.key(), problem.op(), dtype_name(problem.dtype()), math_name(problem.math()),
                            problem.shape_key(), search.source_hash, search.last_seen_id)) {
      if (take_row(m)) strategy->observe(earlier.back().config, observed_time(earlier.back()));
    }
    std::vector<Config> fresh;
    while (ahead.size() < lookahead + 1) {
      std::optional<Config> next = strategy->next();
      if (!next) break;
      ahead.push_back(*next);
      fresh.push_back(*next);
    }
    if (fresh.size() > 1 || (!fresh.empty() && ahead.size() > 1)) executor->prefetch(fresh);
    if (ahead.empty()) {
      report.stop_reason = "space exhausted";
      break;
    }
    const Config config = ahead.front();
    ahead.pop_front();
    if (!search.measured.insert(to_string(config)).second) continue;
    EvalOutcome o = run_one(config, Role::kSearch);
    strategy->observe(config, observed_time(o));
    budget.count(ok_time(o));
    search.consider(o);
  }

  if (!stop_requested()) remeasure_finalists(problem, *executor, search);
  report.best = search.best;
  report.confidence = search.confidence;
  report.final_candidates = search.finalists;
  write_best(problem, search, report);
  if (progress_) progress_->problem_finished(problem, report);
  return report;
}

}  // namespace ocltune
