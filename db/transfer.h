// Moving tuned rows between databases: export, merge and import (the `ocltune db` subcommands).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/jsonl.h"

namespace ocltune {

// Why a best row may not be used (empty: it may). `device` is its device row, null when the source
// has none. The db layer does not know the ops; callers pass runtime/tuned_rows.h's check.
using RowCheck = std::function<std::string(const BestRow& row, const DeviceRow* device)>;

// Every device and best row of a database file (.db, any schema version, opened read-only) or a
// .jsonl file. Provenance is completed from the file's runs and devices. Throws DatabaseError.
TunedRows load_tuned_rows(const std::string& path);

// The best rows of one device key (all when empty) and their device rows, provenance completed.
TunedRows export_rows(Database& source, const std::string& device_key);

struct MergeStats {
  int added = 0;                      // keys `into` did not have
  int replaced = 0;                   // keys where the incoming row was faster
  int kept = 0;                       // keys where `into` already had a row at least as fast
  std::vector<std::string> rejected;  // one message per refused row, naming it
};

// Merges `rows` into `into` in one transaction: device rows are copied; a best row that `check`
// refuses is skipped and reported; otherwise the faster row per (device, op, dtype, math, shape)
// wins. An empty provenance source is set to `source` so every row says where it came from.
MergeStats merge_rows(Database& into, const TunedRows& rows, const RowCheck& check, const std::string& source);

// Writes `rows` to `path` as .jsonl (by extension) or as a new .db; the file appears complete or not
// at all (written beside it, then renamed). Refuses to overwrite unless `overwrite`.
void write_tuned_rows(const std::string& path, const TunedRows& rows, bool overwrite);

// "(device_key=..., op=..., dtype=..., shape_key=...)" with hostile bytes escaped and lengths capped,
// for messages about a row.
std::string describe_row(const BestRow& row);
// The checks of a best row that need no op: key fields present, a positive finite median and
// non-negative time statistics. Empty when the row passes; db import and db verify both apply it.
std::string basic_problem(const BestRow& row);
// Printable, length-capped form of untrusted text for messages.
std::string printable(std::string_view text, std::size_t max = 96);

}  // namespace ocltune
