// `ocltune db export|merge|verify|import` end to end, and the shipped system database.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/sqlite.h"
#include "db/transfer.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

struct Result {
  int code;
  std::string output;
};

Result ocltune(const std::string& args) {
  const std::string command = std::string(OCLTUNE_BINARY) + " " + args + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

const DeviceInfo& device() { return testing::test_session().device(); }
const GemmShape kX{.m = 40, .n = 24, .k = 31};
const GemmShape kY{.m = 8, .n = 8, .k = 8};

// A tuner's database: a run, a measurement, and best rows for X (slow) and Y.
std::string tuned_database(const std::string& name, double x_ns, const Config& x_config) {
  const std::string path = testing::temp_path(name);
  Database db = Database::open(path);
  db.upsert_device(device());
  RunRow run;
  run.device_key = device().key();
  run.tool_version = "test";
  run.host = "tuning-host";
  const std::int64_t id = db.begin_run(run);
  MeasurementRow m;
  m.run_id = id;
  m.device_key = device().key();
  m.op = "gemm";
  m.dtype = "fp32";
  m.shape_key = kX.key();
  m.shape_json = kX.to_json().dump();
  m.source_hash = "h";
  m.params = to_string(x_config);
  m.status = "ok";
  db.add_measurement(m);
  BestRow x = testing::gemm_row(device().key(), kX, x_config, x_ns);
  x.run_id = id;
  db.update_best_if_faster(x);
  db.update_best_if_faster(testing::gemm_row(device().key(), kY, testing::small_tile_config(), 50));
  return path;
}

TEST(DbCommand, ExportWritesOnlyBestRowsAsTextOrDatabaseAndBothVerify) {
  const std::string src = tuned_database("export-src.db", 500, testing::staged_tile_config());
  const std::string text = testing::temp_path("export.jsonl");
  const std::string db = testing::temp_path("export.db");
  Result r = ocltune("db export --db " + src + " --device-key " + device().key() + " --best-only -o " + text);
  ASSERT_EQ(r.code, 0) << r.output;
  r = ocltune("db export --db " + src + " --device-key " + device().key() + " --best-only -o " + db);
  ASSERT_EQ(r.code, 0) << r.output;
  for (const std::string& file : {text, db}) {
    r = ocltune("db verify " + file);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("2 best row(s): valid"), std::string::npos) << r.output;
  }
  Database exported = Database::open_read_only(db);
  EXPECT_EQ(exported.count_measurements(), 0);
  EXPECT_EQ(nlohmann::json::parse(exported.all_best()[0].provenance)["host"], "tuning-host");

  EXPECT_EQ(ocltune("db export --db " + src + " --best-only -o " + text).code, 2) << "an existing output needs --force";
  EXPECT_EQ(ocltune("db export --db " + src + " -o " + testing::temp_path("all.jsonl")).code, 2);
  const std::string everything = testing::temp_path("everything.db");
  r = ocltune("db export --db " + src + " -o " + everything);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(Database::open_read_only(everything).count_measurements(), 1);
  EXPECT_EQ(
      ocltune("db export --db " + src + " --device-key nosuchdevice --best-only -o " + testing::temp_path("none.db"))
          .code,
      1);
}

// Issue 19: a full export leaves out pending measurements (no result), and copies an older
// schema's runs into the current one (version 3 added columns to runs).
TEST(DbCommand, AFullExportLeavesOutPendingRowsAndReadsOlderSchemas) {
  const std::string src = tuned_database("export-pending.db", 500, testing::staged_tile_config());
  {
    Database db = Database::open(src);
    MeasurementRow m = db.measurements(device().key(), "gemm", "fp32", "exact", kX.key()).at(0);
    m.status = kPendingStatus;
    m.params = to_string(testing::small_tile_config());
    m.median_ns.reset();
    db.add_measurement(m);
  }
  const std::string everything = testing::temp_path("everything-pending.db");
  Result r = ocltune("db export --db " + src + " -o " + everything);
  ASSERT_EQ(r.code, 0) << r.output;
  {
    Database out = Database::open_read_only(everything);
    EXPECT_EQ(out.count_measurements(), 1);
    EXPECT_EQ(out.runs().size(), 1u);
  }
  const std::string v1 =
      testing::write_version1_database(testing::temp_path("export-v1.db"), {device()},
                                       {testing::gemm_row(device().key(), kX, testing::small_tile_config(), 500)});
  const std::string from_v1 = testing::temp_path("everything-v1.db");
  r = ocltune("db export --db " + v1 + " --device-key " + device().key() + " -o " + from_v1);
  ASSERT_EQ(r.code, 0) << r.output;
  Database out = Database::open_read_only(from_v1);
  EXPECT_EQ(out.schema_version(), kSchemaVersion);
  EXPECT_EQ(out.all_best().size(), 1u);
}

