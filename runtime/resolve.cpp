// The runtime's cold path: the lookup chain (exact -> nearest -> device class -> built-in or
// library), the first-dispatch check of borrowed configurations, and kernel preparation.
#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "db/transfer.h"
#include "harness/error.h"
#include "runtime/candidate_order.h"
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
    std::unique_ptr<Evaluation> evaluation = problem.instantiate(session_);
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
  const ShapeInfo shape = shape_info(shape_json);
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
  // Each math mode with the shape as its rows describe it (an exact row's shape names no math).
  std::vector<std::pair<std::string, ShapeInfo>> maths = {{math, shape}};
  if (problem->math() == MathMode::kTf32) {
    nlohmann::json exact_shape = shape_json;
    exact_shape.erase("math");
    maths.emplace_back(math_name(MathMode::kExact), shape_info(exact_shape));
  }
  std::vector<Candidate> candidates;
  const TunedEntry* exact = nullptr;
  bool own_math_row = false;  // a row of this shape in the call's own math mode (tf32: tuned with tensor cores)
  for (const auto& m : maths) {
    const TunedEntry* row = table->exact(op, dtype, m.first, key);
    if (row && space.contains(row->config)) own_math_row = own_math_row || m.first == math;
    if (row && space.contains(row->config) && (!exact || row->median_ns < exact->median_ns)) exact = row;
  }
  if (exact) candidates.push_back({Level::kExact, exact->config, describe(*exact)});
  // The nearest usable row of `rows_dtype` in any of `row_maths`, on this device, then on its class.
  const auto add_nearest = [&](const std::string& rows_dtype,
                               const std::vector<std::pair<std::string, ShapeInfo>>& row_maths,
                               const std::string& source_prefix) {
    for (const bool same_device : {true, false}) {
      std::optional<std::pair<double, const TunedEntry*>> nearest;
      for (const auto& [m, m_shape] : row_maths) {
        for (const auto& [distance, tuned] :
             table->nearest(op, rows_dtype, m, key, m_shape, same_device, options_.max_nearest_distance)) {
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
  add_nearest(dtype, maths, "");
  // A 16-bit call with no row of its dtype at some level: the fp32 rows of its family where their
  // configurations run in 16 bits too (conv2d: the same kernels, the storage type a define), this
  // shape's first, then the nearest; checked at first dispatch against the 16-bit tolerance like any
  // borrowed row. Before them an autocast step ran every convolution on a built-in configuration
  // (measured on an H100: 0.07-0.34 of cuDNN per layer direction) where fp32 had tuned rows.
  if (problem->dtype() != DType::kFp32 && problem->fp32_rows_serve()) {
    const std::string fp32 = dtype_name(DType::kFp32);
    std::vector<std::pair<std::string, ShapeInfo>> fp32_maths;  // the shape as an fp32 row names it
    for (const auto& [m, m_shape] : maths) {
      nlohmann::json fp32_shape = shape_json;
      fp32_shape.erase("dtype");
      if (m != math) fp32_shape.erase("math");
      fp32_maths.emplace_back(m, shape_info(fp32_shape));
    }
    const TunedEntry* row = nullptr;
    for (const auto& m : fp32_maths) {
      const TunedEntry* r = table->exact(op, fp32, m.first, key);
      if (r && space.contains(r->config) && (!row || r->median_ns < row->median_ns)) row = r;
    }
    if (row) candidates.push_back({Level::kNearest, row->config, "fp32 " + describe(*row), 0.0});
    add_nearest(fp32, fp32_maths, "fp32 ");
  }
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
    if ((c.level == Level::kNearest || c.level == Level::kClass) && options_.verify_first_dispatch) {
      const std::string reason = check(*problem, c.config);
      if (!reason.empty()) {
        refuse(reason);
        continue;
      }
      verified = true;
    }
    try {
      const LaunchPlan plan = adapter.plan(call, c.config, *workspaces(queue).lease());
      if (plan.kernels.empty()) {
        if (c.level == Level::kBuiltin) throw Error(fmt::format("op {} shape {}: the plan has no kernels", op, key));
        refuse("the plan has no kernels");
        continue;
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
