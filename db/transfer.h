// Moving tuned rows between databases: export, merge and import (the `ocltune db` subcommands).
#pragma once

#include <functional>
#include <optional>
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
// The checks of a best row that need no op: key fields present, a median time_problem accepts
// (bytes unknown: the 1 ns floor) and non-negative time statistics. Empty when the row passes; db
// import and db verify both apply it, and Database::update_best_if_faster never keeps a stored row
// that fails it.
std::string basic_problem(const BestRow& row);

// Whether a row's time is one a device could have measured (issue 42): a positive number of at
// least kMinRowTimeNs, at which the problem's `bytes` (0: unknown) move no faster than kCacheSpeedup
// times the device's measured copy bandwidth (a problem that fits in a cache beats a copy of a large
// buffer, never by that much) and never faster than kMaxRowGbs. Empty when it is; else why not.
// The one rule of every reader of rows: basic_problem, runtime/tuned_rows.h's check_row (the
// problem's bytes, the recorded device's bandwidth), and the tuner's reuse of earlier rows and its
// comparison with the stored best.
inline constexpr double kMinRowTimeNs = 1;
inline constexpr double kCacheSpeedup = 64;
inline constexpr double kMaxRowGbs = 1e5;  // 100 TB/s
std::string time_problem(double median_ns, double bytes = 0, std::optional<double> copy_bandwidth_gbs = std::nullopt);
// Printable, length-capped form of untrusted text for messages.
std::string printable(std::string_view text, std::size_t max = 96);

}  // namespace ocltune