// best.measurement_id, where set, must name an `ok` measurement of the same problem, kernel
// source and configuration (issue 19, defect 7).
TEST(DbCommand, VerifyChecksTheMeasurementABestRowNames) {
  const std::string src = tuned_database("verify-mid.db", 500, testing::staged_tile_config());
  std::int64_t ok_id = 0, crash_id = 0, other_config_id = 0;
  {
    Database db = Database::open(src);
    MeasurementRow m = db.measurements(device().key(), "gemm", "fp32", "exact", kX.key()).at(0);
    ok_id = m.measurement_id;
    m.source_hash = "test";  // the best row's (testing::gemm_row)
    m.status = "crash";
    m.median_ns.reset();
    crash_id = db.add_measurement(m);
    m.status = "ok";
    m.median_ns = 500;
    m.params = to_string(testing::small_tile_config());
    other_config_id = db.add_measurement(m);
    db.connection().exec(
        fmt::format("UPDATE measurements SET source_hash = 'test', median_ns = 500 WHERE measurement_id = {}", ok_id));
  }
  const auto verify_with = [&](std::int64_t id) {
    {
      Database db = Database::open(src);
      sql::Statement(db.connection(), "UPDATE best SET measurement_id = ? WHERE shape_key = ?")
          .bind(1, id)
          .bind(2, kX.key())
          .run();
    }
    return ocltune("db verify " + src);
  };
  Result r = verify_with(ok_id);
  EXPECT_EQ(r.code, 0) << r.output;
  r = verify_with(999);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("measurement_id 999 names no measurement"), std::string::npos) << r.output;
  r = verify_with(crash_id);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("status 'crash', not ok"), std::string::npos) << r.output;
  r = verify_with(other_config_id);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("another configuration"), std::string::npos) << r.output;
  {
    Database db = Database::open(src);
    db.connection().exec(fmt::format("UPDATE measurements SET shape_key = 'm=3' WHERE measurement_id = {}", ok_id));
  }
  r = verify_with(ok_id);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("another problem"), std::string::npos) << r.output;
}

TEST(DbCommand, VerifyNamesBadRowsAndRefusesBrokenFiles) {
  const std::string src = tuned_database("verify-bad.db", 500, testing::staged_tile_config());
  {
    Database db = Database::open(src);
    db.connection().exec(R"(UPDATE best SET params_json = '{"MWG":7}' WHERE shape_key LIKE '%m=40,%';
                            UPDATE measurements SET params = 'MWG=;DROP';)");
  }
  Result r = ocltune("db verify " + src);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("table best row (device_key=" + device().key() +
                          ", op=gemm, dtype=fp32, math=exact, "
                          "shape_key=" +
                          kX.key() + ")"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("table measurements row 1"), std::string::npos) << r.output;
  {
    // A timed measurement outside the op's space, or with a fake time, is named too (issue 19.1).
    Database db = Database::open(src);
    db.connection().exec("UPDATE measurements SET params = 'MWG=7', median_ns = 1.0");
  }
  r = ocltune("db verify " + src);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("table measurements row 1 (device_key=" + device().key()), std::string::npos) << r.output;
  {
    Database db = Database::open(src);
    db.connection().exec("UPDATE measurements SET params = '" + to_string(testing::staged_tile_config()) +
                         "', median_ns = -5");
  }
  r = ocltune("db verify " + src);
  EXPECT_NE(r.output.find("a timed row needs a positive median_ns"), std::string::npos) << r.output;
  {
    // A best row with a non-positive median, which db import refuses, is refused by verify too.
    Database db = Database::open(src);
    db.connection().exec("UPDATE best SET median_ns = -1");
  }
  r = ocltune("db verify " + src);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("is not a positive time"), std::string::npos) << r.output;
  const std::string garbage = testing::temp_path("verify-garbage.db");
  std::ofstream(garbage) << "not a database at all, but long enough to look like a file of some kind.....";
  r = ocltune("db verify " + garbage);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("not a usable SQLite database"), std::string::npos) << r.output;
}

