// What a kernel variant needs from a device. A search space offers a variant only where the device
// has what it needs, so an unsupported variant is absent, never a failure (see docs/VARIANTS.md).
#pragma once

#include <optional>
#include <string>

#include "harness/device.h"

namespace ocltune {

struct Capability {
  std::string vendor;                     // case-insensitive substring of the device vendor; "" = any
  std::optional<DeviceType> device_type;  // DeviceInfo::type it must have; none = any
  std::string extension;                  // an OpenCL extension the device must report; "" = none
  int min_nv_compute_capability = 0;      // through cl_nv_device_attribute_query, e.g. 80; 0 = none
  int max_nv_compute_capability = 0;      // the newest it runs on, e.g. 90 for sm_90a-only PTX; 0 = none
  std::string describe() const;           // "NVIDIA, compute capability >= 8.0", "any vendor, CPU"
};

bool satisfies(const DeviceInfo& device, const Capability& needs);

// NVIDIA tensor cores through inline PTX mma.sync (tf32 m16n8k8 needs sm_80 or newer).
inline Capability nvidia_mma_tf32() {
  return {.vendor = "nvidia", .device_type = std::nullopt, .extension = "", .min_nv_compute_capability = 80};
}

// Hopper's warpgroup tensor cores through inline PTX wgmma.mma_async: sm_90a features, which
// neither older nor newer architectures have.
inline Capability nvidia_wgmma_tf32() {
  return {.vendor = "nvidia",
          .device_type = std::nullopt,
          .extension = "",
          .min_nv_compute_capability = 90,
          .max_nv_compute_capability = 90};
}

// A CPU device: kernels that run one work-item per work-group as a plain loop on a core and
// vectorise explicitly (kernels/gemm_cpu.cl). The type is known from a database row too.
inline Capability cpu_device() {
  return {.vendor = "", .device_type = DeviceType::kCpu, .extension = "", .min_nv_compute_capability = 0};
}

}  // namespace ocltune
