// The vocabulary of evaluations: what became of one configuration (Status) and why it was measured
// (Role). The database stores both as text (status_name, role_name); parsing is at that boundary.
#pragma once

#include <optional>
#include <string>

namespace ocltune {

enum class Status {
  kOk,
  kCompileError,
  kLaunchError,
  kWrongResult,
  kTimeout,
  kCrash,    // the process (or its isolated worker) died
  kSkipped,  // not run: e.g. a configuration the device cannot launch
  kCut,      // abandoned after its first runs: far slower than the best
};

enum class Role {
  kDefault,  // an untuned baseline, measured before the search
  kSearch,   // proposed by the strategy
  kFinal,    // re-timed interleaved with the other finalists
};

const char* status_name(Status status);  // "ok", "compile_error", ...
std::optional<Status> parse_status(const std::string& name);
const char* role_name(Role role);  // "default", "search", "final"
std::optional<Role> parse_role(const std::string& name);

// Whether the outcome carries a time (ok, and cut: a lower bound of its time).
inline bool is_timed(Status status) { return status == Status::kOk || status == Status::kCut; }

}  // namespace ocltune
