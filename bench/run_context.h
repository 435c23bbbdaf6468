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

// The mma.sync ceilings by input type (value 0: not measured, or no tensor cores).
struct MmaCeilings {
  Ceiling tf32, fp16, bf16;
};

// Adds "ocltune_*" keys with benchmark::AddCustomContext: the report reads the device, the
// ceilings every result is placed against (ocltune_<inputs>_peak_gflops for each measured mma
// ceiling), and the versions a regression is attributed to.
void add_run_context(const DeviceInfo& device, const Ceiling& copy, const Ceiling& peak, const MmaCeilings& mma,
                     const RunInfo& info);

}  // namespace ocltune::bench
