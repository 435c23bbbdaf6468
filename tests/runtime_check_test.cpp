// The first-dispatch check: a borrowed configuration that computes a wrong result is blocked for
// that shape, logged, and the next level answers; with fast start, checked in the background while
// the built-in configuration serves the calls.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

using testing::HostGemm;
using testing::LogSink;

Session& session() { return testing::test_session(); }

// A driver that miscompiles one configuration: with small_tile_config() the last row of work-groups
// is never launched, so the bottom rows of C are left unwritten. Every other configuration is right.
LaunchPlan sabotage(LaunchPlan plan, const Config& config) {
  if (config != testing::small_tile_config()) return plan;
  KernelLaunch& k = plan.kernels.at(0);
  const std::size_t rows = k.global.get()[1] - k.local.get()[1];
  k.global = cl::NDRange(k.global.get()[0], rows, k.global.get()[2]);
  return plan;
}

class SabotagedEvaluation : public Evaluation {
 public:
  explicit SabotagedEvaluation(std::unique_ptr<Evaluation> inner) : inner_(std::move(inner)) {}
  LaunchPlan plan(const Config& config) override { return sabotage(inner_->plan(config), config); }
  void reset() override { inner_->reset(); }
  VerifyResult verify() override { return inner_->verify(); }

 private:
  std::unique_ptr<Evaluation> inner_;
};

class SabotagedProblem : public GemmProblem {
 public:
  using GemmProblem::GemmProblem;
  std::unique_ptr<Evaluation> instantiate(Session& s) const override {
    return std::make_unique<SabotagedEvaluation>(GemmProblem::instantiate(s));
  }
};

class SabotagedAdapter : public GemmAdapter {
 public:
  std::unique_ptr<Problem> problem_of(const GemmCall& call) const override {
    return std::make_unique<SabotagedProblem>(call.shape);
  }
  LaunchPlan plan_of(const GemmCall& call, const Config& config, Workspace& workspace) const override {
    return sabotage(GemmAdapter::plan_of(call, config, workspace), config);
  }
};

// A user database whose rows serve a 40x24x31 GEMM: a nearest shape's on this device with
// small_tile_config() (which the adapters of these tests break), a class row with a correct one.
std::string nearest_and_class_rows(const std::string& name) {
  const DeviceInfo sibling = testing::sibling_device(session().device());
  return testing::write_database(
      testing::temp_path(name), {session().device(), sibling},
      {testing::gemm_row(session().device().key(), {.m = 64, .n = 32, .k = 32}, testing::small_tile_config()),
       testing::gemm_row(sibling.key(), {.m = 48, .n = 24, .k = 32}, testing::staged_tile_config())});
}

TEST(FirstDispatchCheck, BlocksAWrongNearestConfigurationAndTheNextLevelAnswers) {
  const SabotagedAdapter adapter;
  const std::string user = nearest_and_class_rows("check.db");
  auto sink = std::make_shared<LogSink>();
  Runtime rt(session().context(), session().device().device, testing::isolated(user, "", sink));

  HostGemm g(session().context(), {.m = 40, .n = 24, .k = 31});
  const Dispatch d = rt.dispatch(adapter, gemm_shape_code(adapter, g.call()), &g.call(), session().queue()());
  EXPECT_EQ(d.level, Level::kClass);
  EXPECT_EQ(g.check(session().queue()), "") << "the answering configuration must compute the right result";

  const std::vector<BlockedConfig> blocked = rt.blocked();
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0].config, to_string(testing::small_tile_config()));
  EXPECT_EQ(blocked[0].shape_key, g.call().shape.key());
  EXPECT_NE(blocked[0].reason.find("first-dispatch check failed"), std::string::npos) << blocked[0].reason;
  EXPECT_NE(blocked[0].reason.find("nearest"), std::string::npos) << blocked[0].reason;
  EXPECT_TRUE(sink->contains("blocked for this shape")) << sink->all();

  // The decision is cached: asking again neither re-checks nor unblocks.
  const Decision again = rt.decide(adapter, gemm_shape_code(adapter, g.call()), &g.call());
  EXPECT_EQ(again.level, Level::kClass);
  EXPECT_EQ(again.config, testing::staged_tile_config());
  EXPECT_TRUE(again.verified);
  EXPECT_EQ(rt.stats().resolutions, 1u);
  // Both borrowed rows were checked, within the one resolution's time (RuntimeStats: the cold path).
  const RuntimeStats stats = rt.stats();
  EXPECT_EQ(stats.checks, 2u);
  EXPECT_GT(stats.check_seconds, 0.0);
  EXPECT_GE(stats.resolve_seconds, stats.check_seconds);
}

