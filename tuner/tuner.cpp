// The tuning loop for one problem: strategy proposals -> evaluations -> database rows -> best.
#include "tuner/tuner.h"

#include <algorithm>
#include <csignal>
#include <deque>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "db/claims.h"
#include "db/database.h"
#include "db/space_records.h"
#include "db/transfer.h"
#include "harness/session.h"
#include "tuner/budget.h"
#include "tuner/compile_pool.h"
#include "tuner/prior.h"
#include "tuner/search_state.h"
#include "tuner/starting_points.h"
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
  // Runs of one group (several devices, docs/decisions/0038) claim each evaluation and wait for
  // each other's evaluations in flight (by row id) before leaving a problem: a finished one is a
  // result here too, a released one (its worker died) is claimed again here.
  const bool grouped = options_.group_runs.size() > 1;
  const std::vector<std::int64_t> group = grouped ? options_.group_runs : std::vector<std::int64_t>{run_id_};
  struct InFlight {
    std::string params;
    Role role;
    std::size_t default_index;
  };
  std::map<std::int64_t, InFlight> in_flight;
  // Proposals drawn ahead of the device, so their programs build while it times the current one;
  // released configurations go first.
  std::deque<Config> ahead;
  std::vector<std::size_t> redo_defaults;  // defaults whose claim by another run was released
  bool full = false;                       // a claim found the evaluation limit reached (the group's rows)
  // Configurations that crashed their process before (in any role but the interleaved final
  // re-timing, which names no single one): never evaluated again.
  std::set<std::string> crashed;
  const std::optional<double> bandwidth = db_.device_bandwidth(device.key());
  // `claimed_earlier`: a row of the group seen pending before, now finished.
  auto take_row = [&](const MeasuredPoint& m, bool claimed_earlier = false) {
    search.last_seen_id = std::max(search.last_seen_id, m.measurement_id);
    if (m.status == status_name(Status::kCrash) && m.role != role_name(Role::kFinal)) crashed.insert(m.params);
    if (m.role != role_name(Role::kSearch)) return false;
    if (!claimed_earlier && !search.measured.insert(m.params).second) return false;
    // Being evaluated by a live concurrent tuner (a dead one's became `crash` when this run
    // started): not measured again here, and never a result. One of the group is waited for.
    if (m.status == kPendingStatus) {
      if (grouped) in_flight.emplace(m.measurement_id, InFlight{m.params, Role::kSearch, 0});
      return false;
    }
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
    // Nor is a time no device could reach (issue 42), which would beat every honest one: the
    // configuration is measured again instead.
    if (o.stats) {
      if (const std::string why = time_problem(o.stats->median_ns, problem.bytes(), bandwidth); !why.empty()) {
        reject(m, why);
        search.measured.erase(m.params);
        return false;
      }
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

  // The first default is the built-in baseline, always measured; the others (one per algorithm of
  // conv2d, say) only where --restrict allows them: on NVIDIA a build takes seconds, and a run
  // restricted to one algorithm spent most of its budget building the others' defaults.
  std::vector<Config> defaults = problem.default_configs(device);
  if (!options_.restriction.empty() && defaults.size() > 1) {
    defaults.erase(std::remove_if(defaults.begin() + 1, defaults.end(),
                                  [&](const Config& c) { return !allowed(c, options_.restriction); }),
                   defaults.end());
  }
  const std::int64_t planned =
      std::max<std::int64_t>(0, budget.limit() - report.reused) + static_cast<std::int64_t>(defaults.size());
  if (progress_) progress_->problem_started(problem, index, count, planned);

  std::unique_ptr<Executor> executor = options_.isolate ? make_isolated_executor(*options_.isolate, problem)
                                                        : make_local_executor(session_, problem, pool_.get());
  std::int64_t done = 0;
  // nullopt when the configuration is not this run's to evaluate (`claim_out` says why).
  auto run_one = [&](const Config& config, Role role, Claim* claim_out) -> std::optional<EvalOutcome> {
    TimingPolicy timing = options_.timing;
    // Defaults are baselines and always timed in full.
    if (role == Role::kSearch && options_.cut_factor > 0 && search.best) {
      timing.abandon_above_ns = options_.cut_factor * search.best->stats->median_ns;
    }
    // In process, a kernel that kills the process would leave no row, and the same command would
    // crash at the same configuration forever: a pending row is committed first, and the next run
    // records it as a crash when its process is gone (db/abandoned_runs.h). An isolated worker's
    // death is seen and recorded by this process itself, so --isolate alone writes none. The row
    // is a claim too: it is committed only when no tuner has the configuration (db/claims.h).
    std::optional<std::int64_t> pending;
    if (!options_.isolate || grouped) {
      EvalOutcome placeholder;
      placeholder.config = config;
      MeasurementRow row = measurement_row(problem, search.source_hash, placeholder, role);
      row.status = kPendingStatus;
      const Claim claim =
          claim_measurement(db_, std::move(row), group, grouped && role == Role::kSearch ? budget.limit() : 0);
      if (claim.result != ClaimResult::kClaimed) {
        if (claim_out) *claim_out = claim;
        return std::nullopt;
      }
      pending = claim.measurement_id;
      if (options_.test_die_after_evals >= 0 && claims_++ == options_.test_die_after_evals) raise(SIGKILL);
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
  // is "the" default of the summary; the others (e.g. one per algorithm) are kept as rows. In a
  // group each is measured by one run, and the others take its row when it is done.
  auto use_default = [&](std::size_t i, const EvalOutcome& o) {
    if (i == 0) report.default_result = o;
    if (i == 0 && o.status == Status::kOk && o.stats) search.baseline = o;
    search.consider(o);
  };
  auto run_default = [&](std::size_t i) {
    if (crashed.count(to_string(defaults[i]))) {
      EvalOutcome o;
      o.config = defaults[i];
      o.status = Status::kCrash;
      o.error = "crashed its process in an earlier run; not evaluated again";
      use_default(i, o);
      return;
    }
    Claim claim;
    if (std::optional<EvalOutcome> o = run_one(defaults[i], Role::kDefault, &claim)) {
      use_default(i, *o);
    } else {
      in_flight.emplace(claim.measurement_id, InFlight{to_string(defaults[i]), Role::kDefault, i});
    }
  };
  std::unique_ptr<Strategy> strategy;  // made after the defaults; rows taken before are in `earlier`
  auto watch_group = [&] {
    if (in_flight.empty()) return;
    std::vector<std::int64_t> ids;
    for (const auto& [id, f] : in_flight) ids.push_back(id);
    const std::map<std::int64_t, ClaimedRow> now = rows_by_id(db_, ids);
    for (const std::int64_t id : ids) {
      const InFlight f = in_flight.at(id);
      const auto it = now.find(id);
      if (it != now.end()) {
        const bool of_group = std::find(group.begin(), group.end(), it->second.run_id) != group.end();
        if (of_group && it->second.point.status == kPendingStatus) continue;  // still in flight
        in_flight.erase(id);
        if (!of_group) continue;  // another tuner's: skipped, as without a group
        if (f.role == Role::kDefault) {
          EvalOutcome o;
          try {
            o = outcome_of(it->second.point);
          } catch (const Error& e) {
            o.config = defaults[f.default_index];
            o.status = Status::kSkipped;
            o.error = e.what();
          }
          if (o.status == Status::kOk) search.ok_row[f.params] = id;
          use_default(f.default_index, o);
        } else if (take_row(it->second.point, true) && strategy) {
          strategy->observe(earlier.back().config, observed_time(earlier.back()));
        }
        continue;
      }
      // Released: the run evaluating it died (its coordinator deleted the claim); claimed again here.
      in_flight.erase(id);
      full = false;
      if (f.role == Role::kDefault) {
        redo_defaults.push_back(f.default_index);
        continue;
      }
      search.measured.erase(f.params);
      try {
        const Config config = parse_config(f.params);
        if (space.contains(config) && allowed(config, options_.restriction)) ahead.push_front(config);
      } catch (const Error&) {
        // not a configuration of this space: nothing to claim again
      }
    }
  };

  executor->prefetch(defaults);
  for (std::size_t i = 0; i < defaults.size(); ++i) run_default(i);

  std::vector<PriorPoint> prior;
  if (options_.strategy == "model" && options_.warm_start) prior = load_prior(db_, problem, device.key());
  // Nearest tuned shapes' configurations and 3 neighbours of the nearest (issue 20: the first
  // evaluations are already good); computed before the strategy takes the configurations.
  const std::vector<Config> starts =
      options_.starting_points ? starting_points(options_.starting_points(problem), configs, 3) : std::vector<Config>{};
  strategy = make_strategy(options_.strategy, std::move(configs), options_.seed, std::move(prior));
  for (const EvalOutcome& o : earlier) strategy->observe(o.config, observed_time(o));

  // The starting points first (a shipped row of this very shape leads them), then the problem's
  // seeds (known-good points for this device class): on the H200 a 6-minute `--ops all` gives a
  // problem about three evaluations, and with the seeds first the shipped deep row of a GEMM target
  // was never reached (0.88x of it).
  for (const Config& start : starts) {
    if (!search.measured.count(to_string(start)) && std::find(ahead.begin(), ahead.end(), start) == ahead.end()) {
      ahead.push_back(start);
    }
  }
  for (const Config& seed : problem.seed_configs(device)) {
    if (space.contains(seed) && allowed(seed, options_.restriction) && !search.measured.count(to_string(seed)) &&
        std::find(ahead.begin(), ahead.end(), seed) == ahead.end()) {
      ahead.push_back(seed);
    }
  }
  // The first starting point (the shipped row of this shape, else the nearest tuned row: what the
  // runtime serves the shape without this run) is evaluated whatever the budget says, as the defaults
  // are. A run's exact row outranks the shipped one, so a run that measured only its defaults wrote
  // rows slower than what the shape had: on the H200 a 6-minute `--ops all` gave a GEMM target one
  // evaluation, its default, at 0.88x of the shipped row it then shadowed.
  std::optional<std::string> must_evaluate;
  if (!starts.empty() && !search.measured.count(to_string(starts.front()))) must_evaluate = to_string(starts.front());
  if (!ahead.empty()) executor->prefetch(std::vector<Config>(ahead.begin(), ahead.end()));
  const std::size_t lookahead =
      pool_ || options_.isolate ? static_cast<std::size_t>(std::max(1, options_.compile_threads)) : 0;
  while (true) {
    if (stop_requested()) {
      report.stop_reason = "interrupted";
      break;
    }
    // Rows another tuner wrote into the same database meanwhile: measured, not to be repeated.
    for (const MeasuredPoint& m :
         measurements_after(db_, device.key(), problem.op(), dtype_name(problem.dtype()), math_name(problem.math()),
                            problem.shape_key(), search.source_hash, search.last_seen_id)) {
      if (take_row(m)) strategy->observe(earlier.back().config, observed_time(earlier.back()));
    }
    watch_group();
    for (const std::size_t i : std::exchange(redo_defaults, {})) run_default(i);
    std::optional<std::string> reason = budget.exhausted();
    if (reason && must_evaluate && !ahead.empty() && to_string(ahead.front()) == *must_evaluate) reason.reset();
    // The group's evaluations in flight count against the limit, so together they make no more.
    const auto group_in_flight = std::count_if(in_flight.begin(), in_flight.end(),
                                               [](const auto& entry) { return entry.second.role == Role::kSearch; });
    std::optional<Config> next;
    if (!reason && !(grouped && (full || budget.left() <= group_in_flight))) {
      std::vector<Config> fresh;
      while (ahead.size() < lookahead + 1) {
        std::optional<Config> proposal = strategy->next();
        if (!proposal) break;
        ahead.push_back(*proposal);
        fresh.push_back(*proposal);
      }
      if (fresh.size() > 1 || (!fresh.empty() && ahead.size() > 1)) executor->prefetch(fresh);
      if (ahead.empty()) {
        reason = "space exhausted";
      } else {
        next = ahead.front();
        ahead.pop_front();
      }
    }
    if (!next) {
      // Another run's evaluation may yet be released (its worker dies): this one stays until none
      // is in flight.
      if (!in_flight.empty()) {
        std::this_thread::sleep_for(kGroupPoll);
        continue;
      }
      report.stop_reason = reason ? *reason : "the devices together reached the evaluation limit";
      break;
    }
    const Config config = *next;
    const std::string params = to_string(config);
    if (must_evaluate == params) must_evaluate.reset();
    if (!search.measured.insert(params).second) continue;
    Claim claim;
    std::optional<EvalOutcome> o = run_one(config, Role::kSearch, &claim);
    if (!o) {
      if (claim.result == ClaimResult::kFull) {
        // Claims of the group this run has not seen yet: wait for them (or their release).
        search.measured.erase(params);
        ahead.push_front(config);
        full = true;
      }
      continue;  // taken: its row is read back with the others
    }
    strategy->observe(config, observed_time(*o));
    budget.count(ok_time(*o));
    search.consider(*o);
  }

  // In a group, one run re-times the finalists and writes the best row; the others report their view.
  bool writes_best = true;
  if (!stop_requested()) writes_best = remeasure_finalists(problem, *executor, search);
  report.best = search.best;
  report.confidence = search.confidence;
  report.final_candidates = search.finalists;
  if (writes_best) write_best(problem, search, report);
  if (progress_) progress_->problem_finished(problem, report);
  return report;
}

}  // namespace ocltune
