// Device time of a whole library call that enqueues kernels we cannot see (CLBlast).
#pragma once

#include <functional>

#include "harness/cl.h"

namespace ocltune::bench {

struct OperationTime {
  double span_ns = 0;        // from a marker before the call to a marker after it
  double last_event_ns = 0;  // the event the library returned: its last kernel only
};

// CLBlast's returned event covers only its last kernel, while an indirect GEMM launches several
// (pad, transpose, gemm, unpad). We therefore bracket the call with markers on the same in-order
// queue (idle beforehand) and time from the first marker's start to the second marker's end:
// every kernel of the call, the gaps between them, and any host work the library does between
// enqueues while the device waits -- what a caller of the routine waits for. `call` enqueues the
// operation and stores the library's event in its argument (left empty if it has none).
OperationTime time_operation(cl::CommandQueue& queue, const std::function<void(cl::Event&)>& call);

}  // namespace ocltune::bench
