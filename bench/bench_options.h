// Flags of ocltune_bench besides Google Benchmark's own --benchmark_* flags.
#pragma once

#include <string>
#include <vector>

#include "ops/problem.h"

namespace ocltune::bench {

struct BenchOptions {
  int device = 0;
  std::vector<std::string> ops = {"all"};
  std::string shapes;  // preset or JSON file; empty: quick on CPUs, default elsewhere (as `ocltune tune`)
  std::string db;      // empty: the tuner's default database path
  bool baselines = true;
};

// Parses what Google Benchmark left of argv. Returns false after printing help (exit 0); throws
// UsageError on a bad flag.
bool parse_bench_options(int argc, char** argv, BenchOptions& options);

// The problems of the chosen families: a preset name (every family's preset of that name) or a
// JSON shapes file. Throws UsageError for an unknown op, preset or unreadable file.
ProblemList select_problems(const BenchOptions& options, const DeviceInfo& device);

}  // namespace ocltune::bench
