// The DeviceGuard implementation of PrivateUse1: the current device per thread, one stream per device.
//
// Each device has one in-order queue (its runtime's), so every stream PyTorch asks for is the
// default stream of the device, and an event is a marker enqueued on that queue.
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"

namespace ocltune_torch {
namespace {

constexpr c10::DeviceType kOcl = c10::DeviceType::PrivateUse1;

c10::Stream default_stream(c10::Device d) {
  const c10::DeviceIndex index = d.has_index() ? d.index() : static_cast<c10::DeviceIndex>(current_device());
  return c10::Stream(c10::Stream::DEFAULT, c10::Device(kOcl, index));
}

struct OclGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  OclGuardImpl() = default;
  explicit OclGuardImpl(c10::DeviceType t) {
    TORCH_CHECK(t == kOcl, "ocltune_torch: OclGuardImpl made for ", t, " instead of PrivateUse1");
  }

  c10::DeviceType type() const override { return kOcl; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kOcl, "ocltune_torch: expected an ocl device, got ", d);
    const int old = current_device();
    if (d.has_index() && d.index() != old) set_current_device(d.index());
    return c10::Device(kOcl, static_cast<c10::DeviceIndex>(old));
  }

  c10::Device getDevice() const override { return c10::Device(kOcl, static_cast<c10::DeviceIndex>(current_device())); }

  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kOcl, "ocltune_torch: expected an ocl device, got ", d);
    if (d.has_index()) set_current_device(d.index());
  }

  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.has_index() && d.index() < device_count()) set_current_device(d.index());
  }

  c10::Stream getStream(c10::Device d) const noexcept override { return default_stream(d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return default_stream(d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*high_priority*/) const override {
    return default_stream(d);
  }
  c10::Stream getNewStream(c10::Device d, int /*priority*/) const override { return default_stream(d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return default_stream(s.device()); }

  c10::DeviceIndex deviceCount() const noexcept override { return static_cast<c10::DeviceIndex>(device_count()); }

  void destroyEvent(void* event, const c10::DeviceIndex /*device_index*/) const noexcept override {
    if (event) clReleaseEvent(static_cast<cl_event>(event));
  }

  // A marker after everything enqueued so far on the device's queue.
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "ocltune_torch: event of ocl:", device_index, " recorded on a stream of ocl:", stream.device_index());
    cl_event marker = nullptr;
    check_cl(clEnqueueMarkerWithWaitList(device_queue(stream.device_index()), 0, nullptr, &marker),
             "clEnqueueMarkerWithWaitList");
    if (*event) clReleaseEvent(static_cast<cl_event>(*event));
    *event = marker;
  }

  // The queue is in order: work after the marker on the same device already waits for it. An event of
  // another device (another context) cannot be waited on by this queue, so the host waits.
  void block(void* event, const c10::Stream& stream) const override {
    if (!event) return;
    cl_command_queue event_queue = nullptr;
    check_cl(clGetEventInfo(static_cast<cl_event>(event), CL_EVENT_COMMAND_QUEUE, sizeof(event_queue), &event_queue,
                            nullptr),
             "clGetEventInfo");
    if (event_queue == device_queue(stream.device_index())) return;
    cl_event e = static_cast<cl_event>(event);
    check_cl(clWaitForEvents(1, &e), "clWaitForEvents");
  }

  bool queryEvent(void* event) const override {
    if (!event) return true;
    cl_int status = CL_COMPLETE;
    check_cl(clGetEventInfo(static_cast<cl_event>(event), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                            nullptr),
             "clGetEventInfo");
    return status == CL_COMPLETE;
  }

  void synchronizeEvent(void* event) const override {
    if (!event) return;
    cl_event e = static_cast<cl_event>(event);
    check_cl(clWaitForEvents(1, &e), "clWaitForEvents");
  }

  // Without a marker to look at, "done" means the queue had nothing left: finish it.
  bool queryStream(const c10::Stream& stream) const override {
    synchronize_device(stream.device_index());
    return true;
  }

  void synchronizeStream(const c10::Stream& stream) const override { synchronize_device(stream.device_index()); }

  void synchronizeDevice(const c10::DeviceIndex device_index) const override {
    synchronize_device(device_index == -1 ? current_device() : device_index);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, OclGuardImpl);

}  // namespace
}  // namespace ocltune_torch
