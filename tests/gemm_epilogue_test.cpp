// The GEMM family's epilogue, C = act(alpha * op(A) * op(B) + beta * C + bias): every variant that
// stores C applies it (gemm.cl, its split-K sum, the CPU kernel's last K block, the narrowing of a
// 16-bit GEMM's fp32 copy; the tensor-core kernels where the device has them), against float64;
// the JSON (the shape key leaves it out); and the plan's refusals.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "harness/capability.h"
#include "harness/error.h"
#include "ops/gemm/gemm_problem.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"

namespace ocltune {
namespace {

const TimingPolicy kNoTiming{.warmup = 0, .min_runs = 1, .max_runs = 1};
constexpr Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kRelu6, Activation::kGelu,
                                       Activation::kSigmoid};

// Odd sizes in the four layouts, a batch, scalars (beta reads C before the bias is added), padded
// leading dimensions and offsets: each with a bias (behind an offset, GemmLayout::bias_offset) or without.
std::vector<GemmTestCase> epilogue_cases() {
  std::vector<GemmTestCase> cases = {
      {{.m = 1, .n = 17, .k = 5}, {}},
      {{.m = 37, .n = 45, .k = 29, .trans_a = true}, {}},
      {{.m = 65, .n = 63, .k = 67, .trans_b = true}, {.bias_offset = 0}},
      {{.m = 19, .n = 23, .k = 31, .batch = 3, .trans_a = true, .trans_b = true},
       {.lda_pad = 4, .ldc_pad = 4, .a_offset = 4, .c_offset = 8, .stride_pad = 12, .bias_offset = 7}},
      {{.m = 33, .n = 17, .k = 9, .alpha = -1.5f, .beta = 0.5f}, {.ldc_pad = 3, .c_offset = 5}},
  };
  return cases;
}

struct Epilogue {
  bool bias;
  Activation act;
};
// A bias with the activation whose reference is the hardest (gelu's erf), and an activation alone.
const std::vector<Epilogue> kTwoEpilogues = {{true, Activation::kGelu}, {false, Activation::kRelu}};

// Runs every case under each of `epilogues` on `configs_of(shape)` (each configuration and epilogue
// is a program of its own: PoCL builds one in about half a second).
template <typename ConfigsOf>
void expect_every_epilogue_ok(DType dtype, MathMode math, const std::vector<Epilogue>& epilogues,
                              const ConfigsOf& configs_of, bool nn_only = false) {
  Session& session = testing::test_session();
  int runs = 0;
  for (const GemmTestCase& base : epilogue_cases()) {
    if (nn_only && (base.shape.trans_a || base.shape.trans_b)) continue;
    for (const auto& [bias, act] : epilogues) {
      {
        GemmShape shape = base.shape;
        shape.dtype = dtype;
        shape.math = math;
        shape.bias = bias;
        shape.act = act;
        const std::vector<Config> configs = configs_of(shape);
        if (configs.empty()) continue;
        const GemmProblem problem(shape, base.layout);
        auto evaluation = problem.instantiate(session);
        Evaluator evaluator(session, *evaluation);
        for (const Config& config : configs) {
          const EvalOutcome outcome = evaluator.evaluate(config, kNoTiming);
          EXPECT_EQ(outcome.status, Status::kOk)
              << dtype_name(dtype) << " " << problem.shape_key() << " " << to_string(config) << ": " << outcome.error;
          ++runs;
        }
      }
    }
  }
  EXPECT_GT(runs, 0);
}

// gemm.cl's small tile and a GPU tile (vector stores of C), the small one split K in 3 parts (the
// sum applies the epilogue), and the CPU variant's default where the device offers it.
std::vector<Config> portable_configs(const GemmShape& shape) {
  const SearchSpace space = gemm_space(shape, testing::test_session().device());
  std::vector<Config> configs = {gemm_default_config(shape)};
  const Config tile = gemm_gpu_tiles()[3];  // 64 x 64, vectors of 4
  if (space.contains(tile)) configs.push_back(tile);
  Config split = gemm_default_config(shape);
  split["KSPLIT"] = 3;
  if (space.contains(split)) configs.push_back(split);
  if (space.contains(gemm_cpu_default_config(shape))) configs.push_back(gemm_cpu_default_config(shape));
  return configs;
}

TEST(GemmEpilogue, PortableVariantsApplyBiasAndActivationAsTheyStoreC) {
  expect_every_epilogue_ok(DType::kFp32, MathMode::kExact, kTwoEpilogues, portable_configs);
}

TEST(GemmEpilogue, EveryActivationWithAndWithoutBias) {
  std::vector<Epilogue> all;
  for (const bool bias : {true, false}) {
    for (const Activation act : kActivations) {
      if (bias || act != Activation::kNone) all.push_back({bias, act});  // the plain GEMM has its own suites
    }
  }
  // One layout: the others' programs differ in their loads only, which the test above covers.
  expect_every_epilogue_ok(
      DType::kFp32, MathMode::kExact, all,
      [](const GemmShape& shape) { return std::vector<Config>{gemm_default_config(shape)}; }, true);
}

TEST(GemmEpilogue, SixteenBitCopiesApplyItAsTheyNarrowC) {
  // The bias has C's storage type; the fp32 kernels multiply widened copies and the narrowing adds it.
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    expect_every_epilogue_ok(dtype, MathMode::kExact, kTwoEpilogues,
                             [](const GemmShape& shape) { return std::vector<Config>{gemm_default_config(shape)}; });
  }
}

