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

std::int64_t dtype_code(const std::string& dtype) {
  if (dtype == "fp32") return 0;
  if (dtype == "fp16") return 1;
  if (dtype == "bf16") return 2;
  throw Error(fmt::format("dtype '{}' is not fp32, fp16 or bf16", dtype.substr(0, 16)));
}

}  // namespace ocltune
