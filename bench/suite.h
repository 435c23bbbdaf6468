// The benchmark suite: every problem of the chosen families registered with Google Benchmark as
// tuned / default / baseline variants, each verified once before it is timed by device events.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/roofline.h"
#include "bench/timed.h"
#include "ops/problem.h"

namespace ocltune {
class Database;
}

namespace ocltune::bench {

class Suite {
 public:
  // `db` may be null (no database): tuned variants then report why they did not run. `baselines`
  // false registers only our kernels.
  Suite(Session& session, Ceilings ceilings, const Database* db, std::string db_note, bool baselines);

  // Registers the problem's variants: "tuned" (the database's best configuration, checked against
  // the problem's space), "default" (the untuned configuration) and one per baseline.
  void add(std::unique_ptr<Problem> problem);

  int registered() const { return registered_; }
  // Variants that failed to build, launch or verify in this process: they get no figure.
  int failures() const { return failures_; }

 private:
  using Make = std::function<std::unique_ptr<Timed>()>;
  struct Variant {
    std::string name;
    Make make;  // empty when `error` says why the variant cannot run
    std::string error;
  };
  struct Entry {
    std::unique_ptr<Problem> problem;
    std::vector<Variant> variants;
  };
  // What has been built and verified for the entry being benchmarked.
  struct Slot {
    std::unique_ptr<Timed> timed;
    std::string error;
  };

  Variant tuned_variant(Entry& entry);
  Variant config_variant(Entry& entry, const std::string& name, const Config& config);
  Evaluation& evaluation(Entry& entry);
  Slot& acquire(std::size_t entry, std::size_t variant);
  void run(benchmark::State& state, std::size_t entry, std::size_t variant);
  void set_counters(benchmark::State& state, const Problem& problem, std::vector<double> samples_ns) const;

  Session& session_;
  Ceilings ceilings_;
  const Database* db_;
  std::string db_note_;
  bool baselines_;
  std::vector<std::unique_ptr<Entry>> entries_;
  int registered_ = 0;
  int failures_ = 0;
  // Buffers of one problem at a time: Google Benchmark runs a problem's variants one after another.
  std::size_t current_ = static_cast<std::size_t>(-1);
  std::unique_ptr<Evaluation> evaluation_;
  std::map<std::size_t, Slot> slots_;
};

// "gemm/fp32/batch=1,k=256,layout=NN,m=256,n=256/tuned": op, dtype (with "-<math>" unless exact),
// shape key, variant. The report parses these four parts.
std::string benchmark_name(const Problem& problem, const std::string& variant);

}  // namespace ocltune::bench
