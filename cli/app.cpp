// ocltune command line: parse flags, dispatch to a subcommand, map errors to exit codes.
// main() is cli/main.cpp; test support links the same app with its own families registered.
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/report_command.h"
#include "core/usage_error.h"
#include "db/transfer.h"
#include "harness/device_errors.h"
#include "ops/family.h"
#include "tuner/strategy.h"
#include "tuner/wire.h"

namespace ocltune {
namespace {

std::string ops_help() {
  std::string text = "op families to tune, comma-separated, or all:";
  for (const OpFamily* f : op_families()) text += fmt::format("\n    {:<12} {}", f->name(), f->description());
  return text;
}

// A device index: digits only (CLI11 used to convert it; a word is a usage error, as then).
int device_index(const std::string& flag, const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(fmt::format("{} '{}' is not a device index (a number, as `ocltune devices` lists them{})", flag,
                                 printable(text, 40), flag == "--device" ? ", or all" : ""));
  }
  return std::stoi(text);
}

// --device N | all and --devices A,B,... (which exclude each other) into `options`.
void resolve_devices(const CLI::App& app, const std::string& device_text, const std::string& devices_text,
                     const std::string& group_runs_text, CliOptions& options) {
  const bool device_given = app.count("--device") > 0, devices_given = app.count("--devices") > 0;
  if (device_given && devices_given) throw UsageError("give --device or --devices, not both");
  if (device_text == "all") {
    options.all_devices = true;
  } else {
    options.device = device_index("--device", device_text);
  }
  if (devices_given) {
    for (std::size_t start = 0;;) {
      const std::size_t comma = devices_text.find(',', start);
      const int index = device_index("--devices", devices_text.substr(start, comma - start));
      if (std::find(options.devices.begin(), options.devices.end(), index) != options.devices.end()) {
        throw UsageError(fmt::format("--devices {}: device {} is listed twice", printable(devices_text, 60), index));
      }
      options.devices.push_back(index);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (!group_runs_text.empty()) {
    for (std::size_t start = 0;;) {
      const std::size_t comma = group_runs_text.find(',', start);
      options.group_runs.push_back(std::stoll(group_runs_text.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
}

}  // namespace

int cli_main(int argc, char** argv) {
  // PoCL's worker threads move between cores unless pinned: on the 2-core CI machine one 256^3 GEMM
  // timed 86 to 137 GFLOP/s from one process to the next unpinned, 169 to 225 pinned, and the tuner's
  // figures and db check's disagreed by up to 2x (docs/decisions/0040). Every figure ocltune measures
  // on PoCL is a pinned one; a user's own POCL_AFFINITY wins. Before any OpenCL call loads PoCL.
  setenv("POCL_AFFINITY", "1", /*overwrite=*/0);
  CliOptions options;
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);

  CLI::App app{"ocltune: OpenCL kernel autotuning for deep-learning operators", "ocltune"};
  app.set_version_flag("--version", std::string(OCLTUNE_VERSION));
  std::string device_text = "0", devices_text, group_runs_text;
  app.add_option("-d,--device", device_text,
                 "device index, as `ocltune devices` lists them; for tuning also all (every device at once, "
                 "like --devices)")
      ->capture_default_str();
  app.add_option("--devices", devices_text,
                 "tune on these devices at once, e.g. 0,2: one worker process each, one database; devices with "
                 "the same device key share each problem's candidates");
  // Hidden: set by the coordinator of several devices for each of its workers.
  app.add_option("--run-id", options.run_id)->group("");
  app.add_option("--group-runs", group_runs_text)->group("");
  app.add_option("--coordinator", options.coordinator)->group("");
  // One comma-separated word, split here: CLI11's delimiter took ",," as no value and then
  // swallowed the next option as an op name.
  std::string ops_text = "all";
  app.add_option("--ops", ops_text, ops_help())->capture_default_str();
  app.add_option("--db", options.db,
                 "database file (default: $OCLTUNE_DB, else $XDG_CACHE_HOME/ocltune/tuned.db, "
                 "else ~/.cache/ocltune/tuned.db)");
  app.add_option("--math", options.math,
                 "arithmetic: exact (fp32 FMA) or tf32 (tensor cores where the device has "
                 "them, like PyTorch's allow_tf32)")
      ->check(CLI::IsMember({"exact", "tf32"}))
      ->capture_default_str();
  app.add_option("--strategy", options.strategy, "search strategy")
      ->check(CLI::IsMember(strategy_names()))
      ->capture_default_str();
  app.add_option("--max-evals", options.max_evals,
                 "evaluations per shape besides the default configuration "
                 "(default: 16 on CPUs, 48 on other devices, within a --time-budget of the whole run of 5 minutes on "
                 "CPUs, 6 elsewhere; "
                 "0: whole space)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  app.add_option("--restrict", options.restrict,
                 "search a sub-space: allowed values per parameter, "
                 "e.g. MWG=32|64,KWI=2 (the default configuration is measured regardless)");
  app.add_option("--fraction", options.fraction, "stop each shape's search after this share of its space (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--time-budget", options.time_budget,
                 "wall-time budget of the whole run, e.g. 90s, 10m, 1h30m "
                 "(shared evenly by the shapes not yet tuned)");
  app.add_option("--patience", options.patience, "stop a shape's search after N evaluations without a 1% improvement")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  app.add_option("--cut", options.cut,
                 "cut a candidate short when its first runs are all slower than this many "
                 "times the best (0: time every candidate in full)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--final", options.final_candidates,
                 "re-time this many of the fastest interleaved before choosing "
                 "the winner (0 or 1: off)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app.add_option("--compile-threads", options.compile_threads,
                 "threads building the next candidates' programs while "
                 "the device times the current one (default: half the "
                 "cores, 1 to 4; 0: build when evaluated)")
      ->check(CLI::Range(0, 64));
  app.add_flag("--isolate", options.isolate,
               "evaluate in a worker process: a kernel that hangs or crashes the driver "
               "is recorded as timeout or crash and tuning goes on");
  app.add_option("--eval-timeout", options.eval_timeout, "with --isolate: time allowed per evaluation, build included")
      ->capture_default_str();
  app.add_flag("--warm-start", options.warm_start,
               "the model strategy also learns from other shapes and devices "
               "in the database (helps when they resemble this one; see docs/STRATEGIES.md)");
  app.add_option("--binary-cache", options.binary_cache,
                 "directory of compiled program binaries, or off (default: "
                 "$OCLTUNE_BINARY_CACHE, else ~/.cache/ocltune/binaries)");
  app.add_option("--seed", options.seed, "seed of randomised strategies")->capture_default_str();
  app.add_option("--shapes", options.shapes,
                 fmt::format("shape preset ({}) or a JSON file with a list of shapes "
                             "(default: quick on CPUs, default elsewhere)",
                             fmt::join(preset_names(), ", ")));
  app.add_flag("--json", options.json, "print results as JSON");
  app.add_flag("-q,--quiet", options.quiet, "print no progress");

  CLI::App* tune = app.add_subcommand("tune", "tune op families (the default action)")->fallthrough();
  CLI::App* devices = app.add_subcommand("devices", "list OpenCL devices with their --device index")->fallthrough();
  CLI::App* ceilings = app.add_subcommand("ceilings",
                                          "measure the device's copy bandwidth, fp32 FMA peak and TF32 "
                                          "tensor-core peak (where it has tensor cores)")
                           ->fallthrough();
  CLI::App* show = app.add_subcommand("show", "print the best configurations of a database")->fallthrough();
  CLI::App* eval =
      app.add_subcommand("eval", "verify and time given configurations of one shape (no database)")->fallthrough();
  eval->add_option("--op", options.op, "op family")->required();
  eval->add_option("--shape", options.shape, "the shape as a JSON object, e.g. {\"m\":1024,\"n\":1024,\"k\":1024}")
      ->required();
  eval->add_option("--config", options.configs, "a configuration (NAME=V,...) or 'default'; repeatable");
  eval->add_option("--configs-file", options.configs_file, "a file with one configuration per line");
  eval->add_flag("--baseline", options.baseline, "also time the same-process baseline (CLBlast for GEMM)");
  eval->add_flag("--kernels", options.kernels,
                 "also time each kernel of a configuration's plan (median duration, and the gap before it)");
  eval->add_option("--sample", options.sample,
                   "also evaluate N random configurations of the space (see --seed, "
                   "--restrict)")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--out", options.out, "write the results as JSON to this file");
  ReportOptions report_options;
  CLI::App* report = add_report_command(app, report_options);
  CLI::App* simulate = app.add_subcommand("simulate", "compare strategies on recorded spaces, without a device");
  simulate->add_option("--space", options.spaces, "recorded space files (JSON lines, from `ocltune record`)");
  simulate->add_option("--from-db", options.from_db, "replay the space of --op/--shape recorded in this database");
  simulate->add_option("--op", options.op, "op of the recorded space (with --from-db)");
  simulate->add_option("--shape", options.shape, "shape key of the recorded space (with --from-db)");
  simulate->add_option("--device-key", options.device_key,
                       "device key (with --from-db; default: the one with the "
                       "most measurements)");
  simulate->add_option("--strategy", options.strategies, "strategies to compare (default: all)")->delimiter(',');
  simulate->add_option("--seeds", options.seeds, "seeds per strategy")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  simulate->add_option("--max-evals", options.max_evals, "also score after this many evaluations");
  simulate->add_option("--fraction", options.fraction, "also score after this share of the space");
  simulate->add_flag("--json", options.json, "print the scores as JSON");
  CLI::App* record =
      app.add_subcommand("record", "write a recorded space (an exhaustive run in a database) as JSON lines");
  record->add_option("--from-db", options.from_db, "database holding the exhaustive run")->required();
  record->add_option("--op", options.op, "op")->required();
  record->add_option("--shape", options.shape, "shape key, as `ocltune show` prints it")->required();
  record->add_option("--device-key", options.device_key, "device key (default: the one with the most measurements)");
  record->add_option("--out", options.out, "output file (.jsonl)")->required();
  // Hidden: the evaluation process of --isolate.
  CLI::App* worker = app.add_subcommand("worker", "")->group("")->fallthrough();
  CLI::App* db = add_db_command(app);
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  options.ops.clear();
  for (std::size_t start = 0;;) {
    const std::size_t comma = ops_text.find(',', start);
    options.ops.push_back(ops_text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }

  try {
    resolve_devices(app, device_text, devices_text, group_runs_text, options);
    if ((options.all_devices || !options.devices.empty()) && app.get_subcommands().size() == 1 && !tune->parsed()) {
      throw UsageError(fmt::format("--devices and --device all are for tuning; `ocltune {}` takes one --device N",
                                   app.get_subcommands()[0]->get_name()));
    }
    if (devices->parsed()) return run_devices(options);
    if (ceilings->parsed()) return run_ceilings(options);
    if (show->parsed()) return run_show(options);
    if (eval->parsed()) return run_eval(options);
    if (report->parsed()) return run_report(options, report_options);
    if (simulate->parsed()) return run_simulate(options);
    if (record->parsed()) return run_record(options);
    if (worker->parsed()) return run_worker(options.device, options.compile_threads < 0 ? 1 : options.compile_threads);
    if (db->parsed()) return run_db(options);
    if (options.all_devices || options.devices.size() > 1) return run_tune_devices(options);
    if (options.devices.size() == 1) options.device = options.devices[0];
    return run_tune(options);
  } catch (const UsageError& e) {
    fmt::print(stderr, "ocltune: error: {}\n", e.what());
    return kExitUsage;
  } catch (const NoPlatformError& e) {
    fmt::print(stderr, "ocltune: error: {}\n", e.what());
    return kExitFailure;
  } catch (const Error& e) {
    fmt::print(stderr, "ocltune: error: {}\n", e.what());
    return kExitFailure;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ocltune: internal error: {}\n", e.what());
    return kExitFailure;
  }
}

}  // namespace ocltune
