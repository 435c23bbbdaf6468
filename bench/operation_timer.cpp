// Device time of a whole library call that enqueues kernels we cannot see (CLBlast).
#include "bench/operation_timer.h"

#include <algorithm>
#include <chrono>

#include "harness/error.h"
#include "harness/timing.h"

namespace ocltune::bench {

OperationTime time_operation(cl::CommandQueue& queue, const std::function<void(cl::Event&)>& call) {
  OperationTime t;
  cl::Event before, last, after;
  std::chrono::steady_clock::time_point start, end;
  try {
    queue.finish();  // the device is idle, so the first marker does not wait for older work
    start = std::chrono::steady_clock::now();
    queue.enqueueMarkerWithWaitList(nullptr, &before);
    call(last);
    queue.enqueueMarkerWithWaitList(nullptr, &after);
    queue.finish();
    end = std::chrono::steady_clock::now();
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  try {
    t.span_ns = event_span_ns({before, after});
  } catch (const ClError&) {
    t.span_ns = 0;  // CL_PROFILING_INFO_NOT_AVAILABLE for markers on some drivers
  }
  if (t.span_ns <= 0) {
    t.span_ns = std::chrono::duration<double, std::nano>(end - start).count();
    t.host_clock = true;
  }
  if (last()) {
    t.last_event_ns = event_span_ns({last});
    // A driver that stamps markers lazily cannot make the whole call shorter than its last kernel.
    t.span_ns = std::max(t.span_ns, t.last_event_ns);
  }
  return t;
}

}  // namespace ocltune::bench