// A borrowed configuration whose program does not build (here: one define made invalid C in the
// call's plan, which the check builds while it makes its synthetic data) is refused with the build's
// message, and the next level answers.
class UnbuildableAdapter : public GemmAdapter {
 public:
  LaunchPlan plan_of(const GemmCall& call, const Config& config, Workspace& workspace) const override {
    LaunchPlan plan = GemmAdapter::plan_of(call, config, workspace);
    if (config != testing::small_tile_config()) return plan;
    for (auto& [name, value] : plan.kernels.at(0).program.defines) {
      if (name == "MWG") value = "(";
    }
    return plan;
  }
};

TEST(FirstDispatchCheck, RefusesABorrowedConfigurationWhoseProgramDoesNotBuild) {
  const UnbuildableAdapter adapter;
  const std::string user = nearest_and_class_rows("check-unbuildable.db");
  Runtime rt(session().context(), session().device().device, testing::isolated(user, "", std::make_shared<LogSink>()));
  HostGemm g(session().context(), {.m = 40, .n = 24, .k = 31});
  const Dispatch d = rt.dispatch(adapter, gemm_shape_code(adapter, g.call()), &g.call(), session().queue()());
  EXPECT_EQ(d.level, Level::kClass);
  EXPECT_EQ(g.check(session().queue()), "");
  const std::vector<BlockedConfig> blocked = rt.blocked();
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0].config, to_string(testing::small_tile_config()));
  EXPECT_NE(blocked[0].reason.find("first-dispatch check failed"), std::string::npos) << blocked[0].reason;
  EXPECT_NE(blocked[0].reason.find("build"), std::string::npos) << blocked[0].reason;
}

TEST(FirstDispatchCheck, FallsBackToTheBuiltinWhenNothingElseIsLeft) {
  const SabotagedAdapter adapter;
  const std::string user = testing::write_database(
      testing::temp_path("check-builtin.db"), {session().device()},
      {testing::gemm_row(session().device().key(), {.m = 64, .n = 32, .k = 32}, testing::small_tile_config())});
  auto sink = std::make_shared<LogSink>();
  Runtime rt(session().context(), session().device().device, testing::isolated(user, "", sink));
  HostGemm g(session().context(), {.m = 40, .n = 24, .k = 31});
  const Dispatch d = rt.dispatch(adapter, gemm_shape_code(adapter, g.call()), &g.call(), session().queue()());
  EXPECT_EQ(d.level, Level::kBuiltin);
  EXPECT_EQ(g.check(session().queue()), "");
  EXPECT_EQ(rt.blocked().size(), 1u);

  // The same wrong configuration with the check switched off is used, and is wrong: the check is
  // what stands between a bad borrowed configuration and the caller.
  RuntimeOptions unchecked = testing::isolated(user, "", sink);
  unchecked.verify_first_dispatch = false;
  Runtime trusting(session().context(), session().device().device, unchecked);
  HostGemm h(session().context(), {.m = 40, .n = 24, .k = 31});
  const Dispatch e = trusting.dispatch(adapter, gemm_shape_code(adapter, h.call()), &h.call(), session().queue()());
  EXPECT_EQ(e.level, Level::kNearest);
  EXPECT_NE(h.check(session().queue()), "");
}

// A family without a fast binder: the plan runs on every call.
class PlanEveryCallAdapter : public GemmAdapter {
 public:
  bool fast_args_of(const GemmCall&, std::span<const RawArgs>, std::span<RawArgs>) const override { return false; }
};

// A fast binder that disagrees with the plan (alpha and beta swapped): caught on the first call.
class WrongFastArgsAdapter : public GemmAdapter {
 public:
  bool fast_args_of(const GemmCall& call, std::span<const RawArgs> resolved, std::span<RawArgs> steps) const override {
    GemmAdapter::fast_args_of(call, resolved, steps);
    std::swap(steps[0].args[3], steps[0].args[4]);
    return true;
  }
};

TEST(AdapterSafety, WithoutFastArgumentsThePlanRunsOnEveryCall) {
  const PlanEveryCallAdapter adapter;
  auto sink = std::make_shared<LogSink>();
  Runtime rt(session().context(), session().device().device, testing::isolated("", "", sink));
  for (float beta : {0.0f, 0.5f}) {
    HostGemm g(session().context(), {.m = 21, .n = 13, .k = 9, .alpha = 2.0f, .beta = beta});
    rt.dispatch(adapter, gemm_shape_code(adapter, g.call()), &g.call(), session().queue()());
    EXPECT_EQ(g.check(session().queue()), "");
  }
}

