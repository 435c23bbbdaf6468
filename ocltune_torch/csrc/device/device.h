// The ocl devices: how many there are, the current one per thread, and one ocltune runtime per device.
#pragma once

#include <cstdint>
#include <string>

#include "ocltune/ocltune.hpp"

namespace ocltune_torch {

// OpenCL devices counted as `ocltune devices` counts them (every platform in order, then its devices),
// so ocl:N is `--device N`. Never throws: a broken driver reports 0 devices (PyTorch requires that).
int device_count() noexcept;

// Raises a clear error for an index that names no device.
void check_device_index(int index);

// The runtime of device `index` (its context and in-order queue), created on first use and kept until
// the process exits. Every op of the device is enqueued on its queue, so ops are ordered among
// themselves and a block freed by the allocator can be reused by the next op without waiting.
ocltune::api::Runtime& device_runtime(int index);
cl_context device_context(int index);
cl_command_queue device_queue(int index);
bool device_runtime_created(int index) noexcept;

// The current device of the calling thread (PyTorch's DeviceGuard moves it); 0 until set.
int current_device() noexcept;
void set_current_device(int index);

// Waits until every op enqueued on the device has finished (nothing to do before its first op).
void synchronize_device(int index);

struct DeviceLimits {
  std::uint64_t global_mem_bytes = 0;  // CL_DEVICE_GLOBAL_MEM_SIZE
  std::uint64_t max_alloc_bytes = 0;   // CL_DEVICE_MAX_MEM_ALLOC_SIZE
};
const DeviceLimits& device_limits(int index);
std::string device_name(int index);

}  // namespace ocltune_torch
