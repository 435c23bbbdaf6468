// `ocltune db check`: re-times the rows of a tuned-rows file on a device and says which went stale.
#pragma once

#include <optional>
#include <string>

#include "cli/commands.h"
#include "harness/device.h"

namespace ocltune {

struct DbCheckOptions {
  std::string file;
  // A row of the chosen device's key fails when its figure now is below (1 - max_loss) x recorded.
  double max_loss = 0.10;
  bool any_device = false;             // apply max_loss to rows of other device keys too
  bool fail_on_source_change = false;  // a row whose kernel source changed fails
  // Figures are printed but a slower row never fails: for a shared machine, where a timing says
  // more about the other work than about the row (the CTest; decision 0041).
  bool speed_informational = false;
  // Only the rows of these problems (a --shapes JSON file, e.g. bench/gpu/targets.json); empty: all.
  std::string shapes;
  // Stop starting rows after this wall time ("120s", "5m"; empty: none): the rows not reached are
  // counted and named as unchecked, so a cut run still reports what it measured.
  std::string time_budget;
};

// Verifies every best row's configuration against the float64 reference on --device, times it with
// the tuner's timing policy and prints recorded and current figures, their ratio and whether the
// kernel source changed. 0 when no row fails, 1 otherwise (or for a refused file).
int run_db_check(const CliOptions& options, const DbCheckOptions& check);

// A --time-budget of db check and db holdout in seconds: empty gives none, "0" or "0s" zero (list the
// rows, time none), else a duration as "90s", "5m"; UsageError for anything else.
std::optional<double> wall_budget_seconds(const std::string& text);

// The device of --device for db check and db holdout; an index no platform has is a UsageError.
DeviceInfo command_device(int index);

}  // namespace ocltune
