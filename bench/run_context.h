// The run's context in the JSON output: device, driver, tool versions and measured ceilings.
#pragma once

#include <string>

#include "bench/roofline.h"
#include "harness/ceilings.h"
#include "harness/device.h"

namespace ocltune::bench {

struct RunInfo {
  std::string shapes;    // the preset or file the problems came from
  std::string database;  // where tuned configurations were read
};

// Adds "ocltune_*" keys with benchmark::AddCustomContext: the report reads the device, the
// ceilings every result is placed against, and the versions a regression is attributed to.
// `tf32` is the TF32 mma.sync ceiling (value 0: not measured, or no tensor cores).
void add_run_context(const DeviceInfo& device, const Ceiling& copy, const Ceiling& peak, const Ceiling& tf32,
                     const RunInfo& info);

}  // namespace ocltune::bench
