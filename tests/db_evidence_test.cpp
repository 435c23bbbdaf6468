// Shipped rows carry their evidence (issue 20): evaluations counted at export, shallow rows left out,
// older files without the count still read, `ocltune db check` re-timing rows on the device, and
// `ocltune db holdout` predicting held-out rows from the rest.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/jsonl.h"
#include "db/provenance.h"
#include "db/transfer.h"
#include "harness/program.h"
#include "ops/family.h"
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

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const DeviceInfo& device() { return testing::test_session().device(); }
const GemmShape kX{.m = 40, .n = 24, .k = 31};
const GemmShape kY{.m = 48, .n = 16, .k = 20};
const GemmShape kZ{.m = 16, .n = 32, .k = 17};

// The hash the tuner records for a GEMM problem: its kernel files as the current tree has them.
std::string current_hash(const GemmShape& shape) {
  ProgramSource source;
  source.files = find_family("gemm")->from_json(shape.to_json())->kernel_files();
  return source.files_hash();
}

DeviceRow device_row(const DeviceInfo& d) {
  Database db = Database::open(":memory:");
  db.upsert_device(d);
  return db.devices().at(0);
}

// A tuned-rows file holding `rows` and the device rows of `devices`.
std::string rows_file(const std::string& name, const std::vector<DeviceInfo>& devices,
                      const std::vector<BestRow>& rows) {
  TunedRows t;
  for (const DeviceInfo& d : devices) t.devices.push_back(device_row(d));
  t.best = rows;
  const std::string path = testing::temp_path(name);
  std::ofstream(path) << to_jsonl(t);
  return path;
}

std::string check_args(const std::string& file) { return fmt::format("db check --device {} {}", device().index, file); }

// A database whose best row of `shape` was chosen from `evaluations` distinct configurations of its
// kernel source (plus one measurement under another source and one pending row, neither counted).
void add_tuned(Database& db, std::int64_t run, const GemmShape& shape, int evaluations) {
  for (int i = 0; i < evaluations + 2; ++i) {
    MeasurementRow m;
    m.run_id = run;
    m.device_key = device().key();
    m.op = "gemm";
    m.dtype = "fp32";
    m.shape_key = shape.key();
    m.shape_json = shape.to_json().dump();
    m.source_hash = i == evaluations ? "another-source" : "test";
    m.params = fmt::format("MWG={}", i);
    m.status = i == evaluations + 1 ? kPendingStatus : "ok";
    db.add_measurement(m);
    if (i == 0) db.add_measurement(m);  // measured twice (a final re-timing): still one configuration
  }
  db.update_best_if_faster(testing::gemm_row(device().key(), shape, testing::small_tile_config(), 500));
}

