// The benchmark suite on PoCL: baselines verify, wrong kernels and bad database rows get no figure.
#include <cmath>
#include <map>

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include "bench/clblast_gemm.h"
#include "bench/copy_baseline.h"
#include "bench/operation_timer.h"
#include "bench/roofline.h"
#include "bench/suite.h"
#include "db/database.h"
#include "ops/family.h"
#include "ops/gemm/gemm_problem.h"
#include "ops/softmax/softmax_problem.h"
#include "tests/support/test_session.h"

namespace ocltune::bench {
namespace {

TEST(Roofline, BoundIsTheSlowerOfComputeAndTraffic) {
  const Ceilings c{.peak_gflops = 1000, .copy_gbs = 100};  // ridge at 10 FLOP/byte
  EXPECT_DOUBLE_EQ(roofline_bound_ns(c, 1e6, 1e6), 1e4);   // memory-bound: 1e6 B / 100 B/ns
  EXPECT_DOUBLE_EQ(roofline_bound_ns(c, 1e8, 1e6), 1e5);   // compute-bound: 1e8 FLOP / 1000 FLOP/ns
  EXPECT_DOUBLE_EQ(roofline_fraction(c, 1e8, 1e6, 2e5), 0.5);
  EXPECT_EQ(roofline_bound_ns({}, 1e8, 1e6), 0);  // unknown ceilings: no bound
}

TEST(Roofline, Tf32ProblemsMeetTheTensorCoreCeilingWhereOneWasMeasured) {
  const Ceilings c{.peak_gflops = 1000, .copy_gbs = 100, .tf32_gflops = 4000, .fp16_gflops = 8000, .bf16_gflops = 7900};
  EXPECT_DOUBLE_EQ(c.for_inputs("tf32").peak_gflops, 4000);
  EXPECT_DOUBLE_EQ(roofline_bound_ns(c.for_inputs("tf32"), 1e8, 1e6), 2.5e4);  // 1e8 FLOP / 4000 FLOP/ns
  EXPECT_DOUBLE_EQ(c.for_inputs("").peak_gflops, 1000);
  EXPECT_DOUBLE_EQ(c.for_inputs("fp16").peak_gflops, 8000);
  EXPECT_DOUBLE_EQ(c.for_inputs("bf16").peak_gflops, 7900);
  const Ceilings no_tensor_cores{.peak_gflops = 1000, .copy_gbs = 100};
  EXPECT_DOUBLE_EQ(no_tensor_cores.for_inputs("tf32").peak_gflops, 1000);  // tf32 runs on the FMA units
  EXPECT_DOUBLE_EQ(no_tensor_cores.for_inputs("fp16").peak_gflops, 1000);
}

// Which ceiling a problem meets: a 16-bit GEMM the 16-bit tensor-core rate in either math mode, an
// fp32 GEMM the TF32 rate only in tf32 mode, a memory-bound fp16 op none (it computes in fp32).
TEST(Roofline, ProblemsNameTheirMatrixInputs) {
  EXPECT_EQ(GemmProblem({.m = 64, .n = 64, .k = 64, .dtype = DType::kFp16}).matrix_inputs(), "fp16");
  EXPECT_EQ(GemmProblem({.m = 64, .n = 64, .k = 64, .math = MathMode::kTf32, .dtype = DType::kBf16}).matrix_inputs(),
            "bf16");
  EXPECT_EQ(GemmProblem({.m = 64, .n = 64, .k = 64, .math = MathMode::kTf32}).matrix_inputs(), "tf32");
  EXPECT_EQ(GemmProblem({.m = 64, .n = 64, .k = 64}).matrix_inputs(), "");
  const auto softmax = softmax_family().from_json({{"dims", {64, 64}}, {"dtype", "fp16"}});
  EXPECT_EQ(softmax->matrix_inputs(), "");
}

TEST(Baselines, CopyVerifiesAndTimes) {
  auto copy = make_copy(testing::test_session(), 1 << 20);
  EXPECT_EQ(copy->verify(), "");
  EXPECT_GT(copy->run_ns(), 0);
}

TEST(Baselines, ClblastGemmVerifiesInEveryLayoutAndBatched) {
  const GemmShape shapes[] = {{.m = 33, .n = 17, .k = 9},
                              {.m = 19, .n = 23, .k = 29, .batch = 3, .trans_b = true},
                              {.m = 40, .n = 24, .k = 31, .trans_a = true, .alpha = 2.0f, .beta = 1.0f}};
  for (const GemmShape& s : shapes) {
    auto gemm = make_clblast_gemm(testing::test_session(), s);
    EXPECT_EQ(gemm->verify(), "") << s.key();
    EXPECT_GT(gemm->run_ns(), 0) << s.key();
  }
}

// 16-bit shapes: HGEMM on half buffers where the device has cl_khr_fp16, else (and for bf16,
// which CLBlast lacks) the fp32 SGEMM of the shape, labelled as such.
TEST(Baselines, ClblastGemmOfHalfShapesSaysWhatItRuns) {
  Session& session = testing::test_session();
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    const GemmShape s{.m = 33, .n = 17, .k = 9, .alpha = 1.5f, .beta = 0.5f, .dtype = dtype};
    auto gemm = make_clblast_gemm(session, s);
    EXPECT_EQ(gemm->verify(), "") << dtype_name(dtype);
    const bool hgemm = dtype == DType::kFp16 && session.device().has_extension("cl_khr_fp16");
    EXPECT_EQ(gemm->label().find("fp32") != std::string::npos, !hgemm) << gemm->label();
    EXPECT_EQ(gemm->label().find("<half>") != std::string::npos, hgemm) << gemm->label();
  }
}

TEST(OperationTimer, SpanCoversEveryKernelOfTheCall) {
  Session& session = testing::test_session();
  cl::Buffer a(session.context(), CL_MEM_READ_WRITE, 4 << 20), b(session.context(), CL_MEM_READ_WRITE, 4 << 20);
  // Two commands; the "library" returns the event of the second only.
  const OperationTime t = time_operation(session.queue(), [&](cl::Event& last) {
    session.queue().enqueueCopyBuffer(a, b, 0, 0, 4 << 20);
    session.queue().enqueueCopyBuffer(b, a, 0, 0, 4 << 20, nullptr, &last);
  });
  EXPECT_GT(t.last_event_ns, 0);
  EXPECT_GE(t.span_ns, t.last_event_ns);
}

// A GEMM whose kernels compute with K - 1 for every configuration: a wrong result.
class WrongGemm : public GemmProblem {
 public:
  using GemmProblem::GemmProblem;
  std::unique_ptr<Evaluation> instantiate(Session& session) const override {
    class Wrong : public Evaluation {
     public:
      explicit Wrong(std::unique_ptr<Evaluation> inner) : inner_(std::move(inner)) {}
      LaunchPlan plan(const Config& config) override {
        LaunchPlan plan = inner_->plan(config);
        std::get<cl_int>(plan.kernels[0].args[2]) -= 1;
        return plan;
      }
      void reset() override { inner_->reset(); }
      VerifyResult verify() override { return inner_->verify(); }

     private:
      std::unique_ptr<Evaluation> inner_;
    };
    return std::make_unique<Wrong>(GemmProblem::instantiate(session));
  }
};

// Collects what Google Benchmark reports, by benchmark name.
class Collector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) results[r.benchmark_name()] = r;
  }
  std::map<std::string, Run> results;
};

