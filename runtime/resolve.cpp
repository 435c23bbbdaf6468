// The runtime's cold path: the lookup chain (exact -> nearest -> device class -> built-in or
// library), the first-dispatch check of borrowed configurations, and kernel preparation.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>

#include <fmt/format.h>

#include "db/transfer.h"
#include "harness/error.h"
#include "runtime/check_record.h"
#include "runtime/entry.h"
#include "runtime/lookup.h"
#include "runtime/runtime.h"
#include "runtime/serial_worker.h"

namespace ocltune {
namespace {

// Adds the nanoseconds of its lifetime to `total` (RuntimeStats: where a first step's time went).
class ScopedNanoseconds {
 public:
  explicit ScopedNanoseconds(std::atomic<long long>& total) : total_(total) {}
  ~ScopedNanoseconds() {
    total_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
  }
  ScopedNanoseconds(const ScopedNanoseconds&) = delete;
  ScopedNanoseconds& operator=(const ScopedNanoseconds&) = delete;

 private:
  std::atomic<long long>& total_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::vector<ProgramSource> programs_of(const LaunchPlan& plan) {
  std::vector<ProgramSource> programs;
  for (const KernelLaunch& launch : plan.kernels) programs.push_back(launch.program);
  return programs;
}

bool borrowed(Level level) { return level == Level::kNearest || level == Level::kClass; }

std::string blocked_key(const Problem& p, const Config& config) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", p.op(), dtype_name(p.dtype()), math_name(p.math()), p.shape_key(),
                     to_string(config));
}

Runtime::Entry::Step make_step(const KernelLaunch& launch, cl::Program program) {
  Runtime::Entry::Step step;
  step.program = std::move(program);
  step.files = launch.program.files;
  step.defines = launch.program.defines;
  step.options = launch.program.options;
  step.kernel = launch.kernel;
  step.dims = static_cast<cl_uint>(launch.global.dimensions());
  for (cl_uint d = 0; d < step.dims; ++d) step.global[d] = launch.global.get()[d];
  step.driver_local = launch.local.dimensions() == 0;
  for (cl_uint d = 0; d < launch.local.dimensions(); ++d) step.local[d] = launch.local.get()[d];
  return step;
}

}  // namespace

std::string Runtime::check(const Problem& problem, const Config& config, const std::vector<ProgramSource>& programs) {
  ++checks_;
  const ScopedNanoseconds timed(check_ns_);
  try {
    // The call's programs (the check's plan builds the same ones: same shape, same configuration)
    // compile on another thread while this one makes the check's synthetic tensors and reference:
    // both took tenths of a second per check in resnet50's cold first step on an H100.
    std::future<void> builds = std::async(std::launch::async, [this, &programs] {
      for (const ProgramSource& program : programs) session_.programs().get(program);
    });
    std::unique_ptr<Evaluation> evaluation;
    try {
      evaluation = problem.instantiate_for_check(session_);
    } catch (...) {
      builds.wait();
      throw;
    }
    builds.get();  // a program that does not build fails the check, as it would in prepare
    const PreparedPlan prepared = prepare(session_, evaluation->plan(config));
    enqueue(session_.queue(), prepared);
    session_.queue().finish();
    const VerifyResult result = evaluation->verify();
    return result.ok ? "" : fmt::format("first-dispatch check failed: {}", result.message);
  } catch (const cl::Error& e) {
    return fmt::format("first-dispatch check failed: {}", ClError(e).what());
  } catch (const Error& e) {
    return fmt::format("first-dispatch check failed: {}", e.what());
  }
}

