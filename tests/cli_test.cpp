// The ocltune executable: exit codes, messages, and a tuning run end to end.
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "ops/gemm/gemm_problem.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

struct Result {
  int code;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& args, const std::string& env = "") {
  const std::string command = env + " " OCLTUNE_BINARY " " + args + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(Cli, DeviceIndexOutOfRangeExits2AndListsDevices) {
  const Result r = run("--device 99 --ops gemm --db " + testing::temp_path("cli99.db"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("out of range"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[0]"), std::string::npos) << r.output;
}

// `eval --kernels`: each kernel of the plan with its median time, in the printout and the JSON; a
// shape that is not JSON, or not the op's, exits 2 with the reason.
TEST(Cli, EvalTimesEachKernelOfAPlan) {
  const std::string out = testing::temp_path("cli_eval_kernels.json");
  const std::string shape = R"('{"dir":"fwd","n":2,"c":3,"h":9,"w":9,"k":4,"r":3,"s":3,"pad_h":1,"pad_w":1}')";
  const Result r = run("--device 0 eval --op conv2d --shape " + shape + " --config default --kernels --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("in the gaps between them"), std::string::npos) << r.output;
  std::ifstream in(out);
  const nlohmann::json json = nlohmann::json::parse(in);
  ASSERT_EQ(json["results"].size(), 1u);
  const nlohmann::json& kernels = json["results"][0]["kernels"];
  ASSERT_GE(kernels.size(), 1u) << json.dump();
  for (const nlohmann::json& k : kernels) {
    EXPECT_FALSE(k["kernel"].get<std::string>().empty());
    EXPECT_GT(k["median_ns"].get<double>(), 0) << k.dump();
    EXPECT_GE(k["gap_ns"].get<double>(), 0) << k.dump();
  }
  EXPECT_EQ(run("--device 0 eval --op conv2d --shape '{\"n\":' --config default").code, 2);
  const Result wrong = run(R"(--device 0 eval --op conv2d --shape '{"m":4}' --config default)");
  EXPECT_EQ(wrong.code, 2) << wrong.output;
  EXPECT_NE(wrong.output.find("--shape"), std::string::npos) << wrong.output;
}

TEST(Cli, UnknownOpExits2AndNamesTheKnownOnes) {
  const Result r = run("--ops gemm,convolution3d");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("convolution3d"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gemm"), std::string::npos) << r.output;
}

TEST(Cli, UnknownFlagAndBadValuesExit2) {
  EXPECT_EQ(run("--frobnicate").code, 2);
  EXPECT_EQ(run("--device notanumber").code, 2);
  EXPECT_EQ(run("--max-evals -3").code, 2);
  EXPECT_EQ(run("--strategy hill-climbing --db " + testing::temp_path("cli-s.db")).code, 2);
  EXPECT_EQ(run("--shapes /nonexistent/shapes.json --db " + testing::temp_path("cli-f.db")).code, 2);
}

TEST(Cli, HelpListsOpsAndExits0) {
  const Result r = run("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("gemm"), std::string::npos);
  EXPECT_NE(r.output.find("--max-evals"), std::string::npos);
}

TEST(Cli, NoPlatformExplainsTheIcdLoaderAndExits1) {
  const Result r = run("devices", "OCL_ICD_VENDORS=/nonexistent-vendors-dir");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("/etc/OpenCL/vendors"), std::string::npos) << r.output;
}

TEST(Cli, DevicesJsonIsValid) {
  const Result r = run("devices --json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(j.is_array()) << r.output;
  ASSERT_FALSE(j.empty());
  EXPECT_TRUE(j[0].contains("key"));
  EXPECT_TRUE(j[0].contains("max_work_group_size"));
}

TEST(Cli, CeilingsMeasureTheDeviceAndSayWhatItLacks) {
  const Result r = run("ceilings --json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_GT(j.value("copy_gbs", 0.0), 0.0) << r.output;
  EXPECT_GT(j.value("fp32_fma_gflops", 0.0), 0.0) << r.output;
  // null without tensor cores (PoCL in CI), a positive rate with them.
  ASSERT_TRUE(j.contains("tf32_mma_gflops"));
  for (const char* key : {"tf32_mma_gflops", "fp16_mma_gflops", "bf16_mma_gflops"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j[key].is_null() || j[key].get<double>() > 0) << key << ": " << r.output;
  }
  EXPECT_EQ(run("--device 99 ceilings").code, 2);
}

TEST(Cli, TunesAShapesFileIntoTheDatabase) {
  const std::string shapes = testing::temp_path("shapes.json");
  std::ofstream(shapes)
      << R"([{"op": "gemm", "m": 19, "n": 7, "k": 5}, {"op": "gemm", "m": 8, "n": 8, "k": 8, "trans_b": true}])";
  const std::string db_path = testing::temp_path("cli.db");
  const Result r = run("--device 0 --ops gemm --max-evals 3 --final 0 --shapes " + shapes + " --db " + db_path);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("speedup"), std::string::npos) << r.output;
  Database db = Database::open_read_only(db_path);
  EXPECT_EQ(db.all_best().size(), 2u);
  // Each shape's defaults (gemm.cl's, plus the cpu variant's on a CPU), then 3 evaluations.
  const DeviceInfo& device = testing::test_session().device();
  const std::size_t defaults = GemmProblem({.m = 19, .n = 7, .k = 5}).default_configs(device).size() +
                               GemmProblem({.m = 8, .n = 8, .k = 8, .trans_b = true}).default_configs(device).size();
  EXPECT_EQ(db.count_measurements(), static_cast<std::int64_t>(defaults + 2 * 3));
  const Result show = run("show --json --db " + db_path);
  ASSERT_EQ(show.code, 0) << show.output;
  EXPECT_EQ(nlohmann::json::parse(show.output).size(), 2u);
}

// Issue 20: running the same command again after a run finished compiles no program (what it runs
// comes from the binary cache) and measures no search configuration again; it re-measures only the
// untuned defaults (the baseline, always measured in the same run) and re-times the finalists.
TEST(Cli, RerunningAFinishedRunCompilesNoProgramAndSearchesNothingAgain) {
  const std::string shapes = testing::temp_path("rerun-shapes.json");
  std::ofstream(shapes)
      << R"([{"op": "gemm", "m": 33, "n": 17, "k": 9}, {"op": "reduce", "dims": [64, 300], "axes": [1], "kind": "sum"},
                               {"op": "softmax", "dims": [16, 100], "axis": 1, "log": false}])";
  const std::string cache = testing::temp_path("rerun-binaries");
  std::filesystem::remove_all(cache);
  const std::string db_path = testing::temp_path("rerun.db");
  const std::string command = "--device 0 --ops all --max-evals 4 --json --quiet --shapes " + shapes +
                              " --binary-cache " + cache + " --db " + db_path;
  const auto summary = [](const Result& r) {
    const std::size_t start = r.output.find('{');
    return nlohmann::json::parse(start == std::string::npos ? "" : r.output.substr(start), nullptr, false);
  };
  const Result first = run(command);
  ASSERT_EQ(first.code, 0) << first.output;
  const nlohmann::json a = summary(first);
  ASSERT_TRUE(a.is_object()) << first.output;
  EXPECT_GT(a["programs_compiled"].get<int>(), 0) << first.output;

  const Result second = run(command);
  ASSERT_EQ(second.code, 0) << second.output;
  const nlohmann::json b = summary(second);
  ASSERT_TRUE(b.is_object()) << second.output;
  EXPECT_EQ(b["programs_compiled"].get<int>(), 0) << second.output;
  EXPECT_GT(b["programs_loaded"].get<int>(), 0) << second.output;
  EXPECT_EQ(b["problems"].size(), a["problems"].size());
  Database db = Database::open_read_only(db_path);
  std::map<std::string, int> second_run_roles;
  for (const BestRow& best : db.all_best()) {
    for (const MeasurementRow& m : db.measurements(best.device_key, best.op, best.dtype, best.math, best.shape_key)) {
      if (m.run_id == b["run_id"].get<std::int64_t>()) ++second_run_roles[m.role];
    }
  }
  EXPECT_EQ(second_run_roles.count("search"), 0u) << second.output;
  EXPECT_GT(second_run_roles["default"], 0) << second.output;
}

TEST(Cli, BadBudgetsAndRestrictionsExit2BeforeMeasuringAnything) {
  const std::string db = testing::temp_path("cli-budget.db");
  EXPECT_EQ(run("--ops gemm --time-budget 10x --db " + db).code, 2);
  EXPECT_EQ(run("--ops gemm --fraction 1.5 --db " + db).code, 2);
  EXPECT_EQ(run("--ops gemm --restrict MWG --db " + db).code, 2);
  EXPECT_EQ(run("--ops gemm --isolate --eval-timeout soon --db " + db).code, 2);
  EXPECT_EQ(run("simulate --space /nonexistent.jsonl").code, 1);
  EXPECT_EQ(run("simulate --strategy hill-climbing --space x").code, 2);
}

// Malformed values are usage errors (exit 2) that name what is wrong, never an internal error or
// a silently ignored flag (issue 19, defect 7).
TEST(Cli, MalformedDurationsRestrictionsAndOpListsExit2WithTheReason) {
  const std::string db = testing::temp_path("cli-malformed.db");
  const std::string quick = " --shapes quick --max-evals 1 --quiet --db " + db;
  for (const std::string& budget : std::vector<std::string>{".", std::string(400, '9'), "9999999h", "1e400s"}) {
    const Result r = run("--ops gemm --time-budget " + budget + quick);
    EXPECT_EQ(r.code, 2) << budget << ": " << r.output;
    EXPECT_NE(r.output.find("bad duration"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  }
  Result r = run("--ops gemm --restrict NOSUCHPARAM=1" + quick);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("NOSUCHPARAM"), std::string::npos) << r.output;
  r = run("--ops gemm --restrict MWG=7" + quick);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("MWG never takes the value 7"), std::string::npos) << r.output;
  r = run("--ops ,, --max-evals 1 --db " + db);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("empty name"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("'--max-evals'"), std::string::npos) << "the next option was taken as an op: " << r.output;
}

TEST(Cli, RecordThenSimulateReplaysAnExhaustiveRun) {
  const std::string shapes = testing::temp_path("sim-shapes.json");
  std::ofstream(shapes) << R"([{"op": "selftest", "n": 700}])";
  const std::string db = testing::temp_path("sim.db");
  const Result tuned =
      run("--ops selftest --restrict MODE=0 --strategy exhaustive --max-evals 0 --final 0 --cut 0 --quiet "
          "--shapes " +
          shapes + " --db " + db);
  ASSERT_EQ(tuned.code, 0) << tuned.output;
  const std::string space = testing::temp_path("sim.jsonl");
  const Result recorded = run("record --from-db " + db + " --op selftest --shape n=700 --out " + space);
  ASSERT_EQ(recorded.code, 0) << recorded.output;
  EXPECT_NE(recorded.output.find("16 configurations"), std::string::npos) << recorded.output;
  const Result simulated = run("simulate --seeds 3 --json --space " + space);
  ASSERT_EQ(simulated.code, 0) << simulated.output;
  const auto j = nlohmann::json::parse(simulated.output, nullptr, false);
  ASSERT_TRUE(j.is_array()) << simulated.output;
  ASSERT_EQ(j[0]["strategies"].size(), 5u);
  for (const auto& s : j[0]["strategies"]) {
    // Every point verified (no cuts): the first evaluation already finds something; none beats the optimum.
    for (double f : s["fraction_of_optimum"]) {
      EXPECT_GT(f, 0.0) << s.dump();
      EXPECT_LE(f, 1.0) << s.dump();
    }
  }
  const Result from_db =
      run("simulate --seeds 2 --strategy model,random --from-db " + db + " --op selftest --shape n=700");
  ASSERT_EQ(from_db.code, 0) << from_db.output;
  EXPECT_NE(from_db.output.find("| model |"), std::string::npos) << from_db.output;
}

// Impossible shapes are refused before a run starts (exit 2, naming the shape), never after it has
// started (exit 1) or by the OOM killer (issue 19, defect 7): a matrix over 2^31 elements, a buffer
// over the device's largest allocation, buffers over its global memory, in several families.
TEST(Cli, ImpossibleShapesExit2BeforeTheRunStarts) {
  const DeviceInfo& device = testing::test_session().device();
  const double max_alloc = static_cast<double>(device.max_alloc_bytes);
  const double global = static_cast<double>(device.global_mem_bytes);
  struct Case {
    std::string json, expect;
  };
  // GEMM: C of 70000 x 70000 is 4.9e9 elements.
  std::vector<Case> cases = {{R"({"op": "gemm", "m": 70000, "n": 70000, "k": 64})", "more than 2^31-1"}};
  // GEMM: a batch whose A is larger than the largest allocation (at most 65535 x 4 MiB = 256 GiB).
  const double batch = std::ceil(max_alloc / (1024.0 * 1024.0 * 4.0)) + 1;
  if (batch <= 65535) {
    cases.push_back({fmt::format(R"({{"op": "gemm", "m": 1024, "n": 1024, "k": 1024, "batch": {}}})", batch),
                     "its A buffer needs"});
  }
  // argmax over a dimension of 1 writes one int64 per input element: 16 GB (its 8 GB input is
  // named first where that alone is over the largest allocation: PoCL allows a quarter of memory).
  const bool input_too_large = 2e9 * 4 > max_alloc;
  if (2e9 * 8 > max_alloc) {
    cases.push_back({R"({"op": "reduce", "dims": [2000000000, 1], "axes": [1], "kind": "argmax"})",
                     input_too_large ? "its input buffer needs" : "its output buffer needs"});
  }
  // layer_norm_backward: dy, x and dx of 8 GB each (each too large, or too large together).
  if (3 * 2e9 * 4 > global) {
    cases.push_back({R"({"op": "norm", "kind": "layer_norm_backward", "dims": [2000000000, 1], "axis": 1})",
                     input_too_large ? "buffer needs" : "together"});
  }
  // elementwise: x, four operands and the output of 2^30 fp32 elements each, 24 GiB together.
  const bool operand_too_large = 4.0 * (1 << 30) > max_alloc;
  if (6 * 4.0 * (1 << 30) > global) {
    const std::string t = R"("tensor": [1073741824])";
    cases.push_back({fmt::format(R"({{"op": "elementwise", "x": [1073741824], "steps": [{{"op": "add", {0}}}, )"
                                 R"({{"op": "mul", {0}}}, {{"op": "sub", {0}}}, {{"op": "div", {0}}}]}})",
                                 t),
                     operand_too_large ? "buffer needs" : "together"});
  }
  const std::string db = testing::temp_path("cli-impossible.db");
  for (const Case& c : cases) {
    const std::string shapes = testing::temp_path("impossible.json");
    std::ofstream(shapes) << "[" << c.json << "]";
    const std::string op = nlohmann::json::parse(c.json)["op"];
    const Result r = run("--ops " + op + " --max-evals 1 --quiet --shapes " + shapes + " --db " + db, "timeout 120");
    EXPECT_EQ(r.code, 2) << c.json << ": " << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.json << ": " << r.output;
    EXPECT_NE(r.output.find(op), std::string::npos) << r.output;
  }
  EXPECT_GE(cases.size(), 3u) << "the test device's limits leave too few impossible shapes";
  EXPECT_FALSE(std::filesystem::exists(db)) << "a run started";
}

TEST(Cli, MalformedShapesFileExits2WithTheReason) {
  const std::string shapes = testing::temp_path("bad-shapes.json");
  std::ofstream(shapes) << R"([{"op": "gemm", "m": -4, "n": 7, "k": 5}])";
  const Result r = run("--ops gemm --shapes " + shapes + " --db " + testing::temp_path("cli-bad.db"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("'m'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ocltune
