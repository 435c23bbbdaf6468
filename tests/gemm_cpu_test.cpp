// The CPU GEMM variant (kernels/gemm_cpu.cl): offered only on CPU devices, its configurations in
// database rows valid for a CPU and refused for a GPU, and a covering sample of its space against
// the float64 reference on odd shapes, every layout, strided batches, offsets, padding and beta.
#include <algorithm>
#include <array>

#include <gtest/gtest.h>

#include "harness/capability.h"
#include "ops/family.h"
#include "ops/gemm/gemm_problem.h"
#include "runtime/db_verify.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"

namespace ocltune {
namespace {

bool has_variant(const SearchSpace& space, const std::string& name) {
  const auto& v = space.variants();
  return std::any_of(v.begin(), v.end(), [&](const SearchSpace::Variant& x) { return x.name == name; });
}

TEST(GemmCpuCapability, HoldsForCpusOnlyAlsoWhenDescribedByARow) {
  DeviceInfo cpu;
  cpu.vendor = "AuthenticAMD";
  cpu.type = DeviceType::kCpu;
  EXPECT_TRUE(satisfies(cpu, cpu_device()));
  EXPECT_FALSE(satisfies(testing::described_h200(), cpu_device()));
  // A devices row stores the type but no extensions: the type still decides.
  cpu.capabilities_known = false;
  EXPECT_TRUE(satisfies(cpu, cpu_device()));
  DeviceInfo gpu_row = testing::described_h200();
  gpu_row.capabilities_known = false;
  EXPECT_FALSE(satisfies(gpu_row, cpu_device()));
  EXPECT_EQ(cpu_device().describe(), "any vendor, CPU");
}

TEST(GemmCpuSpace, OfferedOnThisCpuAndAbsentOnAGpu) {
  const DeviceInfo& device = testing::test_session().device();
  for (const MathMode math : {MathMode::kExact, MathMode::kTf32}) {
    const GemmShape shape{.m = 1024, .n = 1024, .k = 1024, .math = math};
    const Config cpu_default = gemm_cpu_default_config(shape);
    const SearchSpace here = gemm_space(shape, device);
    const SearchSpace h200 = gemm_space(shape, testing::described_h200());
    EXPECT_FALSE(has_variant(h200, "cpu")) << math_name(math);
    EXPECT_NE(h200.check(cpu_default), "") << math_name(math);
    for (const Config& c : GemmProblem(shape).default_configs(testing::described_h200())) {
      EXPECT_FALSE(is_cpu_config(c));
    }
    if (device.type != DeviceType::kCpu) continue;
    EXPECT_TRUE(has_variant(here, "cpu")) << math_name(math);
    EXPECT_EQ(here.check(cpu_default), "") << math_name(math);
    const std::vector<Config> defaults = GemmProblem(shape).default_configs(device);
    EXPECT_TRUE(std::find(defaults.begin(), defaults.end(), cpu_default) != defaults.end()) << math_name(math);
  }
}

TEST(GemmCpuSpace, DefaultShrinksIntoTheSpaceOfSmallShapes) {
  DeviceInfo cpu = testing::test_session().device();
  cpu.type = DeviceType::kCpu;  // the rule under test, whatever device runs the suite
  for (const GemmShape& shape : {GemmShape{.m = 1, .n = 1, .k = 1}, GemmShape{.m = 3, .n = 17, .k = 5},
                                 GemmShape{.m = 37, .n = 53, .k = 29}, GemmShape{.m = 8, .n = 1000, .k = 512}}) {
    EXPECT_EQ(gemm_space(shape, cpu).check(gemm_cpu_default_config(shape)), "") << shape.key();
  }
}

// The built-in GEMM configuration (the runtime's last level, `eval --config default`, the benchmark's
// `default`) is the cpu variant's default on a CPU and gemm.cl's elsewhere, or where the cpu default
// does not fit the device; default_configs lists it first and gemm.cl's default always.
TEST(GemmCpuDefault, IsTheBuiltinOnACpuAndGemmClsElsewhere) {
  DeviceInfo cpu = testing::test_session().device();
  cpu.type = DeviceType::kCpu;  // the rule under test, whatever device runs the suite
  DeviceInfo small_local = cpu;
  small_local.local_mem_bytes = 32 * 1024;  // below the cpu default's packed panels at 1024^3
  const DeviceInfo h200 = testing::described_h200();
  std::vector<GemmShape> shapes = {{.m = 1, .n = 1, .k = 1},
                                   {.m = 1, .n = 4096, .k = 1},
                                   {.m = 4096, .n = 1, .k = 3},
                                   {.m = 3, .n = 17, .k = 5, .trans_a = true},
                                   {.m = 1024, .n = 1024, .k = 1024, .math = MathMode::kTf32}};
  for (const char* preset : {"default", "quick", "test"}) {
    for (const auto& p : gemm_family().preset(preset)) shapes.push_back(GemmShape::from_json(p->shape_json()));
  }
  for (const GemmShape& shape : shapes) {
    const GemmProblem problem(shape);
    const Config on_cpu = problem.default_config(cpu);
    EXPECT_EQ(on_cpu, gemm_cpu_default_config(shape)) << shape.key() << ": " << to_string(on_cpu);
    EXPECT_EQ(problem.space(cpu).check(on_cpu), "") << shape.key();
    const std::vector<Config> cpu_defaults = problem.default_configs(cpu);
    ASSERT_EQ(cpu_defaults.size(), 2u) << shape.key();
    EXPECT_EQ(cpu_defaults[0], on_cpu);
    EXPECT_EQ(cpu_defaults[1], gemm_default_config(shape));

    // On the H200: gemm.cl's, or where tensor cores are allowed (tf32 mode, 16-bit storage) the
    // packed wgmma kernel's (128 x 128 tiles where they fit, else 64 x 64).
    const Config on_h200 = problem.default_config(h200);
    if (shape.tensor_cores_allowed()) {
      EXPECT_TRUE(is_wgmma_packed_config(on_h200)) << shape.key() << ": " << to_string(on_h200);
      EXPECT_EQ(on_h200.at("BM"), shape.m > 64 && shape.n > 64 ? 128 : 64) << shape.key();
    } else {
      // gemm.cl: one of its GPU tiles where one fills the H200 (GemmGpuDefault below), else the small
      // one; either split over K where it leaves the H200 short of work-groups (GemmSplitK).
      Config tile = on_h200;
      tile.erase("KSPLIT");
      const bool gpu_tile = std::find(gemm_gpu_tiles().begin(), gemm_gpu_tiles().end(), tile) != gemm_gpu_tiles().end();
      EXPECT_TRUE(gpu_tile || tile == gemm_default_config(shape)) << shape.key() << ": " << to_string(on_h200);
      EXPECT_TRUE(problem.space(h200).contains(on_h200)) << shape.key();
    }
    EXPECT_EQ(problem.default_configs(h200).front(), on_h200) << shape.key();
  }
  const GemmProblem big({.m = 1024, .n = 1024, .k = 1024});
  ASSERT_NE(big.space(small_local).check(gemm_cpu_default_config(big.shape())), "");
  EXPECT_EQ(big.default_config(small_local), gemm_default_config(big.shape()));
  EXPECT_EQ(big.default_configs(small_local), std::vector<Config>{gemm_default_config(big.shape())});
}

// fp32 on a GPU: the largest GPU tile that still gives each of the H200's 132 SMs a work-group,
// inside the shape's space; small products keep the 32x32 tile every device runs.
TEST(GemmGpuDefault, BigTilesWhereTheyFillTheDevice) {
  const DeviceInfo h200 = testing::described_h200();
  ASSERT_EQ(h200.compute_units, 132u);
  const auto tile = [&](const GemmShape& shape) {
    const GemmProblem problem(shape);
    const Config c = problem.default_config(h200);
    EXPECT_TRUE(problem.space(h200).contains(c)) << shape.key() << ": " << problem.space(h200).check(c);
    return std::pair{c.at("MWG"), c.at("NWG")};
  };
  using Tile = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(tile({.m = 4096, .n = 4096, .k = 4096}), Tile(256, 128));         // 512 work-groups
  EXPECT_EQ(tile({.m = 4096, .n = 768, .k = 3072}), Tile(128, 128));          // 256x128 would give 96
  EXPECT_EQ(tile({.m = 1024, .n = 1024, .k = 1024}), Tile(64, 64));           // 64x128 would give 128
  EXPECT_EQ(tile({.m = 512, .n = 64, .k = 512, .batch = 96}), Tile(64, 64));  // N = 64 bounds the tile
  EXPECT_EQ(tile({.m = 64, .n = 64, .k = 64}), Tile(32, 32));                 // one 64x64 tile: nothing fills
  EXPECT_EQ(tile({.m = 8, .n = 4096, .k = 64}), Tile(16, 32));                // M <= 16
  // A CPU keeps its own kernel, a GPU with fewer compute units takes larger tiles sooner.
  DeviceInfo small_gpu = h200;
  small_gpu.compute_units = 16;
  EXPECT_EQ(GemmProblem({.m = 1024, .n = 1024, .k = 1024}).default_config(small_gpu).at("MWG"), 256);
}

// A database holding a CPU configuration for the CPU running this suite and for an H200: `db verify`
// (and so `db merge` / `db import`) accepts the first row and refuses the second.
TEST(GemmCpuRows, ValidForACpuDeviceAndRefusedForAGpu) {
  const DeviceInfo& device = testing::test_session().device();
  if (device.type != DeviceType::kCpu) GTEST_SKIP() << "needs a CPU device";
  const GemmShape shape{.m = 256, .n = 256, .k = 256};
  const Config config = gemm_cpu_default_config(shape);
  const DeviceInfo h200 = testing::described_h200();
  const std::string path = testing::write_database(
      testing::temp_path("gemm-cpu-rows.db"), {device, h200},
      {testing::gemm_row(device.key(), shape, config), testing::gemm_row(h200.key(), shape, config)});
  const DatabaseReport report = verify_database(path);
  ASSERT_EQ(report.problems.size(), 1u) << ::testing::PrintToString(report.problems);
  EXPECT_NE(report.problems[0].find(h200.key()), std::string::npos) << report.problems[0];
  EXPECT_NE(report.problems[0].find("outside the gemm space"), std::string::npos) << report.problems[0];
  // On the device itself (capabilities known) the row is valid too.
  EXPECT_EQ(row_problem(testing::gemm_row(device.key(), shape, config), device), "");
}

// ops::gemm serves a CPU row of this device through kernels/gemm_cpu.cl (a strided batch with
// offsets, padded leading dimensions and beta, checked on the host).
TEST(GemmCpuRows, TheRuntimeDispatchesAnExactCpuRow) {
  Session& session = testing::test_session();
  if (session.device().type != DeviceType::kCpu) GTEST_SKIP() << "needs a CPU device";
  const GemmShape shape{.m = 37, .n = 53, .k = 29, .batch = 2, .trans_b = true, .alpha = 0.5f, .beta = -2.0f};
  const Config config = gemm_cpu_default_config(shape);
  const std::string user = testing::write_database(testing::temp_path("gemm-cpu-exact.db"), {session.device()},
                                                   {testing::gemm_row(session.device().key(), shape, config)});
  Runtime rt(session.context(), session.device().device,
             testing::isolated(user, "", std::make_shared<testing::LogSink>()));
  testing::HostGemm g(session.context(), shape,
                      {.lda_pad = 2, .ldc_pad = 3, .a_offset = 1, .c_offset = 4, .stride_pad = 5});
  const Dispatch d = ops::gemm(rt, session.queue()(), g.call());
  EXPECT_EQ(d.level, Level::kExact);
  EXPECT_EQ(ops::gemm_decision(rt, g.call()).config, config);
  EXPECT_EQ(g.check(session.queue()), "");
}

// Configurations of the cpu variant that together use every reachable value of its parameters.
const std::vector<Config>& cpu_sample() {
  static const std::vector<Config> configs = [] {
    const GemmShape big{.m = 256, .n = 256, .k = 1024};
    std::vector<Config> sample;
    for (const Config& c :
         covering_sample(gemm_space(big, testing::test_session().device()), 11, gemm_cpu_default_config(big))) {
      if (is_cpu_config(c)) sample.push_back(c);
    }
    return sample;
  }();
  return configs;
}

TEST(GemmCpuSpace, CoveringSampleUsesEveryValueOfTheVariant) {
  if (testing::test_session().device().type != DeviceType::kCpu) GTEST_SKIP() << "needs a CPU device";
  const SearchSpace space = gemm_space({.m = 256, .n = 256, .k = 1024}, testing::test_session().device());
  for (const SearchSpace::Variant& v : space.variants()) {
    if (v.name != "cpu") continue;
    for (const Parameter& p : v.parameters) {
      for (std::int64_t value : p.values) {
        const bool used = std::any_of(cpu_sample().begin(), cpu_sample().end(),
                                      [&](const Config& c) { return c.at(p.name) == value; });
        EXPECT_TRUE(used) << p.name << "=" << value;
      }
    }
  }
}

// Odd sizes (M, N, K not multiples of any tile, K above every K block), every layout; strided
// batches with offsets, padded leading dimensions and beta != 0.
std::vector<GemmTestCase> cpu_cases(bool trans_a, bool trans_b) {
  std::vector<GemmTestCase> cases;
  for (const auto& s : {std::array<std::int64_t, 3>{37, 53, 29}, {1, 17, 5}, {13, 1, 1}, {21, 70, 601}}) {
    cases.push_back({{.m = s[0], .n = s[1], .k = s[2], .trans_a = trans_a, .trans_b = trans_b}, {}});
  }
  cases.push_back(
      {{.m = 37, .n = 53, .k = 29, .batch = 2, .trans_a = trans_a, .trans_b = trans_b, .alpha = -1.5f, .beta = 0.5f},
       {.lda_pad = 3, .ldb_pad = 5, .ldc_pad = 7, .a_offset = 1, .b_offset = 3, .c_offset = 5, .stride_pad = 9}});
  cases.push_back(
      {{.m = 19, .n = 40, .k = 300, .batch = 2, .trans_a = trans_a, .trans_b = trans_b, .alpha = 2.0f, .beta = 1.0f},
       {.ldc_pad = 1, .c_offset = 2, .stride_pad = 1}});
  return cases;
}

// The whole covering sample on NN; on the other layouts the default and two of the sample, rotating
// with the layout (each configuration and layout is a program build: PoCL's code generation is
// most of this suite's time).
class GemmCpuCorrectness : public ::testing::TestWithParam<int> {};

TEST_P(GemmCpuCorrectness, SampledConfigurationsMatchTheReference) {
  Session& session = testing::test_session();
  if (session.device().type != DeviceType::kCpu) GTEST_SKIP() << "needs a CPU device";
  const int layout = GetParam();
  const std::vector<Config>& sample = cpu_sample();
  ASSERT_GE(sample.size(), 4u);
  std::vector<Config> configs;
  if (layout == 0) {
    configs = sample;
  } else {
    configs = {sample[0], sample[1 + (2 * layout - 1) % (sample.size() - 1)],
               sample[1 + (2 * layout) % (sample.size() - 1)]};
  }
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  for (const GemmTestCase& c : cpu_cases((layout & 1) != 0, (layout & 2) != 0)) {
    const GemmProblem problem(c.shape, c.layout);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    for (const Config& config : configs) {
      const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
      EXPECT_EQ(outcome.status, Status::kOk)
          << problem.shape_key() << " " << to_string(config) << ": " << outcome.error;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layout, GemmCpuCorrectness, ::testing::Values(0, 1, 2, 3),
                         [](const ::testing::TestParamInfo<int>& layout) {
                           return std::string(layout.param & 1 ? "T" : "N") + (layout.param & 2 ? "T" : "N");
                         });

}  // namespace
}  // namespace ocltune
