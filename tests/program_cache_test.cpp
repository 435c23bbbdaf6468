// The on-disk cache of program binaries: a second session loads instead of compiling, and entries
// that are corrupt, truncated or written for another device are ignored and rebuilt.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/error.h"
#include "harness/session.h"
#include "ops/gemm/gemm_problem.h"
#include "tests/support/test_session.h"
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
  EXPECT_EQ(o.status, Status::kOk) << o.error;
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

// available(): built in this session, or loadable from the disk cache (fast start asks it).
TEST(BinaryCache, AvailableMeansBuiltOrOnDisk) {
  const std::string dir = fresh_dir("binaries-available");
  Session first(testing::test_session().device(), dir);
  const LaunchPlan plan = kProblem.instantiate(first)->plan(gemm_default_config());
  ASSERT_FALSE(plan.kernels.empty());
  const ProgramSource& source = plan.kernels.front().program;
  EXPECT_FALSE(first.programs().available(source));
  first.programs().get(source);
  EXPECT_TRUE(first.programs().available(source));
  Session second(testing::test_session().device(), dir);
  EXPECT_FALSE(second.programs().contains(source));
  EXPECT_TRUE(second.programs().available(source)) << "its binary is on disk";
  Session without_disk(testing::test_session().device(), "");
  EXPECT_FALSE(without_disk.programs().available(source));
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
  EXPECT_EQ(evaluator.evaluate(gemm_default_config(), {.warmup = 0, .min_runs = 1, .max_runs = 1}).status, Status::kOk);
  EXPECT_EQ(session.programs().binary_loads(), 0);
}

// A consumer's own source text (ocltune_torch's kernels, through ocltune_runtime_build_program) is
// cached like ocltune's programs: a second session loads its binary, which runs; other text is
// another program.
TEST(BinaryCache, InlineSourceIsKeptOnDiskAndKeyedByItsText) {
  const std::string dir = fresh_dir("binaries-inline");
  ProgramSource source;
  source.inline_source = "__kernel void add_one(__global float* x) { x[get_global_id(0)] += 1.0f; }\n";
  source.options = "-cl-std=CL1.2";
  ProgramSource other = source;
  other.inline_source += "// another text\n";
  EXPECT_NE(source.key(), other.key());
  {
    Session session(testing::test_session().device(), dir);
    session.programs().get(source);
    EXPECT_EQ(std::make_pair(session.programs().builds(), session.programs().binary_loads()), std::make_pair(1, 0));
  }
  Session session(testing::test_session().device(), dir);
  cl::Program program = session.programs().get(source);
  EXPECT_EQ(std::make_pair(session.programs().builds(), session.programs().binary_loads()), std::make_pair(0, 1));
  std::vector<float> values = {1.0f, -2.0f, 40.0f};
  cl::Buffer buffer(session.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, values.size() * sizeof(float),
                    values.data());
  cl::Kernel kernel(program, "add_one");
  kernel.setArg(0, buffer);
  session.queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(values.size()));
  session.queue().enqueueReadBuffer(buffer, CL_TRUE, 0, values.size() * sizeof(float), values.data());
  EXPECT_EQ(values, (std::vector<float>{2.0f, -1.0f, 41.0f}));
  session.programs().get(other);
  EXPECT_EQ(session.programs().builds(), 1);
}

// The cache's counters say where a first step's time went (RuntimeStats, ocltune_torch.startup_stats()):
// a binary written on the first build, loaded on the next, none written with the cache off.
TEST(BinaryCache, StoresAndLoadsAreCounted) {
  const std::string dir = fresh_dir("binaries-counted");
  ProgramSource source;
  source.inline_source = "__kernel void counted(__global float* x) { x[get_global_id(0)] = 2.0f; }\n";
  {
    Session session(testing::test_session().device(), dir);
    session.programs().get(source);
    session.programs().get(source);  // from memory: neither stored nor loaded again
    EXPECT_EQ(session.programs().builds(), 1);
    EXPECT_EQ(session.programs().binary_stores(), 1);
    EXPECT_GT(session.programs().store_seconds(), 0.0);
    EXPECT_EQ(session.programs().binary_loads(), 0);
  }
  Session session(testing::test_session().device(), dir);
  session.programs().get(source);
  EXPECT_EQ(session.programs().binary_loads(), 1);
  EXPECT_GT(session.programs().load_seconds(), 0.0);
  EXPECT_EQ(session.programs().binary_stores(), 0);
  Session off(testing::test_session().device(), "");
  off.programs().get(source);
  EXPECT_EQ(off.programs().builds(), 1);
  EXPECT_EQ(off.programs().binary_stores(), 0);
}

