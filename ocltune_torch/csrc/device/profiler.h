// The profiler: ocl kernels in torch.profiler traces (ProfilerActivity.OCL, PyTorch's PrivateUse1
// activity), each with its device time from its OpenCL profiling event, linked to the aten op that
// launched it, with the family, configuration and lookup level that chose it (a Kineto plugin).
#pragma once

#include "ocltune/ocltune.h"

namespace ocltune_torch {

// True while a profiling session records kernels: one relaxed atomic load, all that a launch pays
// when nobody profiles.
bool kernels_observed() noexcept;

// A plain kernel (plain/plain_kernels.cpp) enqueued on `device`'s queue; `event` is borrowed.
void observe_plain_kernel(int device, const char* kernel, cl_event event);

}  // namespace ocltune_torch
