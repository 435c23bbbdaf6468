// Read-only queries the tuner makes beyond db/database.h: rows new since a given id (tuners sharing
// a database), every measurement of an op (the model-based strategy's warm start) and of one shape
// (recorded spaces for simulation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ocltune {

class Database;

// The columns of a measurement row that searching and replaying need.
struct MeasuredPoint {
  std::int64_t measurement_id = 0;
  std::string device_key, dtype, math, shape_key, source_hash;
  std::string params, role, status;
  std::string shape_json;
  std::optional<double> median_ns;
};

// Measurements of one problem (one device key, op, dtype, math mode, shape and kernel source) with
// an id above `after_id`, oldest first.
std::vector<MeasuredPoint> measurements_after(Database& db, const std::string& device_key, const std::string& op,
                                              const std::string& dtype, const std::string& math,
                                              const std::string& shape_key, const std::string& source_hash,
                                              std::int64_t after_id);

// Successful measurements of an op in one dtype, any shape and device, newest first, at most `limit`.
std::vector<MeasuredPoint> op_measurements(Database& db, const std::string& op, const std::string& dtype,
                                           std::size_t limit);

// Every measurement of an op at one shape key, any device, dtype and source, oldest first.
std::vector<MeasuredPoint> shape_measurements(Database& db, const std::string& op, const std::string& shape_key);

// "name (platform, driver version)" of a device key; empty when the key is unknown.
std::string device_description(Database& db, const std::string& device_key);

}  // namespace ocltune
