/* ocltune C API: the runtime dispatch library behind opaque handles and status codes (docs/RUNTIME.md). */
#ifndef OCLTUNE_C_H_
#define OCLTUNE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API. Check it when compiling (`#if OCLTUNE_API_VERSION < 2`) and when loading:
 * ocltune_api_version() of the library must equal the header's OCLTUNE_API_VERSION, since the
 * argument structs are passed by pointer and their layout changes with the version.
 *   1: ocltune 0.1 before the version existed (strings for the memory-bound families' dtype).
 *   2: one ocltune_dtype code in every argument struct.
 *   3: ocltune_conv2d_args gained its dtype (16-bit convolutions).
 *   4: ocltune_gemm_args gained its epilogue (bias row and activation, as nn.Linear's).
 *   5: ocltune_reduce_args and ocltune_norm_args gained a prologue (an elementwise chain applied to the
 *      input as it is read).
 * Functions are added within a version without changing any struct (version 2 gained the dispatch
 * statistics, ocltune_write_shapes_file and ocltune_runtime_build_program): a program that calls one needs a library
 * that has it. */
#define OCLTUNE_API_VERSION 5
int ocltune_api_version(void);

/* Storage type of a tensor: every op computes in fp32 and stores in this type. */
typedef enum ocltune_dtype {
  OCLTUNE_DTYPE_FP32 = 0,
  OCLTUNE_DTYPE_FP16 = 1,
  OCLTUNE_DTYPE_BF16 = 2 /* bfloat16 */
} ocltune_dtype;

typedef struct ocltune_runtime_t* ocltune_runtime;

/* Every function returns a status; on failure ocltune_last_error() holds a message (per thread). */
typedef enum ocltune_status {
  OCLTUNE_SUCCESS = 0,
  OCLTUNE_INVALID_ARGUMENT = 1, /* a null handle or pointer, or a call no kernel can serve */
  OCLTUNE_DEVICE_NOT_FOUND = 2, /* device index out of range, or no OpenCL platform */
  OCLTUNE_DATABASE_ERROR = 3,   /* a refused database (with strict_databases) */
  OCLTUNE_OPENCL_ERROR = 4,     /* an OpenCL call failed (the message names it and the CL error) */
  OCLTUNE_BUILD_ERROR = 5,      /* a kernel did not compile */
  OCLTUNE_OUT_OF_MEMORY = 6,
  OCLTUNE_INTERNAL_ERROR = 7
} ocltune_status;

/* Which level of the lookup chain chose the configuration. */
typedef enum ocltune_level {
  OCLTUNE_LEVEL_EXACT = 0,   /* tuned for this device and shape */
  OCLTUNE_LEVEL_NEAREST = 1, /* tuned for the nearest shape on this device (verified on first use) */
  OCLTUNE_LEVEL_CLASS = 2,   /* tuned on a device of the same vendor and type (verified on first use) */
  OCLTUNE_LEVEL_BUILTIN = 3, /* the built-in configuration, valid everywhere */
  OCLTUNE_LEVEL_LIBRARY = 4  /* a vendor library (CLBlast for GEMM), when configured */
} ocltune_level;

typedef struct ocltune_options {
  const char* system_db; /* NULL: $OCLTUNE_SYSTEM_DB, else the installed system database */
  const char* user_db;   /* NULL: $OCLTUNE_DB, else ~/.cache/ocltune/tuned.db */
  int use_system_db;     /* 0 disables the layer */
  int use_user_db;
  const char* gemm_fallback;   /* "builtin" or "clblast"; NULL: $OCLTUNE_GEMM_FALLBACK, else builtin */
  double max_nearest_distance; /* log2 units; see docs/RUNTIME.md */
  int verify_first_dispatch;
  int strict_databases;                         /* a refused database file fails creation instead of being skipped */
  void (*log)(void* user, const char* message); /* NULL: warnings go to stderr */
  void* log_user;
} ocltune_options;

/* Fills `options` with the defaults. */
void ocltune_options_init(ocltune_options* options);

/* A runtime on the caller's context and device. `options` may be NULL (defaults). */
ocltune_status ocltune_runtime_create(cl_context context, cl_device_id device, const ocltune_options* options,
                                      ocltune_runtime* runtime);
/* A runtime with its own context on device `index`, counted as `ocltune devices` lists them. */
ocltune_status ocltune_runtime_create_for_index(int index, const ocltune_options* options, ocltune_runtime* runtime);
void ocltune_runtime_destroy(ocltune_runtime runtime);
/* The runtime's context, device, and an in-order queue of its own (not retained: valid while it lives). */
cl_context ocltune_runtime_context(ocltune_runtime runtime);
cl_device_id ocltune_runtime_device(ocltune_runtime runtime);
cl_command_queue ocltune_runtime_queue(ocltune_runtime runtime);
/* Reads the databases again and forgets cached decisions. */
ocltune_status ocltune_runtime_reload(ocltune_runtime runtime);
/* Builds the caller's own OpenCL C `source` (`length` bytes) with build `options` (may be NULL) for the
 * runtime's device, through the runtime's program cache: once per runtime, and from the on-disk binary
 * cache (OCLTUNE_BINARY_CACHE, else ~/.cache/ocltune/binaries) when any process built the same source
 * and options for this device and driver before, so a new process does not pay the compiler again.
 * `*program` receives a built program the caller releases; OCLTUNE_BUILD_ERROR carries the build log
 * in ocltune_last_error(). */
ocltune_status ocltune_runtime_build_program(ocltune_runtime runtime, const char* source, size_t length,
                                             const char* options, cl_program* program);

/* C = act(alpha * op(A) * op(B) + beta * C + bias), row-major, strided batches (as ocltune::GemmCall);
 * fp32, fp16 or bf16 storage, fp32 scalars and accumulation. The bias is optional: a row of N elements
 * of C's storage type added to every row of C (nn.Linear's), applied with the activation as C is
 * stored; a call with an epilogue takes the rows tuned for the same product without one. */
typedef struct ocltune_gemm_args {
  int trans_a, trans_b;
  int64_t m, n, k, batch;
  float alpha, beta;
  cl_mem a, b, c;
  int64_t a_offset, b_offset, c_offset;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  int allow_tf32; /* matrix units with TF32 inputs where the device has them ("tf32" math mode) */
  int dtype;      /* ocltune_dtype of A, B and C */
  int has_bias;   /* add bias[n] to every row of C (bias_offset counts elements of the dtype) */
  cl_mem bias;    /* may be NULL without has_bias */
  int64_t bias_offset;
  int activation; /* ocltune_activation, after the bias */
} ocltune_gemm_args;

/* Sets the sizes, alpha = 1, beta = 0, the buffers with offset 0, packed leading dimensions and strides,
 * allow_tf32 = 0, dtype fp32, no bias, no activation. A caller then sets only what differs from packed: say the lda of
 * A, a slice of a wider matrix, and with batch > 1 its stride_a (a batch of 1 reads no batch stride). */
void ocltune_gemm_args_init(ocltune_gemm_args* args, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            int64_t batch, cl_mem a, cl_mem b, cl_mem c);

/* Enqueues the GEMM on `queue` after the `num_wait` events of `wait`. `event` (may be NULL) receives
 * an event that completes with the op (the caller releases it); `level` (may be NULL) the lookup level. */
ocltune_status ocltune_gemm(ocltune_runtime runtime, cl_command_queue queue, const ocltune_gemm_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level);

/* ---- conv2d and pooling (ocltune::Conv2dCall, ocltune::PoolCall) ---------------------------------- */

/* What a conv2d call computes; the same four tensors take part in every direction. */
typedef enum ocltune_conv_direction {
  OCLTUNE_CONV_FORWARD = 0,        /* output = act(conv(input, weight) + bias) */
  OCLTUNE_CONV_BACKWARD_DATA = 1,  /* input = gradient of the input, from output (dy) and weight */
  OCLTUNE_CONV_BACKWARD_WEIGHT = 2 /* weight = gradient of the weight, from input (x) and output (dy);
                                      bias = its gradient (sum of dy over n, p, q) when has_bias */
} ocltune_conv_direction;

/* Fused after the bias, forward only. */
typedef enum ocltune_activation {
  OCLTUNE_ACTIVATION_NONE = 0,
  OCLTUNE_ACTIVATION_RELU = 1,
  OCLTUNE_ACTIVATION_RELU6 = 2,
  OCLTUNE_ACTIVATION_GELU = 3,
  OCLTUNE_ACTIVATION_SIGMOID = 4
} ocltune_activation;

/* 2-D convolution, PyTorch semantics: dense NCHW input and output, KCRS weight, element offsets; all four
 * tensors of one storage type (fp32, fp16 or bf16), fp32 arithmetic. */
typedef struct ocltune_conv2d_args {
  int direction;      /* ocltune_conv_direction */
  int64_t n, c, h, w; /* input N x C x H x W */
  int64_t k, r, s;    /* weight K x C/groups x R x S */
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;
  int has_bias;                       /* forward adds bias; backward-weight writes its gradient */
  int activation;                     /* ocltune_activation */
  cl_mem input, weight, output, bias; /* bias may be NULL without has_bias */
  int64_t input_offset, weight_offset, output_offset, bias_offset;
  int allow_tf32; /* tensor cores with TF32 inputs where the device has them ("tf32" math mode) */
  int dtype;      /* ocltune_dtype of input, weight, output and bias; offsets count its elements */
} ocltune_conv2d_args;

/* Sets the direction and sizes, the buffers with offset 0, stride 1, no padding, dilation 1, groups 1,
 * no bias, no activation, allow_tf32 = 0, dtype fp32. */
void ocltune_conv2d_args_init(ocltune_conv2d_args* args, int direction, int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t k, int64_t r, int64_t s, cl_mem input, cl_mem weight, cl_mem output);

/* Enqueues the convolution; `wait`, `event` and `level` as for ocltune_gemm. */
ocltune_status ocltune_conv2d(ocltune_runtime runtime, cl_command_queue queue, const ocltune_conv2d_args* args,
                              cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level);

typedef enum ocltune_pool_kind {
  OCLTUNE_POOL_MAX = 0,         /* max_pool2d; indices are PyTorch's flat h*W+w, int64 */
  OCLTUNE_POOL_AVG = 1,         /* avg_pool2d */
  OCLTUNE_POOL_ADAPTIVE_AVG = 2 /* adaptive_avg_pool2d to 1x1 (window fields unused) */
} ocltune_pool_kind;

/* Pooling over contiguous NCHW; in = x (forward) or the output gradient (backward), out = y or the
 * input gradient; n, c, h, w are the input's sizes in both directions. */
typedef struct ocltune_pool_args {
  int kind; /* ocltune_pool_kind */
  int backward;
  int64_t n, c, h, w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  int ceil_mode;
  int count_include_pad;                         /* avg */
  int return_indices;                            /* max forward writes indices; max backward always reads them */
  int dtype;                                     /* ocltune_dtype of in and out */
  cl_mem in, out, indices;                       /* indices may be NULL when not written or read */
  int64_t in_offset, out_offset, indices_offset; /* elements of each buffer's type */
} ocltune_pool_args;

/* Sets kind, direction, sizes and window, the buffers with offset 0, stride = window (PyTorch's default),
 * no padding, floor mode, count_include_pad 1, return_indices 1 for max, fp32. */
void ocltune_pool_args_init(ocltune_pool_args* args, int kind, int backward, int64_t n, int64_t c, int64_t h, int64_t w,
                            int64_t kernel_h, int64_t kernel_w, cl_mem in, cl_mem out, cl_mem indices);

/* Enqueues the pooling; `wait`, `event` and `level` as for ocltune_gemm. N or C of 0 enqueues a marker
 * (level OCLTUNE_LEVEL_BUILTIN). */
ocltune_status ocltune_pool(ocltune_runtime runtime, cl_command_queue queue, const ocltune_pool_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level);

/* ---- end conv2d and pooling ----------------------------------------------------------------------- */
/* ---- Memory-bound families: reduce, softmax, norm, elementwise (as ocltune::ReduceCall, ...) ----
 * Tensors are row-major with up to 4 dimensions; `dtype` (an ocltune_dtype, 0 = fp32)
 * for every tensor of the op (argmax/argmin indices are int64; norm statistics fp32). Offsets are in
 * elements. `event` and `level` work as in ocltune_gemm. */
#define OCLTUNE_MAX_DIMS 4

/* A buffer and the element offset of a tensor in it. */
typedef struct ocltune_tensor {
  cl_mem buffer;
  int64_t offset;
} ocltune_tensor;

/* An elementwise prologue: up to OCLTUNE_MAX_PROLOGUE_STEPS ops of the elementwise family applied
 * to an input as the kernel reads it, so that the chain's result is never stored. Step k computes
 * v = op(v, operand), or op(operand, v) when `reversed`; `op` is an elementwise op's name ("relu",
 * "add", "mul", "gelu", ...). A binary op's operand is a tensor like the input (its dims,
 * contiguous) when `has_tensor`, else `scalar`. */
#define OCLTUNE_MAX_PROLOGUE_STEPS 4
typedef struct ocltune_prologue_step {
  const char* op;
  int has_tensor;
  ocltune_tensor tensor;
  float scalar;
  int reversed;
} ocltune_prologue_step;
typedef struct ocltune_prologue {
  int num_steps; /* 0: none */
  ocltune_prologue_step steps[OCLTUNE_MAX_PROLOGUE_STEPS];
} ocltune_prologue;

/* kind: "sum", "mean", "max", "min", "argmax", "argmin", "norm2" over the `num_axes` ascending axes
 * (argmax/argmin: adjacent ones, no prologue). Contiguous input and output; the prologue's result
 * is what is reduced (sum(relu(x + y)) reads x and y). */
typedef struct ocltune_reduce_args {
  const char* kind;
  int dtype; /* ocltune_dtype */
  int ndims;
  int64_t dims[OCLTUNE_MAX_DIMS];
  int num_axes;
  int axes[OCLTUNE_MAX_DIMS];
  int keepdim;
  ocltune_tensor input, output;
  ocltune_prologue prologue;
} ocltune_reduce_args;

/* Sets kind, dims and axes, dtype fp32, keepdim 0, the buffers with offset 0, no prologue. */
void ocltune_reduce_args_init(ocltune_reduce_args* args, const char* kind, int ndims, const int64_t* dims, int num_axes,
                              const int* axes, cl_mem input, cl_mem output);
ocltune_status ocltune_reduce(ocltune_runtime runtime, cl_command_queue queue, const ocltune_reduce_args* args,
                              cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level);

/* softmax (log = 0) or log_softmax (log = 1) along `axis`; contiguous, non-overlapping input and output. */
typedef struct ocltune_softmax_args {
  int dtype; /* ocltune_dtype */
  int ndims;
  int64_t dims[OCLTUNE_MAX_DIMS];
  int axis;
  int log;
  ocltune_tensor input, output;
} ocltune_softmax_args;

/* Sets dims and axis, log 0, dtype fp32, the buffers with offset 0. */
void ocltune_softmax_args_init(ocltune_softmax_args* args, int ndims, const int64_t* dims, int axis, cl_mem input,
                               cl_mem output);
ocltune_status ocltune_softmax(ocltune_runtime runtime, cl_command_queue queue, const ocltune_softmax_args* args,
                               cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level);

/* kind: "layer_norm" (normalised over dims[axis:]), "batch_norm" (dims [N, C, ...], training
 * statistics per channel), "layer_norm_backward", "batch_norm_backward". A kind uses only its tensors:
 *   forward:  x, gamma, beta -> y, mean, rstd (batch_norm: save_mean, save_invstd; running_mean and
 *             running_var updated in place with `momentum`)
 *   backward: dy, x, mean, rstd, gamma -> dx, dgamma, dbeta */
typedef struct ocltune_norm_args {
  const char* kind;
  int dtype; /* ocltune_dtype */
  int ndims;
  int64_t dims[OCLTUNE_MAX_DIMS];
  int axis;
  float eps, momentum;
  ocltune_tensor x, dy, gamma, beta, mean, rstd, running_mean, running_var, y, dx, dgamma, dbeta;
  ocltune_prologue prologue; /* layer_norm only: x is read through it (layer_norm(x + residual)) */
} ocltune_norm_args;

/* Sets kind and dims, axis = ndims - 1, eps 1e-5, momentum 0.1, dtype fp32, every tensor NULL, no prologue. */
void ocltune_norm_args_init(ocltune_norm_args* args, const char* kind, int ndims, const int64_t* dims);
ocltune_status ocltune_norm(ocltune_runtime runtime, cl_command_queue queue, const ocltune_norm_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level);

/* One tensor operand of an elementwise op: dims right-aligned against the output (NumPy broadcasting),
 * strides in elements when `strided` (0 repeats an element), else contiguous. */
typedef struct ocltune_operand {
  int ndims;
  int64_t dims[OCLTUNE_MAX_DIMS];
  int strided;
  int64_t strides[OCLTUNE_MAX_DIMS];
  ocltune_tensor tensor;
} ocltune_operand;

/* One elementwise op (the C++ API fuses chains of up to four; the C API takes one op):
 * out = op(a) for a unary op ("relu", "gelu", "exp", ...), op(a, b) for a binary one ("add", "sub",
 * "mul", "div", "pow", "maximum", "minimum") with b a tensor when b.tensor.buffer is set, else the
 * scalar; `reversed` computes op(b, a). op NULL or "copy": a strided copy of a to contiguous. */
typedef struct ocltune_elementwise_args {
  const char* op;
  int dtype; /* ocltune_dtype */
  ocltune_operand a, b;
  float scalar;
  int reversed;
  ocltune_tensor out;
} ocltune_elementwise_args;

/* Sets op, a contiguous `a` of dims, no b, scalar 0, dtype fp32, the buffers with offset 0. */
void ocltune_elementwise_args_init(ocltune_elementwise_args* args, const char* op, int ndims, const int64_t* dims,
                                   cl_mem a, cl_mem out);
/* A contiguous operand of dims on `buffer` at offset 0. */
void ocltune_operand_init(ocltune_operand* operand, int ndims, const int64_t* dims, cl_mem buffer);
ocltune_status ocltune_elementwise(ocltune_runtime runtime, cl_command_queue queue,
                                   const ocltune_elementwise_args* args, cl_uint num_wait, const cl_event* wait,
                                   cl_event* event, ocltune_level* level);
/* A fused chain of elementwise steps in one kernel: v = input, then v = step(v) for each step, out = v.
 * A step is a unary op, or a binary one whose operand is a tensor (operand.tensor.buffer set) or the
 * scalar; `reversed` computes op(operand, v). Every tensor broadcasts against out (NumPy rules); out
 * is contiguous with the broadcast dims. nsteps 0 is a strided copy of input. */
#define OCLTUNE_ELEMENTWISE_MAX_STEPS 4
typedef struct ocltune_elementwise_step {
  const char* op;
  ocltune_operand operand;
  float scalar;
  int reversed;
} ocltune_elementwise_step;
typedef struct ocltune_elementwise_chain_args {
  int dtype; /* ocltune_dtype, of every tensor */
  ocltune_operand input;
  int nsteps;
  ocltune_elementwise_step steps[OCLTUNE_ELEMENTWISE_MAX_STEPS];
  ocltune_tensor out;
} ocltune_elementwise_chain_args;
ocltune_status ocltune_elementwise_chain(ocltune_runtime runtime, cl_command_queue queue,
                                         const ocltune_elementwise_chain_args* args, cl_uint num_wait,
                                         const cl_event* wait, cl_event* event, ocltune_level* level);
/* ---- end of the memory-bound families ---- */

/* ---- What a runtime dispatched: the tune-what-you-run loop (docs/RUNTIME.md) ---------------------
 * Every runtime counts its calls per distinct problem (op, dtype, math mode, shape key) and lookup
 * level, from its creation or the last reset; reload keeps the counts. Calls of empty problems (a
 * marker) are not counted. */
#define OCLTUNE_LEVEL_COUNT 5 /* ocltune_level values are 0 .. OCLTUNE_LEVEL_COUNT - 1 */

/* calls[level] = the calls of family `op` ("gemm", "conv2d", "reduce", ...; NULL: every family)
 * answered at each ocltune_level. An unknown op name is OCLTUNE_INVALID_ARGUMENT. */
ocltune_status ocltune_runtime_dispatch_counts(ocltune_runtime runtime, const char* op,
                                               uint64_t calls[OCLTUNE_LEVEL_COUNT]);
/* The statistics as JSON: {"calls": N, "levels": {"exact": n, ...}, "ops": {"gemm": {"exact": n, ...}},
 * "problems": [{"op", "dtype", "math", "shape_key", "level", "calls": {...}, "shape": {...}}],
 * "databases": ["system.db path", "user.db path"] (the database files the runtime loaded, system first),
 * "cold_path": {"resolutions", "resolve_s", "checks", "check_s", "compiled", "compile_s", "loaded", "load_s",
 * "stored", "store_s", "checks_remembered", "provisional", "upgrades"}}: where the time of new problems
 * went since the runtime's creation (a model's first step; seconds summed over threads; not reset):
 * resolving them (checks and program builds included), the first-dispatch checks of borrowed
 * configurations (and those run unchecked because an earlier process's check of the same kernels
 * passed), the runtime's program cache (callers' programs too): programs compiled from source, loaded
 * from the on-disk binary cache, and binaries written to it; and with fast start ($OCLTUNE_FAST_START=1)
 * the problems that ran their built-in configuration while a better one was prepared in the background,
 * and those that switched to it since.
 * `*length` (required) receives the text's length without the NUL; at most size - 1 bytes and a NUL
 * go to `buffer` (buffer NULL with size 0 asks only for the length; call again if *length >= size). */
ocltune_status ocltune_runtime_dispatch_stats_json(ocltune_runtime runtime, char* buffer, size_t size, size_t* length);
ocltune_status ocltune_runtime_reset_dispatch_stats(ocltune_runtime runtime);
/* Writes the distinct problems the `count` runtimes dispatched (merged by problem) to `path` as an
 * `ocltune --shapes` file, atomically (a temporary file beside it, then rename). Each entry is the
 * family's shape plus "recorded": {"level", "calls", "levels"}, which the tuner ignores. `problems`
 * (may be NULL) receives how many entries the file holds. */
ocltune_status ocltune_write_shapes_file(const ocltune_runtime* runtimes, size_t count, const char* path,
                                         size_t* problems);
/* ---- end of what a runtime dispatched ---- */

/* ---- Profiling: every kernel the runtimes enqueue ------------------------------------------------
 * While an observer is set, each kernel any runtime of the process enqueues is reported after its
 * enqueue, on the dispatching thread, with its event (borrowed: clRetainEvent it to keep it; its
 * queue must have CL_QUEUE_PROFILING_ENABLE for device times). Unset, a dispatch costs one atomic
 * load more. The observer must not dispatch; `user` must outlive it. */
typedef struct ocltune_kernel_record {
  const char* op;         /* the family: "gemm", "conv2d", ... */
  const char* kernel;     /* the kernel's name; "clblast" for the library */
  const char* config;     /* the configuration ("NAME=value,..."); "" for the library */
  ocltune_level level;    /* the lookup level that chose it */
  cl_command_queue queue; /* where it was enqueued */
  cl_event event;         /* the kernel's event, borrowed */
} ocltune_kernel_record;
typedef void (*ocltune_kernel_observer)(const ocltune_kernel_record* record, void* user);
/* Sets the process's observer; NULL clears it. */
ocltune_status ocltune_set_kernel_observer(ocltune_kernel_observer observer, void* user);
/* ---- end of profiling ---- */

/* The message of the last failure on this thread ("" if none). Valid until the next call on this thread. */
const char* ocltune_last_error(void);
const char* ocltune_status_name(ocltune_status status);
const char* ocltune_level_name(ocltune_level level);

#ifdef __cplusplus
}
#endif

#endif /* OCLTUNE_C_H_ */
