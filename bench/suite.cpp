// The benchmark suite: registration, lazy instantiation, verification, timing and counters.
#include "bench/suite.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/baselines.h"
#include "bench/config_timed.h"
#include "db/database.h"
#include "harness/error.h"
#include "harness/session.h"
#include "harness/timing.h"

namespace ocltune::bench {
namespace {

// Build logs can be long; the JSON keeps the head, enough to see which error it was.
std::string shorten(const std::string& text) { return text.size() <= 400 ? text : text.substr(0, 400) + "..."; }

}  // namespace

std::string benchmark_name(const Problem& problem, const std::string& variant) {
  const std::string dtype = problem.math() == MathMode::kExact
                                ? std::string(dtype_name(problem.dtype()))
                                : fmt::format("{}-{}", dtype_name(problem.dtype()), math_name(problem.math()));
  return fmt::format("{}/{}/{}/{}", problem.op(), dtype, problem.shape_key(), variant);
}

Suite::Suite(Session& session, Ceilings ceilings, const Database* db, std::string db_note, bool baselines)
    : session_(session), ceilings_(ceilings), db_(db), db_note_(std::move(db_note)), baselines_(baselines) {}

Evaluation& Suite::evaluation(Entry& entry) {
  if (!evaluation_) evaluation_ = entry.problem->instantiate(session_);
  return *evaluation_;
}

Suite::Variant Suite::config_variant(Entry& entry, const std::string& name, const Config& config) {
  return {name, [this, &entry, config] { return std::make_unique<ConfigTimed>(session_, evaluation(entry), config); },
          ""};
}

// A database is untrusted input: its configuration must lie in the problem's declared space before
// it reaches a compiler.
Suite::Variant Suite::tuned_variant(Entry& entry) {
  const Problem& p = *entry.problem;
  if (!db_) return {"tuned", {}, db_note_};
  const std::optional<BestRow> best =
      db_->best(session_.device().key(), p.op(), dtype_name(p.dtype()), math_name(p.math()), p.shape_key());
  if (!best) return {"tuned", {}, "not tuned on this device: no row in the database's best table"};
  Config config;
  try {
    config = config_from_json(nlohmann::json::parse(best->params_json));
  } catch (const std::exception& e) {
    return {"tuned", {}, shorten(fmt::format("database configuration unreadable: {}", e.what()))};
  }
  if (const std::string why = p.space(session_.device()).check(config); !why.empty()) {
    return {"tuned", {}, shorten(fmt::format("database configuration {} rejected: {}", to_string(config), why))};
  }
  return config_variant(entry, "tuned", config);
}

void Suite::add(std::unique_ptr<Problem> problem) {
  auto entry = std::make_unique<Entry>();
  entry->problem = std::move(problem);
  Entry& e = *entry;
  e.variants.push_back(tuned_variant(e));
  e.variants.push_back(config_variant(e, "default", e.problem->default_config(session_.device())));
  if (baselines_) {
    for (BaselineSpec& spec : baselines_for(*e.problem)) {
      e.variants.push_back({spec.name, [this, make = std::move(spec.make)] { return make(session_); }, ""});
    }
  }
  const std::size_t index = entries_.size();
  for (std::size_t v = 0; v < e.variants.size(); ++v) {
    benchmark::RegisterBenchmark(benchmark_name(*e.problem, e.variants[v].name).c_str(),
                                 [this, index, v](benchmark::State& state) { run(state, index, v); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    ++registered_;
  }
  entries_.push_back(std::move(entry));
}

Suite::Slot& Suite::acquire(std::size_t entry, std::size_t variant) {
  if (entry != current_) {
    slots_.clear();  // timed objects first: they refer to the evaluation
    evaluation_.reset();
    current_ = entry;
  }
  if (auto it = slots_.find(variant); it != slots_.end()) return it->second;
  Slot& slot = slots_[variant];
  const Variant& v = entries_[entry]->variants[variant];
  if (!v.make) {
    slot.error = v.error;
    return slot;
  }
  try {
    slot.timed = v.make();
    slot.error = slot.timed->verify();
  } catch (const BuildError& e) {
    slot.error = shorten(fmt::format("compile error: {}", e.log().empty() ? e.what() : e.log()));
  } catch (const std::exception& e) {
    slot.error = shorten(e.what());
  }
  if (!slot.error.empty()) {
    slot.timed.reset();
    ++failures_;
  }
  return slot;
}

void Suite::run(benchmark::State& state, std::size_t entry, std::size_t variant) {
  Slot& slot = acquire(entry, variant);
  if (!slot.error.empty()) {
    state.SkipWithError(slot.error.c_str());
    return;
  }
  std::vector<double> samples;
  try {
    slot.timed->run_ns();  // warm-up: caches and clocks after the previous benchmark
    for (auto _ : state) {
      const double ns = slot.timed->run_ns();
      state.SetIterationTime(ns * 1e-9);
      samples.push_back(ns);
    }
  } catch (const std::exception& e) {
    slot.error = shorten(e.what());
    ++failures_;
    state.SkipWithError(slot.error.c_str());
    return;
  }
  state.SetLabel(slot.timed->label());
  set_counters(state, *entries_[entry]->problem, std::move(samples));
}

// Counters from the median iteration (robust against a context switch on a shared machine); the
// benchmark's own time column is the mean, as Google Benchmark computes it.
void Suite::set_counters(benchmark::State& state, const Problem& p, std::vector<double> samples_ns) const {
  const TimingStats stats = summarize(std::move(samples_ns));
  const double t = stats.median_ns;
  if (t <= 0) return;
  const double gflops = p.flops() / t, gbs = p.bytes() / t;
  const Ceilings ceilings = ceilings_.for_inputs(p.matrix_inputs());
  const double peak_frac = p.memory_bound() ? (ceilings.copy_gbs > 0 ? gbs / ceilings.copy_gbs : 0)
                                            : (ceilings.peak_gflops > 0 ? gflops / ceilings.peak_gflops : 0);
  state.counters["GFLOP/s"] = gflops;
  state.counters["GB/s"] = gbs;
  state.counters["peak_frac"] = peak_frac;
  state.counters["roofline_frac"] = roofline_fraction(ceilings, p.flops(), p.bytes(), t);
  state.counters["median_us"] = t * 1e-3;
  state.counters["spread"] = stats.spread;
  state.counters["flops"] = p.flops();
  state.counters["bytes"] = p.bytes();
  state.counters["memory_bound"] = p.memory_bound() ? 1 : 0;
}

}  // namespace ocltune::bench
