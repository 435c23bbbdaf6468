// What an empty call of any runtime family enqueues: a marker after the caller's events, so that
// "the op is done" still has an event even when no kernel runs.
#pragma once

#include "harness/cl.h"
#include "runtime/adapter.h"

namespace ocltune {

// A marker waiting for `options.wait`; its event when `options.events`.
Dispatch enqueue_marker(cl_command_queue queue, const DispatchOptions& options);

}  // namespace ocltune