const Collector::Run* find(const Collector& c, const std::string& prefix) {
  for (const auto& [name, run] : c.results) {
    if (name.rfind(prefix, 0) == 0) return &run;
  }
  return nullptr;
}

TEST(Suite, OnlyVerifiedConfigurationsGetFigures) {
  Session& session = testing::test_session();
  const std::string path = testing::temp_path("bench-suite.db");
  Database db = Database::open(path);
  db.upsert_device(session.device());
  const GemmShape good{.m = 24, .n = 40, .k = 16}, tampered{.m = 32, .n = 8, .k = 8};
  auto best_row = [&](const GemmShape& s, const std::string& params) {
    BestRow row;
    row.device_key = session.device().key();
    row.op = "gemm";
    row.dtype = "fp32";
    row.shape_key = s.key();
    row.shape_json = s.to_json().dump();
    row.params_json = params;
    row.median_ns = row.min_ns = row.max_ns = 1000;
    row.source_hash = "test";
    ASSERT_TRUE(db.update_best_if_faster(row));
  };
  best_row(good, to_json(gemm_default_config()).dump());
  best_row(tampered, R"({"MWG": 7, "NWG": 999})");  // not in the space: must never reach a compiler

  const char* args[] = {"bench_test", "--benchmark_min_time=0.01"};
  int argc = 2;
  benchmark::Initialize(&argc, const_cast<char**>(args));
  Suite suite(session, {.peak_gflops = 100, .copy_gbs = 10}, &db, "", false);
  suite.add(std::make_unique<GemmProblem>(good));
  suite.add(std::make_unique<GemmProblem>(tampered));
  suite.add(std::make_unique<WrongGemm>(GemmShape{.m = 16, .n = 16, .k = 16}));
  EXPECT_EQ(suite.registered(), 6);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();

  const auto* tuned = find(collector, benchmark_name(GemmProblem(good), "tuned"));
  ASSERT_NE(tuned, nullptr);
  EXPECT_FALSE(tuned->error_occurred) << tuned->error_message;
  EXPECT_EQ(tuned->report_label, to_string(gemm_default_config()));
  const double gflops = tuned->counters.at("GFLOP/s");
  EXPECT_GT(gflops, 0);
  EXPECT_NEAR(tuned->counters.at("flops"), good.flops(), 1e-6 * good.flops());
  EXPECT_NEAR(tuned->counters.at("roofline_frac"),
              roofline_bound_ns({100, 10}, good.flops(), good.bytes()) / tuned->counters.at("median_us") / 1e3, 1e-6);

  const auto* rejected = find(collector, benchmark_name(GemmProblem(tampered), "tuned"));
  ASSERT_NE(rejected, nullptr);
  EXPECT_TRUE(rejected->error_occurred);
  EXPECT_NE(rejected->error_message.find("rejected"), std::string::npos) << rejected->error_message;
  const auto* fallback = find(collector, benchmark_name(GemmProblem(tampered), "default"));
  ASSERT_NE(fallback, nullptr);
  EXPECT_FALSE(fallback->error_occurred) << fallback->error_message;

  const auto* wrong = find(collector, benchmark_name(GemmProblem({.m = 16, .n = 16, .k = 16}), "default"));
  ASSERT_NE(wrong, nullptr);
  EXPECT_TRUE(wrong->error_occurred);
  EXPECT_NE(wrong->error_message.find("wrong result"), std::string::npos) << wrong->error_message;
  EXPECT_EQ(wrong->counters.count("GFLOP/s"), 0u);
  EXPECT_EQ(suite.failures(), 1);  // the wrong kernel; a rejected database row is not a failure of ours
}

