// The C API over the runtime: opaque handles, status codes, a last-error message per thread, and
// no exception ever crossing the boundary.
#include "harness/cl.h"

#include "ocltune/ocltune.h"

#include <new>
#include <string>

#include "db/database_error.h"
#include "harness/device_errors.h"
#include "runtime/runtime.h"
#include "runtime/conv2d.h"
#include "runtime/gemm.h"
#include "runtime/pool.h"
// Memory-bound families (reduce, softmax, norm, elementwise).
#include "runtime/elementwise.h"
#include "runtime/norm.h"
#include "runtime/reduce.h"
#include "runtime/softmax.h"

struct ocltune_runtime_t {
  std::unique_ptr<ocltune::Runtime> runtime;
};

namespace {

thread_local std::string last_error;

ocltune_status fail(ocltune_status status, const std::string& message) {
  last_error = message;
  return status;
}

// Runs `body`, turning every exception into a status and a message.
template <typename Body>
ocltune_status guarded(Body&& body) {
  try {
    last_error.clear();
    body();
    return OCLTUNE_SUCCESS;
  } catch (const ocltune::NoPlatformError& e) {
    return fail(OCLTUNE_DEVICE_NOT_FOUND, e.what());
  } catch (const ocltune::DeviceIndexError& e) {
    return fail(OCLTUNE_DEVICE_NOT_FOUND, e.what());
  } catch (const ocltune::DatabaseError& e) {
    return fail(OCLTUNE_DATABASE_ERROR, e.what());
  } catch (const ocltune::BuildError& e) {
    return fail(OCLTUNE_BUILD_ERROR, std::string(e.what()) + "\n" + e.log());
  } catch (const ocltune::ClError& e) {
    return fail(OCLTUNE_OPENCL_ERROR, e.what());
  } catch (const cl::Error& e) {
    return fail(OCLTUNE_OPENCL_ERROR, ocltune::ClError(e).what());
  } catch (const std::bad_alloc&) {
    return fail(OCLTUNE_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(OCLTUNE_INTERNAL_ERROR, e.what());
  } catch (...) {
    return fail(OCLTUNE_INTERNAL_ERROR, "unknown exception");
  }
}

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

ocltune::GemmCall to_call(const ocltune_gemm_args& a) {
  ocltune::GemmCall c;
  c.trans_a = a.trans_a != 0;
  c.trans_b = a.trans_b != 0;
  c.m = a.m;
  c.n = a.n;
  c.k = a.k;
  c.batch = a.batch;
  c.alpha = a.alpha;
  c.beta = a.beta;
  c.a = a.a;
  c.b = a.b;
  c.c = a.c;
  c.a_offset = a.a_offset;
  c.b_offset = a.b_offset;
  c.c_offset = a.c_offset;
  c.lda = a.lda;
  c.ldb = a.ldb;
  c.ldc = a.ldc;
  c.stride_a = a.stride_a;
  c.stride_b = a.stride_b;
  c.stride_c = a.stride_c;
  c.tf32 = a.allow_tf32 != 0;
  c.dtype = static_cast<ocltune::DType>(a.dtype);  // check_gemm_call refuses a code outside 0-2
  return c;
}

// Options the runtime would refuse, as an argument error rather than a failure of the runtime.
bool valid_options(const ocltune_options* o) {
  if (o && o->gemm_fallback && std::string(o->gemm_fallback) != "builtin" && std::string(o->gemm_fallback) != "clblast") {
    fail(OCLTUNE_INVALID_ARGUMENT, "gemm_fallback must be \"builtin\" or \"clblast\"");
    return false;
  }
  return true;
}

}  // namespace

// ---- Memory-bound families: reduce, softmax, norm, elementwise (helpers) ----
namespace {

std::string dtype_of(const char* dtype) { return dtype ? dtype : "fp32"; }

std::vector<std::int64_t> dims_of(int ndims, const int64_t* dims, int min_rank) {
  if (ndims < min_rank || ndims > OCLTUNE_MAX_DIMS) {
    throw ocltune::Error("ndims must be in " + std::to_string(min_rank) + ".." + std::to_string(OCLTUNE_MAX_DIMS));
  }
  return std::vector<std::int64_t>(dims, dims + ndims);
}

ocltune::ReduceCall to_call(const ocltune_reduce_args& a) {
  ocltune::ReduceCall c;
  if (!a.kind) throw ocltune::Error("reduce: kind is NULL");
  c.shape.kind = ocltune::parse_reduce_kind(a.kind);
  c.shape.dtype = dtype_of(a.dtype);
  c.shape.dims = dims_of(a.ndims, a.dims, 1);
  if (a.num_axes < 0 || a.num_axes > OCLTUNE_MAX_DIMS) throw ocltune::Error("reduce: num_axes must be in 0..4");
  c.shape.axes.assign(a.axes, a.axes + a.num_axes);
  c.shape.keepdim = a.keepdim != 0;
  c.input = a.input.buffer;
  c.input_offset = a.input.offset;
  c.output = a.output.buffer;
  c.output_offset = a.output.offset;
  ocltune::check_reduce_call(c);
  return c;
}

ocltune::SoftmaxCall to_call(const ocltune_softmax_args& a) {
  ocltune::SoftmaxCall c;
  c.shape.dtype = dtype_of(a.dtype);
  c.shape.dims = dims_of(a.ndims, a.dims, 1);
  c.shape.axis = a.axis;
  c.shape.log = a.log != 0;
  c.input = a.input.buffer;
  c.input_offset = a.input.offset;
  c.output = a.output.buffer;
  c.output_offset = a.output.offset;
  ocltune::check_softmax_call(c);
  return c;
}

ocltune::NormBuffer norm_buffer(const ocltune_tensor& t) { return {t.buffer, t.offset}; }

ocltune::NormCall to_call(const ocltune_norm_args& a) {
  ocltune::NormCall c;
  if (!a.kind) throw ocltune::Error("norm: kind is NULL");
  c.shape.kind = ocltune::parse_norm_kind(a.kind);
  c.shape.dtype = dtype_of(a.dtype);
  c.shape.dims = dims_of(a.ndims, a.dims, 1);
  c.shape.axis = a.axis;
  c.shape.eps = a.eps;
  c.shape.momentum = a.momentum;
  c.x = norm_buffer(a.x);
  c.dy = norm_buffer(a.dy);
  c.gamma = norm_buffer(a.gamma);
  c.beta = norm_buffer(a.beta);
  c.mean = norm_buffer(a.mean);
  c.rstd = norm_buffer(a.rstd);
  c.running_mean = norm_buffer(a.running_mean);
  c.running_var = norm_buffer(a.running_var);
  c.y = norm_buffer(a.y);
  c.dx = norm_buffer(a.dx);
  c.dgamma = norm_buffer(a.dgamma);
  c.dbeta = norm_buffer(a.dbeta);
  ocltune::check_norm_call(c);
  return c;
}

ocltune::TensorOperand operand_of(const ocltune_operand& o) {
  ocltune::TensorOperand t;
  t.dims = dims_of(o.ndims, o.dims, 0);
  if (o.strided) t.strides.assign(o.strides, o.strides + o.ndims);
  return t;
}

ocltune::ElementwiseCall to_call(const ocltune_elementwise_args& a) {
  ocltune::ElementwiseCall c;
  c.shape.dtype = ocltune::parse_dtype(dtype_of(a.dtype));
  c.shape.input = operand_of(a.a);
  c.inputs[0] = a.a.tensor.buffer;
  c.input_offsets[0] = a.a.tensor.offset;
  if (a.op && std::string(a.op) != "copy") {
    const std::optional<ocltune::ElementwiseOp> op = ocltune::parse_elementwise_op(a.op);
    if (!op) throw ocltune::Error("elementwise: unknown op '" + std::string(a.op).substr(0, 32) + "'");
    ocltune::ElementwiseStep step{.op = *op};
    if (ocltune::is_binary(*op)) {
      step.reversed = a.reversed != 0;
      if (a.b.tensor.buffer) {
        step.tensor = operand_of(a.b);
        c.inputs[1] = a.b.tensor.buffer;
        c.input_offsets[1] = a.b.tensor.offset;
      } else {
        step.scalar = a.scalar;
      }
    }
    c.shape.steps.push_back(step);
  }
  c.output = a.out.buffer;
  c.output_offset = a.out.offset;
  ocltune::check_elementwise_call(c);
  return c;
}

// The common body of every op entry point: NULL arguments, then `convert` (the C arguments to the
// family's call, checked; what it throws is OCLTUNE_INVALID_ARGUMENT), then the dispatch under
// guarded(), its last event retained for the caller.
template <typename Convert, typename Run>
ocltune_status dispatch_call(const char* name, ocltune_runtime runtime, cl_command_queue queue, const void* args,
                             cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level,
                             Convert convert, Run run) {
  if (event) *event = nullptr;
  if (!runtime || !queue || !args) return fail(OCLTUNE_INVALID_ARGUMENT, std::string(name) + ": runtime, queue or args is NULL");
  if (num_wait > 0 && !wait) return fail(OCLTUNE_INVALID_ARGUMENT, std::string(name) + ": num_wait > 0 but wait is NULL");
  decltype(convert()) call;
  try {
    call = convert();
  } catch (const std::bad_alloc&) {
    return fail(OCLTUNE_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(OCLTUNE_INVALID_ARGUMENT, e.what());
  }
  return guarded([&] {
    ocltune::DispatchOptions options;
    options.wait = std::span<const cl_event>(wait, num_wait);
    options.events = event != nullptr;
    ocltune::Dispatch d = run(*runtime->runtime, queue, call, options);
    if (level) *level = static_cast<ocltune_level>(d.level);
    if (event && d.count > 0) {
      cl_event last = d.events[d.count - 1]();
      clRetainEvent(last);
      *event = last;
    }
  });
}

void copy_dims(int ndims, const int64_t* dims, int64_t* out) {
  for (int i = 0; dims && i < ndims && i < OCLTUNE_MAX_DIMS; ++i) out[i] = dims[i];
}

}  // namespace
// ---- end of the memory-bound families (helpers) ----

extern "C" {

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
    handle->runtime = std::make_unique<ocltune::Runtime>(cl::Context(context, true), cl::Device(device, true),
                                                         to_options(options));
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

cl_context ocltune_runtime_context(ocltune_runtime runtime) { return runtime ? runtime->runtime->context()() : nullptr; }

cl_device_id ocltune_runtime_device(ocltune_runtime runtime) {
  return runtime ? runtime->runtime->device().device() : nullptr;
}

cl_command_queue ocltune_runtime_queue(ocltune_runtime runtime) { return runtime ? runtime->runtime->queue()() : nullptr; }

ocltune_status ocltune_runtime_reload(ocltune_runtime runtime) {
  if (!runtime) return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_reload: runtime is NULL");
  return guarded([&] { runtime->runtime->reload(); });
}

void ocltune_gemm_args_init(ocltune_gemm_args* args, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            int64_t batch, cl_mem a, cl_mem b, cl_mem c) {
  if (!args) return;
  ocltune::GemmCall call;
  call.trans_a = trans_a != 0;
  call.trans_b = trans_b != 0;
  call.m = m;
  call.n = n;
  call.k = k;
  call.batch = batch;
  call.packed();
  *args = ocltune_gemm_args{trans_a != 0, trans_b != 0, m, n, k, batch, 1.0f, 0.0f, a, b, c, 0, 0, 0,
                            call.lda, call.ldb, call.ldc, call.stride_a, call.stride_b, call.stride_c, 0, 0};
}

ocltune_status ocltune_gemm(ocltune_runtime runtime, cl_command_queue queue, const ocltune_gemm_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_gemm", runtime, queue, args, num_wait, wait, event, level,
      [&] {
        const ocltune::GemmCall call = to_call(*args);
        ocltune::check_gemm_call(call);
        return call;
      },
      [](ocltune::Runtime& rt, cl_command_queue q, const ocltune::GemmCall& c, const ocltune::DispatchOptions& o) {
        return ocltune::ops::gemm(rt, q, c, o);
      });
}

// ---- conv2d and pooling ------------------------------------------------------------------------

}  // extern "C"

namespace {

ocltune::Conv2dCall to_call(const ocltune_conv2d_args& a) {
  ocltune::Conv2dCall c;
  ocltune::Conv2dShape& s = c.shape;
  s.dir = static_cast<ocltune::ConvDirection>(a.direction);
  s.n = a.n;
  s.c = a.c;
  s.h = a.h;
  s.w = a.w;
  s.k = a.k;
  s.r = a.r;
  s.s = a.s;
  s.stride_h = a.stride_h;
  s.stride_w = a.stride_w;
  s.pad_h = a.pad_h;
  s.pad_w = a.pad_w;
  s.dil_h = a.dil_h;
  s.dil_w = a.dil_w;
  s.groups = a.groups;
  s.bias = a.has_bias != 0;
  s.act = static_cast<ocltune::Activation>(a.activation);
  s.math = a.allow_tf32 != 0 ? "tf32" : "exact";
  c.input = a.input;
  c.weight = a.weight;
  c.output = a.output;
  c.bias = a.bias;
  c.input_offset = a.input_offset;
  c.weight_offset = a.weight_offset;
  c.output_offset = a.output_offset;
  c.bias_offset = a.bias_offset;
  return c;
}

ocltune::PoolCall to_call(const ocltune_pool_args& a) {
  ocltune::PoolCall c;
  ocltune::PoolShape& s = c.shape;
  s.kind = static_cast<ocltune::PoolKind>(a.kind);
  s.backward = a.backward != 0;
  s.n = a.n;
  s.c = a.c;
  s.h = a.h;
  s.w = a.w;
  s.kh = a.kernel_h;
  s.kw = a.kernel_w;
  s.sh = a.stride_h;
  s.sw = a.stride_w;
  s.ph = a.pad_h;
  s.pw = a.pad_w;
  s.ceil_mode = a.ceil_mode != 0;
  s.count_include_pad = a.count_include_pad != 0;
  s.indices = a.return_indices != 0;
  s.dtype = static_cast<ocltune::DType>(a.dtype);
  c.in = a.in;
  c.out = a.out;
  c.indices = a.indices;
  c.in_offset = a.in_offset;
  c.out_offset = a.out_offset;
  c.indices_offset = a.indices_offset;
  return c;
}

}  // namespace

extern "C" {

void ocltune_conv2d_args_init(ocltune_conv2d_args* args, int direction, int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t k, int64_t r, int64_t s, cl_mem input, cl_mem weight, cl_mem output) {
  if (!args) return;
  *args = ocltune_conv2d_args{};
  args->direction = direction;
  args->n = n;
  args->c = c;
  args->h = h;
  args->w = w;
  args->k = k;
  args->r = r;
  args->s = s;
  args->stride_h = args->stride_w = 1;
  args->dil_h = args->dil_w = 1;
  args->groups = 1;
  args->activation = OCLTUNE_ACTIVATION_NONE;
  args->input = input;
  args->weight = weight;
  args->output = output;
}

ocltune_status ocltune_conv2d(ocltune_runtime runtime, cl_command_queue queue, const ocltune_conv2d_args* args,
                              cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_conv2d", runtime, queue, args, num_wait, wait, event, level,
      [&] {
        const ocltune::Conv2dCall call = to_call(*args);
        ocltune::check_conv2d_call(call);
        return call;
      },
      [](ocltune::Runtime& rt, cl_command_queue q, const ocltune::Conv2dCall& c, const ocltune::DispatchOptions& o) {
        return ocltune::ops::conv2d(rt, q, c, o);
      });
}

void ocltune_pool_args_init(ocltune_pool_args* args, int kind, int backward, int64_t n, int64_t c, int64_t h,
                            int64_t w, int64_t kernel_h, int64_t kernel_w, cl_mem in, cl_mem out, cl_mem indices) {
  if (!args) return;
  *args = ocltune_pool_args{};
  args->kind = kind;
  args->backward = backward != 0;
  args->n = n;
  args->c = c;
  args->h = h;
  args->w = w;
  args->kernel_h = args->stride_h = kernel_h;
  args->kernel_w = args->stride_w = kernel_w;
  args->count_include_pad = 1;
  args->return_indices = kind == OCLTUNE_POOL_MAX;
  args->in = in;
  args->out = out;
  args->indices = indices;
}

ocltune_status ocltune_pool(ocltune_runtime runtime, cl_command_queue queue, const ocltune_pool_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_pool", runtime, queue, args, num_wait, wait, event, level,
      [&] {
        const ocltune::PoolCall call = to_call(*args);
        ocltune::check_pool_call(call);
        return call;
      },
      [](ocltune::Runtime& rt, cl_command_queue q, const ocltune::PoolCall& c, const ocltune::DispatchOptions& o) {
        return ocltune::ops::pool(rt, q, c, o);
      });
}

