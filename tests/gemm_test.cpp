// GEMM correctness: the odd-size table x a covering sample of the tuning space, against float64.
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/capability.h"
#include "ops/gemm/gemm_problem.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"

namespace ocltune {
namespace {

// Configurations of gemm.cl that together use every value of every one of its parameters at least
// once, and the GPU default tiles (the CPU variant's configurations have their own suite, tests/gemm_cpu_test.cpp).
const std::vector<Config>& sample_configs() {
  static const std::vector<Config> configs = [] {
    const GemmShape big{.m = 256, .n = 256, .k = 256};
    std::vector<Config> fma;
    for (const Config& c :
         covering_sample(gemm_space(big, testing::test_session().device()), 7, gemm_default_config())) {
      if (!is_cpu_config(c)) fma.push_back(c);
    }
    // The GPU defaults (gemm_gpu_tiles) too: the runtime launches them untuned on every GPU.
    fma.insert(fma.end(), gemm_gpu_tiles().begin(), gemm_gpu_tiles().end());
    // Split K (the fma_ksplit variant, a GPU's, run here too): the small tile in 16 parts (the
    // table's short Ks leave most of them empty, which must write zeros) and a GPU tile in 2.
    for (auto [split, parts] : {std::pair{gemm_default_config(), 16}, std::pair{gemm_gpu_tiles()[3], 2}}) {
      split["KSPLIT"] = parts;
      fma.push_back(split);
    }
    return fma;
  }();
  return configs;
}

// One test per layout (NN, TN, NT, TT) over every table case of that layout: each test process
// enumerates the space for the covering sample once, and builds each configuration's program once.
class GemmCorrectness : public ::testing::TestWithParam<int> {};

TEST_P(GemmCorrectness, EverySampledConfigurationMatchesTheReference) {
  const bool trans_a = (GetParam() & 1) != 0, trans_b = (GetParam() & 2) != 0;
  Session& session = testing::test_session();
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  int cases = 0;
  for (const GemmTestCase& c : gemm_test_cases()) {
    if (c.shape.trans_a != trans_a || c.shape.trans_b != trans_b) continue;
    ++cases;
    const GemmProblem problem(c.shape, c.layout);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    for (const Config& config : sample_configs()) {
      const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
      EXPECT_EQ(outcome.status, Status::kOk)
          << problem.shape_key() << " " << to_string(config) << ": " << outcome.error;
    }
  }
  EXPECT_GE(cases, 10);
}

INSTANTIATE_TEST_SUITE_P(Layout, GemmCorrectness, ::testing::Values(0, 1, 2, 3),
                         [](const ::testing::TestParamInfo<int>& layout) {
                           return std::string(layout.param & 1 ? "T" : "N") + (layout.param & 2 ? "T" : "N");
                         });

TEST(GemmSpace, HoldsThousandsOfConfigurationsBeforeConstraints) {
  const SearchSpace space = gemm_space({.m = 1024, .n = 1024, .k = 1024}, testing::test_session().device());
  EXPECT_GT(space.raw_size(), 1000);
  EXPECT_GT(space.enumerate().size(), 100u);
  EXPECT_TRUE(space.contains(gemm_default_config())) << space.check(gemm_default_config());
}

TEST(GemmSpace, CoveringSampleUsesEveryValue) {
  const SearchSpace space = gemm_space({.m = 256, .n = 256, .k = 256}, testing::test_session().device());
  std::vector<Config> all;
  for (const Config& c : space.enumerate()) {
    if (!is_cpu_config(c)) all.push_back(c);
  }
  for (const Parameter& p : space.parameters()) {
    for (std::int64_t v : p.values) {
      bool used = false;
      for (const Config& c : sample_configs()) used = used || c.at(p.name) == v;
      bool reachable = false;
      for (const Config& c : all) reachable = reachable || c.at(p.name) == v;
      EXPECT_EQ(used, reachable) << p.name << "=" << v;
    }
  }
}

TEST(GemmVerification, DetectsAWrongKernel) {
  // The same kernel with K understated by one: a single missing term per output must fail.
  Session& session = testing::test_session();
  const GemmShape shape{.m = 33, .n = 29, .k = 300};
  auto evaluation = GemmProblem(shape).instantiate(session);
  LaunchPlan plan = evaluation->plan(gemm_default_config());
  std::get<cl_int>(plan.kernels[0].args[2]) = static_cast<cl_int>(shape.k - 1);
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  const VerifyResult result = evaluation->verify();
  EXPECT_FALSE(result.ok);
}

TEST(GemmVerification, DetectsWritesOutsideTheOutput) {
  // Claiming N+1 columns writes one element past each row: the canary and gap checks must fail.
  Session& session = testing::test_session();
  const GemmShape shape{.m = 8, .n = 8, .k = 8};
  auto evaluation = GemmProblem(shape).instantiate(session);
  LaunchPlan plan = evaluation->plan(gemm_default_config());
  std::get<cl_int>(plan.kernels[0].args[1]) = 9;
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
}

}  // namespace
}  // namespace ocltune

