// `ocltune [tune]`: tune the chosen op families on one device and store every result.
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/tuned_neighbourhood.h"
#include "core/usage_error.h"
#include "db/abandoned_runs.h"
#include "db/database.h"
#include "db/transfer.h"
#include "harness/ceilings.h"
#include "harness/device_errors.h"
#include "harness/session.h"
#include "ops/device_fit.h"
#include "ops/family.h"
#include "tuner/budget.h"
#include "tuner/stop.h"
#include "tuner/tuner.h"

namespace ocltune {
namespace {

// The per-status counts keyed by the database's status names.
nlohmann::json by_status_json(const std::map<Status, int>& counts) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [status, n] : counts) j[status_name(status)] = n;
  return j;
}

std::vector<const OpFamily*> resolve_ops(const std::vector<std::string>& names) {
  std::vector<const OpFamily*> families;
  for (const std::string& name : names) {
    if (name.empty()) throw UsageError("--ops has an empty name (a list like gemm,conv2d, or all)");
    if (name == "all") return op_families();
    const OpFamily* family = find_family(name);
    if (!family) {
      throw UsageError(fmt::format("unknown op '{}'; available: {} (or all)", name, fmt::join(family_names(), ", ")));
    }
    if (std::find(families.begin(), families.end(), family) == families.end()) families.push_back(family);
  }
  if (families.empty()) throw UsageError("--ops is empty");
  return families;
}

// --restrict names parameters and values of the problems' spaces: a name no space has, or a value
// no space declares for it, is a usage error naming it (it would silently restrict nothing or all).
void check_restriction(const Restriction& restriction, const ProblemList& problems, const DeviceInfo& device) {
  if (restriction.empty()) return;
  std::map<std::string, std::set<std::int64_t>> declared;
  for (const auto& p : problems) {
    const SearchSpace space = p->space(device);
    for (const SearchSpace::Variant& v : space.variants()) {
      for (const Parameter& param : v.parameters) declared[param.name].insert(param.values.begin(), param.values.end());
    }
  }
  for (const auto& [name, values] : restriction) {
    auto it = declared.find(name);
    if (it == declared.end()) {
      throw UsageError(fmt::format("--restrict: no problem to tune has a parameter '{}'", printable(name, 40)));
    }
    for (const std::int64_t v : values) {
      if (!it->second.count(v)) {
        throw UsageError(fmt::format("--restrict: parameter {} never takes the value {} (it takes {})", name, v,
                                     fmt::join(it->second, ", ")));
      }
    }
  }
}

ProblemList load_problems(const std::vector<const OpFamily*>& families, const std::string& shapes,
                          const DeviceInfo& device) {
  const std::vector<std::string> presets = preset_names();
  std::string preset = shapes;
  if (preset.empty()) preset = device.type == DeviceType::kCpu ? "quick" : "default";
  ProblemList problems;
  if (std::find(presets.begin(), presets.end(), preset) != presets.end()) {
    // Families take turns (each preset lists its most common shapes first), so a time budget that
    // ends the run early leaves a few shapes of every family for the next run rather than whole
    // families: on the H200 the default preset's 246 conv2d shapes used all of 6 minutes before.
    std::vector<ProblemList> lists;
    for (const OpFamily* family : families) lists.push_back(family->preset(preset));
    for (std::size_t i = 0, left = 1; left > 0; ++i) {
      left = 0;
      for (ProblemList& list : lists) {
        if (i < list.size()) problems.push_back(std::move(list[i]));
        left += i + 1 < list.size();
      }
    }
    return problems;
  }
  std::ifstream in(shapes);
  if (!in) {
    throw UsageError(
        fmt::format("--shapes '{}' is neither a preset ({}) nor a readable file", shapes, fmt::join(presets, ", ")));
  }
  nlohmann::json list = nlohmann::json::parse(in, nullptr, false);
  if (list.is_discarded()) throw UsageError(fmt::format("--shapes {}: not valid JSON", shapes));
  std::vector<std::string> names;
  for (const OpFamily* f : families) names.push_back(f->name());
  try {
    return problems_from_json(list, names);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--shapes {}: {}", shapes, e.what()));
  }
}

