// `ocltune --devices 0,2` / `--device all`: one worker process per device (`ocltune tune --device N`
// in a group of runs), one database. This process begins the runs, relays each worker's progress
// with its device in front, takes over the claims of a worker that dies, and prints what each
// device evaluated and the totals (docs/decisions/0038).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/usage_error.h"
#include "db/claims.h"
#include "db/database.h"
#include "harness/ceilings.h"
#include "harness/device.h"
#include "harness/device_errors.h"
#include "harness/session.h"

extern char** environ;

namespace ocltune {
namespace {

std::atomic<int> signals_seen{0};
void count_signal(int) { signals_seen.fetch_add(1); }

struct Worker {
  DeviceInfo device;
  std::int64_t run_id = 0;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  std::string out, err_line;
  bool running = false;
  int status = 0;     // waitpid's
  std::string ended;  // how it ended, in words
  bool ok = false;    // exited 0
};

std::string self_path() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ocltune") : path.string();
}

// The flags of one device's run, as the user gave them.
std::vector<std::string> worker_flags(const CliOptions& o, int compile_threads, const std::string& db_path) {
  std::vector<std::string> f = {"--ops",
                                fmt::format("{}", fmt::join(o.ops, ",")),
                                "--db",
                                db_path,
                                "--strategy",
                                o.strategy,
                                "--math",
                                o.math,
                                "--seed",
                                std::to_string(o.seed),
                                "--cut",
                                fmt::format("{}", o.cut),
                                "--final",
                                std::to_string(o.final_candidates),
                                "--compile-threads",
                                std::to_string(compile_threads),
                                "--eval-timeout",
                                o.eval_timeout};
  auto add = [&](const char* flag, const std::string& value) { f.insert(f.end(), {flag, value}); };
  if (o.max_evals >= 0) add("--max-evals", std::to_string(o.max_evals));
  if (!o.restrict.empty()) add("--restrict", o.restrict);
  if (o.fraction > 0) add("--fraction", fmt::format("{}", o.fraction));
  if (!o.time_budget.empty()) add("--time-budget", o.time_budget);
  if (o.patience > 0) add("--patience", std::to_string(o.patience));
  if (!o.binary_cache.empty()) add("--binary-cache", o.binary_cache);
  if (!o.shapes.empty()) add("--shapes", o.shapes);
  if (o.isolate) f.push_back("--isolate");
  if (o.warm_start) f.push_back("--warm-start");
  if (o.quiet) f.push_back("--quiet");
  f.push_back("--json");  // its report, for the summary
  return f;
}

void spawn(Worker& w, const std::vector<std::string>& args) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw Error("pipe: " + std::string(strerror(errno)));
  std::vector<std::string> all = args;
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  // Its own process group: a Ctrl-C at the terminal reaches this process only, which passes it on
  // once (two would make the worker leave its evaluation in flight).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const int rc = posix_spawn(&w.pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    throw Error(fmt::format("cannot start {}: {}", argv[0], strerror(rc)));
  }
  w.out_fd = out[0];
  w.err_fd = err[0];
  w.running = true;
}

// Reads what is there; false at end of file.
bool read_some(int fd, std::string& into) {
  char buf[8192];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) into.append(buf, static_cast<std::size_t>(n));
  return n > 0 || (n < 0 && errno == EINTR);
}

void relay_lines(Worker& w, bool flush_all) {
  for (std::size_t nl; (nl = w.err_line.find('\n')) != std::string::npos;) {
    fmt::print(stderr, "[device {}] {}\n", w.device.index, w.err_line.substr(0, nl));
    w.err_line.erase(0, nl + 1);
  }
  if (flush_all && !w.err_line.empty()) {
    fmt::print(stderr, "[device {}] {}\n", w.device.index, w.err_line);
    w.err_line.clear();
  }
  std::fflush(stderr);
}

// One round of reading every open pipe (waits up to `timeout_ms` for something to read).
void pump(std::vector<Worker>& workers, int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<std::pair<Worker*, bool>> owners;  // worker, is stderr
  for (Worker& w : workers) {
    if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0}), owners.emplace_back(&w, false);
    if (w.err_fd >= 0) fds.push_back({w.err_fd, POLLIN, 0}), owners.emplace_back(&w, true);
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    auto [w, is_err] = owners[i];
    int& fd = is_err ? w->err_fd : w->out_fd;
    if (!read_some(fd, is_err ? w->err_line : w->out)) {
      close(fd);
      fd = -1;
    }
    if (is_err) relay_lines(*w, fd < 0);
  }
}

bool is_fault(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT || sig == SIGSYS ||
         sig == SIGTRAP;
}

std::string signal_text(int sig) { return fmt::format("signal {} ({})", sig, strsignal(sig)); }

