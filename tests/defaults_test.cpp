// Built-in defaults against the device's ceilings (issue 20, docs/decisions/0036): the default
// configuration of every family's "quick" and "test" shapes, and of scaled-down memory-bound
// "default" shapes, verifies against float64 and runs within a stated factor of the roofline
// measured in this process; and, without timing, a long reduction's default fills the device.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/ceilings.h"
#include "ops/conv2d/conv2d_problem.h"
#include "ops/elementwise/elementwise_problem.h"
#include "ops/family.h"
#include "ops/gemm/gemm_problem.h"
#include "ops/norm/norm.h"
#include "ops/norm/norm_problem.h"
#include "ops/pool/pool_problem.h"
#include "ops/reduce/reduce.h"
#include "ops/reduce/reduce_problem.h"
#include "ops/softmax/softmax.h"
#include "ops/softmax/softmax_problem.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"

namespace ocltune {
namespace {

// The rule, for a default taking t (median of several timed runs after a warm-up):
//   t <= kMemoryFactor * bytes / copy + kComputeFactor * flops / peak + kLaunchFactor * kernels * floor
// where copy is clEnqueueCopyBuffer's bandwidth (measure_copy_bandwidth, the ceiling of
// `ocltune ceilings`), peak the FMA kernel's rate (measure_peak_gflops), and floor the median time
// of a small launch (relu over 64K floats at a fixed configuration); all three measured in this
// process. So a default of a
// problem of at least a few MB must reach 1/kMemoryFactor of the copy bandwidth (its own bytes:
// input read once, output written once) or 1/kComputeFactor of the FMA peak; a small one, whose
// time is launch overhead, must stay within kLaunchFactor launches per kernel of its plan.
// The factors are generous because the CI machine is 2 shared cores and noisy: tuned configurations
// reach 0.5-1.0 of the copy on PoCL, the old defaults of long reductions 0.002 on the H200, the old
// defaults this test caught 0.008-0.028. 1/10 failed a clean-clone CI run on noise (max_pool2d
// forward with indices, 4 x 64 x 112 x 112, at 0.089 of the copy), hence 1/16.
constexpr double kMemoryFactor = 16;
constexpr double kComputeFactor = 20;
constexpr double kLaunchFactor = 4;
constexpr std::int64_t kFloorElements = 1 << 16;
// Shapes whose kernel, not its configuration, stays below 1/kMemoryFactor on PoCL (the best of
// every configuration tried is as slow), judged at 1/kKernelBoundFactor instead:
// - softmax over the outer axis of [4096, 3]: one outer row is one work-group, the kernel cannot
//   split the normalised axis (225-321 us over four configurations, default 245);
// - max_pool2d backward gathers every input gradient from the windows that cover it (8 x 64 x 56 x
//   56: 8.4-12.4 ms over six configurations, 0.075 of the copy at best);
// - max_pool2d forward with indices: a window's maximum and its index per output, at 0.03-0.09 of
//   the copy on PoCL (8 x 64 x 56 x 56: 7.4 ms, 0.06, on a quiet machine; 14.4 ms, 0.03, with a
//   build beside it, 2026-12-05), so 1/16 failed CI runs on the load of the suites running beside
//   it. A faster CPU kernel for it is open work (issue 39's small-shape speed);
// - elementwise chains ending in the erf gelu: erf's polynomial, which flops() does not count,
//   bounds them on a CPU (fp16 [256, 3072] add + gelu: 3.3-6.1 ms over four configurations);
// - depthwise convolutions: nine multiply-adds per element loaded, in kernels written for GPUs
//   (2 x 64 x 14 x 14, 3x3, the best of 42 configurations in each direction: forward 282 us,
//   input gradient 262 us, weight gradient 355 us, 0.04-0.06 of the copy).
constexpr double kKernelBoundFactor = 64;  // softmax [4096, 3] measured at 1/59
bool kernel_bound(const Problem& p) {
  const std::string key = p.shape_key();
  const auto* conv = dynamic_cast<const Conv2dProblem*>(&p);
  if (conv && conv->shape().depthwise()) return true;
  return (p.op() == "softmax" &&
          (key.rfind("axis=0,dims=4096x3,", 0) == 0 || key.rfind("axis=0,dims=4099x3,", 0) == 0)) ||
         (p.op() == "pool" && (key.rfind("max_bwd,", 0) == 0 || key.rfind("max_fwd,", 0) == 0)) ||
         (p.op() == "elementwise" && key.size() >= 5 && key.compare(key.size() - 5, 5, ",gelu") == 0);
}
// Problems whose buffers take more than this are left out (the test runs on a shared CPU).
constexpr double kMaxProblemBytes = 48.0 * (1 << 20);

struct Ceilings {
  double copy_gbs = 0;     // GB/s = bytes per ns
  double peak_gflops = 0;  // FLOP per ns
  double launch_ns = 0;
};

const TimingPolicy& policy() {
  static const TimingPolicy p{.warmup = 2, .min_runs = 7, .max_runs = 15, .target_spread = 0.05, .max_seconds = 0.4};
  return p;
}

// A small launch: relu over 64K floats (256 KB) at a fixed configuration (the old elementwise
// default), so the floor does not move with the defaults under test. Nanoseconds, 0 on failure.
double time_small_launch() {
  Session& session = testing::test_session();
  ElementwiseShape one;
  one.input.dims = {kFloorElements};
  one.steps = {{.op = ElementwiseOp::kRelu}};
  const ElementwiseProblem problem(one);
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const Config tiny{{"VW", 4}, {"ITEMS", 4}, {"WG", 64}, {"GRID_STRIDE", 0}, {"CONTIG", 0}, {"ROWS", 0}};
  const EvalOutcome o = evaluator.evaluate(tiny, policy());
  return o.stats ? o.stats->median_ns : 0;
}

const Ceilings& ceilings() {
  static const Ceilings c = [] {
    Session& session = testing::test_session();
    Ceilings r;
    r.copy_gbs = measure_copy_bandwidth(session).value;
    r.peak_gflops = measure_peak_gflops(session).value;
    r.launch_ns = time_small_launch();
    fmt::print("ceilings: copy {:.1f} GB/s, FMA peak {:.1f} GFLOP/s, small launch {:.1f} us\n", r.copy_gbs,
               r.peak_gflops, r.launch_ns / 1e3);
    return r;
  }();
  return c;
}

double total_buffer_bytes(const Problem& p) {
  double total = 0;
  for (const Problem::DeviceBuffer& b : p.device_buffers()) total += b.bytes;
  return std::max(total, p.bytes());
}

// Verifies and times the default of every problem; a failure names the shape and its figures.
void check_defaults(const ProblemList& problems) {
  Session& session = testing::test_session();
  const Ceilings& c = ceilings();
  ASSERT_GT(c.copy_gbs, 0);
  ASSERT_GT(c.peak_gflops, 0);
  ASSERT_GT(c.launch_ns, 0);
  int checked = 0;
  double worst = 0;
  std::string worst_line;
  for (const auto& problem : problems) {
    if (total_buffer_bytes(*problem) > kMaxProblemBytes) continue;
    const Config config = problem->default_config(session.device());
    ASSERT_TRUE(problem->space(session.device()).contains(config))
        << problem->shape_key() << ": " << problem->space(session.device()).check(config);
    auto evaluation = problem->instantiate(session);
    const std::size_t kernels = std::max<std::size_t>(1, evaluation->plan(config).kernels.size());
    Evaluator evaluator(session, *evaluation);
    const EvalOutcome o = evaluator.evaluate(config, policy());
    ASSERT_EQ(o.status, Status::kOk) << problem->shape_key() << " " << to_string(config) << ": " << o.error;
    ASSERT_TRUE(o.stats.has_value());
    double t = o.stats->median_ns;
    const double memory_ns = problem->bytes() / c.copy_gbs, compute_ns = problem->flops() / c.peak_gflops;
    const auto limit = [&](double launch_ns) {
      return (kernel_bound(*problem) ? kKernelBoundFactor : kMemoryFactor) * memory_ns + kComputeFactor * compute_ns +
             kLaunchFactor * kernels * launch_ns;
    };
    double launch_ns = c.launch_ns, allowed = limit(launch_ns);
    // Over the limit: timed up to twice more and the fastest median kept, as `db check` re-times, so
    // that a burst of other work on the shared CI machine does not fail a default, and the small
    // launch the limit counts in is timed again with it (the slower of its figures counts): launch
    // costs on PoCL's 2 shared cores are bimodal, and a launch-bound default judged in one mode
    // against a launch timed in the other failed (a 11x11 depthwise fp16 default took 62 us in three
    // of five runs and 102-118 us in the others; the launch itself 20.9-32 us, 2026-12-07).
    for (int retry = 0; retry < 2 && t > allowed; ++retry) {
      const EvalOutcome again = evaluator.evaluate(config, policy());
      if (again.status == Status::kOk && again.stats) t = std::min(t, again.stats->median_ns);
      launch_ns = std::max(launch_ns, time_small_launch());
      allowed = limit(launch_ns);
    }
    const std::string line =
        fmt::format("{} {} {}: {:.1f} us (allowed {:.1f}; {:.3f} of copy, {:.3f} of peak, {:.1f} launches) {}",
                    problem->op(), dtype_name(problem->dtype()), problem->shape_key(), t / 1e3, allowed / 1e3,
                    memory_ns / t, compute_ns / t, t / launch_ns, to_string(config));
    if (std::getenv("OCLTUNE_DEFAULTS_VERBOSE")) fmt::print("{}\n", line);
    if (std::getenv("OCLTUNE_DEFAULTS_ALL")) {
      for (const Config& other : problem->default_configs(session.device())) {
        const EvalOutcome a = evaluator.evaluate(other, policy());
        fmt::print("    {:.1f} us {}\n", a.stats ? a.stats->median_ns / 1e3 : -1.0, to_string(other));
      }
    }
    EXPECT_LE(t, allowed) << line;
    if (t / allowed > worst) {
      worst = t / allowed;
      worst_line = line;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
  // How close the closest default came to its limit (the margin a busier machine has left).
  fmt::print("{} defaults checked; the closest at {:.2f} of its limit: {}\n", checked, worst, worst_line);
}

ProblemList preset(const OpFamily& family, const std::string& name) { return family.preset(name); }

ProblemList quick_and_test(const OpFamily& family) {
  ProblemList all = preset(family, "quick");
  for (auto& p : preset(family, "test")) all.push_back(std::move(p));
  return all;
}

ReduceShape red(ReduceKind kind, std::vector<std::int64_t> dims, std::vector<int> axes, DType dtype = DType::kFp32) {
  return {.dims = std::move(dims), .axes = std::move(axes), .kind = kind, .dtype = dtype};
}

TEST(Defaults, ReduceWithinTheRoofline) {
  ProblemList problems = quick_and_test(reduce_family());
  // The "default" preset's reductions scaled to a few MB: one long row, a whole-tensor norm,
  // column sums and minima (the old defaults' worst cases), rows, the two-run per-channel sum.
  using K = ReduceKind;
  for (const ReduceShape& s :
       {red(K::kSum, {1 << 20}, {0}), red(K::kNorm2, {256, 3072}, {0, 1}), red(K::kSum, {2048, 768}, {0}, DType::kBf16),
        red(K::kMin, {2048, 768}, {0}, DType::kFp16), red(K::kSum, {1024, 768}, {0}), red(K::kSum, {2048, 768}, {1}),
        red(K::kMax, {8, 512, 512}, {2}), red(K::kSum, {8, 64, 56, 56}, {0, 2, 3}), red(K::kArgmax, {32, 30522}, {1}),
        red(K::kMean, {8, 2048, 7, 7}, {2, 3})}) {
    problems.push_back(std::make_unique<ReduceProblem>(s));
  }
  check_defaults(problems);
}

TEST(Defaults, SoftmaxWithinTheRoofline) {
  ProblemList problems = quick_and_test(softmax_family());
  for (const SoftmaxShape& s :
       {SoftmaxShape{.dims = {8, 512, 512}, .axis = 2},
        SoftmaxShape{.dims = {4, 512, 512}, .axis = 1, .dtype = DType::kBf16},
        SoftmaxShape{.dims = {32, 30522}, .axis = 1, .log = true}, SoftmaxShape{.dims = {4096, 3}, .axis = 0},
        SoftmaxShape{.dims = {3, 1 << 18}, .axis = 1}}) {
    problems.push_back(std::make_unique<SoftmaxProblem>(s));
  }
  check_defaults(problems);
}

TEST(Defaults, NormWithinTheRoofline) {
  ProblemList problems = quick_and_test(norm_family());
  for (const NormShape& s : {NormShape{.kind = NormKind::kLayer, .dims = {1024, 768}, .axis = 1},
                             NormShape{.kind = NormKind::kLayerBackward, .dims = {1024, 768}, .axis = 1},
                             NormShape{.kind = NormKind::kLayer, .dims = {4, 1 << 18}, .axis = 1},
                             NormShape{.kind = NormKind::kBatch, .dims = {8, 64, 56, 56}},
                             NormShape{.kind = NormKind::kBatch, .dims = {8, 512, 7, 7}, .dtype = DType::kFp16},
                             NormShape{.kind = NormKind::kBatchBackward, .dims = {8, 64, 56, 56}}}) {
    problems.push_back(std::make_unique<NormProblem>(s));
  }
  check_defaults(problems);
}

TEST(Defaults, PoolWithinTheRoofline) {
  ProblemList problems = quick_and_test(pool_family());
  for (const PoolShape& s : {
           PoolShape{.kind = PoolKind::kMax,
          .n = 4,
          .c = 64,
          .h = 112,
          .w = 112,
          .kh = 3,
          .kw = 3,
          .sh = 2,
          .sw = 2,
          .ph = 1,
          .pw = 1},
           PoolShape{.kind = PoolKind::kAdaptiveAvg, .n = 8, .c = 2048, .h = 7, .w = 7},
           PoolShape{.kind = PoolKind::kAdaptiveAvg, .backward = true, .n = 8, .c = 2048, .h = 7, .w = 7},
           PoolShape{.kind = PoolKind::kAvg, .n = 4, .c = 128, .h = 56, .w = 56, .kh = 2, .kw = 2, .sh = 2, .sw = 2},
       }) {
    problems.push_back(std::make_unique<PoolProblem>(s));
  }
  check_defaults(problems);
}

TEST(Defaults, ElementwiseWithinTheRoofline) {
  ProblemList problems = quick_and_test(elementwise_family());
  ElementwiseShape big;
  big.input.dims = {1024, 768};
  big.steps = {{.op = ElementwiseOp::kAdd, .tensor = TensorOperand{.dims = {768}}}, {.op = ElementwiseOp::kGelu}};
  problems.push_back(std::make_unique<ElementwiseProblem>(big));
  ElementwiseShape prime;
  prime.input.dims = {1000003};
  prime.steps = {{.op = ElementwiseOp::kRelu}};
  problems.push_back(std::make_unique<ElementwiseProblem>(prime));
  check_defaults(problems);
}

TEST(Defaults, GemmWithinTheRoofline) { check_defaults(quick_and_test(gemm_family())); }

// On a CPU the defaults are the GEMM-based algorithms on the CPU GEMM kernel (decision 0042) with
// row-wise gathers (decision 0051): the 3-channel 5x5 shapes that kept this test disabled
// (its im2col gather at 5 ns an element) came down from 1.1-1.2 of their limit to 0.2-0.3.
TEST(Defaults, Conv2dWithinTheRoofline) { check_defaults(quick_and_test(conv2d_family())); }

// Without timing: a long reduction's default on a device of N compute units launches at least N
// work-groups (the old default ran one work-group per output: 8.6 GB/s of the H200's 4200).
TEST(Defaults, LongReductionFillsTheDevice) {
  DeviceInfo h200 = testing::described_h200();
  DeviceInfo cpu = testing::test_session().device();
  DeviceInfo big_cpu = cpu;
  big_cpu.compute_units = 64;
  using K = ReduceKind;
  for (const DeviceInfo& d : {h200, cpu, big_cpu}) {
    for (const ReduceShape& s :
         {red(K::kSum, {std::int64_t{1} << 26}, {0}), red(K::kNorm2, {768, 3072}, {0, 1}),
          red(K::kSum, {4096, 768}, {0}, DType::kBf16), red(K::kMin, {4096, 768}, {0}, DType::kFp16),
          red(K::kMean, {32, 256, 56, 56}, {0, 2, 3}), red(K::kArgmax, {1 << 22}, {0}),
          red(K::kMax, {7, 1 << 20}, {1})}) {
      const Config c = reduce_default_config(s, d);
      ASSERT_TRUE(reduce_space(s, d).contains(c)) << s.key() << ": " << reduce_space(s, d).check(c);
      const ReducePass p = s.layout().passes.front();
      const std::int64_t wgs = c.at("WGS"), vw = c.at("VW"), unroll = c.at("UNROLL");
      std::int64_t groups = c.at("SPLIT") * ((p.outer + c.at("ROWS") - 1) / c.at("ROWS"));
      if (p.inner > 1) groups *= (p.inner + wgs * vw * unroll - 1) / (wgs * vw * unroll);
      EXPECT_GE(groups, static_cast<std::int64_t>(d.compute_units))
          << d.name << " (" << d.compute_units << " compute units) " << s.key() << ": " << to_string(c);
      // A GPU hides DRAM latency with resident work-items: at least half an SM's 2048 (the old
      // default's 1024 groups of 64 held 496 per SM of the H200). Not for columns: their splits
      // stop at sqrt(length), since the combine pass walks SPLIT partials per work item.
      // Columns: the combine pass walks SPLIT partials per work item, the first pass length / SPLIT
      // rows; neither longer than sqrt(length).
      if (p.inner > 1) {
        EXPECT_LE(c.at("SPLIT") * c.at("SPLIT"), std::max<std::int64_t>(1, p.length))
            << s.key() << ": " << to_string(c);
      }
      if (d.type == DeviceType::kGpu && p.inner == 1) {
        EXPECT_GE(groups * wgs, 1024 * static_cast<std::int64_t>(d.compute_units)) << s.key() << ": " << to_string(c);
      }
    }
  }
}

}  // namespace
}  // namespace ocltune
