// Progress of a tuning run: a live bar on a terminal, one plain line per evaluation otherwise.
#pragma once

#include <chrono>
#include <cstdio>

#include "tuner/tuner.h"

namespace ocltune {

class ConsoleProgress : public ProgressListener {
 public:
  // Writes to `out`; `quiet` prints nothing; `terminal` selects the live bar.
  ConsoleProgress(std::FILE* out, bool quiet, bool terminal) : out_(out), quiet_(quiet), terminal_(terminal) {}

  void problem_started(const Problem& problem, int index, int count, std::int64_t planned) override;
  void evaluated(const Problem& problem, const EvalOutcome& outcome, const std::optional<EvalOutcome>& best,
                 std::int64_t done, std::int64_t planned) override;
  void problem_finished(const Problem& problem, const ProblemReport& report) override;

 private:
  std::FILE* out_;
  bool quiet_;
  bool terminal_;
  int index_ = 0, count_ = 0;
  std::chrono::steady_clock::time_point started_;
};

// Human units: "12.3 GFLOP/s" or "45.6 GB/s".
std::string format_throughput(const Problem& problem, double median_ns);

}  // namespace ocltune
