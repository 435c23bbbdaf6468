// Where a tuning run starts each problem: the tuned configurations nearest to it (rows of the system
// database, which holds the shipped files, and of the run's own database, on this device first, then
// on devices of its class, then the problems this run tuned before), and which problems the system
// database already serves well, so the run tunes them last.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "harness/device.h"
#include "ops/problem.h"
#include "runtime/table.h"

namespace ocltune {

class Database;

class TunedNeighbourhood {
 public:
  // `system_db`: the read-only system database ("" or a missing file: none). A database that cannot
  // be read is skipped with a note through `log`, like the runtime does.
  TunedNeighbourhood(const DeviceInfo& device, const std::string& system_db, Database& run_db,
                     const TunedTable::Log& log);

  // Up to `limit` configurations of the nearest comparable shapes of the problem's op, dtype and
  // math, nearest first, without repeats: the system database's row of the exact shape first (a
  // shipped deep row is the best start there is), the run database's excluded (the tuner resumes it).
  std::vector<Config> nearest(const Problem& problem, std::size_t limit = 3) const;
  // Whether the system database has this problem's own row on this device, of at least
  // kMinEvaluations evaluations (db/provenance.h) or of unknown depth.
  bool served_by_system(const Problem& problem) const;
  // A problem this run tuned: a starting point for the later ones.
  void add(const Problem& problem, const Config& best);
  // Stable reorder: problems the system database serves well go last. Returns how many moved.
  std::size_t tune_served_last(ProblemList& problems) const;

 private:
  struct Tuned {
    std::string op, dtype, math, shape_key;
    ShapeInfo shape;
    Config config;
  };
  std::string device_key_;
  std::unique_ptr<TunedTable> system_, run_db_;
  std::vector<Tuned> this_run_;
};

// The system database a run consults: $OCLTUNE_SYSTEM_DB, else the installed (or build-tree) one.
std::string system_database_for_tuning();

}  // namespace ocltune
