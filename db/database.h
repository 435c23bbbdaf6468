// The tuning database: devices, runs, every measurement, and the best configuration per problem.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/database_error.h"
#include "harness/device.h"

namespace ocltune {

namespace sql {
class Connection;
}

// Version of db/schema.sql; a file with a newer one is refused, an older one migrated.
inline constexpr int kSchemaVersion = 1;

struct RunRow {
  std::int64_t run_id = 0;
  std::string device_key;
  std::string started_at, finished_at;
  std::string status;
  std::string tool_version;
  std::string host;
  std::string command;
  std::string strategy;
  std::optional<std::int64_t> seed;
  double compile_seconds = 0, verify_seconds = 0, timing_seconds = 0;
};

struct MeasurementRow {
  std::int64_t measurement_id = 0;
  std::int64_t run_id = 0;
  std::string device_key, op, dtype, math = "exact", shape_key, shape_json, source_hash;
  std::string params;  // canonical configuration text
  std::string role = "search";  // default | search | final
  std::string status;            // ok | compile_error | launch_error | wrong_result | timeout | crash | skipped | cut
  std::string error;
  std::optional<double> median_ns, min_ns, max_ns, spread;
  std::optional<std::int64_t> samples;
  std::optional<double> gflops, gbs, max_error, compile_ms;
  std::string created_at;  // filled in by add_measurement when empty
};

struct BestRow {
  std::string device_key, op, dtype, math = "exact", shape_key, shape_json;
  std::string params_json;
  double median_ns = 0, min_ns = 0, max_ns = 0, spread = 0;
  std::optional<double> gflops, gbs, default_median_ns, confidence;
  std::string source_hash;
  std::optional<std::int64_t> run_id, measurement_id;
  std::string provenance = "{}";
  std::string updated_at;  // filled in when empty
};

// Where results go unless --db says otherwise: $OCLTUNE_DB, else $XDG_CACHE_HOME/ocltune/tuned.db,
// else ~/.cache/ocltune/tuned.db.
std::string default_database_path();

// Current UTC time as ISO 8601, e.g. 2026-11-30T03:27:37Z.
std::string utc_now();

class Database {
 public:
  // Opens or creates `path` (creating parent directories). A file that is not an ocltune database,
  // is corrupt, or has a newer schema is refused with a DatabaseError and left untouched.
  static Database open(const std::string& path);
  // Opens an existing database without ever writing to it.
  static Database open_read_only(const std::string& path);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const;
  int schema_version() const;

  void upsert_device(const DeviceInfo& device);
  // Measured ceilings of a device (see harness/ceilings.h); nullopt until measured.
  void set_device_bandwidth(const std::string& device_key, double copy_bandwidth_gbs);
  std::optional<double> device_bandwidth(const std::string& device_key) const;
  void set_device_peak(const std::string& device_key, double peak_gflops);
  std::optional<double> device_peak(const std::string& device_key) const;

  std::int64_t begin_run(const RunRow& run);
  void finish_run(std::int64_t run_id, const std::string& status, double compile_s, double verify_s, double timing_s);
  std::vector<RunRow> runs() const;

  // Appends one measurement and commits it at once. Returns its id.
  std::int64_t add_measurement(MeasurementRow row);
  // Measurements of one problem (any run), oldest first; source_hash empty = any.
  std::vector<MeasurementRow> measurements(const std::string& device_key, const std::string& op,
                                           const std::string& dtype, const std::string& math,
                                           const std::string& shape_key, const std::string& source_hash = "") const;
  std::int64_t count_measurements() const;

  // Replaces the best row of the same key only when `row` is faster (or there is none).
  // Returns whether it was written.
  bool update_best_if_faster(BestRow row);
  std::optional<BestRow> best(const std::string& device_key, const std::string& op, const std::string& dtype,
                              const std::string& math, const std::string& shape_key) const;
  // All best rows, optionally of one device, ordered by device, op, shape.
  std::vector<BestRow> all_best(const std::string& device_key = "") const;

  sql::Connection& connection();

 private:
  explicit Database(std::unique_ptr<sql::Connection> connection);
  std::unique_ptr<sql::Connection> db_;
};

}  // namespace ocltune