// ---- end conv2d and pooling --------------------------------------------------------------------
// ---- Memory-bound families: reduce, softmax, norm, elementwise ----

void ocltune_reduce_args_init(ocltune_reduce_args* args, const char* kind, int ndims, const int64_t* dims,
                              int num_axes, const int* axes, cl_mem input, cl_mem output) {
  if (!args) return;
  *args = ocltune_reduce_args{};
  args->kind = kind;
  args->ndims = ndims;
  copy_dims(ndims, dims, args->dims);
  args->num_axes = num_axes;
  for (int i = 0; axes && i < num_axes && i < OCLTUNE_MAX_DIMS; ++i) args->axes[i] = axes[i];
  args->input.buffer = input;
  args->output.buffer = output;
}

ocltune_status ocltune_reduce(ocltune_runtime runtime, cl_command_queue queue, const ocltune_reduce_args* args,
                              cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call("ocltune_reduce", runtime, queue, args, num_wait, wait, event, level,
                       [&] { return to_call(*args); },
                       [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
                         return ocltune::ops::reduce(rt, q, call, options);
                       });
}

void ocltune_softmax_args_init(ocltune_softmax_args* args, int ndims, const int64_t* dims, int axis, cl_mem input,
                               cl_mem output) {
  if (!args) return;
  *args = ocltune_softmax_args{};
  args->ndims = ndims;
  copy_dims(ndims, dims, args->dims);
  args->axis = axis;
  args->input.buffer = input;
  args->output.buffer = output;
}

