// Claims on evaluations, for tuners that share one problem's candidates (several devices of one
// device key, docs/decisions/0038): a `pending` row committed only when no tuner has the same
// configuration already, and what a coordinator does with the claims of a worker that died.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db/space_records.h"

namespace ocltune {

class Database;
struct MeasurementRow;

enum class ClaimResult {
  kClaimed,  // the pending row is committed: this tuner evaluates it
  kTaken,    // another row has it (pending or done): `measurement_id` names the earliest
  kFull,     // the problem has `limit` search configurations already (pending included)
};

struct Claim {
  ClaimResult result = ClaimResult::kClaimed;
  std::int64_t measurement_id = 0;
};

// Commits `row` (its status must be pending) in one transaction that first looks for the same
// problem and kernel source (`row`'s device key, op, dtype, math, shape and source hash) and:
// - role search: a search row of the same configuration in any run (as the tuner reuses them);
//   and, with `limit` > 0, `limit` distinct search configurations already;
// - role default: a default row of the same configuration in one of `group_runs` (each run
//   measures its defaults; runs of one group share them);
// - role final: any final row of one of `group_runs` (one of them re-times the finalists).
Claim claim_measurement(Database& db, MeasurementRow row, const std::vector<std::int64_t>& group_runs,
                        std::int64_t limit);

// A measurement row as it is now, with its run.
struct ClaimedRow {
  MeasuredPoint point;
  std::int64_t run_id = 0;
};
// The rows with these ids that still exist (a released claim is gone).
std::map<std::int64_t, ClaimedRow> rows_by_id(Database& db, const std::vector<std::int64_t>& ids);

// The pending rows of one run, any problem.
struct PendingRow {
  std::int64_t measurement_id = 0;
  std::string op, shape_key, source_hash, params, role;
};
std::vector<PendingRow> pending_rows_of_run(Database& db, std::int64_t run_id);

// A dead worker's claim: deleted, so a live worker of the group can claim the configuration again
// (it is no measurement: nothing measured is ever deleted), or recorded as `crash` with `error`.
void release_claim(Database& db, std::int64_t measurement_id);
void record_claim_as_crash(Database& db, std::int64_t measurement_id, const std::string& error);

// What one run measured: evaluations (default and search rows, not pending), of those `ok`, and
// rows of the final re-timing.
struct RunCounts {
  std::int64_t evaluations = 0, ok = 0, final_rows = 0;
};
RunCounts count_run_rows(Database& db, std::int64_t run_id);

}  // namespace ocltune
