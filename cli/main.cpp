// ocltune command line: parse flags, dispatch to a subcommand, map errors to exit codes.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/report_command.h"
#include "cli/usage_error.h"
#include "harness/device_errors.h"
#include "ops/family.h"
#include "tuner/strategy.h"

namespace ocltune {
namespace {

std::string ops_help() {
  std::string text = "op families to tune, comma-separated, or all:";
  for (const OpFamily* f : op_families()) text += fmt::format("\n    {:<12} {}", f->name(), f->description());
  return text;
}

int cli_main(int argc, char** argv) {
  CliOptions options;
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);

  CLI::App app{"ocltune: OpenCL kernel autotuning for deep-learning operators", "ocltune"};
  app.set_version_flag("--version", std::string(OCLTUNE_VERSION));
  app.add_option("-d,--device", options.device, "device index, as `ocltune devices` lists them")->capture_default_str();
  app.add_option("--ops", options.ops, ops_help())->delimiter(',')->capture_default_str();
  app.add_option("--db", options.db, "database file (default: $OCLTUNE_DB, else $XDG_CACHE_HOME/ocltune/tuned.db, "
                                     "else ~/.cache/ocltune/tuned.db)");
  app.add_option("--strategy", options.strategy, "search strategy")
      ->check(CLI::IsMember(strategy_names()))
      ->capture_default_str();
  app.add_option("--max-evals", options.max_evals, "evaluations per shape besides the default configuration "
                                                   "(default: 16 on CPUs, 48 on other devices; 0: whole space)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  app.add_option("--seed", options.seed, "seed of randomised strategies")->capture_default_str();
  app.add_option("--shapes", options.shapes, fmt::format("shape preset ({}) or a JSON file with a list of shapes "
                                                         "(default: quick on CPUs, default elsewhere)",
                                                         fmt::join(preset_names(), ", ")));
  app.add_flag("--json", options.json, "print results as JSON");
  app.add_flag("-q,--quiet", options.quiet, "print no progress");

  CLI::App* tune = app.add_subcommand("tune", "tune op families (the default action)")->fallthrough();
  CLI::App* devices = app.add_subcommand("devices", "list OpenCL devices with their --device index")->fallthrough();
  CLI::App* show = app.add_subcommand("show", "print the best configurations of a database")->fallthrough();
  CLI::App* eval = app.add_subcommand("eval", "verify and time given configurations of one shape (no database)")
                       ->fallthrough();
  eval->add_option("--op", options.op, "op family")->required();
  eval->add_option("--shape", options.shape, "the shape as a JSON object, e.g. {\"m\":1024,\"n\":1024,\"k\":1024}")
      ->required();
  eval->add_option("--config", options.configs, "a configuration (NAME=V,...) or 'default'; repeatable");
  eval->add_option("--configs-file", options.configs_file, "a file with one configuration per line");
  eval->add_flag("--baseline", options.baseline, "also time the same-process baseline (CLBlast for GEMM)");
  eval->add_option("--sample", options.sample, "also evaluate N random configurations of the space (see --seed)")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--fix", options.fix, "restrict --sample to configurations with these values, e.g. SA=1,SB=1");
  eval->add_option("--out", options.out, "write the results as JSON to this file");
  ReportOptions report_options;
  CLI::App* report = add_report_command(app, report_options);
  CLI::App* db = add_db_command(app);
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  try {
    if (devices->parsed()) return run_devices(options);
    if (show->parsed()) return run_show(options);
    if (eval->parsed()) return run_eval(options);
    if (report->parsed()) return run_report(options, report_options);
    if (db->parsed()) return run_db(options);
    (void)tune;
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

}  // namespace
}  // namespace ocltune

int main(int argc, char** argv) { return ocltune::cli_main(argc, argv); }
