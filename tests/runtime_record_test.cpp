// What a runtime dispatched: calls per level and family, the distinct problems, their reset, and the
// `ocltune --shapes` file of the tune-what-you-run loop (round trip through the shapes-file parser,
// atomic writes, and a tuned row answering at the exact level after reload()).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/stored_tensor.h"
#include "ops/family.h"
#include "runtime/dispatch_record.h"
#include "runtime/softmax.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

namespace fs = std::filesystem;
using testing::HostGemm;
using testing::LogSink;

Session& session() { return testing::test_session(); }

std::unique_ptr<Runtime> make_runtime(const std::string& user_db = "") {
  return std::make_unique<Runtime>(session().context(), session().device().device,
                                   testing::isolated(user_db, "", std::make_shared<LogSink>()));
}

// Runs `shape` through ops::gemm `times` times, checking the result of each call.
void run_gemm(Runtime& rt, const GemmShape& shape, int times = 1) {
  HostGemm g(session().context(), shape, {.lda_pad = 3, .c_offset = 5});
  for (int i = 0; i < times; ++i) {
    g.reset(session().queue());
    ops::gemm(rt, session().queue()(), g.call());
    EXPECT_EQ(g.check(session().queue()), "") << shape.key();
  }
}

// A 16-bit softmax dispatched once (its values are the softmax suites' business; here its record is).
void run_softmax(Runtime& rt, const SoftmaxShape& shape) {
  const std::int64_t n = shape.layout().elements;
  StoredTensor in(shape.dtype, n), out(shape.dtype, n);
  in.fill_uniform(3);
  in.buffer(session().context());
  in.upload(session().queue());
  SoftmaxCall call{
      .shape = shape, .input = in.buffer(session().context())(), .output = out.buffer(session().context())()};
  ops::softmax(rt, session().queue()(), call);
  session().queue().finish();
}

const DispatchedProblem* find_problem(const std::vector<DispatchedProblem>& problems, const std::string& op,
                                      const std::string& key) {
  for (const DispatchedProblem& p : problems) {
    if (p.op == op && p.shape_key == key) return &p;
  }
  return nullptr;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

const GemmShape kOdd{.m = 37, .n = 29, .k = 19};
const GemmShape kBatched{.m = 23, .n = 11, .k = 7, .batch = 3, .trans_b = true};

TEST(RuntimeRecord, CountsEachDispatchByLevelFamilyAndProblem) {
  auto rt = make_runtime();
  EXPECT_EQ(rt->dispatch_stats().total(), 0u);
  run_gemm(*rt, kOdd, 3);
  run_gemm(*rt, kBatched);
  run_softmax(*rt, {.dims = {5, 33}, .axis = 1, .log = true, .dtype = DType::kFp16});
  // Neither a decision asked for nor an empty call is a dispatch.
  HostGemm g(session().context(), kOdd);
  ops::gemm_decision(*rt, g.call());
  GemmCall empty = g.call();
  empty.shape.m = 0;
  ops::gemm(*rt, session().queue()(), empty);

  const DispatchStats s = rt->dispatch_stats();
  EXPECT_EQ(s.total(), 5u);
  EXPECT_EQ(s.by_level[static_cast<std::size_t>(Level::kBuiltin)], 5u);
  ASSERT_EQ(s.by_op.size(), 2u);
  EXPECT_EQ(s.by_op.at("gemm")[static_cast<std::size_t>(Level::kBuiltin)], 4u);
  EXPECT_EQ(s.by_op.at("softmax")[static_cast<std::size_t>(Level::kBuiltin)], 1u);

  const std::vector<DispatchedProblem> problems = rt->dispatched_problems();
  ASSERT_EQ(problems.size(), 3u);
  const DispatchedProblem* odd = find_problem(problems, "gemm", kOdd.key());
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->total(), 3u);
  EXPECT_EQ(odd->level, Level::kBuiltin);
  EXPECT_EQ(odd->dtype, "fp32");
  EXPECT_EQ(odd->math, "exact");
  EXPECT_EQ(odd->shape["m"], 37);
  const DispatchedProblem* soft =
      find_problem(problems, "softmax", SoftmaxShape{.dims = {5, 33}, .axis = 1, .log = true}.key());
  ASSERT_NE(soft, nullptr);
  EXPECT_EQ(soft->dtype, "fp16");

  const nlohmann::json j = dispatch_stats_json(problems);
  EXPECT_EQ(j["calls"], 5);
  EXPECT_EQ(j["levels"]["builtin"], 5);
  EXPECT_EQ(j["levels"]["exact"], 0);
  EXPECT_EQ(j["ops"]["gemm"]["builtin"], 4);
  EXPECT_EQ(j["problems"].size(), 3u);

  // A reset forgets the counts, not the decisions: the next call is still a cache hit.
  const std::uint64_t resolutions = rt->stats().resolutions;
  rt->reset_dispatch_stats();
  EXPECT_EQ(rt->dispatch_stats().total(), 0u);
  EXPECT_TRUE(rt->dispatched_problems().empty());
  run_gemm(*rt, kOdd);
  EXPECT_EQ(rt->stats().resolutions, resolutions);
  ASSERT_EQ(rt->dispatched_problems().size(), 1u);
  EXPECT_EQ(rt->dispatched_problems()[0].total(), 1u);
}

