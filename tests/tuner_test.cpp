// The tuning loop end to end on PoCL: every evaluation recorded with its status, best kept.
#include "tuner/tuner.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "db/database.h"
#include "harness/error.h"
#include "harness/program.h"
#include "ops/family.h"
#include "ops/gemm/gemm_problem.h"
#include "tests/support/selftest.h"
#include "tests/support/test_session.h"
#include "tuner/prior.h"

namespace ocltune {
namespace {

// GEMM restricted to gemm.cl's variant (one default, every configuration has KWG): the counts
// and the sabotage below are about the tuning loop, whatever other variants the device offers.
class FmaOnlyGemm : public GemmProblem {
 public:
  using GemmProblem::GemmProblem;
  SearchSpace space(const DeviceInfo& device) const override {
    const SearchSpace all = GemmProblem::space(device);
    const SearchSpace::Variant& fma = all.variants().front();
    SearchSpace only(fma.name);
    for (const Parameter& p : fma.parameters) only.add(p.name, p.values, p.meaning);
    for (const Constraint& c : fma.constraints) only.constrain(c.description, c.params, c.holds);
    return only;
  }
  // gemm.cl's default, also on a CPU (where GemmProblem's built-in is the cpu variant's).
  Config default_config(const DeviceInfo&) const override { return gemm_default_config(shape()); }
  std::vector<Config> default_configs(const DeviceInfo& device) const override { return {default_config(device)}; }
};

// GEMM whose plan is sabotaged for some configurations, to check that each failure kind is
// recorded and never stops the run: KWG=8 does not compile, KWG=32 computes with K-1 (wrong
// result), KWG=16 with KWI=8 launches with a work-group size the kernel does not accept.
class SabotagedGemm : public FmaOnlyGemm {
 public:
  using FmaOnlyGemm::FmaOnlyGemm;
  std::unique_ptr<Evaluation> instantiate(Session& session) const override {
    class Sabotaged : public Evaluation {
     public:
      explicit Sabotaged(std::unique_ptr<Evaluation> inner) : inner_(std::move(inner)) {}
      LaunchPlan plan(const Config& config) override {
        LaunchPlan plan = inner_->plan(config);
        KernelLaunch& k = plan.kernels[0];
        if (config.at("KWG") == 8) k.program.defines.emplace_back("OCLTUNE_BROKEN", "1\n#error sabotaged build");
        if (config.at("KWG") == 32) std::get<cl_int>(k.args[2]) -= 1;
        if (config.at("KWG") == 16 && config.at("KWI") == 8) k.local = cl::NDRange(1, 1, 1);
        return plan;
      }
      void reset() override { inner_->reset(); }
      VerifyResult verify() override { return inner_->verify(); }

     private:
      std::unique_ptr<Evaluation> inner_;
    };
    return std::make_unique<Sabotaged>(FmaOnlyGemm::instantiate(session));
  }
};

TuneOptions quick_options(std::int64_t max_evals) {
  TuneOptions o;
  o.strategy = "random";
  o.max_evals = max_evals;
  o.seed = 3;
  o.timing = {.warmup = 1, .min_runs = 2, .max_runs = 3};
  return o;
}

std::int64_t start_run(Database& db, Session& session) {
  db.upsert_device(session.device());
  RunRow run;
  run.device_key = session.device().key();
  run.tool_version = "test";
  return db.begin_run(run);
}

TEST(Tuner, RecordsEveryEvaluationAndTheBest) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("tune.db"));
  const FmaOnlyGemm problem({.m = 24, .n = 40, .k = 17});
  Tuner tuner(session, db, start_run(db, session), quick_options(10), nullptr);
  const ProblemReport report = tuner.tune(problem);
  EXPECT_EQ(report.evaluated, 11);  // the default + 10
  // Plus the three fastest and the default (unless it is one of them), re-timed interleaved (role
  // final); the winner is the fastest of those, so never slower than the default in those rounds.
  EXPECT_GE(report.final_candidates, 3);
  EXPECT_LE(report.final_candidates, 4);
  EXPECT_EQ(db.count_measurements(), 11 + report.final_candidates);
  std::vector<double> finals;
  std::optional<double> default_final;
  const std::string default_params = to_string(problem.default_config(session.device()));
  for (const MeasurementRow& m :
       db.measurements(session.device().key(), "gemm", "fp32", "exact", problem.shape_key())) {
    if (m.role != "final") continue;
    finals.push_back(*m.median_ns);
    if (m.params == default_params) default_final = *m.median_ns;
  }
  ASSERT_EQ(finals.size(), static_cast<std::size_t>(report.final_candidates));
  ASSERT_TRUE(default_final.has_value()) << "the default was not re-timed with the finalists";
  std::sort(finals.begin(), finals.end());
  ASSERT_TRUE(report.best.has_value());
  EXPECT_DOUBLE_EQ(report.best->stats->median_ns, finals[0]);
  ASSERT_TRUE(report.confidence.has_value());
  EXPECT_NEAR(*report.confidence, finals[1] / finals[0] - 1, 1e-12);
  const auto best = db.best(session.device().key(), "gemm", "fp32", "exact", problem.shape_key());
  ASSERT_TRUE(best.has_value());
  EXPECT_DOUBLE_EQ(best->median_ns, report.best->stats->median_ns);
  EXPECT_NEAR(*best->confidence, *report.confidence, 1e-12);
  ASSERT_TRUE(best->default_median_ns.has_value());
  EXPECT_DOUBLE_EQ(*best->default_median_ns, *default_final);
  EXPECT_LE(best->median_ns, *best->default_median_ns);
  // The best row names the final measurement its time came from (issue 19, defect 7).
  ASSERT_TRUE(best->measurement_id.has_value()) << "best.measurement_id is not set";
  bool found = false;
  for (const MeasurementRow& m :
       db.measurements(session.device().key(), "gemm", "fp32", "exact", problem.shape_key())) {
    if (m.measurement_id != *best->measurement_id) continue;
    found = true;
    EXPECT_EQ(m.role, "final");
    EXPECT_EQ(m.status, "ok");
    EXPECT_EQ(m.params, to_string(report.best->config));
    EXPECT_EQ(m.source_hash, best->source_hash);
    EXPECT_DOUBLE_EQ(*m.median_ns, best->median_ns);
  }
  EXPECT_TRUE(found) << "measurement " << *best->measurement_id << " is not of this problem";
}

