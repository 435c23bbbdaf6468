// The ocltune subcommands; each returns the process exit status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ocltune {

struct CliOptions {
  int device = 0;
  std::vector<std::string> ops = {"all"};
  std::string db;                 // empty: default_database_path()
  std::string strategy = "random";
  std::int64_t max_evals = -1;    // -1: 16 on CPUs, 48 elsewhere
  std::uint64_t seed = 1;
  std::string shapes;             // preset name or JSON file; empty: quick on CPUs, default elsewhere
  bool json = false;
  bool quiet = false;
  std::string command_line;       // recorded with the run
  // eval
  std::string op;                      // one op family
  std::string shape;                   // JSON object
  std::vector<std::string> configs;    // canonical texts, or "default"
  std::string configs_file;            // one canonical configuration per line
  bool baseline = false;               // also time the same-process baseline (CLBlast for GEMM)
  std::int64_t sample = 0;             // also evaluate this many random configurations of the space
  std::string fix;                     // restrict the sample to these values (NAME=V,...)
  std::string out;                     // write the results as JSON to this file
};

int run_tune(const CliOptions& options);
int run_devices(const CliOptions& options);
int run_show(const CliOptions& options);
int run_eval(const CliOptions& options);
// `ocltune db ...` (cli/db_command.cpp): registers its subcommands on `app`; run_db runs the parsed one.
CLI::App* add_db_command(CLI::App& app);
int run_db(const CliOptions& options);

}  // namespace ocltune
