// The device the suites run on: $OCLTUNE_TEST_DEVICE (default 0, PoCL in CI), opened once.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "harness/device.h"
#include "harness/session.h"

namespace ocltune::testing {

inline Session& test_session() {
  static std::unique_ptr<Session> session = [] {
    const char* env = std::getenv("OCLTUNE_TEST_DEVICE");
    return std::make_unique<Session>(find_device(env ? std::atoi(env) : 0));
  }();
  return *session;
}

// An H200 as NVIDIA's OpenCL driver describes it (no OpenCL handles): the GPU rules of the spaces
// apply (work-group sizes a GPU uses well), which PoCL in CI never exercises.
DeviceInfo described_h200();

// A fresh path under the test's temporary directory (removed first if it exists).
std::string temp_path(const std::string& name);

}  // namespace ocltune::testing