void Runtime::resolve(Entry& e, const DispatchAdapter& adapter, const void* call, cl_command_queue queue,
                      bool allow_provisional, const Config* checked) {
  std::lock_guard lock(e.resolve_mutex);
  if (e.ready.load(std::memory_order_acquire)) return;
  ++resolutions_;
  const ScopedNanoseconds timed(resolve_ns_);
  const std::unique_ptr<Problem> problem = adapter.problem(call);
  std::shared_ptr<const TunedTable> table;
  {
    std::lock_guard tables(tables_mutex_);
    table = table_;
  }
  const std::string op = problem->op(), dtype = dtype_name(problem->dtype()), math = math_name(problem->math()),
                    key = problem->shape_key();
  const nlohmann::json shape_json = problem->shape_json();
  // What dispatched_problems() reports; readers look only at entries that are ready.
  e.op = op;
  e.dtype = dtype;
  e.math = math;
  e.shape_key = key;
  e.shape = shape_json;

  LookupContext lookup{.table = *table,
                       .device = session_.device(),
                       .max_nearest_distance = options_.max_nearest_distance,
                       .tf32_units = tf32_units_,
                       .library = {},
                       .blocked = [&](const Config& config) { return is_blocked(blocked_key(*problem, config)); }};
  if (!adapter.library().empty() && op == "gemm" && gemm_fallback_ == adapter.library() &&
      adapter.library_serves(call, session_.device())) {
    lookup.library = adapter.library();
  }
  std::vector<Candidate> candidates = lookup_candidates(*problem, lookup);
  // Fast start: the built-in configuration now, the better one once the background has it ready.
  std::shared_ptr<Upgrade> pending;
  if (allow_provisional && fast_start_) pending = plan_upgrade(adapter, call, queue, *problem, candidates);
  if (pending) {
    pending->problem = adapter.problem(call);
    candidates.erase(candidates.begin(), std::find_if(candidates.begin(), candidates.end(),
                                                      [](const Candidate& c) { return c.level == Level::kBuiltin; }));
  }

  std::string failures;
  for (Candidate& c : candidates) {
    if (c.level == Level::kLibrary) {
      e.decision = {c.level, {}, c.source, 0, false};
      e.library = true;
      e.ready.store(true, std::memory_order_release);
      return;
    }
    const std::string bkey = blocked_key(*problem, c.config);
    if (is_blocked(bkey)) continue;
    const auto refuse = [&](const std::string& reason) {
      block(bkey, {op, key, to_string(c.config),
                   fmt::format("{} level, from {}: {}", level_name(c.level), c.source, reason)});
      failures += fmt::format("; {}: {}", level_name(c.level), reason);
    };
    bool verified = false;
    try {
      const LaunchPlan plan = adapter.plan(call, c.config, *workspaces(queue).lease());
      if (plan.kernels.empty()) {
        if (c.level == Level::kBuiltin) throw Error(fmt::format("op {} shape {}: the plan has no kernels", op, key));
        refuse("the plan has no kernels");
        continue;
      }
      // A borrowed configuration is checked on this shape before it runs, unless an earlier process
      // checked exactly these kernels on this device (measured on an H100: resnet50's first training
      // step spent 52 of its 53 s with warm caches in 73 checks).
      if (borrowed(c.level) && options_.verify_first_dispatch) {
        const std::string remembered = check_key(session_.device(), *problem, c.config, plan);
        if (check_record_->contains(remembered) || (checked && *checked == c.config)) {
          ++checks_remembered_;
        } else {
          const std::string reason = check(*problem, c.config, programs_of(plan));
          if (!reason.empty()) {
            refuse(reason);
            continue;
          }
          check_record_->add(remembered);
        }
        verified = true;
      }
      std::vector<Entry::Step> steps;
      for (const KernelLaunch& launch : plan.kernels) {
        steps.push_back(make_step(launch, session_.programs().get(launch.program)));
        cl::Kernel probe(steps.back().program, launch.kernel.c_str());  // the kernel name exists
      }
      // The fast binder must reproduce the plan's arguments exactly, or the plan runs every call.
      // Plans longer than kMaxSteps (a conv2d weight gradient in chunks of images) always re-plan.
      RawArgs fast[kMaxSteps];
      const bool short_plan = plan.kernels.size() <= kMaxSteps;
      std::vector<RawArgs> expected;
      if (short_plan) {
        for (const KernelLaunch& launch : plan.kernels) expected.push_back(raw_args(launch));
      }
      bool fast_ok = short_plan && adapter.fast_args(call, expected, std::span<RawArgs>(fast, plan.kernels.size()));
      for (std::size_t i = 0; fast_ok && i < plan.kernels.size(); ++i) {
        fast_ok =
            expected[i].count == fast[i].count &&
            std::equal(expected[i].args.begin(), expected[i].args.begin() + expected[i].count, fast[i].args.begin());
      }
      if (!fast_ok && short_plan && adapter.fast_args(call, expected, std::span<RawArgs>(fast, plan.kernels.size()))) {
        log(fmt::format("internal: op {}: fast arguments differ from the plan's; using the plan on every call", op));
      }
      e.steps = std::move(steps);
      e.fast = fast_ok;
      if (fast_ok) e.plan_args = std::move(expected);
      e.decision = {c.level, c.config, c.source, c.distance, verified};
      e.upgrade = pending;
      e.ready.store(true, std::memory_order_release);
      if (pending) {
        ++provisional_;
        upgrade_worker_->submit([this, pending] { prepare_upgrade(*pending); });
      }
      return;
    } catch (const cl::Error& err) {
      if (c.level == Level::kBuiltin) throw ClError(err);
      refuse(ClError(err).what());
    } catch (const ClError& err) {
      if (c.level == Level::kBuiltin) throw;
      refuse(err.what());
    }
  }
  throw Error(fmt::format("op {} shape {}: no configuration could be used{}", op, key, failures));
}

