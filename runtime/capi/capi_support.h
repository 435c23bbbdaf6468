// What every file of the C ABI shares (runtime/capi/): the handle behind ocltune_runtime, the
// per-thread last error, exception-to-status conversion, and the common body of an op entry point.
// No exception ever crosses into C.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/storage.h"
#include "harness/cl.h"
#include "ocltune/ocltune.h"
#include "runtime/prologue_buffers.h"
#include "runtime/runtime.h"

struct ocltune_runtime_t {
  std::unique_ptr<ocltune::Runtime> runtime;
};

namespace ocltune::capi {

// Records `message` as the thread's last error and returns `status`.
ocltune_status fail(ocltune_status status, const std::string& message);
void clear_last_error();
const char* last_error();

// Inside a catch: the status and message of the exception in flight.
ocltune_status fail_from_current_exception();

// Runs `body`, turning every exception into a status and a message.
template <typename Body>
ocltune_status guarded(Body&& body) {
  try {
    clear_last_error();
    body();
    return OCLTUNE_SUCCESS;
  } catch (...) {
    return fail_from_current_exception();
  }
}

// The storage type of an ocltune_dtype code; throws ocltune::Error naming `op` for any other code.
DType dtype_of(int code, const char* op);
// The first `ndims` sizes of `dims`, with min_rank <= ndims <= OCLTUNE_MAX_DIMS; throws otherwise.
std::vector<std::int64_t> dims_of(int ndims, const int64_t* dims, int min_rank);
// Copies up to OCLTUNE_MAX_DIMS sizes (the args_init functions).
void copy_dims(int ndims, const int64_t* dims, int64_t* out);

// A C prologue as the family's Prologue and its tensor operands; throws ocltune::Error naming `op`
// for a step count outside 0..OCLTUNE_MAX_PROLOGUE_STEPS, a NULL or unknown op name.
struct PrologueArgs {
  Prologue prologue;
  PrologueBuffers buffers;
};
PrologueArgs prologue_of(const ocltune_prologue& p, const char* op);

// The one body of every op entry point: NULL arguments, then `convert` (the C arguments to the
// family's Checked<Call>, which checks it: what it throws is OCLTUNE_INVALID_ARGUMENT), then the
// dispatch of that checked call under guarded() (ops::<op>(..., const Checked<Call>&), which does not
// check it again), its last event retained for the caller.
template <typename Convert, typename Run>
ocltune_status dispatch_call(const char* name, ocltune_runtime runtime, cl_command_queue queue, const void* args,
                             cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level,
                             Convert convert, Run run) {
  if (event) *event = nullptr;
  if (!runtime || !queue || !args)
    return fail(OCLTUNE_INVALID_ARGUMENT, std::string(name) + ": runtime, queue or args is NULL");
  if (num_wait > 0 && !wait)
    return fail(OCLTUNE_INVALID_ARGUMENT, std::string(name) + ": num_wait > 0 but wait is NULL");
  std::optional<decltype(convert())> call;  // a Checked<Call>: converting checks the call, once
  try {
    call.emplace(convert());
  } catch (const std::bad_alloc&) {
    return fail(OCLTUNE_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(OCLTUNE_INVALID_ARGUMENT, e.what());
  }
  return guarded([&] {
    DispatchOptions options;
    options.wait = std::span<const cl_event>(wait, num_wait);
    options.events = event != nullptr;
    Dispatch d = run(*runtime->runtime, queue, *call, options);
    if (level) *level = static_cast<ocltune_level>(d.level);
    if (event && d.count > 0) {
      cl_event last = d.events[d.count - 1]();
      clRetainEvent(last);
      *event = last;
    }
  });
}

}  // namespace ocltune::capi
