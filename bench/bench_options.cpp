// Flags of ocltune_bench and the problems they select, from the same shape tables the tuner uses.
#include "bench/bench_options.h"

#include <algorithm>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/usage_error.h"
#include "ops/family.h"

namespace ocltune::bench {

bool parse_bench_options(int argc, char** argv, BenchOptions& options) {
  CLI::App app{
      "ocltune_bench: tuned vs default vs baseline for every op and shape (Google Benchmark; "
      "--benchmark_* flags are Google Benchmark's, e.g. --benchmark_out=FILE --benchmark_out_format=json)",
      "ocltune_bench"};
  app.add_option("-d,--device", options.device, "device index, as `ocltune devices` lists them")->capture_default_str();
  app.add_option("--ops", options.ops,
                 fmt::format("op families, comma-separated, or all ({})", fmt::join(family_names(), ", ")))
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--shapes,--preset", options.shapes,
                 fmt::format("shape preset ({}) or a JSON shapes file (default: quick on CPUs, default elsewhere)",
                             fmt::join(preset_names(), ", ")));
  app.add_option("--db", options.db, "database with the tuned configurations (default: as `ocltune tune`)");
  app.add_flag("!--no-baselines", options.baselines, "time only our kernels (no CLBlast, no copy)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  return true;
}

ProblemList select_problems(const BenchOptions& options, const DeviceInfo& device) {
  std::vector<std::string> names;
  for (const std::string& name : options.ops) {
    if (name == "all") {
      names = family_names();
      break;
    }
    if (!find_family(name)) {
      throw UsageError(fmt::format("unknown op '{}'; available: {} (or all)", name, fmt::join(family_names(), ", ")));
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  const std::string preset =
      options.shapes.empty() ? (device.type == DeviceType::kCpu ? "quick" : "default") : options.shapes;
  const std::vector<std::string> presets = preset_names();
  ProblemList problems;
  if (std::find(presets.begin(), presets.end(), preset) != presets.end()) {
    for (const std::string& name : names) {
      for (auto& p : find_family(name)->preset(preset)) problems.push_back(std::move(p));
    }
    return problems;
  }
  std::ifstream in(preset);
  if (!in) {
    throw UsageError(
        fmt::format("--shapes '{}' is neither a preset ({}) nor a readable file", preset, fmt::join(presets, ", ")));
  }
  const nlohmann::json list = nlohmann::json::parse(in, nullptr, false);
  if (list.is_discarded()) throw UsageError(fmt::format("--shapes {}: not valid JSON", preset));
  try {
    return problems_from_json(list, names);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--shapes {}: {}", preset, e.what()));
  }
}

}  // namespace ocltune::bench
