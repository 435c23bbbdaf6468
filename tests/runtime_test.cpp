// The runtime library: every level of the lookup chain, layering, GEMM calls of every layout, threads.
#include <cmath>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "harness/capability.h"
#include "ops/conv2d/conv2d_problem.h"
#include "ops/gemm/gemm_problem.h"
#include "runtime/candidate_order.h"
#include "runtime/lookup.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

using testing::HostGemm;
using testing::LogSink;

Session& session() { return testing::test_session(); }
const std::string& my_key() {
  static const std::string key = session().device().key();
  return key;
}

std::unique_ptr<Runtime> make_runtime(const std::string& user_db, const std::string& system_db,
                                      std::shared_ptr<LogSink> sink = std::make_shared<LogSink>()) {
  return std::make_unique<Runtime>(session().context(), session().device().device,
                                   testing::isolated(user_db, system_db, sink));
}

// Runs `shape` through ops::gemm and checks the result on the host; returns the decision's level.
Level run_checked(Runtime& rt, const GemmShape& shape, const GemmLayout& layout = {}) {
  HostGemm g(session().context(), shape, layout);
  const Dispatch d = ops::gemm(rt, session().queue()(), g.call());
  // One kernel, or a plan: packing passes and the GEMM, or widening, the GEMM and narrowing.
  const Config config = d.level == Level::kLibrary ? Config{} : ops::gemm_decision(rt, g.call()).config;
  const bool packed = is_wgmma_packed_config(config) || is_mma_packed_config(config);
  EXPECT_EQ(d.count, shape.dtype == DType::kFp32 && !packed ? 1u
                     : d.level == Level::kLibrary           ? 1u
                     : packed                               ? 3u
                                                            : 4u + (shape.beta != 0.0f));
  EXPECT_EQ(g.check(session().queue()), "") << shape.key();
  return d.level;
}

TEST(RuntimeLookup, BuiltinLevelWhenNoDatabaseHasAnything) {
  auto rt = make_runtime("", "");
  const GemmShape shape{.m = 37, .n = 29, .k = 19};
  EXPECT_EQ(run_checked(*rt, shape), Level::kBuiltin);
  HostGemm g(session().context(), shape);
  const Decision d = ops::gemm_decision(*rt, g.call());
  // The built-in is the cpu variant's untuned configuration on a CPU, gemm.cl's elsewhere.
  const bool cpu = session().device().type == DeviceType::kCpu;
  EXPECT_EQ(d.config, cpu ? gemm_cpu_default_config(shape) : gemm_default_config(shape)) << to_string(d.config);
  EXPECT_EQ(is_cpu_config(d.config), cpu);
  EXPECT_EQ(rt->stats().resolutions, 1u) << "the second call must hit the cache";
}

TEST(RuntimeLookup, ExactLevelUsesTheRowOfThisDeviceAndShape) {
  const GemmShape shape{.m = 40, .n = 24, .k = 31};
  const std::string user = testing::write_database(testing::temp_path("exact.db"), {session().device()},
                                                   {testing::gemm_row(my_key(), shape, testing::small_tile_config())});
  auto rt = make_runtime(user, "");
  EXPECT_EQ(run_checked(*rt, shape), Level::kExact);
  HostGemm g(session().context(), shape);
  const Decision d = ops::gemm_decision(*rt, g.call());
  EXPECT_EQ(d.config, testing::small_tile_config());
  EXPECT_NE(d.source.find("user database"), std::string::npos) << d.source;
}

TEST(RuntimeLookup, NearestLevelTakesTheClosestShapeOfTheSameLayoutAndVerifiesIt) {
  const GemmShape near{.m = 64, .n = 64, .k = 64};
  const GemmShape far{.m = 512, .n = 512, .k = 512};
  const GemmShape other_layout{.m = 60, .n = 70, .k = 64, .trans_b = true};
  const std::string user =
      testing::write_database(testing::temp_path("nearest.db"), {session().device()},
                              {testing::gemm_row(my_key(), near, testing::small_tile_config()),
                               testing::gemm_row(my_key(), far, testing::staged_tile_config()),
                               testing::gemm_row(my_key(), other_layout, testing::staged_tile_config())});
  auto rt = make_runtime(user, "");
  const GemmShape call{.m = 60, .n = 70, .k = 64};
  EXPECT_EQ(run_checked(*rt, call), Level::kNearest);
  HostGemm g(session().context(), call);
  const Decision d = ops::gemm_decision(*rt, g.call());
  EXPECT_EQ(d.config, testing::small_tile_config());
  EXPECT_TRUE(d.verified);
  EXPECT_NEAR(d.distance, std::hypot(std::log2(60.0 / 64), std::log2(70.0 / 64)), 1e-9);
  EXPECT_NE(d.source.find(near.key()), std::string::npos) << d.source;
}