std::shared_ptr<Runtime::Upgrade> Runtime::plan_upgrade(const DispatchAdapter& adapter, const void* call,
                                                        cl_command_queue queue, const Problem& problem,
                                                        const std::vector<Candidate>& candidates) {
  const auto builtin =
      std::find_if(candidates.begin(), candidates.end(), [](const Candidate& c) { return c.level == Level::kBuiltin; });
  if (builtin == candidates.end()) return nullptr;  // the library answers last: it is always ready
  auto upgrade = std::make_shared<Upgrade>();
  for (auto c = candidates.begin(); c != builtin; ++c) {
    if (is_blocked(blocked_key(problem, c->config))) continue;
    Upgrade::Option option{*c, {}, {}};
    try {
      const LaunchPlan plan = adapter.plan(call, c->config, *workspaces(queue).lease());
      if (plan.kernels.empty()) continue;  // refused when the upgrade's resolution meets it
      option.programs = programs_of(plan);
      if (borrowed(c->level) && options_.verify_first_dispatch) {
        std::string key = check_key(session_.device(), problem, c->config, plan);
        if (!check_record_->contains(key)) option.check_key = std::move(key);
      }
    } catch (const std::exception&) {
      continue;  // likewise: a plan that throws is refused by a resolution, with its message
    }
    if (upgrade->options.empty()) {  // the head: ready when checked, and built or in the binary cache
      // (a warm start loads what an earlier process built, rather than building the built-in's programs)
      const bool built = std::all_of(option.programs.begin(), option.programs.end(),
                                     [&](const ProgramSource& p) { return session_.programs().available(p); });
      if (built && option.check_key.empty()) return nullptr;
    }
    upgrade->options.push_back(std::move(option));
  }
  return upgrade->options.empty() ? nullptr : upgrade;
}

void Runtime::prepare_upgrade(Upgrade& upgrade) {
  const Problem& problem = *upgrade.problem;
  for (const Upgrade::Option& option : upgrade.options) {
    const Candidate& c = option.candidate;
    const std::string bkey = blocked_key(problem, c.config);
    if (is_blocked(bkey)) continue;
    std::string reason;
    try {
      if (option.check_key.empty()) {
        for (const ProgramSource& program : option.programs) session_.programs().get(program);
      } else {
        reason = check(problem, c.config, option.programs);
        if (reason.empty()) check_record_->add(option.check_key);
      }
    } catch (const std::exception& err) {
      reason = err.what();
    }
    if (reason.empty()) {  // ready: the resolution that replaces the entry takes it
      upgrade.ready = c.config;
      break;
    }
    block(bkey, {problem.op(), problem.shape_key(), to_string(c.config),
                 fmt::format("{} level, from {}: {}", level_name(c.level), c.source, reason)});
  }
  upgrade.done.store(true, std::memory_order_release);
}

}  // namespace ocltune
