// `ocltune report`: finds the Python report generator and runs it in place of this process.
#include "cli/report_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "core/usage_error.h"
#include "db/database.h"

namespace ocltune {
namespace {

namespace fs = std::filesystem;

bool has_package(const fs::path& dir) { return fs::exists(dir / "ocltune_report" / "__main__.py"); }

// $OCLTUNE_REPORTS_DIR, else the installed copy next to the executable (<prefix>/share/ocltune/reports),
// else the source tree this binary was built from.
fs::path reports_dir() {
  if (const char* env = std::getenv("OCLTUNE_REPORTS_DIR"); env && *env) {
    if (!has_package(env)) throw Error(fmt::format("OCLTUNE_REPORTS_DIR={} holds no ocltune_report package", env));
    return env;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "ocltune" / "reports";
    if (has_package(installed)) return installed;
  }
  if (has_package(OCLTUNE_SOURCE_REPORTS_DIR)) return OCLTUNE_SOURCE_REPORTS_DIR;
  throw Error("cannot find the report generator (ocltune_report); set OCLTUNE_REPORTS_DIR to the reports/ directory");
}

// Debian's interpreter is the one scripts/install-deps.sh gives matplotlib to, whatever python3 a
// user's PATH finds first (pyenv, a virtualenv); $OCLTUNE_PYTHON overrides.
std::string python() {
  if (const char* env = std::getenv("OCLTUNE_PYTHON"); env && *env) return env;
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

CLI::App* add_report_command(CLI::App& app, ReportOptions& options) {
  CLI::App* report = app.add_subcommand("report",
                                        "write an HTML report of benchmark results, tuning runs and "
                                        "their history (exit 3: regression with --fail-on-regression)");
  report->fallthrough();
  report->add_option("--bench", options.bench, "ocltune_bench JSON output file(s) (--benchmark_out=FILE)")
      ->expected(1, -1)
      ->check(CLI::ExistingFile);
  report
      ->add_option("--history-file", options.history_files,
                   "a performance history file (docs/performance_history.jsonl): its latest figures and their "
                   "history join the report; repeatable")
      ->check(CLI::ExistingFile);
  report->add_option("--out", options.out, "output directory; the report is DIR/index.html")->required();
  report->add_option("--history", options.history,
                     "history directory: this run's key figures are appended and "
                     "each figure is compared with earlier runs");
  report->add_flag("--fail-on-regression", options.fail_on_regression, "exit with status 3 when a figure regressed");
  report->add_option("--threshold", options.threshold, "smallest relative drop that is a regression")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  report->add_option("--noise-k", options.noise_k, "a drop must also exceed this many run-to-run noise estimates")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  report->add_option("--title", options.title, "report title");
  return report;
}

int run_report(const CliOptions& cli, const ReportOptions& options) {
  if (options.bench.empty() && options.history_files.empty()) {
    throw UsageError("report: give --bench, --history-file or both");
  }
  const fs::path dir = reports_dir();
  std::vector<std::string> args = {python(),
                                   "-m",
                                   "ocltune_report",
                                   "--db",
                                   cli.db.empty() ? default_database_path() : cli.db,
                                   "--out",
                                   options.out,
                                   "--threshold",
                                   fmt::format("{}", options.threshold),
                                   "--noise-k",
                                   fmt::format("{}", options.noise_k)};
  if (!options.bench.empty()) {
    args.push_back("--bench");
    args.insert(args.end(), options.bench.begin(), options.bench.end());
  }
  for (const std::string& file : options.history_files) args.insert(args.end(), {"--history-file", file});
  if (!options.history.empty()) args.insert(args.end(), {"--history", options.history});
  if (!options.title.empty()) args.insert(args.end(), {"--title", options.title});
  if (options.fail_on_regression) args.push_back("--fail-on-regression");

  const char* old_path = std::getenv("PYTHONPATH");
  const std::string path = dir.string() + (old_path && *old_path ? ":" + std::string(old_path) : "");
  setenv("PYTHONPATH", path.c_str(), 1);
  setenv("MPLBACKEND", "Agg", 1);  // no display on CI machines
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(argv[0], argv.data());
  throw Error(fmt::format("cannot run {}: {} (set OCLTUNE_PYTHON to a Python 3 with matplotlib)", args[0],
                          std::strerror(errno)));
}

}  // namespace ocltune
