// conv2d correctness: the test table x every applicable algorithm, and a covering sample of each
// algorithm's space per direction, against the float64 reference; spaces, shapes and detection of
// wrong kernels.
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "db/database.h"
#include "harness/capability.h"
#include "harness/error.h"
#include "ops/conv2d/conv2d_algorithms.h"
#include "ops/conv2d/conv2d_problem.h"
#include "ops/conv2d/conv2d_reference.h"
#include "ops/family.h"
#include "tests/support/test_session.h"
#include "tests/support/tf32_model.h"
#include "tuner/evaluator.h"
#include "tuner/sampling.h"
#include "tuner/strategy.h"
#include "tuner/tuner.h"

namespace ocltune {

namespace {

const TimingPolicy kNoTiming{.warmup = 0, .min_runs = 1, .max_runs = 1};

// The variant of `space` named `name`, as a space of its own.
SearchSpace variant(const SearchSpace& space, const std::string& name) {
  for (const SearchSpace::Variant& v : space.variants()) {
    if (v.name != name) continue;
    SearchSpace out(v.name);
    for (const Parameter& p : v.parameters) out.add(p.name, p.values, p.meaning);
    for (const Constraint& c : v.constraints) out.constrain(c.description, c.params, c.holds);
    return out;
  }
  return {};
}

// The weight gradient of an ImageNet model's first layer at batch 32: 3 channels of 224x224, k filters
// of r x r at stride 2 (resnet: 64, 7, 3; mobilenet_v2: 32, 3, 1).
Conv2dShape first_layer_weight_gradient(std::int64_t k, std::int64_t r, std::int64_t pad) {
  return {.dir = ConvDirection::kBackwardWeight,
          .n = 32,
          .c = 3,
          .h = 224,
          .w = 224,
          .k = k,
          .r = r,
          .s = r,
          .stride_h = 2,
          .stride_w = 2,
          .pad_h = pad,
          .pad_w = pad};
}

void expect_all_ok(const Conv2dProblem& problem, const std::vector<Config>& configs) {
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  for (const Config& config : configs) {
    const EvalOutcome outcome = evaluator.evaluate(config, kNoTiming);
    EXPECT_EQ(outcome.status, Status::kOk) << problem.shape_key() << " " << to_string(config) << ": " << outcome.error;
  }
}

// The applicable algorithms that exist on `device`: the 16-bit tensor-core implicit GEMM only where
// it has tensor cores (the TF32 ones apply to tf32 shapes only, which the table has none of).
std::vector<std::int64_t> algorithms_on(const Conv2dShape& shape, const DeviceInfo& device) {
  std::vector<std::int64_t> algos = applicable_algorithms(shape);
  if (!satisfies(device, nvidia_mma_tf32())) std::erase(algos, kAlgoImplicitGemmMma16);
  return algos;
}

// ---- The table: every case, every direction, the untuned default of every applicable algorithm.
// One test per direction, so that the cases share the programs they build.

class Conv2dTable : public ::testing::TestWithParam<ConvDirection> {};

TEST_P(Conv2dTable, EveryAlgorithmMatchesTheReference) {
  int cases = 0;
  for (const Conv2dTestCase& c : conv2d_test_cases()) {
    if (c.shape.dir != GetParam()) continue;
    ++cases;
    const Conv2dProblem problem(c.shape, c.layout);
    const DeviceInfo& device = testing::test_session().device();
    const std::vector<Config> defaults = problem.default_configs(device);
    // One per applicable algorithm, after the CPU default on a CPU (every one verified).
    const std::optional<Config> cpu = conv2d_cpu_default_config(c.shape);
    const bool cpu_first = satisfies(device, cpu_device()) && cpu && problem.space(device).contains(*cpu);
    ASSERT_EQ(defaults.size(), algorithms_on(c.shape, device).size() + (cpu_first ? 1 : 0)) << c.shape.key();
    if (cpu_first) {
      EXPECT_EQ(defaults.front(), *cpu);
    }
    expect_all_ok(problem, defaults);
  }
  EXPECT_GE(cases, 16);
}

INSTANTIATE_TEST_SUITE_P(Directions, Conv2dTable,
                         ::testing::Values(ConvDirection::kForward, ConvDirection::kBackwardData,
                                           ConvDirection::kBackwardWeight),
                         [](const ::testing::TestParamInfo<ConvDirection>& p) { return direction_name(p.param); });

// ---- Each algorithm's space per direction: a covering sample (every value of every parameter
// compiled and verified) on a shape with odd sizes where every value is reachable.

struct SampledCase {
  std::int64_t algo;
  Conv2dShape shape;
};
void PrintTo(const SampledCase& c, std::ostream* os) {
  *os << algorithm_name(c.algo) << " " << dtype_name(c.shape.dtype) << " " << c.shape.key();
}

// Groups of two, a stride, a dilation and uneven padding; three images for uneven chunks of images.
Conv2dShape grouped_shape(ConvDirection dir, Activation forward_act) {
  return {.dir = dir,
          .n = 3,
          .c = 6,
          .h = 11,
          .w = 9,
          .k = 4,
          .r = 3,
          .s = 2,
          .stride_h = 2,
          .pad_h = 1,
          .dil_w = 2,
          .groups = 2,
          .bias = true,
          .act = dir == ConvDirection::kForward ? forward_act : Activation::kNone};
}

std::vector<SampledCase> sampled_cases() {
  const Conv2dShape general{.n = 2,
                            .c = 9,
                            .h = 19,
                            .w = 18,
                            .k = 10,
                            .r = 3,
                            .s = 3,
                            .pad_h = 1,
                            .pad_w = 1,
                            .bias = true,
                            .act = Activation::kRelu};
  // Tiles up to 128 along every GEMM dimension (of the implicit, Winograd and 1x1 GEMMs).
  const Conv2dShape wide{
      .n = 1, .c = 70, .h = 17, .w = 15, .k = 66, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .bias = true};
  const Conv2dShape pointwise{.n = 2, .c = 67, .h = 9, .w = 15, .k = 69, .r = 1, .s = 1, .bias = true};
  const Conv2dShape depthwise{.n = 2,
                              .c = 6,
                              .h = 37,
                              .w = 35,
                              .k = 12,
                              .r = 3,
                              .s = 3,
                              .pad_h = 1,
                              .pad_w = 1,
                              .groups = 6,
                              .bias = true,
                              .act = Activation::kRelu6};
  const Conv2dShape grouped = grouped_shape(ConvDirection::kForward, Activation::kRelu);
  std::vector<SampledCase> cases;
  for (const ConvDirection dir :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
    const auto in_dir = [&](Conv2dShape s) {
      s.dir = dir;
      if (dir != ConvDirection::kForward) s.act = Activation::kNone;
      return s;
    };
    cases.push_back({kAlgoDirect, in_dir(general)});
    cases.push_back({kAlgoImplicitGemm, in_dir(wide)});
    if (dir != ConvDirection::kBackwardWeight) cases.push_back({kAlgoWinograd, in_dir(wide)});
    cases.push_back({kAlgoGemm1x1, in_dir(pointwise)});
    cases.push_back({kAlgoDepthwise, in_dir(depthwise)});
    cases.push_back({kAlgoIm2col, in_dir(grouped)});
  }
  // 16-bit storage: each algorithm and direction once more, fp16 and bf16 in turn (each algorithm
  // meets both across its directions), so the staged and unstaged loads of every kernel read 16 bits.
  const std::size_t fp32_cases = cases.size();
  for (std::size_t i = 0; i < fp32_cases; ++i) {
    SampledCase c = cases[i];
    c.shape.dtype = i % 2 == 0 ? DType::kFp16 : DType::kBf16;
    cases.push_back(c);
  }
  return cases;
}

class Conv2dSampled : public ::testing::TestWithParam<SampledCase> {};

// `space` with the parameters not in `keep` fixed at their value in `base`.
SearchSpace fix_others(const SearchSpace& space, const Config& base, const std::set<std::string>& keep) {
  SearchSpace out(space.variants().front().name);
  for (const Parameter& p : space.parameters()) {
    out.add(p.name, keep.count(p.name) ? p.values : std::vector<std::int64_t>{base.at(p.name)}, p.meaning);
  }
  for (const Constraint& c : space.variants().front().constraints) out.constrain(c.description, c.params, c.holds);
  return out;
}

// The smallest covering sample over a few seeds: every value still compiled, fewer builds.
std::vector<Config> small_covering_sample(const SearchSpace& space, const Config& first) {
  std::vector<Config> best;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    std::vector<Config> sample = covering_sample(space, seed, first);
    if (best.empty() || sample.size() < best.size()) best = std::move(sample);
  }
  return best;
}

TEST_P(Conv2dSampled, EveryParameterValueMatchesTheReference) {
  const SampledCase& c = GetParam();
  const Conv2dProblem problem(c.shape);
  const SearchSpace space = variant(problem.space(testing::test_session().device()), algorithm_name(c.algo));
  ASSERT_FALSE(space.variants().empty());
  const Config first = conv2d_default_config(c.shape, c.algo);
  // The 1x1, Winograd and im2col algorithms run gemm.cl, whose every parameter value gemm_test
  // checks in all four layouts: here their own parameters are covered, plus two random full
  // configurations for the GEMM's strides, transposes and accumulation over images as this op
  // sets them.
  const bool gemm_based = c.algo == kAlgoGemm1x1 || c.algo == kAlgoWinograd || c.algo == kAlgoIm2col;
  std::set<std::string> own;
  for (const Parameter& p : space.parameters()) {
    if (!gemm_based) own.insert(p.name);
    if (c.algo == kAlgoWinograd && p.name.rfind("WINO_", 0) == 0) own.insert(p.name);
    if (c.algo == kAlgoIm2col && (p.name == "CHUNK" || p.name == "WIDE")) own.insert(p.name);
  }
  const SearchSpace covered = fix_others(space, first, own);
  std::vector<Config> sample = small_covering_sample(covered, first);
  for (const Parameter& p : covered.parameters()) {
    for (const std::int64_t v : p.values) {
      bool used = false;
      for (const Config& config : sample) used = used || config.at(p.name) == v;
      EXPECT_TRUE(used) << p.name << "=" << v << " not reachable on " << c.shape.key();
    }
  }
  if (own.size() < space.parameters().size()) {
    std::vector<Config> all = space.enumerate();
    deterministic_shuffle(all, 5);
    sample.insert(sample.end(), all.begin(), all.begin() + std::min<std::size_t>(2, all.size()));
  }
  expect_all_ok(problem, sample);
}

std::string sampled_name(const ::testing::TestParamInfo<SampledCase>& info) {
  const DType dtype = info.param.shape.dtype;
  return fmt::format("{}_{}{}", algorithm_name(info.param.algo), direction_name(info.param.shape.dir),
                     dtype == DType::kFp32 ? "" : std::string("_") + dtype_name(dtype));
}

INSTANTIATE_TEST_SUITE_P(Algorithms, Conv2dSampled, ::testing::ValuesIn(sampled_cases()), sampled_name);

// ---- Strided input gradients by stride phase (PHASED in kernels/conv2d_igemm_gather.cl): one
// dense GEMM per phase (h mod stride_h, w mod stride_w) over the taps that reach it. Shapes with
// phases whose tap lists differ in length, phases without taps (a filter narrower than its stride:
// zeros), strides that differ per axis, odd sizes that leave phases of different extents, and groups.
std::vector<Conv2dShape> phased_test_shapes() {
  const Conv2dShape taps_differ{.dir = ConvDirection::kBackwardData,
                                .n = 2,
                                .c = 6,
                                .h = 13,
                                .w = 17,
                                .k = 8,
                                .r = 3,
                                .s = 2,
                                .stride_h = 2,
                                .stride_w = 3,
                                .pad_h = 1,
                                .groups = 2};
  const Conv2dShape pointwise{.dir = ConvDirection::kBackwardData,
                              .n = 2,
                              .c = 5,
                              .h = 9,
                              .w = 12,
                              .k = 7,
                              .r = 1,
                              .s = 1,
                              .stride_h = 2,
                              .stride_w = 2};
  const Conv2dShape wide_filter{.dir = ConvDirection::kBackwardData,
                                .n = 1,
                                .c = 3,
                                .h = 16,
                                .w = 11,
                                .k = 4,
                                .r = 5,
                                .s = 5,
                                .stride_h = 3,
                                .stride_w = 2,
                                .pad_h = 2,
                                .pad_w = 1};
  return {taps_differ, pointwise, wide_filter};
}

TEST(Conv2dImplicitGemm, StridedInputGradientsByPhaseMatchTheReference) {
  const DeviceInfo& device = testing::test_session().device();
  for (const DType dtype : {DType::kFp32, DType::kFp16}) {
    for (Conv2dShape s : phased_test_shapes()) {
      s.dtype = dtype;
      ASSERT_TRUE(conv2d_detail::phased_input_gradient(s)) << s.key();
      const Conv2dProblem problem(s);
      const SearchSpace space = variant(problem.space(device), algorithm_name(kAlgoImplicitGemm));
      ASSERT_FALSE(space.variants().empty()) << s.key();
      // The default, and in fp32 two random tiles (PoCL builds each in seconds).
      std::vector<Config> configs{conv2d_default_config(s, kAlgoImplicitGemm)};
      if (dtype == DType::kFp32) {
        std::vector<Config> all = space.enumerate();
        deterministic_shuffle(all, 11);
        configs.insert(configs.end(), all.begin(), all.begin() + std::min<std::size_t>(2, all.size()));
      }
      expect_all_ok(problem, configs);
    }
  }
}

// The grid runs every phase of every group, the GEMM being phase (0, 0)'s; a dilated or unstrided
// input gradient, and the other directions, stay one GEMM per group.
TEST(Conv2dImplicitGemm, PhasedPlanCoversEveryPhase) {
  Conv2dShape s = phased_test_shapes().front();
  EXPECT_EQ(conv2d_detail::phase_count(s), 6);
  const GemmShape g = conv2d_detail::implicit_gemm(s);
  EXPECT_EQ(g.n, s.n * 7 * 6);              // ceil(13 / 2) x ceil(17 / 3) positions
  EXPECT_EQ(g.k, s.k_per_group() * 2 * 1);  // ceil(3 / 2) x ceil(2 / 3) taps
  Session& session = testing::test_session();
  const auto buffer = [&](std::int64_t elements) {
    return cl::Buffer(session.context(), CL_MEM_READ_WRITE, static_cast<std::size_t>(elements) * 4);
  };
  const Conv2dOperands o{buffer(s.input_elements()), buffer(s.weight_elements()), buffer(s.output_elements()),
                         buffer(s.k)};
  Workspace workspace(session.context());
  const LaunchPlan plan = conv2d_plan(s, o, conv2d_default_config(s, kAlgoImplicitGemm), workspace);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels.front().global.get()[2], static_cast<std::size_t>(s.groups * 6));
  const auto& defines = plan.kernels.front().program.defines;
  EXPECT_NE(std::find(defines.begin(), defines.end(), std::pair<std::string, std::string>{"PHASED", "1"}),
            defines.end());
  Conv2dShape dilated = s;
  dilated.dil_h = 2;
  EXPECT_FALSE(conv2d_detail::phased_input_gradient(dilated));
  Conv2dShape forward = s;
  forward.dir = ConvDirection::kForward;
  EXPECT_FALSE(conv2d_detail::phased_input_gradient(forward));
  Conv2dShape unstrided = s;
  unstrided.stride_h = unstrided.stride_w = 1;
  EXPECT_FALSE(conv2d_detail::phased_input_gradient(unstrided));
  EXPECT_EQ(conv2d_detail::phase_count(unstrided), 1);
}

