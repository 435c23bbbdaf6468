// The model-based strategy's warm start: measurements of the same op at other shapes and on other
// devices, from the database, each scored relative to its own problem.
#pragma once

#include <string>
#include <vector>

#include "tuner/strategy.h"

namespace ocltune {

class Database;
class Problem;

// Up to `limit` recent successful measurements of problem.op() in its dtype, excluding `problem`
// itself on `device_key`; problems with fewer than 8 measurements are left out (no scale).
std::vector<PriorPoint> load_prior(Database& db, const Problem& problem, const std::string& device_key,
                                   std::size_t limit = 20000);

}  // namespace ocltune