TEST(Evidence, ExportCountsEvaluationsAndLeavesOutShallowRows) {
  const std::string src = testing::temp_path("evidence-src.db");
  {
    Database db = Database::open(src);
    db.upsert_device(device());
    RunRow run;
    run.device_key = device().key();
    run.tool_version = "test";
    const std::int64_t id = db.begin_run(run);
    add_tuned(db, id, kX, 3);   // shallow
    add_tuned(db, id, kY, 12);  // deep enough
    // kZ: a best row without measurements here (merged from elsewhere): unknown, kept.
    db.update_best_if_faster(testing::gemm_row(device().key(), kZ, testing::small_tile_config(), 500));
  }
  const std::string out = testing::temp_path("evidence.jsonl");
  Result r = ocltune("db export --db " + src + " --best-only -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 row(s) left out: fewer than 8 evaluations")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 row(s) with unknown evaluations kept")) << r.output;
  EXPECT_TRUE(contains(r.output, "3 evaluation(s)")) << r.output;
  TunedRows rows = load_tuned_rows(out);
  ASSERT_EQ(rows.best.size(), 2u);
  std::map<std::string, std::optional<std::int64_t>> evaluations;
  for (const BestRow& b : rows.best) evaluations[b.shape_key] = provenance_evaluations(b.provenance);
  EXPECT_EQ(evaluations.count(kX.key()), 0u) << "the shallow row is not shipped";
  EXPECT_EQ(evaluations.at(kY.key()), 12);
  EXPECT_EQ(evaluations.at(kZ.key()), std::nullopt);
  EXPECT_TRUE(contains(testing::file_bytes(out), "\"evaluations\":null")) << "unknown is marked, not left out";

  // --min-evaluations 0 ships every row; a higher floor leaves out more.
  r = ocltune("db export --db " + src + " --best-only --min-evaluations 0 --force -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(load_tuned_rows(out).best.size(), 3u);
  r = ocltune("db export --db " + src + " --best-only --min-evaluations 13 --force -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(load_tuned_rows(out).best.size(), 1u);

  // The count survives a merge into a database (which has no measurements) and back out.
  const std::string merged = testing::temp_path("evidence-merged.db");
  ASSERT_EQ(ocltune("db export --db " + src + " --best-only --force -o " + out).code, 0);
  ASSERT_EQ(ocltune("db merge " + out + " -o " + merged).code, 0);
  for (const BestRow& b : load_tuned_rows(merged).best) {
    if (b.shape_key == kY.key()) {
      EXPECT_EQ(provenance_evaluations(b.provenance), 12);
    }
  }
}

TEST(Evidence, OlderFilesWithoutEvaluationsStillImportMergeAndVerify) {
  // A file as the tools before issue 20 wrote it: no evaluations field anywhere.
  const std::string old = rows_file("evidence-old.jsonl", {device()},
                                    {testing::gemm_row(device().key(), kX, testing::small_tile_config())});
  ASSERT_FALSE(contains(testing::file_bytes(old), "evaluations"));
  EXPECT_TRUE(contains(testing::file_bytes(old), "\"schema_version\":2")) << "the format did not change";
  Result r = ocltune("db verify " + old);
  EXPECT_EQ(r.code, 0) << r.output;
  r = ocltune("db import " + old + " --system-db " + testing::temp_path("evidence-system.db"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 added")) << r.output;
  const std::string merged = testing::temp_path("evidence-old-merged.jsonl");
  r = ocltune("db merge " + old + " -o " + merged);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(provenance_evaluations(load_tuned_rows(merged).best.at(0).provenance), std::nullopt);
  // The shipped files are such files.
  for (const char* shipped : {"pocl-x86_64.jsonl", "nvidia-h200.jsonl", "nvidia-h100.jsonl"}) {
    r = ocltune(fmt::format("db verify {}/db/shipped/{}", OCLTUNE_SOURCE_DIR, shipped));
    EXPECT_EQ(r.code, 0) << r.output;
  }

  // A count that is not a non-negative integer is refused like any other bad field.
  for (const char* bad : {"-1", "\"many\"", "2.5"}) {
    BestRow row = testing::gemm_row(device().key(), kX, testing::small_tile_config());
    row.provenance = fmt::format("{{\"evaluations\":{}}}", bad);
    r = ocltune("db verify " + rows_file("evidence-bad.jsonl", {device()}, {row}));
    EXPECT_EQ(r.code, 1) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "'evaluations' must be a non-negative integer")) << r.output;
  }
}

TEST(DbCheck, FailsARowWhoseRecordedFigureIsImpossiblyFast) {
  BestRow fast = testing::gemm_row(device().key(), kX, testing::small_tile_config(), /*median_ns=*/1);
  fast.source_hash = current_hash(kX);
  fast.gflops = kX.flops() / 1;  // as the tuner stores it
  BestRow fair = testing::gemm_row(device().key(), kY, testing::small_tile_config(), /*median_ns=*/1e12);
  fair.source_hash = current_hash(kY);
  const std::string file = rows_file("check-fast.jsonl", {device()}, {fast, fair});
  Result r = ocltune(check_args(file));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "slower")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 failing")) << r.output;
  EXPECT_TRUE(contains(r.output, "source same")) << r.output;

  // Only that row loses: without it the check passes.
  r = ocltune(check_args(rows_file("check-fair.jsonl", {device()}, {fair})));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0 failing")) << r.output;

  // JSON: the figures and the verdict per row.
  r = ocltune("--json " + check_args(file));
  EXPECT_EQ(r.code, 1);
  const nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    const bool is_fast = row["shape_key"] == kX.key();
    EXPECT_EQ(row["verdict"], is_fast ? "slower" : "ok") << row.dump();
    EXPECT_EQ(row["fails"], is_fast);
    EXPECT_EQ(row["source_changed"], false);
    EXPECT_GT(row["now"].get<double>(), 0);
    EXPECT_EQ(row["unit"], "GFLOP/s");
  }

  // Recorded on another device key: reported, re-timed, not counted unless --any-device.
  const DeviceInfo other = testing::sibling_device(device());
  BestRow foreign = fast;
  foreign.device_key = other.key();
  const std::string foreign_file = rows_file("check-foreign.jsonl", {other}, {foreign});
  r = ocltune(check_args(foreign_file));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "not this device")) << r.output;
  EXPECT_TRUE(contains(r.output, "slower (other device)")) << r.output;
  r = ocltune(check_args(foreign_file) + " --any-device");
  EXPECT_EQ(r.code, 1) << r.output;
  // A looser threshold passes the fast row only if it is not impossibly fast: 1 ns never passes.
  r = ocltune(check_args(file) + " --max-loss 0.99");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(ocltune(check_args(file) + " --max-loss 1.5").code, 2);
  // --speed-informational (the CTest on a shared machine): still printed as slower, not failed;
  // a row that fails verification or is invalid still fails (ReportsAChangedKernelSourceAndRefusesBadRows).
  r = ocltune(check_args(file) + " --speed-informational");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "--speed-informational: not counted")) << r.output;
  EXPECT_TRUE(contains(r.output, "0 failing")) << r.output;
}

