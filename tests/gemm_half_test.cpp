// GEMM on fp16 and bf16 storage: the fp32 variants through widened copies (every device), the
// packed wgmma variant reading 16-bit operands itself (Hopper), which variants each device offers,
// and that verification of 16-bit results can fail.
#include <cmath>
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "harness/capability.h"
#include "ops/gemm/gemm_problem.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"

namespace ocltune {
namespace {

const TimingPolicy kNoTiming{.warmup = 0, .min_runs = 1, .max_runs = 1};

// The odd-size table (sizes of 1, primes, all four layouts, scalars, padding, offsets, batches)
// in a 16-bit type, and cases whose results leave fp16's range (saturating to infinity).
std::vector<GemmTestCase> half_cases(DType dtype) {
  std::vector<GemmTestCase> cases = gemm_test_cases();
  cases.push_back({{.m = 17, .n = 13, .k = 33, .alpha = 3.0e4f}, {}});
  cases.push_back({{.m = 9, .n = 70, .k = 300, .trans_b = true, .alpha = 600.0f, .beta = 2.0f}, {.ldc_pad = 2}});
  for (GemmTestCase& c : cases) c.shape.dtype = dtype;
  return cases;
}

void expect_all_ok(Session& session, const std::vector<GemmTestCase>& cases,
                   const std::function<std::vector<Config>(const GemmShape&)>& configs_of) {
  for (const GemmTestCase& c : cases) {
    const GemmProblem problem(c.shape, c.layout);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    for (const Config& config : configs_of(c.shape)) {
      const EvalOutcome outcome = evaluator.evaluate(config, kNoTiming);
      EXPECT_EQ(outcome.status, Status::kOk) << dtype_name(problem.dtype()) << " " << problem.shape_key() << " "
                                             << to_string(config) << ": " << outcome.error;
    }
  }
}

class GemmHalf : public ::testing::TestWithParam<DType> {};

// Every variant's default the device offers (gemm.cl's, the CPU one, the tensor-core ones) on
// every case: each through its plan for the dtype.
TEST_P(GemmHalf, EveryDefaultConfigurationMatchesTheReference) {
  Session& session = testing::test_session();
  expect_all_ok(session, half_cases(GetParam()),
                [&](const GemmShape& shape) { return GemmProblem(shape).default_configs(session.device()); });
}

// Without any tensor-core variant on the device, the 16-bit space is exactly the fp32 one (the
// same kernels through widened copies); on a described H200 both tensor-core families join in
// either math mode, since 16-bit values are exact in TF32; on Ampere only mma.sync.
TEST_P(GemmHalf, TensorCoreVariantsFollowTheDevice) {
  const DeviceInfo& device = testing::test_session().device();
  GemmShape shape{.m = 256, .n = 256, .k = 256, .dtype = GetParam()};
  if (!satisfies(device, nvidia_mma_tf32())) {
    EXPECT_EQ(gemm_space(shape, device).enumerate().size(),
              gemm_space({.m = 256, .n = 256, .k = 256}, device).enumerate().size());
  }
  for (const MathMode math : {MathMode::kExact, MathMode::kTf32}) {
    shape.math = math;
    const SearchSpace h200 = gemm_space(shape, testing::described_h200());
    EXPECT_TRUE(h200.contains(gemm_wgmma_packed_default_config())) << math_name(math);
    EXPECT_TRUE(h200.contains(gemm_mma_default_config())) << math_name(math);
    EXPECT_TRUE(h200.contains(gemm_mma_packed_default_config())) << math_name(math);
    DeviceInfo ampere = testing::described_h200();
    ampere.nv_compute_capability = 80;
    const SearchSpace a100 = gemm_space(shape, ampere);
    EXPECT_TRUE(a100.contains(gemm_mma_default_config())) << math_name(math);
    EXPECT_TRUE(a100.contains(gemm_mma_packed_default_config())) << math_name(math);
    EXPECT_FALSE(a100.contains(gemm_wgmma_packed_default_config())) << math_name(math);
    // The built-in configuration is the fastest untuned kernel there, where its tile fits.
    EXPECT_EQ(GemmProblem(shape).default_config(testing::described_h200()), gemm_wgmma_packed_default_config());
    EXPECT_EQ(GemmProblem(shape).default_config(ampere), gemm_mma_packed_default_config());
    GemmShape small = shape;  // 64 x 64 tiles of the same kernels
    small.m = 33;
    const Config small_h200 = GemmProblem(small).default_config(testing::described_h200());
    EXPECT_TRUE(is_wgmma_packed_config(small_h200) && small_h200.at("BM") == 64) << to_string(small_h200);
    const Config small_ampere = GemmProblem(small).default_config(ampere);
    EXPECT_TRUE(is_mma_packed_config(small_ampere) && small_ampere.at("BM") == 64) << to_string(small_ampere);
    DeviceInfo turing = ampere;  // no tensor-core variant: gemm.cl's
    turing.nv_compute_capability = 75;
    EXPECT_EQ(GemmProblem(small).default_config(turing), gemm_default_config(small));
  }
}

// The plans: fp32 kernels between widening and narrowing passes (C widened only when read); the
// packed variant packs the 16-bit operands itself, K in words of two elements.
TEST_P(GemmHalf, PlansConvertOnlyWhatTheyRead) {
  Session& session = testing::test_session();
  GemmShape shape{.m = 100, .n = 70, .k = 50, .batch = 2, .dtype = GetParam()};
  cl::Buffer a(session.context(), CL_MEM_READ_WRITE, 2 * 100 * 70 * 2);
  cl::Buffer b(session.context(), CL_MEM_READ_WRITE, 2 * 100 * 70 * 2);
  cl::Buffer c(session.context(), CL_MEM_READ_WRITE, 2 * 100 * 70 * 2);
  Workspace workspace(session.context());
  const GemmOperands o = packed_operands(shape, a, b, c);
  LaunchPlan plan = gemm_plan(shape, o, gemm_default_config(), workspace);
  ASSERT_EQ(plan.kernels.size(), 4u);
  EXPECT_EQ(plan.kernels[0].kernel, "widen_matrix");
  EXPECT_EQ(plan.kernels[1].kernel, "widen_matrix");
  EXPECT_EQ(plan.kernels[2].kernel, "gemm");
  EXPECT_EQ(plan.kernels[3].kernel, "narrow_matrix");
  shape.beta = 1.0f;
  plan = gemm_plan(shape, o, gemm_default_config(), workspace);
  ASSERT_EQ(plan.kernels.size(), 5u);
  EXPECT_EQ(plan.kernels[2].kernel, "widen_matrix");

  for (const Config& packed : {gemm_wgmma_packed_default_config(), gemm_mma_packed_default_config()}) {
    plan = gemm_plan(shape, o, packed, workspace);
    ASSERT_EQ(plan.kernels.size(), 3u);
    EXPECT_EQ(plan.kernels[0].kernel, "pack_16bit");
    EXPECT_EQ(plan.kernels[0].global[0], 128u / 2);  // K padded to 128 elements: two 64 x 64 blocks
    EXPECT_EQ(plan.kernels[2].kernel, is_mma_packed_config(packed) ? "gemm_mma_packed" : "gemm_wgmma_packed");
    EXPECT_EQ(std::get<cl_int>(plan.kernels[2].args[2]), 64);  // the GEMM's K: 64 words
  }
  plan = gemm_plan(shape, o, gemm_mma_packed_default_config(), workspace);
  EXPECT_EQ(plan.kernels[2].global[0], 128u);  // one 128-wide tile of 2 x 2 warps
  EXPECT_EQ(plan.kernels[2].local[0], 128u);
}

// A GEMM that never narrows its last row leaves NaN there (C starts as NaN where beta is 0).
TEST_P(GemmHalf, VerificationDetectsAnUnwrittenRow) {
  Session& session = testing::test_session();
  const GemmShape shape{.m = 9, .n = 7, .k = 5, .dtype = GetParam()};
  auto evaluation = GemmProblem(shape).instantiate(session);
  LaunchPlan plan = evaluation->plan(gemm_default_config());
  ASSERT_EQ(plan.kernels.back().kernel, "narrow_matrix");
  std::get<cl_int>(plan.kernels.back().args[0]) = static_cast<cl_int>(shape.m - 1);
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
}

// A covering sample of the variants on packed 16-bit operands (mma.sync from compute capability
// 8.0, wgmma on Hopper), every layout.
TEST_P(GemmHalf, PackedTensorCoreConfigurationsMatchTheReference) {
  Session& session = testing::test_session();
  if (!satisfies(session.device(), nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  std::map<std::pair<bool, bool>, std::vector<Config>> samples;  // per layout, as tiles larger than the shape run too
  expect_all_ok(session, half_cases(GetParam()), [&](const GemmShape& shape) {
    std::vector<Config>& sample = samples[{shape.trans_a, shape.trans_b}];
    if (sample.empty()) {
      GemmShape big = shape;
      big.m = big.n = big.k = 256;
      for (const Config& c : covering_sample(gemm_space(big, session.device()), 9, gemm_mma_packed_default_config())) {
        if (is_wgmma_packed_config(c) || is_mma_packed_config(c)) sample.push_back(c);
      }
    }
    return sample;
  });
}

INSTANTIATE_TEST_SUITE_P(Dtype, GemmHalf, ::testing::Values(DType::kFp16, DType::kBf16),
                         [](const ::testing::TestParamInfo<DType>& dtype) {
                           return std::string(dtype_name(dtype.param));
                         });

}  // namespace
}  // namespace ocltune
