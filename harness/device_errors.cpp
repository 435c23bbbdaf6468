// Errors of device selection, with messages that tell the user what to do.
#include "harness/device_errors.h"

#include <fmt/format.h>

namespace ocltune {

NoPlatformError::NoPlatformError()
    : Error(
          "no OpenCL platform found. The OpenCL ICD loader (libOpenCL.so) reads one file per driver from "
          "/etc/OpenCL/vendors/*.icd (or the directory in $OCL_ICD_VENDORS); none named a driver that loaded. "
          "Install a driver, e.g. `apt-get install pocl-opencl-icd` for the CPU, and check with `clinfo -l`.") {}

DeviceIndexError::DeviceIndexError(int index, const std::vector<DeviceInfo>& devices)
    : Error(fmt::format("device index {} is out of range; available devices ({}):\n{}", index, devices.size(),
                        describe_devices(devices))) {}

}  // namespace ocltune
