// Search strategies on synthetic spaces: validity, no repeats, reproducibility, search quality,
// and replay of recorded spaces.
#include "tuner/strategy.h"

#include <cmath>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "harness/error.h"
#include "tests/support/test_session.h"
#include "tuner/budget.h"
#include "tuner/forest.h"
#include "tuner/simulate.h"
#include "tuner/space_index.h"

namespace ocltune {
namespace {

// A GEMM-like space: tile sizes with divisibility constraints, two variants side by side.
SearchSpace synthetic_space() {
  SearchSpace tiled("tiled");
  tiled.add("MWG", {16, 32, 64, 128}).add("NWG", {16, 32, 64, 128}).add("WPTM", {1, 2, 4, 8}).add("WPTN", {1, 2, 4, 8});
  tiled.add("KWG", {8, 16, 32}).add("VW", {1, 2}).add("SA", {0, 1});
  tiled.constrain("MWG / WPTM >= 4", {"MWG", "WPTM"}, [](const Config& c) { return c.at("MWG") / c.at("WPTM") >= 4; });
  tiled.constrain("NWG / WPTN >= 4", {"NWG", "WPTN"}, [](const Config& c) { return c.at("NWG") / c.at("WPTN") >= 4; });
  tiled.constrain("WPTN % VW", {"WPTN", "VW"}, [](const Config& c) { return c.at("WPTN") % c.at("VW") == 0; });
  SearchSpace direct("direct");
  direct.add("WG", {32, 64, 128, 256}).add("UNROLL", {1, 2, 4, 8});
  return SearchSpace::unite({tiled, direct});
}

// A smooth landscape with one optimum (MWG=64, NWG=32, WPTM=4, WPTN=4, KWG=16, VW=2, SA=1),
// interactions between tile and work per thread, and the direct variant 3x slower.
double synthetic_time(const Config& c) {
  if (c.count("WG")) return 3e5 * (1 + 0.1 * std::abs(std::log2(c.at("WG")) - 6) + 0.05 * std::log2(c.at("UNROLL")));
  auto l = [&](const char* name) { return std::log2(static_cast<double>(c.at(name))); };
  const double tile =
      std::pow(l("MWG") - 6, 2) + std::pow(l("NWG") - 5, 2) + 0.5 * std::pow(l("MWG") + l("NWG") - 11, 2);
  const double work =
      std::pow(l("WPTM") - 2, 2) + std::pow(l("WPTN") - 2, 2) + 0.3 * std::pow(l("WPTM") - l("WPTN"), 2);
  const double rest = 0.5 * std::pow(l("KWG") - 4, 2) + 0.4 * (1 - l("VW")) + (c.at("SA") ? 0 : 0.6);
  return 1e5 * std::exp(0.15 * tile + 0.2 * work + 0.2 * rest);
}

RecordedSpace synthetic_recording() {
  RecordedSpace space;
  space.op = "synthetic";
  space.shape_key = "n=1";
  for (const Config& c : synthetic_space().enumerate()) {
    // Every 13th point fails to compile, as real spaces have failures among valid points.
    const bool fails = std::hash<std::string>{}(to_string(c)) % 13 == 0 && c.count("MWG") && c.at("MWG") != 64;
    space.points.push_back(
        {c, fails ? Status::kCompileError : Status::kOk, fails ? std::nullopt : std::optional(synthetic_time(c))});
  }
  return space;
}

TEST(Strategy, EveryStrategyProposesEachValidConfigurationExactlyOnce) {
  const std::vector<Config> all = synthetic_space().enumerate();
  const std::set<std::string> valid = [&] {
    std::set<std::string> s;
    for (const Config& c : all) s.insert(to_string(c));
    return s;
  }();
  for (const std::string& name : strategy_names()) {
    auto strategy = make_strategy(name, all, 7);
    std::set<std::string> seen;
    // Observations arrive late (a batch of four in flight), as with the compile look-ahead.
    std::vector<Config> in_flight;
    while (auto c = strategy->next()) {
      ASSERT_TRUE(valid.count(to_string(*c))) << name << " proposed an invalid " << to_string(*c);
      ASSERT_TRUE(seen.insert(to_string(*c)).second) << name << " proposed twice " << to_string(*c);
      in_flight.push_back(*c);
      if (in_flight.size() == 4) {
        strategy->observe(in_flight.front(), synthetic_time(in_flight.front()));
        in_flight.erase(in_flight.begin());
      }
    }
    EXPECT_EQ(seen.size(), all.size()) << name << " stopped before the space was exhausted";
  }
}

TEST(Strategy, ConfigurationsObservedEarlierAreNeverProposed) {
  const std::vector<Config> all = synthetic_space().enumerate();
  for (const std::string& name : strategy_names()) {
    auto strategy = make_strategy(name, all, 11);
    std::set<std::string> earlier;
    for (std::size_t i = 0; i < all.size(); i += 3) {
      strategy->observe(all[i], i % 2 ? std::optional(synthetic_time(all[i])) : std::nullopt);
      earlier.insert(to_string(all[i]));
    }
    strategy->observe({{"NOT_A_PARAMETER", 1}}, 5.0);  // outside the space: ignored
    std::size_t proposed = 0;
    while (auto c = strategy->next()) {
      EXPECT_FALSE(earlier.count(to_string(*c))) << name << " re-proposed " << to_string(*c);
      strategy->observe(*c, synthetic_time(*c));
      ++proposed;
    }
    EXPECT_EQ(proposed, all.size() - earlier.size()) << name;
  }
}

TEST(Strategy, SameSeedSameProposalsDifferentSeedDifferent) {
  const std::vector<Config> all = synthetic_space().enumerate();
  auto trace = [&](const std::string& name, std::uint64_t seed) {
    auto strategy = make_strategy(name, all, seed);
    std::vector<std::string> out;
    for (int i = 0; i < 60; ++i) {
      auto c = strategy->next();
      if (!c) break;
      out.push_back(to_string(*c));
      strategy->observe(*c, synthetic_time(*c));
    }
    return out;
  };
  for (const std::string& name : strategy_names()) {
    EXPECT_EQ(trace(name, 5), trace(name, 5)) << name;
    if (name != "exhaustive") {
      EXPECT_NE(trace(name, 5), trace(name, 6)) << name;
    }
  }
}

TEST(Strategy, GuidedStrategiesBeatRandomAndTheModelFindsTheOptimumInTenPercent) {
  const RecordedSpace space = synthetic_recording();
  const std::vector<double> budgets = {0.05, 0.10};
  const auto scores = score_strategies(space, {"random", "annealing", "genetic", "model"}, 9, budgets);
  ASSERT_EQ(scores.size(), 4u);
  const double random_10 = scores[0].fractions[1];
  for (std::size_t s = 1; s < scores.size(); ++s) {
    EXPECT_GT(scores[s].fractions[1], random_10) << scores[s].strategy << "\n"
                                                 << format_scores(space, scores, budgets, 9);
  }
  EXPECT_GE(scores[3].fractions[1], 0.95) << format_scores(space, scores, budgets, 9);
}

TEST(Strategy, AWarmStartFromAnotherShapeHelpsTheModel) {
  const RecordedSpace space = synthetic_recording();
  // The prior: the same landscape measured at another "shape" (times 4, so only relative values
  // carry over), on a sample of the space.
  std::vector<PriorPoint> prior;
  const auto all = synthetic_space().enumerate();
  std::vector<double> logs;
  for (std::size_t i = 0; i < all.size(); i += 5) logs.push_back(std::log(4 * synthetic_time(all[i])));
  std::vector<double> sorted = logs;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0, k = 0; i < all.size(); i += 5, ++k)
    prior.push_back({all[i], logs[k] - sorted[sorted.size() / 2]});
  const double optimum = *space.optimum_ns();
  double cold = 0, warm = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    cold += optimum / replay(space, "model", seed, 10).back();
    warm += optimum / replay(space, "model", seed, 10, prior).back();
  }
  EXPECT_GT(warm, cold);
  EXPECT_GE(warm / 5, 0.9);
}

