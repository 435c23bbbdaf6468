// Claims on evaluations for tuners sharing one problem's candidates (docs/decisions/0038).
#include "db/claims.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "db/database.h"
#include "db/sqlite.h"

namespace ocltune {
namespace {

// "(1, 2, 3)": run ids are integers, so the list is written into the SQL text.
std::string id_list(const std::vector<std::int64_t>& ids) {
  return ids.empty() ? std::string("(NULL)") : fmt::format("({})", fmt::join(ids, ", "));
}

constexpr const char* kSameProblem =
    "device_key = ?1 AND op = ?2 AND dtype = ?3 AND math = ?4 AND shape_key = ?5 AND source_hash = ?6";

void bind_problem(sql::Statement& s, const MeasurementRow& row) {
  s.bind(1, row.device_key).bind(2, row.op).bind(3, row.dtype).bind(4, row.math).bind(5, row.shape_key);
  s.bind(6, row.source_hash);
}

}  // namespace

Claim claim_measurement(Database& db, MeasurementRow row, const std::vector<std::int64_t>& group_runs,
                        std::int64_t limit) {
  sql::Connection& c = db.connection();
  // BEGIN IMMEDIATE: the look-up and the insert hold the write lock together, so two workers
  // never both find a configuration free.
  sql::Transaction tx(c);
  std::string holder;
  if (row.role == "search") {
    holder = fmt::format("SELECT min(measurement_id) FROM measurements WHERE {} AND role = 'search' AND params = ?7",
                         kSameProblem);
  } else if (row.role == "default") {
    holder = fmt::format(
        "SELECT min(measurement_id) FROM measurements WHERE {} AND role = 'default' AND params = ?7 AND run_id IN {}",
        kSameProblem, id_list(group_runs));
  } else {
    holder = fmt::format("SELECT min(measurement_id) FROM measurements WHERE {} AND role = 'final' AND run_id IN {}",
                         kSameProblem, id_list(group_runs));
  }
  {
    sql::Statement s(c, holder);
    bind_problem(s, row);
    if (row.role != "final") s.bind(7, row.params);
    if (s.step() && !s.is_null(0)) return Claim{ClaimResult::kTaken, s.int64(0)};
  }
  if (row.role == "search" && limit > 0) {
    sql::Statement s(
        c, fmt::format("SELECT count(DISTINCT params) FROM measurements WHERE {} AND role = 'search'", kSameProblem));
    bind_problem(s, row);
    if (s.step() && s.int64(0) >= limit) return Claim{ClaimResult::kFull, 0};
  }
  const std::int64_t id = db.add_measurement(std::move(row));
  tx.commit();
  return Claim{ClaimResult::kClaimed, id};
}

std::map<std::int64_t, ClaimedRow> rows_by_id(Database& db, const std::vector<std::int64_t>& ids) {
  std::map<std::int64_t, ClaimedRow> out;
  if (ids.empty()) return out;
  sql::Statement s(db.connection(), fmt::format(R"(
    SELECT measurement_id, device_key, dtype, math, shape_key, source_hash, params, role, status, median_ns,
           shape_json, run_id
    FROM measurements WHERE measurement_id IN {})",
                                                id_list(ids)));
  while (s.step()) {
    ClaimedRow r;
    MeasuredPoint& p = r.point;
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
    r.run_id = s.int64(11);
    out.emplace(p.measurement_id, std::move(r));
  }
  return out;
}

std::vector<PendingRow> pending_rows_of_run(Database& db, std::int64_t run_id) {
  sql::Statement s(db.connection(), R"(
    SELECT measurement_id, op, shape_key, source_hash, params, role FROM measurements
    WHERE run_id = ?1 AND status = 'pending' ORDER BY measurement_id)");
  s.bind(1, run_id);
  std::vector<PendingRow> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5)});
  return out;
}

void release_claim(Database& db, std::int64_t measurement_id) {
  sql::Statement(db.connection(), "DELETE FROM measurements WHERE measurement_id = ?1 AND status = 'pending'")
      .bind(1, measurement_id)
      .run();
}

void record_claim_as_crash(Database& db, std::int64_t measurement_id, const std::string& error) {
  sql::Statement(db.connection(), R"(
    UPDATE measurements SET status = 'crash', error = ?2, created_at = ?3
    WHERE measurement_id = ?1 AND status = 'pending')")
      .bind(1, measurement_id)
      .bind(2, error)
      .bind(3, utc_now())
      .run();
}

RunCounts count_run_rows(Database& db, std::int64_t run_id) {
  sql::Statement s(db.connection(), R"(
    SELECT coalesce(sum(role <> 'final' AND status <> 'pending'), 0), coalesce(sum(role <> 'final' AND status = 'ok'), 0),
           coalesce(sum(role = 'final' AND status <> 'pending'), 0)
    FROM measurements WHERE run_id = ?1)");
  s.bind(1, run_id);
  RunCounts c;
  if (s.step()) c = {s.int64(0), s.int64(1), s.int64(2)};
  return c;
}

}  // namespace ocltune
