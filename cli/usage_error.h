// A usage error (bad flag value, unknown op, bad device index): printed, exit status 2.
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
