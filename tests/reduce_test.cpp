// Reduction correctness: the odd-shape table x a covering sample of the tuning space, against float64;
// layouts, shape validation, and verification that catches wrong kernels.
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/database.h"
#include "harness/error.h"
#include "ops/family.h"
#include "ops/reduce/reduce_problem.h"
#include "tests/support/covering.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"
#include "tuner/tuner.h"

namespace ocltune {
namespace {

ReduceShape sum_over(std::vector<std::int64_t> dims, std::vector<int> axes) {
  return {.dims = std::move(dims), .axes = std::move(axes)};
}

// Shapes whose spaces reach every value of every parameter, one per kernel variant.
const ReduceShape kBigRows = sum_over({64, 1 << 20}, {1});
const ReduceShape kBigColumns = sum_over({64, 1024, 4096}, {1});

// Configurations that together use every value of every parameter of a variant at least once.
const std::vector<Config>& sample_configs(bool strided) {
  static const std::vector<Config> rows = [] {
    const DeviceInfo& d = testing::test_session().device();
    return testing::small_covering_sample(reduce_space(kBigRows, d), reduce_default_config(kBigRows, d));
  }();
  static const std::vector<Config> columns = [] {
    const DeviceInfo& d = testing::test_session().device();
    return testing::small_covering_sample(reduce_space(kBigColumns, d), reduce_default_config(kBigColumns, d));
  }();
  return strided ? columns : rows;
}

bool strided(const ReduceShape& s) {
  const ReduceLayout l = s.layout();
  return !l.passes.empty() && l.passes.front().inner > 1;
}

const std::vector<ReduceTestCase>& cases() {
  static const std::vector<ReduceTestCase> table = reduce_test_cases();
  return table;
}

// Parameterised by the index into the table, which also picks a thin case's configurations.
class ReduceCorrectness : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ReduceCorrectness, SampledConfigurationsMatchTheReference) {
  const ReduceTestCase& c = cases()[GetParam()];
  Session& session = testing::test_session();
  const ReduceProblem problem(c.shape, c.instance);
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
  const ReduceTestCase& c = cases()[info.param];
  const ReduceShape& s = c.shape;
  std::string axes;
  for (int a : s.axes) axes += std::to_string(a);
  return fmt::format("{}_{}_{}_d{}_a{}{}{}", info.index, reduce_kind_name(s.kind), dtype_name(s.dtype),
                     dims_text(s.dims), axes, c.instance.specials ? "_nan" : "",
                     s.prologue.empty() ? "" : fmt::format("_prologue{}", s.prologue.steps.size()));
}

INSTANTIATE_TEST_SUITE_P(Table, ReduceCorrectness, ::testing::Range<std::size_t>(0, cases().size()), case_name);

TEST(ReduceLayout, MergesAndSplitsRuns) {
  // NCHW over N, H, W: rows of HW per (n, c), then columns of C over N.
  ReduceLayout l = reduce_layout({32, 256, 56, 56}, {0, 2, 3});
  ASSERT_EQ(l.passes.size(), 2u);
  EXPECT_EQ(l.passes[0].outer, 32 * 256);
  EXPECT_EQ(l.passes[0].length, 56 * 56);
  EXPECT_EQ(l.passes[0].inner, 1);
  EXPECT_EQ(l.passes[1].outer, 1);
  EXPECT_EQ(l.passes[1].length, 32);
  EXPECT_EQ(l.passes[1].inner, 256);
  EXPECT_EQ(l.outputs, 256);
  EXPECT_EQ(l.reduced, 32 * 56 * 56);
  // Extent-1 dimensions vanish, so H and W of [N, C, 1, W] merge with nothing between them.
  l = reduce_layout({4, 1, 3, 5}, {1, 2});
  ASSERT_EQ(l.passes.size(), 1u);
  EXPECT_EQ(l.passes[0].outer, 4);
  EXPECT_EQ(l.passes[0].length, 3);
  EXPECT_EQ(l.passes[0].inner, 5);
  // Every reduced extent 1: a map over all elements.
  l = reduce_layout({6, 1}, {1});
  ASSERT_EQ(l.passes.size(), 1u);
  EXPECT_EQ(l.passes[0].outer, 6);
  EXPECT_EQ(l.passes[0].length, 1);
  // An empty kept dimension: nothing to do.
  EXPECT_TRUE(reduce_layout({0, 5}, {1}).passes.empty());
  EXPECT_THROW(reduce_layout({5, 0}, {1}), Error);
  EXPECT_THROW(reduce_layout({5, 4}, {2}), Error);
  EXPECT_THROW(reduce_layout({1, 2, 3, 4, 5}, {0}), Error);
}

TEST(ReduceShape, JsonRoundTripsAndRejectsBadFields) {
  const ReduceShape s{
      .dims = {8, 3, 5}, .axes = {0, 2}, .keepdim = true, .kind = ReduceKind::kNorm2, .dtype = DType::kBf16};
  const ReduceShape back = ReduceShape::from_json(s.to_json());
  EXPECT_EQ(back.key(), s.key());
  EXPECT_EQ(back.dtype, DType::kBf16);
  // No axes: every dimension (PyTorch's dim=None).
  EXPECT_EQ(ReduceShape::from_json({{"dims", {4, 5}}}).axes, (std::vector<int>{0, 1}));
  EXPECT_THROW(ReduceShape::from_json({{"dims", {4, 5}}, {"kind", "median"}}), Error);
  EXPECT_THROW(ReduceShape::from_json({{"dims", {4, 5}}, {"dtype", "fp64"}}), Error);
  EXPECT_THROW(ReduceShape::from_json({{"dims", {4, 5}}, {"axes", {3}}}), Error);
  EXPECT_THROW(ReduceShape::from_json({{"dims", {4, 5, 6}}, {"axes", {0, 2}}, {"kind", "argmax"}}), Error);
  EXPECT_THROW(ReduceShape::from_json({{"dims", {4, 5}}, {"stride", 2}}), Error);
}

TEST(ReduceShape, CountsCompulsoryBytes) {
  const ReduceShape sum{.dims = {4096, 768}, .axes = {1}, .dtype = DType::kFp16};
  EXPECT_DOUBLE_EQ(sum.bytes(), 2.0 * (4096 * 768 + 4096));
  const ReduceShape arg{.dims = {64, 1000}, .axes = {1}, .kind = ReduceKind::kArgmax};
  EXPECT_DOUBLE_EQ(arg.bytes(), 4.0 * 64 * 1000 + 8.0 * 64);
}

TEST(ReduceSpace, CoveringSamplesUseEveryReachableValueAndHoldTheDefault) {
  const DeviceInfo& d = testing::test_session().device();
  for (const ReduceShape& shape : {kBigRows, kBigColumns}) {
    const SearchSpace space = reduce_space(shape, d);
    EXPECT_TRUE(space.contains(reduce_default_config(shape, d))) << space.check(reduce_default_config(shape, d));
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
  // Tiny shapes still have their default inside the space.
  for (const ReduceTestCase& c : reduce_test_cases()) {
    const SearchSpace space = reduce_space(c.shape, d);
    EXPECT_TRUE(space.contains(reduce_default_config(c.shape, d))) << c.shape.key();
  }
}

// Runs `plan` once on a fresh evaluation of `problem` and returns the verification.
VerifyResult run_modified(const ReduceProblem& problem, const std::function<void(LaunchPlan&)>& modify) {
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  LaunchPlan plan = evaluation->plan(problem.default_config(session.device()));
  modify(plan);
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  return evaluation->verify();
}

TEST(ReduceVerification, DetectsAMissingTerm) {
  // Rows one element short: every sum misses a term.
  const ReduceProblem problem({.dims = {7, 3001}, .axes = {1}});
  EXPECT_FALSE(run_modified(problem, [](LaunchPlan& p) { std::get<cl_int>(p.kernels[0].args[1]) -= 1; }).ok);
}

TEST(ReduceVerification, DetectsWritesPastTheOutput) {
  // Output offset one too far: the last result lands on the canary after the output.
  const ReduceProblem problem({.dims = {7, 30}, .axes = {1}, .kind = ReduceKind::kMax});
  const VerifyResult r = run_modified(problem, [](LaunchPlan& p) { std::get<cl_long>(p.kernels[0].args[9]) += 1; });
  // 7 outputs hold the wrong rows' results (the first none) and the canary is overwritten.
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 8u) << r.message;
}

TEST(ReduceVerification, DetectsALostNaNAndAWrongIndex) {
  // Reading one element later shifts every argmax index; with NaN inputs a max that skips an
  // element loses NaNs or gains them.
  const ReduceProblem arg({.dims = {9, 41}, .axes = {1}, .kind = ReduceKind::kArgmax}, {.input_offset = 1});
  EXPECT_FALSE(run_modified(arg, [](LaunchPlan& p) { std::get<cl_long>(p.kernels[0].args[6]) += 1; }).ok);
  const ReduceProblem max({.dims = {29, 37}, .axes = {1}, .kind = ReduceKind::kMax}, {.specials = true});
  EXPECT_FALSE(run_modified(max, [](LaunchPlan& p) { std::get<cl_int>(p.kernels[0].args[1]) -= 1; }).ok);
}

TEST(ReduceVerification, DetectsADroppedPrologue) {
  // relu(x + y) summed over rows: a plan that reads x alone misses the chain.
  ReduceShape shape = sum_over({7, 301}, {1});
  shape.prologue.steps = {{.op = ElementwiseOp::kAdd, .tensor = true}, {.op = ElementwiseOp::kRelu}};
  const ReduceProblem problem(shape);
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  // The same launch without the prologue's defines and arguments (11 of its own).
  LaunchPlan plan = evaluation->plan(problem.default_config(session.device()));
  LaunchPlan dropped = plan;
  dropped.kernels[0].args.resize(11);
  auto& defines = dropped.kernels[0].program.defines;
  std::erase_if(defines, [](const auto& d) { return d.first.rfind("PRO", 0) == 0; });
  evaluation->reset();
  enqueue(session.queue(), prepare(session, dropped));
  session.queue().finish();
  EXPECT_FALSE(evaluation->verify().ok);
  // The plan itself passes.
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  EXPECT_TRUE(evaluation->verify().ok);
}

TEST(ReduceShapeTest, PrologueKeyJsonAndRefusals) {
  ReduceShape shape = sum_over({4, 8}, {1});
  shape.prologue.steps = {{.op = ElementwiseOp::kSub, .tensor = true, .reversed = true},
                          {.op = ElementwiseOp::kMul, .scalar = 0.25f},
                          {.op = ElementwiseOp::kRelu}};
  EXPECT_EQ(shape.key(), "axes=1,dims=4x8,keepdim=0,kind=sum,prologue=rsub(t)+mul(s)+relu");
  const ReduceShape back = ReduceShape::from_json(shape.to_json());
  EXPECT_EQ(back.key(), shape.key());
  EXPECT_EQ(back.prologue.steps[1].scalar, 0.25f);
  EXPECT_EQ(sum_over({4, 8}, {1}).key(), "axes=1,dims=4x8,keepdim=0,kind=sum");  // rows without one keep their key
  // Lookups compare shapes without the prologue: a plain row is its nearest row.
  EXPECT_EQ(ReduceProblem(shape).lookup_json(), ReduceProblem(sum_over({4, 8}, {1})).lookup_json());

  auto refused = [](const nlohmann::json& j) {
    try {
      ReduceShape::from_json(j);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  nlohmann::json j = {{"dims", {4, 8}}, {"axes", {1}}, {"kind", "argmax"}, {"prologue", {{{"op", "relu"}}}}};
  EXPECT_NE(refused(j).find("argmax takes no prologue"), std::string::npos) << refused(j);
  j = {{"dims", {4, 8}}, {"axes", {1}}, {"prologue", {{{"op", "relu"}, {"tensor", true}}}}};
  EXPECT_NE(refused(j).find("unary"), std::string::npos) << refused(j);
  j = {{"dims", {4, 8}}, {"axes", {1}}, {"prologue", {{{"op", "add"}}}}};
  EXPECT_NE(refused(j).find("exactly one of tensor and scalar"), std::string::npos) << refused(j);
  j = {{"dims", {4, 8}}, {"axes", {1}}, {"prologue", {{{"op", "cube"}}}}};
  EXPECT_NE(refused(j).find("unknown prologue op 'cube'"), std::string::npos) << refused(j);
  j = {{"dims", {4, 8}},
       {"axes", {1}},
       {"prologue", nlohmann::json::array(
                        {{{"op", "relu"}}, {{"op", "relu"}}, {{"op", "relu"}}, {{"op", "relu"}}, {{"op", "relu"}}})}};
  EXPECT_NE(refused(j).find("more than 4 steps"), std::string::npos) << refused(j);
}

// The tuner prepares every finalist, then times them in turns. A finalist with more split partial
// sums grows the shared workspace and releases the buffer an earlier prepared plan was bound to;
// the earlier plan must still hold it (CI aborted in PoCL's enqueue on such a released buffer).
TEST(ReducePreparedPlan, KeepsItsWorkspaceBuffersWhenALaterPlanGrowsTheWorkspace) {
  Session& session = testing::test_session();
  const ReduceProblem problem(sum_over({16, 1 << 16}, {1}));
  std::vector<Config> split;
  for (const Config& c : problem.space(session.device()).enumerate()) {
    if (c.at("SPLIT") > 1) split.push_back(c);
  }
  ASSERT_GE(split.size(), 2u);
  const auto by_split = [](const Config& a, const Config& b) { return a.at("SPLIT") < b.at("SPLIT"); };
  const Config small = *std::min_element(split.begin(), split.end(), by_split);
  const Config large = *std::max_element(split.begin(), split.end(), by_split);
  ASSERT_LT(small.at("SPLIT"), large.at("SPLIT"));

  auto evaluation = problem.instantiate(session);
  std::vector<cl::Buffer> held;
  std::optional<PreparedPlan> prepared;
  {
    const LaunchPlan plan = evaluation->plan(small);
    for (const KernelLaunch& k : plan.kernels) {
      for (const KernelArg& a : k.args) {
        if (const auto* b = std::get_if<cl::Buffer>(&a)) held.push_back(*b);
      }
    }
    prepared = prepare(session, plan);
  }
  const PreparedPlan later = prepare(session, evaluation->plan(large));
  const auto references = [&] {
    std::vector<cl_uint> counts;
    for (const cl::Buffer& b : held) counts.push_back(b.getInfo<CL_MEM_REFERENCE_COUNT>());
    return counts;
  };
  const std::vector<cl_uint> with_plan = references();
  evaluation->reset();
  enqueue(session.queue(), *prepared);
  session.queue().finish();
  const VerifyResult check = evaluation->verify();
  EXPECT_TRUE(check.ok) << check.message;
  prepared.reset();
  const std::vector<cl_uint> without_plan = references();
  for (std::size_t i = 0; i < held.size(); ++i) EXPECT_GT(with_plan[i], without_plan[i]) << "buffer argument " << i;
}

TEST(ReduceFamily, PresetsAreMemoryBoundAndRoundTripThroughJson) {
  const OpFamily* family = find_family("reduce");
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

TEST(ReduceFamily, TunesIntoTheDatabaseInGBs) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("reduce-tune.db"));
  db.upsert_device(session.device());
  RunRow run;
  run.device_key = session.device().key();
  run.tool_version = "test";
  TuneOptions options;
  options.max_evals = 3;
  options.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
  Tuner tuner(session, db, db.begin_run(run), options, nullptr);
  const ReduceProblem problem({.dims = {33, 517}, .axes = {1}, .kind = ReduceKind::kMean, .dtype = DType::kFp16});
  const ProblemReport report = tuner.tune(problem);
  // Every evaluation verified: timed in full, or cut short as far slower than the best.
  const auto count = [&](Status status) { return report.by_status.count(status) ? report.by_status.at(status) : 0; };
  EXPECT_EQ(count(Status::kOk) + count(Status::kCut), report.evaluated);
  const auto best = db.best(session.device().key(), "reduce", "fp16", "exact", problem.shape_key());
  ASSERT_TRUE(best.has_value());
  ASSERT_TRUE(best->gbs.has_value());
  EXPECT_GT(*best->gbs, 0.0);
  EXPECT_FALSE(best->gflops.has_value());
}

}  // namespace
}  // namespace ocltune
