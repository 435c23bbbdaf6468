// The tuning loop for one problem: strategy proposals -> evaluations -> database rows -> best.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/timing.h"
#include "ops/problem.h"
#include "tuner/evaluator.h"
#include "tuner/executor.h"

namespace ocltune {

class CompilePool;
class Database;
struct MeasurementRow;
class Session;

struct TuneOptions {
  std::string strategy = "random";
  std::int64_t max_evals = 0;  // evaluations per problem besides the defaults; 0: no such limit
  double fraction = 0;         // share of each problem's space; 0: no such limit
  double time_budget_s = 0;    // the whole run, shared evenly by the problems not yet tuned; 0: none
  std::int64_t patience = 0;   // stop a problem after this many evaluations without a 1% gain; 0: off
  // Cut a candidate short when its first runs are all slower than this many times the best median
  // (status `cut`); 0: time every candidate in full.
  double cut_factor = 2.0;
  // The fastest few are re-timed interleaved at the end (role `final`) to pick the winner and its
  // confidence; fewer than 2: off.
  int final_candidates = 3;
  int final_rounds = 7;
  int final_runs = 3;
  std::uint64_t seed = 1;
  Restriction restriction;  // search only this sub-space (the defaults are measured regardless)
  bool warm_start = false;  // the model strategy learns from other shapes and devices in the db
  // Configurations of the tuned shapes nearest to a problem (cli/tuned_neighbourhood.h): evaluated
  // after the family's seeds, with neighbours of the nearest, so a search starts where similar
  // problems ended. Unset: none.
  std::function<std::vector<Config>(const Problem&)> starting_points;
  int compile_threads = 0;                  // build this many proposals' programs ahead; 0: build when evaluated
  std::optional<IsolationOptions> isolate;  // evaluate in a worker process
  TimingPolicy timing;
  // The runs of a group of tuners on several devices sharing this database, this run's included
  // (docs/decisions/0038): each evaluation is claimed first, so none is made twice; a problem's
  // defaults and final re-timing are made by one of them; each waits for the others' evaluations
  // in flight before it leaves a problem. Empty: this run alone.
  std::vector<std::int64_t> group_runs;
  // Test hook: this process kills itself (SIGKILL) after this many evaluations, right after it
  // claimed the next one (its pending row committed). -1: off.
  std::int64_t test_die_after_evals = -1;
};

struct ProblemReport {
  std::string op, shape_key;
  std::size_t space_size = 0;  // valid configurations (in the restricted sub-space)
  double raw_size = 0;         // before constraints
  int evaluated = 0;           // evaluations in this run (the defaults included, final re-timing not)
  int reused = 0;              // measurements of earlier (or concurrent) runs with the same kernel source
  // Earlier rows ignored because their configuration fails the space's checks (a hostile or stale
  // database: a parameter out of range or unknown); the first one's reason.
  int rejected = 0;
  std::string first_rejection;
  std::map<Status, int> by_status;
  std::optional<EvalOutcome> best;
  std::optional<EvalOutcome> default_result;
  std::optional<double> confidence;  // runner-up median / winner median - 1
  int final_candidates = 0;          // re-timed interleaved before the winner was chosen
  std::string stop_reason;           // why the search ended
  bool best_written = false;         // the database's best row changed
};

class ProgressListener {
 public:
  virtual ~ProgressListener() = default;
  virtual void problem_started(const Problem& problem, int index, int count, std::int64_t planned) = 0;
  virtual void evaluated(const Problem& problem, const EvalOutcome& outcome, const std::optional<EvalOutcome>& best,
                         std::int64_t done, std::int64_t planned) = 0;
  virtual void problem_finished(const Problem& problem, const ProblemReport& report) = 0;
};

// GFLOP/s, or GB/s for memory-bound problems, of a median time.
double throughput(const Problem& problem, double median_ns);

class Tuner {
 public:
  Tuner(Session& session, Database& db, std::int64_t run_id, TuneOptions options, ProgressListener* progress);
  ~Tuner();
  ProblemReport tune(const Problem& problem, int index = 0, int count = 1);

  // The whole run's --time-budget is spent (never true without one).
  bool out_of_time() const { return run_deadline_ && std::chrono::steady_clock::now() >= *run_deadline_; }
  // Time spent over the run: building programs (wherever), of that what the evaluations waited
  // for, first launches and checks, and timing runs.
  double compile_seconds() const { return compile_ms_ * 1e-3; }
  double compile_wait_seconds() const { return compile_wait_ms_ * 1e-3; }
  double verify_seconds() const { return verify_ms_ * 1e-3; }
  double timing_seconds() const { return timing_ms_ * 1e-3; }

 private:
  struct Search;
  MeasurementRow measurement_row(const Problem& problem, const std::string& source_hash, const EvalOutcome& outcome,
                                 Role role) const;
  std::int64_t record(const Problem& problem, const std::string& source_hash, const EvalOutcome& outcome, Role role);
  // False when another run of the group re-timed the finalists (and writes the best row).
  bool remeasure_finalists(const Problem& problem, Executor& executor, Search& search);
  void write_best(const Problem& problem, Search& search, ProblemReport& report);

  Session& session_;
  Database& db_;
  std::int64_t run_id_;
  TuneOptions options_;
  ProgressListener* progress_;
  std::unique_ptr<CompilePool> pool_;
  std::optional<std::chrono::steady_clock::time_point> run_deadline_;
  double compile_ms_ = 0, compile_wait_ms_ = 0, verify_ms_ = 0, timing_ms_ = 0;
  std::int64_t claims_ = 0;  // evaluations claimed (test_die_after_evals)
};

}  // namespace ocltune
