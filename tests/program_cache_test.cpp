// The on-disk cache of program binaries: a second session loads instead of compiling, and entries
// that are corrupt, truncated or written for another device are ignored and rebuilt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/error.h"
#include "harness/session.h"
#include "ops/gemm_problem.h"
#include "tests/test_session.h"
#include "tuner/evaluator.h"

namespace ocltune {
namespace {

namespace fs = std::filesystem;

const GemmProblem kProblem({.m = 17, .n = 9, .k = 5});

// Evaluates the default configuration on a fresh session over `dir`; returns the session's cache
// counters after a verified result.
std::pair<int, int> evaluate_fresh(const std::string& dir) {
  Session session(testing::test_session().device(), dir);
  auto evaluation = kProblem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const EvalOutcome o = evaluator.evaluate(gemm_default_config(), {.warmup = 0, .min_runs = 1, .max_runs = 1});
  EXPECT_EQ(o.status, "ok") << o.error;
  return {session.programs().builds(), session.programs().binary_loads()};
}

std::vector<fs::path> entries(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  return out;
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = testing::temp_path(name);
  fs::remove_all(dir);
  return dir;
}

TEST(BinaryCache, ASecondSessionLoadsTheBinaryInsteadOfCompiling) {
  const std::string dir = fresh_dir("binaries");
  EXPECT_EQ(evaluate_fresh(dir), std::make_pair(1, 0));
  ASSERT_EQ(entries(dir).size(), 1u);
  EXPECT_EQ(entries(dir)[0].parent_path().filename(), testing::test_session().device().key());
  EXPECT_EQ(evaluate_fresh(dir), std::make_pair(0, 1));  // and the loaded program verifies
}

TEST(BinaryCache, CorruptTruncatedAndForeignEntriesAreRebuilt) {
  const std::string dir = fresh_dir("binaries-bad");
  evaluate_fresh(dir);
  const fs::path entry = entries(dir).at(0);
  std::string good;
  {
    std::ifstream in(entry, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& bytes) { std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes; };

  std::string flipped = good;
  flipped[flipped.size() - 10] ^= 0x5a;  // payload no longer matches its hash
  write(flipped);
  EXPECT_EQ(evaluate_fresh(dir), std::make_pair(1, 0));

  write(good.substr(0, good.size() / 2));  // truncated
  EXPECT_EQ(evaluate_fresh(dir), std::make_pair(1, 0));

  std::string foreign = good;
  const std::size_t at = foreign.find(testing::test_session().device().key());
  ASSERT_NE(at, std::string::npos);
  foreign[at] = foreign[at] == '0' ? '1' : '0';  // written for another device key
  write(foreign);
  EXPECT_EQ(evaluate_fresh(dir), std::make_pair(1, 0));

  // Each rebuild rewrote the entry: it loads again.
  EXPECT_EQ(evaluate_fresh(dir), std::make_pair(0, 1));
  for (const fs::path& p : entries(dir)) EXPECT_EQ(p.extension(), ".bin") << p;  // no temporary left
}

TEST(BinaryCache, OffMeansNoFiles) {
  Session session(testing::test_session().device(), "");
  auto evaluation = kProblem.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  EXPECT_EQ(evaluator.evaluate(gemm_default_config(), {.warmup = 0, .min_runs = 1, .max_runs = 1}).status, "ok");
  EXPECT_EQ(session.programs().binary_loads(), 0);
}

// A program that asks for a PTX target but has no marked lines (or a driver whose binaries are not
// PTX, as on PoCL) fails with a build error that names the target, not with a driver crash; the
// retargeted path itself runs on the H200 (the wgmma GEMM in GemmTf32.*).
TEST(PtxTarget, AProgramWithoutMarkedLinesIsAClearBuildError) {
  Session session(testing::test_session().device(), "");
  ProgramSource source{.files = {"selftest.cl"}, .defines = {{"MODE", "0"}}, .options = "", .ptx_target = "sm_90a"};
  try {
    session.programs().get(source);
    FAIL() << "built";
  } catch (const BuildError& e) {
    EXPECT_NE(e.log().find("ptx_target sm_90a"), std::string::npos) << e.log();
  }
  source.ptx_target.clear();
  EXPECT_NO_THROW(session.programs().get(source));  // the same program without the target builds
}

}  // namespace
}  // namespace ocltune