// A worker that did not finish: its claims. A fault (SIGSEGV, SIGBUS, ...) is taken to be the
// kernel's, as in one process (issue 19): the claim is recorded as `crash`. Any other end (SIGKILL
// from outside or the OOM killer, a second Ctrl-C, a runtime error) is not the configuration's:
// the claim is released for the group's other workers, once; a second such end in the same
// configuration records it as `crash`, so no configuration kills worker after worker.
class Takeover {
 public:
  explicit Takeover(Database& db) : db_(db) {}

  void worker_ended(const Worker& w, bool quiet) {
    const bool signalled = WIFSIGNALED(w.status);
    const int sig = signalled ? WTERMSIG(w.status) : 0;
    std::vector<std::string> released, crashed;
    for (const PendingRow& row : pending_rows_of_run(db_, w.run_id)) {
      const std::string key =
          fmt::format("{}\n{}\n{}\n{}\n{}", row.op, row.shape_key, row.source_hash, row.params, row.role);
      const std::string what = fmt::format("{} {} {}", row.op, row.shape_key, row.params);
      const bool twice = released_.count(key) > 0;
      if ((signalled && is_fault(sig)) || twice) {
        record_claim_as_crash(db_, row.measurement_id,
                              twice ? fmt::format("two workers ended during this evaluation (the last: device {}, {})",
                                                  w.device.index, w.ended)
                                    : fmt::format("the worker of device {} died of {} during this evaluation; not "
                                                  "evaluated again",
                                                  w.device.index, signal_text(sig)));
        crashed.push_back(what);
      } else {
        release_claim(db_, row.measurement_id);
        released_.insert(key);
        released.push_back(what);
      }
    }
    const std::vector<RunRow> runs = db_.runs();
    const auto run = std::find_if(runs.begin(), runs.end(), [&](const RunRow& r) { return r.run_id == w.run_id; });
    if (run != runs.end() && run->status == "running") {
      const bool interrupted = WIFEXITED(w.status) && WEXITSTATUS(w.status) == kExitInterrupted;
      db_.finish_run(w.run_id, signalled ? "abandoned" : interrupted ? "interrupted" : "failed", 0, 0, 0);
    }
    if (quiet && released.empty() && crashed.empty()) return;
    if (!released.empty()) {
      fmt::print(stderr, "ocltune: device {} {}; its evaluation(s) in flight released for the other devices: {}\n",
                 w.device.index, w.ended, fmt::join(released, "; "));
    }
    if (!crashed.empty()) {
      fmt::print(stderr, "ocltune: device {} {}; its evaluation(s) in flight recorded as crash: {}\n", w.device.index,
                 w.ended, fmt::join(crashed, "; "));
    }
  }

 private:
  Database& db_;
  std::set<std::string> released_;
};

std::string describe_end(int status) {
  if (WIFSIGNALED(status)) return "died of " + signal_text(WTERMSIG(status));
  const int code = WEXITSTATUS(status);
  if (code == 0) return "finished";
  if (code == kExitInterrupted) return "interrupted";
  return fmt::format("failed (exit {})", code);
}

// The worker's --json report (the first '{' on its stdout onwards); null when there is none.
nlohmann::json report_of(const Worker& w) {
  const std::size_t start = w.out.find('{');
  if (start == std::string::npos) return nullptr;
  nlohmann::json j = nlohmann::json::parse(w.out.substr(start), nullptr, false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

std::string rate_text(const nlohmann::json& outcome) {
  if (outcome.contains("gflops")) return fmt::format("{:.1f} GFLOP/s", outcome["gflops"].get<double>());
  if (outcome.contains("gbs")) return fmt::format("{:.1f} GB/s", outcome["gbs"].get<double>());
  return outcome.value("status", "-");
}

// Per problem: the devices' evaluations and the verdict of the run that re-timed the finalists
// (else the fastest best any of them reports).
void print_problems(const std::vector<Worker>& workers, const std::vector<nlohmann::json>& reports) {
  struct Row {
    std::string op, shape;
    std::vector<int> evals;
    int failed = 0;
    nlohmann::json best, dflt;
    bool final_best = false;
  };
  std::vector<Row> rows;
  for (std::size_t d = 0; d < workers.size(); ++d) {
    if (!reports[d].is_object()) continue;
    for (const auto& p : reports[d]["problems"]) {
      const std::string op = p.value("op", ""), shape = p.value("shape_key", "");
      auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.op == op && r.shape == shape; });
      if (it == rows.end()) {
        Row row;
        row.op = op;
        row.shape = shape;
        row.evals.assign(workers.size(), 0);
        rows.push_back(std::move(row));
        it = rows.end() - 1;
      }
      it->evals[d] = p.value("evaluated", 0);
      for (const auto& [status, n] : p["by_status"].items()) {
        if (status != "ok" && status != "cut") it->failed += n.get<int>();
      }
      if (p.contains("default") && p["default"].contains("median_ns")) it->dflt = p["default"];
      if (!p.contains("best")) continue;
      const bool final_best = p.value("final_candidates", 0) > 1;
      const bool faster = !it->best.is_object() || p["best"].value("median_ns", 0.0) < it->best.value("median_ns", 0.0);
      if ((final_best && !it->final_best) || (final_best == it->final_best && faster)) {
        it->best = p["best"];
        it->final_best = final_best;
      }
    }
  }
  fmt::print("\n{:<10} {:<40} {:>6} {:>12} {:>6} {:>16} {:>16} {:>8}  {}\n", "op", "shape", "evals", "per device",
             "failed", "default", "best", "speedup", "best configuration");
  for (const Row& r : rows) {
    int total = 0;
    for (int n : r.evals) total += n;
    std::vector<std::string> per_device;
    for (std::size_t d = 0; d < workers.size(); ++d) {
      per_device.push_back(reports[d].is_object() ? std::to_string(r.evals[d]) : "?");  // "?": it died
    }
    const std::string best = r.best.is_object() ? rate_text(r.best) : "-";
    const std::string dflt = r.dflt.is_object() ? rate_text(r.dflt) : "-";
    const std::string speedup =
        r.best.is_object() && r.dflt.is_object()
            ? fmt::format("{:.2f}x", r.dflt.value("median_ns", 0.0) / r.best.value("median_ns", 1.0))
            : "-";
    fmt::print("{:<10} {:<40} {:>6} {:>12} {:>6} {:>16} {:>16} {:>8}  {}\n", r.op, r.shape, total,
               fmt::format("{}", fmt::join(per_device, "+")), r.failed, dflt, best, speedup,
               r.best.is_object() ? r.best.value("params", "-") : "-");
  }
}

}  // namespace

