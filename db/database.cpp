// The tuning database: opening (with refusal of foreign, corrupt or newer files), devices, runs.
#include "db/database.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <sqlite3.h>

#include "db/abandoned_runs.h"
#include "db/migrate.h"
#include "db/schema.h"
#include "db/sqlite.h"

namespace ocltune {
namespace {

namespace fs = std::filesystem;

// Refuses anything that is not a healthy ocltune database; returns its schema version, or 0 for
// an empty SQLite file (which is initialised). Only reads.
int inspect(sql::Connection& db) {
  std::string check;
  try {
    sql::Statement quick(db, "PRAGMA quick_check");
    if (quick.step()) check = quick.text(0);
  } catch (const DatabaseError& e) {
    throw DatabaseError(
        fmt::format("{} is not a usable SQLite database ({}); it was not modified", db.path(), e.what()));
  }
  if (check != "ok") {
    throw DatabaseError(
        fmt::format("{} is corrupt (integrity check: {}); it was not modified", db.path(), check.substr(0, 200)));
  }
  sql::Statement tables(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  std::vector<std::string> names;
  while (tables.step()) names.push_back(tables.text(0));
  if (names.empty()) return 0;
  if (std::find(names.begin(), names.end(), "schema_version") == names.end()) {
    throw DatabaseError(
        fmt::format("{} is an SQLite database but not an ocltune one (no schema_version table); "
                    "it was not modified",
                    db.path()));
  }
  sql::Statement version(db, "SELECT max(version) FROM schema_version");
  if (!version.step() || version.is_null(0)) {
    throw DatabaseError(fmt::format("{} has an empty schema_version table; it was not modified", db.path()));
  }
  const std::int64_t v = version.int64(0);
  if (v > kSchemaVersion) {
    throw DatabaseError(
        fmt::format("{} has schema version {}, newer than this ocltune understands ({}); "
                    "upgrade ocltune. The file was not modified",
                    db.path(), v, kSchemaVersion));
  }
  if (v < 1) throw DatabaseError(fmt::format("{} has an invalid schema version {}", db.path(), v));
  // A file that claims a version must have that version's tables: queries on a half-made or
  // crafted file would otherwise fail later with less clear messages.
  std::vector<std::string> required = {"best", "devices", "measurements", "runs"};
  if (v >= 2) required.push_back("imports");
  for (const std::string& table : required) {
    if (std::find(names.begin(), names.end(), table) == names.end()) {
      throw DatabaseError(
          fmt::format("{} claims schema version {} but has no '{}' table; it was not modified", db.path(), v, table));
    }
  }
  return static_cast<int>(v);
}

// Creates the schema in an empty file. Several processes may find the same file empty at once:
// the transaction (BEGIN IMMEDIATE) lets one create it while the others wait, and each then finds
// the tables there (CREATE ... IF NOT EXISTS) and the version row too (INSERT OR IGNORE on its
// primary key), so the file ends with one row, not one per process.
void initialise(sql::Connection& db) {
  sql::Transaction tx(db);
  db.exec(schema_sql());
  sql::Statement(db, "INSERT OR IGNORE INTO schema_version(version) VALUES (?)").bind(1, kSchemaVersion).run();
  tx.commit();
}

// WAL: readers never block the writer, and a killed process loses no committed row. Switching a
// file into WAL needs it to itself, and while other connections are opening it at the same moment
// SQLite answers SQLITE_BUSY at once rather than waiting (it would deadlock): concurrent first
// opens of one fresh file failed with "database is locked". Once a file is in WAL mode, later
// opens find it so and change nothing.
void use_wal(sql::Connection& db) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int attempt = 0;; ++attempt) {
    try {
      const std::string mode = [&] {
        sql::Statement s(db, "PRAGMA journal_mode");
        return s.step() ? s.text(0) : std::string();
      }();
      if (mode == "wal") return;
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const DatabaseError& e) {
      const int code = e.code() & 0xff;
      if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || std::chrono::steady_clock::now() > give_up) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, 1 + attempt)));
  }
}

}  // namespace

