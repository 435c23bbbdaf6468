// `ocltune db holdout`: how well the runtime's lookup chain serves a model nobody tuned for. Each
// group's rows (one model's problems) are held out of a tuned-rows file; the chain picks a
// configuration for each held-out problem from the remaining rows, as the runtime would at a miss;
// both that pick and the held-out row's own tuned configuration are verified and timed on --device.
#pragma once

#include <string>

#include "cli/commands.h"

namespace ocltune {

struct DbHoldoutOptions {
  std::string file;    // tuned-rows file (.jsonl or .db): what is held out and what predicts
  std::string groups;  // JSON: {"group name": [{"op", "dtype", "math", "shape_key"}, ...], ...}
  // Evenly spaced held-out rows per group to time (0: all): timing both configurations of every
  // row of a large file takes a while on a GPU (a build each).
  int rows_per_group = 0;
  // Stop starting rows after this wall time ("5m"; empty: none); the rest are counted as not reached.
  std::string time_budget;
};

// Prints per row the level and source of the pick, both times and tuned/predicted (1.0: as fast as
// the tuned row), and per group and overall the mean ratio and the time-weighted one (the sum of the
// tuned times over the sum of the predicted: what a model's step would lose). 0 unless input is bad.
int run_db_holdout(const CliOptions& options, const DbHoldoutOptions& holdout);

}  // namespace ocltune