int run_tune_devices(const CliOptions& options) {
  std::signal(SIGINT, count_signal);
  std::signal(SIGTERM, count_signal);
  const auto started = std::chrono::steady_clock::now();
  std::vector<int> indices = options.devices;
  const std::vector<DeviceInfo> all = discover_devices();
  if (options.all_devices) {
    for (const DeviceInfo& d : all) indices.push_back(d.index);
  }
  for (const int i : indices) {
    if (i < 0 || i >= static_cast<int>(all.size())) throw UsageError(DeviceIndexError(i, all).what());
  }
  std::vector<Worker> workers;
  for (const int i : indices) {
    Worker w;
    w.device = check_tune(options, i);  // every flag and shape checked for each device before any runs
    workers.push_back(std::move(w));
  }
  if (workers.size() == 1) {
    CliOptions one = options;
    one.devices.clear();
    one.all_devices = false;
    one.device = workers[0].device.index;
    return run_tune(one);
  }
  std::string db_path = options.db.empty() ? default_database_path() : options.db;
  db_path = std::filesystem::absolute(db_path).string();
  Database db = Database::open(db_path);
  // Ceilings once per device key, before the workers start: measured by two workers at once, each
  // would see half the machine.
  std::set<std::string> keys;
  for (const Worker& w : workers) {
    db.upsert_device(w.device);
    if (!keys.insert(w.device.key()).second) continue;
    if (db.device_bandwidth(w.device.key()) && db.device_peak(w.device.key())) continue;
    Session session(w.device, options.binary_cache.empty()    ? default_binary_cache_dir()
                              : options.binary_cache == "off" ? std::string()
                                                              : options.binary_cache);
    if (!db.device_bandwidth(w.device.key()))
      db.set_device_bandwidth(w.device.key(), measure_copy_bandwidth(session).value);
    if (!db.device_peak(w.device.key())) db.set_device_peak(w.device.key(), measure_peak_gflops(session).value);
  }
  if (signals_seen > 0) {
    fmt::print(stderr, "ocltune: interrupted before tuning started; nothing was measured\n");
    return kExitInterrupted;
  }
  // The runs belong to this process (its pid and start): while it lives no other tuner calls them
  // abandoned, and a worker's end is judged here; if this process is killed, its workers die with
  // it and a later run finds the runs abandoned and their claims `crash`, as for one device.
  std::vector<std::int64_t> group;
  for (Worker& w : workers) {
    RunRow run;
    run.device_key = w.device.key();
    run.tool_version = OCLTUNE_VERSION;
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) run.host = host;
    run.command = options.command_line;
    run.strategy = options.strategy;
    run.seed = static_cast<std::int64_t>(options.seed);
    w.run_id = db.begin_run(run);
    group.push_back(w.run_id);
  }
  // The host's cores are shared by the workers' compile pools.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = options.compile_threads >= 0 ? options.compile_threads
                                                   : std::clamp(cores / 2 / static_cast<int>(workers.size()), 1, 4);
  const std::vector<std::string> flags = worker_flags(options, threads, db_path);
  if (!options.quiet) {
    std::vector<std::string> names;
    for (const Worker& w : workers)
      names.push_back(fmt::format("[{}] {} (run {})", w.device.index, w.device.name, w.run_id));
    fmt::print(stderr, "ocltune: tuning on {} devices at once, one worker each: {}; database {}\n", workers.size(),
               fmt::join(names, ", "), db_path);
  }
  for (Worker& w : workers) {
    std::vector<std::string> args = {self_path(),     "tune",
                                     "--device",      std::to_string(w.device.index),
                                     "--run-id",      std::to_string(w.run_id),
                                     "--group-runs",  fmt::format("{}", fmt::join(group, ",")),
                                     "--coordinator", std::to_string(getpid())};
    args.insert(args.end(), flags.begin(), flags.end());
    spawn(w, args);
  }

  Takeover takeover(db);
  int forwarded = 0;
  for (;;) {
    pump(workers, 100);
    if (const int seen = signals_seen.load(); seen > forwarded) {
      // Each Ctrl-C once to each worker: the first finishes the evaluations in flight, a second
      // leaves them (their claims are released here).
      for (; forwarded < seen; ++forwarded) {
        for (Worker& w : workers) {
          if (w.running) kill(w.pid, SIGINT);
        }
      }
    }
    bool any = false;
    for (Worker& w : workers) {
      if (!w.running) continue;
      if (waitpid(w.pid, &w.status, WNOHANG) != w.pid) {
        any = true;
        continue;
      }
      w.running = false;
      w.ok = WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0;
      w.ended = describe_end(w.status);
      // Whatever it still wrote (its --isolate worker may hold the pipes a moment longer).
      for (int i = 0; i < 20 && (w.out_fd >= 0 || w.err_fd >= 0); ++i) {
        pump(workers, 100);
      }
      for (int* fd : {&w.out_fd, &w.err_fd}) {
        if (*fd >= 0) close(*fd), *fd = -1;
      }
      relay_lines(w, true);
      if (!w.ok) takeover.worker_ended(w, options.quiet);
    }
    if (!any) break;
  }

  std::vector<nlohmann::json> reports;
  for (const Worker& w : workers) reports.push_back(report_of(w));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::int64_t total = 0, total_ok = 0, total_final = 0;
  nlohmann::json devices = nlohmann::json::array();
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const Worker& w = workers[i];
    const RunCounts c = count_run_rows(db, w.run_id);
    total += c.evaluations;
    total_ok += c.ok;
    total_final += c.final_rows;
    devices.push_back({{"index", w.device.index},
                       {"name", w.device.name},
                       {"device_key", w.device.key()},
                       {"run_id", w.run_id},
                       {"ended", w.ended},
                       {"evaluations", c.evaluations},
                       {"ok", c.ok},
                       {"final_rows", c.final_rows},
                       {"report", reports[i]}});
  }
  const bool interrupted = signals_seen > 0;
  const bool failed = std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return !w.ok; });
  if (options.json) {
    fmt::print("{}\n", nlohmann::json{{"database", db_path},
                                      {"status", interrupted ? "interrupted"
                                                 : failed    ? "failed"
                                                             : "finished"},
                                      {"wall_seconds", wall},
                                      {"evaluations", total},
                                      {"ok", total_ok},
                                      {"final_rows", total_final},
                                      {"devices", devices}}
                           .dump(2));
  } else if (!options.quiet) {
    print_problems(workers, reports);
    fmt::print("\n{:<7} {:<48} {:>5} {:>12} {:>6} {:>6}  {}\n", "device", "name", "run", "evaluations", "ok", "final",
               "ended");
    for (const auto& d : devices) {
      fmt::print("{:<7} {:<48} {:>5} {:>12} {:>6} {:>6}  {}\n", d["index"].get<int>(),
                 d["name"].get<std::string>().substr(0, 48), d["run_id"].get<std::int64_t>(),
                 d["evaluations"].get<std::int64_t>(), d["ok"].get<std::int64_t>(), d["final_rows"].get<std::int64_t>(),
                 d["ended"].get<std::string>());
    }
    fmt::print("{:<7} {:<48} {:>5} {:>12} {:>6} {:>6}\n", "total", "", "", total, total_ok, total_final);
    fmt::print("\n{} devices, wall {:.1f} s; results in {}\n", workers.size(), wall, db_path);
  }
  std::fflush(stdout);
  if (interrupted) {
    fmt::print(stderr, "ocltune: interrupted; every finished evaluation is in {}; run the same command to resume\n",
               db_path);
    return kExitInterrupted;
  }
  if (failed) {
    fmt::print(stderr,
               "ocltune: not every device's worker finished (see above); what the others could take over they "
               "finished, and every measurement is in {}; run the same command to resume\n",
               db_path);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace ocltune
