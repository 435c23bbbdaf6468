// The profiler: ocl kernels in torch.profiler traces (ProfilerActivity.OCL, PyTorch's PrivateUse1
// activity), each with its device time from its OpenCL profiling event, linked to the aten op that
// launched it, with the family, configuration and lookup level that chose it (a Kineto plugin).
#pragma once

#include <cstddef>

#include "ocltune/ocltune.h"

namespace ocltune_torch {

// True while a profiling session records kernels: one relaxed atomic load, all that a launch pays
// when nobody profiles.
bool kernels_observed() noexcept;

// A plain kernel (plain/plain_kernels.cpp) enqueued on `device`'s queue; `event` is borrowed.
void observe_plain_kernel(int device, const char* kernel, cl_event event);

// The event of a copy or fill while a session records (none otherwise): pass slot() as the
// enqueue's event, then report() once the enqueue succeeded. Kineto draws it as a memcpy or memset.
class TransferEvent {
 public:
  TransferEvent() : observed_(kernels_observed()) {}
  ~TransferEvent() {
    if (event_) clReleaseEvent(event_);
  }
  TransferEvent(const TransferEvent&) = delete;
  TransferEvent& operator=(const TransferEvent&) = delete;
  cl_event* slot() { return observed_ ? &event_ : nullptr; }
  // `what`: "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD" or "Memset".
  void report(int device, const char* what, std::size_t bytes);

 private:
  bool observed_;
  cl_event event_ = nullptr;
};

}  // namespace ocltune_torch