TEST(RuntimeLookup, NearestLevelRespectsTheDistanceLimit) {
  const std::string user = testing::write_database(
      testing::temp_path("far.db"), {session().device()},
      {testing::gemm_row(my_key(), {.m = 4096, .n = 4096, .k = 4096}, testing::small_tile_config())});
  auto sink = std::make_shared<LogSink>();
  RuntimeOptions options = testing::isolated(user, "", sink);
  options.max_nearest_distance = 2.0;  // 4096 is 9+ doublings away from 8 in each dimension
  Runtime rt(session().context(), session().device().device, options);
  HostGemm g(session().context(), {.m = 8, .n = 8, .k = 8});
  EXPECT_EQ(ops::gemm_decision(rt, g.call()).level, Level::kBuiltin);
}

TEST(RuntimeLookup, ClassLevelUsesAnotherDeviceOfTheSameVendorAndType) {
  const DeviceInfo sibling = testing::sibling_device(session().device());
  ASSERT_NE(sibling.key(), my_key());
  ASSERT_EQ(sibling.device_class(), session().device().device_class());
  const GemmShape shape{.m = 33, .n = 17, .k = 9};
  const std::string system =
      testing::write_database(testing::temp_path("class.db"), {sibling},
                              {testing::gemm_row(sibling.key(), shape, testing::small_tile_config())});
  auto rt = make_runtime("", system);
  EXPECT_EQ(run_checked(*rt, shape), Level::kClass);
  HostGemm g(session().context(), shape);
  const Decision d = ops::gemm_decision(*rt, g.call());
  EXPECT_EQ(d.config, testing::small_tile_config());
  EXPECT_TRUE(d.verified);
  EXPECT_NE(d.source.find("system database"), std::string::npos) << d.source;
}

TEST(RuntimeLookup, UserLayerWinsOverTheSystemLayer) {
  const GemmShape shape{.m = 40, .n = 24, .k = 31};
  const std::string system =
      testing::write_database(testing::temp_path("layer-sys.db"), {session().device()},
                              {testing::gemm_row(my_key(), shape, testing::staged_tile_config(), 10)});
  const std::string user =
      testing::write_database(testing::temp_path("layer-user.db"), {session().device()},
                              {testing::gemm_row(my_key(), shape, testing::small_tile_config(), 900)});
  auto rt = make_runtime(user, system);
  HostGemm g(session().context(), shape);
  const Decision d = ops::gemm_decision(*rt, g.call());
  EXPECT_EQ(d.level, Level::kExact);
  EXPECT_EQ(d.config, testing::small_tile_config()) << "the user's row wins even when the system's is faster";
  EXPECT_EQ(rt->layer_paths(), (std::vector<std::string>{system, user}));
}

TEST(RuntimeLookup, EnvironmentVariablesNameTheLayers) {
  const GemmShape shape{.m = 40, .n = 24, .k = 31};
  const std::string user = testing::write_database(testing::temp_path("env-user.db"), {session().device()},
                                                   {testing::gemm_row(my_key(), shape, testing::small_tile_config())});
  const std::string system = testing::write_database(testing::temp_path("env-sys.db"), {}, {});
  setenv("OCLTUNE_DB", user.c_str(), 1);
  setenv("OCLTUNE_SYSTEM_DB", system.c_str(), 1);
  RuntimeOptions options;
  options.log = [](const std::string&) {};
  Runtime rt(session().context(), session().device().device, options);
  unsetenv("OCLTUNE_DB");
  unsetenv("OCLTUNE_SYSTEM_DB");
  EXPECT_EQ(rt.layer_paths(), (std::vector<std::string>{system, user}));
  HostGemm g(session().context(), shape);
  EXPECT_EQ(ops::gemm_decision(rt, g.call()).level, Level::kExact);
}