// The shapes file holds each problem once, grouped by family in --ops all order, with every shape
// field and dtype; the shapes-file parser reads it back to the same database keys.
TEST(RuntimeRecord, ShapesFileRoundTripsThroughTheShapesParser) {
  auto rt = make_runtime();
  const SoftmaxShape soft{.dims = {5, 33}, .axis = 1, .log = true, .dtype = DType::kFp16};
  const GemmShape half{.m = 21, .n = 13, .k = 11, .alpha = 1.5f, .beta = 0.5f, .dtype = DType::kBf16};
  run_softmax(*rt, soft);  // dispatched first, written after the GEMMs
  run_gemm(*rt, kBatched, 2);
  run_gemm(*rt, half);
  run_gemm(*rt, kOdd);

  const std::string path = testing::temp_path("record-shapes.json");
  { std::ofstream(path) << "an older file"; }
  EXPECT_EQ(rt->write_shapes_file(path), 4u);
  const nlohmann::json list = read_json(path);
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(list[i]["op"], "gemm") << list.dump();
  EXPECT_EQ(list[3]["op"], "softmax");
  EXPECT_EQ(list[3]["dtype"], "fp16");
  for (const nlohmann::json& e : list) {
    ASSERT_TRUE(e.contains("recorded")) << e.dump();
    EXPECT_EQ(e["recorded"]["level"], "builtin");
  }
  // Nothing is left beside it (the temporary file was renamed).
  for (const auto& f : fs::directory_iterator(fs::path(path).parent_path())) {
    EXPECT_EQ(f.path().filename().string().find("record-shapes.json.tmp"), std::string::npos) << f.path();
  }

  const ProblemList parsed = problems_from_json(list, family_names());
  ASSERT_EQ(parsed.size(), 4u);
  const std::vector<DispatchedProblem> recorded = rt->dispatched_problems();
  for (const auto& p : parsed) {
    const DispatchedProblem* r = find_problem(recorded, p->op(), p->shape_key());
    ASSERT_NE(r, nullptr) << p->shape_key();
    EXPECT_EQ(dtype_name(p->dtype()), r->dtype) << p->shape_key();
    EXPECT_EQ(p->shape_json(), r->shape) << "every shape field survives the file";
    nlohmann::json entry;
    for (const nlohmann::json& e : list) {
      if (e["op"] == p->op() && e.value("m", -1) == p->shape_json().value("m", -1)) entry = e;
    }
    if (p->op() == "gemm") {
      EXPECT_EQ(entry["recorded"]["calls"], r->total()) << entry.dump();
    }
  }
  const auto bf16 =
      std::find_if(parsed.begin(), parsed.end(), [](const auto& p) { return p->dtype() == DType::kBf16; });
  ASSERT_NE(bf16, parsed.end());
  EXPECT_EQ((*bf16)->shape_json()["beta"], 0.5) << "alpha and beta are shape fields too";
  EXPECT_EQ((*bf16)->shape_json()["alpha"], 1.5);

  EXPECT_THROW(rt->write_shapes_file(testing::temp_path("no-such-dir/x/shapes.json")), Error);
  try {
    rt->write_shapes_file(testing::temp_path("no-such-dir/x/shapes.json"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-dir/x/shapes.json"), std::string::npos) << e.what();
  }
}

// Problems of several runtimes merge by database key, calls added up.
TEST(RuntimeRecord, ShapesFileOfSeveralRuntimesHoldsEachProblemOnce) {
  auto first = make_runtime();
  auto second = make_runtime();
  run_gemm(*first, kOdd, 2);
  run_gemm(*second, kOdd);
  run_gemm(*second, kBatched);
  const std::string path = testing::temp_path("two-runtimes.json");
  const Runtime* both[] = {first.get(), second.get()};
  EXPECT_EQ(write_shapes_file(path, both), 2u);
  const nlohmann::json list = read_json(path);
  ASSERT_EQ(list.size(), 2u);
  const ProblemList parsed = problems_from_json(list, {"gemm"});
  ASSERT_EQ(parsed.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const bool odd = parsed[i]->shape_key() == kOdd.key();
    EXPECT_EQ(list[i]["recorded"]["calls"], odd ? 3 : 1) << list[i].dump();
  }
  // An empty record is an empty list, still a valid shapes file.
  auto idle = make_runtime();
  EXPECT_EQ(idle->write_shapes_file(path), 0u);
  EXPECT_EQ(read_json(path), nlohmann::json::array());
}

// The loop: record at the built-in level, "tune" the recorded shape (a row for it, as the tuner
// writes one), reload, and the same call is answered at the exact level; the counts say both.
TEST(RuntimeRecord, ARowForARecordedShapeAnswersExactlyAfterReload) {
  const std::string db = testing::temp_path("record-loop.db");
  fs::remove(db);
  auto rt = make_runtime(db);
  run_gemm(*rt, kOdd, 2);
  const std::string path = testing::temp_path("record-loop.json");
  ASSERT_EQ(rt->write_shapes_file(path), 1u);
  const ProblemList parsed = problems_from_json(read_json(path), {"gemm"});
  ASSERT_EQ(parsed.size(), 1u);
  const auto& gemm = dynamic_cast<const GemmProblem&>(*parsed[0]);
  testing::write_database(db, {session().device()},
                          {testing::gemm_row(session().device().key(), gemm.shape(), testing::small_tile_config())});
  rt->reload();
  run_gemm(*rt, kOdd, 3);
  const std::vector<DispatchedProblem> problems = rt->dispatched_problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].level, Level::kExact);
  EXPECT_EQ(problems[0].calls[static_cast<std::size_t>(Level::kBuiltin)], 2u);
  EXPECT_EQ(problems[0].calls[static_cast<std::size_t>(Level::kExact)], 3u);
  rt->reset_dispatch_stats();
  run_gemm(*rt, kOdd);
  const DispatchStats s = rt->dispatch_stats();
  EXPECT_EQ(s.total(), 1u);
  EXPECT_EQ(s.by_op.at("gemm")[static_cast<std::size_t>(Level::kExact)], 1u);
}

}  // namespace
}  // namespace ocltune