TEST(Tuner, FailuresAreRecordedWithTheirStatusAndNeverStopTheRun) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("failures.db"));
  const SabotagedGemm problem({.m = 16, .n = 16, .k = 16});
  // Six configurations, one per sabotage and two that verify, all evaluated: every status is
  // certain without sampling a large space (cold compiles on PoCL are seconds each).
  TuneOptions options = quick_options(0);
  options.restriction =
      parse_restriction("DB=0,KWG=8|16|32,KWI=2|8,MWG=16,NWG=16,SA=1,SB=1,VWL=1,VWM=1,VWN=1,WPTM=4,WPTN=4,WTN=0");
  Tuner tuner(session, db, start_run(db, session), options, nullptr);
  const ProblemReport report = tuner.tune(problem);
  EXPECT_EQ(report.space_size, 6u);
  EXPECT_GT(report.by_status.count(Status::kCompileError), 0u);
  EXPECT_GT(report.by_status.count(Status::kWrongResult), 0u);
  EXPECT_GT(report.by_status.count(Status::kLaunchError), 0u);
  EXPECT_GT(report.by_status.count(Status::kOk), 0u);
  for (const MeasurementRow& m :
       db.measurements(session.device().key(), "gemm", "fp32", "exact", problem.shape_key())) {
    const Config c = parse_config(m.params);
    const std::int64_t kwg = c.at("KWG"), kwi = c.at("KWI");
    if (kwg == 8) {
      EXPECT_EQ(m.status, "compile_error") << m.params;
      EXPECT_NE(m.error.find("sabotaged build"), std::string::npos) << m.error;
    } else if (kwg == 32) {
      EXPECT_EQ(m.status, "wrong_result") << m.params;
    } else if (kwi == 8) {
      EXPECT_EQ(m.status, "launch_error") << m.params;
    } else {
      // Verified; timed in full, or cut short when far slower than the best.
      EXPECT_TRUE(m.status == "ok" || m.status == "cut") << m.params << ": " << m.status << " " << m.error;
    }
  }
  // The winner is a configuration that verified.
  ASSERT_TRUE(report.best.has_value());
  EXPECT_EQ(report.best->config.at("KWG"), 16);
  EXPECT_EQ(report.best->config.at("KWI"), 2);
}