TEST(DbCheck, ReportsAChangedKernelSourceAndRefusesBadRows) {
  BestRow stale = testing::gemm_row(device().key(), kX, testing::small_tile_config(), 1e12);
  stale.source_hash = "0123456789abcdef";
  const std::string file = rows_file("check-stale.jsonl", {device()}, {stale});
  Result r = ocltune(check_args(file));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "source changed")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 with a changed kernel source")) << r.output;
  r = ocltune(check_args(file) + " --fail-on-source-change");
  EXPECT_EQ(r.code, 1) << r.output;
  r = ocltune(check_args(file) + " --fail-on-source-change --speed-informational");
  EXPECT_EQ(r.code, 1) << r.output;

  // A row that the device's space refuses, or a hostile file, is an error, not a figure.
  BestRow hostile = stale;
  hostile.params_json = R"({"MWG":17})";
  const std::string hostile_file = rows_file("check-hostile.jsonl", {device()}, {hostile});
  r = ocltune(check_args(hostile_file));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "invalid")) << r.output;
  EXPECT_EQ(ocltune(check_args(hostile_file) + " --speed-informational").code, 1);
  const std::string corrupt = testing::temp_path("check-corrupt.jsonl");
  std::ofstream(corrupt) << "{\"format\":\"ocltune-tuned-rows\",\"schema_version\":2}\n{\"table\":\"best\",\"op\":1}\n";
  r = ocltune(check_args(corrupt));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "check-corrupt.jsonl:2")) << r.output;
}