// --math tf32: every problem whose family has a math mode takes it (its shape JSON gains "math");
// the others stay exact, which tf32 mode permits anyway.
ProblemList with_math_mode(ProblemList problems, const std::string& math, bool quiet) {
  if (math.empty() || math == "exact") return problems;
  std::set<std::string> unchanged;
  for (auto& p : problems) {
    const OpFamily* family = find_family(p->op());
    if (!family) continue;
    nlohmann::json shape = p->shape_json();
    shape["math"] = math;
    try {
      p = family->from_json(shape);
    } catch (const Error&) {
      unchanged.insert(p->op());
    }
  }
  if (!quiet && !unchanged.empty()) {
    fmt::print(stderr, "ocltune: --math {} applies to gemm and conv2d; {} stay exact\n", math,
               fmt::join(unchanged, ", "));
  }
  return problems;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// The first Ctrl-C asks the run to stop after the evaluation in flight; a second one exits at once
// (a hung kernel never finishes its evaluation). Every finished evaluation is already committed.
void request_stop(int) {
  if (stop_flag().exchange(true)) {
    static const char message[] = "\nocltune: interrupted twice; exiting now (finished evaluations are kept)\n";
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(kExitInterrupted);
  }
}

std::string self_executable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ocltune") : path.string();
}

constexpr double kDefaultGpuBudgetSeconds = 6 * 60;
// On a CPU device the quick preset with cold kernel caches took 17 minutes on 2 cores (PoCL
// generates code at each first launch); warm, 3 minutes.
constexpr double kDefaultCpuBudgetSeconds = 5 * 60;

