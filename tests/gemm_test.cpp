// GEMM correctness: the odd-size table x a covering sample of the tuning space, against float64.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/capability.h"
#include "ops/families.h"
#include "ops/gemm_problem.h"
#include "tests/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"

namespace ocltune {
namespace {

// Configurations that together use every value of every GEMM parameter at least once.
const std::vector<Config>& sample_configs() {
  static const std::vector<Config> configs = [] {
    const GemmShape big{.m = 256, .n = 256, .k = 256};
    return covering_sample(gemm_space(big, testing::test_session().device()), 7, gemm_default_config());
  }();
  return configs;
}

class GemmCorrectness : public ::testing::TestWithParam<GemmTestCase> {};

}  // namespace

// Printed by GoogleTest in test names and failures instead of the raw bytes.
void PrintTo(const GemmTestCase& c, std::ostream* os) { *os << c.shape.key(); }

namespace {

TEST_P(GemmCorrectness, EverySampledConfigurationMatchesTheReference) {
  const GemmTestCase& c = GetParam();
  Session& session = testing::test_session();
  const GemmProblem problem(c.shape, c.layout);
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  for (const Config& config : sample_configs()) {
    const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
    EXPECT_EQ(outcome.status, "ok") << problem.shape_key() << " " << to_string(config) << ": " << outcome.error;
  }
}

std::string case_name(const ::testing::TestParamInfo<GemmTestCase>& info) {
  const GemmShape& s = info.param.shape;
  return fmt::format("{}_{}{}_m{}_n{}_k{}_b{}", info.index, s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n,
                     s.k, s.batch);
}

INSTANTIATE_TEST_SUITE_P(Table, GemmCorrectness, ::testing::ValuesIn(gemm_test_cases()), case_name);

TEST(GemmSpace, HoldsThousandsOfConfigurationsBeforeConstraints) {
  const SearchSpace space = gemm_space({.m = 1024, .n = 1024, .k = 1024}, testing::test_session().device());
  EXPECT_GT(space.raw_size(), 1000);
  EXPECT_GT(space.enumerate().size(), 100u);
  EXPECT_TRUE(space.contains(gemm_default_config())) << space.check(gemm_default_config());
}

TEST(GemmSpace, CoveringSampleUsesEveryValue) {
  const SearchSpace space = gemm_space({.m = 256, .n = 256, .k = 256}, testing::test_session().device());
  const std::vector<Config> all = space.enumerate();
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

// TF32 mode: the tensor-core variant exists only on NVIDIA devices of compute capability >= 8.0;
// elsewhere (PoCL in CI) the space is exactly the exact-mode space and results stay exact.
TEST(GemmTf32, TensorCoreVariantIsAbsentWithoutTheCapability) {
  const DeviceInfo& device = testing::test_session().device();
  GemmShape shape{.m = 256, .n = 256, .k = 256};
  const SearchSpace exact = gemm_space(shape, device);
  shape.math = "tf32";
  const SearchSpace tf32 = gemm_space(shape, device);
  if (satisfies(device, nvidia_mma_tf32())) {
    EXPECT_EQ(tf32.variants().size(), 2u);
    EXPECT_TRUE(tf32.contains(gemm_mma_default_config())) << tf32.check(gemm_mma_default_config());
  } else {
    EXPECT_EQ(tf32.variants().size(), 1u);
    EXPECT_EQ(tf32.enumerate().size(), exact.enumerate().size());
    EXPECT_FALSE(tf32.contains(gemm_mma_default_config()));
    EXPECT_EQ(GemmProblem(shape).default_configs(device).size(), 1u);
  }
  EXPECT_FALSE(exact.contains(gemm_mma_default_config()));
}

// Every tensor-core configuration of a covering sample on the odd-size table (NVIDIA only).
TEST(GemmTf32, TensorCoreConfigurationsMatchTheReference) {
  Session& session = testing::test_session();
  if (!satisfies(session.device(), nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  GemmShape big{.m = 256, .n = 256, .k = 256, .math = "tf32"};
  const SearchSpace space = gemm_space(big, session.device());
  std::vector<Config> sample;
  for (const Config& c : covering_sample(space, 9, gemm_mma_default_config())) {
    if (is_mma_config(c)) sample.push_back(c);
  }
  ASSERT_FALSE(sample.empty());
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  for (GemmTestCase c : gemm_test_cases()) {
    c.shape.math = "tf32";
    const GemmProblem problem(c.shape, c.layout);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    for (const Config& config : sample) {
      const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
      EXPECT_EQ(outcome.status, "ok") << problem.shape_key() << " " << to_string(config) << ": " << outcome.error;
    }
  }
}

}  // namespace
}  // namespace ocltune