TEST(GemmEpilogue, CpuKernelAppliesItOnlyAfterTheLastBlockOfK) {
  // gemm_cpu.cl adds each K block into C: a K longer than one block (KC) must not activate a partial sum.
  Session& session = testing::test_session();
  const GemmShape probe{.m = 8, .n = 8, .k = 8};
  if (!gemm_space(probe, session.device()).contains(gemm_cpu_default_config(probe))) {
    GTEST_SKIP() << "the cpu variant is offered on CPU devices only";
  }
  for (const Activation act : {Activation::kRelu, Activation::kGelu}) {
    const GemmShape shape{.m = 21, .n = 35, .k = 700, .bias = true, .act = act};
    const GemmProblem problem(shape);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    Config config = gemm_cpu_default_config(shape);
    ASSERT_LT(config.at("KC"), shape.k);
    const EvalOutcome outcome = evaluator.evaluate(config, kNoTiming);
    EXPECT_EQ(outcome.status, Status::kOk) << problem.shape_key() << ": " << outcome.error;
  }
}

TEST(GemmEpilogue, TensorCoreVariantsApplyIt) {
  Session& session = testing::test_session();
  if (!satisfies(session.device(), nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  const auto tensor_core_configs = [&](const GemmShape& shape) {
    std::vector<Config> configs;
    const SearchSpace space = gemm_space(shape, session.device());
    for (const Config& c : {gemm_mma_default_config(), gemm_wgmma_default_config(), gemm_mma_packed_default_config(),
                            gemm_wgmma_packed_default_config()}) {
      if (space.contains(c)) configs.push_back(c);
    }
    return configs;
  };
  for (const DType dtype : {DType::kFp32, DType::kBf16, DType::kFp16}) {
    expect_every_epilogue_ok(dtype, MathMode::kTf32, kTwoEpilogues, tensor_core_configs);
  }
}

TEST(GemmEpilogue, VerificationFailsAKernelThatDropsTheEpilogue) {
  // The reference includes the epilogue: the plain product's plan on the same data must fail.
  Session& session = testing::test_session();
  const GemmShape shape{.m = 16, .n = 24, .k = 8, .bias = true, .act = Activation::kSigmoid};
  const GemmProblem problem(shape);
  auto evaluation = problem.instantiate(session);
  LaunchPlan wrong = evaluation->plan(gemm_default_config(shape));
  for (KernelLaunch& launch : wrong.kernels) {
    std::erase_if(launch.program.defines, [](const auto& d) { return d.first == "ACT"; });
  }
  evaluation->reset();
  enqueue(session.queue(), prepare(session, wrong));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
  // The right plan on the same evaluation passes (the failure above is the epilogue's).
  evaluation->reset();
  enqueue(session.queue(), prepare(session, evaluation->plan(gemm_default_config(shape))));
  session.queue().finish();
  EXPECT_TRUE(evaluation->verify().ok);
}

TEST(GemmEpilogue, JsonCarriesItAndTheShapeKeyLeavesItOut) {
  // Per call, like alpha and beta: a product's rows serve it with any epilogue.
  const GemmShape plain{.m = 4, .n = 5, .k = 6};
  EXPECT_FALSE(plain.to_json().contains("bias"));
  EXPECT_FALSE(plain.to_json().contains("act"));
  GemmShape fused = plain;
  fused.bias = true;
  fused.act = Activation::kGelu;
  EXPECT_EQ(fused.key(), plain.key());
  const GemmShape back = GemmShape::from_json(fused.to_json());
  EXPECT_TRUE(back.bias);
  EXPECT_EQ(back.act, Activation::kGelu);
  nlohmann::json bad = fused.to_json();
  bad["act"] = "swish";
  EXPECT_THROW(GemmShape::from_json(bad), Error);
}

TEST(GemmEpilogue, PlanRefusesABiasWithoutItsBuffer) {
  Session& session = testing::test_session();
  const GemmShape shape{.m = 4, .n = 5, .k = 6, .bias = true};
  cl::Buffer buffer(session.context(), CL_MEM_READ_WRITE, 1024);
  GemmOperands operands = packed_operands(shape, buffer, buffer, buffer);
  Workspace workspace(session.context());
  EXPECT_THROW(gemm_plan(shape, operands, gemm_default_config(shape), workspace), Error);
  operands.bias = buffer;
  operands.bias_offset = 1024 / 4 - 2;  // 2 of the 5 elements fit
  EXPECT_THROW(gemm_plan(shape, operands, gemm_default_config(shape), workspace), Error);
  operands.bias_offset = 0;
  EXPECT_NO_THROW(gemm_plan(shape, operands, gemm_default_config(shape), workspace));
}

}  // namespace
}  // namespace ocltune
