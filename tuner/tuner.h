// The tuning loop for one problem: strategy proposals -> evaluations -> database rows -> best.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "harness/timing.h"
#include "ops/problem.h"
#include "tuner/evaluator.h"

namespace ocltune {

class Database;
class Session;

struct TuneOptions {
  std::string strategy = "random";
  std::int64_t max_evals = 0;  // evaluations per problem besides the default; 0: the whole space
  std::uint64_t seed = 1;
  Restriction restriction;     // search only this sub-space (the defaults are measured regardless)
  TimingPolicy timing;
};

struct ProblemReport {
  std::string op, shape_key;
  std::size_t space_size = 0;  // valid configurations
  double raw_size = 0;         // before constraints
  int evaluated = 0;           // evaluations in this run (the default included)
  int reused = 0;              // measurements of earlier runs with the same kernel source
  std::map<std::string, int> by_status;
  std::optional<EvalOutcome> best;
  std::optional<EvalOutcome> default_result;
  bool best_written = false;   // the database's best row changed
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
  ProblemReport tune(const Problem& problem, int index = 0, int count = 1);

  double compile_seconds() const { return compile_ms_ * 1e-3; }
  double verify_seconds() const { return verify_ms_ * 1e-3; }
  double timing_seconds() const { return timing_ms_ * 1e-3; }

 private:
  void record(const Problem& problem, const std::string& source_hash, const EvalOutcome& outcome,
              const std::string& role);

  Session& session_;
  Database& db_;
  std::int64_t run_id_;
  TuneOptions options_;
  ProgressListener* progress_;
  double compile_ms_ = 0, verify_ms_ = 0, timing_ms_ = 0;
};

}  // namespace ocltune
