// Read-only queries the tuner makes beyond db/database.h.
#include "db/space_records.h"

#include <fmt/format.h>

#include "db/database.h"
#include "db/sqlite.h"

namespace ocltune {
namespace {

constexpr const char* kColumns =
    "measurement_id, device_key, dtype, math, shape_key, source_hash, params, role, status, median_ns, shape_json";

MeasuredPoint read_point(const sql::Statement& s) {
  MeasuredPoint p;
  p.measurement_id = s.int64(0);
  p.device_key = s.text(1);
  p.dtype = s.text(2);
  p.math = s.text(3);
  p.shape_key = s.text(4);
  p.source_hash = s.text(5);
  p.params = s.text(6);
  p.role = s.text(7);
  p.status = s.text(8);
  p.median_ns = s.optional_real(9);
  p.shape_json = s.text(10);
  return p;
}

std::vector<MeasuredPoint> read_all(sql::Statement& s) {
  std::vector<MeasuredPoint> out;
  while (s.step()) out.push_back(read_point(s));
  return out;
}

}  // namespace

std::vector<MeasuredPoint> measurements_after(Database& db, const std::string& device_key, const std::string& op,
                                              const std::string& dtype, const std::string& math,
                                              const std::string& shape_key, const std::string& source_hash,
                                              std::int64_t after_id) {
  sql::Statement s(db.connection(), fmt::format(R"(
    SELECT {} FROM measurements
    WHERE device_key = ?1 AND op = ?2 AND dtype = ?3 AND math = ?4 AND shape_key = ?5 AND source_hash = ?6
      AND measurement_id > ?7
    ORDER BY measurement_id)",
                                                kColumns));
  s.bind(1, device_key).bind(2, op).bind(3, dtype).bind(4, math).bind(5, shape_key).bind(6, source_hash);
  s.bind(7, after_id);
  return read_all(s);
}

std::vector<MeasuredPoint> op_measurements(Database& db, const std::string& op, const std::string& dtype,
                                           std::size_t limit) {
  sql::Statement s(db.connection(), fmt::format(R"(
    SELECT {} FROM measurements
    WHERE op = ?1 AND dtype = ?2 AND status = 'ok' AND median_ns > 0
    ORDER BY measurement_id DESC LIMIT ?3)",
                                                kColumns));
  s.bind(1, op).bind(2, dtype).bind(3, static_cast<std::int64_t>(limit));
  return read_all(s);
}

std::vector<MeasuredPoint> shape_measurements(Database& db, const std::string& op, const std::string& shape_key) {
  sql::Statement s(db.connection(), fmt::format(R"(
    SELECT {} FROM measurements WHERE op = ?1 AND shape_key = ?2 ORDER BY measurement_id)",
                                                kColumns));
  s.bind(1, op).bind(2, shape_key);
  return read_all(s);
}

std::string device_description(Database& db, const std::string& device_key) {
  sql::Statement s(db.connection(),
                   "SELECT device_name, platform_name, driver_version FROM devices WHERE device_key = ?1");
  s.bind(1, device_key);
  if (!s.step()) return "";
  return fmt::format("{} ({}, {})", s.text(0), s.text(1), s.text(2));
}

}  // namespace ocltune
