// `ocltune eval`: verify and time given configurations of one problem, next to the same-process
// baseline (CLBlast for GEMM), without touching a database. For kernel work and bug reports.
#include <chrono>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "core/storage.h"
#include "core/usage_error.h"
#include "harness/device_errors.h"
#include "harness/error.h"
#include "harness/session.h"
#include "harness/timing.h"
#include "harness/verify.h"
#include "ops/family.h"
#include "ops/gemm/gemm_clblast.h"
#include "tuner/evaluator.h"
#include "tuner/strategy.h"

namespace ocltune {
namespace {

std::vector<Config> requested_configs(const CliOptions& options, const Problem& problem, const DeviceInfo& device) {
  std::vector<std::string> texts = options.configs;
  if (!options.configs_file.empty()) {
    std::ifstream in(options.configs_file);
    if (!in) throw UsageError(fmt::format("--configs-file {} is not readable", options.configs_file));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '#') texts.push_back(line);
    }
  }
  std::vector<Config> configs;
  if (texts.empty() && options.sample == 0) configs.push_back(problem.default_config(device));
  const SearchSpace space = problem.space(device);
  if (options.sample > 0) {
    // A seeded random sample of the space, or of the --restrict sub-space.
    Restriction restriction;
    try {
      restriction = parse_restriction(options.restrict);
    } catch (const Error& e) {
      throw UsageError(fmt::format("--restrict: {}", e.what()));
    }
    std::vector<Config> all = space.enumerate();
    std::erase_if(all, [&](const Config& c) { return !allowed(c, restriction); });
    deterministic_shuffle(all, options.seed);
    if (all.size() > static_cast<std::size_t>(options.sample)) all.resize(static_cast<std::size_t>(options.sample));
    configs.insert(configs.end(), all.begin(), all.end());
  }
  for (const std::string& text : texts) {
    Config c;
    try {
      c = text == "default" ? problem.default_config(device) : parse_config(text);
    } catch (const Error& e) {
      throw UsageError(fmt::format("--config '{}': {}", text, e.what()));
    }
    if (const std::string why = space.check(c); !why.empty()) {
      // Reported and skipped, so one bad entry of a long list does not waste the others.
      fmt::print(stderr, "ocltune: skipping --config '{}': outside the search space: {}\n", text, why);
      continue;
    }
    configs.push_back(std::move(c));
  }
  return configs;
}

// Median wall time of whole CLBlast calls (queue drained around each), after warm-up. A 16-bit
// shape CLBlast cannot run on the device (bf16; fp16 without cl_khr_fp16) is timed as its fp32
// SGEMM, what an OpenCL user there has; `label` says which.
std::optional<double> clblast_median_ns(Session& session, const Problem& problem, std::string& label) {
  if (problem.op() != "gemm") return std::nullopt;
  GemmShape shape = GemmShape::from_json(problem.shape_json());
  label = "clblast";
  if (!clblast_supports(shape.dtype, session.device())) {
    label = fmt::format("clblast (fp32 SGEMM: no {} GEMM on this device)", dtype_name(shape.dtype));
    shape.dtype = DType::kFp32;
  }
  auto elements = [](std::int64_t rows, std::int64_t ld, std::int64_t batch) {
    return static_cast<std::size_t>(rows * ld * batch);
  };
  std::vector<float> a(elements(shape.rows_a(), shape.packed_lda(), shape.batch));
  std::vector<float> b(elements(shape.rows_b(), shape.packed_ldb(), shape.batch));
  fill_uniform(a, 11);
  fill_uniform(b, 12);
  const cl::Context& ctx = session.context();
  GemmOperands o = packed_operands(
      shape, make_buffer(ctx, a, shape.dtype, CL_MEM_READ_ONLY), make_buffer(ctx, b, shape.dtype, CL_MEM_READ_ONLY),
      cl::Buffer(ctx, CL_MEM_READ_WRITE,
                 elements(shape.m, shape.packed_ldc(), shape.batch) * dtype_bytes(shape.dtype)));
  std::vector<double> samples;
  for (int i = 0; i < 23; ++i) {
    const auto start = std::chrono::steady_clock::now();
    clblast_gemm(session.queue(), shape, o);
    session.queue().finish();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    if (i >= 3) samples.push_back(ns);  // the first calls compile CLBlast's kernels
  }
  return summarize(samples).median_ns;
}