TEST(AdapterSafety, FastArgumentsThatDifferFromThePlanAreNotUsed) {
  const WrongFastArgsAdapter adapter;
  auto sink = std::make_shared<LogSink>();
  Runtime rt(session().context(), session().device().device, testing::isolated("", "", sink));
  HostGemm g(session().context(), {.m = 21, .n = 13, .k = 9, .alpha = 2.0f, .beta = 0.5f});
  rt.dispatch(adapter, gemm_shape_code(adapter, g.call()), &g.call(), session().queue()());
  EXPECT_EQ(g.check(session().queue()), "");
  EXPECT_TRUE(sink->contains("fast arguments differ")) << sink->all();
}

}  // namespace
}  // namespace ocltune

namespace ocltune {
namespace {

// A passed check is remembered for later processes (a new runtime here): the same borrowed
// configuration on the same shape runs without a check and is still right; a configuration whose
// check failed is not remembered and is checked (and refused) again; a torn or foreign line in the
// record costs nothing but a check.
TEST(FirstDispatchCheck, ALaterRuntimeRemembersPassedChecksOnly) {
  const SabotagedAdapter adapter;
  const std::string key = session().device().key();
  const DeviceInfo sibling = testing::sibling_device(session().device());
  const std::string user = testing::write_database(
      testing::temp_path("check-remembered.db"), {session().device(), sibling},
      {testing::gemm_row(key, {.m = 64, .n = 32, .k = 32}, testing::small_tile_config()),
       testing::gemm_row(sibling.key(), {.m = 48, .n = 24, .k = 32}, testing::staged_tile_config())});
  const std::string record = testing::temp_path("checks.txt");
  std::filesystem::remove(record);
  auto sink = std::make_shared<LogSink>();
  RuntimeOptions options = testing::isolated(user, "", sink);
  options.check_record = record;
  const auto run = [&](std::uint64_t checks, std::uint64_t remembered) {
    Runtime rt(session().context(), session().device().device, options);
    HostGemm g(session().context(), {.m = 40, .n = 24, .k = 31});
    const Dispatch d = rt.dispatch(adapter, gemm_shape_code(adapter, g.call()), &g.call(), session().queue()());
    EXPECT_EQ(d.level, Level::kClass);
    EXPECT_EQ(g.check(session().queue()), "");
    const Decision decision = rt.decide(adapter, gemm_shape_code(adapter, g.call()), &g.call());
    EXPECT_EQ(decision.config, testing::staged_tile_config());
    EXPECT_TRUE(decision.verified);
    EXPECT_EQ(rt.blocked().size(), 1u) << "the sabotaged configuration is refused in every process";
    EXPECT_EQ(rt.stats().checks, checks);
    EXPECT_EQ(rt.stats().checks_remembered, remembered);
  };
  run(2, 0);  // both borrowed rows checked; the good one's pass is written down
  {
    std::ifstream in(record);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) ++lines;
    EXPECT_EQ(lines, 1) << "only the passed check";
  }
  run(1, 1);  // the sabotaged row is checked again, the good one is not
  // Garbage before the good line and a torn line after it: the good line still counts.
  {
    std::ifstream in(record);
    std::string good;
    std::getline(in, good);
    std::ofstream out(record, std::ios::trunc);
    out << "not a key\ncheck1 zzzzzzzzzzzzzzzz\n" << good << "\ncheck1 0123";
  }
  run(1, 1);
  // An unreadable record (a directory) means checking, not failing.
  std::filesystem::remove(record);
  std::filesystem::create_directories(record);
  run(2, 0);
  std::filesystem::remove_all(record);
}

// ---- Fast start (RuntimeOptions::fast_start) ----

RuntimeOptions fast_start(const std::string& user_db) {
  RuntimeOptions options = testing::isolated(user_db, "", std::make_shared<LogSink>());
  options.fast_start = 1;
  return options;
}

// The built-in configuration serves the first call while the borrowed rows are checked in the
// background; the wrong one is refused there, and the calls after the upgrade run the right one.
TEST(FastStart, TheBuiltinServesWhileBorrowedRowsAreCheckedInTheBackground) {
  const SabotagedAdapter adapter;
  Runtime rt(session().context(), session().device().device, fast_start(nearest_and_class_rows("fast-start.db")));
  HostGemm g(session().context(), {.m = 40, .n = 24, .k = 31});
  const ShapeCode code = gemm_shape_code(adapter, g.call());
  EXPECT_EQ(rt.dispatch(adapter, code, &g.call(), session().queue()()).level, Level::kBuiltin);
  EXPECT_EQ(g.check(session().queue()), "");
  rt.wait_for_upgrades();
  EXPECT_EQ(rt.stats().provisional, 1u);
  EXPECT_EQ(rt.stats().checks, 2u);
  const std::vector<BlockedConfig> blocked = rt.blocked();
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0].config, to_string(testing::small_tile_config()));
  EXPECT_NE(blocked[0].reason.find("first-dispatch check failed"), std::string::npos) << blocked[0].reason;
  g.reset(session().queue());
  EXPECT_EQ(rt.dispatch(adapter, code, &g.call(), session().queue()()).level, Level::kClass);
  EXPECT_EQ(g.check(session().queue()), "");
  const Decision decision = rt.decide(adapter, code, &g.call());
  EXPECT_EQ(decision.config, testing::staged_tile_config());
  EXPECT_TRUE(decision.verified);
  const RuntimeStats stats = rt.stats();
  EXPECT_EQ(stats.upgrades, 1u);
  EXPECT_EQ(stats.checks, 2u) << "the upgrade's resolution found the check passed, not checked again";
  std::uint64_t calls = 0;
  for (const DispatchedProblem& p : rt.dispatched_problems()) calls += p.total();
  EXPECT_EQ(calls, 2u) << "the provisional entry's call is still counted";
}

