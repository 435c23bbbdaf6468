// Markers for empty calls and dtype codes, shared by the runtime families.
#include "runtime/marker.h"

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {

Dispatch enqueue_marker(cl_command_queue queue, const DispatchOptions& options) {
  Dispatch d;
  cl_event event = nullptr;
  const cl_int err = clEnqueueMarkerWithWaitList(queue, static_cast<cl_uint>(options.wait.size()),
                                                 options.wait.empty() ? nullptr : options.wait.data(),
                                                 options.events ? &event : nullptr);
  if (err != CL_SUCCESS) throw ClError("clEnqueueMarkerWithWaitList", err);
  if (options.events) {
    d.events[0] = cl::Event(event, false);
    d.count = 1;
  }
  return d;
}

}  // namespace ocltune
