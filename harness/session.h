// An open device: context, profiling queue and program cache, shared by everything that runs on it.
#pragma once

#include <memory>

#include "harness/cl.h"
#include "harness/device.h"
#include "harness/program.h"

namespace ocltune {

class Session {
 public:
  // Programs are cached on disk in `binary_cache_dir` (default_binary_cache_dir(); empty: not).
  explicit Session(DeviceInfo device) : Session(std::move(device), default_binary_cache_dir()) {}
  Session(DeviceInfo device, const std::string& binary_cache_dir);
  // On a context the caller already has (the runtime library, on a framework's context).
  Session(DeviceInfo device, cl::Context context, const std::string& binary_cache_dir = default_binary_cache_dir());

  const DeviceInfo& device() const { return device_; }
  const cl::Context& context() const { return context_; }
  // In-order queue with profiling enabled: every event carries start and end times.
  cl::CommandQueue& queue() { return queue_; }
  ProgramCache& programs() { return *programs_; }

  // False once the context can no longer run commands: on NVIDIA a kernel that faults takes the
  // whole context down, and every later call fails. Probes with a 4-byte write and a finish.
  bool alive();

 private:
  DeviceInfo device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::unique_ptr<ProgramCache> programs_;
};

}  // namespace ocltune