TEST(RuntimeLookup, ReloadPicksUpANewTuningResult) {
  const GemmShape shape{.m = 40, .n = 24, .k = 31};
  const std::string user = testing::temp_path("reload.db");
  auto rt = make_runtime(user, "");
  EXPECT_EQ(run_checked(*rt, shape), Level::kBuiltin);
  testing::write_database(user, {session().device()},
                          {testing::gemm_row(my_key(), shape, testing::small_tile_config())});
  EXPECT_EQ(run_checked(*rt, shape), Level::kBuiltin) << "decisions are cached until reload()";
  rt->reload();
  EXPECT_EQ(run_checked(*rt, shape), Level::kExact);
}

TEST(RuntimeLookup, ClblastIsTheConfigurableGemmFallback) {
  auto sink = std::make_shared<LogSink>();
  RuntimeOptions options = testing::isolated("", "", sink);
  options.gemm_fallback = "clblast";
  Runtime rt(session().context(), session().device().device, options);
  EXPECT_EQ(run_checked(rt, {.m = 33, .n = 17, .k = 9, .alpha = 1.5f, .beta = 0.5f}), Level::kLibrary);
  EXPECT_EQ(run_checked(rt, {.m = 19, .n = 23, .k = 29, .batch = 3, .trans_b = true}, {.lda_pad = 4, .c_offset = 8}),
            Level::kLibrary);
  options.gemm_fallback = "mkl";
  EXPECT_THROW(Runtime(session().context(), session().device().device, options), Error);

  options.gemm_fallback.clear();  // then $OCLTUNE_GEMM_FALLBACK decides
  setenv("OCLTUNE_GEMM_FALLBACK", "clblast", 1);
  Runtime from_env(session().context(), session().device().device, options);
  unsetenv("OCLTUNE_GEMM_FALLBACK");
  HostGemm g(session().context(), {.m = 5, .n = 6, .k = 7});
  EXPECT_EQ(ops::gemm_decision(from_env, g.call()).level, Level::kLibrary);
}

TEST(RuntimeGemm, EveryLayoutWithOffsetsPaddingBatchesAndScalars) {
  auto rt = make_runtime("", "");
  for (const GemmTestCase& c : gemm_test_cases()) {
    // Layouts, sizes of 1 and primes, and the scalar/offset/batch cases; the rest repeat shapes.
    if (c.shape.m * c.shape.n * c.shape.k > 50000 && c.layout.c_offset == 0) continue;
    EXPECT_EQ(run_checked(*rt, c.shape, c.layout), Level::kBuiltin) << c.shape.key();
  }
}

TEST(RuntimeGemm, ScalarsOffsetsAndBuffersMayChangeBetweenCallsOfOneShape) {
  auto rt = make_runtime("", "");
  const GemmShape shape{.m = 29, .n = 31, .k = 7};
  HostGemm first(session().context(), shape, {}, 1);
  HostGemm second(session().context(), {.m = 29, .n = 31, .k = 7, .alpha = -0.5f, .beta = 2.0f},
                  {.lda_pad = 2, .a_offset = 3, .c_offset = 5}, 2);
  for (HostGemm* g : {&first, &second, &first, &second}) {
    g->reset(session().queue());
    ops::gemm(*rt, session().queue()(), g->call());
    EXPECT_EQ(g->check(session().queue()), "");
  }
  EXPECT_EQ(rt->stats().resolutions, 1u);
}

// A tf32 row of the wgmma variant on packed operands (Hopper only): a plan of three kernels whose
// arguments (the caller's buffers, scalars and offsets; the packed scratch) are bound on every call.
TEST(RuntimeGemm, PackedTensorCoreRowServesEveryCallOfItsShape) {
  if (!satisfies(session().device(), nvidia_wgmma_tf32())) GTEST_SKIP() << "needs " << nvidia_wgmma_tf32().describe();
  const GemmShape shape{.m = 130, .n = 70, .k = 45, .batch = 2, .trans_b = true, .math = MathMode::kTf32};
  const std::string user =
      testing::write_database(testing::temp_path("packed.db"), {session().device()},
                              {testing::gemm_row(my_key(), shape, gemm_wgmma_packed_default_config())});
  auto rt = make_runtime(user, "");
  GemmShape scaled = shape;
  scaled.alpha = -0.5f;
  scaled.beta = 2.0f;
  HostGemm first(session().context(), shape, {}, 1);
  HostGemm second(session().context(), scaled, {.lda_pad = 2, .a_offset = 3, .c_offset = 5}, 2);
  for (HostGemm* g : {&first, &second, &first}) {
    g->reset(session().queue());
    EXPECT_EQ(ops::gemm(*rt, session().queue()(), g->call()).level, Level::kExact);
    EXPECT_EQ(g->check(session().queue()), "");
  }
  EXPECT_EQ(ops::gemm_decision(*rt, first.call()).config, gemm_wgmma_packed_default_config());
}

