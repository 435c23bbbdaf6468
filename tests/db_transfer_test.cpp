// Schema migration from version 1, provenance, the JSON-lines format, and merging rows.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/jsonl.h"
#include "db/sqlite.h"
#include "db/transfer.h"
#include "runtime/db_verify.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

const DeviceInfo& device() { return testing::test_session().device(); }

int raw_version(const std::string& path) {
  sql::Connection c(path, true);
  sql::Statement s(c, "SELECT max(version) FROM schema_version");
  return s.step() ? static_cast<int>(s.int64(0)) : -1;
}

std::string write_v1(const std::string& name) {
  return testing::write_version1_database(
      testing::temp_path(name), {device()},
      {testing::gemm_row(device().key(), {.m = 40, .n = 24, .k = 31}, testing::small_tile_config(), 500),
       testing::gemm_row(device().key(), {.m = 8, .n = 8, .k = 8}, gemm_default_config(), 90)});
}

TEST(Migration, Version1IsMigratedInPlaceAfterABackupCopy) {
  const std::string path = write_v1("v1.db");
  const std::string original = testing::file_bytes(path);
  {
    Database db = Database::open(path);
    EXPECT_EQ(db.schema_version(), 2);
    EXPECT_TRUE(db.imports().empty());
    const auto rows = db.all_best();
    ASSERT_EQ(rows.size(), 2u);
    const nlohmann::json p = nlohmann::json::parse(rows[0].provenance);
    EXPECT_EQ(p["host"], "oldhost");
    EXPECT_EQ(p["tool_version"], "0.0.9");
    EXPECT_EQ(p["date"], "2024-01-01T00:00:00Z");
    EXPECT_EQ(p["driver"], device().driver_version);
    EXPECT_EQ(p["device"], "old device") << "what the row already said wins";
  }
  const std::string backup = path + ".v1.bak";
  ASSERT_TRUE(std::filesystem::exists(backup));
  EXPECT_EQ(raw_version(backup), 1);
  Database old = Database::open_read_only(backup, /*accept_older=*/true);
  EXPECT_EQ(old.all_best().size(), 2u);
  EXPECT_NE(testing::file_bytes(path), original);
}

TEST(Migration, AnEarlierBackupIsNeverOverwritten) {
  const std::string path = write_v1("v1-twice.db");
  { std::ofstream(path + ".v1.bak") << "an earlier backup"; }
  { Database::open(path); }
  EXPECT_EQ(testing::file_bytes(path + ".v1.bak"), "an earlier backup");
  EXPECT_EQ(raw_version(path + ".v1.bak.2"), 1);
}

TEST(Migration, AFailedMigrationIsRolledBackWholly) {
  const std::string path = write_v1("v1-broken.db");
  {
    // A table in the way of version 2's new one makes the step fail half-way.
    sql::Connection c(path, false);
    c.exec("CREATE TABLE imports(x)");
  }
  try {
    Database::open(path);
    FAIL() << "the migration should have failed";
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find("rolled back"), std::string::npos) << e.what();
  }
  EXPECT_EQ(raw_version(path), 1);
  Database db = Database::open_read_only(path, true);
  EXPECT_EQ(nlohmann::json::parse(db.all_best()[0].provenance), nlohmann::json({{"device", "old device"}}));
}

TEST(Provenance, EveryNewBestRowIsCompletedFromItsRunAndDevice) {
  Database db = Database::open(testing::temp_path("prov.db"));
  db.upsert_device(device());
  RunRow run;
  run.device_key = device().key();
  run.tool_version = "9.9.9";
  run.host = "bench-host";
  BestRow row = testing::gemm_row(device().key(), {.m = 4}, gemm_default_config());
  row.run_id = db.begin_run(run);
  db.update_best_if_faster(row);
  const nlohmann::json p = nlohmann::json::parse(db.all_best()[0].provenance);
  EXPECT_EQ(p["host"], "bench-host");
  EXPECT_EQ(p["tool_version"], "9.9.9");
  EXPECT_EQ(p["driver"], device().driver_version);
  EXPECT_EQ(p["device"], device().name);
  EXPECT_FALSE(p["date"].get<std::string>().empty());
}

