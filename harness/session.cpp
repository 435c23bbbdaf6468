// An open device: context, profiling queue and program cache, shared by everything that runs on it.
#include "harness/session.h"

#include "harness/error.h"

namespace ocltune {

Session::Session(DeviceInfo device, const std::string& binary_cache_dir) : device_(std::move(device)) {
  try {
    context_ = cl::Context(device_.device);
    queue_ = cl::CommandQueue(context_, device_.device, CL_QUEUE_PROFILING_ENABLE);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  programs_ = std::make_unique<ProgramCache>(
      context_, device_.device, ProgramCache::DiskCache{binary_cache_dir, device_.key(), device_.driver_version});
}

bool Session::alive() {
  try {
    cl::Buffer probe(context_, CL_MEM_READ_WRITE, sizeof(cl_int));
    const cl_int value = 1;
    queue_.enqueueWriteBuffer(probe, CL_TRUE, 0, sizeof value, &value);
    queue_.finish();
    return true;
  } catch (const cl::Error&) {
    return false;
  }
}

Session::Session(DeviceInfo device, cl::Context context, const std::string& binary_cache_dir)
    : device_(std::move(device)), context_(std::move(context)) {
  try {
    queue_ = cl::CommandQueue(context_, device_.device, CL_QUEUE_PROFILING_ENABLE);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  programs_ = std::make_unique<ProgramCache>(
      context_, device_.device, ProgramCache::DiskCache{binary_cache_dir, device_.key(), device_.driver_version});
}

}  // namespace ocltune