// A call that allows TF32 on a device with TF32 units tries configurations on matrix units first
// (decision 0055), keeping the lookup order within each group; only a tf32 row of the call's own
// shape, recorded faster than that shape's exact row, keeps its place before them.
TEST(RuntimeLookup, Tf32CallsTryMatrixUnitConfigurationsFirst) {
  struct Named {
    char name;
    bool units;
  };
  const auto order = [](std::vector<Named> c, bool keep_first) {
    matrix_units_first(c, keep_first, [](const Named& n) { return n.units; });
    std::string names;
    for (const Named& n : c) names += n.name;
    return names;
  };
  // exact-math row of the shape, a tf32 nearest row, an exact-math class row, the built-in.
  const std::vector<Named> found = {{'e', false}, {'n', true}, {'c', false}, {'b', true}};
  EXPECT_EQ(order(found, false), "nbec");
  EXPECT_EQ(order(found, true), "enbc");
  EXPECT_EQ(order({}, true), "");

  // What runs on matrix units: GEMM's tensor-core variants; conv2d's tensor-core algorithms and its
  // GEMM-based algorithms on a tensor-core GEMM configuration.
  const GemmProblem gemm({.m = 64, .n = 64, .k = 64, .math = MathMode::kTf32});
  EXPECT_TRUE(gemm.uses_matrix_units(gemm_wgmma_packed_default_config()));
  EXPECT_TRUE(gemm.uses_matrix_units(gemm_mma_packed_default_config()));
  EXPECT_TRUE(gemm.uses_matrix_units(gemm_mma_default_config()));
  EXPECT_FALSE(gemm.uses_matrix_units(gemm_default_config()));
  const Conv2dProblem conv(Conv2dShape{
      .n = 2, .c = 8, .h = 9, .w = 9, .k = 8, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .math = MathMode::kTf32});
  EXPECT_TRUE(conv.uses_matrix_units({{"ALGO", kAlgoIm2colTf32}}));
  EXPECT_TRUE(conv.uses_matrix_units({{"ALGO", kAlgoImplicitGemmTf32}}));
  Config on_mma = gemm_mma_default_config();
  on_mma["ALGO"] = kAlgoGemm1x1;
  EXPECT_TRUE(conv.uses_matrix_units(on_mma));
  EXPECT_FALSE(conv.uses_matrix_units({{"ALGO", kAlgoWinograd}}));
}