// A configuration that is ready resolves at once: its programs built in this runtime (the second
// shape of a row's configuration, once the first one's upgrade built them), or in the binary cache
// (a later process: a warm start loads them rather than building the built-in's).
TEST(FastStart, AReadyConfigurationResolvesWithoutTheBuiltin) {
  const GemmAdapter adapter;
  const std::string key = session().device().key();
  const GemmShape first{.m = 40, .n = 24, .k = 31}, second{.m = 41, .n = 24, .k = 31};
  const std::string user = testing::write_database(testing::temp_path("fast-start-ready.db"), {session().device()},
                                                   {testing::gemm_row(key, first, testing::staged_tile_config()),
                                                    testing::gemm_row(key, second, testing::staged_tile_config())});
  const std::string binaries = user + "-binaries";  // a folder: temp_path removes files only
  std::filesystem::remove_all(binaries);
  const char* previous = std::getenv("OCLTUNE_BINARY_CACHE");
  const std::string restore = previous ? previous : "";
  setenv("OCLTUNE_BINARY_CACHE", binaries.c_str(), 1);  // the runtimes' binary cache: empty at first
  {
    Runtime rt(session().context(), session().device().device, fast_start(user));
    HostGemm a(session().context(), first), b(session().context(), second);
    EXPECT_EQ(rt.dispatch(adapter, gemm_shape_code(adapter, a.call()), &a.call(), session().queue()()).level,
              Level::kBuiltin);
    rt.wait_for_upgrades();
    EXPECT_EQ(rt.dispatch(adapter, gemm_shape_code(adapter, b.call()), &b.call(), session().queue()()).level,
              Level::kExact);
    EXPECT_EQ(b.check(session().queue()), "");
    EXPECT_EQ(rt.stats().provisional, 1u);
    EXPECT_EQ(rt.stats().checks, 0u) << "exact rows of this device are not checked";
  }
  {
    Runtime later(session().context(), session().device().device, fast_start(user));
    HostGemm a(session().context(), first);
    EXPECT_EQ(later.dispatch(adapter, gemm_shape_code(adapter, a.call()), &a.call(), session().queue()()).level,
              Level::kExact);
    EXPECT_EQ(a.check(session().queue()), "");
    EXPECT_EQ(later.stats().provisional, 0u);
  }
  if (previous) {
    setenv("OCLTUNE_BINARY_CACHE", restore.c_str(), 1);
  } else {
    unsetenv("OCLTUNE_BINARY_CACHE");
  }
}

// Threads dispatching one borrowed problem while its upgrade is prepared and swapped in: every
// result right, one provisional resolution and at most one upgrade.
TEST(FastStart, ThreadsDispatchingThroughTheUpgradeGetRightResults) {
  const SabotagedAdapter adapter;
  Runtime rt(session().context(), session().device().device,
             fast_start(nearest_and_class_rows("fast-start-threads.db")));
  constexpr int kThreads = 4;
  std::string failures[kThreads];
  auto worker = [&](int id) {
    try {
      cl::CommandQueue queue(session().context(), session().device().device);
      HostGemm g(session().context(), {.m = 40, .n = 24, .k = 31}, {}, 30 + id);
      // Until 10 calls after the upgrade (or 2000 calls: a slow background fails the count below).
      for (int i = 0, after = 0; i < 2000 && after < 10; ++i) {
        if (rt.stats().upgrades > 0) ++after;
        g.reset(queue);
        rt.dispatch(adapter, gemm_shape_code(adapter, g.call()), &g.call(), queue());
        if (std::string problem = g.check(queue); !problem.empty()) {
          failures[id] = "call " + std::to_string(i) + ": " + problem;
          return;
        }
      }
    } catch (const std::exception& e) {
      failures[id] = e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id) threads.emplace_back(worker, id);
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
  rt.wait_for_upgrades();
  EXPECT_EQ(rt.stats().provisional, 1u);
  EXPECT_EQ(rt.stats().upgrades, 1u) << "the threads called on through the upgrade";
}

}  // namespace
}  // namespace ocltune
