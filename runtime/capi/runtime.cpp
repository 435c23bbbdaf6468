// The C ABI's runtime handle: options, creation on an index or the caller's context, reload, the
// last error and the names of statuses and levels (include/ocltune/ocltune.h).
#include <atomic>

#include "runtime/capi/capi_support.h"
#include "runtime/kernel_observer.h"

using namespace ocltune::capi;

namespace {

ocltune::RuntimeOptions to_options(const ocltune_options* o) {
  ocltune::RuntimeOptions r;
  if (!o) return r;
  if (o->system_db) r.system_db = o->system_db;
  if (o->user_db) r.user_db = o->user_db;
  r.use_system_db = o->use_system_db != 0;
  r.use_user_db = o->use_user_db != 0;
  if (o->gemm_fallback) r.gemm_fallback = o->gemm_fallback;
  r.max_nearest_distance = o->max_nearest_distance;
  r.verify_first_dispatch = o->verify_first_dispatch != 0;
  r.strict_databases = o->strict_databases != 0;
  if (o->log) {
    auto log = o->log;
    void* user = o->log_user;
    r.log = [log, user](const std::string& message) { log(user, message.c_str()); };
  }
  return r;
}

// Options the runtime would refuse, as an argument error rather than a failure of the runtime.
bool valid_options(const ocltune_options* o) {
  if (o && o->gemm_fallback && std::string(o->gemm_fallback) != "builtin" &&
      std::string(o->gemm_fallback) != "clblast") {
    fail(OCLTUNE_INVALID_ARGUMENT, "gemm_fallback must be \"builtin\" or \"clblast\"");
    return false;
  }
  return true;
}

}  // namespace

extern "C" {

int ocltune_api_version(void) { return OCLTUNE_API_VERSION; }

void ocltune_options_init(ocltune_options* o) {
  if (!o) return;
  const ocltune::RuntimeOptions d;
  *o = ocltune_options{};
  o->use_system_db = d.use_system_db;
  o->use_user_db = d.use_user_db;
  o->max_nearest_distance = d.max_nearest_distance;
  o->verify_first_dispatch = d.verify_first_dispatch;
  o->strict_databases = d.strict_databases;
}

ocltune_status ocltune_runtime_create(cl_context context, cl_device_id device, const ocltune_options* options,
                                      ocltune_runtime* runtime) {
  if (!runtime) return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_create: runtime is NULL");
  *runtime = nullptr;
  if (!context || !device) return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_create: context or device is NULL");
  if (!valid_options(options)) return OCLTUNE_INVALID_ARGUMENT;
  return guarded([&] {
    auto handle = std::make_unique<ocltune_runtime_t>();
    handle->runtime =
        std::make_unique<ocltune::Runtime>(cl::Context(context, true), cl::Device(device, true), to_options(options));
    *runtime = handle.release();
  });
}

ocltune_status ocltune_runtime_create_for_index(int index, const ocltune_options* options, ocltune_runtime* runtime) {
  if (!runtime) return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_create_for_index: runtime is NULL");
  *runtime = nullptr;
  if (!valid_options(options)) return OCLTUNE_INVALID_ARGUMENT;
  return guarded([&] {
    auto handle = std::make_unique<ocltune_runtime_t>();
    handle->runtime = ocltune::Runtime::for_device_index(index, to_options(options));
    *runtime = handle.release();
  });
}

void ocltune_runtime_destroy(ocltune_runtime runtime) {
  try {
    delete runtime;
  } catch (...) {
    // Destruction releases OpenCL objects; nothing may escape into C.
  }
}

cl_context ocltune_runtime_context(ocltune_runtime runtime) {
  return runtime ? runtime->runtime->context()() : nullptr;
}

cl_device_id ocltune_runtime_device(ocltune_runtime runtime) {
  return runtime ? runtime->runtime->device().device() : nullptr;
}

cl_command_queue ocltune_runtime_queue(ocltune_runtime runtime) {
  return runtime ? runtime->runtime->queue()() : nullptr;
}

ocltune_status ocltune_runtime_reload(ocltune_runtime runtime) {
  if (!runtime) return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_reload: runtime is NULL");
  return guarded([&] { runtime->runtime->reload(); });
}

ocltune_status ocltune_runtime_build_program(ocltune_runtime runtime, const char* source, size_t length,
                                             const char* options, cl_program* program) {
  if (program) *program = nullptr;
  if (!runtime || !source || !program) {
    return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_build_program: runtime, source or program is NULL");
  }
  return guarded([&] {
    ocltune::ProgramSource request;
    request.inline_source.assign(source, length);
    if (options) request.options = options;
    cl::Program built = runtime->runtime->program(request);
    clRetainProgram(built());
    *program = built();
  });
}

const char* ocltune_last_error(void) { return ocltune::capi::last_error(); }

const char* ocltune_status_name(ocltune_status status) {
  switch (status) {
    case OCLTUNE_SUCCESS: return "OCLTUNE_SUCCESS";
    case OCLTUNE_INVALID_ARGUMENT: return "OCLTUNE_INVALID_ARGUMENT";
    case OCLTUNE_DEVICE_NOT_FOUND: return "OCLTUNE_DEVICE_NOT_FOUND";
    case OCLTUNE_DATABASE_ERROR: return "OCLTUNE_DATABASE_ERROR";
    case OCLTUNE_OPENCL_ERROR: return "OCLTUNE_OPENCL_ERROR";
    case OCLTUNE_BUILD_ERROR: return "OCLTUNE_BUILD_ERROR";
    case OCLTUNE_OUT_OF_MEMORY: return "OCLTUNE_OUT_OF_MEMORY";
    case OCLTUNE_INTERNAL_ERROR: return "OCLTUNE_INTERNAL_ERROR";
  }
  return "unknown status";
}

const char* ocltune_level_name(ocltune_level level) {
  if (level < OCLTUNE_LEVEL_EXACT || level > OCLTUNE_LEVEL_LIBRARY) return "unknown level";
  return ocltune::level_name(static_cast<ocltune::Level>(level));
}

}  // extern "C"

namespace {

// The C observer behind the runtime's: one process-wide pair, as the runtime's hook is.
std::atomic<ocltune_kernel_observer> c_observer{nullptr};

void forward_kernel(const ocltune::KernelRecord& r, void* user) {
  const ocltune_kernel_observer observer = c_observer.load(std::memory_order_acquire);
  if (!observer) return;
  const ocltune_kernel_record record{r.op, r.kernel, r.config, static_cast<ocltune_level>(r.level), r.queue, r.event};
  observer(&record, user);
}

}  // namespace

ocltune_status ocltune_set_kernel_observer(ocltune_kernel_observer observer, void* user) {
  c_observer.store(observer, std::memory_order_release);
  ocltune::set_kernel_observer(observer ? forward_kernel : nullptr, user);
  return OCLTUNE_SUCCESS;
}
