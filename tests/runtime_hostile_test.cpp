// The database as untrusted input: hostile rows are rejected by name and never compiled; corrupt,
// truncated, foreign and newer files are refused and never modified.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "db/sqlite.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

using testing::HostGemm;
using testing::LogSink;

Session& session() { return testing::test_session(); }

struct Hostile {
  std::string why;
  BestRow row;
  std::string expected;  // part of the rejection message
};

// One hostile row per way a row can be wrong; each has its own shape so that each key is distinct.
std::vector<Hostile> hostile_rows() {
  const std::string key = session().device().key();
  std::vector<Hostile> rows;
  std::int64_t m = 40;
  const auto add = [&](std::string why, const std::function<void(BestRow&, Config&)>& spoil, std::string expected) {
    const GemmShape shape{.m = m++, .n = 24, .k = 31};
    Config config = testing::small_tile_config();
    BestRow row = testing::gemm_row(key, shape, config);
    spoil(row, config);
    if (row.params_json.empty()) row.params_json = to_json(config).dump();
    rows.push_back({std::move(why), std::move(row), std::move(expected)});
  };
  const auto params = [](BestRow& r, Config&) { r.params_json.clear(); };
  add(
      "value not declared",
      [&](BestRow& r, Config& c) {
        c["MWG"] = 7;
        params(r, c);
      },
      "MWG=7 is not one of");
  add(
      "value far out of range",
      [&](BestRow& r, Config& c) {
        c["NWG"] = std::int64_t{1} << 40;
        params(r, c);
      },
      "is not one of");
  add(
      "unknown parameter",
      [&](BestRow& r, Config& c) {
        c["EVIL"] = 1;
        params(r, c);
      },
      "unknown parameter EVIL");
  add(
      "missing parameter",
      [&](BestRow& r, Config& c) {
        c.erase("KWI");
        params(r, c);
      },
      "missing parameter KWI");
  add(
      "constraint broken",
      [&](BestRow& r, Config& c) {
        c["VWL"] = 4;
        params(r, c);
      },
      "constraint");
  add(
      "float value", [](BestRow& r, Config&) { r.params_json = R"({"MWG":16.5})"; }, "not an integer");
  add(
      "string value", [](BestRow& r, Config&) { r.params_json = R"({"MWG":"16"})"; }, "not an integer");
  add(
      "params injection", [](BestRow& r, Config&) { r.params_json = R"({"MWG":16}); DROP TABLE best; --)"; },
      "params_json is not valid JSON");
  add(
      "name injection", [](BestRow& r, Config&) { r.params_json = R"({"MWG -DX=1 ; rm -rf /":16})"; },
      "bad parameter name");
  add(
      "shape key injection", [](BestRow& r, Config&) { r.shape_key += "'); DROP TABLE best; --"; },
      "shape_key does not match");
  add(
      "shape garbage", [](BestRow& r, Config&) { r.shape_json = "{{{{\x01\x02"; }, "shape_json is not valid JSON");
  add(
      "shape out of range", [](BestRow& r, Config&) { r.shape_json = R"({"m":-4,"n":24,"k":31})"; }, "'m'");
  add(
      "shape unknown field", [](BestRow& r, Config&) { r.shape_json = R"({"m":40,"n":24,"k":31,"evil":1})"; },
      "unknown shape field");
  add(
      "wrong dtype", [](BestRow& r, Config&) { r.dtype = "fp64"; }, "dtype");
  add(
      "huge key", [](BestRow& r, Config&) { r.shape_key = std::string(100000, 'A') + "\n\x1b[31m"; },
      "shape_key does not match");
  // Times no device could reach (issue 42): negative, below the 1 ns floor, and faster than the
  // copy bandwidth the test database records for the device (10 GB/s) allows for the bytes.
  add(
      "negative time", [](BestRow& r, Config&) { r.median_ns = -1; }, "median_ns -1 is not a positive time");
  add(
      "time below 1 ns", [](BestRow& r, Config&) { r.median_ns = 1e-300; }, "median_ns 1e-300 is below 1 ns");
  add(
      "faster than the copy bandwidth", [](BestRow& r, Config&) { r.median_ns = 5; },
      "faster than the device's copy bandwidth");
  return rows;
}

