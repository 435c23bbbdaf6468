// When the search of one problem stops.
#include "tuner/budget.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {

SearchBudget::SearchBudget(std::int64_t space_size, std::int64_t max_evals, double fraction,
                           std::optional<Clock::time_point> deadline, std::int64_t patience)
    : limit_(space_size), limit_reason_("space exhausted"), deadline_(deadline), patience_(patience) {
  if (max_evals > 0 && max_evals < limit_) {
    limit_ = max_evals;
    limit_reason_ = fmt::format("--max-evals {} reached", max_evals);
  }
  if (fraction > 0) {
    const auto share =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(fraction * static_cast<double>(space_size))));
    if (share < limit_) {
      limit_ = share;
      limit_reason_ = fmt::format("--fraction {:g} reached ({} evaluations)", fraction, share);
    }
  }
}

void SearchBudget::count(std::optional<double> median_ns) {
  ++done_;
  ++since_improvement_;
  if (median_ns && (!best_ || *median_ns < *best_ * (1 - kRealImprovement))) since_improvement_ = 0;
  if (median_ns && (!best_ || *median_ns < *best_)) best_ = median_ns;
}

std::optional<std::string> SearchBudget::exhausted() const {
  if (done_ >= limit_) return limit_reason_;
  if (deadline_ && Clock::now() >= *deadline_) return std::string("time budget spent");
  if (patience_ > 0 && best_ && since_improvement_ >= patience_) {
    return fmt::format("no 1% improvement in the last {} evaluations (--patience)", patience_);
  }
  return std::nullopt;
}

namespace {
constexpr double kMaxDurationSeconds = 365.0 * 24 * 3600;
}  // namespace

double parse_duration(const std::string& text) {
  double total = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
    if (j == i) throw Error(fmt::format("bad duration '{}' (e.g. 90s, 10m, 1h30m)", text));
    // strtod rather than stod: "." or a 400-digit number is a bad duration, not an internal error.
    const std::string number = text.substr(i, j - i);
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || errno == ERANGE || !std::isfinite(value)) {
      throw Error(fmt::format("bad duration '{}' (e.g. 90s, 10m, 1h30m)", text.substr(0, 40)));
    }
    double unit = 1;
    if (j < text.size()) {
      const char u = text[j++];
      if (u == 'h')
        unit = 3600;
      else if (u == 'm')
        unit = 60;
      else if (u == 's')
        unit = 1;
      else
        throw Error(fmt::format("bad duration '{}' (units: h, m, s)", text));
    }
    total += value * unit;
    any = true;
    i = j;
  }
  if (!any || total <= 0) throw Error(fmt::format("bad duration '{}' (e.g. 90s, 10m, 1h30m)", text.substr(0, 40)));
  // Beyond a year a deadline of steady_clock's would overflow; no run is meant to last that long.
  if (total > kMaxDurationSeconds) throw Error(fmt::format("bad duration '{}' (at most 8760h)", text.substr(0, 40)));
  return total;
}

}  // namespace ocltune