// Flags checked before the device is opened, so a typo costs no measurement.
TuneOptions tune_options(const CliOptions& options, const DeviceInfo& device) {
  TuneOptions tune;
  tune.strategy = options.strategy;
  const bool bounded = options.max_evals >= 0 || options.fraction > 0 || !options.time_budget.empty();
  tune.max_evals = options.max_evals >= 0 ? options.max_evals
                   : bounded              ? 0
                                          : (device.type == DeviceType::kCpu ? 16 : 48);
  // Without any budget flag a run is also held to a time budget in total (6 minutes on GPUs, whose
  // default preset has hundreds of problems; 5 on CPUs), so `--ops all` ends in minutes; families
  // take turns, and later runs resume where it stopped.
  if (!bounded)
    tune.time_budget_s = device.type == DeviceType::kCpu ? kDefaultCpuBudgetSeconds : kDefaultGpuBudgetSeconds;
  tune.fraction = options.fraction;
  tune.patience = options.patience;
  tune.cut_factor = options.cut;
  tune.final_candidates = options.final_candidates;
  tune.seed = options.seed;
  tune.warm_start = options.warm_start;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Half the cores, 1 to 4. Measured on the H200's 16-core host (docs/PERFORMANCE.md, "Tuning in
  // minutes"): the same 6-minute --ops all run tuned 179 problems with 4 threads and 172 with 16, which
  // spent 1171 s of compile-thread time against 767: NVIDIA's compiler does not scale past 4 threads in
  // one process, and each thread also builds a proposal ahead that a short search may never run.
  tune.compile_threads = options.compile_threads >= 0 ? options.compile_threads : std::clamp(cores / 2, 1, 4);
  try {
    tune.restriction = parse_restriction(options.restrict);
    if (!options.time_budget.empty()) tune.time_budget_s = parse_duration(options.time_budget);
    if (options.isolate) {
      tune.isolate = IsolationOptions{{self_executable(), "worker", "--device", std::to_string(options.device),
                                       "--compile-threads", std::to_string(tune.compile_threads)},
                                      parse_duration(options.eval_timeout)};
    }
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return tune;
}

nlohmann::json report_json(const Problem& p, const ProblemReport& r) {
  nlohmann::json j = {{"op", r.op},
                      {"shape_key", r.shape_key},
                      {"shape", p.shape_json()},
                      {"space_size", r.space_size},
                      {"raw_space_size", r.raw_size},
                      {"evaluated", r.evaluated},
                      {"reused", r.reused},
                      {"rejected_rows", r.rejected},
                      {"by_status", by_status_json(r.by_status)},
                      {"stop_reason", r.stop_reason},
                      {"final_candidates", r.final_candidates},
                      {"best_written", r.best_written}};
  if (r.confidence) j["confidence"] = *r.confidence;
  auto outcome_json = [&](const EvalOutcome& o) {
    nlohmann::json x = {{"params", to_string(o.config)}, {"status", status_name(o.status)}};
    if (o.stats) {
      x["median_ns"] = o.stats->median_ns;
      x[p.memory_bound() ? "gbs" : "gflops"] = throughput(p, o.stats->median_ns);
    }
    return x;
  };
  if (r.best) j["best"] = outcome_json(*r.best);
  if (r.default_result) j["default"] = outcome_json(*r.default_result);
  return j;
}

void print_summary(const ProblemList& problems, const std::vector<ProblemReport>& reports) {
  fmt::print("\n{:<10} {:<44} {:>6} {:>6} {:>16} {:>16} {:>8} {:>6}  {}\n", "op", "shape", "evals", "failed", "default",
             "best", "speedup", "lead", "best configuration");
  // Grouped by op (the run interleaves families), each op's shapes in the order they were tuned.
  std::vector<std::string> op_order;
  for (const ProblemReport& r : reports) {
    if (std::find(op_order.begin(), op_order.end(), r.op) == op_order.end()) op_order.push_back(r.op);
  }
  std::vector<std::size_t> order(reports.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto rank = [&](std::size_t i) {
    return std::find(op_order.begin(), op_order.end(), reports[i].op) - op_order.begin();
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  for (const std::size_t i : order) {
    const Problem& p = *problems[i];
    const ProblemReport& r = reports[i];
    int failed = 0;
    for (const auto& [status, n] : r.by_status) failed += is_timed(status) ? 0 : n;
    const auto& d = r.default_result;
    const std::string dflt =
        d && d->stats ? format_throughput(p, d->stats->median_ns) : (d ? status_name(d->status) : "-");
    const std::string best = r.best ? format_throughput(p, r.best->stats->median_ns) : "-";
    const std::string speedup =
        r.best && d && d->stats ? fmt::format("{:.2f}x", d->stats->median_ns / r.best->stats->median_ns) : "-";
    // lead: how far ahead of the runner-up the winner is (after the interleaved re-timing).
    const std::string lead = r.confidence ? fmt::format("{:.1f}%", 100 * *r.confidence) : "-";
    fmt::print("{:<10} {:<44} {:>6} {:>6} {:>16} {:>16} {:>8} {:>6}  {}\n", r.op, r.shape_key, r.evaluated + r.reused,
               failed, dflt, best, speedup, lead, r.best ? to_string(r.best->config) : "-");
  }
}

}  // namespace

namespace {

struct TuneSetup {
  DeviceInfo device;
  ProblemList problems;
  TuneOptions tune;
};

TuneSetup setup_tune(const CliOptions& options, int device_index) {
  const std::vector<const OpFamily*> families = resolve_ops(options.ops);
  TuneSetup setup;
  try {
    setup.device = find_device(device_index);
  } catch (const DeviceIndexError& e) {
    throw UsageError(e.what());
  }
  const DeviceInfo& device = setup.device;
  setup.problems = with_math_mode(load_problems(families, options.shapes, device), options.math, options.quiet);
  // A shape whose buffers cannot exist on this device would fail only when the run reaches it
  // (exit 1, or the process killed for its host copies): refused here, naming the shape.
  for (const auto& p : setup.problems) {
    if (const std::string why = device_fit_problem(*p, device); !why.empty()) {
      throw UsageError(fmt::format("{} shape {} cannot run on this device: {}", p->op(), p->shape_key(), why));
    }
  }
  setup.tune = tune_options(options, device);
  check_restriction(setup.tune.restriction, setup.problems, device);
  return setup;
}

// "D:K" in $OCLTUNE_TEST_DIE_AFTER: the worker of device D kills itself after K evaluations, with
// the next one claimed (tests of several devices, docs/decisions/0038). Unset: -1.
std::int64_t test_die_after(int device_index) {
  const char* text = std::getenv("OCLTUNE_TEST_DIE_AFTER");
  int device = -1;
  long long evals = -1;
  if (!text || std::sscanf(text, "%d:%lld", &device, &evals) != 2 || device != device_index) return -1;
  return evals;
}

}  // namespace

DeviceInfo check_tune(const CliOptions& options, int device_index) { return setup_tune(options, device_index).device; }

int run_tune(const CliOptions& options) {
  // From the start: a Ctrl-C during device discovery or the ceilings measurement is an orderly
  // interruption (exit 130), not a death by signal.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  // A worker of several devices (cli/multi_tune.cpp) dies with its coordinator, which owns its run.
  const bool in_group = options.run_id > 0;
  if (in_group) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != static_cast<pid_t>(options.coordinator)) {
      fmt::print(stderr, "ocltune: error: the coordinator of this worker is gone\n");
      return kExitFailure;
    }
  }
  TuneSetup setup = setup_tune(options, options.device);
  const DeviceInfo& device = setup.device;
  ProblemList& problems = setup.problems;
  TuneOptions& tune = setup.tune;
  if (in_group) {
    tune.group_runs = options.group_runs;
    tune.test_die_after_evals = test_die_after(options.device);
  }
  const std::string db_path = options.db.empty() ? default_database_path() : options.db;
  Database db = Database::open(db_path);
  db.upsert_device(device);
  Session session(device, options.binary_cache.empty()    ? default_binary_cache_dir()
                          : options.binary_cache == "off" ? std::string()
                                                          : options.binary_cache);
  // Ceilings are measured once per device key and kept with the device: every memory-bound result
  // is reported against the copy bandwidth, every compute-bound one against the FMA peak.
  if (!db.device_bandwidth(device.key())) {
    const Ceiling copy = measure_copy_bandwidth(session);
    db.set_device_bandwidth(device.key(), copy.value);
    if (!options.quiet) fmt::print(stderr, "ocltune: copy bandwidth {:.1f} GB/s (measured once, stored)\n", copy.value);
  }
  if (!db.device_peak(device.key())) {
    const Ceiling peak = measure_peak_gflops(session);
    db.set_device_peak(device.key(), peak.value);
    if (!options.quiet)
      fmt::print(stderr, "ocltune: fp32 FMA peak {:.1f} GFLOP/s (measured once, stored)\n", peak.value);
  }

  RunRow run;
  run.device_key = device.key();
  run.tool_version = OCLTUNE_VERSION;
  run.host = host_name();
  run.command = options.command_line;
  run.strategy = tune.strategy;
  run.seed = static_cast<std::int64_t>(tune.seed);
  if (stop_requested()) {
    fmt::print(stderr, "ocltune: interrupted before tuning started; nothing was measured\n");
    return kExitInterrupted;
  }
  std::int64_t run_id = options.run_id;
  if (in_group) {
    const std::vector<RunRow> runs = db.runs();
    const auto it = std::find_if(runs.begin(), runs.end(), [&](const RunRow& r) { return r.run_id == options.run_id; });
    if (it == runs.end() || it->status != "running" || it->device_key != device.key()) {
      throw UsageError(fmt::format("--run-id {}: no running run of this device in {}", options.run_id, db_path));
    }
  } else {
    run_id = db.begin_run(run);
  }
  // Runs killed without finishing (SIGKILL, a kernel that crashed the process): their status and
  // the evaluation each had in flight, so this run neither waits on them nor repeats the crash.
  const RecoveredRuns recovered = recover_abandoned_runs(db, run.host, run_id);
  if (!options.quiet && !recovered.abandoned.empty()) {
    fmt::print(stderr, "ocltune: run(s) {} ended without finishing (their process is gone); marked abandoned\n",
               fmt::join(recovered.abandoned, ", "));
  }
  if (!options.quiet && recovered.crashed > 0) {
    fmt::print(stderr,
               "ocltune: {} evaluation(s) in flight when their process ended recorded as crash (not evaluated "
               "again; --isolate runs each evaluation in its own process)\n",
               recovered.crashed);
  }

  if (!options.quiet) {
    fmt::print(stderr, "ocltune: tuning {} problem(s) of {} on [{}] {} ({}); database {}\n", problems.size(),
               fmt::join(options.ops, ","), device.index, device.name, device.platform_name, db_path);
  }
  // Each problem's search starts from the tuned rows nearest to it, and problems the system database
  // (the shipped files) already serves are tuned last (issue 20). Rows it cannot use are left out
  // quietly here: the runtime and `db verify` report them.
  TunedNeighbourhood neighbourhood(device, system_database_for_tuning(), db, nullptr);
  const std::size_t served = neighbourhood.tune_served_last(problems);
  if (!options.quiet && served > 0) {
    fmt::print(stderr, "ocltune: {} problem(s) the system database already serves are tuned last\n", served);
  }
  tune.starting_points = [&neighbourhood](const Problem& p) { return neighbourhood.nearest(p); };
  ConsoleProgress progress(stderr, options.quiet, isatty(fileno(stderr)) != 0);
  Tuner tuner(session, db, run_id, tune, &progress);
  std::vector<ProblemReport> reports;
  std::string run_status = "finished";
  try {
    for (std::size_t i = 0; i < problems.size() && !stop_requested(); ++i) {
      if (tuner.out_of_time()) {
        if (!options.quiet) {
          fmt::print(stderr, "ocltune: time budget spent; {} problem(s) left for the next run of the same command\n",
                     problems.size() - i);
        }
        break;
      }
      reports.push_back(tuner.tune(*problems[i], static_cast<int>(i), static_cast<int>(problems.size())));
      if (reports.back().best) neighbourhood.add(*problems[i], reports.back().best->config);
    }
  } catch (...) {
    db.finish_run(run_id, "failed", tuner.compile_seconds(), tuner.verify_seconds(), tuner.timing_seconds());
    throw;
  }
  if (stop_requested()) run_status = "interrupted";
  db.finish_run(run_id, run_status, tuner.compile_seconds(), tuner.verify_seconds(), tuner.timing_seconds());

  if (options.json) {
    nlohmann::json out = {{"device", to_json(device)},
                          {"database", db_path},
                          {"run_id", run_id},
                          {"status", run_status},
                          {"compile_seconds", tuner.compile_seconds()},
                          {"compile_wait_seconds", tuner.compile_wait_seconds()},
                          // Programs this process compiled from source and loaded from the binary cache
                          // (--isolate's workers build their own): a rerun of a finished run compiles none.
                          {"programs_compiled", session.programs().builds()},
                          {"programs_loaded", session.programs().binary_loads()},
                          {"verify_seconds", tuner.verify_seconds()},
                          {"timing_seconds", tuner.timing_seconds()},
                          {"problems", nlohmann::json::array()}};
    for (std::size_t i = 0; i < reports.size(); ++i) out["problems"].push_back(report_json(*problems[i], reports[i]));
    fmt::print("{}\n", out.dump(2));
  } else if (!options.quiet) {
    print_summary(problems, reports);
    fmt::print(
        "\nrun {} {}: compile {:.1f} s ({} program(s) compiled, {} loaded from the binary cache; evaluations "
        "waited {:.1f} s for builds; {} thread(s) built ahead), verify {:.1f} s, timing {:.1f} s; results in {}\n",
        run_id, run_status, tuner.compile_seconds(), session.programs().builds(), session.programs().binary_loads(),
        tuner.compile_wait_seconds(), tune.compile_threads, tuner.verify_seconds(), tuner.timing_seconds(), db_path);
  }
  if (run_status == "interrupted") {
    fmt::print(stderr, "ocltune: interrupted; every finished evaluation is in {}; run the same command to resume\n",
               db_path);
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace ocltune
