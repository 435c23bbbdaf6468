// A recorded search space: every configuration of one problem with its status and median time,
// from an exhaustive run; replayed by `ocltune simulate` to compare strategies without a device.
// Stored as JSON lines: a header object, then one {"params", "status", "median_ns"} per line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/status.h"

namespace ocltune {

class Database;

struct RecordedPoint {
  Config config;
  Status status = Status::kSkipped;
  std::optional<double> median_ns;  // present for status ok (and cut)
};

struct RecordedSpace {
  std::string op, dtype, math, shape_key, device_key, source_hash;
  nlohmann::json shape = nlohmann::json::object();
  std::string device;  // "name (platform, driver)" for people
  std::vector<RecordedPoint> points;

  // Fastest verified median; nullopt when nothing verified.
  std::optional<double> optimum_ns() const;
};

// Reads a JSON-lines file; throws ocltune::Error naming the line on bad input.
RecordedSpace load_recorded_space(const std::string& path);
void save_recorded_space(const RecordedSpace& space, const std::string& path);

// The space of `op` at `shape_key` from a database: the device key (and dtype, math mode, kernel
// source) with the most measured configurations unless `device_key` names one. Only search rows
// (the first of a configuration) make the space, not the defaults; where the fastest were re-timed
// interleaved (role final, e.g. `--final 20` on a resumed exhaustive run), the latest re-timing
// replaces the search median, so the optimum is not a noise outlier of a loaded machine.
// Throws ocltune::Error when nothing is recorded.
RecordedSpace recorded_space_from_db(Database& db, const std::string& op, const std::string& shape_key,
                                     const std::string& device_key = "");

}  // namespace ocltune
