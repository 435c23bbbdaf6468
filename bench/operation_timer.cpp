// Device time of a whole library call that enqueues kernels we cannot see (CLBlast).
#include "bench/operation_timer.h"

#include <algorithm>

#include "harness/error.h"
#include "harness/timing.h"

namespace ocltune::bench {

OperationTime time_operation(cl::CommandQueue& queue, const std::function<void(cl::Event&)>& call) {
  try {
    queue.finish();  // the device is idle, so the first marker does not wait for older work
    cl::Event before, last, after;
    queue.enqueueMarkerWithWaitList(nullptr, &before);
    call(last);
    queue.enqueueMarkerWithWaitList(nullptr, &after);
    queue.finish();
    OperationTime t;
    t.span_ns = event_span_ns({before, after});
    if (last()) {
      t.last_event_ns = event_span_ns({last});
      // A driver that stamps markers lazily cannot make the whole call shorter than its last kernel.
      t.span_ns = std::max(t.span_ns, t.last_event_ns);
    }
    return t;
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

}  // namespace ocltune::bench