// A 16-bit convolution on a device with tensor cores tries the 16-bit tensor-core built-in before
// the fp32 rows it borrows (decision 0063), which compute on the FMA units; a 16-bit row of its own
// shape keeps the head (it was measured). Without tensor cores the borrowed row comes first.
TEST(RuntimeLookup, SixteenBitConvolutionsTryTensorCoresBeforeBorrowedFp32Rows) {
  const DeviceInfo h200 = testing::described_h200();
  Conv2dShape fp32{.n = 2, .c = 64, .h = 14, .w = 14, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
  Conv2dShape bf16 = fp32;
  bf16.dtype = DType::kBf16;
  const Config winograd = conv2d_default_config(fp32, kAlgoWinograd);
  const Config direct = conv2d_default_config(fp32, kAlgoDirect);
  const auto row = [&](const Conv2dShape& s, const Config& config) {
    BestRow r = testing::gemm_row(h200.key(), {}, {});
    r.op = "conv2d";
    r.dtype = dtype_name(s.dtype);
    r.shape_key = s.key();
    r.shape_json = s.to_json().dump();
    r.params_json = to_json(config).dump();
    return r;
  };
  const auto candidates = [&](const std::vector<BestRow>& rows, bool units) {
    Database db = Database::open(testing::write_database(
        testing::temp_path("sixteen-" + std::to_string(rows.size()) + (units ? "-units.db" : ".db")), {h200}, rows));
    TunedTable table(h200);
    table.add_layer(db, "user", [](const std::string& line) { ADD_FAILURE() << line; });
    return lookup_candidates(Conv2dProblem(bf16),
                             {.table = table, .device = h200, .tf32_units = units, .library = {}, .blocked = nullptr});
  };
  const std::vector<Candidate> with_units = candidates({row(fp32, winograd)}, true);
  ASSERT_EQ(with_units.size(), 2u);
  EXPECT_EQ(with_units[0].level, Level::kBuiltin);
  EXPECT_EQ(with_units[0].config.at("ALGO"), kAlgoImplicitGemmMma16);
  EXPECT_EQ(with_units[1].config, winograd);
  const std::vector<Candidate> without = candidates({row(fp32, winograd)}, false);
  ASSERT_EQ(without.size(), 2u);
  EXPECT_EQ(without[0].config, winograd);
  EXPECT_EQ(without[1].level, Level::kBuiltin);
  for (const bool units : {true, false}) {
    const std::vector<Candidate> own = candidates({row(fp32, winograd), row(bf16, direct)}, units);
    ASSERT_FALSE(own.empty());
    EXPECT_EQ(own[0].level, Level::kExact);
    EXPECT_EQ(own[0].config, direct);
  }
  // A row of the other 16-bit type comes before the fp32 rows (the same kernels); with tensor cores,
  // a tensor-core one before the built-in too.
  Conv2dShape fp16 = bf16;
  fp16.dtype = DType::kFp16;
  Config tuned16 = conv2d_default_config(bf16, kAlgoImplicitGemmMma16);
  tuned16["BK"] = 8;
  const std::vector<Candidate> other = candidates({row(fp32, winograd), row(fp16, tuned16)}, true);
  ASSERT_EQ(other.size(), 3u);
  EXPECT_EQ(other[0].config, tuned16);
  EXPECT_EQ(other[1].level, Level::kBuiltin);
  EXPECT_EQ(other[2].config, winograd);
  const std::vector<Candidate> other_direct = candidates({row(fp32, winograd), row(fp16, direct)}, false);
  ASSERT_EQ(other_direct.size(), 3u);
  EXPECT_EQ(other_direct[0].config, direct);
  EXPECT_EQ(other_direct[1].config, winograd);
  // A tensor-core row tuned before the cp.async stages (no STAGES) is the configuration it ran.
  Config before_stages = tuned16;
  ASSERT_EQ(before_stages.erase("STAGES"), 1u);
  const std::vector<Candidate> old =
      candidates({row(fp32, winograd), row(fp16, direct), row(bf16, before_stages)}, true);
  ASSERT_FALSE(old.empty());
  EXPECT_EQ(old[0].level, Level::kExact);
  EXPECT_EQ(old[0].config, tuned16);
}

// TF32 concerns fp32 tensors: a 16-bit call that allows it (PyTorch passes cuDNN's switch with every
// convolution) is the exact call, keyed with the 16-bit rows; so is any call without TF32 units.
TEST(RuntimeLookup, OnlyFp32CallsTakeTheTf32MathMode) {
  EXPECT_EQ(call_math(true, true, DType::kFp32), MathMode::kTf32);
  EXPECT_EQ(call_math(false, true, DType::kFp32), MathMode::kExact);
  EXPECT_EQ(call_math(true, false, DType::kFp32), MathMode::kExact);
  for (const DType dtype : {DType::kFp16, DType::kBf16}) EXPECT_EQ(call_math(true, true, dtype), MathMode::kExact);
}

// On a device with TF32 units, a TF32 call of a shape that has only an exact-math row runs the
// built-in tensor-core configuration, not that row (issue 38: 4096x768x3072 ran its exact row).
TEST(RuntimeGemm, Tf32CallsPreferTheTensorCoreBuiltInToAnExactRow) {
  if (!satisfies(session().device(), nvidia_mma_tf32())) GTEST_SKIP() << "needs " << nvidia_mma_tf32().describe();
  GemmShape exact{.m = 256, .n = 192, .k = 160};
  const std::string user = testing::write_database(testing::temp_path("tf32-exact-row.db"), {session().device()},
                                                   {testing::gemm_row(my_key(), exact, gemm_default_config(exact))});
  auto rt = make_runtime(user, "");
  GemmShape tf32 = exact;
  tf32.math = MathMode::kTf32;
  HostGemm g(session().context(), tf32);
  const Decision d = ops::gemm_decision(*rt, g.call());
  EXPECT_EQ(d.level, Level::kBuiltin) << d.source;
  EXPECT_TRUE(GemmProblem(tf32).uses_matrix_units(d.config)) << to_string(d.config);
  g.reset(session().queue());
  ops::gemm(*rt, session().queue()(), g.call());
  EXPECT_EQ(g.check(session().queue()), "");
  // The exact call of the same shape still runs its row.
  HostGemm e(session().context(), exact);
  EXPECT_EQ(ops::gemm_decision(*rt, e.call()).level, Level::kExact);
}

// fp16 and bf16 calls: the built-in configuration (fp32 kernels between widening and narrowing
// passes), a tuned row of their own dtype (never the fp32 row of the same shape), and CLBlast's
// HGEMM as the library fallback where the device has cl_khr_fp16 (never for bf16, which it lacks).
TEST(RuntimeGemm, HalfPrecisionCallsHaveTheirOwnRowsAndFallbacks) {
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    auto rt = make_runtime("", "");
    for (GemmShape shape : {GemmShape{.m = 33, .n = 17, .k = 9, .alpha = 1.5f, .beta = 0.5f},
                            GemmShape{.m = 19, .n = 23, .k = 29, .batch = 3, .trans_b = true}}) {
      shape.dtype = dtype;
      EXPECT_EQ(run_checked(*rt, shape, {.lda_pad = 4, .c_offset = 8}), Level::kBuiltin) << dtype_name(dtype);
    }
    GemmShape shape{.m = 40, .n = 24, .k = 31, .trans_a = true, .dtype = dtype};
    Config tuned = gemm_default_config(shape);
    tuned["KWI"] = 8;
    GemmShape fp32 = shape;
    fp32.dtype = DType::kFp32;
    const std::string user = testing::write_database(
        testing::temp_path("half.db"), {session().device()},
        {testing::gemm_row(my_key(), shape, tuned), testing::gemm_row(my_key(), fp32, gemm_default_config(shape))});
    auto tuned_rt = make_runtime(user, "");
    EXPECT_EQ(run_checked(*tuned_rt, shape), Level::kExact);
    HostGemm g(session().context(), shape);
    EXPECT_EQ(ops::gemm_decision(*tuned_rt, g.call()).config, tuned);

    RuntimeOptions options = testing::isolated("", "", std::make_shared<LogSink>());
    options.gemm_fallback = "clblast";
    Runtime library(session().context(), session().device().device, options);
    const bool hgemm = dtype == DType::kFp16 && session().device().has_extension("cl_khr_fp16");
    HostGemm h(session().context(), {.m = 33, .n = 17, .k = 9, .alpha = 1.5f, .beta = 0.5f, .dtype = dtype});
    const Dispatch d = ops::gemm(library, session().queue()(), h.call());
    EXPECT_EQ(d.level, hgemm ? Level::kLibrary : Level::kBuiltin) << dtype_name(dtype);
    // CLBlast's HGEMM accumulates in fp16: up to K units of fp16 rounding of the terms.
    EXPECT_EQ(h.check(session().queue(), hgemm ? 9 * 0x1.0p-11 : 0.0), "") << dtype_name(dtype);
  }
}

