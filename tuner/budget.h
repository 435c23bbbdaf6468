// When the search of one problem stops: evaluation count, share of the space, wall time, and
// patience (no real improvement of the best for a number of evaluations).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace ocltune {

class SearchBudget {
 public:
  using Clock = std::chrono::steady_clock;

  // max_evals / fraction: 0 = no such limit; deadline: nullopt = none; patience: 0 = off.
  SearchBudget(std::int64_t space_size, std::int64_t max_evals, double fraction,
               std::optional<Clock::time_point> deadline, std::int64_t patience);

  // The number of evaluations allowed (space size when unlimited).
  std::int64_t limit() const { return limit_; }
  // Evaluations still allowed by the limit (tuners sharing the problem count their own in flight).
  std::int64_t left() const { return limit_ - done_; }
  // Counts one search evaluation (measured now or earlier) and its median (nullopt = failed).
  void count(std::optional<double> median_ns);
  // Why the search must stop now; nullopt while it may go on.
  std::optional<std::string> exhausted() const;

 private:
  // An improvement smaller than this is noise, not progress, for the patience rule.
  static constexpr double kRealImprovement = 0.01;

  std::int64_t limit_;
  std::string limit_reason_;
  std::optional<Clock::time_point> deadline_;
  std::int64_t patience_;
  std::int64_t done_ = 0;
  std::int64_t since_improvement_ = 0;
  std::optional<double> best_;
};

// "90s", "10m", "1h30m", "2h", "45" (seconds) -> seconds; throws ocltune::Error otherwise.
double parse_duration(const std::string& text);

}  // namespace ocltune
