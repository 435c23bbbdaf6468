// Fuzz target: tuned rows as text (the .jsonl loader), then every row through validation, merging
// into a database, and the runtime's table. Contract: ocltune::Error or success, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "db/jsonl.h"
#include "db/transfer.h"
#include "runtime/db_verify.h"
#include "runtime/table.h"
#include "tests/fuzz/fuzz_device.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ocltune;
  try {
    const TunedRows rows = parse_jsonl(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.jsonl");
    // What was read is written back exactly as the canonical text, which reads back unchanged.
    const std::string text = to_jsonl(rows);
    try {
      if (to_jsonl(parse_jsonl(text, "again.jsonl")) != text) __builtin_trap();
    } catch (const Error&) {
      __builtin_trap();
    }
    for (const BestRow& r : rows.best) (void)row_problem(r, fuzz::device());
    Database db = Database::open(":memory:");
    merge_rows(db, rows, row_check_by_device(), "fuzz.jsonl");
    TunedTable table(fuzz::device());
    table.add_layer(db, "fuzz", nullptr);
    const ShapeInfo probe = shape_info(nlohmann::json{{"m", 64}, {"n", 64}, {"k", 64}, {"batch", 1}});
    (void)table.nearest("gemm", "fp32", "exact", "", probe, true, 100.0);
  } catch (const Error&) {
  }
  return 0;
}
