// softmax / log_softmax correctness: the odd-shape table x a covering sample of the tuning space,
// against float64; shape validation; verification that catches wrong kernels.
#include <algorithm>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/error.h"
#include "ops/family.h"
#include "ops/softmax/softmax_problem.h"
#include "tests/support/covering.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"

namespace ocltune {
namespace {

// Shapes whose spaces reach every value of every parameter, one per kernel variant.
const SoftmaxShape kBigRows{.dims = {64, 1 << 16}, .axis = 1};
const SoftmaxShape kBigColumns{.dims = {64, 512, 4096}, .axis = 1};

bool strided(const SoftmaxShape& s) {
  const ReduceLayout l = s.layout();
  return !l.passes.empty() && l.passes.front().inner > 1;
}

const std::vector<Config>& sample_configs(bool columns) {
  static const std::vector<Config> rows = [] {
    const DeviceInfo& d = testing::test_session().device();
    return testing::small_covering_sample(softmax_space(kBigRows, d), softmax_default_config(kBigRows, d));
  }();
  static const std::vector<Config> cols = [] {
    const DeviceInfo& d = testing::test_session().device();
    return testing::small_covering_sample(softmax_space(kBigColumns, d), softmax_default_config(kBigColumns, d));
  }();
  return columns ? cols : rows;
}

const std::vector<SoftmaxTestCase>& cases() {
  static const std::vector<SoftmaxTestCase> table = softmax_test_cases();
  return table;
}

// Parameterised by the index into the table, which also picks a thin case's configurations.
class SoftmaxCorrectness : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SoftmaxCorrectness, SampledConfigurationsMatchTheReference) {
  const SoftmaxTestCase& c = cases()[GetParam()];
  Session& session = testing::test_session();
  const SoftmaxProblem problem(c.shape, c.instance);
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  std::vector<Config> configs = testing::configs_for_case(sample_configs(strided(c.shape)), GetParam(), c.thorough);
  const Config own_default = problem.default_config(session.device());
  if (std::find(configs.begin(), configs.end(), own_default) == configs.end()) configs.push_back(own_default);
  for (const Config& config : configs) {
    const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
    EXPECT_EQ(outcome.status, Status::kOk)
        << problem.shape_key() << " " << dtype_name(c.shape.dtype) << " " << to_string(config) << ": " << outcome.error;
  }
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  const SoftmaxTestCase& c = cases()[info.param];
  const SoftmaxShape& s = c.shape;
  return fmt::format("{}_{}_{}_d{}_a{}{}{}", info.index, s.log ? "log_softmax" : "softmax", dtype_name(s.dtype),
                     dims_text(s.dims), s.axis, c.instance.specials ? "_nan" : "",
                     c.instance.spread != 4.0f ? "_wide" : "");
}

INSTANTIATE_TEST_SUITE_P(Table, SoftmaxCorrectness, ::testing::Range<std::size_t>(0, cases().size()), case_name);

TEST(SoftmaxShape, JsonRoundTripsAndRejectsBadFields) {
  const SoftmaxShape s{.dims = {8, 12, 512, 512}, .axis = 3, .log = true, .dtype = DType::kFp16};
  EXPECT_EQ(SoftmaxShape::from_json(s.to_json()).key(), s.key());
  EXPECT_EQ(SoftmaxShape::from_json({{"dims", {4, 5}}}).axis, 1);  // default: the last dimension
  EXPECT_THROW(SoftmaxShape::from_json({{"dims", {4, 5}}, {"axis", 2}}), Error);
  EXPECT_THROW(SoftmaxShape::from_json({{"dims", {4, 0}}}), Error);
  EXPECT_THROW(SoftmaxShape::from_json({{"dims", {4, 5}}, {"dtype", "int8"}}), Error);
  EXPECT_DOUBLE_EQ(s.bytes(), 2.0 * 2 * 8 * 12 * 512 * 512);
}

TEST(SoftmaxSpace, CoveringSamplesUseEveryReachableValueAndHoldTheDefault) {
  const DeviceInfo& d = testing::test_session().device();
  for (const SoftmaxShape& shape : {kBigRows, kBigColumns}) {
    const SearchSpace space = softmax_space(shape, d);
    const std::vector<Config> all = space.enumerate();
    for (const Parameter& p : space.parameters()) {
      for (std::int64_t v : p.values) {
        bool used = false;
        for (const Config& c : sample_configs(strided(shape))) used = used || c.at(p.name) == v;
        bool reachable = false;
        for (const Config& c : all) reachable = reachable || c.at(p.name) == v;
        EXPECT_EQ(used, reachable) << shape.key() << " " << p.name << "=" << v;
      }
    }
  }
  for (const SoftmaxTestCase& c : softmax_test_cases()) {
    EXPECT_TRUE(softmax_space(c.shape, d).contains(softmax_default_config(c.shape, d))) << c.shape.key();
  }
}

// The configurations PoCL prefers since the polynomial exp and the prefetching sweep (one
// work-item per row, 16-wide vectors), on odd rows in every storage type, with NaN/Inf rows and
// a wide input range; each configuration pairs differently with the other knobs.
TEST(SoftmaxCpuKernel, PolynomialExpAndPrefetchMatchTheReference) {
  Session& session = testing::test_session();
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  const Config base = {{"WGS", 1}, {"VW", 16}, {"ROWS", 4}, {"ONLINE", 0}, {"CACHE", 1}, {"EXP", 1}, {"PREFETCH", 1}};
  struct Case {
    SoftmaxShape shape;
    SoftmaxInstance instance;
    Config changes;
  };
  const std::vector<Case> table = {
      {{.dims = {9, 1031}, .axis = 1}, {.input_offset = 3, .output_offset = 1, .spread = 30.0f}, {}},
      {{.dims = {7, 333}, .axis = 1, .dtype = DType::kFp16}, {.specials = true}, {{"PREFETCH", 2}, {"CACHE", 0}}},
      {{.dims = {11, 61}, .axis = 1, .log = true, .dtype = DType::kBf16},
       {.specials = true},
       {{"ROWS", 16}, {"VW", 8}}},
      {{.dims = {6, 17}, .axis = 1, .log = true}, {.spread = 30.0f}, {{"PREFETCH", 2}, {"WGS", 4}, {"VW", 4}}},
  };
  for (const Case& c : table) {
    const SoftmaxProblem problem(c.shape, c.instance);
    Config config = base;
    for (const auto& [name, value] : c.changes) config[name] = value;
    if (session.device().type != DeviceType::kCpu) config["PREFETCH"] = 0;
    ASSERT_TRUE(problem.space(session.device()).contains(config)) << to_string(config);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
    EXPECT_EQ(outcome.status, Status::kOk)
        << problem.shape_key() << " " << dtype_name(c.shape.dtype) << " " << to_string(config) << ": " << outcome.error;
  }
}

VerifyResult run_modified(const SoftmaxProblem& problem, const std::function<void(LaunchPlan&)>& modify) {
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  LaunchPlan plan = evaluation->plan(problem.default_config(session.device()));
  modify(plan);
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  return evaluation->verify();
}

TEST(SoftmaxVerification, DetectsAMissingTermAndAMissingRow) {
  // Rows one element short: the sums miss a term and the last element of every row is unwritten.
  const SoftmaxProblem problem({.dims = {5, 700}, .axis = 1});
  EXPECT_FALSE(run_modified(problem, [](LaunchPlan& p) { std::get<cl_int>(p.kernels[0].args[1]) -= 1; }).ok);
  // One row fewer: its outputs keep their initial contents.
  EXPECT_FALSE(run_modified(problem, [](LaunchPlan& p) { std::get<cl_int>(p.kernels[0].args[0]) -= 1; }).ok);
}

TEST(SoftmaxVerification, DetectsAWrongFormulaAndAShiftedInput) {
  // The log_softmax formula in a softmax problem, and reading one element later, both fail.
  const SoftmaxProblem problem({.dims = {9, 41}, .axis = 1}, {.specials = true});
  EXPECT_FALSE(run_modified(problem, [](LaunchPlan& p) {
                 for (auto& [name, value] : p.kernels[0].program.defines) {
                   if (name == "LOG") value = "1";
                 }
               }).ok);
  EXPECT_FALSE(run_modified(problem, [](LaunchPlan& p) { std::get<cl_long>(p.kernels[0].args[4]) += 1; }).ok);
}

TEST(SoftmaxFamily, PresetsAreMemoryBoundAndRoundTripThroughJson) {
  const OpFamily* family = find_family("softmax");
  ASSERT_NE(family, nullptr);
  const DeviceInfo& d = testing::test_session().device();
  for (const std::string& preset : preset_names()) {
    for (const auto& p : family->preset(preset)) {
      EXPECT_TRUE(p->memory_bound());
      EXPECT_TRUE(preset == "test" || p->bytes() > 0) << p->shape_key();
      const auto back = family->from_json(p->shape_json());
      EXPECT_EQ(back->shape_key(), p->shape_key());
      EXPECT_EQ(back->dtype(), p->dtype());
      EXPECT_TRUE(p->space(d).contains(p->default_config(d))) << p->shape_key();
    }
  }
}

}  // namespace
}  // namespace ocltune