// A 16-bit plan widens C only when beta != 0: calls of one shape with a zero and a non-zero beta
// (mm and addmm) work in any order on one runtime and match the reference.
TEST(RuntimeGemm, HalfPrecisionCallsMixZeroAndNonZeroBeta) {
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    auto rt = make_runtime("", "");
    for (const float beta : {0.0f, 0.5f, 0.0f, 1.0f}) {
      HostGemm g(session().context(), {.m = 21, .n = 13, .k = 11, .beta = beta, .dtype = dtype});
      EXPECT_NO_THROW(ops::gemm(*rt, session().queue()(), g.call())) << dtype_name(dtype) << " beta " << beta;
      EXPECT_EQ(g.check(session().queue()), "") << dtype_name(dtype) << " beta " << beta;
    }
  }
}

// nn.Linear's epilogue (bias row, activation) in every storage type, through the built-in
// configuration, the product's own row (the epilogue is not part of the shape key: an exact row, no
// check), and a second call with another bias buffer and offset (the fast arguments bind them anew);
// CLBlast has no epilogue.
TEST(RuntimeGemm, EpilogueCallsMatchTheReferenceAndTakeTheProductsRows) {
  for (const DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16}) {
    auto rt = make_runtime("", "");
    for (const Activation act : {Activation::kNone, Activation::kGelu, Activation::kRelu}) {
      const GemmShape shape{
          .m = 19, .n = 23, .k = 29, .batch = 2, .trans_b = true, .dtype = dtype, .bias = true, .act = act};
      EXPECT_EQ(run_checked(*rt, shape, {.ldc_pad = 3, .c_offset = 2, .bias_offset = 5}), Level::kBuiltin)
          << shape.key() << " " << dtype_name(dtype);
    }
  }
  const GemmShape plain{.m = 40, .n = 24, .k = 31, .trans_a = true};
  Config tuned = gemm_default_config(plain);
  tuned["KWI"] = 8;
  auto rt = make_runtime(testing::write_database(testing::temp_path("epilogue.db"), {session().device()},
                                                 {testing::gemm_row(my_key(), plain, tuned)}),
                         "");
  GemmShape fused = plain;
  fused.bias = true;
  fused.act = Activation::kSigmoid;
  HostGemm first(session().context(), fused, {.bias_offset = 1}, 1);
  HostGemm second(session().context(), fused, {.c_offset = 4, .bias_offset = 9}, 2);
  for (HostGemm* g : {&first, &second, &first}) {
    g->reset(session().queue());
    EXPECT_EQ(ops::gemm(*rt, session().queue()(), g->call()).level, Level::kExact);
    EXPECT_EQ(g->check(session().queue()), "");
  }
  const Decision decision = ops::gemm_decision(*rt, first.call());
  EXPECT_EQ(decision.config, tuned);
  EXPECT_FALSE(decision.verified);
  EXPECT_EQ(rt->stats().resolutions, 1u);
  // The plain product on the same runtime: its own resolution (another plan), the same row.
  HostGemm plain_call(session().context(), plain);
  EXPECT_EQ(ops::gemm(*rt, session().queue()(), plain_call.call()).level, Level::kExact);
  EXPECT_EQ(plain_call.check(session().queue()), "");
  EXPECT_EQ(rt->stats().resolutions, 2u);

  RuntimeOptions options = testing::isolated("", "", std::make_shared<LogSink>());
  options.gemm_fallback = "clblast";
  Runtime library(session().context(), session().device().device, options);
  HostGemm h(session().context(), fused);
  EXPECT_EQ(ops::gemm(library, session().queue()(), h.call()).level, Level::kBuiltin);
  EXPECT_EQ(h.check(session().queue()), "");
}

