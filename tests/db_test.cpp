// The database: schema, commits, best-only-if-faster, and refusal of files that are not ours.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db/abandoned_runs.h"
#include "db/database.h"
#include "db/sqlite.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

MeasurementRow measurement(std::int64_t run_id, const std::string& params, const std::string& status, double ns) {
  MeasurementRow m;
  m.run_id = run_id;
  m.device_key = "dev";
  m.op = "gemm";
  m.dtype = "fp32";
  m.shape_key = "m=1";
  m.shape_json = "{}";
  m.source_hash = "h";
  m.params = params;
  m.status = status;
  if (status == "ok") m.median_ns = m.min_ns = m.max_ns = ns;
  return m;
}

BestRow best(double ns, const std::string& params_json) {
  BestRow b;
  b.device_key = "dev";
  b.op = "gemm";
  b.dtype = "fp32";
  b.shape_key = "m=1";
  b.shape_json = "{}";
  b.params_json = params_json;
  b.median_ns = b.min_ns = b.max_ns = ns;
  b.source_hash = "h";
  return b;
}

TEST(Database, CreatesTheSchemaAndKeepsRowsAcrossReopen) {
  const std::string path = testing::temp_path("create.db");
  {
    Database db = Database::open(path);
    EXPECT_EQ(db.schema_version(), kSchemaVersion);
    db.upsert_device(testing::test_session().device());
    RunRow run;
    run.device_key = testing::test_session().device().key();
    run.tool_version = "test";
    const std::int64_t id = db.begin_run(run);
    db.add_measurement(measurement(id, "A=1", "ok", 10));
    db.add_measurement(measurement(id, "A=2", "compile_error", 0));
    db.finish_run(id, "finished", 1, 2, 3);
  }
  Database db = Database::open_read_only(path);
  EXPECT_EQ(db.count_measurements(), 2);
  const auto rows = db.measurements("dev", "gemm", "fp32", "exact", "m=1");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].status, "compile_error");
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].status, "finished");
}

TEST(Database, BestIsReplacedOnlyByAFasterResult) {
  Database db = Database::open(testing::temp_path("best.db"));
  EXPECT_TRUE(db.update_best_if_faster(best(100, R"({"A":1})")));
  EXPECT_FALSE(db.update_best_if_faster(best(120, R"({"A":2})")));
  EXPECT_EQ(db.best("dev", "gemm", "fp32", "exact", "m=1")->params_json, R"({"A":1})");
  EXPECT_TRUE(db.update_best_if_faster(best(80, R"({"A":3})")));
  EXPECT_EQ(db.best("dev", "gemm", "fp32", "exact", "m=1")->params_json, R"({"A":3})");
  EXPECT_EQ(db.all_best().size(), 1u);
}

TEST(Database, RefusesAFileThatIsNotSqliteAndLeavesItUntouched) {
  const std::string path = testing::temp_path("garbage.db");
  std::ofstream(path) << "this is not a database, just some text that happens to be here\n";
  const std::string before = read_file(path);
  EXPECT_THROW(Database::open(path), DatabaseError);
  EXPECT_EQ(read_file(path), before);
}