ocltune_status ocltune_softmax(ocltune_runtime runtime, cl_command_queue queue, const ocltune_softmax_args* args,
                               cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call("ocltune_softmax", runtime, queue, args, num_wait, wait, event, level,
                       [&] { return to_call(*args); },
                       [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
                         return ocltune::ops::softmax(rt, q, call, options);
                       });
}

void ocltune_norm_args_init(ocltune_norm_args* args, const char* kind, int ndims, const int64_t* dims) {
  if (!args) return;
  *args = ocltune_norm_args{};
  const ocltune::NormShape defaults;
  args->kind = kind;
  args->ndims = ndims;
  copy_dims(ndims, dims, args->dims);
  args->axis = ndims - 1;
  args->eps = defaults.eps;
  args->momentum = defaults.momentum;
}

ocltune_status ocltune_norm(ocltune_runtime runtime, cl_command_queue queue, const ocltune_norm_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call("ocltune_norm", runtime, queue, args, num_wait, wait, event, level,
                       [&] { return to_call(*args); },
                       [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
                         return ocltune::ops::norm(rt, q, call, options);
                       });
}

void ocltune_operand_init(ocltune_operand* operand, int ndims, const int64_t* dims, cl_mem buffer) {
  if (!operand) return;
  *operand = ocltune_operand{};
  operand->ndims = ndims;
  copy_dims(ndims, dims, operand->dims);
  operand->tensor.buffer = buffer;
}

void ocltune_elementwise_args_init(ocltune_elementwise_args* args, const char* op, int ndims, const int64_t* dims,
                                   cl_mem a, cl_mem out) {
  if (!args) return;
  *args = ocltune_elementwise_args{};
  args->op = op;
  ocltune_operand_init(&args->a, ndims, dims, a);
  args->out.buffer = out;
}

ocltune_status ocltune_elementwise(ocltune_runtime runtime, cl_command_queue queue,
                                   const ocltune_elementwise_args* args, cl_uint num_wait, const cl_event* wait,
                                   cl_event* event, ocltune_level* level) {
  return dispatch_call("ocltune_elementwise", runtime, queue, args, num_wait, wait, event, level,
                       [&] { return to_call(*args); },
                       [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
                         return ocltune::ops::elementwise(rt, q, call, options);
                       });
}

// ---- end of the memory-bound families ----

const char* ocltune_last_error(void) { return last_error.c_str(); }

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