TEST(SpaceIndex, NeighboursDifferInOneParameterByOneStep) {
  const std::vector<Config> all = synthetic_space().enumerate();
  SpaceIndex index(all);
  const std::size_t i =
      *index.find({{"MWG", 64}, {"NWG", 32}, {"WPTM", 4}, {"WPTN", 4}, {"KWG", 16}, {"VW", 2}, {"SA", 1}});
  const auto near = index.neighbours(i);
  EXPECT_FALSE(near.empty());
  for (std::size_t j : near) {
    int differing = 0;
    for (const auto& [name, value] : index.config(i)) differing += index.config(j).at(name) != value;
    EXPECT_EQ(differing, 1) << to_string(index.config(j));
  }
  EXPECT_FALSE(index.find({{"MWG", 64}}).has_value());
  EXPECT_FALSE(index.find({{"WG", 32}, {"UNROLL", 3}}).has_value());
}

TEST(Forest, FitsAnInteractionOfTwoFeatures) {
  std::vector<double> x, y;
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      x.insert(x.end(), {static_cast<double>(a), static_cast<double>(b), 0.0});
      y.push_back(a < 4 ? (b < 4 ? 1.0 : 3.0) : 2.0);
    }
  }
  Forest forest;
  forest.fit(x, 3, y, 1);
  const double low[] = {1, 1, 0}, mixed[] = {1, 6, 0}, high[] = {6, 6, 0};
  EXPECT_NEAR(forest.predict(low).mean, 1.0, 0.3);
  EXPECT_NEAR(forest.predict(mixed).mean, 3.0, 0.3);
  EXPECT_NEAR(forest.predict(high).mean, 2.0, 0.3);
}

