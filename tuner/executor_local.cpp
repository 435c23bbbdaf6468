// Evaluations in this process: programs built ahead on the compile pool, interleaved re-timing.
#include <algorithm>

#include "harness/error.h"
#include "harness/session.h"
#include "tuner/compile_pool.h"
#include "tuner/executor.h"

namespace ocltune {
namespace {

class LocalExecutor : public Executor {
 public:
  LocalExecutor(Session& session, const Problem& problem, CompilePool* pool)
      : session_(session),
        evaluation_(problem.instantiate(session)),
        evaluator_(session, *evaluation_),
        pool_(pool),
        quiet_timing_(pool && pool->threads() > 0 && session.device().type == DeviceType::kCpu) {}

  void prefetch(const std::vector<Config>& configs) override {
    if (!pool_ || pool_->threads() == 0) return;
    for (const Config& config : configs) {
      try {
        for (const KernelLaunch& k : evaluation_->plan(config).kernels) pool_->submit(k.program);
      } catch (const Error&) {
        // The evaluation reports it.
      }
    }
  }

  EvalOutcome evaluate(const Config& config, const TimingPolicy& timing) override {
    Evaluator::Hooks hooks;
    if (quiet_timing_) {
      hooks.before_timing = [this] { pool_->pause(); };
      hooks.after_timing = [this] { pool_->resume(); };
    }
    EvalOutcome o = evaluator_.evaluate(config, timing, hooks);
    // A failure that took the device context down is a crash, not this configuration's launch or
    // compile error (every later call would fail the same way).
    if ((o.status == Status::kLaunchError || o.status == Status::kCompileError) && !session_.alive()) {
      o.status = Status::kCrash;
      o.error = "the device context was lost: " + o.error;
    }
    return o;
  }

  std::vector<std::vector<double>> interleave(const std::vector<Config>& configs, int rounds, int runs) override {
    std::vector<std::optional<PreparedPlan>> plans;
    for (const Config& config : configs) {
      try {
        plans.push_back(prepare(session_, evaluation_->plan(config)));
      } catch (const Error&) {
        plans.emplace_back();
      }
    }
    std::vector<std::vector<double>> samples(configs.size());
    if (quiet_timing_) pool_->pause();
    try {
      for (auto& plan : plans) {
        if (plan) enqueue(session_.queue(), *plan);  // warm-up
      }
      session_.queue().finish();
      for (int r = 0; r < rounds; ++r) {
        for (std::size_t c = 0; c < plans.size(); ++c) {
          if (!plans[c]) continue;
          std::vector<std::vector<cl::Event>> events;
          for (int k = 0; k < runs; ++k) events.push_back(enqueue(session_.queue(), *plans[c]));
          session_.queue().finish();
          for (const auto& e : events) samples[c].push_back(event_span_ns(e));
        }
      }
    } catch (const Error&) {
      if (quiet_timing_) pool_->resume();
      throw;
    } catch (const cl::Error& e) {
      if (quiet_timing_) pool_->resume();
      throw ClError(e);
    }
    if (quiet_timing_) pool_->resume();
    return samples;
  }

 private:
  Session& session_;
  std::unique_ptr<Evaluation> evaluation_;
  Evaluator evaluator_;
  CompilePool* pool_;
  bool quiet_timing_;
};

}  // namespace

std::unique_ptr<Executor> make_local_executor(Session& session, const Problem& problem, CompilePool* pool) {
  return std::make_unique<LocalExecutor>(session, problem, pool);
}

}  // namespace ocltune