TEST(Database, RefusesAForeignSqliteDatabaseAndLeavesItUntouched) {
  const std::string path = testing::temp_path("foreign.db");
  {
    sql::Connection c(path, false);
    c.exec("CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos(name) VALUES ('cat');");
  }
  const std::string before = read_file(path);
  try {
    Database::open(path);
    FAIL() << "a foreign database was accepted";
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find("not an ocltune"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(path), before);
}

TEST(Database, RefusesANewerSchema) {
  const std::string path = testing::temp_path("newer.db");
  { Database::open(path); }
  {
    sql::Connection c(path, false);
    c.exec("UPDATE schema_version SET version = 999");
  }
  try {
    Database::open(path);
    FAIL() << "a newer schema was accepted";
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

TEST(Database, RefusesATruncatedFile) {
  const std::string path = testing::temp_path("truncated.db");
  {
    Database db = Database::open(path);
    db.upsert_device(testing::test_session().device());
    RunRow run;
    run.device_key = testing::test_session().device().key();
    run.tool_version = "test";
    const std::int64_t id = db.begin_run(run);
    for (int i = 0; i < 200; ++i) db.add_measurement(measurement(id, "A=" + std::to_string(i), "skipped", 0));
    db.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  EXPECT_THROW(Database::open(path), DatabaseError);
}

// A tuner writes WAL databases; read-only they must open where the reader cannot create the -shm
// file (a root-owned directory, a read-only mount, /usr/share). A -shm path that cannot be created
// even by root (a link into a missing directory) stands in for those here (issue 19, defect 2).
TEST(Database, ReadOnlyOpenOfAWalFileWorksWhereItsShmCannotBeCreated) {
  const std::string dir = testing::temp_path("wal-read-only");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tuned.db";
  {
    Database db = Database::open(path);
    db.upsert_device(testing::test_session().device());
    RunRow run;
    run.device_key = testing::test_session().device().key();
    run.tool_version = "test";
    db.add_measurement(measurement(db.begin_run(run), "A=1", "ok", 10));
  }
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));  // checkpointed on close; the file stays WAL
  std::filesystem::remove(path + "-shm");
  std::filesystem::create_symlink("/nonexistent-ocltune-directory/shm", path + "-shm");
  Database db = Database::open_read_only(path);
  EXPECT_EQ(db.count_measurements(), 1);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  std::filesystem::remove(path + "-shm");
}

TEST(Database, ReadOnlyOpenOfAMissingFileFails) {
  EXPECT_THROW(Database::open_read_only(testing::temp_path("missing.db")), DatabaseError);
}

// Issue 19, defect 7: several processes (here threads, each with its own connection) opening one
// fresh file at once. Each open must succeed (switching into WAL mode answered "database is locked"
// while the others were opening), and the file must end with one schema_version row.
TEST(Database, ConcurrentFirstOpensOfOneFreshFileAllSucceedAndWriteOneVersionRow) {
  constexpr int kThreads = 8;
  for (int round = 0; round < 12; ++round) {
    const std::string path = testing::temp_path("concurrent-" + std::to_string(round) + ".db");
    std::barrier start(kThreads);
    std::atomic<int> failures = 0;
    std::string first_error;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        start.arrive_and_wait();
        try {
          Database db = Database::open(path);
        } catch (const std::exception& e) {
          if (failures++ == 0) first_error = e.what();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_EQ(failures, 0) << "round " << round << ": " << first_error;
    sql::Connection c(path, true);
    sql::Statement s(c, "SELECT count(*), max(version) FROM schema_version");
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.int64(0), 1) << "round " << round;
    EXPECT_EQ(s.int64(1), kSchemaVersion);
    sql::Statement mode(c, "PRAGMA journal_mode");
    ASSERT_TRUE(mode.step());
    EXPECT_EQ(mode.text(0), "wal");
  }
}

// A pid no process has: a child that has exited and been reaped.
std::int64_t dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

// Issue 19, defects 6 and 7: a `running` run whose process is gone becomes `abandoned`, and the
// evaluations such runs (or runs that ended otherwise) left `pending` become `crash`; runs that may
// be alive (this process's, another host's, another pid namespace's, older rows without a
// process) and their pending rows are left alone.
TEST(AbandonedRuns, DeadRunsAreMarkedAndTheirPendingRowsRecordedAsCrash) {
  Database db = Database::open(testing::temp_path("abandoned.db"));
  db.upsert_device(testing::test_session().device());
  const ProcessIdentity self = this_process();
  ASSERT_FALSE(self.start.empty()) << "/proc is readable here";
  const std::string pid_ns = self.start.substr(0, self.start.rfind('/'));
  auto run = [&](const std::string& host, std::optional<std::int64_t> pid, const std::string& start) {
    RunRow r;
    r.device_key = testing::test_session().device().key();
    r.tool_version = "test";
    r.host = host;
    r.pid = pid;
    r.process_start = start;
    return db.begin_run(r);
  };
  std::map<std::string, std::int64_t> id;
  id["dead"] = run("here", dead_pid(), "");
  id["reused pid"] = run("here", self.pid, pid_ns + "/1");  // this pid, but started at another time
  id["rebooted"] = run("here", self.pid, "another-boot" + self.start.substr(self.start.find('/')));
  id["alive"] = run("here", self.pid, self.start);
  id["other host"] = run("elsewhere", dead_pid(), "");
  id["other container"] = run("here", dead_pid(), "x/pid:[1]/5");
  id["no process"] = run("here", std::nullopt, "");
  sql::Statement(db.connection(), "UPDATE runs SET pid = NULL WHERE run_id = ?").bind(1, id["no process"]).run();
  id["finished"] = run("here", self.pid, self.start);
  db.finish_run(id["finished"], "failed", 0, 0, 0);
  id["current"] = run("here", dead_pid(), "");
  for (const auto& [name, run_id] : id) db.add_measurement(measurement(run_id, "A=1", kPendingStatus, 0));

  const RecoveredRuns recovered = recover_abandoned_runs(db, "here", id["current"]);
  EXPECT_EQ(recovered.abandoned, (std::vector<std::int64_t>{id["dead"], id["reused pid"], id["rebooted"]}));
  EXPECT_EQ(recovered.crashed, 4);
  std::map<std::int64_t, std::string> run_status;
  for (const RunRow& r : db.runs()) run_status[r.run_id] = r.status;
  for (const char* name : {"dead", "reused pid", "rebooted"}) EXPECT_EQ(run_status[id[name]], "abandoned") << name;
  for (const char* name : {"alive", "other host", "other container", "no process", "current"}) {
    EXPECT_EQ(run_status[id[name]], "running") << name;
  }
  std::map<std::int64_t, std::string> row_status;
  for (const MeasurementRow& m : db.measurements("dev", "gemm", "fp32", "exact", "m=1")) {
    row_status[m.run_id] = m.status;
    if (m.status == "crash") {
      EXPECT_NE(m.error.find("process ended"), std::string::npos) << m.error;
    }
  }
  for (const char* name : {"dead", "reused pid", "rebooted", "finished"})
    EXPECT_EQ(row_status[id[name]], "crash") << name;
  for (const char* name : {"alive", "other host", "other container", "no process", "current"}) {
    EXPECT_EQ(row_status[id[name]], kPendingStatus) << name;
  }
  // Idempotent: a second look finds nothing new.
  const RecoveredRuns again = recover_abandoned_runs(db, "here", id["current"]);
  EXPECT_TRUE(again.abandoned.empty());
  EXPECT_EQ(again.crashed, 0);
}

TEST(AbandonedRuns, APendingRowIsCompletedInPlace) {
  Database db = Database::open(testing::temp_path("pending.db"));
  db.upsert_device(testing::test_session().device());
  RunRow r;
  r.device_key = testing::test_session().device().key();
  r.tool_version = "test";
  const std::int64_t run_id = db.begin_run(r);
  const std::int64_t id = db.add_measurement(measurement(run_id, "A=1", kPendingStatus, 0));
  db.complete_measurement(id, measurement(run_id, "A=1", "ok", 42));
  const auto rows = db.measurements("dev", "gemm", "fp32", "exact", "m=1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].measurement_id, id);
  EXPECT_EQ(rows[0].status, "ok");
  EXPECT_EQ(rows[0].median_ns, 42);
  EXPECT_EQ(db.runs()[0].pid, getpid()) << "begin_run records its process";
}

}  // namespace
}  // namespace ocltune
