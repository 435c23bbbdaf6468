// A thin RAII layer over the SQLite C API: a connection and prepared statements.
#include "db/sqlite.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include "db/database_error.h"

namespace ocltune::sql {

Statement::Statement(Connection& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    throw DatabaseError(fmt::format("{}: cannot prepare statement: {}", db.path(), db.message()));
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string message = db_.message();
  sqlite3_reset(stmt_);
  throw DatabaseError(fmt::format("{}: {}", db_.path(), message), rc);
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}
std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

namespace {

// A file: URI of `path` for sqlite3_open_v2 with SQLITE_OPEN_URI: '%', '?' and '#' escaped.
std::string file_uri(const std::string& path, const char* query) {
  std::string uri = "file:";
  for (const char ch : path) {
    if (ch == '%' || ch == '?' || ch == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(ch));
    } else {
      uri += ch;
    }
  }
  return uri + "?" + query;
}

// Whether a read-only connection cannot read the file because WAL mode needs a -shm file it may
// not create (a root-owned directory, a read-only mount, a file installed under /usr/share).
bool needs_immutable(sqlite3* db) {
  const int rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  return (rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN;
}

}  // namespace

Connection::Connection(const std::string& path, bool read_only) : path_(path) {
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc == SQLITE_OK && read_only) {
    if (needs_immutable(db_)) {
      // Nobody can write where we cannot create -shm either: read the file as immutable (no locks,
      // no -shm). A -wal left beside it is not read; exports and shipped files use a rollback
      // journal, so they never leave one.
      sqlite3_close(db_);
      db_ = nullptr;
      rc = sqlite3_open_v2(file_uri(path, "immutable=1").c_str(), &db_,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr);
    }
  }
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw DatabaseError(fmt::format("cannot open database {}: {}", path, message), rc);
  }
  // Another process may hold the write lock briefly (two tuners on one file): wait, don't fail.
  sqlite3_busy_timeout(db_, 30000);
}

Connection::~Connection() { sqlite3_close(db_); }

void Connection::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    const std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    throw DatabaseError(fmt::format("{}: {}", path_, message), rc);
  }
}

std::int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Connection::changes() const { return sqlite3_changes(db_); }
std::string Connection::message() const { return sqlite3_errmsg(db_); }

Transaction::Transaction(Connection& db) : db_(db), nested_(sqlite3_get_autocommit(db.handle()) == 0) {
  db_.exec(nested_ ? "SAVEPOINT ocltune_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec(nested_ ? "ROLLBACK TO ocltune_nested; RELEASE ocltune_nested" : "ROLLBACK");
    } catch (...) {
      // Destructors never throw; a failed rollback leaves SQLite to roll back on close.
    }
  }
}

void Transaction::commit() {
  db_.exec(nested_ ? "RELEASE ocltune_nested" : "COMMIT");
  done_ = true;
}

}  // namespace ocltune::sql
