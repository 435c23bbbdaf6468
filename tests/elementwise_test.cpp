// Elementwise correctness: the odd-shape table (every op, dtype and addressing mode) against the
// float64 reference, a covering sample of the tuning space, and checks that wrong kernels fail.
#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/database.h"
#include "harness/error.h"
#include "harness/session.h"
#include "ops/elementwise/elementwise_problem.h"
#include "ops/elementwise/elementwise_reference.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"
#include "tuner/tuner.h"

namespace ocltune {
namespace {

using Op = ElementwiseOp;
const TimingPolicy kNoTiming{.warmup = 0, .min_runs = 1, .max_runs = 1};

// Configurations that together use every value of every elementwise parameter.
const std::vector<Config>& sample_configs() {
  static const std::vector<Config> configs = [] {
    // Rows of 1024 against a broadcast row: every parameter, ROWS included, has all its values.
    const ElementwiseShape big{.input = {{1024, 1024}, {}},
                               .steps = {{.op = Op::kAdd, .tensor = TensorOperand{{1024}, {}}}}};
    return covering_sample(elementwise_space(big, testing::test_session().device()), 7, elementwise_default_config());
  }();
  return configs;
}

// The define `name` of the plan's program.
std::string define_of(const LaunchPlan& plan, const std::string& name) {
  for (const auto& [n, v] : plan.kernels.at(0).program.defines) {
    if (n == name) return v;
  }
  return "";
}

class ElementwiseCorrectness : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ElementwiseCorrectness, ASampledConfigurationMatchesTheReference) {
  // Case i runs configuration i of the covering sample (the default first), so the table as a
  // whole checks every sampled configuration on varied shapes with one compile per case; the
  // Sample test runs all of them on one shape.
  const std::size_t index = GetParam();
  const ElementwiseTestCase c = elementwise_test_cases().at(index);
  const ElementwiseProblem problem(c.shape, c.layout);
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const Config& config = sample_configs()[index % sample_configs().size()];
  const EvalOutcome outcome = evaluator.evaluate(config, kNoTiming);
  EXPECT_EQ(outcome.status, Status::kOk) << problem.shape_key() << " " << dtype_name(problem.dtype()) << " "
                                         << to_string(config) << ": " << outcome.error;
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  const ElementwiseShape s = elementwise_test_cases().at(info.param).shape;
  std::string name = fmt::format("{}_{}_", info.param, dtype_name(s.dtype));
  name += s.steps.empty() ? "copy" : elementwise_op_name(s.steps.back().op);
  return name;
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> v(elementwise_test_cases().size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

INSTANTIATE_TEST_SUITE_P(Table, ElementwiseCorrectness, ::testing::ValuesIn(case_indices()), case_name);

TEST(ElementwiseSample, EveryConfigurationOnBroadcastRowsThatStraddleVectors) {
  // Rows of 7 against a row-broadcast operand and a column-broadcast one, with NaN/Inf injected:
  // the vector path, the element-wise path and both broadcast modes in every configuration.
  const ElementwiseShape shape{.input = {{3, 5, 7}, {}},
                               .steps = {{.op = Op::kMaximum, .tensor = TensorOperand{{7}, {}}},
                                         {.op = Op::kMul, .tensor = TensorOperand{{3, 5, 1}, {}}}}};
  const ElementwiseProblem problem(shape, {.out_offset = 2, .input_offset = 1});
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  for (const Config& config : sample_configs()) {
    const EvalOutcome outcome = evaluator.evaluate(config, kNoTiming);
    EXPECT_EQ(outcome.status, Status::kOk) << to_string(config) << ": " << outcome.error;
  }
}

TEST(ElementwiseSpace, CoveringSampleUsesEveryValueAndHoldsTheDefault) {
  const ElementwiseShape big{.input = {{1024, 1024}, {}},
                             .steps = {{.op = Op::kAdd, .tensor = TensorOperand{{1024}, {}}}}};
  const SearchSpace space = elementwise_space(big, testing::test_session().device());
  EXPECT_TRUE(space.contains(elementwise_default_config())) << space.check(elementwise_default_config());
  EXPECT_GT(space.enumerate().size(), 100u);
  for (const Parameter& p : space.parameters()) {
    for (std::int64_t v : p.values) {
      bool used = false;
      for (const Config& c : sample_configs()) used = used || c.at(p.name) == v;
      EXPECT_TRUE(used) << p.name << "=" << v;
    }
  }
  // A tiny tensor still admits the default; a flat one has no row tiles.
  const ElementwiseShape tiny{.input = {{1}, {}}, .steps = {{.op = Op::kRelu}}};
  EXPECT_TRUE(elementwise_space(tiny, testing::test_session().device()).contains(elementwise_default_config()));
  for (const Config& c :
       elementwise_space({.input = {{1 << 20}, {}}, .steps = {{.op = Op::kRelu}}}, testing::test_session().device())
           .enumerate()) {
    EXPECT_EQ(c.at("ROWS"), 0);
  }
}

TEST(ElementwisePlan, MergesDimsAndPicksTheCheapestAddressing) {
  cl::Buffer buffer(testing::test_session().context(), CL_MEM_READ_WRITE, 1 << 24);
  auto plan_of = [&](const ElementwiseShape& s) {
    ElementwiseOperands o{.out = buffer};
    for (std::size_t i = 0; i < s.tensors().size(); ++i) {
      o.inputs.push_back(buffer);
      o.input_offsets.push_back(0);
    }
    return elementwise_plan(s, o, elementwise_default_config());
  };
  // Same-shape operands collapse to one flat dimension.
  LaunchPlan p =
      plan_of({.input = {{64, 3, 5}, {}}, .steps = {{.op = Op::kAdd, .tensor = TensorOperand{{64, 3, 5}, {}}}}});
  EXPECT_EQ(define_of(p, "NDIM"), "1");
  EXPECT_EQ(define_of(p, "IN1_MODE"), "0");
  // A bias over rows: two dims, the bias read as rows of vectors.
  p = plan_of({.input = {{4096, 768}, {}}, .steps = {{.op = Op::kAdd, .tensor = TensorOperand{{768}, {}}}}});
  EXPECT_EQ(define_of(p, "NDIM"), "2");
  EXPECT_EQ(define_of(p, "IN0_MODE"), "0");
  EXPECT_EQ(define_of(p, "IN1_MODE"), "1");
  // A per-channel scale over NCHW: H and W merge; one value per row.
  p = plan_of({.input = {{8, 16, 7, 7}, {}}, .steps = {{.op = Op::kMul, .tensor = TensorOperand{{16, 1, 1}, {}}}}});
  EXPECT_EQ(define_of(p, "NDIM"), "3");
  EXPECT_EQ(define_of(p, "IN1_MODE"), "2");
  EXPECT_EQ(std::get<cl_int>(p.kernels[0].args[3]), 49);
  // NHWC viewed as NCHW: gathered with the channel stride.
  p = plan_of({.input = {{2, 3, 4, 5}, {60, 1, 15, 3}}, .steps = {}});
  EXPECT_EQ(define_of(p, "STEPS"), "0");
  EXPECT_EQ(define_of(p, "IN0_MODE"), "3");
  // An empty output launches nothing.
  EXPECT_TRUE(plan_of({.input = {{0, 5}, {}}, .steps = {{.op = Op::kExp}}}).kernels.empty());
}

// OpenCL's mul_hi for ulong: the upper 64 bits of the 128-bit product.
std::uint64_t mul_hi(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const std::uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (middle >> 32);
}

TEST(ElementwisePlan, DivisionMagicIsExactFor31BitNumerators) {
  // The kernel divides coordinates by mul_hi(e, ceil(2^64 / d)); check it against / on the
  // extremes of e and of d, powers of two and their neighbours.
  const std::int64_t divisors[] = {2, 3, 7, 49, 64, 65, 768, 3071, 3072, 3136, 1 << 20, (1 << 30) + 1, (1LL << 31) - 1};
  const std::int64_t numerators[] = {
      0, 1, 2, 47, 48, 49, 3135, 3136, 1 << 24, (1 << 30) - 1, (1LL << 31) - 2, (1LL << 31) - 1};
  for (const std::int64_t d : divisors) {
    const std::uint64_t m = division_magic(d);
    for (const std::int64_t e : numerators) {
      for (const std::int64_t x : {e, e - e % d, e - e % d - 1, e - e % d + d - 1}) {
        if (x < 0 || x >= (1LL << 31)) continue;
        const auto q = static_cast<std::int64_t>(mul_hi(static_cast<std::uint64_t>(x), m));
        EXPECT_EQ(q, x / d) << x << " / " << d;
      }
    }
  }
}

TEST(ElementwiseShape, KeysJsonAndBytes) {
  const ElementwiseShape bias{.input = {{4096, 768}, {}},
                              .steps = {{.op = Op::kAdd, .tensor = TensorOperand{{768}, {}}}, {.op = Op::kGelu}},
                              .dtype = DType::kFp16};
  EXPECT_EQ(bias.key(), "x=4096x768,add(768),gelu");
  EXPECT_EQ(bias.bytes(), 2.0 * (2 * 4096 * 768 + 768));
  EXPECT_EQ(ElementwiseShape::from_json(bias.to_json()).key(), bias.key());
  const ElementwiseShape rsub{.input = {{97}, {}}, .steps = {{.op = Op::kSub, .scalar = 1, .reversed = true}}};
  EXPECT_EQ(rsub.key(), "x=97,rsub(s)");
  EXPECT_EQ(ElementwiseShape::from_json(rsub.to_json()).to_json(), rsub.to_json());
  const ElementwiseShape copy{.input = {{8, 12, 512, 64}, {393216, 64, 768, 1}}};
  EXPECT_EQ(copy.key(), "x=8x12x512x64/s=393216x64x768x1,copy");
  EXPECT_EQ(copy.bytes(), 8.0 * 8 * 12 * 512 * 64);
  // An expanded view (stride 0) reads each element once.
  EXPECT_EQ((ElementwiseShape{.input = {{1000, 8}, {0, 1}}}).bytes(), 4.0 * (8000 + 8));
}

TEST(ElementwiseShape, RejectsBadShapes) {
  const auto parse = [](const char* text) { return ElementwiseShape::from_json(nlohmann::json::parse(text)); };
  EXPECT_THROW(parse(R"({"x": [3, 4], "steps": [{"op": "add", "tensor": [5]}]})"), Error);  // broadcast
  EXPECT_THROW(parse(R"({"x": [3], "steps": [{"op": "relu", "scalar": 2}]})"), Error);      // unary operand
  EXPECT_THROW(parse(R"({"x": [3], "steps": [{"op": "add"}]})"), Error);                    // no operand
  EXPECT_THROW(parse(R"({"x": [3], "steps": [{"op": "erfc"}]})"), Error);                   // unknown op
  EXPECT_THROW(parse(R"({"x": [1, 2, 3, 4, 5]})"), Error);                                  // rank 5
  EXPECT_THROW(parse(R"({"x": {"dims": [3, 4], "strides": [1]}})"), Error);                 // strides
  EXPECT_THROW(parse(R"({"x": [3], "dtype": "fp8"})"), Error);                              // dtype
  EXPECT_THROW(parse(R"({"x": [3], "steps": [{"op": "neg"}, {"op": "neg"}, {"op": "neg"}, {"op": "neg"},
                         {"op": "neg"}]})"),
               Error);  // five steps
  EXPECT_NO_THROW(parse(R"({"x": [3, 1], "steps": [{"op": "pow", "tensor": [1, 4], "reversed": true}]})"));
}

TEST(ElementwiseReference, FollowsPyTorchOnSpecialValues) {
  const double nan = std::nan(""), inf = INFINITY;
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kMaximum, nan, 1)));
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kMinimum, 1, nan)));
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kRelu, nan, 0)));
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kRelu6, nan, 0)));
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kLog, -1, 0)));
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kSqrt, -1, 0)));
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kPow, -8, 1.0 / 3)));
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kDiv, 0, 0)));
  EXPECT_EQ(elementwise_apply(Op::kDiv, -1, 0), -inf);
  EXPECT_EQ(elementwise_apply(Op::kLog, 0, 0), -inf);
  EXPECT_EQ(elementwise_apply(Op::kRsqrt, 0, 0), inf);
  EXPECT_EQ(elementwise_apply(Op::kPow, nan, 0), 1.0);
  EXPECT_EQ(elementwise_apply(Op::kRelu6, 7, 0), 6.0);
  EXPECT_EQ(elementwise_apply(Op::kSigmoid, -inf, 0), 0.0);
  // gelu(1) = Phi(1); the tanh form differs from it in the fourth digit.
  EXPECT_NEAR(elementwise_apply(Op::kGelu, 1, 0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(elementwise_apply(Op::kGeluTanh, 1, 0), 0.8411919906082768, 1e-15);
  // An fp32 intermediate beyond FLT_MAX is Inf, as in the kernel.
  EXPECT_EQ(elementwise_step(Op::kExp, {100, 0}, {}).value, inf);
}

// Each backward op's slope is the derivative of its forward op (from the output for sigmoid and
// tanh), so the kernels autograd runs are checked against the calculus, not only against themselves.
TEST(ElementwiseReference, BackwardOpsAreTheDerivativesOfTheirForwardOps) {
  struct Pair {
    Op forward, backward;
    bool from_output;
  };
  const Pair pairs[] = {{Op::kRelu, Op::kReluGrad, false},
                        {Op::kRelu6, Op::kRelu6Grad, false},
                        {Op::kGelu, Op::kGeluGrad, false},
                        {Op::kGeluTanh, Op::kGeluTanhGrad, false},
                        {Op::kSilu, Op::kSiluGrad, false},
                        {Op::kSigmoid, Op::kSigmoidGrad, true},
                        {Op::kTanh, Op::kTanhGrad, true},
                        {Op::kHardswish, Op::kHardswishGrad, false},
                        {Op::kHardsigmoid, Op::kHardsigmoidGrad, false}};
  for (const Pair& p : pairs) {
    for (double x = -7.3; x < 7.5; x += 0.37) {
      const double h = 1e-6;
      const double slope = (elementwise_apply(p.forward, x + h, 0) - elementwise_apply(p.forward, x - h, 0)) / (2 * h);
      const double b = p.from_output ? elementwise_apply(p.forward, x, 0) : x;
      EXPECT_NEAR(elementwise_apply(p.backward, 2.5, b), 2.5 * slope, 1e-6 * std::max(1.0, std::abs(slope)))
          << elementwise_op_name(p.backward) << " at " << x;
    }
  }
  // PyTorch's choices at the kinks: threshold_backward and hardtanh_backward zero the edges,
  // hardswish_backward is 0 at -3 and the outer branch at 3; sign(NaN) is 0.
  EXPECT_EQ(elementwise_apply(Op::kReluGrad, 1, 0), 0.0);
  EXPECT_EQ(elementwise_apply(Op::kRelu6Grad, 1, 6), 0.0);
  EXPECT_EQ(elementwise_apply(Op::kHardswishGrad, 1, 3), 1.0);
  EXPECT_EQ(elementwise_apply(Op::kHardswishGrad, 1, -3), 0.0);
  EXPECT_EQ(elementwise_apply(Op::kSign, std::nan(""), 0), 0.0);
  EXPECT_EQ(elementwise_apply(Op::kSign, -0.0, 0), 0.0);
  EXPECT_TRUE(std::isnan(elementwise_apply(Op::kHardsigmoid, std::nan(""), 0)));
  EXPECT_EQ(elementwise_apply(Op::kLeakyRelu, -2, 0.01), -0.02);
}

TEST(ElementwiseVerification, DetectsTheWrongGeluVariant) {
  // gelu's tanh approximation differs by about 1e-4: far outside fp32 tolerance.
  Session& session = testing::test_session();
  const ElementwiseShape shape{.input = {{1000}, {}}, .steps = {{.op = Op::kGelu}}};
  auto evaluation = ElementwiseProblem(shape).instantiate(session);
  LaunchPlan plan = evaluation->plan(elementwise_default_config());
  for (auto& [name, value] : plan.kernels[0].program.defines) {
    if (name == "STEP1_OP") value = "GELU_TANH";
  }
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
}

TEST(ElementwiseVerification, DetectsAMissingAndAnExtraElement) {
  Session& session = testing::test_session();
  const ElementwiseShape shape{.input = {{37}, {}}, .steps = {{.op = Op::kAdd, .scalar = 0.5f}}};
  for (const int delta : {-1, 1}) {
    auto evaluation = ElementwiseProblem(shape).instantiate(session);
    LaunchPlan plan = evaluation->plan(elementwise_default_config());
    std::get<cl_int>(plan.kernels[0].args[0]) += delta;  // n
    evaluation->reset();
    enqueue(session.queue(), prepare(session, plan));
    session.queue().finish();
    EXPECT_FALSE(evaluation->verify().ok) << "n " << delta;
  }
}

TEST(ElementwiseTuning, StoresTheBestPerDtypeInGBPerSecond) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("elementwise-tune.db"));
  db.upsert_device(session.device());
  RunRow run;
  run.device_key = session.device().key();
  run.tool_version = "test";
  TuneOptions options;
  options.max_evals = 2;
  options.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
  Tuner tuner(session, db, db.begin_run(run), options, nullptr);
  const ElementwiseProblem problem(
      {.input = {{64, 96}, {}}, .steps = {{.op = Op::kAdd, .tensor = TensorOperand{{96}, {}}}}, .dtype = DType::kFp16});
  EXPECT_TRUE(tuner.tune(problem).best);
  const std::vector<BestRow> best = db.all_best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].op, "elementwise");
  EXPECT_EQ(best[0].dtype, "fp16");
  EXPECT_EQ(best[0].shape_key, "x=64x96,add(96)");
  EXPECT_GT(best[0].gbs.value_or(0), 0);
}

}  // namespace
}  // namespace ocltune