// A time no device could reach is refused like any bad field (issue 42): below the 1 ns floor, or
// faster than the device's recorded copy bandwidth allows for the problem's bytes; db verify names
// the row and db merge refuses it.
TEST(DbCommand, VerifyAndMergeRefuseImpossibleTimes) {
  const std::string src = tuned_database("verify-time.db", 500, testing::staged_tile_config());
  Database::open(src).connection().exec("UPDATE measurements SET median_ns = 500");
  ASSERT_EQ(ocltune("db verify " + src).code, 0) << ocltune("db verify " + src).output;
  const auto set_x = [&](const std::string& assignment) {
    Database db = Database::open(src);
    db.connection().exec("UPDATE best SET " + assignment + " WHERE shape_key LIKE '%m=40,%'");
  };
  set_x("median_ns = 1e-300");
  Result r = ocltune("db verify " + src);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("shape_key=" + kX.key() + "): median_ns 1e-300 is below 1 ns"), std::string::npos)
      << r.output;
  const std::string merged = testing::temp_path("verify-time-merged.jsonl");
  r = ocltune("db merge " + src + " -o " + merged);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("median_ns 1e-300 is below 1 ns"), std::string::npos) << r.output;
  // X (40 x 24 x 31: 11.8 KB) at 100 ns on a device whose copy bandwidth is 1 GB/s.
  set_x("median_ns = 100");
  Database::open(src).connection().exec("UPDATE devices SET copy_bandwidth_gbs = 1");
  r = ocltune("db verify " + src);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("faster than the device's copy bandwidth"), std::string::npos) << r.output;
  set_x("median_ns = 500");  // 23.6 GB/s: within what caches give
  r = ocltune("db verify " + src);
  EXPECT_EQ(r.code, 0) << r.output;
}

// Hostile rows never break the output: `show --json` stays valid JSON (a params_json that is not
// JSON, invalid UTF-8), and no raw control byte or terminal escape from a hostile parameter name
// reaches the terminal through show or the reasons of db verify (issue 19, defect 7).
TEST(DbCommand, ShowAndVerifyEscapeHostileRows) {
  const std::string src = tuned_database("hostile-show.db", 500, testing::staged_tile_config());
  {
    Database db = Database::open(src);
    db.connection().exec(
        "UPDATE best SET params_json = '{\"MWG\": 16, \"X\n' || char(27) || '[31m\": 1}' "
        "WHERE shape_key LIKE '%m=40,%'");
    db.connection().exec("UPDATE best SET params_json = 'not json ' || char(255) WHERE shape_key NOT LIKE '%m=40,%'");
  }
  const Result json = ocltune("show --json --db " + src);
  ASSERT_EQ(json.code, 0) << json.output;
  const nlohmann::json parsed = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << json.output;
  ASSERT_EQ(parsed.size(), 2u);
  bool invalid_marked = false;
  for (const nlohmann::json& row : parsed) invalid_marked |= row["params"].contains("invalid_json");
  EXPECT_TRUE(invalid_marked) << json.output;
  for (const std::string& args : {"show --db " + src, "db verify " + src}) {
    const Result r = ocltune(args);
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(r.output.find("X\n"), std::string::npos) << args << ": " << r.output;
  }
}