std::string default_database_path() {
  if (const char* env = std::getenv("OCLTUNE_DB"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "ocltune" / "tuned.db").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".cache" / "ocltune" / "tuned.db").string();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Database::Database(std::unique_ptr<sql::Connection> connection) : db_(std::move(connection)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Database Database::open(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) throw DatabaseError(fmt::format("cannot create the directory of {}: {}", path, ec.message()));
  // An existing file is inspected through a read-only connection first: closing a writable
  // connection may checkpoint or roll back a journal, which would modify a file we refuse.
  if (fs::exists(p, ec) && fs::file_size(p, ec) > 0) {
    sql::Connection probe(path, true);
    inspect(probe);
  }
  auto db = std::make_unique<sql::Connection>(path, false);
  int version = inspect(*db);
  if (version == 0) {
    initialise(*db);
    version = inspect(*db);  // another process may have created an older schema's file meanwhile
  }
  if (version < kSchemaVersion) migrate(*db, version);
  use_wal(*db);
  db->exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
  return Database(std::move(db));
}

Database Database::open_read_only(const std::string& path, bool accept_older) {
  if (!fs::exists(path)) throw DatabaseError(fmt::format("database {} does not exist", path));
  auto db = std::make_unique<sql::Connection>(path, true);
  const int version = inspect(*db);
  if (version == 0) throw DatabaseError(fmt::format("{} is an empty SQLite file, not an ocltune database", path));
  if (version < kSchemaVersion && !accept_older) {
    throw DatabaseError(
        fmt::format("{} has the older schema version {}; open it writable once to migrate it", path, version));
  }
  return Database(std::move(db));
}

const std::string& Database::path() const { return db_->path(); }
sql::Connection& Database::connection() { return *db_; }

int Database::schema_version() const {
  sql::Statement s(*db_, "SELECT max(version) FROM schema_version");
  return s.step() ? static_cast<int>(s.int64(0)) : 0;
}

void Database::upsert_device(const DeviceInfo& d) {
  const std::string now = utc_now();
  sql::Statement s(*db_, R"(
    INSERT INTO devices(device_key, platform_name, platform_version, device_name, vendor, driver_version,
                        device_type, compute_units, clock_mhz, global_mem_bytes, local_mem_bytes,
                        max_work_group_size, first_seen, last_seen)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)
    ON CONFLICT(device_key) DO UPDATE SET last_seen = excluded.last_seen, clock_mhz = excluded.clock_mhz)");
  s.bind(1, d.key()).bind(2, d.platform_name).bind(3, d.platform_version).bind(4, d.name).bind(5, d.vendor);
  s.bind(6, d.driver_version).bind(7, device_type_name(d.type)).bind(8, static_cast<std::int64_t>(d.compute_units));
  s.bind(9, static_cast<std::int64_t>(d.clock_mhz)).bind(10, static_cast<std::int64_t>(d.global_mem_bytes));
  s.bind(11, static_cast<std::int64_t>(d.local_mem_bytes)).bind(12, static_cast<std::int64_t>(d.max_work_group_size));
  s.bind(13, now).run();
}

void Database::set_device_bandwidth(const std::string& device_key, double copy_bandwidth_gbs) {
  sql::Statement(*db_, "UPDATE devices SET copy_bandwidth_gbs = ? WHERE device_key = ?")
      .bind(1, copy_bandwidth_gbs)
      .bind(2, device_key)
      .run();
}

std::optional<double> Database::device_bandwidth(const std::string& device_key) const {
  sql::Statement s(*db_, "SELECT copy_bandwidth_gbs FROM devices WHERE device_key = ?");
  s.bind(1, device_key);
  if (!s.step()) return std::nullopt;
  return s.optional_real(0);
}

void Database::set_device_peak(const std::string& device_key, double peak_gflops) {
  sql::Statement(*db_, "UPDATE devices SET peak_gflops = ? WHERE device_key = ?")
      .bind(1, peak_gflops)
      .bind(2, device_key)
      .run();
}

std::optional<double> Database::device_peak(const std::string& device_key) const {
  sql::Statement s(*db_, "SELECT peak_gflops FROM devices WHERE device_key = ?");
  s.bind(1, device_key);
  if (!s.step()) return std::nullopt;
  return s.optional_real(0);
}

std::int64_t Database::begin_run(const RunRow& run) {
  ProcessIdentity owner = this_process();
  if (run.pid) owner = {*run.pid, run.process_start};
  sql::Statement s(*db_, R"(
    INSERT INTO runs(device_key, started_at, status, tool_version, host, command, strategy, seed, pid, process_start)
    VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?))");
  s.bind(1, run.device_key).bind(2, run.started_at.empty() ? utc_now() : run.started_at).bind(3, run.tool_version);
  s.bind(4, run.host).bind(5, run.command).bind(6, run.strategy).bind(7, run.seed).bind(8, owner.pid);
  s.bind(9, owner.start).run();
  return db_->last_insert_rowid();
}

void Database::finish_run(std::int64_t run_id, const std::string& status, double compile_s, double verify_s,
                          double timing_s) {
  sql::Statement s(*db_, R"(
    UPDATE runs SET finished_at = ?, status = ?, compile_seconds = ?, verify_seconds = ?, timing_seconds = ?
    WHERE run_id = ?)");
  s.bind(1, utc_now()).bind(2, status).bind(3, compile_s).bind(4, verify_s).bind(5, timing_s).bind(6, run_id).run();
}

std::vector<RunRow> Database::runs() const {
  // A run's process is new in schema 3 (an older file read as is has none).
  sql::Statement s(*db_, fmt::format(R"(
    SELECT run_id, device_key, started_at, coalesce(finished_at, ''), status, tool_version, host, command, strategy,
           seed, compile_seconds, verify_seconds, timing_seconds, {} FROM runs ORDER BY run_id)",
                                     schema_version() >= 3 ? "pid, process_start" : "NULL, ''"));
  std::vector<RunRow> rows;
  while (s.step()) {
    RunRow r;
    r.run_id = s.int64(0);
    r.device_key = s.text(1);
    r.started_at = s.text(2);
    r.finished_at = s.text(3);
    r.status = s.text(4);
    r.tool_version = s.text(5);
    r.host = s.text(6);
    r.command = s.text(7);
    r.strategy = s.text(8);
    if (!s.is_null(9)) r.seed = s.int64(9);
    r.compile_seconds = s.real(10);
    r.verify_seconds = s.real(11);
    r.timing_seconds = s.real(12);
    if (!s.is_null(13)) r.pid = s.int64(13);
    r.process_start = s.text(14);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace ocltune
