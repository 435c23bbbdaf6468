// Tuning on several devices at once (issue 20, docs/decisions/0038), on PoCL with two CPU devices of
// one device key (POCL_DEVICES="pthread pthread", set by CTest): both take candidates, none is
// measured twice, the database holds every result, a worker killed mid-run loses nothing (the
// other finishes its problem), a kernel that kills a worker is still a crash, and bad device lists
// are usage errors.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "db/space_records.h"
#include "tests/support/test_session.h"

extern char** environ;

namespace ocltune {
namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Runs `ocltune ARGS` with `extra_env` added; stdout and stderr apart.
Result run(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}) {
  static int serial = 0;
  const std::string out = testing::temp_path("multi-out-" + std::to_string(++serial));
  const std::string err = testing::temp_path("multi-err-" + std::to_string(serial));
  std::vector<std::string> all = {OCLTUNE_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text(extra_env);
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  Result r;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Two devices of one device key, or why the test cannot run.
std::string two_devices_of_one_key() {
  const Result r = run({"devices", "--json"});
  const auto list = nlohmann::json::parse(r.out, nullptr, false);
  if (!list.is_array() || list.size() < 2) return "fewer than two OpenCL devices (POCL_DEVICES=\"pthread pthread\")";
  if (list[0]["key"] != list[1]["key"]) return "devices 0 and 1 have different device keys";
  return "";
}

std::string shapes_file(const std::string& name, const std::string& json) {
  const std::string path = testing::temp_path(name);
  std::ofstream(path) << json;
  return path;
}

// Two selftest problems of 16 correct configurations each, large enough (4 Mi floats) that one
// evaluation takes tens of milliseconds: the second worker starts before the first is done.
const char* kShapes = R"([{"op": "selftest", "n": 4194304}, {"op": "selftest", "n": 4194301}])";
const std::vector<std::string> kShapeKeys = {"n=4194304", "n=4194301"};

std::vector<std::string> tune_args(const std::string& shapes, const std::string& db) {
  return {"--devices",   "0,1", "--ops",          "selftest", "--restrict", "MODE=0", "--strategy", "random",
          "--max-evals", "0",   "--cut",          "0",        "--final",    "2",      "--shapes",   shapes,
          "--db",        db,    "--binary-cache", "off",      "--json"};
}

struct Row {
  std::int64_t run_id;
  std::string role, params, status;
};

std::map<std::string, std::vector<Row>> rows_by_shape(const std::string& db_path,
                                                      const std::vector<std::string>& shape_keys = kShapeKeys) {
  Database db = Database::open_read_only(db_path);
  std::map<std::string, std::vector<Row>> out;
  for (const std::string& shape : shape_keys) {
    for (const MeasuredPoint& m : shape_measurements(db, "selftest", shape)) {
      for (const MeasurementRow& r : db.measurements(m.device_key, "selftest", "fp32", "exact", shape)) {
        if (r.measurement_id == m.measurement_id) out[shape].push_back({r.run_id, r.role, r.params, r.status});
      }
    }
  }
  return out;
}

// No configuration measured twice in a role, every one of the 16 measured, nothing left pending.
void expect_every_configuration_once(const std::string& db_path, const std::string& log) {
  for (const auto& [shape, rows] : rows_by_shape(db_path)) {
    std::map<std::string, int> search, defaults;
    for (const Row& r : rows) {
      EXPECT_NE(r.status, "pending") << shape << " " << r.params << "\n" << log;
      if (r.role == "search") ++search[r.params];
      if (r.role == "default") ++defaults[r.params];
    }
    EXPECT_EQ(search.size(), 16u) << shape << "\n" << log;
    for (const auto& [params, n] : search) EXPECT_EQ(n, 1) << shape << " " << params << " measured twice\n" << log;
    EXPECT_EQ(defaults.size(), 1u) << shape;
    for (const auto& [params, n] : defaults) EXPECT_EQ(n, 1) << shape << " default " << params << " measured twice";
  }
}

TEST(MultiDevice, BothDevicesTakeCandidatesAndNoneIsMeasuredTwice) {
  if (const std::string why = two_devices_of_one_key(); !why.empty()) GTEST_SKIP() << why;
  const std::string shapes = shapes_file("multi-both.json", kShapes);
  const std::string db = testing::temp_path("multi-both.db");
  const Result r = run(tune_args(shapes, db));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  ASSERT_EQ(j["devices"].size(), 2u);
  std::int64_t reported = 0;
  for (const auto& d : j["devices"]) {
    EXPECT_GT(d["evaluations"].get<std::int64_t>(), 0) << "device " << d["index"] << " took no candidate\n" << r.err;
    EXPECT_EQ(d["ended"], "finished");
    reported += d["evaluations"].get<std::int64_t>();
  }
  // Progress says which device did what.
  EXPECT_NE(r.err.find("[device 0] "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[device 1] "), std::string::npos) << r.err;
  expect_every_configuration_once(db, r.err);
  // The database holds every evaluation the devices made (16 + the default, per problem), and a
  // best row per problem.
  std::int64_t rows = 0;
  for (const auto& [shape, list] : rows_by_shape(db)) {
    for (const Row& row : list) rows += row.role != "final";
  }
  EXPECT_EQ(rows, reported);
  EXPECT_EQ(reported, 2 * 17);
  EXPECT_EQ(Database::open_read_only(db).all_best().size(), 2u);
  for (const RunRow& run_row : Database::open_read_only(db).runs()) EXPECT_EQ(run_row.status, "finished");
}

TEST(MultiDevice, AWorkerKilledMidRunLosesNothingAndTheOtherFinishes) {
  if (const std::string why = two_devices_of_one_key(); !why.empty()) GTEST_SKIP() << why;
  const std::string shapes = shapes_file("multi-kill.json", kShapes);
  const std::string db = testing::temp_path("multi-kill.db");
  // Device 1's worker kills itself (SIGKILL) after 2 evaluations, with its third claimed.
  const Result r = run(tune_args(shapes, db), {"OCLTUNE_TEST_DIE_AFTER=1:2"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("device 1 died of signal 9"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("released for the other devices"), std::string::npos) << r.err;
  const std::vector<RunRow> runs = Database::open_read_only(db).runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_EQ(runs[1].status, "abandoned");
  // Every configuration once (the dead worker's in flight one measured by the other device), none
  // blamed as a crash, and the dead worker's two measurements kept.
  expect_every_configuration_once(db, r.err);
  int dead_rows = 0;
  for (const auto& [shape, rows] : rows_by_shape(db)) {
    for (const Row& row : rows) {
      EXPECT_NE(row.status, "crash") << shape << " " << row.params;
      dead_rows += row.run_id == runs[1].run_id;
    }
  }
  EXPECT_EQ(dead_rows, 2) << r.err;
  EXPECT_EQ(Database::open_read_only(db).all_best().size(), 2u);
}

TEST(MultiDevice, AKernelThatKillsAWorkerIsStillACrash) {
  if (const std::string why = two_devices_of_one_key(); !why.empty()) GTEST_SKIP() << why;
  const std::string shapes = shapes_file("multi-crash.json", R"([{"op": "selftest", "n": 1000}])");
  const std::string db = testing::temp_path("multi-crash.db");
  // MODE=2 writes through a null pointer: the worker that evaluates it dies of SIGSEGV.
  const Result r =
      run({"--devices",      "0,1",        "--ops",       "selftest", "--restrict", "MODE=0|2,WG=64,REPEAT=1",
           "--strategy",     "exhaustive", "--max-evals", "0",        "--final",    "0",
           "--cut",          "0",          "--shapes",    shapes,     "--db",       db,
           "--binary-cache", "off"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("recorded as crash"), std::string::npos) << r.err;
  std::map<std::string, std::vector<std::string>> status;
  const auto rows = rows_by_shape(db, {"n=1000"});
  for (const Row& row : rows.at("n=1000")) status[row.params].push_back(row.status);
  EXPECT_EQ(status["MODE=2,REPEAT=1,WG=64"], std::vector<std::string>{"crash"}) << r.err;
}

TEST(MultiDevice, BadDeviceListsAreUsageErrors) {
  const std::string db = testing::temp_path("multi-usage.db");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--devices", "0,0"},
           {"--devices", "0,99"},
           {"--devices", "0,x"},
           {"--devices", ""},
           {"--device", "0", "--devices", "0,1"},
           {"--device", "all", "--devices", "0,1"},
           {"--devices", "0,1", "show"},
           {"--device", "all", "ceilings"},
       }) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--ops", "selftest", "--db", db});
    const Result r = run(all);
    std::string text;
    for (const std::string& a : args) text += a + " ";
    EXPECT_EQ(r.code, 2) << text << r.err;
    EXPECT_NE(r.err.find("error"), std::string::npos) << text << r.err;
  }
}

}  // namespace
}  // namespace ocltune