// A problem reported in GB/s: gets the copy baseline of the same traffic besides its family's hook.
class MemoryBoundGemm : public GemmProblem {
 public:
  using GemmProblem::GemmProblem;
  bool memory_bound() const override { return true; }
};

TEST(Suite, MemoryBoundProblemsGetACopyOfTheSameTraffic) {
  const char* args[] = {"bench_test", "--benchmark_min_time=0.01"};
  int argc = 2;
  benchmark::Initialize(&argc, const_cast<char**>(args));
  const GemmShape shape{.m = 8, .n = 512, .k = 4};
  Suite suite(testing::test_session(), {.peak_gflops = 100, .copy_gbs = 10}, nullptr, "no database", true);
  suite.add(std::make_unique<MemoryBoundGemm>(shape));
  EXPECT_EQ(suite.registered(), 4);  // tuned (no database), default, clblast, copy
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  const auto* copy = find(collector, benchmark_name(MemoryBoundGemm(shape), "copy"));
  ASSERT_NE(copy, nullptr);
  ASSERT_FALSE(copy->error_occurred) << copy->error_message;
  EXPECT_NE(copy->report_label.find(std::to_string(static_cast<long long>(shape.bytes() / 2))), std::string::npos)
      << copy->report_label;
  EXPECT_NEAR(copy->counters.at("peak_frac"), copy->counters.at("GB/s") / 10, 1e-9);
  const auto* tuned = find(collector, benchmark_name(MemoryBoundGemm(shape), "tuned"));
  ASSERT_NE(tuned, nullptr);
  EXPECT_EQ(tuned->error_message, "no database");
  EXPECT_EQ(suite.failures(), 0);
}

}  // namespace
}  // namespace ocltune::bench
