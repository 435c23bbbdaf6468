// A thin RAII layer over the SQLite C API: a connection and prepared statements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace ocltune::sql {

class Connection;

// A prepared statement; bind by 1-based index, step through rows, read columns by 0-based index.
class Statement {
 public:
  Statement(Connection& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // True while a row is available; false when done. Throws DatabaseError on failure.
  bool step();
  // Runs to completion (for statements without result rows).
  void run();
  void reset();

  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::optional<double> optional_real(int column) const;
  std::string text(int column) const;

 private:
  Connection& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Connection {
 public:
  // Opens `path` (read-only: never creates or modifies it). Throws DatabaseError.
  Connection(const std::string& path, bool read_only);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements without results.
  void exec(std::string_view sql);
  std::int64_t last_insert_rowid() const;
  int changes() const;
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  std::string message() const;  // sqlite3_errmsg

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back if not committed before destruction. Inside another
// transaction it is a savepoint, so functions that commit their own work compose into one
// transaction (an import of many rows commits all of them or none).
class Transaction {
 public:
  explicit Transaction(Connection& db);
  ~Transaction();
  void commit();

 private:
  Connection& db_;
  bool nested_ = false;
  bool done_ = false;
};

}  // namespace ocltune::sql
