// Fuzz target: an arbitrary file opened as a database, as `ocltune db verify` and the runtime's
// loader read it. Contract: the file is refused (DatabaseError) or read; nothing crashes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "db/database.h"
#include "db/jsonl.h"
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
  return 0;
}
