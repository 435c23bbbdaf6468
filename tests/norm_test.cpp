// layer_norm / batch_norm correctness, forward and backward: the odd-shape table x a covering sample
// of each kind's tuning space, against float64; shape validation; wrong kernels are caught.
#include <algorithm>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/error.h"
#include "ops/family.h"
#include "ops/norm/norm_problem.h"
#include "ops/reduce/reduce_layout.h"
#include "tests/support/covering.h"
#include "tests/support/test_session.h"
#include "tuner/evaluator.h"

namespace ocltune {
namespace {

// A shape per kind whose space reaches every value of every parameter.
NormShape big(NormKind kind) {
  if (is_batch_norm(kind)) return {.kind = kind, .dims = {64, 64, 64, 64}, .axis = 1};
  return {.kind = kind, .dims = {64, 1 << 16}, .axis = 1};
}

const std::vector<Config>& sample_configs(NormKind kind) {
  static const std::vector<std::vector<Config>> samples = [] {
    const DeviceInfo& d = testing::test_session().device();
    std::vector<std::vector<Config>> all;
    for (NormKind k : {NormKind::kLayer, NormKind::kLayerBackward, NormKind::kBatch, NormKind::kBatchBackward}) {
      all.push_back(testing::small_covering_sample(norm_space(big(k), d), norm_default_config(big(k), d)));
    }
    return all;
  }();
  return samples[static_cast<std::size_t>(kind)];
}

const std::vector<NormTestCase>& cases() {
  static const std::vector<NormTestCase> table = norm_test_cases();
  return table;
}

// Parameterised by the index into the table, which also picks a thin case's configurations.
class NormCorrectness : public ::testing::TestWithParam<std::size_t> {};

TEST_P(NormCorrectness, SampledConfigurationsMatchTheReference) {
  const NormTestCase& c = cases()[GetParam()];
  Session& session = testing::test_session();
  const NormProblem problem(c.shape, c.instance);
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  std::vector<Config> configs = testing::configs_for_case(sample_configs(c.shape.kind), GetParam(), c.thorough);
  const Config own_default = problem.default_config(session.device());
  if (std::find(configs.begin(), configs.end(), own_default) == configs.end()) configs.push_back(own_default);
  for (const Config& config : configs) {
    const EvalOutcome outcome = evaluator.evaluate(config, no_timing);
    EXPECT_EQ(outcome.status, Status::kOk)
        << problem.shape_key() << " " << dtype_name(c.shape.dtype) << " " << to_string(config) << ": " << outcome.error;
  }
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  const NormTestCase& c = cases()[info.param];
  return fmt::format("{}_{}_{}_d{}_a{}{}{}{}", info.index, norm_kind_name(c.shape.kind), dtype_name(c.shape.dtype),
                     dims_text(c.shape.dims), c.shape.axis, c.instance.specials ? "_nan" : "",
                     c.instance.shift != 0 ? fmt::format("_shift{:g}", c.instance.shift) : "",
                     c.shape.prologue.empty() ? "" : fmt::format("_prologue{}", c.shape.prologue.steps.size()));
}

INSTANTIATE_TEST_SUITE_P(Table, NormCorrectness, ::testing::Range<std::size_t>(0, cases().size()), case_name);

TEST(NormShape, JsonRoundTripsAndRejectsBadFields) {
  const NormShape s{.kind = NormKind::kLayerBackward, .dims = {8, 512, 768}, .axis = 2, .dtype = DType::kBf16};
  EXPECT_EQ(NormShape::from_json(s.to_json()).key(), s.key());
  EXPECT_EQ(NormShape::from_json({{"kind", "layer_norm"}, {"dims", {4, 5, 6}}}).axis, 2);  // default: the last dim
  EXPECT_EQ(NormShape::from_json({{"kind", "batch_norm"}, {"dims", {4, 5, 6}}}).plane(), 6);
  EXPECT_THROW(NormShape::from_json({{"kind", "group_norm"}, {"dims", {4, 5}}}), Error);
  EXPECT_THROW(NormShape::from_json({{"kind", "batch_norm"}, {"dims", {1, 5}}}), Error);  // one value per channel
  EXPECT_THROW(NormShape::from_json({{"kind", "batch_norm"}, {"dims", {4}}}), Error);
  EXPECT_THROW(NormShape::from_json({{"kind", "layer_norm"}, {"dims", {4, 0}}}), Error);
  EXPECT_THROW(NormShape::from_json({{"kind", "layer_norm"}, {"dims", {4, 5}}, {"eps", 0}}), Error);
  // A prologue: layer_norm forward only, in the key and the JSON, not in what lookups compare.
  const nlohmann::json residual = {
      {"kind", "layer_norm"}, {"dims", {4, 5}}, {"prologue", {{{"op", "add"}, {"tensor", true}}}}};
  EXPECT_EQ(NormShape::from_json(residual).key(), "axis=1,dims=4x5,kind=layer_norm,prologue=add(t)");
  EXPECT_EQ(NormShape::from_json(NormShape::from_json(residual).to_json()).key(), NormShape::from_json(residual).key());
  EXPECT_EQ(NormProblem(NormShape::from_json(residual)).lookup_json(),
            NormProblem(NormShape::from_json({{"kind", "layer_norm"}, {"dims", {4, 5}}})).lookup_json());
  for (const char* kind : {"batch_norm", "layer_norm_backward", "batch_norm_backward"}) {
    nlohmann::json other = residual;
    other["kind"] = kind;
    EXPECT_THROW(NormShape::from_json(other), Error) << kind;
  }
  // Compulsory bytes: layer_norm forward fp16 reads x, gamma, beta, writes y, mean, rstd.
  const NormShape ln{.dims = {4096, 768}, .axis = 1, .dtype = DType::kFp16};
  EXPECT_DOUBLE_EQ(ln.bytes(), 2.0 * 2 * 4096 * 768 + 2.0 * 2 * 768 + 4.0 * 2 * 4096);
}

TEST(NormSpace, CoveringSamplesUseEveryReachableValueAndHoldTheDefault) {
  const DeviceInfo& d = testing::test_session().device();
  for (NormKind k : {NormKind::kLayer, NormKind::kLayerBackward, NormKind::kBatch, NormKind::kBatchBackward}) {
    const SearchSpace space = norm_space(big(k), d);
    const std::vector<Config> all = space.enumerate();
    for (const Parameter& p : space.parameters()) {
      for (std::int64_t v : p.values) {
        bool used = false;
        for (const Config& c : sample_configs(k)) used = used || c.at(p.name) == v;
        bool reachable = false;
        for (const Config& c : all) reachable = reachable || c.at(p.name) == v;
        EXPECT_EQ(used, reachable) << norm_kind_name(k) << " " << p.name << "=" << v;
      }
    }
  }
  for (const NormTestCase& c : cases()) {
    EXPECT_TRUE(norm_space(c.shape, d).contains(norm_default_config(c.shape, d))) << c.shape.key();
  }
}

// layer_norm with each row in registers (WPR > 0) is a GPU variant (a CPU's space leaves it out),
// which the big covering shape could not reach anyway (a 2^16 row is no register row). Its
// configurations, valid in a described H200's space, run here on PoCL: odd rows (a ragged last
// vector, rows that leave part of the last work-group idle), aligned rows (whole-vector
// accesses), every storage type, offsets, NaN/Inf, rows far from 0.
TEST(LayerNormRegisters, OddAndAlignedRowsMatchTheReference) {
  Session& session = testing::test_session();
  const TimingPolicy no_timing{.warmup = 0, .min_runs = 1, .max_runs = 1};
  auto layer = [](std::vector<std::int64_t> dims, DType dtype) {
    return NormShape{.kind = NormKind::kLayer, .dims = std::move(dims), .axis = 1, .dtype = dtype};
  };
  auto cfg = [](std::int64_t wgs, std::int64_t wpr, std::int64_t vw, std::int64_t rows) {
    return Config{{"WGS", wgs}, {"WPR", wpr}, {"VW", vw}, {"ROWS", rows}};
  };
  struct Case {
    NormShape shape;
    NormInstance instance;
    Config config;
  };
  const std::vector<Case> table = {
      {layer({37, 769}, DType::kFp32), {.offset = 1}, cfg(64, 32, 4, 1)},
      {layer({37, 769}, DType::kFp32), {}, cfg(128, 16, 16, 2)},
      {layer({9, 33}, DType::kFp16), {}, cfg(32, 8, 4, 1)},
      {layer({9, 33}, DType::kFp16), {.specials = true}, cfg(32, 4, 2, 1)},
      {layer({64, 768}, DType::kFp32), {.offset = 8}, cfg(256, 32, 4, 1)},
      {layer({16, 768}, DType::kFp16), {}, cfg(64, 64, 4, 1)},
      {layer({12, 256}, DType::kBf16), {.specials = true}, cfg(32, 4, 8, 2)},
      {{.kind = NormKind::kLayer, .dims = {2, 3, 5, 7}, .axis = 2}, {}, cfg(32, 8, 1, 1)},
      // Rows near 1000 with unit noise (issue 42).
      {layer({37, 769}, DType::kFp32), {.offset = 1, .shift = 1000}, cfg(64, 32, 4, 1)},
      {layer({9, 257}, DType::kFp32), {.shift = 1000}, cfg(64, 16, 4, 1)},
  };
  for (const Case& c : table) {
    const NormProblem problem(c.shape, c.instance);
    ASSERT_TRUE(problem.space(testing::described_h200()).contains(c.config))
        << c.shape.key() << " " << to_string(c.config);
    auto evaluation = problem.instantiate(session);
    Evaluator evaluator(session, *evaluation);
    const EvalOutcome outcome = evaluator.evaluate(c.config, no_timing);
    EXPECT_EQ(outcome.status, Status::kOk) << problem.shape_key() << " " << dtype_name(c.shape.dtype) << " "
                                           << to_string(c.config) << ": " << outcome.error;
  }
}

TEST(LayerNormRegisters, OnlyAGpuSpaceHoldsTheVariantAndItsSeeds) {
  const NormShape bert{.dims = {4096, 768}, .axis = 1};
  const DeviceInfo h200 = testing::described_h200();
  const NormProblem problem(bert);
  const std::vector<Config> seeds = problem.seed_configs(h200);
  ASSERT_FALSE(seeds.empty());
  for (const Config& seed : seeds) EXPECT_TRUE(problem.space(h200).contains(seed)) << to_string(seed);
  DeviceInfo cpu = h200;
  cpu.type = DeviceType::kCpu;
  EXPECT_FALSE(problem.space(cpu).contains(seeds.front()));
  EXPECT_TRUE(problem.seed_configs(cpu).empty());
}

VerifyResult run_modified(const NormProblem& problem, const Config& config,
                          const std::function<void(LaunchPlan&)>& modify) {
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  LaunchPlan plan = evaluation->plan(config);
  modify(plan);
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  return evaluation->verify();
}

TEST(NormVerification, DetectsWrongStatistics) {
  Session& session = testing::test_session();
  // layer_norm with eps 100x too large: every rstd and every y is off.
  const NormProblem ln({.dims = {6, 300}, .axis = 1});
  const VerifyResult r = run_modified(ln, ln.default_config(session.device()),
                                      [](LaunchPlan& p) { std::get<cl_float>(p.kernels[0].args[2]) *= 100.0f; });
  EXPECT_FALSE(r.ok);
  // batch_norm reading one plane fewer per channel: statistics and running statistics are off.
  const NormProblem bn({.kind = NormKind::kBatch, .dims = {4, 3, 50}, .axis = 1});
  EXPECT_FALSE(run_modified(bn, bn.default_config(session.device()), [](LaunchPlan& p) {
                 std::get<cl_int>(p.kernels[0].args[0]) -= 1;
               }).ok);
}

TEST(NormVerification, DetectsMissingParameterGradients) {
  // layer_norm_backward without the kernel that sums dgamma/dbeta: they keep their initial contents.
  Session& session = testing::test_session();
  const NormProblem problem({.kind = NormKind::kLayerBackward, .dims = {8, 100}, .axis = 1});
  const VerifyResult r =
      run_modified(problem, problem.default_config(session.device()), [](LaunchPlan& p) { p.kernels.pop_back(); });
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("dgamma"), std::string::npos) << r.message;
}

TEST(NormFamily, PresetsAreMemoryBoundAndRoundTripThroughJson) {
  const OpFamily* family = find_family("norm");
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
