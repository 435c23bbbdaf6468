// The device of a vendor-specific timing study (bench/mma_*_bench.cpp): $OCLTUNE_BENCH_DEVICE
// (default 0), or nothing, after saying why, where it lacks the capability the study needs.
#pragma once

#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "harness/capability.h"
#include "harness/device.h"

namespace ocltune {

inline std::optional<DeviceInfo> study_device(const Capability& needs) {
  const char* env = std::getenv("OCLTUNE_BENCH_DEVICE");
  DeviceInfo device = find_device(env ? std::atoi(env) : 0);
  if (!satisfies(device, needs)) {
    fmt::print("{}: not for this device (needs {})\n", device.name, needs.describe());
    return std::nullopt;
  }
  return device;
}

}  // namespace ocltune