TEST(Tuner, ASecondRunResumesAndKeepsTheFasterBest) {
  Session& session = testing::test_session();
  const std::string path = testing::temp_path("resume.db");
  Database db = Database::open(path);
  const FmaOnlyGemm problem({.m = 20, .n = 12, .k = 9});
  {
    Tuner tuner(session, db, start_run(db, session), quick_options(4), nullptr);
    tuner.tune(problem);
  }
  const double first_best = db.best(session.device().key(), "gemm", "fp32", "exact", problem.shape_key())->median_ns;
  Tuner tuner(session, db, start_run(db, session), quick_options(8), nullptr);
  const ProblemReport second = tuner.tune(problem);
  EXPECT_EQ(second.reused, 4);
  EXPECT_EQ(second.evaluated, 1 + 4);  // the default again, then only the configurations not yet measured
  EXPECT_EQ(db.runs().size(), 2u);
  EXPECT_LE(db.best(session.device().key(), "gemm", "fp32", "exact", problem.shape_key())->median_ns, first_best);
}

// Earlier measurements are untrusted like best rows: an `ok` row with a fake 1 ns whose
// configuration is outside the space (a value no parameter declares, an unknown parameter) is
// rejected and reported, never reused, never compiled, and never becomes the best (issue 19.1).
TEST(Tuner, EarlierRowsOutsideTheSpaceAreRejectedNotReused) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("hostile-measurements.db"));
  const FmaOnlyGemm problem({.m = 24, .n = 40, .k = 17});
  const SearchSpace space = problem.space(session.device());
  const Config dflt = problem.default_config(session.device());
  Config out_of_range = dflt;
  for (const auto& [name, value] : dflt) {
    Config c = dflt;
    c[name] = 3;
    if (!space.contains(c)) {
      out_of_range = c;
      break;
    }
  }
  ASSERT_NE(out_of_range, dflt);
  Config unknown = dflt;
  unknown["BOGUS"] = 1;
  ProgramSource source;
  source.files = problem.kernel_files();
  const std::int64_t run = start_run(db, session);
  for (const Config& hostile : {out_of_range, unknown}) {
    MeasurementRow row;
    row.run_id = run;
    row.device_key = session.device().key();
    row.op = "gemm";
    row.dtype = "fp32";
    row.shape_key = problem.shape_key();
    row.shape_json = problem.shape_json().dump();
    row.source_hash = source.files_hash();
    row.params = to_string(hostile);
    row.status = "ok";
    row.median_ns = row.min_ns = row.max_ns = 1.0;
    db.add_measurement(row);
  }
  Tuner tuner(session, db, start_run(db, session), quick_options(3), nullptr);
  const ProblemReport report = tuner.tune(problem);
  EXPECT_EQ(report.rejected, 2);
  EXPECT_EQ(report.reused, 0);
  EXPECT_NE(report.first_rejection.find("measurement 1"), std::string::npos) << report.first_rejection;
  ASSERT_TRUE(report.best.has_value());
  EXPECT_GT(report.best->stats->median_ns, 1.0);
  EXPECT_TRUE(space.contains(report.best->config)) << to_string(report.best->config);
  const auto best = db.best(session.device().key(), "gemm", "fp32", "exact", problem.shape_key());
  ASSERT_TRUE(best.has_value());
  EXPECT_GT(best->median_ns, 1.0);
}