// The nearest level compares shapes without the epilogue: a linear layer nobody tuned takes the
// nearest plain product's row, and a plain product the nearest row recorded with a bias (the
// epilogue's JSON fields once made them strangers, and eager linear layers fell to the built-in).
TEST(RuntimeGemm, NearestRowsServeCallsWithAndWithoutAnEpilogue) {
  const GemmShape tuned_plain{.m = 64, .n = 48, .k = 40, .trans_b = true};
  GemmShape tuned_biased = tuned_plain;
  tuned_biased.m = 96;
  tuned_biased.trans_b = false;
  tuned_biased.bias = true;
  tuned_biased.act = Activation::kRelu;
  Config plain_row = gemm_default_config(tuned_plain), biased_row = gemm_default_config(tuned_biased);
  plain_row["KWI"] = 8;
  biased_row["DB"] = 1 - biased_row["DB"];
  ASSERT_NE(plain_row, biased_row);
  auto rt = make_runtime(testing::write_database(testing::temp_path("epilogue_nearest.db"), {session().device()},
                                                 {testing::gemm_row(my_key(), tuned_plain, plain_row),
                                                  testing::gemm_row(my_key(), tuned_biased, biased_row)}),
                         "");
  GemmShape linear{.m = 60, .n = 50, .k = 40, .trans_b = true, .bias = true, .act = Activation::kGelu};
  GemmShape plain{.m = 90, .n = 48, .k = 44};
  for (const auto& [shape, row] : std::vector<std::pair<GemmShape, Config>>{{linear, plain_row}, {plain, biased_row}}) {
    HostGemm g(session().context(), shape);
    EXPECT_EQ(ops::gemm(*rt, session().queue()(), g.call()).level, Level::kNearest) << shape.key();
    EXPECT_EQ(g.check(session().queue()), "") << shape.key();
    EXPECT_EQ(ops::gemm_decision(*rt, g.call()).config, row) << shape.key();
  }
}