TEST(DbCommand, MergeKeepsTheFasterVerifiedRowWithItsProvenance) {
  const std::string slow = tuned_database("merge-slow.db", 900, testing::staged_tile_config());
  const std::string fast = tuned_database("merge-fast.db", 300, gemm_default_config());
  const std::string out = testing::temp_path("merged.jsonl");
  Result r = ocltune("db merge " + slow + " " + fast + " -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  const TunedRows rows = load_tuned_rows(out);
  ASSERT_EQ(rows.best.size(), 2u);
  for (const BestRow& b : rows.best) {
    const nlohmann::json p = nlohmann::json::parse(b.provenance);
    if (b.shape_key == kX.key()) {
      EXPECT_EQ(b.params_json, to_json(gemm_default_config()).dump());
      EXPECT_EQ(p["source"], "merge-fast.db");
    } else {
      EXPECT_EQ(p["source"], "merge-slow.db") << "ties keep the first input";
    }
    for (const char* field : {"host", "date", "tool_version", "driver"}) EXPECT_TRUE(p.contains(field)) << field;
  }

  // A bad row fails the merge unless --skip-invalid.
  {
    Database db = Database::open(fast);
    db.connection().exec(R"(UPDATE best SET params_json = '{"EVIL":1}' WHERE shape_key LIKE '%m=8,%')");
  }
  const std::string out2 = testing::temp_path("merged2.db");
  r = ocltune("db merge " + slow + " " + fast + " -o " + out2);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out2));
  r = ocltune("db merge " + slow + " " + fast + " -o " + out2 + " --skip-invalid");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(Database::open_read_only(out2).all_best().size(), 2u);
}

TEST(DbCommand, ImportAddsAShippedFileToTheSystemLayerOnce) {
  const std::string src = tuned_database("import-src.db", 500, testing::staged_tile_config());
  const std::string shipped = testing::temp_path("shipped.jsonl");
  ASSERT_EQ(ocltune("db export --db " + src + " --best-only -o " + shipped).code, 0);
  const std::string system = testing::temp_path("system.db");
  Result r = ocltune("db import " + shipped + " --system-db " + system);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("2 added"), std::string::npos) << r.output;
  r = ocltune("db import " + shipped + " --system-db " + system);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("already imported"), std::string::npos) << r.output;
  {
    Database db = Database::open_read_only(system);
    ASSERT_EQ(db.imports().size(), 1u);
    EXPECT_EQ(db.imports()[0].rows_added, 2);
  }
  EXPECT_FALSE(std::filesystem::exists(system + "-wal")) << "the system layer has no WAL side files";

  // The runtime serves the imported rows from the system layer.
  auto sink = std::make_shared<testing::LogSink>();
  Runtime rt(testing::test_session().context(), device().device, testing::isolated("", system, sink));
  testing::HostGemm g(testing::test_session().context(), kX);
  EXPECT_EQ(ops::gemm_decision(rt, g.call()).level, Level::kExact) << sink->all();

  // A file with a bad row is imported whole or not at all.
  std::string text = testing::file_bytes(shipped);
  text.replace(text.find("\"MWG\":16"), 8, "\"MWG\":17");
  const std::string bad = testing::temp_path("bad-shipped.jsonl");
  std::ofstream(bad) << text;
  r = ocltune("db import " + bad + " --system-db " + system);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(Database::open_read_only(system).imports().size(), 1u);
}

TEST(ShippedDatabases, TheBuiltSystemDatabaseVerifiesAndLoads) {
  const std::string system = OCLTUNE_BUILT_SYSTEM_DB;
  const Result r = ocltune("db verify " + system);
  ASSERT_EQ(r.code, 0) << r.output;
  auto sink = std::make_shared<testing::LogSink>();
  Runtime rt(testing::test_session().context(), device().device, testing::isolated("", system, sink));
  EXPECT_EQ(rt.layer_paths(), std::vector<std::string>{system});
  EXPECT_TRUE(rt.messages().empty()) << sink->all();
  // Tuned on this machine's PoCL: where the device key is the same, the quick shapes are exact hits.
  Database db = Database::open_read_only(system);
  testing::HostGemm g(testing::test_session().context(), {.m = 256, .n = 256, .k = 256});
  const Level level = ops::gemm_decision(rt, g.call()).level;
  if (db.device(device().key())) {
    EXPECT_EQ(level, Level::kExact);
  } else {
    EXPECT_NE(level, Level::kExact);
  }
}

}  // namespace
}  // namespace ocltune
