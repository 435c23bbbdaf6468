// Schema migrations from versions 1 and 2, provenance, the JSON-lines format, and merging rows.
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
    EXPECT_EQ(db.schema_version(), kSchemaVersion);
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

// A version-2 file as that release wrote it (tests/data/schema_v2.sql), with the two
// schema_version rows that concurrent first opens could insert, a run left `running` by a killed
// tuner, and measurements.
std::string write_v2(const std::string& name) {
  const std::string path = testing::temp_path(name);
  sql::Connection c(path, false);
  c.exec(testing::file_bytes(OCLTUNE_SOURCE_DIR "/tests/data/schema_v2.sql"));
  c.exec("INSERT INTO schema_version(version) VALUES (2); INSERT INTO schema_version(version) VALUES (2);");
  c.exec(R"(INSERT INTO devices VALUES ('dev', 'p', 'pv', 'd', 'v', 'dv', 'cpu', 1, 1, 1, 1, 1, NULL, NULL, 'a', 'b');
    INSERT INTO runs(device_key, started_at, status, tool_version, host) VALUES ('dev', 's', 'running', '0.9', 'h');
    INSERT INTO runs(device_key, started_at, status, tool_version, host) VALUES ('dev', 's', 'finished', '0.9', 'h');
    INSERT INTO measurements(run_id, device_key, op, dtype, shape_key, shape_json, source_hash, params, status,
                             median_ns, created_at)
      VALUES (2, 'dev', 'gemm', 'fp32', 'm=1', '{}', 'h', 'A=1', 'ok', 12.5, 'c'),
             (2, 'dev', 'gemm', 'fp32', 'm=1', '{}', 'h', 'A=2', 'crash', NULL, 'c');
    INSERT INTO best(device_key, op, dtype, shape_key, shape_json, params_json, median_ns, min_ns, max_ns, spread,
                     source_hash, run_id, measurement_id, updated_at)
      VALUES ('dev', 'gemm', 'fp32', 'm=1', '{}', '{"A":1}', 12.5, 12, 13, 0, 'h', 2, 1, 'u');)");
  return path;
}

// Issue 19: version 3 adds `pending` measurements, `abandoned` runs, a run's process and a
// primary key on schema_version; every row of a version-2 file is kept.
TEST(Migration, Version2IsMigratedWithEveryRowKept) {
  const std::string path = write_v2("v2.db");
  {
    Database db = Database::open(path);
    EXPECT_EQ(db.schema_version(), 3);
    sql::Statement versions(db.connection(), "SELECT group_concat(version) FROM schema_version");
    ASSERT_TRUE(versions.step());
    EXPECT_EQ(versions.text(0), "2,3") << "one row per version";
    const std::vector<RunRow> runs = db.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].status, "running");
    EXPECT_FALSE(runs[0].pid.has_value()) << "an old run's process is unknown";
    EXPECT_EQ(runs[1].status, "finished");
    const auto rows = db.measurements("dev", "gemm", "fp32", "exact", "m=1");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].measurement_id, 1);
    EXPECT_EQ(rows[0].median_ns, 12.5);
    EXPECT_EQ(rows[1].status, "crash");
    ASSERT_TRUE(db.best("dev", "gemm", "fp32", "exact", "m=1").has_value());
    EXPECT_EQ(db.best("dev", "gemm", "fp32", "exact", "m=1")->measurement_id, 1);
    // The new statuses pass the new CHECK constraints, and unknown ones still fail them.
    db.connection().exec("UPDATE runs SET status = 'abandoned' WHERE run_id = 1");
    MeasurementRow pending = rows[0];
    pending.status = kPendingStatus;
    pending.median_ns.reset();
    EXPECT_GT(db.add_measurement(pending), 2);
    EXPECT_THROW(db.connection().exec("UPDATE runs SET status = 'bogus' WHERE run_id = 1"), DatabaseError);
    EXPECT_THROW(db.connection().exec("UPDATE measurements SET status = 'bogus'"), DatabaseError);
    sql::Statement fk(db.connection(), "PRAGMA foreign_key_check");
    EXPECT_FALSE(fk.step()) << "measurements still refer to runs";
  }
  EXPECT_EQ(raw_version(path + ".v2.bak"), 2);
  // Readable by every reader: verify and the runtime's loader.
  const DatabaseReport report = verify_database(path);
  EXPECT_EQ(report.schema_version, 3);
  EXPECT_EQ(report.measurements, 3u);
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