// ---- im2col on the CPU GEMM kernel (variant im2col_gemm_cpu, the CPU default): every CHUNK and
// WIDE of three and of six images (uneven chunks, blocks of several images, a last chunk whose
// blocks are narrower than WIDE, single-chunk passes), two groups, each direction, plus random tiles.

TEST(Conv2dIm2col, CpuGemmVariantMatchesTheReferenceInEveryDirection) {
  const DeviceInfo& device = testing::test_session().device();
  if (!satisfies(device, cpu_device())) GTEST_SKIP() << "the CPU GEMM variant exists on CPU devices only";
  for (const ConvDirection dir :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
    for (const std::int64_t n : {3, 6}) {
      Conv2dShape s = grouped_shape(dir, Activation::kGelu);
      s.n = n;
      const Conv2dProblem problem(s);
      const SearchSpace space = variant(problem.space(device), "im2col_gemm_cpu");
      ASSERT_FALSE(space.variants().empty());
      const std::optional<Config> first = conv2d_cpu_default_config(s);
      ASSERT_TRUE(first.has_value());
      ASSERT_TRUE(space.contains(*first)) << space.check(*first);
      std::vector<Config> configs;
      for (const std::int64_t chunk : {1, 2, 4, 8}) {
        for (const std::int64_t wide : {1, 2, 4, 8}) {
          Config c = *first;
          c["CHUNK"] = chunk;
          c["WIDE"] = wide;
          if (wide > chunk || chunk > conv2d_detail::next_pow2(n)) continue;
          ASSERT_TRUE(space.contains(c)) << space.check(c);
          configs.push_back(c);
        }
      }
      std::vector<Config> all = space.enumerate();
      deterministic_shuffle(all, 11);
      configs.insert(configs.end(), all.begin(), all.begin() + std::min<std::size_t>(3, all.size()));
      expect_all_ok(problem, configs);
    }
  }
}

