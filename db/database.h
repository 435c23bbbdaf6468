// The tuning database: devices, runs, every measurement, and the best configuration per problem.
#pragma once

#include <cstdint>
#include <functional>
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
// Version 2 added the `imports` table and complete provenance on `best` rows; version 3 `pending`
// measurements, `abandoned` runs, a run's owning process and a primary key on schema_version.
inline constexpr int kSchemaVersion = 3;

// The status of a measurement written before its in-process evaluation and replaced by the outcome
// after it (not a Status: it is never an outcome, and never a result).
inline constexpr const char* kPendingStatus = "pending";

// One row of `devices`: what a device key stands for (enough to rebuild the DeviceInfo limits a
// configuration is validated against, and the device class).
struct DeviceRow {
  std::string device_key, platform_name, platform_version, device_name, vendor, driver_version, device_type;
  std::int64_t compute_units = 0, clock_mhz = 0, global_mem_bytes = 0, local_mem_bytes = 0, max_work_group_size = 0;
  std::optional<double> copy_bandwidth_gbs, peak_gflops;
  std::string first_seen, last_seen;
};

// One database merged into this one by `ocltune db import`.
struct ImportRow {
  std::int64_t import_id = 0;
  std::string source, content_hash, imported_at, tool_version;
  std::int64_t rows_added = 0, rows_replaced = 0, rows_rejected = 0;
};

struct RunRow {
  std::int64_t run_id = 0;
  std::string device_key;
  std::string started_at, finished_at;
  std::string status;  // running | finished | failed | interrupted | abandoned
  std::string tool_version;
  std::string host;
  std::string command;
  std::string strategy;
  std::optional<std::int64_t> seed;
  double compile_seconds = 0, verify_seconds = 0, timing_seconds = 0;
  // The process running it (db/abandoned_runs.h); begin_run fills in the caller's when unset.
  std::optional<std::int64_t> pid;
  std::string process_start;
};

struct MeasurementRow {
  std::int64_t measurement_id = 0;
  std::int64_t run_id = 0;
  std::string device_key, op, dtype, math = "exact", shape_key, shape_json, source_hash;
  std::string params;           // canonical configuration text
  std::string role = "search";  // default | search | final
  // ok | compile_error | launch_error | wrong_result | timeout | crash | skipped | cut, or pending
  std::string status;
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
  // Opens an existing database without ever writing to it. An older schema is refused unless
  // `accept_older` (readers of the tables every version has, such as the runtime library).
  static Database open_read_only(const std::string& path, bool accept_older = false);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const;
  int schema_version() const;

  void upsert_device(const DeviceInfo& device);
  // Copies a device row from another database; an existing row keeps its description and widens
  // its first/last seen dates. Ceilings are taken when this one has none.
  void merge_device(const DeviceRow& row);
  std::vector<DeviceRow> devices() const;
  std::optional<DeviceRow> device(const std::string& device_key) const;
  // Measured ceilings of a device (see harness/ceilings.h); nullopt until measured.
  void set_device_bandwidth(const std::string& device_key, double copy_bandwidth_gbs);
  std::optional<double> device_bandwidth(const std::string& device_key) const;
  void set_device_peak(const std::string& device_key, double peak_gflops);
  std::optional<double> device_peak(const std::string& device_key) const;

  // Records a run as `running`, owned by this process unless `run.pid` is set.
  std::int64_t begin_run(const RunRow& run);
  void finish_run(std::int64_t run_id, const std::string& status, double compile_s, double verify_s, double timing_s);
  std::vector<RunRow> runs() const;

  // Appends one measurement and commits it at once. Returns its id.
  std::int64_t add_measurement(MeasurementRow row);
  // Replaces a pending measurement (see kPendingStatus) with its outcome: every column but the id,
  // run and problem. Committed at once.
  void complete_measurement(std::int64_t measurement_id, MeasurementRow row);
  // Measurements of one problem (any run), oldest first; source_hash empty = any.
  std::vector<MeasurementRow> measurements(const std::string& device_key, const std::string& op,
                                           const std::string& dtype, const std::string& math,
                                           const std::string& shape_key, const std::string& source_hash = "") const;
  std::int64_t count_measurements() const;

  // Replaces the best row of the same key only when `row` is faster, there is none, or the stored
  // row is not one to keep: basic_problem (db/transfer.h) or `refuse_stored` gives a reason (a time
  // no device could reach, docs/decisions/0009). Returns whether it was written. Provenance fields
  // the row lacks (host, date, tool_version, driver, device) are filled in from its run and device rows.
  bool update_best_if_faster(BestRow row, const std::function<std::string(const BestRow&)>& refuse_stored = {});
  std::optional<BestRow> best(const std::string& device_key, const std::string& op, const std::string& dtype,
                              const std::string& math, const std::string& shape_key) const;
  // All best rows, optionally of one device, ordered by device, op, shape.
  std::vector<BestRow> all_best(const std::string& device_key = "") const;

  // Imports recorded by `ocltune db import`, oldest first.
  void record_import(const ImportRow& row);
  std::vector<ImportRow> imports() const;

  sql::Connection& connection();

 private:
  explicit Database(std::unique_ptr<sql::Connection> connection);
  std::unique_ptr<sql::Connection> db_;
};

}  // namespace ocltune
