// The ocl devices: how many there are, the current one per thread, and one ocltune runtime per device.
#include "ocltune_torch/csrc/device/device.h"

#include <pthread.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <c10/util/Exception.h>

#include "ocltune_torch/csrc/device/errors.h"

namespace ocltune_torch {
namespace {

// The same walk as the library's device discovery (harness/device.cpp): platforms in order, every
// device type, a platform without devices skipped. The C ABI has no device count of its own, and
// creating a runtime per index just to count would build contexts and read databases.
int count_devices() {
  cl_uint num_platforms = 0;
  if (clGetPlatformIDs(0, nullptr, &num_platforms) != CL_SUCCESS || num_platforms == 0) return 0;
  std::vector<cl_platform_id> platforms(num_platforms);
  if (clGetPlatformIDs(num_platforms, platforms.data(), nullptr) != CL_SUCCESS) return 0;
  int count = 0;
  for (cl_platform_id platform : platforms) {
    cl_uint n = 0;
    const cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (err == CL_DEVICE_NOT_FOUND) continue;
    if (err != CL_SUCCESS) return 0;  // the library fails here too: no device is usable
    count += static_cast<int>(n);
  }
  return count;
}

// Runtimes live until the process exits and are never destroyed: tensors freed by Python during
// interpreter shutdown still return their blocks, and releasing OpenCL objects from static
// destructors can run after the ICD loader is gone.
struct Registry {
  std::mutex mutex;
  std::vector<ocltune::api::Runtime*> runtimes;
  std::vector<std::unique_ptr<DeviceLimits>> limits;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

thread_local int tls_current_device = 0;

// Set in the child of a fork() made after a device was opened. The child inherits the parent's
// OpenCL context without the driver's threads: its first command waited forever (a DataLoader worker
// that moved a sample to ocl hung until the loader's timeout). As CUDA does, the child is refused the
// device with a clear error instead; it may still make CPU tensors, and the parent is unaffected.
std::atomic<bool> in_bad_fork{false};

void mark_bad_fork() { in_bad_fork.store(true); }

void check_not_in_bad_fork() {
  TORCH_CHECK(!in_bad_fork.load(),
              "ocltune_torch: the ocl device cannot be used in a forked subprocess: the parent had opened it, and an "
              "OpenCL context does not survive fork(). Use the 'spawn' start method (torch.multiprocessing."
              "set_start_method('spawn'), or DataLoader(..., multiprocessing_context='spawn')), or return CPU "
              "tensors from the workers and move them to ocl in the parent.");
}

}  // namespace

int device_count() noexcept {
  static const int count = count_devices();
  return count;
}

void check_device_index(int index) {
  const int count = device_count();
  TORCH_CHECK(index >= 0 && index < count, "ocltune_torch: invalid device ocl:", index, ": ", count,
              " ocl device(s) available, counted as `ocltune devices` lists them");
}

ocltune::api::Runtime& device_runtime(int index) {
  check_device_index(index);
  check_not_in_bad_fork();  // before the registry's mutex, which a parent's thread may have held at fork()
  static std::once_flag watch_forks;
  std::call_once(watch_forks, [] { pthread_atfork(nullptr, nullptr, mark_bad_fork); });
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.runtimes.empty()) r.runtimes.resize(static_cast<std::size_t>(device_count()), nullptr);
  ocltune::api::Runtime*& slot = r.runtimes[static_cast<std::size_t>(index)];
  if (!slot) {
    try {
      slot = new ocltune::api::Runtime(ocltune::api::Runtime::for_index(index));
    } catch (const ocltune::api::Error& e) {
      TORCH_CHECK(false, "ocltune_torch: cannot open ocl:", index, ": ", e.what());
    }
  }
  return *slot;
}

cl_context device_context(int index) { return device_runtime(index).context(); }

cl_command_queue device_queue(int index) { return device_runtime(index).queue(); }

bool device_runtime_created(int index) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return index >= 0 && static_cast<std::size_t>(index) < r.runtimes.size() &&
         r.runtimes[static_cast<std::size_t>(index)] != nullptr;
}

int current_device() noexcept { return tls_current_device; }

void set_current_device(int index) {
  check_device_index(index);
  tls_current_device = index;
}

void synchronize_device(int index) {
  check_device_index(index);
  if (!device_runtime_created(index)) return;
  check_cl(clFinish(device_queue(index)), "clFinish");
}

const DeviceLimits& device_limits(int index) {
  cl_device_id device = device_runtime(index).device();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.limits.empty()) r.limits.resize(static_cast<std::size_t>(device_count()));
  std::unique_ptr<DeviceLimits>& slot = r.limits[static_cast<std::size_t>(index)];
  if (!slot) {
    auto limits = std::make_unique<DeviceLimits>();
    cl_ulong value = 0;
    check_cl(clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(value), &value, nullptr), "clGetDeviceInfo");
    limits->global_mem_bytes = value;
    check_cl(clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(value), &value, nullptr), "clGetDeviceInfo");
    limits->max_alloc_bytes = value;
    slot = std::move(limits);
  }
  return *slot;
}

std::string device_name(int index) {
  cl_device_id device = device_runtime(index).device();
  std::size_t size = 0;
  check_cl(clGetDeviceInfo(device, CL_DEVICE_NAME, 0, nullptr, &size), "clGetDeviceInfo");
  std::string name(size, '\0');
  check_cl(clGetDeviceInfo(device, CL_DEVICE_NAME, size, name.data(), nullptr), "clGetDeviceInfo");
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

}  // namespace ocltune_torch