// prefetch_used_programs: a process that prefetches writes down what it used; the next one loads
// those binaries in the background before anyone asks, so its get() neither compiles nor loads
// again; a program nobody used before builds as usual; a bad used.txt or binary costs only a build.
TEST(BinaryCache, APrefetchingSessionFindsTheProgramsTheLastOneUsed) {
  const std::string dir = fresh_dir("binaries-prefetch");
  const auto source = [](const std::string& name) {
    ProgramSource s;
    s.inline_source = "__kernel void " + name + "(__global float* x) { x[get_global_id(0)] = 3.0f; }\n";
    return s;
  };
  const std::string device_dir = dir + "/" + testing::test_session().device().key();
  {
    Session session(testing::test_session().device(), dir);
    session.programs().prefetch_used_programs(2);  // nothing written down yet: nothing to load
    session.programs().get(source("first"));
    session.programs().get(source("second"));
    session.programs().get(source("first"));  // noted once
    EXPECT_EQ(session.programs().builds(), 2);
  }
  {
    std::ifstream in(device_dir + "/used.txt");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 3u);  // the process's marker, then its two programs in the order it used them
    EXPECT_EQ(lines[0], kUsedMarker);
    EXPECT_EQ(prefetch_order(lines, 10), (std::vector<std::string>{lines[1], lines[2]}));
  }
  // Garbage lines and a name whose file is not a binary of ours are skipped.
  std::ofstream(device_dir + "/used.txt", std::ios::app) << "../../etc/passwd\nnot a name\n0123456789abcdef.bin\n";
  std::ofstream(device_dir + "/0123456789abcdef.bin") << "OCLTBIN1\n{\"device_key\": \"someone else\"}\n";
  {
    Session session(testing::test_session().device(), dir);
    session.programs().prefetch_used_programs(2);
    // Both load in the background, before anyone asks.
    for (int i = 0; i < 600 && session.programs().binary_loads() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(session.programs().binary_loads(), 2);
    EXPECT_TRUE(session.programs().contains(source("first")));
    // get() finds them: never a build.
    session.programs().get(source("second"));
    session.programs().get(source("first"));
    EXPECT_EQ(session.programs().builds(), 0);
    EXPECT_EQ(session.programs().binary_loads(), 2);
    session.programs().get(source("third"));
    EXPECT_EQ(session.programs().builds(), 1);
    // A program from the prefetch runs.
    cl::Kernel kernel(session.programs().get(source("first")), "first");
    cl::Buffer x(session.context(), CL_MEM_READ_WRITE, 4 * sizeof(float));
    kernel.setArg(0, x);
    session.queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(4));
    std::vector<float> out(4);
    session.queue().enqueueReadBuffer(x, CL_TRUE, 0, 4 * sizeof(float), out.data());
    EXPECT_EQ(out, std::vector<float>(4, 3.0f));
  }
  // A binary the driver refuses: the prefetch drops it and get() compiles.
  for (const auto& e : fs::directory_iterator(device_dir)) {
    if (e.path().extension() != ".bin" || e.path().filename() == "0123456789abcdef.bin") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    f.seekp(static_cast<std::streamoff>(text.size() - 2));
    f.put('\x7f');  // payload hash no longer matches: not loaded
  }
  Session session(testing::test_session().device(), dir);
  session.programs().prefetch_used_programs(2);
  session.programs().get(source("first"));
  session.programs().get(source("second"));
  EXPECT_EQ(session.programs().builds(), 2);
}

// The prefetch loads the last process's programs first, in the order it used them, then those of the
// processes before it; each once; at most `max`, a long block giving its most recent names. A file
// without markers (written before them) is one block. Lines that are not names are skipped.
TEST(BinaryCache, PrefetchOrderIsTheLastProcesssNeedOrderFirst) {
  const auto name = [](char c) { return std::string(16, c) + ".bin"; };
  const std::string a = name('a'), b = name('b'), c = name('c'), d = name('d'), e = name('e');
  const std::string m = kUsedMarker;
  EXPECT_EQ(prefetch_order({m, a, b, c, m, d, a, e}, 10), (std::vector<std::string>{d, a, e, b, c}));
  EXPECT_EQ(prefetch_order({m, a, b, c, m, a, b, c}, 10), (std::vector<std::string>{a, b, c}));
  EXPECT_EQ(prefetch_order({a, b, c, a, b, c}, 10), (std::vector<std::string>{a, b, c}));
  EXPECT_EQ(prefetch_order({m, a, b, m, c, d, e}, 2), (std::vector<std::string>{d, e}));
  EXPECT_EQ(prefetch_order({m, a, b, m, c, m}, 2), (std::vector<std::string>{c, b}));
  EXPECT_EQ(prefetch_order({m, "../x.bin", a, "not a name", m, m}, 10), (std::vector<std::string>{a}));
  EXPECT_TRUE(prefetch_order({}, 10).empty());
}

// The PTX rewrite itself: markers gone, the target replaced whatever follows it on the line, and
// no rewrite of text that is not marked PTX (the binary of another driver).
TEST(PtxTarget, RetargetingUncommentsMarkedLinesAndReplacesTheTarget) {
  const std::string ptx =
      std::string(
          "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.8\n.target sm_90, texmode_independent\n"
          ".address_size 64\n\t//sm_90a wgmma.fence.sync.aligned;\n\tadd.s32 %r1, %r2, 1;\n"
          "\t//sm_90a wgmma.commit_group.sync.aligned;\n") +
      '\0';
  const std::optional<std::string> out = retargeted_ptx(ptx, "sm_90a");
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out,
            "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.8\n.target sm_90a, texmode_independent\n"
            ".address_size 64\n\twgmma.fence.sync.aligned;\n\tadd.s32 %r1, %r2, 1;\n"
            "\twgmma.commit_group.sync.aligned;\n");
  EXPECT_EQ(retargeted_ptx(".version 8.8\n.target sm_90\n\tret;\n", "sm_90a"), std::nullopt);  // nothing marked
  EXPECT_EQ(retargeted_ptx("\x7f"
                           "ELF //sm_90a binary",
                           "sm_90a"),
            std::nullopt);  // no .target
  const std::optional<std::string> last = retargeted_ptx("x\n.target sm_90\n//sm_90a y", "sm_90a");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(*last, "x\n.target sm_90a\ny");
}

// A program that asks for a PTX target but has no marked lines (or a driver whose binaries are not
// PTX, as on PoCL) fails with a build error that names the target, not with a driver crash; the
// retargeted path itself runs on the H200 (the wgmma GEMM in GemmTf32.*).
TEST(PtxTarget, AProgramWithoutMarkedLinesIsAClearBuildError) {
  Session session(testing::test_session().device(), "");
  ProgramSource source{
      .files = {"selftest.cl"}, .defines = {{"MODE", "0"}}, .inline_source = "", .options = "", .ptx_target = "sm_90a"};
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
