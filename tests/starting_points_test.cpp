// Where a search starts (issue 20): the nearest tuned rows of the database and their neighbours, and
// the problems the system database already serves tuned last.
#include "tuner/starting_points.h"

#include <gtest/gtest.h>

#include "cli/tuned_neighbourhood.h"
#include "db/database.h"
#include "ops/gemm/gemm_problem.h"
#include "tests/support/runtime_support.h"
#include "tests/support/selftest.h"
#include "tests/support/test_session.h"
#include "tuner/tuner.h"

namespace ocltune {
namespace {

std::unique_ptr<Problem> selftest(int n) { return selftest_family().from_json({{"n", n}}); }

std::int64_t start_run(Database& db, Session& session) {
  db.upsert_device(session.device());
  RunRow run;
  run.device_key = session.device().key();
  run.tool_version = "test";
  return db.begin_run(run);
}

// The configurations of selftest(700) a search may evaluate: MODE 0 (1 hangs, 2 crashes), the default left out.
std::vector<Config> mode0_space(const Problem& problem, const DeviceInfo& device) {
  std::vector<Config> space = problem.space(device).enumerate();
  std::erase_if(space, [](const Config& c) { return c.at("MODE") != 0; });
  std::erase(space, problem.default_config(device));
  return space;
}

// The parameters of the search evaluations (not the defaults) of a problem in `db`, in order.
std::vector<std::string> searched(Database& db, const DeviceInfo& device, const Problem& problem) {
  std::vector<std::string> out;
  for (const MeasurementRow& m : db.measurements(device.key(), problem.op(), "fp32", "exact", problem.shape_key())) {
    if (m.role == "search") out.push_back(m.params);
  }
  return out;
}

TEST(StartingPoints, NearestConfigurationsInTheSpaceThenNeighboursOfTheFirst) {
  const DeviceInfo& device = testing::test_session().device();
  const std::vector<Config> space = selftest(100)->space(device).enumerate();
  ASSERT_GE(space.size(), 8u);
  Config outside = space[3];
  outside["NOT_A_PARAMETER"] = 1;
  const std::vector<Config> starts = starting_points({outside, space[5], space[2], space[5]}, space, 3);
  ASSERT_EQ(starts.size(), 5u) << "two in the space (one repeated, one outside), three neighbours";
  EXPECT_EQ(starts[0], space[5]);
  EXPECT_EQ(starts[1], space[2]);
  for (std::size_t i = 2; i < starts.size(); ++i) {
    int differing = 0;
    for (const auto& [name, value] : starts[i]) differing += space[5].at(name) != value;
    EXPECT_EQ(differing, 1) << to_string(starts[i]) << " is not a neighbour of " << to_string(space[5]);
    EXPECT_NE(starts[i], space[2]);
  }
  EXPECT_TRUE(starting_points({}, space, 3).empty());
}

// After the nearest configurations, the first one's counterpart in each variant that extends its
// own (the split-K twin of a gemm.cl row), one per variant, before the neighbours.
TEST(StartingPoints, TheFirstOnesCounterpartInEachVariantThatExtendsItsOwn) {
  const std::vector<Config> space = {{{"A", 1}, {"B", 1}},
                                     {{"A", 1}, {"B", 2}},
                                     {{"A", 2}, {"B", 1}, {"X", 2}},  // another tile: no counterpart
                                     {{"A", 1}, {"B", 1}, {"X", 2}},
                                     {{"A", 1}, {"B", 1}, {"X", 4}},  // the same variant again
                                     {{"A", 1}, {"C", 1}},            // another variant, not an extension
                                     {{"A", 1}, {"B", 1}, {"X", 2}, {"Y", 1}}};
  const std::vector<Config> starts = starting_points({space[0]}, space, 1);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[0], space[0]);
  EXPECT_EQ(starts[1], space[3]);
  EXPECT_EQ(starts[2], space[6]);
  EXPECT_EQ(starts[3], space[1]) << "the neighbour comes after the counterparts";
}

// A search with starting points evaluates them right after the default, before the strategy's own
// proposals: with one evaluation allowed, that one is the nearest row's configuration.
TEST(StartingPoints, TheTunerEvaluatesThemFirst) {
  Session& session = testing::test_session();
  const auto problem = selftest(700);
  const std::vector<Config> space = mode0_space(*problem, session.device());
  const Config start = space[space.size() / 2];
  for (const bool with_start : {false, true}) {
    Database db = Database::open(testing::temp_path("starts.db"));
    TuneOptions o;
    o.strategy = "random";
    o.max_evals = 1;
    o.seed = 11;
    o.final_candidates = 0;
    o.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
    o.restriction = parse_restriction("MODE=0");
    if (with_start) o.starting_points = [&](const Problem&) { return std::vector<Config>{start}; };
    Tuner tuner(session, db, start_run(db, session), o, nullptr);
    tuner.tune(*problem);
    const std::vector<std::string> search = searched(db, session.device(), *problem);
    ASSERT_EQ(search.size(), 1u);
    // Without the starting point, the random strategy of this seed picks another configuration
    // (so the check below can fail).
    EXPECT_EQ(search[0] == to_string(start), with_start) << search[0];
  }
}

// A run whose time is spent still evaluates a problem's first starting point after its defaults
// (what the runtime served the shape before the run), and nothing more: its exact row is then never
// slower than that row was.
TEST(StartingPoints, TheFirstIsEvaluatedWhenTheTimeIsSpent) {
  Session& session = testing::test_session();
  const auto problem = selftest(700);
  const std::vector<Config> space = mode0_space(*problem, session.device());
  ASSERT_GE(space.size(), 3u);
  const Config first = space[space.size() / 2], second = space[space.size() / 3];
  for (const bool with_start : {false, true}) {
    Database db = Database::open(testing::temp_path("starts-no-time.db"));
    TuneOptions o;
    o.time_budget_s = 1e-6;  // spent before the search starts
    o.final_candidates = 0;
    o.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
    o.restriction = parse_restriction("MODE=0");
    if (with_start) o.starting_points = [&](const Problem&) { return std::vector<Config>{first, second}; };
    Tuner tuner(session, db, start_run(db, session), o, nullptr);
    tuner.tune(*problem);
    const std::vector<std::string> search = searched(db, session.device(), *problem);
    if (with_start) {
      ASSERT_EQ(search.size(), 1u);
      EXPECT_EQ(search[0], to_string(first));
    } else {
      EXPECT_TRUE(search.empty()) << "without starting points the spent budget stops the search at the defaults";
    }
  }
}

// Starting points go before the family's seeds: with one search evaluation (a short --ops all gives
// a problem about three), a GEMM problem measures its start, not its first seed.
TEST(StartingPoints, GoBeforeTheSeeds) {
  Session& session = testing::test_session();
  const GemmProblem problem({.m = 64, .n = 64, .k = 64});
  const std::vector<Config> seeds = problem.seed_configs(session.device());
  const std::vector<Config> defaults = problem.default_configs(session.device());
  const SearchSpace space = problem.space(session.device());
  ASSERT_FALSE(seeds.empty());
  std::optional<Config> start;
  for (const Config& c : space.enumerate()) {
    const auto in = [&](const std::vector<Config>& list) {
      return std::find(list.begin(), list.end(), c) != list.end();
    };
    if (!in(seeds) && !in(defaults)) {
      start = c;
      break;
    }
  }
  ASSERT_TRUE(start.has_value());
  Database db = Database::open(testing::temp_path("starts-before-seeds.db"));
  TuneOptions o;
  o.max_evals = 1;
  o.final_candidates = 0;
  o.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
  o.starting_points = [&](const Problem&) { return std::vector<Config>{*start}; };
  Tuner tuner(session, db, start_run(db, session), o, nullptr);
  tuner.tune(problem);
  const std::vector<std::string> search = searched(db, session.device(), problem);
  ASSERT_EQ(search.size(), 1u);
  EXPECT_EQ(search[0], to_string(*start));
}

// Rows of this device: the system database's row of the exact shape, then the nearest shapes first,
// the run database's row of the exact shape left out; a problem whose own row the system database
// holds (deep enough) is tuned last.
TEST(TunedNeighbourhood, NearestRowsComeFirstAndServedProblemsGoLast) {
  const DeviceInfo& device = testing::test_session().device();
  const GemmShape near{.m = 256, .n = 256, .k = 256}, far{.m = 1024, .n = 1024, .k = 1024},
      target{.m = 300, .n = 300, .k = 300}, served{.m = 64, .n = 64, .k = 64};
  std::vector<Config> valid;
  const SearchSpace target_space = GemmProblem(target).space(device);
  for (const Config& c : target_space.enumerate()) {
    if (GemmProblem(near).space(device).contains(c) && GemmProblem(far).space(device).contains(c) &&
        GemmProblem(served).space(device).contains(c)) {
      valid.push_back(c);
    }
    if (valid.size() == 5) break;
  }
  ASSERT_EQ(valid.size(), 5u);
  const std::string key = device.key();
  const std::string user =
      testing::write_database(testing::temp_path("neighbourhood_user.db"), {device},
                              {testing::gemm_row(key, far, valid[0]), testing::gemm_row(key, near, valid[1]),
                               testing::gemm_row(key, target, valid[2])});
  const std::string system =
      testing::write_database(testing::temp_path("neighbourhood_system.db"), {device},
                              {testing::gemm_row(key, served, valid[3]), testing::gemm_row(key, target, valid[4])});
  Database db = Database::open(user);
  TunedNeighbourhood hood(device, system, db, nullptr);
  const GemmProblem problem(target);
  const std::vector<Config> nearest = hood.nearest(problem, 4);
  ASSERT_EQ(nearest.size(), 4u);
  // The system database's (shipped) row of the exact shape first, then by log2 distance from 300^3:
  // 256^3 0.40, 1024^3 3.07, 64^3 3.86 (the system database's row).
  EXPECT_EQ(nearest[0], valid[4]);
  EXPECT_EQ(nearest[1], valid[1]);
  EXPECT_EQ(nearest[2], valid[0]);
  EXPECT_EQ(nearest[3], valid[3]);
  for (const Config& c : nearest) EXPECT_NE(c, valid[2]) << "the run's own row of the shape is resumed, not a start";

  ProblemList problems;
  problems.push_back(std::make_unique<GemmProblem>(served));
  problems.push_back(std::make_unique<GemmProblem>(target));
  problems.push_back(std::make_unique<GemmProblem>(near));
  // served and target have system rows (of unknown depth): both go last, in their order.
  EXPECT_EQ(hood.tune_served_last(problems), 2u);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0]->shape_key(), GemmProblem(near).shape_key());
  EXPECT_EQ(problems[1]->shape_key(), GemmProblem(served).shape_key());
  EXPECT_EQ(problems[2]->shape_key(), GemmProblem(target).shape_key());

  // A problem tuned in this run becomes the nearest start of a later one.
  const GemmShape later{.m = 290, .n = 290, .k = 290};
  hood.add(problem, valid[2]);
  EXPECT_EQ(hood.nearest(GemmProblem(later), 1).front(), valid[2]);
}

}  // namespace
}  // namespace ocltune
