// Where evaluations of one problem run: in this process (builds ahead on a compile pool), or in a
// worker process that a hanging or crashing kernel cannot take down (--isolate).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner/evaluator.h"

namespace ocltune {

class CompilePool;
class Session;

class Executor {
 public:
  virtual ~Executor() = default;
  // Configurations about to be evaluated: their programs may be built ahead (a hint).
  virtual void prefetch(const std::vector<Config>& configs) = 0;
  virtual EvalOutcome evaluate(const Config& config, const TimingPolicy& timing) = 0;
  // Times verified configurations in interleaved rounds (A, B, C, A, B, C, ...), `runs` back to
  // back per turn after one warm-up each, so slow drifts of the machine hit all alike. One list
  // of samples (ns) per configuration; empty for one that failed.
  virtual std::vector<std::vector<double>> interleave(const std::vector<Config>& configs, int rounds, int runs) = 0;
};

// In this process on `session`; `pool` (may be null) builds prefetched programs, and is paused
// while a CPU device is timed so compilers do not compete with the kernel for its cores.
std::unique_ptr<Executor> make_local_executor(Session& session, const Problem& problem, CompilePool* pool);

struct IsolationOptions {
  std::vector<std::string> worker_command;  // argv of `ocltune worker --device N`
  double timeout_s = 60;                    // per evaluation, build included
};

// In a worker process, started on first use and again after a crash or a timeout: an evaluation
// that does not answer within the timeout is recorded as `timeout` (the worker is killed), one
// whose worker dies as `crash` (after one retry on a fresh worker), also when the fresh worker
// dies while it sets up.
std::unique_ptr<Executor> make_isolated_executor(const IsolationOptions& options, const Problem& problem);

}  // namespace ocltune
