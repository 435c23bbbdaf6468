// Errors of device selection, with messages that tell the user what to do.
#pragma once

#include <vector>

#include "harness/device.h"
#include "harness/error.h"

namespace ocltune {

// No OpenCL platform: the ICD loader found no vendor driver.
class NoPlatformError : public Error {
 public:
  NoPlatformError();
};

// --device N out of range; the message lists the devices that exist.
class DeviceIndexError : public Error {
 public:
  DeviceIndexError(int index, const std::vector<DeviceInfo>& devices);
};

}  // namespace ocltune