// The plan's kernels, each with its median duration and the gap before it (on some drivers, e.g.
// PoCL's, the gaps between a plan's kernels cost more than the kernels).
nlohmann::json print_kernel_times(Session& session, Evaluation& evaluation, const Config& config) {
  nlohmann::json out = nlohmann::json::array();
  const PreparedPlan plan = prepare(session, evaluation.plan(config));
  double kernels_ns = 0, gaps_ns = 0;
  for (const KernelTiming& k : time_kernels(session.queue(), plan, 21)) {
    fmt::print("    {:>10.1f} us  (gap before {:>7.1f} us)  {}\n", k.median_ns * 1e-3, k.gap_ns * 1e-3, k.name);
    out.push_back({{"kernel", k.name}, {"median_ns", k.median_ns}, {"gap_ns", k.gap_ns}});
    kernels_ns += k.median_ns;
    gaps_ns += k.gap_ns;
  }
  fmt::print("    {:>10.1f} us  in {} kernel(s), {:.1f} us in the gaps between them\n", kernels_ns * 1e-3, out.size(),
             gaps_ns * 1e-3);
  return out;
}

}  // namespace

int run_eval(const CliOptions& options) {
  const OpFamily* family = find_family(options.op);
  if (!family) throw UsageError(fmt::format("--op: unknown op '{}'", options.op));
  const nlohmann::json shape_json = nlohmann::json::parse(options.shape, nullptr, false);
  if (shape_json.is_discarded()) throw UsageError("--shape is not valid JSON");
  std::unique_ptr<Problem> problem;
  try {
    problem = family->from_json(shape_json);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--shape: {}", e.what()));
  }
  DeviceInfo device;
  try {
    device = find_device(options.device);
  } catch (const DeviceIndexError& e) {
    throw UsageError(e.what());
  }
  const std::vector<Config> configs = requested_configs(options, *problem, device);
  Session session(device);
  auto evaluation = problem->instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const TimingPolicy timing{.warmup = 3, .min_runs = 10, .max_runs = 60, .target_spread = 0.02, .max_seconds = 3};

  fmt::print("[{}] {} | {} {} {} {}\n", device.index, device.name, problem->op(), dtype_name(problem->dtype()),
             math_name(problem->math()), problem->shape_key());
  nlohmann::json results = nlohmann::json::array();
  std::optional<double> best_ns;
  for (const Config& config : configs) {
    const EvalOutcome o = evaluator.evaluate(config, timing);
    nlohmann::json r = {{"params", to_string(config)}, {"status", status_name(o.status)}, {"compile_ms", o.compile_ms}};
    if (o.stats) {
      r["median_ns"] = o.stats->median_ns;
      r["spread"] = o.stats->spread;
      r["rate"] = throughput(*problem, o.stats->median_ns);
      if (o.status == Status::kOk && (!best_ns || o.stats->median_ns < *best_ns)) best_ns = o.stats->median_ns;
      fmt::print("{:<13} {:>10.1f} us {:>18} spread {:5.1f}%  {}\n", status_name(o.status), o.stats->median_ns * 1e-3,
                 format_throughput(*problem, o.stats->median_ns), 100 * o.stats->spread, to_string(config));
    } else {
      r["error"] = o.error;
      fmt::print("{:<13} {}\n    {}\n", status_name(o.status), to_string(config), o.error.substr(0, 600));
    }
    if (options.kernels && o.status == Status::kOk) r["kernels"] = print_kernel_times(session, *evaluation, config);
    results.push_back(std::move(r));
  }
  nlohmann::json out = {{"device", to_json(device)},
                        {"op", problem->op()},
                        {"dtype", dtype_name(problem->dtype())},
                        {"math", math_name(problem->math())},
                        {"shape_key", problem->shape_key()},
                        {"results", results}};
  if (options.baseline) {
    std::optional<double> baseline_ns;
    std::string label;
    try {
      baseline_ns = clblast_median_ns(session, *problem, label);
    } catch (const Error& e) {  // the results above still count
      fmt::print("{:<13} unavailable: {}\n", "clblast", e.what());
    }
    if (const auto& ns = baseline_ns) {
      out["clblast_label"] = label;
      out["clblast_median_ns"] = *ns;
      out["clblast_rate"] = throughput(*problem, *ns);
      fmt::print("{:<13} {:>10.1f} us {:>18} (whole calls) {}\n", "clblast", *ns * 1e-3,
                 format_throughput(*problem, *ns), label == "clblast" ? "" : label);
      if (best_ns) fmt::print("best / clblast: {:.2f}x\n", *ns / *best_ns);
    }
  }
  // The fastest verified configurations, fastest first.
  std::vector<const nlohmann::json*> ok;
  for (const auto& r : results) {
    if (r["status"] == status_name(Status::kOk)) ok.push_back(&r);
  }
  std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return (*a)["median_ns"] < (*b)["median_ns"]; });
  if (ok.size() > 1) {
    fmt::print("fastest:\n");
    for (std::size_t i = 0; i < std::min<std::size_t>(ok.size(), 8); ++i) {
      fmt::print("  {:>10.1f} us  {}\n", (*ok[i])["median_ns"].get<double>() * 1e-3,
                 (*ok[i])["params"].get<std::string>());
    }
  }
  if (!options.out.empty()) std::ofstream(options.out) << out.dump(2) << "\n";
  if (options.json) fmt::print("{}\n", out.dump(2));
  return kExitOk;
}

}  // namespace ocltune