// The gathers and scatters at odd strides and padding: the CPU variant's row-wise kernels
// (conv2d_im2col_cpu, conv2d_col2im_cpu), which compute each row's padded columns from stride,
// padding and dilation, and the GPU variants' per-pixel gather (conv2d_im2col, a channel's taps
// per work-item): column strides of 1, 2 and 3, padding wider than a tap's reach (taps with no input
// column at all), dilation, a 1-pixel-wide image, the 3-channel 5x5 shape of the defaults test, and
// a 150-pixel-wide one (the 16-bit CPU scatter sums a row in chunks of 64 columns); every direction,
// one and two images per block, fp32 and bf16 tensors (fp32 im2col matrices where the GEMM variant
// would widen 16-bit ones).
TEST(Conv2dIm2col, GathersMatchTheReferenceAtOddStridesAndPadding) {
  const DeviceInfo& device = testing::test_session().device();
  const bool cpu = satisfies(device, cpu_device());
  const std::vector<Conv2dShape> shapes = {
      {.n = 2, .c = 3, .h = 19, .w = 19, .k = 5, .r = 5, .s = 5, .pad_h = 2, .pad_w = 2},
      {.n = 2, .c = 2, .h = 7, .w = 13, .k = 3, .r = 3, .s = 5, .stride_h = 1, .stride_w = 2, .pad_h = 1, .pad_w = 3},
      {.n = 2,
       .c = 3,
       .h = 9,
       .w = 4,
       .k = 2,
       .r = 2,
       .s = 5,
       .stride_h = 2,
       .stride_w = 3,
       .pad_h = 1,
       .pad_w = 4,
       .dil_w = 2},
      {.n = 2, .c = 2, .h = 6, .w = 1, .k = 3, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .dil_h = 2},
      {.n = 1, .c = 2, .h = 4, .w = 150, .k = 2, .r = 2, .s = 5, .stride_w = 2, .pad_h = 1, .pad_w = 3, .dil_w = 2},
  };
  for (const ConvDirection dir :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
    for (Conv2dShape s : shapes) {
      for (const DType dtype : {DType::kFp32, DType::kBf16}) {
        s.dir = dir;
        s.dtype = dtype;
        const Conv2dProblem problem(s);
        const SearchSpace space = problem.space(device);
        std::vector<Config> configs = {conv2d_default_config(s, kAlgoIm2col)};  // gemm.cl: the GPU gather
        if (cpu) configs.push_back(*conv2d_cpu_default_config(s));
        for (std::size_t j = 0, n = configs.size(); j < n; ++j) {
          ASSERT_TRUE(space.contains(configs[j])) << s.key() << ": " << space.check(configs[j]);
          Config pairs = configs[j];
          pairs["CHUNK"] = 2;
          pairs["WIDE"] = 2;
          if (space.contains(pairs)) configs.push_back(pairs);
        }
        expect_all_ok(problem, configs);
      }
    }
  }
}

