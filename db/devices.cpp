// The tuning database: device rows copied between databases, and the record of imports.
#include <fmt/format.h>

#include "db/database.h"
#include "db/sqlite.h"

namespace ocltune {
namespace {

constexpr const char* kDeviceColumns =
    "device_key, platform_name, platform_version, device_name, vendor, driver_version, device_type, compute_units, "
    "clock_mhz, global_mem_bytes, local_mem_bytes, max_work_group_size, copy_bandwidth_gbs, peak_gflops, first_seen, "
    "last_seen";

DeviceRow read_device(const sql::Statement& s) {
  DeviceRow d;
  d.device_key = s.text(0);
  d.platform_name = s.text(1);
  d.platform_version = s.text(2);
  d.device_name = s.text(3);
  d.vendor = s.text(4);
  d.driver_version = s.text(5);
  d.device_type = s.text(6);
  d.compute_units = s.int64(7);
  d.clock_mhz = s.int64(8);
  d.global_mem_bytes = s.int64(9);
  d.local_mem_bytes = s.int64(10);
  d.max_work_group_size = s.int64(11);
  d.copy_bandwidth_gbs = s.optional_real(12);
  d.peak_gflops = s.optional_real(13);
  d.first_seen = s.text(14);
  d.last_seen = s.text(15);
  return d;
}

}  // namespace

void Database::merge_device(const DeviceRow& d) {
  sql::Statement s(*db_, fmt::format(R"(
    INSERT INTO devices({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
    ON CONFLICT(device_key) DO UPDATE SET
      first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen),
      copy_bandwidth_gbs = coalesce(copy_bandwidth_gbs, excluded.copy_bandwidth_gbs),
      peak_gflops = coalesce(peak_gflops, excluded.peak_gflops))",
                                     kDeviceColumns));
  s.bind(1, d.device_key).bind(2, d.platform_name).bind(3, d.platform_version).bind(4, d.device_name);
  s.bind(5, d.vendor).bind(6, d.driver_version).bind(7, d.device_type).bind(8, d.compute_units);
  s.bind(9, d.clock_mhz).bind(10, d.global_mem_bytes).bind(11, d.local_mem_bytes).bind(12, d.max_work_group_size);
  s.bind(13, d.copy_bandwidth_gbs).bind(14, d.peak_gflops);
  const std::string now = utc_now();
  s.bind(15, d.first_seen.empty() ? now : d.first_seen).bind(16, d.last_seen.empty() ? now : d.last_seen).run();
}

std::vector<DeviceRow> Database::devices() const {
  sql::Statement s(*db_, fmt::format("SELECT {} FROM devices ORDER BY device_key", kDeviceColumns));
  std::vector<DeviceRow> rows;
  while (s.step()) rows.push_back(read_device(s));
  return rows;
}

std::optional<DeviceRow> Database::device(const std::string& device_key) const {
  sql::Statement s(*db_, fmt::format("SELECT {} FROM devices WHERE device_key = ?", kDeviceColumns));
  s.bind(1, device_key);
  if (!s.step()) return std::nullopt;
  return read_device(s);
}

void Database::record_import(const ImportRow& r) {
  sql::Statement s(*db_, R"(
    INSERT INTO imports(source, content_hash, imported_at, tool_version, rows_added, rows_replaced, rows_rejected)
    VALUES (?, ?, ?, ?, ?, ?, ?))");
  s.bind(1, r.source).bind(2, r.content_hash).bind(3, r.imported_at.empty() ? utc_now() : r.imported_at);
  s.bind(4, r.tool_version).bind(5, r.rows_added).bind(6, r.rows_replaced).bind(7, r.rows_rejected).run();
}

std::vector<ImportRow> Database::imports() const {
  sql::Statement s(*db_, R"(
    SELECT import_id, source, content_hash, imported_at, tool_version, rows_added, rows_replaced, rows_rejected
    FROM imports ORDER BY import_id)");
  std::vector<ImportRow> rows;
  while (s.step()) {
    ImportRow r;
    r.import_id = s.int64(0);
    r.source = s.text(1);
    r.content_hash = s.text(2);
    r.imported_at = s.text(3);
    r.tool_version = s.text(4);
    r.rows_added = s.int64(5);
    r.rows_replaced = s.int64(6);
    r.rows_rejected = s.int64(7);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace ocltune