TEST(RecordedSpace, RoundTripsThroughJsonLines) {
  const RecordedSpace space = synthetic_recording();
  const std::string path = testing::temp_path("space.jsonl");
  save_recorded_space(space, path);
  const RecordedSpace back = load_recorded_space(path);
  ASSERT_EQ(back.points.size(), space.points.size());
  EXPECT_EQ(back.op, "synthetic");
  EXPECT_EQ(to_string(back.points[5].config), to_string(space.points[5].config));
  EXPECT_EQ(back.points[5].status, space.points[5].status);
  EXPECT_NEAR(*back.optimum_ns(), *space.optimum_ns(), 0.1);
  std::ofstream(path, std::ios::app) << "{\"params\": \"MWG=abc\", \"status\": \"ok\"}\n";
  EXPECT_THROW(load_recorded_space(path), Error);
}

TEST(Restriction, ParsesAndFilters) {
  const Restriction r = parse_restriction("MWG=32|64,KWI=2");
  EXPECT_TRUE(allowed({{"MWG", 64}, {"KWI", 2}}, r));
  EXPECT_FALSE(allowed({{"MWG", 16}, {"KWI", 2}}, r));
  EXPECT_TRUE(allowed({{"WG", 16}}, r));  // another variant: not restricted
  EXPECT_THROW(parse_restriction("MWG"), Error);
  EXPECT_THROW(parse_restriction("MWG=1|x"), Error);
}

// The spaces recorded on PoCL (tests/data/spaces, see docs/STRATEGIES.md): the model-based
// strategy keeps reaching 95% of the exhaustive optimum within 10% of each space.
TEST(RecordedSpace, TheModelReachesTheOptimumOfTheRecordedGemmAndConvSpaces) {
  for (const char* name : {"gemm-m128-n128-k128-NN-pocl.jsonl", "gemm-m32-n256-k128-NT-pocl.jsonl",
                           "conv2d-c32-k32-14x14-r3-direct-pocl.jsonl"}) {
    const RecordedSpace space = load_recorded_space(std::string(OCLTUNE_SOURCE_DIR) + "/tests/data/spaces/" + name);
    ASSERT_GT(space.points.size(), 300u) << name;
    const auto scores = score_strategies(space, {"random", "model"}, 7, {0.10});
    EXPECT_GE(scores[1].fractions[0], 0.95) << name << "\n" << format_scores(space, scores, {0.10}, 7);
    EXPECT_GE(scores[1].fractions[0], scores[0].fractions[0]) << name;
  }
}

TEST(Budget, DurationsParse) {
  EXPECT_DOUBLE_EQ(parse_duration("90s"), 90);
  EXPECT_DOUBLE_EQ(parse_duration("10m"), 600);
  EXPECT_DOUBLE_EQ(parse_duration("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("45"), 45);
  EXPECT_DOUBLE_EQ(parse_duration("0.5s"), 0.5);
  for (const char* bad : {"", "m", "10x", "-5s", "0"}) EXPECT_THROW(parse_duration(bad), Error) << bad;
}

TEST(Budget, TheTightestLimitWinsAndSaysWhy) {
  SearchBudget budget(1000, 300, 0.1, std::nullopt, 0);
  EXPECT_EQ(budget.limit(), 100);
  for (int i = 0; i < 99; ++i) budget.count(100.0);
  EXPECT_FALSE(budget.exhausted());
  budget.count(100.0);
  ASSERT_TRUE(budget.exhausted());
  EXPECT_NE(budget.exhausted()->find("--fraction"), std::string::npos);
  EXPECT_EQ(SearchBudget(50, 300, 0, std::nullopt, 0).limit(), 50);
  EXPECT_EQ(SearchBudget(50, 0, 0.001, std::nullopt, 0).limit(), 1);  // at least one evaluation
}

TEST(Budget, PatienceCountsOnlyRealImprovements) {
  SearchBudget budget(1000, 0, 0, std::nullopt, 5);
  budget.count(100.0);
  for (int i = 0; i < 4; ++i) budget.count(99.5);  // 0.5% better: noise, not progress
  EXPECT_FALSE(budget.exhausted());
  budget.count(std::nullopt);  // a failure is no improvement either
  ASSERT_TRUE(budget.exhausted());
  EXPECT_NE(budget.exhausted()->find("--patience"), std::string::npos);
  SearchBudget improving(1000, 0, 0, std::nullopt, 3);
  for (double t : {100.0, 98.0, 96.0, 94.0, 92.0, 90.0}) improving.count(t);
  EXPECT_FALSE(improving.exhausted());
}

TEST(Budget, ADeadlineInThePastStopsAtOnce) {
  SearchBudget budget(1000, 0, 0, SearchBudget::Clock::now() - std::chrono::seconds(1), 0);
  ASSERT_TRUE(budget.exhausted());
  EXPECT_EQ(*budget.exhausted(), "time budget spent");
}

}  // namespace
}  // namespace ocltune
