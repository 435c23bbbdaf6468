// `ocltune report`: benchmark results + database + history -> a self-contained HTML report.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ocltune {

struct CliOptions;

struct ReportOptions {
  std::vector<std::string> bench;          // Google Benchmark JSON files of ocltune_bench
  std::vector<std::string> history_files;  // performance history files (docs/performance_history.jsonl)
  std::string out;                         // directory for index.html
  std::string history;                     // directory of past runs' key figures; this run is appended
  bool fail_on_regression = false;
  double threshold = 0.10;  // smallest relative drop flagged
  double noise_k = 3.0;     // ... and more than this many run-to-run noise estimates
  std::string title;
};

// Declares the subcommand and its flags on `app`; `options` is filled when it is parsed.
CLI::App* add_report_command(CLI::App& app, ReportOptions& options);

// Runs the Python generator (reports/ocltune_report) with these flags, replacing this process.
// Exit status: 0, 1 runtime failure, 2 usage error, 3 regression found with --fail-on-regression.
int run_report(const CliOptions& cli, const ReportOptions& options);

}  // namespace ocltune
