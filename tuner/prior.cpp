// The model-based strategy's warm start from the database.
#include "tuner/prior.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "db/space_records.h"
#include "harness/error.h"
#include "ops/problem.h"

namespace ocltune {

std::vector<PriorPoint> load_prior(Database& db, const Problem& problem, const std::string& device_key,
                                   std::size_t limit) {
  using Group = std::tuple<std::string, std::string, std::string>;  // device key, math, shape
  std::map<Group, std::map<std::string, double>> groups;            // params -> fastest log time
  for (const MeasuredPoint& m : op_measurements(db, problem.op(), dtype_name(problem.dtype()), limit)) {
    if (m.device_key == device_key && m.math == math_name(problem.math()) && m.shape_key == problem.shape_key())
      continue;
    if (!m.median_ns || *m.median_ns <= 0) continue;
    auto& points = groups[{m.device_key, m.math, m.shape_key}];
    const double t = std::log(*m.median_ns);
    auto [it, fresh] = points.emplace(m.params, t);
    if (!fresh) it->second = std::min(it->second, t);
  }
  std::vector<PriorPoint> prior;
  for (const auto& [group, points] : groups) {
    if (points.size() < 8) continue;
    std::vector<double> times;
    for (const auto& [params, t] : points) times.push_back(t);
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    const double middle = times[times.size() / 2];
    for (const auto& [params, t] : points) {
      try {
        prior.push_back({parse_config(params), t - middle});
      } catch (const Error&) {
        // A malformed row of an untrusted database teaches nothing.
      }
    }
  }
  return prior;
}

}  // namespace ocltune