namespace ocltune {
namespace {

// Split K on a described H200 (132 compute units): offered and chosen by default where the tiles
// leave the device short of work-items (the encoder's 768 x 768 weight gradient over 4096 tokens,
// ResNet's first-layer weight gradient per image), neither offered nor chosen where they fill it.
TEST(GemmSplitK, OfferedAndChosenWhereTheTilesLeaveTheDeviceShortOfWork) {
  const DeviceInfo h200 = testing::described_h200();
  const GemmShape wgrad{.m = 768, .n = 768, .k = 4096, .trans_a = true};
  const Config chosen = GemmProblem(wgrad).default_config(h200);
  ASSERT_TRUE(is_ksplit_config(chosen)) << to_string(chosen);
  EXPECT_TRUE(gemm_space(wgrad, h200).contains(chosen)) << gemm_space(wgrad, h200).check(chosen);
  // 64x64 tiles: 144 work-groups, 4 resident per SM (256 work-items of 56 registers): a wave is 528,
  // half a wave 264, so 2 parts.
  EXPECT_EQ(chosen.at("MWG"), 64);
  EXPECT_EQ(gemm_resident_groups(chosen), 4);
  EXPECT_EQ(chosen.at("KSPLIT"), 2);
  // 32x64 tiles of 64 work-items: 192 work-groups, 13 resident per SM: 8 parts.
  const GemmShape first_layer{.m = 64, .n = 147, .k = 12544, .batch = 32, .trans_b = true};
  EXPECT_EQ(GemmProblem(first_layer).default_config(h200).at("KSPLIT"), 8);

  // Untuned, a short K is not split, though the space offers it (the partials would cost more).
  const GemmShape short_k_wgrad{.m = 576, .n = 96, .k = 196, .batch = 32, .trans_b = true};
  EXPECT_FALSE(is_ksplit_config(GemmProblem(short_k_wgrad).default_config(h200)));
  const GemmShape square{.m = 4096, .n = 4096, .k = 4096};
  EXPECT_FALSE(is_ksplit_config(GemmProblem(square).default_config(h200)));
  Config big_split = gemm_gpu_tiles().front();
  big_split["KSPLIT"] = 2;
  EXPECT_FALSE(gemm_space(square, h200).contains(big_split)) << "a 256x128 tile fills the device unsplit";
  // A K too short for two tiles per part, and CPUs: no split at all.
  Config short_k = gemm_default_config();
  short_k["KSPLIT"] = 2;
  EXPECT_FALSE(gemm_space({.m = 64, .n = 64, .k = 48}, h200).contains(short_k));
  EXPECT_TRUE(gemm_space({.m = 64, .n = 64, .k = 64}, h200).contains(short_k));
  DeviceInfo cpu = h200;
  cpu.type = DeviceType::kCpu;
  cpu.vendor = "GenuineIntel";
  EXPECT_FALSE(gemm_space({.m = 64, .n = 64, .k = 4096}, cpu).contains(short_k));
}

// The split plan: two kernels (the parts, then their sum with beta * C), and its result is the
// unsplit one's on a problem with a non-zero beta, strided batches and offsets.
TEST(GemmSplitK, PlanSumsThePartsWithBeta) {
  Session& session = testing::test_session();
  const GemmShape shape{.m = 37, .n = 45, .k = 1000, .batch = 3, .trans_b = true, .alpha = 0.5f, .beta = -2.0f};
  const GemmProblem problem(shape, {.ldc_pad = 3, .c_offset = 5, .stride_pad = 7});
  auto evaluation = problem.instantiate(session);
  Config split = gemm_default_config();
  split["KSPLIT"] = 8;
  EXPECT_EQ(evaluation->plan(split).kernels.size(), 2u);
  Evaluator evaluator(session, *evaluation);
  const EvalOutcome outcome = evaluator.evaluate(split, {.warmup = 0, .min_runs = 1, .max_runs = 1});
  EXPECT_EQ(outcome.status, Status::kOk) << outcome.error;
  // The sum leaving out the last part must fail verification.
  LaunchPlan plan = evaluation->plan(split);
  std::get<cl_int>(plan.kernels[1].args[2]) = 7;
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
}

// TF32 mode: the tensor-core variant exists only on NVIDIA devices of compute capability >= 8.0;
// elsewhere (PoCL in CI) the space is exactly the exact-mode space and results stay exact.
TEST(GemmTf32, TensorCoreVariantIsAbsentWithoutTheCapability) {
  const DeviceInfo& device = testing::test_session().device();
  GemmShape shape{.m = 256, .n = 256, .k = 256};
  const SearchSpace exact = gemm_space(shape, device);
  shape.math = MathMode::kTf32;
  const SearchSpace tf32 = gemm_space(shape, device);
  if (satisfies(device, nvidia_mma_tf32())) {
    // gemm.cl split over K (fma_ksplit) is a GPU variant too.
    EXPECT_EQ(tf32.variants().size(), (satisfies(device, nvidia_wgmma_tf32()) ? 5u : 3u) + 1u);
    EXPECT_TRUE(tf32.contains(gemm_mma_packed_default_config())) << tf32.check(gemm_mma_packed_default_config());
    EXPECT_TRUE(tf32.contains(gemm_mma_default_config())) << tf32.check(gemm_mma_default_config());
  } else {
    // gemm.cl's variant, and on CPUs the cpu variant (tests/gemm_cpu_test.cpp).
    const std::size_t cpu = satisfies(device, cpu_device()) ? 1 : 0;
    EXPECT_EQ(tf32.variants().size(), 1u + cpu);
    EXPECT_EQ(tf32.enumerate().size(), exact.enumerate().size());
    EXPECT_FALSE(tf32.contains(gemm_mma_default_config()));
    EXPECT_EQ(GemmProblem(shape).default_configs(device).size(), 1u + cpu);
  }
  EXPECT_FALSE(exact.contains(gemm_mma_default_config()));
  EXPECT_FALSE(exact.contains(gemm_wgmma_default_config()));
  EXPECT_FALSE(exact.contains(gemm_wgmma_packed_default_config()));
  EXPECT_FALSE(exact.contains(gemm_mma_packed_default_config()));
}

// The capability rule on described devices: an H200 as OpenCL reports it, the same GPU with the
// capability unknown (a database row: the vendor decides, the runtime checks again on the device),
// an older NVIDIA GPU, and a CPU whose row cannot claim NVIDIA's variants.
TEST(GemmTf32, CapabilityRuleOnDescribedDevices) {
  DeviceInfo h200;
  h200.vendor = "NVIDIA Corporation";
  h200.type = DeviceType::kGpu;
  h200.nv_compute_capability = 90;
  EXPECT_TRUE(satisfies(h200, nvidia_mma_tf32()));
  DeviceInfo turing = h200;
  turing.nv_compute_capability = 75;
  EXPECT_FALSE(satisfies(turing, nvidia_mma_tf32()));
  DeviceInfo from_row = h200;
  from_row.nv_compute_capability = 0;
  from_row.capabilities_known = false;
  EXPECT_TRUE(satisfies(from_row, nvidia_mma_tf32()));
  DeviceInfo cpu_row = from_row;
  cpu_row.vendor = "AuthenticAMD";
  cpu_row.type = DeviceType::kCpu;
  EXPECT_FALSE(satisfies(cpu_row, nvidia_mma_tf32()));
  // wgmma is sm_90a's alone: not on Ampere, nor on a newer generation.
  EXPECT_TRUE(satisfies(h200, nvidia_wgmma_tf32()));
  EXPECT_FALSE(satisfies(turing, nvidia_wgmma_tf32()));
  DeviceInfo ampere = h200, blackwell = h200;
  ampere.nv_compute_capability = 80;
  blackwell.nv_compute_capability = 100;
  EXPECT_TRUE(satisfies(ampere, nvidia_mma_tf32()));
  EXPECT_FALSE(satisfies(ampere, nvidia_wgmma_tf32()));
  EXPECT_TRUE(satisfies(blackwell, nvidia_mma_tf32()));
  EXPECT_FALSE(satisfies(blackwell, nvidia_wgmma_tf32()));
  EXPECT_TRUE(satisfies(from_row, nvidia_wgmma_tf32()));
  EXPECT_FALSE(satisfies(cpu_row, nvidia_wgmma_tf32()));
  EXPECT_FALSE(gemm_space({.m = 256, .n = 256, .k = 256, .math = MathMode::kTf32}, ampere)
                   .contains(gemm_wgmma_default_config()));
  EXPECT_TRUE(gemm_space({.m = 256, .n = 256, .k = 256, .math = MathMode::kTf32}, testing::described_h200())
                  .contains(gemm_wgmma_default_config()));
  EXPECT_FALSE(gemm_space({.m = 256, .n = 256, .k = 256, .math = MathMode::kTf32}, ampere)
                   .contains(gemm_wgmma_packed_default_config()));
  EXPECT_TRUE(gemm_space({.m = 256, .n = 256, .k = 256, .math = MathMode::kTf32}, testing::described_h200())
                  .contains(gemm_wgmma_packed_default_config()));
}

// Every wgmma configuration of a described H200 fits its local buffers (two, or STAGES on packed
// operands) in 48 KiB and gives each work-item whole 16-byte chunks and at most 128 accumulators;
// every layout has some of both variants.
TEST(GemmTf32, WgmmaSpaceFitsTheDevice) {
  const DeviceInfo h200 = testing::described_h200();
  ASSERT_TRUE(satisfies(h200, nvidia_wgmma_tf32()));
  for (const bool trans_a : {false, true}) {
    for (const bool trans_b : {false, true}) {
      const GemmShape shape{
          .m = 4096, .n = 4096, .k = 4096, .trans_a = trans_a, .trans_b = trans_b, .math = MathMode::kTf32};
      int count = 0, packed = 0;
      for (const Config& c : gemm_space(shape, h200).enumerate()) {
        if (!is_wgmma_config(c) && !is_wgmma_packed_config(c)) continue;
        ++(is_wgmma_config(c) ? count : packed);
        const std::int64_t bm = c.at("BM"), bn = c.at("BN"), bk = c.at("BK"), threads = 128 * c.at("WGS");
        const std::int64_t buffers = is_wgmma_config(c) ? 2 : c.at("STAGES");
        EXPECT_LE(buffers * (bm + bn) * bk * 4, 48 * 1024) << to_string(c);
        if (is_wgmma_packed_config(c)) {
          const std::int64_t ahead = c.at("STAGES") - 1 - c.at("LAG");
          EXPECT_TRUE(ahead >= 1 && ahead <= 3) << to_string(c);
          EXPECT_EQ(32 % bk, 0) << to_string(c);  // BK divides the packed K
        }
        EXPECT_EQ(bm % (64 * c.at("WGS")), 0) << to_string(c);
        EXPECT_LE(bm / (64 * c.at("WGS")) * bn / 2, 128) << to_string(c);
        EXPECT_EQ((bm * bk / 4) % threads, 0) << to_string(c);
        EXPECT_EQ((bn * bk / 4) % threads, 0) << to_string(c);
      }
      EXPECT_GT(count, 4) << shape.key();
      EXPECT_GT(packed, 4) << shape.key();
    }
  }
}

// cp.async keeps a transposed operand's global layout in local memory, which ldmatrix (A) and the
// 16-byte B fragment reads cannot use: a misaligned read there faults and loses the context, so
// the space of each layout must exclude those combinations (checked on a described H200).
TEST(GemmTf32, SpaceExcludesFragmentReadsTheStagedLayoutCannotServe) {
  const DeviceInfo h200 = testing::described_h200();
  for (const bool trans_a : {false, true}) {
    for (const bool trans_b : {false, true}) {
      const GemmShape shape{
          .m = 256, .n = 256, .k = 256, .trans_a = trans_a, .trans_b = trans_b, .math = MathMode::kTf32};
      int async = 0;
      for (const Config& c : gemm_space(shape, h200).enumerate()) {
        if (!is_mma_config(c) || c.at("STAGES") < 2) continue;
        ++async;
        EXPECT_FALSE(trans_a && c.at("LDSM")) << shape.key() << " " << to_string(c);
        EXPECT_FALSE(trans_b && c.at("BVEC")) << shape.key() << " " << to_string(c);
      }
      EXPECT_GT(async, 0) << shape.key();
    }
  }
}

// Every tensor-core configuration of a covering sample of each layout's space on the odd-size
// table (NVIDIA only).
TEST(GemmTf32, TensorCoreConfigurationsMatchTheReference) {
  Session& session = testing::test_session();
  if (!satisfies(session.device(), nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  std::map<std::pair<bool, bool>, std::vector<Config>> samples;  // per (trans_a, trans_b)
  for (const bool trans_a : {false, true}) {
    for (const bool trans_b : {false, true}) {
      const GemmShape big{
          .m = 256, .n = 256, .k = 256, .trans_a = trans_a, .trans_b = trans_b, .math = MathMode::kTf32};
      std::vector<Config>& sample = samples[{trans_a, trans_b}];
      const SearchSpace space = gemm_space(big, session.device());
      for (const Config& c : covering_sample(space, 9, gemm_mma_default_config())) {
        if (is_mma_config(c)) sample.push_back(c);
      }
      for (const Config& c : space.enumerate()) {  // the wgmma variant (Hopper only) is small: all of it
        if (is_wgmma_config(c)) sample.push_back(c);
      }
      for (const Config& c : covering_sample(space, 9, gemm_wgmma_packed_default_config())) {
        if (is_wgmma_packed_config(c) || is_mma_packed_config(c)) sample.push_back(c);
      }
      ASSERT_FALSE(sample.empty());
    }
  }
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  for (GemmTestCase c : gemm_test_cases()) {
    c.shape.math = MathMode::kTf32;
    const GemmProblem problem(c.shape, c.layout);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    for (const Config& config : samples.at({c.shape.trans_a, c.shape.trans_b})) {
      const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
      EXPECT_EQ(outcome.status, Status::kOk)
          << problem.shape_key() << " " << to_string(config) << ": " << outcome.error;
    }
  }
}

}  // namespace
}  // namespace ocltune
