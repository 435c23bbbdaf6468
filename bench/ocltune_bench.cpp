// ocltune_bench: Google Benchmark suite of tuned vs default vs baseline for every op and shape.
#include <algorithm>
#include <filesystem>
#include <optional>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/bench_options.h"
#include "bench/run_context.h"
#include "bench/suite.h"
#include "core/usage_error.h"
#include "db/database.h"
#include "harness/ceilings.h"
#include "harness/device_errors.h"
#include "harness/session.h"

namespace ocltune::bench {
namespace {

int bench_main(int argc, char** argv) {
  // Google Benchmark takes its --benchmark_* flags out of argv; CLI11 parses (and rejects) the rest.
  benchmark::Initialize(&argc, argv);
  BenchOptions options;
  if (!parse_bench_options(argc, argv, options)) return kExitOk;

  DeviceInfo device;
  try {
    device = find_device(options.device);
  } catch (const DeviceIndexError& e) {
    throw UsageError(e.what());
  }
  ProblemList problems = select_problems(options, device);
  Session session(device);

  // Ceilings are measured at the start of every run, on the same device state as the results.
  const Ceiling copy = measure_copy_bandwidth(session);
  const Ceiling peak = measure_peak_gflops(session);
  // Problems that may use matrix units are placed against the tensor-core rate of their inputs
  // where the device has one: each rate is measured where some problem needs it.
  const auto mma_peak = [&](const char* inputs, MmaInputs kind) {
    const bool needed =
        std::any_of(problems.begin(), problems.end(), [&](const auto& p) { return p->matrix_inputs() == inputs; });
    return needed ? measure_mma_peak_gflops(session, kind) : Ceiling{};
  };
  const MmaCeilings mma{.tf32 = mma_peak("tf32", MmaInputs::kTf32),
                        .fp16 = mma_peak("fp16", MmaInputs::kFp16),
                        .bf16 = mma_peak("bf16", MmaInputs::kBf16)};
  const std::string db_path = options.db.empty() ? default_database_path() : options.db;
  add_run_context(
      device, copy, peak, mma,
      {.shapes = options.shapes.empty() ? (device.type == DeviceType::kCpu ? "quick" : "default") : options.shapes,
       .database = db_path});
  fmt::print(stderr, "ocltune_bench: [{}] {} ({}): copy {:.1f} GB/s, fp32 FMA peak {:.1f} GFLOP/s\n", device.index,
             device.name, device.platform_name, copy.value, peak.value);

  std::optional<Database> db;
  std::string db_note;
  if (!std::filesystem::exists(db_path)) {
    db_note = fmt::format("no database at {}: run `ocltune tune` first", db_path);
  } else {
    db = Database::open_read_only(db_path);
  }
  Suite suite(session,
              {.peak_gflops = peak.value,
               .copy_gbs = copy.value,
               .tf32_gflops = mma.tf32.value,
               .fp16_gflops = mma.fp16.value,
               .bf16_gflops = mma.bf16.value},
              db ? &*db : nullptr, db_note, options.baselines);
  for (auto& p : problems) suite.add(std::move(p));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (suite.failures() > 0) {
    fmt::print(stderr, "ocltune_bench: {} variant(s) failed to build, launch or verify (see error_message)\n",
               suite.failures());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace
}  // namespace ocltune::bench

int main(int argc, char** argv) {
  using namespace ocltune;
  try {
    return bench::bench_main(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "ocltune_bench: error: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ocltune_bench: error: {}\n", e.what());
    return kExitFailure;
  }
}
