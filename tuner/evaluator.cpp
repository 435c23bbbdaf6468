// Evaluation of one configuration: build, verify against the reference, then time.
#include "tuner/evaluator.h"

#include <chrono>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/session.h"

namespace ocltune {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The first lines of a build log: enough to see the error, small enough for a database row.
std::string log_head(const std::string& log) {
  constexpr std::size_t kMax = 2000;
  return log.size() <= kMax ? log : log.substr(0, kMax) + "\n[...]";
}

}  // namespace

EvalOutcome Evaluator::evaluate(const Config& config, const TimingPolicy& timing, const Hooks& hooks) {
  EvalOutcome out;
  out.config = config;
  PreparedPlan prepared;
  LaunchPlan plan;
  auto start = std::chrono::steady_clock::now();
  // Build time of the plan's programs, wherever they were built (ahead on the pool, or now).
  auto build_ms = [&] {
    double ms = 0;
    for (const KernelLaunch& k : plan.kernels) ms += session_.programs().build_ms(k.program);
    return ms;
  };
  try {
    plan = evaluation_.plan(config);
    prepared = prepare(session_, plan);
  } catch (const BuildError& e) {
    out.compile_wait_ms = ms_since(start);
    out.compile_ms = build_ms();
    out.status = Status::kCompileError;
    out.error = fmt::format("{}\n{}", e.what(), log_head(e.log()));
    return out;
  } catch (const ClError& e) {
    out.compile_wait_ms = ms_since(start);
    out.compile_ms = build_ms();
    out.status = Status::kLaunchError;
    out.error = e.what();
    return out;
  } catch (const Error& e) {
    out.status = Status::kSkipped;
    out.error = e.what();
    return out;
  }
  out.compile_wait_ms = ms_since(start);
  out.compile_ms = build_ms();

  start = std::chrono::steady_clock::now();
  try {
    evaluation_.reset();
    enqueue(session_.queue(), prepared);
    session_.queue().finish();
    const VerifyResult check = evaluation_.verify();
    out.max_error = check.max_error;
    out.verify_ms = ms_since(start);
    if (!check.ok) {
      out.status = Status::kWrongResult;
      out.error = fmt::format("{} ({} mismatches)", check.message, check.mismatches);
      return out;
    }
  } catch (const ClError& e) {
    out.verify_ms = ms_since(start);
    out.status = Status::kLaunchError;
    out.error = e.what();
    return out;
  } catch (const cl::Error& e) {
    out.verify_ms = ms_since(start);
    out.status = Status::kLaunchError;
    out.error = ClError(e).what();
    return out;
  }

  start = std::chrono::steady_clock::now();
  if (hooks.before_timing) hooks.before_timing();
  try {
    out.stats = time_plan(session_.queue(), prepared, timing);
    out.status = out.stats->cut_short ? Status::kCut : Status::kOk;
  } catch (const ClError& e) {
    out.status = Status::kLaunchError;
    out.error = e.what();
  }
  if (hooks.after_timing) hooks.after_timing();
  out.timing_ms = ms_since(start);
  return out;
}

}  // namespace ocltune
