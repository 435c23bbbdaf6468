// What an empty call of any runtime family enqueues: a marker after the caller's events, so that
// "the op is done" still has an event even when no kernel runs.
#pragma once

#include "harness/cl.h"
#include "runtime/adapter.h"

namespace ocltune {

// A marker waiting for `options.wait`; its event when `options.events`.
Dispatch enqueue_marker(cl_command_queue queue, const DispatchOptions& options);

// The storage dtype as a small integer for shape codes: fp32 0, fp16 1, bf16 2; throws otherwise.
std::int64_t dtype_code(const std::string& dtype);

}  // namespace ocltune
