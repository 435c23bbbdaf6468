// Whole-file checks of tuned databases for `ocltune db verify`, `merge` and `import`.
#include "runtime/db_verify.h"

#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/status.h"
#include "db/sqlite.h"
#include "runtime/tuned_rows.h"

namespace ocltune {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check_best_rows(const TunedRows& rows, DatabaseReport& report) {
  const RowCheck check = row_check_by_device();
  std::map<std::string, const DeviceRow*> devices;
  for (const DeviceRow& d : rows.devices) devices[d.device_key] = &d;
  for (const BestRow& row : rows.best) {
    auto it = devices.find(row.device_key);
    std::string problem = basic_problem(row);  // as db import: no fake or non-positive time
    if (problem.empty()) problem = check(row, it == devices.end() ? nullptr : it->second);
    if (!problem.empty()) report.problems.push_back(fmt::format("table best row {}: {}", describe_row(row), problem));
  }
}

// best.measurement_id, where set (a tuner's own file; exports and merges clear it), names the
// final `ok` measurement the row's time came from: of the same problem, kernel source and
// configuration. A row pointing elsewhere was not written by the tuner that claims it.
void check_best_measurement_ids(sql::Connection& c, DatabaseReport& report) {
  sql::Statement s(c, R"(
    SELECT b.device_key, b.op, b.dtype, b.math, b.shape_key, b.params_json, b.source_hash, b.measurement_id,
           m.measurement_id, m.status, m.device_key, m.op, m.dtype, m.math, m.shape_key, m.source_hash, m.params
    FROM best b LEFT JOIN measurements m ON m.measurement_id = b.measurement_id
    WHERE b.measurement_id IS NOT NULL ORDER BY b.device_key, b.op, b.dtype, b.math, b.shape_key)");
  while (s.step()) {
    BestRow row;
    row.device_key = s.text(0);
    row.op = s.text(1);
    row.dtype = s.text(2);
    row.math = s.text(3);
    row.shape_key = s.text(4);
    const std::int64_t id = s.int64(7);
    std::string problem;
    if (s.is_null(8)) {
      problem = "names no measurement";
    } else if (s.text(9) != status_name(Status::kOk)) {
      problem = fmt::format("names a measurement with status '{}', not ok", printable(s.text(9), 20));
    } else if (s.text(10) != row.device_key || s.text(11) != row.op || s.text(12) != row.dtype ||
               s.text(13) != row.math || s.text(14) != row.shape_key) {
      problem = "names a measurement of another problem";
    } else if (s.text(15) != s.text(6)) {
      problem = "names a measurement of another kernel source";
    } else {
      try {
        const std::string best_params = to_string(config_from_json(nlohmann::json::parse(s.text(5))));
        if (to_string(parse_config(s.text(16))) != best_params)
          problem = "names a measurement of another configuration";
      } catch (const std::exception& e) {
        problem = fmt::format("its configuration or the measurement's does not parse ({})", printable(e.what(), 120));
      }
    }
    if (!problem.empty()) {
      report.problems.push_back(fmt::format("table best row {}: measurement_id {} {}", describe_row(row), id, problem));
    }
  }
}

}  // namespace

RowCheck row_check_by_device() {
  return [](const BestRow& row, const DeviceRow* device) -> std::string {
    if (!device) return "no devices row describes its device key";
    return row_problem(row, device_from_row(*device), device->copy_bandwidth_gbs);
  };
}

DatabaseReport verify_database(const std::string& path) {
  DatabaseReport report;
  if (ends_with(path, ".jsonl")) {
    const TunedRows rows = load_tuned_rows(path);
    report.schema_version = kSchemaVersion;
    report.devices = rows.devices.size();
    report.best = rows.best.size();
    check_best_rows(rows, report);
    return report;
  }
  Database db = Database::open_read_only(path, /*accept_older=*/true);
  sql::Connection& c = db.connection();
  report.schema_version = db.schema_version();
  {
    sql::Statement s(c, "PRAGMA integrity_check");
    while (s.step()) {
      if (s.text(0) != "ok") report.problems.push_back(fmt::format("integrity check: {}", printable(s.text(0), 200)));
    }
  }
  {
    sql::Statement s(c, "PRAGMA foreign_key_check");
    while (s.step()) {
      report.problems.push_back(fmt::format("table {} row {}: refers to a missing row of {}", printable(s.text(0), 40),
                                            s.int64(1), printable(s.text(2), 40)));
    }
  }
  const auto count = [&](const char* table) {
    sql::Statement s(c, fmt::format("SELECT count(*) FROM {}", table));
    return s.step() ? static_cast<std::size_t>(s.int64(0)) : 0;
  };
  report.runs = count("runs");
  report.measurements = count("measurements");
  // Measurements are untrusted like best rows: a tuner reuses the timed ones (ok, cut) as earlier
  // results, so each must parse and lie in its op's space on its device, with a positive time.
  std::map<std::string, std::pair<DeviceInfo, std::optional<double>>> devices;  // and its copy bandwidth
  for (const DeviceRow& d : db.devices())
    devices.emplace(d.device_key, std::pair(device_from_row(d), d.copy_bandwidth_gbs));
  {
    sql::Statement s(c,
                     "SELECT measurement_id, device_key, op, dtype, math, shape_key, shape_json, params, status, "
                     "median_ns FROM measurements");
    while (s.step()) {
      const std::string where =
          fmt::format("table measurements row {} (device_key={}, op={}, shape_key={})", s.int64(0),
                      printable(s.text(1), 40), printable(s.text(2), 40), printable(s.text(5)));
      std::string problem;
      try {
        const Config config = parse_config(s.text(7));
        const std::optional<Status> status = parse_status(s.text(8));
        if (status && is_timed(*status)) {
          const std::optional<double> median = s.is_null(9) ? std::nullopt : std::optional(s.real(9));
          if (!median || !(*median > 0) || !std::isfinite(*median)) {
            problem = "a timed row needs a positive median_ns";
          } else if (auto device = devices.find(s.text(1)); device == devices.end()) {
            problem = "no devices row describes its device key";
          } else {
            BestRow row;
            row.device_key = s.text(1);
            row.op = s.text(2);
            row.dtype = s.text(3);
            row.math = s.text(4);
            row.shape_key = s.text(5);
            row.shape_json = s.text(6);
            row.params_json = to_json(config).dump();
            row.median_ns = *median;
            problem = row_problem(row, device->second.first, device->second.second);
          }
        }
      } catch (const Error& e) {
        problem = e.what();
      }
      if (!problem.empty()) report.problems.push_back(fmt::format("{}: {}", where, problem));
    }
  }
  check_best_measurement_ids(c, report);
  const TunedRows rows = export_rows(db, "");
  report.devices = count("devices");
  report.best = rows.best.size();
  check_best_rows(rows, report);
  return report;
}

}  // namespace ocltune