TEST(Tuner, TheWarmStartScoresOtherShapesRelativeToTheirOwnMedian) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("prior.db"));
  const std::int64_t run = start_run(db, session);
  auto add = [&](const std::string& shape_key, const std::string& params, double median, const char* status = "ok") {
    MeasurementRow row;
    row.run_id = run;
    row.device_key = session.device().key();
    row.op = "gemm";
    row.dtype = "fp32";
    row.shape_key = shape_key;
    row.shape_json = "{}";
    row.source_hash = "x";
    row.params = params;
    row.status = status;
    row.median_ns = median;
    db.add_measurement(row);
  };
  const GemmProblem problem({.m = 8, .n = 8, .k = 8});
  for (int i = 1; i <= 9; ++i) add("other", "MWG=" + std::to_string(16 * i), 1000.0 * i);       // median 5000
  add("other", "MWG=999", 1.0, "wrong_result");                                                 // not a success
  for (int i = 1; i <= 9; ++i) add(problem.shape_key(), "MWG=" + std::to_string(16 * i), 5.0);  // the problem itself
  for (int i = 1; i <= 3; ++i) add("tiny", "MWG=" + std::to_string(16 * i), 7.0);               // too few to scale
  const std::vector<PriorPoint> prior = load_prior(db, problem, session.device().key());
  ASSERT_EQ(prior.size(), 9u);
  for (const PriorPoint& p : prior) {
    const double i = static_cast<double>(p.config.at("MWG")) / 16;
    EXPECT_NEAR(p.score, std::log(1000.0 * i) - std::log(5000.0), 1e-9) << to_string(p.config);
  }
}

// The selftest op's kernels are tiny: these budget tests cost builds of milliseconds, not seconds.
std::unique_ptr<Problem> selftest(int n) { return selftest_family().from_json({{"n", n}}); }

// A stored best row with a time no device could reach (negative, below the 1 ns floor, faster
// than the device's copy bandwidth allows) is no result to beat: the tuner writes its own measured
// best over it (issue 42).
TEST(Tuner, AStoredBestWithAnImpossibleTimeIsReplacedByTheMeasuredOne) {
  Session& session = testing::test_session();
  // selftest n=1000 moves 8 KB: at 1 ns and 1 GB/s of copy bandwidth, far above what the device allows.
  int case_index = 0;
  const std::vector<std::pair<double, double>> cases = {{-1.0, 0.0}, {1e-300, 0.0}, {1.0, 1.0}};  // ns, GB/s
  for (const auto& [fake_ns, bandwidth] : cases) {
    Database db = Database::open(testing::temp_path("impossible-best" + std::to_string(case_index++) + ".db"));
    const auto problem = selftest(1000);
    const std::int64_t run = start_run(db, session);
    if (bandwidth > 0) db.set_device_bandwidth(session.device().key(), bandwidth);
    BestRow fake;
    fake.device_key = session.device().key();
    fake.op = problem->op();
    fake.dtype = dtype_name(problem->dtype());
    fake.shape_key = problem->shape_key();
    fake.shape_json = problem->shape_json().dump();
    fake.params_json = to_json(problem->default_config(session.device())).dump();
    fake.median_ns = fake.min_ns = fake.max_ns = fake_ns;
    fake.provenance = "{}";
    ASSERT_TRUE(db.update_best_if_faster(fake));
    TuneOptions options = quick_options(2);
    options.restriction = parse_restriction("MODE=0");
    Tuner tuner(session, db, run, options, nullptr);
    const ProblemReport report = tuner.tune(*problem);
    ASSERT_TRUE(report.best.has_value());
    EXPECT_TRUE(report.best_written) << fake_ns;
    const auto best = db.best(session.device().key(), "selftest", "fp32", "exact", problem->shape_key());
    ASSERT_TRUE(best.has_value());
    EXPECT_DOUBLE_EQ(best->median_ns, report.best->stats->median_ns) << fake_ns;
  }
}

