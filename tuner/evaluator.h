// Evaluation of one configuration: build, verify against the reference, then time.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/status.h"
#include "harness/timing.h"
#include "ops/problem.h"

namespace ocltune {

class Session;

struct EvalOutcome {
  Config config;
  Status status = Status::kSkipped;
  std::string error;  // empty when ok; a compile error carries the head of the build log
  std::optional<TimingStats> stats;
  std::optional<double> max_error;
  double compile_ms = 0;       // building its programs (on the compile pool or here; 0 when cached)
  double compile_wait_ms = 0;  // of which the evaluation waited for (what builds ahead saves)
  double verify_ms = 0;        // first launch (code generation on some drivers) and the check
  double timing_ms = 0;
};

// Evaluates configurations of one problem instance on one session. Never throws for a failing
// configuration: the failure becomes the outcome's status.
class Evaluator {
 public:
  // Called around the timing runs (e.g. to pause builds that would compete for a CPU device).
  struct Hooks {
    std::function<void()> before_timing;
    std::function<void()> after_timing;
  };

  Evaluator(Session& session, Evaluation& evaluation) : session_(session), evaluation_(evaluation) {}
  EvalOutcome evaluate(const Config& config, const TimingPolicy& timing, const Hooks& hooks);
  EvalOutcome evaluate(const Config& config, const TimingPolicy& timing) { return evaluate(config, timing, Hooks{}); }

 private:
  Session& session_;
  Evaluation& evaluation_;
};

}  // namespace ocltune
