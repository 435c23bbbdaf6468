// Whole-file checks of tuned databases for `ocltune db verify`, `merge` and `import`.
#pragma once

#include <string>
#include <vector>

#include "db/transfer.h"

namespace ocltune {

// The RowCheck of merge_rows: a best row must have a device row, and must be valid (runtime/tuned_rows.h)
// on the device that row describes.
RowCheck row_check_by_device();

struct DatabaseReport {
  int schema_version = 0;
  std::size_t devices = 0, runs = 0, measurements = 0, best = 0;
  std::vector<std::string> problems;  // each names the table and row; empty when the file is valid
};

// Checks a .db file (full SQLite integrity check, foreign keys, schema version, every measurement's
// configuration text and every best row) or a .jsonl file (format and every best row). Throws
// DatabaseError when the file is refused outright (not SQLite, corrupt, foreign, newer). Only reads.
DatabaseReport verify_database(const std::string& path);

}  // namespace ocltune
