// Configurations and search spaces: canonical text, validation, constrained enumeration, strategies.
#include "core/space.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "harness/error.h"
#include "tuner/strategy.h"

namespace ocltune {
namespace {

SearchSpace small_space() {
  SearchSpace s("small");
  s.add("A", {1, 2, 4, 8}).add("B", {1, 2, 4}).add("C", {0, 1});
  s.constrain("A % B == 0", {"A", "B"}, [](const Config& c) { return c.at("A") % c.at("B") == 0; });
  s.constrain("C implies A >= 4", {"A", "C"}, [](const Config& c) { return !c.at("C") || c.at("A") >= 4; });
  return s;
}

TEST(Config, CanonicalTextIsSortedAndRoundTrips) {
  const Config c = {{"MWG", 64}, {"KWG", 16}, {"A_B", -3}};
  EXPECT_EQ(to_string(c), "A_B=-3,KWG=16,MWG=64");
  EXPECT_EQ(parse_config(to_string(c)), c);
  EXPECT_EQ(config_from_json(to_json(c)), c);
  EXPECT_TRUE(parse_config("").empty());
}

TEST(Config, RejectsMalformedText) {
  for (const char* bad : {"MWG", "MWG=", "MWG=1.5", "MWG=1,", "mwg=1", "MWG=1,MWG=2", "M-G=1",
                          "MWG=99999999999999999999", "MWG=1;DROP TABLE best", "MWG=0x10"}) {
    EXPECT_THROW(parse_config(bad), Error) << bad;
  }
}

TEST(Config, RejectsNonIntegerJson) {
  EXPECT_THROW(config_from_json(nlohmann::json::parse(R"({"MWG": 1.5})")), Error);
  EXPECT_THROW(config_from_json(nlohmann::json::parse(R"({"MWG": "64"})")), Error);
  EXPECT_THROW(config_from_json(nlohmann::json::parse(R"({"MWG": [64]})")), Error);
  EXPECT_THROW(config_from_json(nlohmann::json::parse(R"([1, 2])")), Error);
  EXPECT_THROW(config_from_json(nlohmann::json::parse(R"({"bad name": 1})")), Error);
}

TEST(SearchSpace, EnumeratesExactlyTheValidConfigurations) {
  const SearchSpace s = small_space();
  EXPECT_EQ(s.raw_size(), 24);
  const std::vector<Config> all = s.enumerate();
  // A=1:B=1 (C=0); A=2:B=1,2 (C=0); A=4:B=1,2,4 (C=0,1); A=8:B=1,2,4 (C=0,1).
  EXPECT_EQ(all.size(), 1u + 2u + 6u + 6u);
  for (const Config& c : all) EXPECT_TRUE(s.contains(c)) << to_string(c);
  EXPECT_EQ(s.enumerate(5).size(), 5u);
}

TEST(SearchSpace, CheckSaysWhyAConfigurationIsOutside) {
  const SearchSpace s = small_space();
  EXPECT_NE(s.check({{"A", 2}, {"B", 4}, {"C", 0}}).find("A % B == 0"), std::string::npos);
  EXPECT_NE(s.check({{"A", 3}, {"B", 1}, {"C", 0}}).find("not one of the declared values"), std::string::npos);
  EXPECT_NE(s.check({{"A", 2}, {"B", 1}}).find("missing parameter C"), std::string::npos);
  EXPECT_NE(s.check({{"A", 2}, {"B", 1}, {"C", 0}, {"D", 1}}).find("unknown parameter D"), std::string::npos);
}

// A configuration from before a parameter was added reads as the parameter's first value, where that
// is a point of the space; other missing parameters, unknown ones and completions that break a
// constraint are not completed.
TEST(SearchSpace, CompleteFillsParametersAddedLaterWithTheirFirstValue) {
  SearchSpace s = small_space();
  EXPECT_EQ(s.complete({{"A", 2}, {"B", 1}}), std::nullopt);  // C is not marked
  s.added_later("C");
  EXPECT_EQ(s.complete({{"A", 2}, {"B", 1}}), (Config{{"A", 2}, {"B", 1}, {"C", 0}}));
  EXPECT_EQ(s.complete({{"A", 8}, {"B", 4}, {"C", 1}}), (Config{{"A", 8}, {"B", 4}, {"C", 1}}));
  EXPECT_EQ(s.complete({{"A", 2}, {"C", 0}}), std::nullopt);            // B is not marked
  EXPECT_EQ(s.complete({{"A", 2}, {"B", 4}}), std::nullopt);            // A % B != 0
  EXPECT_EQ(s.complete({{"A", 2}, {"B", 1}, {"D", 1}}), std::nullopt);  // D is no parameter
  SearchSpace direct("direct");
  direct.add("ALGO", {0}).add("TILE", {1, 2});
  SearchSpace gemm("gemm");
  gemm.add("ALGO", {1}).add("MWG", {16, 32}).add("STAGES", {0, 2});
  SearchSpace both = SearchSpace::unite({direct, gemm});
  both.added_later("STAGES");
  EXPECT_EQ(both.complete({{"ALGO", 1}, {"MWG", 32}}), (Config{{"ALGO", 1}, {"MWG", 32}, {"STAGES", 0}}));
  EXPECT_EQ(both.complete({{"ALGO", 0}, {"MWG", 32}}), std::nullopt);
  EXPECT_EQ(both.complete({{"ALGO", 0}, {"TILE", 2}}), (Config{{"ALGO", 0}, {"TILE", 2}}));
}

TEST(SearchSpace, UnionKeepsVariantsApart) {
  SearchSpace direct("direct");
  direct.add("ALGO", {0}).add("TILE", {1, 2});
  SearchSpace gemm("gemm");
  gemm.add("ALGO", {1}).add("MWG", {16, 32});
  const SearchSpace both = SearchSpace::unite({direct, gemm});
  EXPECT_EQ(both.enumerate().size(), 4u);
  EXPECT_TRUE(both.contains({{"ALGO", 0}, {"TILE", 2}}));
  EXPECT_FALSE(both.contains({{"ALGO", 0}, {"MWG", 16}}));
  EXPECT_FALSE(both.contains({{"ALGO", 1}, {"TILE", 1}}));
}

TEST(Strategy, RandomIsReproducibleAndNeverRepeats) {
  const std::vector<Config> all = small_space().enumerate();
  auto order = [&](std::uint64_t seed) {
    auto s = make_strategy("random", all, seed);
    std::vector<std::string> seen;
    while (auto c = s->next()) seen.push_back(to_string(*c));
    return seen;
  };
  const auto a = order(42), b = order(42), c = order(43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), all.size());
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), all.size());
}

TEST(Strategy, UnknownNameIsAnError) { EXPECT_THROW(make_strategy("hill-climbing", {}, 1), Error); }

}  // namespace
}  // namespace ocltune
