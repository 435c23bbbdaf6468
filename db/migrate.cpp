// Schema migrations: an older database is upgraded in one transaction after a backup copy.
#include "db/migrate.h"

#include <filesystem>

#include <fmt/format.h>

#include "db/database.h"
#include "db/provenance.h"
#include "db/sqlite.h"

namespace ocltune {
namespace {

// Version 1 -> 2: the imports table, and provenance completed from each row's run and device.
void to_version_2(sql::Connection& db) {
  db.exec(R"(
    CREATE TABLE imports (
      import_id INTEGER PRIMARY KEY AUTOINCREMENT,
      source TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      imported_at TEXT NOT NULL,
      tool_version TEXT NOT NULL,
      rows_added INTEGER NOT NULL,
      rows_replaced INTEGER NOT NULL,
      rows_rejected INTEGER NOT NULL
    ))");
  db.exec(fmt::format("UPDATE best SET provenance = {}", complete_provenance_sql()));
}

// Version 2 -> 3: `pending` measurements, `abandoned` runs, a run's owning process, and one
// schema_version row per version. SQLite cannot alter a CHECK constraint, so the three tables are
// rebuilt (create, copy, drop, rename; foreign keys are off during a migration) with every row kept.
void to_version_3(sql::Connection& db) {
  db.exec(R"(
    CREATE TABLE schema_version_v3 (
      version INTEGER PRIMARY KEY,
      tool TEXT NOT NULL DEFAULT 'ocltune'
    );
    INSERT OR IGNORE INTO schema_version_v3(version, tool) SELECT version, tool FROM schema_version ORDER BY rowid;
    DROP TABLE schema_version;
    ALTER TABLE schema_version_v3 RENAME TO schema_version;

    CREATE TABLE runs_v3 (
      run_id INTEGER PRIMARY KEY AUTOINCREMENT,
      device_key TEXT NOT NULL REFERENCES devices(device_key),
      started_at TEXT NOT NULL,
      finished_at TEXT,
      status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'finished', 'failed', 'interrupted', 'abandoned')),
      tool_version TEXT NOT NULL,
      host TEXT NOT NULL DEFAULT '',
      command TEXT NOT NULL DEFAULT '',
      strategy TEXT NOT NULL DEFAULT '',
      seed INTEGER,
      compile_seconds REAL NOT NULL DEFAULT 0,
      verify_seconds REAL NOT NULL DEFAULT 0,
      timing_seconds REAL NOT NULL DEFAULT 0,
      pid INTEGER,
      process_start TEXT NOT NULL DEFAULT ''
    );
    INSERT INTO runs_v3(run_id, device_key, started_at, finished_at, status, tool_version, host, command, strategy,
                        seed, compile_seconds, verify_seconds, timing_seconds)
      SELECT run_id, device_key, started_at, finished_at, status, tool_version, host, command, strategy, seed,
             compile_seconds, verify_seconds, timing_seconds FROM runs ORDER BY run_id;
    DROP TABLE runs;
    ALTER TABLE runs_v3 RENAME TO runs;

    CREATE TABLE measurements_v3 (
      measurement_id INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id INTEGER NOT NULL REFERENCES runs(run_id),
      device_key TEXT NOT NULL,
      op TEXT NOT NULL,
      dtype TEXT NOT NULL,
      math TEXT NOT NULL DEFAULT 'exact',
      shape_key TEXT NOT NULL,
      shape_json TEXT NOT NULL,
      source_hash TEXT NOT NULL,
      params TEXT NOT NULL,
      role TEXT NOT NULL DEFAULT 'search' CHECK (role IN ('default', 'search', 'final')),
      status TEXT NOT NULL CHECK (status IN ('ok', 'compile_error', 'launch_error', 'wrong_result', 'timeout',
                                             'crash', 'skipped', 'cut', 'pending')),
      error TEXT NOT NULL DEFAULT '',
      median_ns REAL, min_ns REAL, max_ns REAL, spread REAL, samples INTEGER,
      gflops REAL, gbs REAL,
      max_error REAL,
      compile_ms REAL,
      created_at TEXT NOT NULL
    );
    INSERT INTO measurements_v3 SELECT * FROM measurements ORDER BY measurement_id;
    DROP TABLE measurements;
    ALTER TABLE measurements_v3 RENAME TO measurements;
    CREATE INDEX IF NOT EXISTS measurements_by_problem
      ON measurements(device_key, op, dtype, math, shape_key, source_hash);
  )");
}

struct Step {
  int to;
  void (*apply)(sql::Connection&);
};
constexpr Step kSteps[] = {{2, to_version_2}, {3, to_version_3}};

// <path>.v<from>.bak, or .bak.2, .bak.3 ... when an earlier backup is in the way (never overwritten).
std::string backup_path(const std::string& path, int from_version) {
  const std::string base = fmt::format("{}.v{}.bak", path, from_version);
  std::string candidate = base;
  for (int i = 2; std::filesystem::exists(candidate); ++i) candidate = fmt::format("{}.{}", base, i);
  return candidate;
}

}  // namespace

std::string migrate(sql::Connection& db, int from_version) {
  if (from_version < 1 || from_version >= kSchemaVersion) {
    throw DatabaseError(
        fmt::format("{}: no migration from schema version {} to {}", db.path(), from_version, kSchemaVersion));
  }
  // VACUUM INTO writes a consistent copy (the WAL included) without touching the original.
  const std::string backup = backup_path(db.path(), from_version);
  sql::Statement copy(db, "VACUUM INTO ?");
  copy.bind(1, backup);
  try {
    copy.run();
  } catch (const DatabaseError& e) {
    throw DatabaseError(
        fmt::format("{}: cannot write the backup {} before migrating ({}); the database was not "
                    "modified",
                    db.path(), backup, e.what()));
  }
  sql::Transaction tx(db);
  try {
    // Read again under the write lock: another process may have migrated the file meanwhile.
    const std::int64_t now = [&] {
      sql::Statement current(db, "SELECT max(version) FROM schema_version");
      return current.step() && !current.is_null(0) ? current.int64(0) : std::int64_t{from_version};
    }();
    for (const Step& step : kSteps) {
      if (step.to <= now) continue;
      step.apply(db);
      sql::Statement(db, "INSERT OR IGNORE INTO schema_version(version) VALUES (?)").bind(1, step.to).run();
    }
    tx.commit();
  } catch (const DatabaseError& e) {
    throw DatabaseError(
        fmt::format("{}: migration from schema version {} failed and was rolled back ({}); a copy "
                    "of the original is at {}",
                    db.path(), from_version, e.what(), backup));
  }
  return backup;
}

}  // namespace ocltune
