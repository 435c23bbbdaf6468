// Runs whose process died without finishing them, and the evaluations they left pending.
#include "db/abandoned_runs.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "db/database.h"
#include "db/sqlite.h"

namespace ocltune {
namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks after boot); empty when unreadable. The
// command name (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
std::string start_ticks(std::int64_t pid) {
  const std::string stat = first_line(fmt::format("/proc/{}/stat", pid));
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

std::string pid_namespace(std::int64_t pid) {
  std::error_code ec;
  const auto target = std::filesystem::read_symlink(fmt::format("/proc/{}/ns/pid", pid), ec);
  return ec ? std::string() : target.string();
}

struct StartParts {
  std::string boot, pid_ns, ticks;
};

StartParts split(const std::string& start) {
  StartParts p;
  const std::size_t a = start.find('/');
  const std::size_t b = a == std::string::npos ? a : start.find('/', a + 1);
  if (b == std::string::npos) return p;
  p.boot = start.substr(0, a);
  p.pid_ns = start.substr(a + 1, b - a - 1);
  p.ticks = start.substr(b + 1);
  return p;
}

std::string boot_id() { return first_line("/proc/sys/kernel/random/boot_id"); }

}  // namespace

ProcessIdentity this_process() {
  ProcessIdentity p;
  p.pid = getpid();
  const std::string boot = boot_id(), ns = pid_namespace(p.pid), ticks = start_ticks(p.pid);
  if (!boot.empty() && !ns.empty() && !ticks.empty()) p.start = fmt::format("{}/{}/{}", boot, ns, ticks);
  return p;
}

bool run_owner_gone(const RunRow& run, const std::string& host) {
  if (run.status != "running" || !run.pid || *run.pid <= 0 || host.empty() || run.host != host) return false;
  const StartParts recorded = split(run.process_start);
  const std::string our_ns = pid_namespace(getpid());
  // Another container with the same host name counts pids in another namespace: no judgement.
  if (!recorded.pid_ns.empty() && recorded.pid_ns != our_ns) return false;
  if (!recorded.boot.empty() && recorded.boot != boot_id()) return true;  // rebooted since
  if (kill(static_cast<pid_t>(*run.pid), 0) != 0 && errno == ESRCH) return true;
  // A process has the pid (EPERM: another user's): it is the run's only if it started then.
  if (recorded.ticks.empty()) return false;
  const std::string ticks = start_ticks(*run.pid);
  return !ticks.empty() && ticks != recorded.ticks;
}

RecoveredRuns recover_abandoned_runs(Database& db, const std::string& host, std::int64_t current_run_id) {
  RecoveredRuns out;
  sql::Connection& c = db.connection();
  sql::Transaction tx(c);
  for (const RunRow& run : db.runs()) {
    if (run.run_id == current_run_id || !run_owner_gone(run, host)) continue;
    sql::Statement(c, "UPDATE runs SET status = 'abandoned', finished_at = ?1 WHERE run_id = ?2 AND status = 'running'")
        .bind(1, utc_now())
        .bind(2, run.run_id)
        .run();
    out.abandoned.push_back(run.run_id);
  }
  sql::Statement crash(c, R"(
    UPDATE measurements SET status = 'crash', median_ns = NULL, min_ns = NULL, max_ns = NULL, spread = NULL,
      samples = NULL, gflops = NULL, gbs = NULL,
      error = 'the process ended during this evaluation (found pending by run ' || ?1 || '); not evaluated again'
    WHERE status = 'pending' AND run_id <> ?1
      AND run_id IN (SELECT run_id FROM runs WHERE status <> 'running'))");
  crash.bind(1, current_run_id).run();
  out.crashed = c.changes();
  tx.commit();
  return out;
}

}  // namespace ocltune
