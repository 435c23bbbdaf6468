// Whole-file checks of tuned databases for `ocltune db verify`, `merge` and `import`.
#include "runtime/db_verify.h"

#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

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

}  // namespace

RowCheck row_check_by_device() {
  return [](const BestRow& row, const DeviceRow* device) -> std::string {
    if (!device) return "no devices row describes its device key";
    return row_problem(row, device_from_row(*device));
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
  std::map<std::string, DeviceInfo> devices;
  for (const DeviceRow& d : db.devices()) devices.emplace(d.device_key, device_from_row(d));
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
            problem = row_problem(row, device->second);
          }
        }
      } catch (const Error& e) {
        problem = e.what();
      }
      if (!problem.empty()) report.problems.push_back(fmt::format("{}: {}", where, problem));
    }
  }
  const TunedRows rows = export_rows(db, "");
  report.devices = count("devices");
  report.best = rows.best.size();
  check_best_rows(rows, report);
  return report;
}

}  // namespace ocltune
