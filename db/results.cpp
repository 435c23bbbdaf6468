// The tuning database: measurements and the best table.
#include <fmt/format.h>

#include "db/database.h"
#include "db/provenance.h"
#include "db/sqlite.h"
#include "db/transfer.h"

namespace ocltune {
namespace {

constexpr const char* kMeasurementColumns =
    "measurement_id, run_id, device_key, op, dtype, math, shape_key, shape_json, source_hash, params, role, status, "
    "error, median_ns, min_ns, max_ns, spread, samples, gflops, gbs, max_error, compile_ms, created_at";

MeasurementRow read_measurement(const sql::Statement& s) {
  MeasurementRow r;
  r.measurement_id = s.int64(0);
  r.run_id = s.int64(1);
  r.device_key = s.text(2);
  r.op = s.text(3);
  r.dtype = s.text(4);
  r.math = s.text(5);
  r.shape_key = s.text(6);
  r.shape_json = s.text(7);
  r.source_hash = s.text(8);
  r.params = s.text(9);
  r.role = s.text(10);
  r.status = s.text(11);
  r.error = s.text(12);
  r.median_ns = s.optional_real(13);
  r.min_ns = s.optional_real(14);
  r.max_ns = s.optional_real(15);
  r.spread = s.optional_real(16);
  if (!s.is_null(17)) r.samples = s.int64(17);
  r.gflops = s.optional_real(18);
  r.gbs = s.optional_real(19);
  r.max_error = s.optional_real(20);
  r.compile_ms = s.optional_real(21);
  r.created_at = s.text(22);
  return r;
}

constexpr const char* kBestColumns =
    "device_key, op, dtype, math, shape_key, shape_json, params_json, median_ns, min_ns, max_ns, spread, gflops, gbs, "
    "default_median_ns, confidence, source_hash, run_id, measurement_id, provenance, updated_at";

BestRow read_best(const sql::Statement& s) {
  BestRow r;
  r.device_key = s.text(0);
  r.op = s.text(1);
  r.dtype = s.text(2);
  r.math = s.text(3);
  r.shape_key = s.text(4);
  r.shape_json = s.text(5);
  r.params_json = s.text(6);
  r.median_ns = s.real(7);
  r.min_ns = s.real(8);
  r.max_ns = s.real(9);
  r.spread = s.real(10);
  r.gflops = s.optional_real(11);
  r.gbs = s.optional_real(12);
  r.default_median_ns = s.optional_real(13);
  r.confidence = s.optional_real(14);
  r.source_hash = s.text(15);
  if (!s.is_null(16)) r.run_id = s.int64(16);
  if (!s.is_null(17)) r.measurement_id = s.int64(17);
  r.provenance = s.text(18);
  r.updated_at = s.text(19);
  return r;
}

}  // namespace

std::int64_t Database::add_measurement(MeasurementRow r) {
  if (r.created_at.empty()) r.created_at = utc_now();
  sql::Statement s(*db_, R"(
    INSERT INTO measurements(run_id, device_key, op, dtype, math, shape_key, shape_json, source_hash, params, role,
                             status, error, median_ns, min_ns, max_ns, spread, samples, gflops, gbs, max_error,
                             compile_ms, created_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22))");
  s.bind(1, r.run_id).bind(2, r.device_key).bind(3, r.op).bind(4, r.dtype).bind(5, r.math).bind(6, r.shape_key);
  s.bind(7, r.shape_json).bind(8, r.source_hash).bind(9, r.params).bind(10, r.role).bind(11, r.status);
  s.bind(12, r.error).bind(13, r.median_ns).bind(14, r.min_ns).bind(15, r.max_ns).bind(16, r.spread);
  s.bind(17, r.samples).bind(18, r.gflops).bind(19, r.gbs).bind(20, r.max_error).bind(21, r.compile_ms);
  s.bind(22, r.created_at).run();  // autocommit: durable before the next evaluation starts
  return db_->last_insert_rowid();
}

void Database::complete_measurement(std::int64_t measurement_id, MeasurementRow r) {
  if (r.created_at.empty()) r.created_at = utc_now();
  sql::Statement s(*db_, R"(
    UPDATE measurements SET role = ?2, status = ?3, error = ?4, median_ns = ?5, min_ns = ?6, max_ns = ?7, spread = ?8,
                            samples = ?9, gflops = ?10, gbs = ?11, max_error = ?12, compile_ms = ?13, created_at = ?14
    WHERE measurement_id = ?1)");
  s.bind(1, measurement_id).bind(2, r.role).bind(3, r.status).bind(4, r.error).bind(5, r.median_ns);
  s.bind(6, r.min_ns).bind(7, r.max_ns).bind(8, r.spread).bind(9, r.samples).bind(10, r.gflops).bind(11, r.gbs);
  s.bind(12, r.max_error).bind(13, r.compile_ms).bind(14, r.created_at).run();  // autocommit, like add_measurement
}

std::vector<MeasurementRow> Database::measurements(const std::string& device_key, const std::string& op,
                                                   const std::string& dtype, const std::string& math,
                                                   const std::string& shape_key, const std::string& source_hash) const {
  sql::Statement s(*db_, fmt::format(R"(
    SELECT {} FROM measurements
    WHERE device_key = ?1 AND op = ?2 AND dtype = ?3 AND math = ?4 AND shape_key = ?5 AND (?6 = '' OR source_hash = ?6)
    ORDER BY measurement_id)",
                                     kMeasurementColumns));
  s.bind(1, device_key).bind(2, op).bind(3, dtype).bind(4, math).bind(5, shape_key).bind(6, source_hash);
  std::vector<MeasurementRow> rows;
  while (s.step()) rows.push_back(read_measurement(s));
  return rows;
}

