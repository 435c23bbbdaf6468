// Whether a problem's buffers can exist on a device at all: checked when a shape is given, so an
// impossible one is a usage error naming it, not a failure after the run has started.
#pragma once

#include <string>

#include "ops/problem.h"

namespace ocltune {

// Why `problem` cannot run on `device`: a buffer larger than CL_DEVICE_MAX_MEM_ALLOC_SIZE, or
// buffers larger than CL_DEVICE_GLOBAL_MEM_SIZE together (Problem::device_buffers). Empty when
// they fit, or when the device does not say its limits.
std::string device_fit_problem(const Problem& problem, const DeviceInfo& device);

}  // namespace ocltune
