// A process-wide stop request (SIGINT/SIGTERM): the tuner finishes the evaluation in flight,
// records it, and returns.
#pragma once

#include <atomic>

namespace ocltune {

inline std::atomic<bool>& stop_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}
inline bool stop_requested() { return stop_flag().load(std::memory_order_relaxed); }

}  // namespace ocltune
