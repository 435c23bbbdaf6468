// Tuned rows from a database as untrusted input: validation against the ops' parameter spaces, and
// the shape description the runtime's nearest-shape lookup measures distances on.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "db/database.h"
#include "harness/device.h"
#include "ops/problem.h"

namespace ocltune {

// A best row that passed validation: its problem (parsed back from the row's shape) and configuration.
struct CheckedRow {
  std::unique_ptr<Problem> problem;
  Config config;
};

// Validates `row` for use on `device`: the op is a known family; dtype and math are the problem's;
// the shape JSON is one the family accepts and its key is the row's shape key; the parameters are a
// JSON object of integers that lies in the op's search space for that shape on `device` (known
// names only, declared values, every constraint); its median is a time a device could reach for the
// problem's bytes (db/transfer.h time_problem, with `copy_bandwidth_gbs`, the measured bandwidth of
// the device the row was recorded on, where known). Returns the problem and configuration, or throws
// ocltune::Error with the reason. Never compiles anything; never crashes on any input.
CheckedRow check_row(const BestRow& row, const DeviceInfo& device,
                     std::optional<double> copy_bandwidth_gbs = std::nullopt);
// The same as a message: empty when the row is valid.
std::string row_problem(const BestRow& row, const DeviceInfo& device,
                        std::optional<double> copy_bandwidth_gbs = std::nullopt);

// The limits of the device a devices row describes (no OpenCL handles): what the rows of another
// device are validated against by `ocltune db verify`. Work-item sizes per dimension are taken as
// the work-group size, which the devices table does not record; extensions and compute capability
// are not recorded either, so a variant of the device's vendor counts as possible (the runtime checks
// again on the device itself).
DeviceInfo device_from_row(const DeviceRow& row);

// A shape as the nearest-shape lookup sees it. `match` holds every field that is not an integer
// (layouts, transposes, flags) and the names of the integer fields: only shapes with equal `match`
// are compared. `log2_dims` are log2 of the integer fields, in field-name order.
struct ShapeInfo {
  std::string match;
  std::vector<double> log2_dims;
};
ShapeInfo shape_info(const nlohmann::json& canonical_shape);

// Euclidean distance between log2 dimension vectors: 1.0 is one dimension twice or half as large.
// Infinite when the shapes are not comparable (different `match`).
double shape_distance(const ShapeInfo& a, const ShapeInfo& b);

}  // namespace ocltune
