// What the search of one problem knows so far (shared by tuner.cpp and finalists.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/tuner.h"

namespace ocltune {

// How often a run of a group (docs/decisions/0038) looks again at the claims it waits for.
inline constexpr std::chrono::milliseconds kGroupPoll{50};

// What the search of one problem knows so far.
struct Tuner::Search {
  std::string source_hash;
  std::set<std::string> measured;     // params measured in the search (this run, earlier, concurrent)
  std::vector<EvalOutcome> verified;  // every ok outcome, defaults and reused included
  std::int64_t last_seen_id = 0;      // newest measurement row read back from the database
  // Per configuration, the `ok` measurement row its current time came from: the best row names
  // it (best.measurement_id), and `db verify` checks that it says the same.
  std::map<std::string, std::int64_t> ok_row;
  std::optional<EvalOutcome> best, runner_up;
  // The untuned default (the report's baseline) and its median in the final re-timing, where it
  // runs interleaved with the finalists: the best kept is never slower than it under one load.
  std::optional<EvalOutcome> baseline;
  std::optional<double> baseline_final_ns;
  std::optional<double> confidence;
  int finalists = 0;

  void consider(const EvalOutcome& o) {
    if (o.status != Status::kOk || !o.stats) return;
    verified.push_back(o);
    if (!best || o.stats->median_ns < best->stats->median_ns) {
      runner_up = best;
      best = o;
    } else if (!runner_up || o.stats->median_ns < runner_up->stats->median_ns) {
      runner_up = o;
    }
  }
};

}  // namespace ocltune
