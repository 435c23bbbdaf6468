// Fuzz target: an arbitrary file opened as a database, as `ocltune db verify` and the runtime's
// loader read it. Contract: the file is refused (DatabaseError) or read; nothing crashes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "db/abandoned_runs.h"
#include "db/database.h"
#include "db/jsonl.h"
#include "db/space_records.h"
#include "db/sqlite.h"
#include "db/transfer.h"
#include "runtime/db_verify.h"
#include "runtime/table.h"
#include "tests/fuzz/fuzz_device.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ocltune;
  static const std::string path = "/tmp/ocltune-fuzz-" + std::to_string(getpid()) + ".db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    (void)verify_database(path);
  } catch (const Error&) {
  }
  try {
    (void)to_jsonl(load_tuned_rows(path));  // what `ocltune db export -o x.jsonl` writes
  } catch (const Error&) {
  }
  try {
    Database db = Database::open_read_only(path, /*accept_older=*/true);
    TunedTable table(fuzz::device());
    table.add_layer(db, "fuzz", nullptr);
  } catch (const Error&) {
  }
  // What a tuner reads back: its runs (whose process may be judged gone) and every measurement
  // of each problem, pending and crashed rows included, and the model strategy's warm start.
  try {
    Database db = Database::open_read_only(path, /*accept_older=*/true);
    for (const RunRow& run : db.runs()) (void)run_owner_gone(run, run.host);
    std::vector<std::pair<std::string, std::string>> problems;
    {
      sql::Statement s(db.connection(), "SELECT DISTINCT op, shape_key FROM measurements LIMIT 16");
      while (s.step()) problems.emplace_back(s.text(0), s.text(1));
    }
    for (const auto& [op, shape_key] : problems) {
      int points = 0;
      for (const MeasuredPoint& m : shape_measurements(db, op, shape_key)) {
        if (++points > 8) break;  // each reads the whole problem again: keep an input's cost linear
        for (const MeasuredPoint& row :
             measurements_after(db, m.device_key, op, m.dtype, m.math, m.shape_key, m.source_hash, 0)) {
          try {
            (void)parse_config(row.params);
          } catch (const Error&) {
          }
        }
        (void)db.measurements(m.device_key, op, m.dtype, m.math, m.shape_key);
      }
      (void)op_measurements(db, op, "fp32", 64);
    }
  } catch (const Error&) {
  }
  return 0;
}
