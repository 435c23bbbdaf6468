// Pooling correctness: the odd-shape table against the float64 reference (values and indices), a
// covering sample of each kernel's tuning space, and checks that wrong kernels fail.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/database.h"
#include "harness/error.h"
#include "harness/session.h"
#include "ops/pool/pool_problem.h"
#include "ops/pool/pool_reference.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"
#include "tuner/tuner.h"

namespace ocltune {
namespace {

const TimingPolicy kNoTiming{.warmup = 0, .min_runs = 1, .max_runs = 1};

// A shape of the same kernel (kind and direction) large enough that every tunable value is allowed.
PoolShape roomy(const PoolShape& s) {
  PoolShape big = s;
  big.h = big.w = 256;
  return big;
}

// Every value of every parameter of the kernel `s` uses, in few configurations.
std::vector<Config> sample_for(const PoolShape& s) {
  const PoolShape big = roomy(s);
  return covering_sample(pool_space(big, testing::test_session().device()), 7, pool_default_config(big));
}

std::vector<std::string> run_configs(const PoolProblem& problem, const std::vector<Config>& configs) {
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  std::vector<std::string> failures;
  for (const Config& config : configs) {
    const EvalOutcome outcome = evaluator.evaluate(config, kNoTiming);
    if (outcome.status != Status::kOk)
      failures.push_back(fmt::format("{}: {} {}", to_string(config), status_name(outcome.status), outcome.error));
  }
  return failures;
}

class PoolCorrectness : public ::testing::TestWithParam<std::size_t> {};

}  // namespace

// Printed by GoogleTest in test names and failures instead of the raw bytes.
void PrintTo(const PoolShape& s, std::ostream* os) { *os << s.key(); }

namespace {

TEST_P(PoolCorrectness, ASampledConfigurationMatchesTheReference) {
  // Case i runs configuration i of its kernel's covering sample (the default first): one compile
  // per case; the Sample tests below run each sample in full on one shape.
  const std::size_t index = GetParam();
  const PoolTestCase c = pool_test_cases().at(index);
  const std::vector<Config> sample = sample_for(c.shape);
  const PoolProblem problem(c.shape, c.layout);
  for (const std::string& failure : run_configs(problem, {sample[index % sample.size()]})) {
    ADD_FAILURE() << problem.shape_key() << " " << dtype_name(problem.dtype()) << " " << failure;
  }
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  const PoolShape s = pool_test_cases().at(info.param).shape;
  return fmt::format("{}_{}_{}_{}", info.param, pool_kind_name(s.kind), s.backward ? "bwd" : "fwd",
                     dtype_name(s.dtype));
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> v(pool_test_cases().size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

INSTANTIATE_TEST_SUITE_P(Table, PoolCorrectness, ::testing::ValuesIn(case_indices()), case_name);

// One odd shape per kernel, every configuration of its covering sample.
class PoolSample : public ::testing::TestWithParam<PoolShape> {};

TEST_P(PoolSample, EveryConfigurationMatchesTheReference) {
  const PoolShape& shape = GetParam();
  for (const std::string& failure :
       run_configs(PoolProblem(shape, {.in_offset = 1, .out_offset = 2, .indices_offset = 3}), sample_for(shape))) {
    ADD_FAILURE() << shape.key() << " " << failure;
  }
}

PoolShape overlapping(PoolKind kind, bool backward) {
  // 3x3 windows at stride 2 with padding over 11x13 planes: overlaps, clipped windows, odd rows.
  return {.kind = kind,
          .backward = backward,
          .n = 2,
          .c = 3,
          .h = 11,
          .w = 13,
          .kh = 3,
          .kw = 3,
          .sh = 2,
          .sw = 2,
          .ph = 1,
          .pw = 1,
          .count_include_pad = false};
}

INSTANTIATE_TEST_SUITE_P(Kernels, PoolSample,
                         ::testing::Values(overlapping(PoolKind::kMax, false), overlapping(PoolKind::kAvg, true),
                                           PoolShape{.kind = PoolKind::kAdaptiveAvg, .n = 3, .c = 5, .h = 9, .w = 11}),
                         [](const auto& param) {
                           return fmt::format("{}_{}", pool_kind_name(param.param.kind),
                                              param.param.backward ? "bwd" : "fwd");
                         });

TEST(PoolShape, OutputSizesFollowPyTorch) {
  // floor((in + 2p - k) / s) + 1; ceil_mode rounds up unless the last window starts in the padding.
  PoolShape s{.n = 1, .c = 1, .h = 112, .w = 112, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1};
  EXPECT_EQ(s.out_h(), 56);
  s.h = 13, s.kh = 2, s.sh = 2, s.ph = 0;
  EXPECT_EQ(s.out_h(), 6);
  s.ceil_mode = true;
  EXPECT_EQ(s.out_h(), 7);
  s.h = 5, s.kh = 3, s.sh = 2, s.ph = 1;  // ceil((5 + 2 - 3) / 2) + 1 = 3; last start 4 < 5 + 1
  EXPECT_EQ(s.out_h(), 3);
  s.h = 6, s.kh = 2, s.sh = 3, s.ph = 1;  // ceil((6 + 2 - 2) / 3) + 1 = 3, but start 6 >= 6 + 1? no: 3
  EXPECT_EQ(s.out_h(), 3);
  s.h = 4, s.kh = 2, s.sh = 3, s.ph = 1;  // ceil(4 / 3) + 1 = 3, start 6 >= 4 + 1: dropped
  EXPECT_EQ(s.out_h(), 2);
}

TEST(PoolShape, KeysJsonBytesAndRejections) {
  const PoolShape s{.n = 32, .c = 64, .h = 112, .w = 112, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1};
  EXPECT_EQ(s.key(), "max_fwd,n=32,c=64,h=112,w=112,k=3x3,s=2x2,p=1x1,ceil=0,idx=1");
  EXPECT_EQ(PoolShape::from_json(s.to_json()).key(), s.key());
  EXPECT_EQ(s.bytes(), 32.0 * 64 * (4 * (112 * 112 + 56 * 56) + 8 * 56 * 56));
  // Two 3-wide windows at stride 4 over 9 rows read rows 0-2 and 4-6, never 3, 7 and 8.
  const PoolShape gaps{.n = 1, .c = 1, .h = 9, .w = 9, .kh = 3, .kw = 3, .sh = 4, .sw = 4, .indices = false};
  EXPECT_EQ(gaps.bytes(), 4.0 * (6 * 6 + 2 * 2));
  const auto parse = [](const char* text) { return PoolShape::from_json(nlohmann::json::parse(text)); };
  EXPECT_THROW(parse(R"({"n": 1, "c": 1, "h": 8, "w": 8, "kh": 3, "kw": 3, "ph": 2})"), Error);  // pad > k/2
  EXPECT_THROW(parse(R"({"n": 1, "c": 1, "h": 2, "w": 8, "kh": 3, "kw": 3})"), Error);           // empty output
  EXPECT_THROW(parse(R"({"kind": "adaptive_avg", "n": 1, "c": 1, "h": 2, "w": 2, "kh": 2})"), Error);
  EXPECT_THROW(parse(R"({"kind": "min", "n": 1, "c": 1, "h": 2, "w": 2})"), Error);
  EXPECT_EQ(parse(R"({"n": 1, "c": 1, "h": 8, "w": 8, "kh": 2, "kw": 2})").sh, 2);  // stride defaults to window
}

TEST(PoolReference, MaxFollowsPyTorchOnNaNAndTies) {
  // One 1x4 window: ties keep the first maximum; a NaN wins, and the last NaN's index is kept.
  const PoolShape s{.n = 1, .c = 1, .h = 1, .w = 4, .kh = 1, .kw = 4};
  const float nan = std::nanf("");
  EXPECT_EQ(pool_reference(s, std::vector<float>{1, 3, 3, 2}, {}).indices[0], 1);
  const PoolReference r = pool_reference(s, std::vector<float>{1, nan, 5, nan}, {});
  EXPECT_TRUE(std::isnan(r.value[0]));
  EXPECT_EQ(r.indices[0], 3);
  // Windows entirely of -Inf keep the first position.
  EXPECT_EQ(pool_reference(s, std::vector<float>{-INFINITY, -INFINITY, -INFINITY, -INFINITY}, {}).indices[0], 0);
}

TEST(PoolKernel, MaxKeepsTheFirstOfTiesAndTheLastNaN) {
  // Equal values everywhere (ties in every window) and two NaNs in the first window: the kernel's
  // indices must be PyTorch's, which the reference implements.
  Session& session = testing::test_session();
  const PoolShape s{.n = 1, .c = 2, .h = 7, .w = 9, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1};
  std::vector<float> x(static_cast<std::size_t>(s.planes() * s.h * s.w), 0.5f);
  x[1] = x[s.w] = std::nanf("");
  const PoolReference ref = pool_reference(s, x, {});
  const std::size_t outputs = ref.indices.size();
  PoolOperands o;
  o.in = make_buffer(session.context(), x, s.dtype);
  o.out = cl::Buffer(session.context(), CL_MEM_READ_WRITE, outputs * 4);
  o.indices = cl::Buffer(session.context(), CL_MEM_READ_WRITE, outputs * 8);
  enqueue(session.queue(), prepare(session, pool_plan(s, o, pool_default_config(s))));
  std::vector<std::int64_t> indices(outputs);
  session.queue().enqueueReadBuffer(o.indices, CL_TRUE, 0, outputs * 8, indices.data());
  EXPECT_EQ(indices, ref.indices);
  EXPECT_EQ(ref.indices[0], s.w);  // the later of the two NaNs
  EXPECT_EQ(ref.indices[1], 1);    // the NaN at column 1
  EXPECT_EQ(ref.indices[3], 5);    // all equal: the window's first position inside the input
}

TEST(PoolVerification, DetectsAWrongDivisorAndAMissedPlane) {
  Session& session = testing::test_session();
  // count_include_pad flipped: border windows are divided by the wrong count.
  const PoolShape avg = overlapping(PoolKind::kAvg, false);
  auto evaluation = PoolProblem(avg).instantiate(session);
  LaunchPlan plan = evaluation->plan(pool_default_config(avg));
  for (auto& [name, value] : plan.kernels[0].program.defines) {
    if (name == "COUNT_INCLUDE_PAD") value = "1";
  }
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
  // One plane fewer: the last plane's outputs and indices keep their initial contents.
  const PoolShape max = overlapping(PoolKind::kMax, false);
  evaluation = PoolProblem(max).instantiate(session);
  plan = evaluation->plan(pool_default_config(max));
  const cl::NDRange& g = plan.kernels[0].global;
  plan.kernels[0].global = cl::NDRange(g[0], g[1], g[2] - 1);
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
}

TEST(PoolVerification, DetectsMisplacedIndices) {
  // Indices written one element late: the values are right, every index is in the wrong place and
  // the last one lands on a canary.
  Session& session = testing::test_session();
  const PoolShape s{.n = 2, .c = 4, .h = 16, .w = 16, .kh = 4, .kw = 4, .sh = 4, .sw = 4, .dtype = DType::kFp16};
  auto evaluation = PoolProblem(s).instantiate(session);
  LaunchPlan plan = evaluation->plan(pool_default_config(s));
  ASSERT_EQ(plan.kernels[0].args.size(), 10u);
  std::get<cl_int>(plan.kernels[0].args[9]) += 1;  // indices offset
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  const VerifyResult result = evaluation->verify();
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("index"), std::string::npos) << result.message;
}

TEST(PoolTuning, StoresTheBestPerDtypeInGBPerSecond) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("pool-tune.db"));
  db.upsert_device(session.device());
  RunRow run;
  run.device_key = session.device().key();
  run.tool_version = "test";
  TuneOptions options;
  options.max_evals = 2;
  options.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
  Tuner tuner(session, db, db.begin_run(run), options, nullptr);
  const PoolProblem problem(
      {.backward = true, .n = 2, .c = 8, .h = 15, .w = 15, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dtype = DType::kBf16});
  EXPECT_TRUE(tuner.tune(problem).best);
  const std::vector<BestRow> best = db.all_best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].op, "pool");
  EXPECT_EQ(best[0].dtype, "bf16");
  EXPECT_EQ(best[0].shape_key, "max_bwd,n=2,c=8,h=15,w=15,k=3x3,s=2x2,p=0x0,ceil=0");
  EXPECT_GT(best[0].gbs.value_or(0), 0);
}

}  // namespace
}  // namespace ocltune