// A 1x1 shape takes the 1x1 GEMM on a CPU, a depthwise one the direct or depthwise kernel.
TEST(Conv2dIm2col, CpuDefaultFollowsTheShape) {
  const Conv2dShape s3{.n = 2, .c = 16, .h = 9, .w = 9, .k = 8, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  EXPECT_EQ(conv2d_cpu_default_config(s3)->at("ALGO"), kAlgoIm2col);
  EXPECT_TRUE(is_cpu_config(*conv2d_cpu_default_config(s3)));
  const Conv2dShape pointwise{.n = 2, .c = 16, .h = 9, .w = 9, .k = 8};
  EXPECT_EQ(conv2d_cpu_default_config(pointwise)->at("ALGO"), kAlgoGemm1x1);
  Conv2dShape dw = s3;
  dw.k = dw.c;
  dw.groups = dw.c;
  EXPECT_FALSE(algorithm_applies(dw, kAlgoIm2col));
  const DeviceInfo& device = testing::test_session().device();
  for (const ConvDirection dir :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
    dw.dir = dir;
    const std::optional<Config> cpu = conv2d_cpu_default_config(dw);
    ASSERT_TRUE(cpu.has_value());
    EXPECT_EQ(cpu->at("ALGO"), dir == ConvDirection::kBackwardWeight ? kAlgoDepthwise : kAlgoDirect);
    EXPECT_TRUE(Conv2dProblem(dw).space(device).contains(*cpu)) << to_string(*cpu);
  }
}

// Split K (the GEMM's fma_ksplit variant, a GPU's) inside conv2d's GEMM-based weight gradients: the
// im2col GEMMs over a chunk's blocks (4 parts) and the 1x1 GEMMs over each image's pixels (2 parts)
// (conv2d's own partials in slots 8-11 and the split's in 12 must not meet), run here on the test
// device; and the H200's untuned default splits resnet's first-layer weight gradient, a GEMM of 64 x
// 147 over 12544 pixels per image (32x64 tiles: 192 work-groups for 132 SMs).
TEST(Conv2dSplitK, WeightGradientsSplitOverPixelsMatchTheReference) {
  const DeviceInfo h200 = testing::described_h200();
  const Config on_h200 = Conv2dProblem(first_layer_weight_gradient(64, 7, 3)).default_config(h200);
  EXPECT_EQ(on_h200.at("ALGO"), kAlgoIm2col);
  EXPECT_EQ(on_h200.at("KSPLIT"), 8) << to_string(on_h200);

  Conv2dShape im2col = grouped_shape(ConvDirection::kBackwardWeight, Activation::kNone);
  im2col.n = 4;
  im2col.bias = true;
  const Conv2dShape pointwise{.dir = ConvDirection::kBackwardWeight, .n = 3, .c = 5, .h = 12, .w = 11, .k = 7};
  for (const Conv2dShape& s : {im2col, pointwise}) {
    const std::int64_t algo = s.r == 1 ? kAlgoGemm1x1 : kAlgoIm2col;
    Config base = gemm_default_config();
    base["ALGO"] = algo;
    if (algo == kAlgoIm2col) {
      base["CHUNK"] = 2;
      base["WIDE"] = 2;
    }
    base["KSPLIT"] = algo == kAlgoIm2col ? 4 : 2;
    expect_all_ok(Conv2dProblem(s), {base});
  }
}

// On a GPU the first default (the runtime's built-in level) is the GEMM-based algorithm that fits
// the shape, each inside the device's space, and the other algorithms' defaults follow once each.
TEST(Conv2dDefaults, GpuDefaultFollowsTheShape) {
  const DeviceInfo h200 = testing::described_h200();
  const Conv2dShape s3{.n = 32, .c = 64, .h = 28, .w = 28, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  Conv2dShape strided = s3;
  strided.stride_h = strided.stride_w = 2;
  const Conv2dShape pointwise{.n = 32, .c = 64, .h = 28, .w = 28, .k = 128};
  Conv2dShape dw = s3;
  dw.k = dw.groups = dw.c;
  const auto first_algo = [&](Conv2dShape s, ConvDirection dir) {
    s.dir = dir;
    const Conv2dProblem problem(s);
    const std::vector<Config> defaults = problem.default_configs(h200);
    const SearchSpace space = problem.space(h200);
    EXPECT_TRUE(space.contains(defaults.front())) << space.check(defaults.front());
    std::set<std::string> distinct;
    for (const Config& c : defaults) distinct.insert(to_string(c));
    EXPECT_EQ(distinct.size(), defaults.size()) << s.key();
    return defaults.front().at("ALGO");
  };
  EXPECT_EQ(first_algo(s3, ConvDirection::kForward), kAlgoWinograd);
  EXPECT_EQ(first_algo(s3, ConvDirection::kBackwardData), kAlgoWinograd);
  EXPECT_EQ(first_algo(s3, ConvDirection::kBackwardWeight), kAlgoIm2col);
  for (const ConvDirection dir :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
    EXPECT_EQ(first_algo(strided, dir), kAlgoIm2col);
    EXPECT_EQ(first_algo(pointwise, dir), kAlgoGemm1x1);
    EXPECT_EQ(first_algo(dw, dir), kAlgoDirect);
  }
  // im2col's GPU default puts images side by side up to 1024 pixels a block: 14x14 images eight a block.
  Conv2dShape small = strided;
  small.h = small.w = 28;
  small.dir = ConvDirection::kBackwardWeight;
  const Config c = Conv2dProblem(small).default_config(h200);
  EXPECT_EQ(c.at("WIDE"), 8);  // 8 x 14 x 14 = 1568 pixels
  // Their GEMMs take the GEMM family's GPU tiles (vectors of 4 or 2, KWI = 8) where one fills the
  // H200: resnet50's layers at batch 32, each direction; the 32x32 tile of scalars where none does.
  for (const Conv2dShape& layer :
       {Conv2dShape{.n = 32, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1},
        Conv2dShape{.n = 32, .c = 256, .h = 56, .w = 56, .k = 64},
        Conv2dShape{.n = 32, .c = 512, .h = 28, .w = 28, .k = 128},
        Conv2dShape{.n = 32,
        .c = 256,
        .h = 28,
        .w = 28,
        .k = 256,
        .r = 3,
        .s = 3,
        .stride_h = 2,
        .stride_w = 2,
        .pad_h = 1,
        .pad_w = 1}}) {
    for (const ConvDirection dir :
         {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
      Conv2dShape s = layer;
      s.dir = dir;
      const Config d = Conv2dProblem(s).default_config(h200);
      EXPECT_TRUE(Conv2dProblem(s).space(h200).contains(d)) << s.key();
      // A weight gradient on im2col takes its whole batch in one chunk (one partial per block: the
      // blocks are its work-groups); the other directions chunks of up to 64 MiB of columns.
      if (d.at("ALGO") == kAlgoIm2col && dir == ConvDirection::kBackwardWeight) {
        EXPECT_EQ(d.at("CHUNK"), 32) << s.key();
      }
      if (d.at("ALGO") == kAlgoWinograd) continue;  // its GEMM space has none of the tiles' vectors
      EXPECT_EQ(d.at("KWI"), 8) << s.key() << ": " << to_string(d);
    }
  }
  const Conv2dShape tiny{.dir = ConvDirection::kBackwardWeight, .n = 1, .c = 8, .h = 8, .w = 8, .k = 8};
  EXPECT_EQ(Conv2dProblem(tiny).default_config(h200).at("KWI"), 2);
  // Its seeds: the GEMM family's GPU tiles on im2col (vectors of 4, KWI = 8), inside the space
  // (at 256 filters: the 128-row tiles need as many rows).
  small.c = small.k = 256;
  const std::vector<Config> seeds = Conv2dProblem(small).seed_configs(h200);
  ASSERT_GE(seeds.size(), 3u);
  for (const Config& seed : seeds) {
    EXPECT_EQ(seed.at("ALGO"), kAlgoIm2col);
    EXPECT_EQ(seed.at("WIDE"), 8);
    EXPECT_TRUE(Conv2dProblem(small).space(h200).contains(seed)) << to_string(seed);
  }
  // The 128x128 tile: the default itself where it fills the H200 (this shape), else a seed.
  std::vector<Config> tiles = seeds;
  tiles.push_back(Conv2dProblem(small).default_config(h200));
  EXPECT_TRUE(std::any_of(tiles.begin(), tiles.end(), [](const Config& tile) {
    return tile.at("MWG") == 128 && tile.at("VWM") == 4 && tile.at("KWI") == 8;
  }));
  EXPECT_TRUE(Conv2dProblem(small).seed_configs(testing::test_session().device()).empty() ||
              testing::test_session().device().type == DeviceType::kGpu);
}

// ---- The direct weight gradient split over images (variant direct_split): every SPLIT, chunks of
// unequal size and an empty last chunk (67 images), each against the float64 reference.

TEST(Conv2dDirectSplit, EverySplitOfTheImagesMatchesTheReference) {
  const Conv2dShape shape{.dir = ConvDirection::kBackwardWeight,
                          .n = 67,
                          .c = 3,
                          .h = 9,
                          .w = 10,
                          .k = 5,
                          .r = 3,
                          .s = 3,
                          .stride_h = 2,
                          .stride_w = 2,
                          .pad_h = 1,
                          .pad_w = 1,
                          .bias = true};
  const Conv2dProblem problem(shape);
  const SearchSpace space = variant(problem.space(testing::test_session().device()), "direct_split");
  ASSERT_FALSE(space.variants().empty());
  Config base = conv2d_default_config(shape, kAlgoDirect);
  base.erase("SPLIT");
  std::vector<Config> configs;
  for (const Parameter& p : space.parameters()) {
    if (p.name != "SPLIT") continue;
    for (const std::int64_t split : p.values) {
      Config c = base;
      c["SPLIT"] = split;
      ASSERT_TRUE(space.contains(c)) << to_string(c) << ": " << space.check(c);
      configs.push_back(c);
    }
  }
  EXPECT_EQ(configs.size(), 6u);  // 2 to 64
  expect_all_ok(problem, configs);
}

TEST(Conv2dDirectSplit, TheDefaultSplitsAFirstLayerOnly) {
  // The first layers of mobilenet_v2 and resnet at batch 32: 864 and 9408 weights, 401408 positions each.
  for (const auto& [k, r, pad] : {std::tuple{32, 3, 1}, std::tuple{64, 7, 3}}) {
    const Conv2dShape first = first_layer_weight_gradient(k, r, pad);
    const Config split = conv2d_default_config(first, kAlgoDirect);
    ASSERT_TRUE(split.count("SPLIT")) << first.key() << ": " << to_string(split);
    EXPECT_GE(split.at("SPLIT"), 4) << first.key();
    EXPECT_TRUE(Conv2dProblem(first).space(testing::test_session().device()).contains(split)) << to_string(split);
  }
  // A middle layer already has thousands of work-groups: no split.
  const Conv2dShape middle{.dir = ConvDirection::kBackwardWeight,
                           .n = 32,
                           .c = 256,
                           .h = 14,
                           .w = 14,
                           .k = 256,
                           .r = 3,
                           .s = 3,
                           .pad_h = 1,
                           .pad_w = 1};
  EXPECT_FALSE(conv2d_default_config(middle, kAlgoDirect).count("SPLIT"));
}

// ---- Spaces: inapplicable algorithms are absent, one default per applicable algorithm.

std::set<std::int64_t> algorithms_in(const SearchSpace& space) {
  std::set<std::int64_t> algos;
  for (const SearchSpace::Variant& v : space.variants()) {
    for (const Parameter& p : v.parameters) {
      if (p.name == "ALGO") algos.insert(p.values.begin(), p.values.end());
    }
  }
  return algos;
}

TEST(Conv2dSpace, HoldsExactlyTheApplicableAlgorithmsWithTheirDefaults) {
  for (const DeviceInfo& device : {testing::test_session().device(), testing::described_h200()}) {
    SCOPED_TRACE(device_type_name(device.type));
    for (const Conv2dTestCase& c : conv2d_test_cases()) {
      const SearchSpace space = conv2d_space(c.shape, device);
      const std::vector<std::int64_t> algos = algorithms_on(c.shape, device);
      EXPECT_EQ(algorithms_in(space), std::set<std::int64_t>(algos.begin(), algos.end())) << c.shape.key();
      const std::vector<Config> defaults = conv2d_default_configs(c.shape);
      ASSERT_EQ(defaults.size(), applicable_algorithms(c.shape).size());
      for (std::size_t i = 0; i < defaults.size(); ++i) {
        EXPECT_EQ(defaults[i].at("ALGO"), applicable_algorithms(c.shape)[i]);
        const bool exists = std::find(algos.begin(), algos.end(), defaults[i].at("ALGO")) != algos.end();
        EXPECT_EQ(space.contains(defaults[i]), exists) << c.shape.key() << ": " << space.check(defaults[i]);
      }
      for (const SearchSpace::Variant& v : space.variants())
        EXPECT_FALSE(variant(space, v.name).enumerate(1).empty()) << v.name;
    }
  }
}

TEST(Conv2dSpace, ApplicabilityFollowsTheShape) {
  const Conv2dShape s3{.n = 1, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  EXPECT_EQ(applicable_algorithms(s3),
            (std::vector<std::int64_t>{kAlgoDirect, kAlgoImplicitGemm, kAlgoWinograd, kAlgoIm2col}));
  Conv2dShape strided = s3;
  strided.stride_h = strided.stride_w = 2;
  EXPECT_FALSE(algorithm_applies(strided, kAlgoWinograd));
  Conv2dShape wgrad = s3;
  wgrad.dir = ConvDirection::kBackwardWeight;
  EXPECT_FALSE(algorithm_applies(wgrad, kAlgoWinograd));
  const Conv2dShape pointwise{.n = 1, .c = 64, .h = 56, .w = 56, .k = 256, .r = 1, .s = 1};
  EXPECT_TRUE(algorithm_applies(pointwise, kAlgoGemm1x1));
  Conv2dShape padded = pointwise;
  padded.pad_h = 1;
  EXPECT_FALSE(algorithm_applies(padded, kAlgoGemm1x1));
  const Conv2dShape dw{
      .n = 1, .c = 32, .h = 56, .w = 56, .k = 32, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .groups = 32};
  EXPECT_EQ(applicable_algorithms(dw), (std::vector<std::int64_t>{kAlgoDirect, kAlgoDepthwise}));
}

TEST(Conv2dSpace, NoAlgorithmCrowdsOutTheOthers) {
  // A random search draws from the union in proportion to variant sizes: keep them within 8x.
  const DeviceInfo& device = testing::test_session().device();
  const Conv2dShape s3{.n = 1, .c = 128, .h = 28, .w = 28, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  const SearchSpace space = conv2d_space(s3, device);
  std::vector<std::size_t> sizes;
  std::vector<std::string> names;
  for (const SearchSpace::Variant& v : space.variants()) {
    sizes.push_back(variant(space, v.name).enumerate().size());
    names.push_back(v.name);
  }
  std::vector<std::string> expected = {"direct", "implicit_gemm", "winograd", "im2col_gemm"};
  if (satisfies(device, cpu_device())) expected.push_back("im2col_gemm_cpu");
  ASSERT_EQ(names, expected);
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  EXPECT_GE(*lo, 100u);
  EXPECT_LE(*hi, 8 * *lo) << fmt::format("{}", fmt::join(sizes, " "));
}

// ---- Math mode "tf32": the tensor-core algorithm (and the 1x1 GEMM's tensor-core variant) only
// where the device has tensor cores; elsewhere the space and the defaults are exact mode's.

Conv2dShape with_tf32(Conv2dShape s) {
  s.math = MathMode::kTf32;
  return s;
}

TEST(Conv2dTf32, TensorCoreAlgorithmOnlyWhereTheDeviceHasIt) {
  const DeviceInfo& local = testing::test_session().device();
  const DeviceInfo h200 = testing::described_h200();
  ASSERT_TRUE(satisfies(h200, nvidia_mma_tf32()));
  for (const Conv2dTestCase& c : conv2d_test_cases()) {
    if (c.shape.dtype != DType::kFp32) continue;  // no TF32 algorithm for 16-bit storage (Conv2dSixteenBit)
    const Conv2dShape tf32 = with_tf32(c.shape);
    EXPECT_EQ(tf32.key(), c.shape.key()) << "math is in the database key, not the shape key";
    EXPECT_EQ(Conv2dProblem(tf32).math(), MathMode::kTf32);
    if (!satisfies(local, nvidia_mma_tf32())) {
      const SearchSpace exact = conv2d_space(c.shape, local), space = conv2d_space(tf32, local);
      EXPECT_EQ(algorithms_in(space), algorithms_in(exact)) << c.shape.key();
      EXPECT_EQ(space.enumerate().size(), exact.enumerate().size()) << c.shape.key();
      EXPECT_EQ(Conv2dProblem(tf32).default_configs(local), Conv2dProblem(c.shape).default_configs(local));
    }
    const SearchSpace space = conv2d_space(tf32, h200);
    EXPECT_EQ(algorithms_in(space).count(kAlgoImplicitGemmTf32), c.shape.depthwise() ? 0u : 1u) << c.shape.key();
    const bool im2col = c.shape.dir == ConvDirection::kForward && c.shape.groups == 1;
    EXPECT_EQ(algorithms_in(space).count(kAlgoIm2colTf32), im2col ? 1u : 0u) << c.shape.key();
    for (const Config& d : Conv2dProblem(tf32).default_configs(h200)) {
      EXPECT_TRUE(space.contains(d)) << c.shape.key() << ": " << space.check(d);
    }
    const bool pointwise = algorithm_applies(c.shape, kAlgoGemm1x1);
    EXPECT_EQ(!variant(space, "gemm1x1_mma_tf32").variants().empty(), pointwise) << c.shape.key();
    for (const SearchSpace::Variant& v : space.variants())
      EXPECT_FALSE(variant(space, v.name).enumerate(1).empty()) << v.name;
  }
  EXPECT_TRUE(variant(conv2d_space(conv2d_test_cases().front().shape, h200), "implicit_gemm_tf32").variants().empty())
      << "exact mode has no tensor-core algorithm";
}

TEST(Conv2dTf32, ShapeJsonCarriesTheMathMode) {
  const Conv2dShape s = with_tf32({.n = 2, .c = 8, .h = 9, .w = 7, .k = 4, .r = 3, .s = 3});
  EXPECT_EQ(s.to_json().at("math"), "tf32");
  EXPECT_EQ(Conv2dShape::from_json(s.to_json()).math, MathMode::kTf32);
  EXPECT_FALSE(Conv2dShape{}.to_json().contains("math"));
  EXPECT_THROW(Conv2dShape::from_json(nlohmann::json::parse(R"({"c": 3, "h": 5, "w": 5, "k": 2, "math": "fp16"})")),
               Error);
}

// Odd shapes for the tensor-core tests (forward, with the bias and activation the backward tests
// drop): K of 27, 603 and 134 values leaves partial K tiles (of pairs in 16 bits); 67 and 70 channels
// partial BM / BN tiles; a strided shape of 2 groups the per-group GEMMs; 16 filters and two groups
// of 32 channels the tap-outer gathers (K tiles of one tap); 4 x 33 x 31 pixels the weight
// gradient's K split.
std::vector<Conv2dShape> tensor_core_test_shapes() {
  const Conv2dShape first{.n = 2, .c = 3, .h = 21, .w = 20, .k = 16, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  const Conv2dShape wide{
      .n = 1, .c = 67, .h = 17, .w = 15, .k = 70, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .bias = true};
  const Conv2dShape strided{.n = 2,
                            .c = 10,
                            .h = 19,
                            .w = 18,
                            .k = 12,
                            .r = 3,
                            .s = 3,
                            .stride_h = 2,
                            .stride_w = 2,
                            .pad_h = 1,
                            .pad_w = 1,
                            .groups = 2,
                            .bias = true,
                            .act = Activation::kRelu};
  const Conv2dShape pointwise{.n = 2, .c = 67, .h = 9, .w = 15, .k = 69, .r = 1, .s = 1, .bias = true};
  const Conv2dShape grouped{
      .n = 2, .c = 64, .h = 9, .w = 10, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .groups = 2, .bias = true};
  const Conv2dShape long_k{.n = 4, .c = 8, .h = 33, .w = 31, .k = 16, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  // Strided input gradients by phase with tap-outer gathers (32 filters), one with empty phases.
  const Conv2dShape strided_taps{
      .n = 2, .c = 20, .h = 15, .w = 13, .k = 32, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
  const Conv2dShape strided_pointwise{
      .n = 2, .c = 24, .h = 9, .w = 11, .k = 32, .r = 1, .s = 1, .stride_h = 2, .stride_w = 2};
  // Channels-last operand copies (KMAJOR) forward (32 channels) and backward (48 filters), one group.
  const Conv2dShape channels{.n = 2, .c = 32, .h = 11, .w = 13, .k = 48, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  return {first, wide, strided, pointwise, grouped, long_k, strided_taps, strided_pointwise, channels};
}

// Every value of every tensor-core parameter, in every direction, on shapes with odd sizes (NVIDIA only).
TEST(Conv2dTf32, TensorCoreConfigurationsMatchTheReference) {
  const DeviceInfo& device = testing::test_session().device();
  if (!satisfies(device, nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  for (const ConvDirection dir :
       {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
    for (Conv2dShape s : tensor_core_test_shapes()) {
      s.dir = dir;
      if (dir != ConvDirection::kForward) s.act = Activation::kNone;
      const Conv2dProblem problem(with_tf32(s));
      const SearchSpace space = problem.space(device);
      const std::vector<Config> defaults = problem.default_configs(device);
      expect_all_ok(problem, defaults);
      for (const char* name : {"implicit_gemm_tf32", "im2col_gemm_tf32", "gemm1x1_mma_tf32", "gemm1x1_wgmma_tf32",
                               "gemm1x1_wgmma_packed_tf32"}) {
        const SearchSpace v = variant(space, name);
        if (v.variants().empty()) continue;
        expect_all_ok(problem, small_covering_sample(v, v.enumerate(1).front()));
      }
    }
  }
}

// The im2col packing pass of the im2col_gemm_tf32 algorithm is portable OpenCL: on every device,
// each image's im2col matrix (pixels x filter taps, zeros in the padding), rounded to TF32, in the
// packed GEMM layout (8-row x 4-tap core matrices along the taps), padding words included. Strides,
// padding and dilation differ per axis; the taps (3 x 3 x 2 = 18) and pixels (6 x 15 = 90) leave
// partial blocks.
// The tensor-core implicit GEMM's operand copies (KMAJOR) are portable OpenCL: on every device,
// conv2d_transpose moves each value of every plane bit for bit (32-bit words for fp32, 16-bit ones
// for bf16), with partial 32 x 32 tiles along both sides and an input offset.
TEST(Conv2dTf32, TransposeCopiesMatchTheHostModel) {
  Session& session = testing::test_session();
  const std::int64_t batches = 3, rows = 37, cols = 45, offset = 7, plane = rows * cols;
  for (const DType dtype : {DType::kFp32, DType::kBf16}) {
    const std::size_t word = dtype == DType::kFp32 ? 4 : 2;
    std::vector<std::uint8_t> in(static_cast<std::size_t>(offset + batches * plane) * word);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(batches * plane) * word, 0xAB);
    cl::Buffer in_buffer(session.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.size(), in.data());
    cl::Buffer out_buffer(session.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, out.size(), out.data());
    LaunchPlan plan;
    plan.kernels.push_back(conv2d_detail::transpose_launch(Conv2dShape{.dtype = dtype}, batches, rows, cols, in_buffer,
                                                           offset, out_buffer));
    enqueue(session.queue(), prepare(session, plan));
    session.queue().enqueueReadBuffer(out_buffer, CL_TRUE, 0, out.size(), out.data());
    int mismatches = 0;
    for (std::int64_t a = 0; a < batches; ++a) {
      for (std::int64_t b = 0; b < rows; ++b) {
        for (std::int64_t c = 0; c < cols; ++c) {
          const std::size_t from = static_cast<std::size_t>(offset + a * plane + b * cols + c) * word;
          const std::size_t to = static_cast<std::size_t>(a * plane + c * rows + b) * word;
          if (std::memcmp(&in[from], &out[to], word) != 0 && ++mismatches <= 5) {
            ADD_FAILURE() << dtype_name(dtype) << " plane " << a << " (" << b << ", " << c << ") differs";
          }
        }
      }
    }
    EXPECT_EQ(mismatches, 0) << dtype_name(dtype);
  }
}

// Where the tensor-core implicit GEMM copies its operands (KMAJOR): 16-bit tensors with the tap-outer
// order and a filter of more than one tap, forward and input gradient, get the copies ahead of the
// GEMM; a pointwise filter gathers NCHW as before (the copy would cost a pass that no tap repays), and
// so does TF32 (not measured with the copies yet). Plans only: the described H200 has the tensor
// cores this device may lack.
TEST(Conv2dTf32, ChannelsLastCopiesOnlyWhereTapsRepayThem) {
  Session& session = testing::test_session();
  const auto buffer = [&](std::int64_t elements) {
    return cl::Buffer(session.context(), CL_MEM_READ_WRITE, static_cast<std::size_t>(elements) * 4);
  };
  const Conv2dShape three{
      .n = 2, .c = 64, .h = 9, .w = 9, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .dtype = DType::kBf16};
  Conv2dShape one = three;
  one.r = one.s = 1;
  one.pad_h = one.pad_w = 0;
  for (const ConvDirection dir : {ConvDirection::kForward, ConvDirection::kBackwardData}) {
    for (Conv2dShape s : {three, one}) {
      s.dir = dir;
      const Config tile = conv2d_default_config(s, kAlgoImplicitGemmMma16);  // 64 x 64, 32 K values a tile
      ASSERT_TRUE(Conv2dProblem(s).space(testing::described_h200()).contains(tile)) << s.key();
      const Conv2dOperands o{buffer(s.input_elements()), buffer(s.weight_elements()), buffer(s.output_elements()),
                             buffer(s.k)};
      Workspace workspace(session.context());
      const LaunchPlan plan = conv2d_plan(s, o, tile, workspace);
      const bool copies = s.r * s.s > 1;
      ASSERT_EQ(plan.kernels.size(), copies ? 3u : 1u) << s.key();
      Conv2dShape tf32 = s;  // TF32: no copies yet (decision 0070)
      tf32.dtype = DType::kFp32;
      tf32.math = MathMode::kTf32;
      const Config tf32_tile = conv2d_default_config(tf32, kAlgoImplicitGemmTf32);
      ASSERT_TRUE(Conv2dProblem(tf32).space(testing::described_h200()).contains(tf32_tile)) << tf32.key();
      EXPECT_EQ(conv2d_plan(tf32, o, tf32_tile, workspace).kernels.size(), 1u) << tf32.key();
      // Copies beyond kPartialBytes (the 64 x 9 x 9 images of 32768 of them: 340 MB) are not made.
      Conv2dShape huge = s;
      huge.n = 32768;
      EXPECT_EQ(conv2d_plan(huge, o, tile, workspace).kernels.size(), 1u) << huge.key();
      EXPECT_EQ(plan.kernels.front().kernel, copies ? "conv2d_transpose" : "conv2d_igemm_mma") << s.key();
      const auto& defines = plan.kernels.back().program.defines;
      EXPECT_NE(
          std::find(defines.begin(), defines.end(), std::pair<std::string, std::string>{"KMAJOR", copies ? "1" : "0"}),
          defines.end())
          << s.key();
      // cp.async stages exist on the copies only (their rows are 16-byte pieces), with B as Bs[n][k].
      Config staged = tile;
      staged["STAGES"] = 3;
      staged["DBUF"] = 0;
      const SearchSpace space = Conv2dProblem(s).space(testing::described_h200());
      EXPECT_EQ(space.contains(staged), copies) << s.key() << ": " << space.check(staged);
      const std::vector<Config> seeds = Conv2dProblem(s).seed_configs(testing::described_h200());
      const auto staged_seeds = std::count_if(seeds.begin(), seeds.end(),
                                              [](const Config& c) { return c.count("STAGES") && c.at("STAGES") >= 2; });
      EXPECT_EQ(staged_seeds > 0, copies) << s.key();
      if (copies) {
        const auto& staged_defines = conv2d_plan(s, o, staged, workspace).kernels.back().program.defines;
        for (const auto& define : std::vector<std::pair<std::string, std::string>>{{"STAGES", "3"}, {"B_NK", "1"}}) {
          EXPECT_NE(std::find(staged_defines.begin(), staged_defines.end(), define), staged_defines.end())
              << s.key() << " " << define.first;
        }
      }
    }
  }
}

TEST(Conv2dTf32, Im2colPackMatchesTheHostModel) {
  Session& session = testing::test_session();
  const Conv2dShape s{.n = 2,
                      .c = 3,
                      .h = 11,
                      .w = 13,
                      .k = 5,
                      .r = 3,
                      .s = 2,
                      .stride_h = 2,
                      .stride_w = 1,
                      .pad_h = 1,
                      .pad_w = 2,
                      .dil_h = 1,
                      .dil_w = 2,
                      .math = MathMode::kTf32};
  const std::int64_t input_offset = 5, pq = s.p() * s.q(), crs = s.c * s.r * s.s;
  std::vector<float> x(static_cast<std::size_t>(input_offset + s.input_elements()));
  fill_uniform(x, 7);
  const PackedGemmSizes sizes = packed_gemm_sizes(conv2d_detail::im2col_gemm(s), {{"BM", 64}, {"BN", 64}});
  ASSERT_EQ(sizes.rows_b, 128);
  ASSERT_EQ(sizes.k, 64);
  const std::size_t words = static_cast<std::size_t>(s.n * sizes.rows_b * sizes.k);
  std::vector<std::uint32_t> packed(words, 0xDEADBEEFu);  // every word must be written
  Conv2dOperands o;
  o.input = cl::Buffer(session.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, x.size() * 4, x.data());
  o.input_offset = input_offset;
  cl::Buffer out(session.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, words * 4, packed.data());
  LaunchPlan plan;
  plan.kernels.push_back(conv2d_detail::im2col_pack_launch(s, o, sizes, out));
  enqueue(session.queue(), prepare(session, plan));
  session.queue().enqueueReadBuffer(out, CL_TRUE, 0, words * 4, packed.data());

  int mismatches = 0;
  for (std::int64_t n = 0; n < s.n; ++n) {
    for (std::int64_t p = 0; p < sizes.rows_b; ++p) {
      for (std::int64_t k = 0; k < sizes.k; ++k) {
        float expected = 0.0f;
        if (p < pq && k < crs) {
          const std::int64_t c = k / (s.r * s.s), r = k / s.s % s.r, t = k % s.s;
          const std::int64_t ih = p / s.q() * s.stride_h - s.pad_h + r * s.dil_h;
          const std::int64_t iw = p % s.q() * s.stride_w - s.pad_w + t * s.dil_w;
          if (ih >= 0 && ih < s.h && iw >= 0 && iw < s.w) {
            expected =
                testing::tf32_model(x[static_cast<std::size_t>(input_offset + ((n * s.c + c) * s.h + ih) * s.w + iw)]);
          }
        }
        const std::int64_t word =
            n * sizes.rows_b * sizes.k + ((p / 8) * (sizes.k / 4) + k / 4) * 32 + (p % 8) * 4 + k % 4;
        if (packed[static_cast<std::size_t>(word)] != testing::float_bits(expected) && ++mismatches <= 5) {
          ADD_FAILURE() << "image " << n << " pixel " << p << " tap " << k << ": got 0x" << std::hex
                        << packed[static_cast<std::size_t>(word)] << ", expected " << expected;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// ---- Tuning: every applicable algorithm's default measured, the winner's ALGO in `best`.

TEST(Conv2dTuning, MeasuresEachAlgorithmsDefaultAndRecordsTheWinner) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("conv2d-tune.db"));
  db.upsert_device(session.device());
  RunRow run;
  run.device_key = session.device().key();
  run.tool_version = "test";
  TuneOptions options;
  options.max_evals = 3;
  options.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
  Tuner tuner(session, db, db.begin_run(run), options, nullptr);
  const Conv2dProblem problem({.n = 1,
                               .c = 8,
                               .h = 10,
                               .w = 10,
                               .k = 8,
                               .r = 3,
                               .s = 3,
                               .pad_h = 1,
                               .pad_w = 1,
                               .bias = true,
                               .act = Activation::kRelu});
  const ProblemReport report = tuner.tune(problem);
  // The search's 3 and every default (one per algorithm, and on a CPU the CPU default).
  EXPECT_EQ(report.evaluated, 3 + static_cast<int>(problem.default_configs(session.device()).size()));

  ProgramSource source;
  source.files = problem.kernel_files();
  std::set<std::int64_t> defaults, tried;
  for (const MeasurementRow& m :
       db.measurements(session.device().key(), "conv2d", "fp32", "exact", problem.shape_key(), source.files_hash())) {
    // Verified; timed in full, or cut short as far slower than the best.
    EXPECT_TRUE(m.status == "ok" || m.status == "cut") << m.params << ": " << m.status << " " << m.error;
    const std::int64_t algo = parse_config(m.params).at("ALGO");
    tried.insert(algo);
    if (m.role == "default") defaults.insert(algo);
  }
  EXPECT_EQ(defaults, (std::set<std::int64_t>{kAlgoDirect, kAlgoImplicitGemm, kAlgoWinograd, kAlgoIm2col}));
  EXPECT_FALSE(tried.count(kAlgoGemm1x1) || tried.count(kAlgoDepthwise));  // they do not apply: never tried
  const auto best = db.best(session.device().key(), "conv2d", "fp32", "exact", problem.shape_key());
  ASSERT_TRUE(best.has_value());
  const Config winner = config_from_json(nlohmann::json::parse(best->params_json));
  EXPECT_TRUE(defaults.count(winner.at("ALGO")));
}

// ---- Shapes.

TEST(Conv2dShape, JsonRoundTripAndValidation) {
  const Conv2dShape s{.dir = ConvDirection::kBackwardData,
                      .n = 2,
                      .c = 8,
                      .h = 9,
                      .w = 7,
                      .k = 4,
                      .r = 3,
                      .s = 1,
                      .stride_h = 2,
                      .pad_h = 1,
                      .dil_w = 2,
                      .groups = 2,
                      .bias = true};
  EXPECT_EQ(Conv2dShape::from_json(s.to_json()).key(), s.key());
  EXPECT_EQ(s.p(), 5);
  EXPECT_EQ(s.q(), 7);
  const auto parse = [](const char* text) { return Conv2dShape::from_json(nlohmann::json::parse(text)); };
  EXPECT_EQ(parse(R"({"c": 3, "h": 5, "w": 5, "k": 2, "r": 3, "s": 3, "stride": 2, "pad": 1})").key(),
            "dir=fwd,n=1,c=3,hw=5x5,k=2,rs=3x3,stride=2x2,pad=1x1,dil=1x1,groups=1,bias=0,act=none");
  EXPECT_THROW(parse(R"({"c": 3, "h": 5, "w": 5, "k": 2, "r": 3, "s": 3, "groups": 2})"), Error);
  EXPECT_THROW(parse(R"({"c": 4, "h": 2, "w": 2, "k": 2, "r": 3, "s": 3})"), Error);
  EXPECT_THROW(parse(R"({"dir": "bwd_data", "c": 4, "h": 5, "w": 5, "k": 2, "r": 3, "s": 3, "act": "relu"})"), Error);
  EXPECT_THROW(parse(R"({"dir": "sideways", "c": 4, "h": 5, "w": 5, "k": 2, "r": 3, "s": 3})"), Error);
  EXPECT_THROW(parse(R"({"c": 4, "h": 5, "w": 5, "k": 2, "r": 3, "s": 3, "padding": 1})"), Error);
}

TEST(Conv2dShape, FlopsAreTwicePerMultiplyAddInEveryDirection) {
  Conv2dShape s{.n = 2, .c = 8, .h = 10, .w = 10, .k = 6, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .groups = 2};
  const double macs = 2.0 * 6 * 10 * 10 * (8 / 2) * 3 * 3;
  EXPECT_DOUBLE_EQ(s.flops(), 2 * macs);
  s.dir = ConvDirection::kBackwardData;
  EXPECT_DOUBLE_EQ(s.flops(), 2 * macs);
  s.dir = ConvDirection::kBackwardWeight;
  s.bias = true;
  EXPECT_DOUBLE_EQ(s.flops(), 2 * macs + 2.0 * 6 * 10 * 10);
}

TEST(Conv2dFamily, PresetsHoldEveryDirectionOfEveryLayer) {
  const OpFamily& family = conv2d_family();
  for (const char* preset : {"quick", "default"}) {
    const ProblemList problems = family.preset(preset);
    std::set<std::string> keys;
    int per_dir[3] = {0, 0, 0};
    for (const auto& p : problems) {
      keys.insert(p->shape_key());
      ++per_dir[static_cast<int>(static_cast<const Conv2dProblem&>(*p).shape().dir)];
    }
    EXPECT_EQ(keys.size(), problems.size()) << preset << ": duplicate shapes";
    EXPECT_EQ(per_dir[0], per_dir[1]);
    EXPECT_EQ(per_dir[0], per_dir[2]);
  }
  EXPECT_EQ(family.preset("quick").size(), 18u);
  EXPECT_EQ(family.preset("default").size(), 3u * (2 * 23 + 30 + 6));
}

// ---- Verification catches wrong kernels.

VerifyResult run_sabotaged(const Conv2dProblem& problem, const Config& config, std::size_t kernel, std::size_t arg,
                           cl_int delta) {
  Session& session = testing::test_session();
  auto evaluation = problem.instantiate(session);
  LaunchPlan plan = evaluation->plan(config);
  std::get<cl_int>(plan.kernels.at(kernel).args.at(arg)) += delta;
  evaluation->reset();
  enqueue(session.queue(), prepare(session, plan));
  session.queue().finish();
  return evaluation->verify();
}

TEST(Conv2dVerification, DetectsADroppedTermInEveryDirection) {
  // The direct kernels with one filter row (forward, backward-data) or one image (backward-weight)
  // fewer: each element misses some of its terms.
  Conv2dShape s{.n = 2, .c = 16, .h = 9, .w = 9, .k = 8, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  EXPECT_FALSE(run_sabotaged(Conv2dProblem(s), conv2d_default_config(s, kAlgoDirect), 0, 7, -1).ok);  // R
  s.dir = ConvDirection::kBackwardData;
  EXPECT_FALSE(run_sabotaged(Conv2dProblem(s), conv2d_default_config(s, kAlgoDirect), 0, 7, -1).ok);
  s.dir = ConvDirection::kBackwardWeight;
  EXPECT_FALSE(run_sabotaged(Conv2dProblem(s), conv2d_default_config(s, kAlgoDirect), 0, 0, -1).ok);  // N
  s.bias = true;
  const Conv2dProblem with_bias(s);
  const VerifyResult bias =
      run_sabotaged(with_bias, conv2d_default_config(s, kAlgoDirect), 1, 0, -1);  // bias gradient over N-1 images
  EXPECT_FALSE(bias.ok);
  EXPECT_NE(bias.message.find("bias"), std::string::npos) << bias.message;
}

TEST(Conv2dVerification, WinogradToleranceStillCatchesAMissingChannel) {
  // F(4x4,3x3) has the widest tolerance; a GEMM over one input channel fewer must still fail.
  const Conv2dShape s{.n = 1, .c = 64, .h = 12, .w = 12, .k = 8, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  Config config = conv2d_default_config(s, kAlgoWinograd);
  config["WINO_M"] = 4;
  EXPECT_FALSE(run_sabotaged(Conv2dProblem(s), config, 2, 2, -1).ok);  // gemm's K
  EXPECT_TRUE(run_sabotaged(Conv2dProblem(s), config, 2, 2, 0).ok);
}

TEST(Conv2dVerification, DetectsWritesOutsideTheOutput) {
  // One output row too many runs past the tensor into the canaries (and the next planes).
  const Conv2dShape s{.n = 1, .c = 3, .h = 6, .w = 6, .k = 2, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  const Conv2dProblem problem(s, {.output_offset = 2});
  EXPECT_FALSE(run_sabotaged(problem, conv2d_default_config(s, kAlgoDirect), 0, 5, 1).ok);  // P
}

// ---- 16-bit storage (fp16, bf16): the tensors as they are, fp32 arithmetic, one rounding of each
// result (two for the GEMM-based algorithms' GEMM outputs that go on). The table and the sampled
// cases above run every algorithm and direction in both types; here what they do not reach.

Conv2dShape with_dtype(Conv2dShape s, DType dtype) {
  s.dtype = dtype;
  return s;
}

TEST(Conv2dSixteenBit, ShapeJsonCarriesTheDtypeOnlyWhenNotFp32) {
  const Conv2dShape fp32{.n = 2, .c = 8, .h = 9, .w = 7, .k = 4, .r = 3, .s = 3};
  EXPECT_FALSE(fp32.to_json().contains("dtype"));
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    const Conv2dShape s = with_dtype(fp32, dtype);
    EXPECT_EQ(s.to_json().at("dtype"), dtype_name(dtype));
    EXPECT_EQ(Conv2dShape::from_json(s.to_json()).dtype, dtype);
    EXPECT_EQ(s.key(), fp32.key()) << "the dtype is in the database key, not the shape key";
    EXPECT_EQ(Conv2dProblem(s).dtype(), dtype);
    EXPECT_EQ(Conv2dProblem(s).matrix_inputs(), dtype_name(dtype));
    EXPECT_EQ(s.bytes() * 2, fp32.bytes());
    EXPECT_EQ(Conv2dProblem(s).device_buffers().front().bytes * 2, Conv2dProblem(fp32).device_buffers().front().bytes);
  }
  EXPECT_EQ(Conv2dShape::from_json(
                nlohmann::json::parse(R"({"c": 3, "h": 5, "w": 5, "k": 2, "r": 3, "s": 3, "dtype": "fp32"})"))
                .dtype,
            DType::kFp32);
  EXPECT_THROW(Conv2dShape::from_json(
                   nlohmann::json::parse(R"({"c": 3, "h": 5, "w": 5, "k": 2, "r": 3, "s": 3, "dtype": "fp8"})")),
               Error);
  Conv2dShape unknown = fp32;
  unknown.dtype = static_cast<DType>(7);
  EXPECT_THROW(unknown.validate(), Error);
}

// 16-bit tensors: never the TF32 algorithms (they read fp32); the 16-bit tensor-core implicit GEMM
// in either math mode where the device has tensor cores, first among the built-in configurations
// there, and absent elsewhere.
TEST(Conv2dSixteenBit, SpacesOfferTheSixteenBitTensorCoreAlgorithmOnlyWhereTheDeviceHasIt) {
  for (const DeviceInfo& device : {testing::test_session().device(), testing::described_h200()}) {
    const bool tensor_cores = satisfies(device, nvidia_mma_tf32());
    for (const Conv2dTestCase& c : conv2d_test_cases()) {
      if (c.shape.dtype == DType::kFp32) continue;
      for (const MathMode math : {MathMode::kExact, MathMode::kTf32}) {
        Conv2dShape s = c.shape;
        s.math = math;
        const SearchSpace space = conv2d_space(s, device);
        const std::set<std::int64_t> algos = algorithms_in(space);
        EXPECT_EQ(algos.count(kAlgoImplicitGemmTf32), 0u) << s.key();
        EXPECT_EQ(algos.count(kAlgoIm2colTf32), 0u) << s.key();
        const bool mma16 = tensor_cores && !s.depthwise();
        EXPECT_EQ(algos.count(kAlgoImplicitGemmMma16), mma16 ? 1u : 0u) << s.key();
        const std::vector<std::int64_t> applicable = applicable_algorithms(s);
        std::set<std::int64_t> expected(applicable.begin(), applicable.end());
        if (!tensor_cores) expected.erase(kAlgoImplicitGemmMma16);
        EXPECT_EQ(algos, expected) << s.key();
        const std::vector<Config> defaults = Conv2dProblem(s).default_configs(device);
        for (const Config& d : defaults) EXPECT_TRUE(space.contains(d)) << s.key() << ": " << space.check(d);
        if (mma16) {
          EXPECT_EQ(defaults.front().at("ALGO"), kAlgoImplicitGemmMma16) << s.key();
          EXPECT_TRUE(Conv2dProblem(s).uses_matrix_units(defaults.front()));
          const std::vector<Config> seeds = Conv2dProblem(s).seed_configs(device);
          EXPECT_FALSE(seeds.empty()) << s.key();
          for (const Config& seed : seeds) EXPECT_TRUE(space.contains(seed)) << s.key() << ": " << space.check(seed);
        }
      }
    }
  }
}

// On a device with tensor cores (the H200; skipped on PoCL): the 16-bit implicit GEMM's default
// and a covering sample of its space in every direction and 16-bit type, against float64 at
// the 16-bit tolerance, on tensor_core_test_shapes().
TEST(Conv2dSixteenBit, TensorCoreConfigurationsMatchTheReference) {
  const DeviceInfo& device = testing::test_session().device();
  if (!satisfies(device, nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    for (const ConvDirection dir :
         {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
      for (Conv2dShape s : tensor_core_test_shapes()) {
        s.dir = dir;
        s.dtype = dtype;
        if (dir != ConvDirection::kForward) s.act = Activation::kNone;
        const Conv2dProblem problem(s);
        const std::vector<Config> defaults = problem.default_configs(device);
        ASSERT_EQ(defaults.front().at("ALGO"), kAlgoImplicitGemmMma16) << s.key();
        expect_all_ok(problem, {defaults.front()});
        const SearchSpace v = variant(problem.space(device), "implicit_gemm_mma16");
        ASSERT_FALSE(v.variants().empty()) << s.key();
        // Every tunable value in bf16 (fp16 differs in the mma's and the packing's types only), the
        // seeds' larger tiles on the wide shape; each build takes NVIDIA's compiler about 0.3 s.
        if (dtype == DType::kBf16) expect_all_ok(problem, small_covering_sample(v, v.enumerate(1).front()));
        if (s.c == 67 && s.r == 3) expect_all_ok(problem, problem.seed_configs(device));  // the wide shape
      }
    }
  }
}

// On a device with tensor cores: the cp.async stages of the channels-last operands (the staged
// seeds: 2 and 3 stages, padded and swizzled, 64 to 128 wide) in both directions and 16-bit types,
// on the shapes whose operands are copied (one group or two, a strided input gradient by phases
// with an empty phase; partial tiles along M and N).
TEST(Conv2dSixteenBit, CpAsyncStagesMatchTheReference) {
  const DeviceInfo& device = testing::test_session().device();
  if (!satisfies(device, nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  std::size_t staged_configs = 0;
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    for (const ConvDirection dir : {ConvDirection::kForward, ConvDirection::kBackwardData}) {
      for (Conv2dShape s : tensor_core_test_shapes()) {
        s.dir = dir;
        s.dtype = dtype;
        if (dir != ConvDirection::kForward) s.act = Activation::kNone;
        const Conv2dProblem problem(s);
        std::vector<Config> staged;
        for (const Config& c : problem.seed_configs(device)) {
          if (c.count("STAGES") && c.at("STAGES") >= 2) staged.push_back(c);
        }
        staged_configs += staged.size();
        expect_all_ok(problem, staged);
      }
    }
  }
  EXPECT_GT(staged_configs, 0u) << "no test shape has channels-last operands";
}

// A row's source hash covers the files its plans read: every program of every applicable algorithm's
// built-in configuration, on a described H200 (its tensor-core algorithms included) and here, in each
// storage type and math mode, takes its files from the problem's kernel_files(). (The 16-bit
// tensor-core implicit GEMM's file was missing from them, so a change to it left its rows' hash.)
TEST(Conv2dSpace, PlansReadOnlyTheProblemsKernelFiles) {
  Session& session = testing::test_session();
  const auto buffer = [&](std::size_t elements) {
    return cl::Buffer(session.context(), CL_MEM_READ_WRITE, elements * 4);
  };
  for (const DeviceInfo& device : {session.device(), testing::described_h200()}) {
    for (Conv2dShape s : tensor_core_test_shapes()) {
      for (const ConvDirection dir :
           {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
        for (const auto& [dtype, math] : std::vector<std::pair<DType, MathMode>>{
                 {DType::kFp32, MathMode::kExact}, {DType::kFp32, MathMode::kTf32}, {DType::kBf16, MathMode::kExact}}) {
          s.dir = dir;
          s.dtype = dtype;
          s.math = math;
          if (dir != ConvDirection::kForward) s.act = Activation::kNone;
          const Conv2dProblem problem(s);
          const std::vector<std::string> files = problem.kernel_files();
          const Conv2dOperands o{buffer(static_cast<std::size_t>(s.input_elements())),
                                 buffer(static_cast<std::size_t>(s.weight_elements())),
                                 buffer(static_cast<std::size_t>(s.output_elements())),
                                 buffer(static_cast<std::size_t>(s.k))};
          Workspace workspace(session.context());
          for (const Config& c : problem.default_configs(device)) {
            for (const KernelLaunch& launch : conv2d_plan(s, o, c, workspace).kernels) {
              for (const std::string& f : launch.program.files) {
                EXPECT_NE(std::find(files.begin(), files.end(), f), files.end())
                    << f << " of " << to_string(c) << " for " << s.key() << " " << dtype_name(dtype) << " "
                    << math_name(math);
              }
            }
          }
        }
      }
    }
  }
}

// A kernel built for another storage type than the tensors' reads garbage: the verification must
// catch it (only programs whose elements are no wider than the buffers', so that nothing is
// accessed past them).
TEST(Conv2dSixteenBit, VerificationCatchesAProgramOfTheWrongStorageType) {
  Session& session = testing::test_session();
  const Conv2dShape base{.n = 1, .c = 5, .h = 7, .w = 6, .k = 3, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  for (const auto& [shape_dtype, program_dtype] : std::vector<std::pair<DType, DType>>{{DType::kFp16, DType::kBf16},
                                                                                       {DType::kBf16, DType::kFp16},
                                                                                       {DType::kFp32, DType::kFp16},
                                                                                       {DType::kFp32, DType::kBf16}}) {
    const Conv2dShape s = with_dtype(base, shape_dtype);
    const Conv2dProblem problem(s);
    auto evaluation = problem.instantiate(session);
    LaunchPlan plan = evaluation->plan(conv2d_default_config(s, kAlgoDirect));
    for (auto& [name, value] : plan.kernels.at(0).program.defines) {
      if (name == "DTYPE") value = dtype_define(program_dtype).second;
    }
    evaluation->reset();
    enqueue(session.queue(), prepare(session, plan));
    session.queue().finish();
    EXPECT_FALSE(evaluation->verify().ok)
        << dtype_name(shape_dtype) << " tensors, " << dtype_name(program_dtype) << " program";
  }
}

// The chunks and blocks of im2col (16-bit blocks, 16-bit partials summed in fp32 across chunks)
// and every split of the direct weight gradient (fp32 partials), in both 16-bit types.
TEST(Conv2dSixteenBit, ChunksBlocksAndSplitsMatchTheReference) {
  const DeviceInfo& device = testing::test_session().device();
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    for (const ConvDirection dir :
         {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardWeight}) {
      Conv2dShape s = with_dtype(grouped_shape(dir, Activation::kGelu), dtype);
      s.n = 6;
      const Conv2dProblem problem(s);
      const Config first = conv2d_default_config(s, kAlgoIm2col);
      const SearchSpace space = variant(problem.space(device), "im2col_gemm");
      ASSERT_FALSE(space.variants().empty());
      std::vector<Config> configs;
      for (const std::int64_t chunk : {1, 4, 8}) {
        for (const std::int64_t wide : {1, 2, 4}) {
          Config c = first;
          c["CHUNK"] = chunk;
          c["WIDE"] = wide;
          if (wide <= chunk && space.contains(c)) configs.push_back(c);
        }
      }
      EXPECT_GE(configs.size(), 6u);
      if (const std::optional<Config> cpu = conv2d_cpu_default_config(s); cpu && problem.space(device).contains(*cpu)) {
        Config c = *cpu;
        c["CHUNK"] = 4;  // two chunks of six images: the second accumulates
        c["WIDE"] = 2;
        configs.push_back(c);
      }
      expect_all_ok(problem, configs);
    }
    const Conv2dShape wgrad{.dir = ConvDirection::kBackwardWeight,
                            .n = 37,
                            .c = 3,
                            .h = 9,
                            .w = 10,
                            .k = 5,
                            .r = 3,
                            .s = 3,
                            .stride_h = 2,
                            .stride_w = 2,
                            .pad_h = 1,
                            .pad_w = 1,
                            .bias = true,
                            .dtype = dtype};
    const Conv2dProblem problem(wgrad, {.input_offset = 1, .weight_offset = 2, .output_offset = 3, .bias_offset = 4});
    std::vector<Config> configs;
    for (const std::int64_t split : {2, 8, 32}) {
      Config c = conv2d_default_config(wgrad, kAlgoDirect);
      c["SPLIT"] = split;
      ASSERT_TRUE(problem.space(device).contains(c)) << problem.space(device).check(c);
      configs.push_back(c);
    }
    expect_all_ok(problem, configs);
  }
}

TEST(Conv2dReference, WinogradFactorsComeFromTheTransforms) {
  EXPECT_NEAR(winograd_magnitude_factor(2), 64.0 / 9.0, 1e-12);
  EXPECT_NEAR(winograd_magnitude_factor(4), 256.0, 1e-9);
}

}  // namespace
}  // namespace ocltune
