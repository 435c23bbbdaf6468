// The first-dispatch checks that passed, remembered across processes: a borrowed configuration
// checked once on a device runs unchecked in every later process that would run exactly the same
// kernels on the same device and driver (docs/decisions/0066).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>

#include "core/config.h"
#include "harness/launch.h"

namespace ocltune {

class Problem;
struct DeviceInfo;

// The identity of a check's outcome: the device and its driver, the problem (op, dtype, math,
// shape), the configuration, and everything the plan enqueues (each kernel's program key, which
// hashes its source text, defines and options; its name, NDRange and scalar arguments). Buffers
// count by position only: their contents are the check's own synthetic data.
std::string check_key(const DeviceInfo& device, const Problem& problem, const Config& config, const LaunchPlan& plan);

// An append-only file of check keys, one per line. Readers take the lines that are well-formed keys
// and ignore the rest (a torn or foreign line costs only a check); several processes may append at
// once (each line is one write to a file opened for appending). An empty path keeps nothing.
class CheckRecord {
 public:
  explicit CheckRecord(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  bool contains(const std::string& key);
  // Adds a passed check; a file that cannot be written loses only the memory across processes.
  void add(const std::string& key);

 private:
  void load();  // under mutex_

  std::string path_;
  std::mutex mutex_;
  bool loaded_ = false;
  std::unordered_set<std::string> keys_;
};

}  // namespace ocltune
