// The ocltune subcommands; each returns the process exit status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ocltune {

struct DeviceInfo;

struct CliOptions {
  int device = 0;
  // --devices 0,2 or --device all: tune on several devices at once (cli/multi_tune.cpp); empty: one.
  std::vector<int> devices;
  bool all_devices = false;
  // Hidden: what the coordinator of several devices gives each worker `ocltune tune`: the run it
  // began for it, the runs of the whole group, and its own pid (docs/decisions/0038).
  std::int64_t run_id = 0;
  std::vector<std::int64_t> group_runs;
  std::int64_t coordinator = 0;
  std::vector<std::string> ops = {"all"};
  std::string db;  // empty: default_database_path()
  std::string strategy = "model";
  std::string math = "exact";   // exact | tf32 (matrix units where the device has them)
  std::int64_t max_evals = -1;  // -1: 16 on CPUs, 48 elsewhere
  std::uint64_t seed = 1;
  std::string restrict;     // sub-space, "NAME=V1|V2,..."
  double fraction = 0;      // share of each space; 0: no such limit
  std::string time_budget;  // whole run, e.g. "10m"; empty: none
  std::int64_t patience = 0;
  double cut = 2.0;
  int final_candidates = 3;
  int compile_threads = -1;  // -1: half the host's cores, 1 to 4 (measured: docs/PERFORMANCE.md)
  bool isolate = false;
  std::string eval_timeout = "60s";
  bool warm_start = false;
  std::string binary_cache;  // empty: default_binary_cache_dir(); "off": none
  // simulate / record / eval
  std::vector<std::string> spaces;  // recorded-space files (JSON lines)
  std::string from_db, device_key;
  std::string op;     // one op family
  std::string shape;  // a shape key (simulate, record) or a JSON object (eval)
  std::string out;    // output file
  int seeds = 20;
  std::vector<std::string> strategies;
  std::string shapes;  // preset name or JSON file; empty: quick on CPUs, default elsewhere
  bool json = false;
  bool quiet = false;
  std::string command_line;  // recorded with the run
  // eval
  std::vector<std::string> configs;  // canonical texts, or "default"
  std::string configs_file;          // one canonical configuration per line
  bool baseline = false;             // also time the same-process baseline (CLBlast for GEMM)
  bool kernels = false;              // also time each kernel of every configuration's plan
  std::int64_t sample = 0;           // also evaluate this many random configurations (of --restrict)
};

// The whole command line: flags, subcommand, exit code (0 success, 1 failure, 2 usage error).
int cli_main(int argc, char** argv);

int run_tune(const CliOptions& options);
// The checks run_tune makes before it opens the database (ops, device index, shapes, flags):
// throws UsageError; returns the device.
DeviceInfo check_tune(const CliOptions& options, int device_index);
// --devices / --device all: one worker process per device, one database (cli/multi_tune.cpp).
int run_tune_devices(const CliOptions& options);
int run_devices(const CliOptions& options);
int run_ceilings(const CliOptions& options);
int run_show(const CliOptions& options);
int run_eval(const CliOptions& options);
int run_simulate(const CliOptions& options);
int run_record(const CliOptions& options);
// `ocltune db ...` (cli/db_command.cpp): registers its subcommands on `app`; run_db runs the parsed one.
CLI::App* add_db_command(CLI::App& app);
int run_db(const CliOptions& options);

}  // namespace ocltune
