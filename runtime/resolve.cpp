// The runtime's cold path: the lookup chain (exact -> nearest -> device class -> built-in or
// library), the first-dispatch check of borrowed configurations, and kernel preparation.
#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "db/transfer.h"
#include "harness/error.h"
#include "runtime/candidate_order.h"
#include "runtime/check_record.h"
#include "runtime/entry.h"
#include "runtime/runtime.h"

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

struct Candidate {
  Level level;
  Config config;
  std::string source;
  double distance = 0;
};

std::string blocked_key(const Problem& p, const Config& config) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", p.op(), dtype_name(p.dtype()), math_name(p.math()), p.shape_key(),
                     to_string(config));
}

std::string describe(const TunedEntry& e) {
  return fmt::format("{} database {}: device {}, shape {}, math {}", e.layer, e.path, e.device_key, e.shape_key,
                     e.math);
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

std::string Runtime::check(const Problem& problem, const Config& config) {
  ++checks_;
  const ScopedNanoseconds timed(check_ns_);
  try {
    std::unique_ptr<Evaluation> evaluation = problem.instantiate_for_check(session_);
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

void Runtime::resolve(Entry& e, const DispatchAdapter& adapter, const void* call, cl_command_queue queue) {
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
  const SearchSpace space = problem->space(session_.device());
  const nlohmann::json shape_json = problem->shape_json();
  // What dispatched_problems() reports; readers look only at entries that are ready.
  e.op = op;
  e.dtype = dtype;
  e.math = math;
  e.shape_key = key;
  e.shape = shape_json;

  // One candidate per level: the first usable configuration that level has. A tf32 call may run
  // what an exact call runs (exact arithmetic is within TF32's permission), so the rows of both math
  // modes compete at each level: of two rows of this very shape the one recorded faster, of the
  // nearest ones the nearer (tf32 on a tie). Without that, a tf32 call of a shape tuned only in exact
  // mode ran a built-in configuration where the exact call ran its tuned row (docs/decisions/0048).
  // A problem's rows as the lookup reads them: its dtype and key, and each math mode whose rows it may
  // run with the shape as those rows describe it (an exact row's shape names no math).
  struct RowsOf {
    std::string dtype, key;
    std::vector<std::pair<std::string, ShapeInfo>> maths;
  };
  const auto rows_of = [&](const Problem& p) {
    RowsOf r{dtype_name(p.dtype()), p.shape_key(), {}};
    const nlohmann::json p_shape = p.shape_json();
    r.maths.emplace_back(math, shape_info(p_shape));
    if (p.math() == MathMode::kTf32) {
      nlohmann::json exact_shape = p_shape;
      exact_shape.erase("math");
      r.maths.emplace_back(math_name(MathMode::kExact), shape_info(exact_shape));
    }
    return r;
  };
  // The fastest usable row of this very shape among `r`'s math modes.
  const auto exact_row = [&](const RowsOf& r) {
    const TunedEntry* best = nullptr;
    for (const auto& m : r.maths) {
      const TunedEntry* row = table->exact(op, r.dtype, m.first, r.key);
      if (row && space.contains(row->config) && (!best || row->median_ns < best->median_ns)) best = row;
    }
    return best;
  };
  std::vector<Candidate> candidates;
  const RowsOf own = rows_of(*problem);
  const TunedEntry* exact = exact_row(own);
  // A row of this shape in the call's own math mode (tf32: tuned with tensor cores).
  const TunedEntry* own_math = table->exact(op, dtype, math, key);
  const bool own_math_row = own_math && space.contains(own_math->config);
  if (exact) candidates.push_back({Level::kExact, exact->config, describe(*exact)});
  // The nearest usable row of `r` in any of its math modes, on this device, then on its class.
  const auto add_nearest = [&](const RowsOf& r, const std::string& source_prefix) {
    for (const bool same_device : {true, false}) {
      std::optional<std::pair<double, const TunedEntry*>> nearest;
      for (const auto& [m, m_shape] : r.maths) {
        for (const auto& [distance, tuned] :
             table->nearest(op, r.dtype, m, r.key, m_shape, same_device, options_.max_nearest_distance)) {
          if (!space.contains(tuned->config) || is_blocked(blocked_key(*problem, tuned->config))) continue;
          if (!nearest || distance < nearest->first) nearest = {distance, tuned};
          break;
        }
      }
      if (nearest) {
        candidates.push_back({same_device ? Level::kNearest : Level::kClass, nearest->second->config,
                              source_prefix + describe(*nearest->second), nearest->first});
      }
    }
  };
  // Problems whose configurations run this one unchanged (Problem::equivalent_problems: conv2d's
  // other epilogues, and fp32 for 16-bit storage). Their rows come after the call's own at each
  // level, checked at first dispatch like any borrowed row: of this dtype, the exact rows of the
  // equivalent shapes before the nearest of any shape (the configuration does not depend on the
  // epilogue: torch.compile's fused convolutions ran built-in configurations where eager's plain
  // ones had tuned rows); then the fp32 rows, exact before nearest (an autocast step ran every
  // convolution on a built-in configuration, measured on an H100 at 0.07-0.34 of cuDNN per layer
  // direction, where fp32 had tuned rows).
  std::vector<std::pair<RowsOf, std::string>> same_dtype, other_dtype;
  for (const auto& equivalent : problem->equivalent_problems()) {
    const bool same = equivalent->dtype() == problem->dtype();
    (same ? same_dtype : other_dtype)
        .emplace_back(rows_of(*equivalent),
                      same ? "equivalent shape's " : std::string(dtype_name(equivalent->dtype())) + " ");
  }
  const auto add_exact_of = [&](const std::vector<std::pair<RowsOf, std::string>>& group) {
    for (const auto& [r, prefix] : group) {
      if (const TunedEntry* row = exact_row(r)) {
        candidates.push_back({Level::kNearest, row->config, prefix + describe(*row), 0.0});
      }
    }
  };
  add_exact_of(same_dtype);
  add_nearest(own, "");
  for (const auto& [r, prefix] : same_dtype) add_nearest(r, prefix);
  add_exact_of(other_dtype);
  for (const auto& [r, prefix] : other_dtype) add_nearest(r, prefix);
  const bool use_library = !adapter.library().empty() && op == "gemm" && gemm_fallback_ == adapter.library() &&
                           adapter.library_serves(call, session_.device());
  if (use_library) {
    candidates.push_back({Level::kLibrary, {}, adapter.library()});
  } else {
    candidates.push_back({Level::kBuiltin, problem->default_config(session_.device()), "built-in configuration"});
  }
  // TF32 allowed where there are TF32 units means tensor cores, as with cuBLAS and cuDNN: a
  // tensor-core configuration (a tf32 row's, or the built-in of a tf32 GEMM) before any that runs
  // on the FMA units, which an exact-math row of the shape would otherwise be (measured on the
  // H200: 4096x768x3072 ran its exact row at 0.17 of cuBLAS TF32). Where this very shape has a
  // tf32 row, the exact level's pick keeps the head, be it that row or the shape's exact row
  // recorded faster: that was measured (the tf32 tuning searched the tensor-core configurations).
  if (problem->math() == MathMode::kTf32 && tf32_units_) {
    const bool measured_first = own_math_row && !candidates.empty() && candidates.front().level == Level::kExact;
    matrix_units_first(candidates, measured_first,
                       [&](const Candidate& c) { return !c.config.empty() && problem->uses_matrix_units(c.config); });
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
      if ((c.level == Level::kNearest || c.level == Level::kClass) && options_.verify_first_dispatch) {
        const std::string remembered = check_key(session_.device(), *problem, c.config, plan);
        if (check_record_->contains(remembered)) {
          ++checks_remembered_;
        } else {
          const std::string reason = check(*problem, c.config);
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
      e.ready.store(true, std::memory_order_release);
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

}  // namespace ocltune
