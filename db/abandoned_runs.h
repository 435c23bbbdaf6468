// Runs whose process died without finishing them (SIGKILL, the OOM killer, a kernel that crashed the
// tuner without --isolate), and the evaluations they left `pending`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ocltune {

class Database;
struct RunRow;

// What names a process across time on one host: its pid, and "<boot id>/<pid namespace>/<start time
// in clock ticks since boot>" (a pid reused by a later process has another start time; a reboot
// changes the boot id). The start is empty where /proc cannot be read.
struct ProcessIdentity {
  std::int64_t pid = 0;
  std::string start;
};
ProcessIdentity this_process();

// Whether the process that owns `run` is known to be gone. Only a run of this host (same host
// name) and of this pid namespace can be judged; then it is gone when the machine rebooted since,
// when no process has its pid, or when the process with its pid started at another time. A run of
// another host, of another container, or without a recorded process (written before schema 3) is
// never judged gone: a live tuner's run must never be marked abandoned.
bool run_owner_gone(const RunRow& run, const std::string& host);

struct RecoveredRuns {
  std::vector<std::int64_t> abandoned;  // runs found `running` with their process gone
  std::int64_t crashed = 0;             // pending evaluations of finished or dead runs, now `crash`
};

// Marks every `running` run except `current_run_id` whose owner is gone as `abandoned`, then
// records every `pending` measurement of a run that is no longer running as `crash`: its process
// ended inside that evaluation, and the tuner never evaluates a crashed configuration again (as
// with --isolate), so "run the same command again" moves on instead of crashing at the same
// configuration forever. One transaction.
RecoveredRuns recover_abandoned_runs(Database& db, const std::string& host, std::int64_t current_run_id);

}  // namespace ocltune
