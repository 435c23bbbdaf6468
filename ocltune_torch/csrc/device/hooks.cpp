// The PrivateUse1 hooks: what PyTorch asks of a backend beyond its ops (devices, generators, storage).
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/util/Exception.h>

#include "ocltune_torch/csrc/device/allocator.h"
#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/generator.h"
#include "ocltune_torch/csrc/device/pinned.h"

namespace ocltune_torch {
namespace {

struct OclHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }

  // The autograd engine asks before it starts a worker thread on a device. A runtime is made
  // lazily on a device's first allocation, so every valid index counts as having a context.
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override {
    return device_index >= 0 && device_index < device_count();
  }

  c10::DeviceIndex deviceCount() const override { return static_cast<c10::DeviceIndex>(device_count()); }
  void setCurrentDevice(c10::DeviceIndex device) const override { set_current_device(device); }
  c10::DeviceIndex getCurrentDevice() const override { return static_cast<c10::DeviceIndex>(current_device()); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    const int old = current_device();
    if (device >= 0) set_current_device(device);
    return static_cast<c10::DeviceIndex>(old);
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    if (device < 0 || device >= device_count()) return static_cast<c10::DeviceIndex>(current_device());
    return exchangeDevice(device);
  }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return default_generator(device_index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override { return new_generator(device_index); }

  at::Device getDeviceFromPtr(void* data) const override {
    return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(resolve(data).device));
  }

  // Pinned host memory (csrc/device/pinned.h): mapped CL_MEM_ALLOC_HOST_PTR buffers; non_blocking copies
  // from it to the device do not wait.
  bool isPinnedPtr(const void* data) const override { return is_pinned_ptr(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_allocator(); }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override {
    resize_storage_bytes(storage, new_bytes);
  }
};

[[maybe_unused]] const bool registered = [] {
  at::RegisterPrivateUse1HooksInterface(new OclHooks());
  return true;
}();

}  // namespace
}  // namespace ocltune_torch
