// The device the fuzz targets validate rows against: plain limits, no OpenCL handles.
#pragma once

#include "harness/device.h"

namespace ocltune::fuzz {

inline const DeviceInfo& device() {
  static const DeviceInfo d = [] {
    DeviceInfo x;
    x.platform_name = "Fuzz Platform";
    x.platform_version = "OpenCL 1.2";
    x.name = "Fuzz Device";
    x.vendor = "Fuzz Vendor";
    x.driver_version = "1.0";
    x.type = DeviceType::kGpu;
    x.compute_units = 8;
    x.local_mem_bytes = 65536;
    x.max_work_group_size = 1024;
    x.max_work_item_sizes = {1024, 1024, 64};
    return x;
  }();
  return d;
}

}  // namespace ocltune::fuzz
