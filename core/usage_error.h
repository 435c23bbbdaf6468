// A usage error (bad flag value, unknown op, bad device index): printed, exit status 2; and the exit
// statuses of the executables (DESIGN.md). Here, not in cli/, because ocltune_bench uses them too.
#pragma once

#include "harness/error.h"

namespace ocltune {

class UsageError : public Error {
 public:
  using Error::Error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

}  // namespace ocltune
