// Progress of a tuning run: a live bar on a terminal, one plain line per evaluation otherwise.
#include "cli/progress.h"

#include <fmt/format.h>

namespace ocltune {
namespace {

std::string format_duration(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

}  // namespace

std::string format_throughput(const Problem& problem, double median_ns) {
  return fmt::format("{:.1f} {}", throughput(problem, median_ns), problem.memory_bound() ? "GB/s" : "GFLOP/s");
}

void ConsoleProgress::problem_started(const Problem& problem, int index, int count, std::int64_t planned) {
  index_ = index;
  count_ = count;
  started_ = std::chrono::steady_clock::now();
  if (quiet_) return;
  fmt::print(out_, "[{} {}/{}] {}: {} evaluations\n", problem.op(), index + 1, count, problem.shape_key(), planned);
  std::fflush(out_);
}

void ConsoleProgress::evaluated(const Problem& problem, const EvalOutcome& outcome,
                                const std::optional<EvalOutcome>& best, std::int64_t done, std::int64_t planned) {
  if (quiet_) return;
  const std::string best_text = best && best->stats ? format_throughput(problem, best->stats->median_ns) : "-";
  if (!terminal_) {
    const std::string result =
        outcome.stats ? format_throughput(problem, outcome.stats->median_ns) : status_name(outcome.status);
    fmt::print(out_, "  {}/{} {:<13} {:>16}  best {}  {}\n", done, planned, status_name(outcome.status), result,
               best_text, to_string(outcome.config));
    std::fflush(out_);
    return;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(planned - done) : 0;
  constexpr int kWidth = 28;
  const int filled = planned > 0 ? static_cast<int>(kWidth * done / planned) : kWidth;
  fmt::print(out_, "\r  [{}{}] {}/{}  best {}  ETA {}\x1b[K", std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(kWidth - filled), '.'), done, planned, best_text,
             format_duration(eta));
  if (done >= planned) fmt::print(out_, "\n");
  std::fflush(out_);
}

void ConsoleProgress::problem_finished(const Problem& problem, const ProblemReport& report) {
  if (quiet_) return;
  if (terminal_) fmt::print(out_, "\r\x1b[K");
  std::string line = fmt::format("  done: {} evaluated", report.evaluated);
  if (report.reused) line += fmt::format(", {} reused from earlier runs", report.reused);
  if (report.rejected) {
    line += fmt::format(", {} earlier rows rejected (first: {})", report.rejected, report.first_rejection);
  }
  for (const auto& [status, n] : report.by_status) line += fmt::format(", {} {}", n, status_name(status));
  if (report.best) line += fmt::format("; best {}", format_throughput(problem, report.best->stats->median_ns));
  if (report.confidence) {
    line += fmt::format(" ({:.1f}% ahead of the runner-up after re-timing {} interleaved)", 100 * *report.confidence,
                        report.final_candidates);
  }
  if (!report.stop_reason.empty()) line += fmt::format("; search stopped: {}", report.stop_reason);
  fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

}  // namespace ocltune