TEST(Tuner, AFractionOfTheRestrictedSpaceStopsTheSearchAndSaysWhy) {
  Session& session = testing::test_session();
  Database db = Database::open(testing::temp_path("fraction.db"));
  const auto problem = selftest(500);
  TuneOptions options = quick_options(0);
  options.strategy = "model";
  options.fraction = 0.25;
  options.final_candidates = 0;
  options.restriction = parse_restriction("MODE=0");
  Tuner tuner(session, db, start_run(db, session), options, nullptr);
  const ProblemReport report = tuner.tune(*problem);
  ASSERT_EQ(report.space_size, 16u);
  EXPECT_EQ(report.evaluated, 1 + 4);
  EXPECT_NE(report.stop_reason.find("--fraction"), std::string::npos) << report.stop_reason;
  for (const MeasurementRow& m :
       db.measurements(session.device().key(), "selftest", "fp32", "exact", problem->shape_key())) {
    EXPECT_EQ(parse_config(m.params).at("MODE"), 0) << m.params;
  }
}

TEST(Tuner, CandidatesSlowerThanTheCutAreTimedOnlyForTheFirstBatch) {
  Session& session = testing::test_session();
  for (const double cut : {0.0, 1e-6}) {
    Database db = Database::open(testing::temp_path("cut.db"));
    const auto problem = selftest(600);
    TuneOptions options = quick_options(6);
    options.final_candidates = 0;
    options.cut_factor = cut;  // 1e-6: every candidate is "far slower" than the best; 0: none is cut
    options.timing = {.warmup = 1, .min_runs = 3, .max_runs = 8, .target_spread = 0.0};
    options.restriction = parse_restriction("MODE=0");
    Tuner tuner(session, db, start_run(db, session), options, nullptr);
    const ProblemReport report = tuner.tune(*problem);
    for (const MeasurementRow& m :
         db.measurements(session.device().key(), "selftest", "fp32", "exact", problem->shape_key())) {
      if (m.role != "search") continue;
      EXPECT_EQ(m.status, cut > 0 ? "cut" : "ok") << m.params;
      if (cut > 0) {
        EXPECT_EQ(*m.samples, 3) << m.params;  // the first batch only
      }
    }
    EXPECT_EQ(report.by_status.count(Status::kCut), cut > 0 ? 1u : 0u);
    ASSERT_TRUE(report.best.has_value());
    if (cut > 0) {
      EXPECT_EQ(to_string(report.best->config), to_string(report.default_result->config));  // a cut never wins
    }
  }
}

}  // namespace
}  // namespace ocltune

namespace ocltune {
namespace {

// Every run measures each problem's default configurations; a default outside its space could win
// and then be refused by `db export`, `db merge` and the runtime (on the H200 eight winning conv2d
// defaults of 32 work-items were, while the GPU floor was 64). So every default of every preset
// must be a point of its space, on this device and on a GPU.
TEST(Defaults, EveryPresetDefaultIsInItsSpaceOnACpuAndAGpu) {
  for (const DeviceInfo& device : {testing::test_session().device(), testing::described_h200()}) {
    for (const OpFamily* family : op_families()) {
      for (const char* preset : {"default", "quick"}) {
        for (const auto& problem : family->preset(preset)) {
          for (const Config& d : problem->default_configs(device)) {
            EXPECT_EQ(problem->space(device).check(d), "") << device_type_name(device.type) << " " << family->name()
                                                           << " " << problem->shape_key() << ": " << to_string(d);
          }
        }
      }
    }
  }
}

// Test support's family joins the registry through register_family (called by the suites' main):
// found by name and in shapes files, never part of --ops all, and registered only once.
TEST(Registry, ARegisteredFamilyIsFoundByNameButNotInAll) {
  EXPECT_EQ(find_family("selftest"), &selftest_family());
  for (const OpFamily* f : op_families()) EXPECT_NE(f->name(), "selftest");
  const std::vector<std::string> names = family_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "selftest"), 0);
  const ProblemList problems =
      problems_from_json(nlohmann::json::parse(R"([{"op": "selftest", "n": 9}])"), {"selftest"});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0]->op(), "selftest");
  EXPECT_THROW(register_family(selftest_family()), Error);
}

}  // namespace
}  // namespace ocltune