// --shapes checks only the rows of the listed problems (a target list against a whole shipped file);
// --time-budget starts no row after the budget and lists the rest as not checked.
TEST(DbCheck, ShapesPickRowsAndTimeBudgetListsTheRest) {
  BestRow x = testing::gemm_row(device().key(), kX, testing::small_tile_config(), 1e12);
  BestRow y = testing::gemm_row(device().key(), kY, testing::small_tile_config(), 1e12);
  x.source_hash = current_hash(kX);
  y.source_hash = current_hash(kY);
  const std::string file = rows_file("check-shapes.jsonl", {device()}, {x, y});
  const std::string shapes = testing::temp_path("check-shapes-list.json");
  std::ofstream(shapes) << nlohmann::json::array({[] {
                             nlohmann::json j = kY.to_json();
                             j["op"] = "gemm";
                             return j;
                           }()})
                               .dump();
  Result r = ocltune("--json " + check_args(file) + " --shapes " + shapes);
  ASSERT_EQ(r.code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  ASSERT_EQ(j["rows"].size(), 1u) << r.output;
  EXPECT_EQ(j["rows"][0]["shape_key"], kY.key());
  EXPECT_TRUE(j["unchecked"].empty());

  // A budget of 0 s starts no row: both are listed as not checked.
  r = ocltune("--json " + check_args(file) + " --time-budget 0s");
  ASSERT_EQ(r.code, 0) << r.output;
  j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_TRUE(j["rows"].empty()) << r.output;
  EXPECT_EQ(j["unchecked"].size(), 2u) << r.output;
  r = ocltune(check_args(file) + " --time-budget 0s");
  EXPECT_TRUE(contains(r.output, "not checked: --time-budget 0s ran out")) << r.output;

  // Bad input: a shapes file that is not a list of problems, a budget that is not a duration.
  const std::string bad = testing::temp_path("check-shapes-bad.json");
  std::ofstream(bad) << R"([{"op": "gemm", "m": -3}])";
  r = ocltune(check_args(file) + " --shapes " + bad);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--shapes")) << r.output;
  EXPECT_EQ(ocltune(check_args(file) + " --time-budget soon").code, 2);
}

// A group's rows leave the table; the lookup chain picks from the rest (here the other shape's row
// at the nearest level), and both configurations are verified and timed.
TEST(DbHoldout, PredictsEachGroupsRowsFromTheOthers) {
  const Config tuned = testing::small_tile_config();
  BestRow x = testing::gemm_row(device().key(), kX, tuned, 1e6);
  BestRow y = testing::gemm_row(device().key(), kY, tuned, 1e6);
  const std::string file = rows_file("holdout.jsonl", {device()}, {x, y});
  const std::string groups = testing::temp_path("holdout-groups.json");
  std::ofstream(groups) << nlohmann::json{{"model-x", {{{"op", "gemm"}, {"shape_key", kX.key()}}}},
                                          {"model-z", {{{"op", "gemm"}, {"shape_key", kZ.key()}}}}}
                               .dump();
  const std::string args = fmt::format("db holdout --device {} {} --groups {}", device().index, file, groups);
  Result r = ocltune("--json " + args);
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  ASSERT_EQ(j["rows"].size(), 1u) << r.output;  // model-z's shape has no row: nothing to hold out
  const nlohmann::json& row = j["rows"][0];
  EXPECT_EQ(row["group"], "model-x");
  EXPECT_EQ(row["shape_key"], kX.key());
  EXPECT_EQ(row["verdict"], "timed") << row.dump();
  EXPECT_EQ(row["level"], "nearest") << row.dump();  // kY's row: kX's own is held out
  EXPECT_NE(row["source"].get<std::string>().find(kY.key()), std::string::npos) << row.dump();
  EXPECT_EQ(row["same_config"], true);  // both rows hold the same configuration
  EXPECT_GT(row["tuned_ns"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(row["ratio"].get<double>(), 1.0);
  EXPECT_EQ(j["groups"]["model-x"]["rows_timed"], 1);
  EXPECT_EQ(j["overall"]["levels"]["nearest"], 1);

  // Without kY's row the chain falls to the built-in configuration, timed on its own.
  const std::string alone = rows_file("holdout-alone.jsonl", {device()}, {x});
  r = ocltune(fmt::format("--json db holdout --device {} {} --groups {}", device().index, alone, groups));
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json k = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  ASSERT_EQ(k["rows"].size(), 1u) << r.output;
  EXPECT_EQ(k["rows"][0]["level"], "builtin") << r.output;
  EXPECT_GT(k["rows"][0]["predicted_ns"].get<double>(), 0);

  r = ocltune(args + " --time-budget 0s");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 not reached")) << r.output;
  // Bad input: a groups file that is not an object of lists of rows, a negative sample size.
  const std::string bad = testing::temp_path("holdout-bad.json");
  for (const char* text : {"[1, 2]", R"({"m": [{"shape_key": 3}]})", R"({"m": 5})", "not json"}) {
    std::ofstream(bad) << text;
    r = ocltune(fmt::format("db holdout --device {} {} --groups {}", device().index, file, bad));
    EXPECT_EQ(r.code, 2) << text << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "--groups")) << r.output;
  }
  EXPECT_EQ(ocltune(args + " --rows-per-group -1").code, 2);
}

// Of two rows equally near a call's shape, the runtime takes the one chosen from more evaluations.
TEST(Evidence, NearestLevelPrefersTheDeeperOfTwoEquallyNearRows) {
  const GemmShape wide{.m = 128, .n = 64, .k = 64};   // sorts first by shape key
  const GemmShape narrow{.m = 32, .n = 64, .k = 64};  // as near to 64 x 64 x 64
  auto decide = [&](std::optional<int> wide_evaluations, std::optional<int> narrow_evaluations) {
    BestRow a = testing::gemm_row(device().key(), wide, testing::small_tile_config());
    BestRow b = testing::gemm_row(device().key(), narrow, testing::staged_tile_config());
    a.provenance = with_evaluations("{}", wide_evaluations);
    b.provenance = with_evaluations("{}", narrow_evaluations);
    const std::string system = testing::write_database(testing::temp_path("evidence-nearest.db"), {device()}, {a, b});
    auto sink = std::make_shared<testing::LogSink>();
    Runtime rt(testing::test_session().context(), device().device, testing::isolated("", system, sink));
    testing::HostGemm g(testing::test_session().context(), {.m = 64, .n = 64, .k = 64});
    const Decision d = ops::gemm_decision(rt, g.call());
    EXPECT_EQ(d.level, Level::kNearest) << sink->all();
    std::filesystem::remove(system);
    return d.config;
  };
  EXPECT_EQ(decide(std::nullopt, std::nullopt), testing::small_tile_config()) << "no evidence: by shape key";
  EXPECT_EQ(decide(40, 40), testing::small_tile_config()) << "equal depth: by shape key";
  EXPECT_EQ(decide(3, 40), testing::staged_tile_config()) << "the shallow row gives way";
  EXPECT_EQ(decide(3, std::nullopt), testing::staged_tile_config()) << "unknown is not shallow";
  EXPECT_EQ(decide(40, 3), testing::small_tile_config());
}

}  // namespace
}  // namespace ocltune