std::int64_t Database::count_measurements() const {
  sql::Statement s(*db_, "SELECT count(*) FROM measurements");
  return s.step() ? s.int64(0) : 0;
}

bool Database::update_best_if_faster(BestRow r, const std::function<std::string(const BestRow&)>& refuse_stored) {
  if (r.updated_at.empty()) r.updated_at = utc_now();
  sql::Transaction tx(*db_);
  bool replace_stored = false;
  if (const std::optional<BestRow> stored = best(r.device_key, r.op, r.dtype, r.math, r.shape_key)) {
    replace_stored = !basic_problem(*stored).empty() || (refuse_stored && !refuse_stored(*stored).empty());
  }
  sql::Statement s(*db_, fmt::format(R"(
    INSERT INTO best({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)
    ON CONFLICT(device_key, op, dtype, math, shape_key) DO UPDATE SET
      shape_json = excluded.shape_json, params_json = excluded.params_json, median_ns = excluded.median_ns,
      min_ns = excluded.min_ns, max_ns = excluded.max_ns, spread = excluded.spread, gflops = excluded.gflops,
      gbs = excluded.gbs, default_median_ns = excluded.default_median_ns, confidence = excluded.confidence,
      source_hash = excluded.source_hash, run_id = excluded.run_id, measurement_id = excluded.measurement_id,
      provenance = excluded.provenance, updated_at = excluded.updated_at
    WHERE excluded.median_ns < best.median_ns OR ?21)",
                                     kBestColumns));
  s.bind(1, r.device_key).bind(2, r.op).bind(3, r.dtype).bind(4, r.math).bind(5, r.shape_key).bind(6, r.shape_json);
  s.bind(7, r.params_json).bind(8, r.median_ns).bind(9, r.min_ns).bind(10, r.max_ns).bind(11, r.spread);
  s.bind(12, r.gflops).bind(13, r.gbs).bind(14, r.default_median_ns).bind(15, r.confidence).bind(16, r.source_hash);
  s.bind(17, r.run_id).bind(18, r.measurement_id).bind(19, r.provenance).bind(20, r.updated_at);
  s.bind(21, replace_stored ? 1 : 0).run();
  const bool written = db_->changes() > 0;
  if (written) {
    sql::Statement p(*db_, fmt::format("UPDATE best SET provenance = {} WHERE device_key = ? AND op = ? AND dtype = ? "
                                       "AND math = ? AND shape_key = ?",
                                       complete_provenance_sql()));
    p.bind(1, r.device_key).bind(2, r.op).bind(3, r.dtype).bind(4, r.math).bind(5, r.shape_key).run();
  }
  tx.commit();
  return written;
}

std::optional<BestRow> Database::best(const std::string& device_key, const std::string& op, const std::string& dtype,
                                      const std::string& math, const std::string& shape_key) const {
  sql::Statement s(
      *db_,
      fmt::format("SELECT {} FROM best WHERE device_key = ? AND op = ? AND dtype = ? AND math = ? AND shape_key = ?",
                  kBestColumns));
  s.bind(1, device_key).bind(2, op).bind(3, dtype).bind(4, math).bind(5, shape_key);
  if (!s.step()) return std::nullopt;
  return read_best(s);
}

std::vector<BestRow> Database::all_best(const std::string& device_key) const {
  sql::Statement s(*db_, fmt::format("SELECT {} FROM best WHERE (?1 = '' OR device_key = ?1) "
                                     "ORDER BY device_key, op, dtype, math, shape_key",
                                     kBestColumns));
  s.bind(1, device_key);
  std::vector<BestRow> rows;
  while (s.step()) rows.push_back(read_best(s));
  return rows;
}

}  // namespace ocltune