TEST(RuntimeGemm, EpilogueCallsWithoutTheirBiasOrWithAnUnknownActivationAreRefused) {
  auto rt = make_runtime("", "");
  HostGemm g(session().context(), {.m = 4, .n = 6, .k = 4, .bias = true}, {.bias_offset = 0});
  GemmCall bad = g.call();
  bad.bias = nullptr;
  EXPECT_THROW(ops::gemm(*rt, session().queue()(), bad), Error);
  bad = g.call();
  bad.bias_offset = 1;  // one element past the buffer's six
  EXPECT_THROW(ops::gemm(*rt, session().queue()(), bad), Error);
  bad = g.call();
  bad.shape.act = static_cast<Activation>(7);
  EXPECT_THROW(ops::gemm(*rt, session().queue()(), bad), Error);
  EXPECT_EQ(rt->stats().resolutions, 0u);
  EXPECT_NO_THROW(ops::gemm(*rt, session().queue()(), g.call()));
  EXPECT_EQ(g.check(session().queue()), "");
}

TEST(RuntimeGemm, EmptyCallsEnqueueAMarkerAndBadCallsAreRefused) {
  auto rt = make_runtime("", "");
  HostGemm g(session().context(), {.m = 4, .n = 4, .k = 4});
  GemmCall empty = g.call();
  empty.shape.m = 0;
  const Dispatch d = ops::gemm(*rt, session().queue()(), empty);
  ASSERT_EQ(d.count, 1u);
  d.last()->wait();
  GemmCall bad = g.call();
  bad.lda = 1;
  EXPECT_THROW(ops::gemm(*rt, session().queue()(), bad), Error);
  bad = g.call();
  bad.b = nullptr;
  EXPECT_THROW(ops::gemm(*rt, session().queue()(), bad), Error);
  bad = g.call();
  bad.shape.k = 0;
  EXPECT_THROW(ops::gemm(*rt, session().queue()(), bad), Error);
  bad = g.call();
  bad.shape.dtype = static_cast<DType>(3);
  EXPECT_THROW(ops::gemm(*rt, session().queue()(), bad), Error);
  EXPECT_EQ(rt->stats().resolutions, 0u);
}

TEST(RuntimeGemm, WaitListAndEventsOrderTheCall) {
  auto rt = make_runtime("", "");
  HostGemm g(session().context(), {.m = 31, .n = 37, .k = 41});
  cl::UserEvent gate(session().context());
  cl::CommandQueue queue(session().context(), session().device().device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  DispatchOptions options;
  const cl_event wait[] = {gate()};
  options.wait = wait;
  const Dispatch d = ops::gemm(*rt, queue(), g.call(), options);
  ASSERT_EQ(d.count, 1u);
  EXPECT_NE(d.last()->getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>(), CL_COMPLETE) << "ran before its wait list";
  gate.setStatus(CL_COMPLETE);
  d.last()->wait();
  EXPECT_EQ(g.check(queue), "");
}

TEST(RuntimeThreads, TwoThreadsDispatchAtOnce) {
  auto rt = make_runtime("", "");
  const GemmShape shared{.m = 23, .n = 19, .k = 17};
  std::string failures[2];
  auto worker = [&](int id) {
    try {
      cl::CommandQueue queue(session().context(), session().device().device);
      HostGemm same(session().context(), shared, {}, 10 + id);
      HostGemm own(session().context(), {.m = 9 + id, .n = 21, .k = 13}, {}, 20 + id);
      for (int i = 0; i < 40; ++i) {
        HostGemm& g = i % 2 ? same : own;
        g.reset(queue);
        ops::gemm(*rt, queue(), g.call(), {.wait = {}, .events = false});
        const std::string problem = g.check(queue);
        if (!problem.empty()) {
          failures[id] = problem;
          return;
        }
      }
    } catch (const std::exception& e) {
      failures[id] = e.what();
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
  EXPECT_EQ(rt->stats().resolutions, 3u) << "one resolution per distinct shape, however many threads ask";
}

}  // namespace
}  // namespace ocltune
