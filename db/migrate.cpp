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

struct Step {
  int to;
  void (*apply)(sql::Connection&);
};
constexpr Step kSteps[] = {{2, to_version_2}};

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
    for (const Step& step : kSteps) {
      if (step.to <= from_version) continue;
      step.apply(db);
      sql::Statement(db, "INSERT INTO schema_version(version) VALUES (?)").bind(1, step.to).run();
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
