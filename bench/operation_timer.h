// Device time of a whole library call that enqueues kernels we cannot see (CLBlast).
#pragma once

#include <functional>

#include "harness/cl.h"

namespace ocltune::bench {

struct OperationTime {
  double span_ns = 0;        // from a marker before the call to a marker after it
  double last_event_ns = 0;  // the event the library returned: its last kernel only
  bool host_clock = false;   // markers carried no timestamps: span_ns is host wall-clock time
};

// CLBlast's returned event covers only its last kernel, while an indirect GEMM launches several
// (pad, transpose, gemm, unpad). We therefore bracket the call with markers on the same in-order
// queue (idle beforehand) and time from the first marker's start to the second marker's end:
// every kernel of the call, the gaps between them, and any host work the library does between
// enqueues while the device waits -- what a caller of the routine waits for. A driver that gives
// markers no profiling timestamps gets the host wall-clock time from before the first marker to
// the end of clFinish instead (an upper bound: it adds the launch and synchronisation latency).
// `call` enqueues the operation and stores the library's event in its argument (or leaves it empty).
OperationTime time_operation(cl::CommandQueue& queue, const std::function<void(cl::Event&)>& call);

}  // namespace ocltune::bench