TEST(HostileDatabase, EveryBadRowIsRejectedByNameAndNeverCompiled) {
  const std::vector<Hostile> rows = hostile_rows();
  const std::string path = testing::temp_path("hostile.db");
  {
    Database db = Database::open(path);
    db.upsert_device(session().device());
    db.set_device_bandwidth(session().device().key(), 10.0);
    for (const Hostile& h : rows) ASSERT_TRUE(db.update_best_if_faster(h.row)) << h.why;
    // An op this build does not know, with control characters in its name.
    db.update_best_if_faster(testing::gemm_row(session().device().key(), {.m = 5}, {}));
    db.connection().exec("UPDATE best SET op = 'gemm' || char(10) || char(27) || '[31m' WHERE shape_key LIKE '%m=5,%'");
    db.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const std::string before = testing::file_bytes(path);
  auto sink = std::make_shared<LogSink>();
  Runtime rt(session().context(), session().device().device, testing::isolated(path, "", sink));

  const std::vector<std::string> messages = rt.messages();
  for (const Hostile& h : rows) {
    bool named = false;
    for (const std::string& m : messages) {
      if (m.find("shape_key=" + h.row.shape_key.substr(0, 20)) != std::string::npos &&
          m.find(h.expected) != std::string::npos) {
        named = m.find("table best row (device_key=" + session().device().key()) != std::string::npos &&
                m.find("op=gemm") != std::string::npos;
      }
    }
    EXPECT_TRUE(named) << h.why << ": expected a message naming the row with '" << h.expected << "'\n" << sink->all();
  }
  EXPECT_TRUE(sink->contains(R"(op 'gemm\x0a\x1b[31m')")) << "control characters must be escaped\n" << sink->all();
  for (const std::string& m : messages) EXPECT_LT(m.size(), 2000u) << "messages are capped";

  // Every shape falls to the built-in configuration: one program, the built-in one, is compiled.
  for (const Hostile& h : rows) {
    HostGemm g(session().context(), {.m = 40 + (&h - rows.data()), .n = 24, .k = 31});
    const Dispatch d = ops::gemm(rt, session().queue()(), g.call());
    EXPECT_EQ(d.level, Level::kBuiltin) << h.why;
    EXPECT_EQ(g.check(session().queue()), "") << h.why;
  }
  EXPECT_EQ(rt.stats().programs_built, 1);
  EXPECT_EQ(testing::file_bytes(path), before) << "the runtime never writes to a database";
}

// A user database that is refused leaves the runtime working on the other layers, and unmodified.
void expect_refused(const std::string& path, const std::string& reason) {
  const std::string before = testing::file_bytes(path);
  auto sink = std::make_shared<LogSink>();
  Runtime rt(session().context(), session().device().device, testing::isolated(path, "", sink));
  EXPECT_TRUE(sink->contains("user database refused")) << sink->all();
  EXPECT_TRUE(sink->contains(reason)) << sink->all();
  EXPECT_TRUE(rt.layer_paths().empty());
  HostGemm g(session().context(), {.m = 40, .n = 24, .k = 31});
  EXPECT_EQ(ops::gemm(rt, session().queue()(), g.call()).level, Level::kBuiltin);
  EXPECT_EQ(g.check(session().queue()), "");
  EXPECT_EQ(testing::file_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));

  RuntimeOptions strict = testing::isolated(path, "", sink);
  strict.strict_databases = true;
  EXPECT_THROW(Runtime(session().context(), session().device().device, strict), DatabaseError);
  EXPECT_EQ(testing::file_bytes(path), before);
}

TEST(HostileDatabase, ATruncatedFileIsRefusedAndUntouched) {
  const std::string path = testing::temp_path("truncated-user.db");
  {
    Database db = Database::open(path);
    db.upsert_device(session().device());
    for (int m = 1; m <= 300; ++m) {
      db.update_best_if_faster(testing::gemm_row(session().device().key(), {.m = m}, testing::small_tile_config()));
    }
    db.connection().exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE");
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  expect_refused(path, "truncated-user.db");
}

TEST(HostileDatabase, ANewerSchemaIsRefusedAndUntouched) {
  const std::string path = testing::temp_path("newer-user.db");
  {
    Database db = Database::open(path);
    db.connection().exec("INSERT INTO schema_version(version) VALUES (99); PRAGMA journal_mode = DELETE");
  }
  expect_refused(path, "newer than this ocltune understands");
}

TEST(HostileDatabase, AForeignDatabaseIsRefusedAndUntouched) {
  const std::string path = testing::temp_path("foreign-user.db");
  {
    sql::Connection c(path, false);
    c.exec("CREATE TABLE best(x); CREATE TABLE schema_version(version); INSERT INTO schema_version VALUES (2);");
  }
  expect_refused(path, "has no 'devices' table");
}

TEST(HostileDatabase, AFileOfGarbageIsRefusedAndUntouched) {
  const std::string path = testing::temp_path("garbage-user.db");
  std::ofstream(path, std::ios::binary) << std::string(4096, '\x5a') << "SQLite format 3";
  expect_refused(path, "garbage-user.db");
}

TEST(HostileDatabase, AnOlderSchemaIsReadButNotMigratedByTheRuntime) {
  const GemmShape shape{.m = 40, .n = 24, .k = 31};
  const std::string path = testing::write_version1_database(
      testing::temp_path("v1-user.db"), {session().device()},
      {testing::gemm_row(session().device().key(), shape, testing::small_tile_config())});
  const std::string before = testing::file_bytes(path);
  auto sink = std::make_shared<LogSink>();
  Runtime rt(session().context(), session().device().device, testing::isolated(path, "", sink));
  HostGemm g(session().context(), shape);
  EXPECT_EQ(ops::gemm(rt, session().queue()(), g.call()).level, Level::kExact) << sink->all();
  EXPECT_EQ(g.check(session().queue()), "");
  EXPECT_EQ(testing::file_bytes(path), before);
}

}  // namespace
}  // namespace ocltune