TEST(Jsonl, RoundTripsExactly) {
  const std::string path = write_v1("jsonl-src.db");
  const TunedRows rows = load_tuned_rows(path);
  ASSERT_EQ(rows.best.size(), 2u);
  const std::string text = to_jsonl(rows);
  const TunedRows back = parse_jsonl(text, "x.jsonl");
  EXPECT_EQ(to_jsonl(back), text);
  ASSERT_EQ(back.best.size(), 2u);
  EXPECT_EQ(back.best[0].params_json, rows.best[0].params_json);
  EXPECT_EQ(back.best[0].shape_json, rows.best[0].shape_json);
  EXPECT_EQ(back.devices.at(0).local_mem_bytes, rows.devices.at(0).local_mem_bytes);
  EXPECT_NE(text.find("\"shape\":{"), std::string::npos) << "shapes are nested objects, readable in a diff";
}

TEST(Jsonl, RefusesAnythingButTheFormatNamingTheLine) {
  const std::string header = R"({"format":"ocltune-tuned-rows","schema_version":2})";
  const std::string good = to_jsonl(load_tuned_rows(write_v1("jsonl-good.db")));
  const std::string best_line = good.substr(good.rfind("{\"table\":\"best\""));
  const auto refused = [](const std::string& text, const std::string& expected) {
    try {
      parse_jsonl(text, "f.jsonl");
      ADD_FAILURE() << "accepted: " << text.substr(0, 200);
    } catch (const DatabaseError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused("", "empty file");
  refused(R"({"format":"something else","schema_version":2})", "f.jsonl:1: not an ocltune");
  refused(R"({"format":"ocltune-tuned-rows","schema_version":3})", "newer");
  refused(header + "\n[1,2,3]", "f.jsonl:2: not a JSON object");
  refused(header + "\n{\"table\":\"users\"}", "unknown table");
  std::string extra = best_line;
  extra.insert(1, R"("evil":1,)");
  refused(header + "\n" + extra, "unknown field 'evil'");
  std::string typed = best_line;
  typed.replace(typed.find("\"median_ns\":") + 12, 1, "\"fast\",\"x\":");
  refused(header + "\n" + typed, "f.jsonl:2");
  refused(header + "\n" + std::string(2 << 20, ' ') + "{}", "line longer than");
  std::string missing = best_line;
  missing.replace(missing.find("\"op\":"), 5, "\"oq\":");
  refused(header + "\n" + missing, "missing field 'op'");
}

TEST(Merge, KeepsTheFasterRowRecordsItsSourceAndRejectsInvalidRows) {
  const GemmShape shape{.m = 40, .n = 24, .k = 31};
  TunedRows slow, fast;
  DeviceRow d;
  d.device_key = device().key();
  d.vendor = device().vendor;
  d.device_type = device_type_name(device().type);
  d.local_mem_bytes = static_cast<std::int64_t>(device().local_mem_bytes);
  d.max_work_group_size = static_cast<std::int64_t>(device().max_work_group_size);
  slow.devices = fast.devices = {d};
  slow.best = {testing::gemm_row(d.device_key, shape, gemm_default_config(), 900)};
  fast.best = {testing::gemm_row(d.device_key, shape, testing::small_tile_config(), 300)};
  BestRow bad = testing::gemm_row(d.device_key, {.m = 3}, testing::small_tile_config(), 1);
  bad.params_json = R"({"MWG":3})";
  fast.best.push_back(bad);

  Database out = Database::open(":memory:");
  const MergeStats a = merge_rows(out, slow, row_check_by_device(), "slow.jsonl");
  const MergeStats b = merge_rows(out, fast, row_check_by_device(), "fast.jsonl");
  EXPECT_EQ(a.added, 1);
  EXPECT_EQ(b.replaced, 1);
  ASSERT_EQ(b.rejected.size(), 1u);
  EXPECT_NE(b.rejected[0].find("shape_key=batch=1,k=1,layout=NN,m=3,n=1"), std::string::npos) << b.rejected[0];
  const auto rows = out.all_best();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].params_json, to_json(testing::small_tile_config()).dump());
  EXPECT_EQ(nlohmann::json::parse(rows[0].provenance)["source"], "fast.jsonl");
  EXPECT_EQ(merge_rows(out, slow, row_check_by_device(), "slow.jsonl").kept, 1);
}

TEST(Merge, InsideAnUncommittedTransactionNothingIsKept) {
  const std::string path = testing::temp_path("atomic.db");
  Database out = Database::open(path);
  TunedRows rows;
  rows.best = {testing::gemm_row(device().key(), {.m = 4}, gemm_default_config())};
  {
    sql::Transaction outer(out.connection());
    merge_rows(out, rows, nullptr, "x");
    EXPECT_EQ(out.all_best().size(), 1u);
  }
  EXPECT_TRUE(out.all_best().empty());
}

}  // namespace
}  // namespace ocltune
