/* The C API of the memory-bound families from C: reduce, softmax, layer_norm and a broadcasting
 * elementwise op at element offsets, checked in double; argument errors as statuses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocltune/ocltune.h"

static int failures = 0;

#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                      \
      fprintf(stderr, "\n");                                             \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

#define OFFSET 3 /* elements before every tensor in its buffer */

static float next_value(unsigned* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* A buffer of OFFSET + n floats: random values (input) or -7 (output). */
static cl_mem make_buffer(cl_context context, float* host, size_t n, int input, unsigned seed) {
  for (size_t i = 0; i < OFFSET + n; ++i) host[i] = input ? next_value(&seed) : -7.0f;
  cl_int err = CL_SUCCESS;
  cl_mem m =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (OFFSET + n) * sizeof(float), host, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer %d", err);
  return m;
}

static void read_back(cl_command_queue queue, cl_mem m, float* host, size_t n) {
  cl_int err = clEnqueueReadBuffer(queue, m, CL_TRUE, 0, (OFFSET + n) * sizeof(float), host, 0, NULL, NULL);
  CHECK(err == CL_SUCCESS, "clEnqueueReadBuffer %d", err);
}

static void expect_close(const char* what, const float* got, const double* want, size_t n) {
  CHECK(got[0] == -7.0f && got[OFFSET - 1] == -7.0f, "%s: the offset region was written", what);
  for (size_t i = 0; i < n; ++i) {
    const double err = fabs(got[OFFSET + i] - want[i]);
    if (!(err <= 1e-5 * (1.0 + fabs(want[i])))) {
      CHECK(0, "%s: element %zu is %g, expected %g", what, i, got[OFFSET + i], want[i]);
      return;
    }
  }
}

static void finish(cl_event event, ocltune_status status, ocltune_level level, const char* what) {
  CHECK(status == OCLTUNE_SUCCESS, "%s: %s: %s", what, ocltune_status_name(status), ocltune_last_error());
  CHECK(level == OCLTUNE_LEVEL_BUILTIN, "%s: level %s", what, ocltune_level_name(level));
  CHECK(event != NULL, "%s: no event", what);
  if (event) {
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
  }
}

int main(void) {
  CHECK(ocltune_api_version() == OCLTUNE_API_VERSION, "library API %d, header API %d", ocltune_api_version(),
        OCLTUNE_API_VERSION);
  const char* index_text = getenv("OCLTUNE_TEST_DEVICE");
  ocltune_options options;
  ocltune_options_init(&options);
  options.use_system_db = 0;
  options.use_user_db = 0;
  ocltune_runtime rt = NULL;
  ocltune_status status = ocltune_runtime_create_for_index(index_text ? atoi(index_text) : 0, &options, &rt);
  CHECK(status == OCLTUNE_SUCCESS && rt != NULL, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  if (!rt) return 1;
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  cl_event event = NULL;
  ocltune_level level = OCLTUNE_LEVEL_EXACT;

  /* sum over axis 1 of [3, 37, 5]. */
  {
    const int64_t dims[3] = {3, 37, 5};
    const int axes[1] = {1};
    float in[OFFSET + 555], out[OFFSET + 15];
    double want[15] = {0};
    ocltune_reduce_args a;
    ocltune_reduce_args_init(&a, "sum", 3, dims, 1, axes, make_buffer(context, in, 555, 1, 1),
                             make_buffer(context, out, 15, 0, 0));
    a.input.offset = a.output.offset = OFFSET;
    status = ocltune_reduce(rt, queue, &a, 0, NULL, &event, &level);
    finish(event, status, level, "reduce");
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 37; ++j)
        for (int k = 0; k < 5; ++k) want[i * 5 + k] += in[OFFSET + (i * 37 + j) * 5 + k];
    read_back(queue, a.output.buffer, out, 15);
    expect_close("reduce", out, want, 15);
    a.kind = "median";
    status = ocltune_reduce(rt, queue, &a, 0, NULL, NULL, NULL);
    CHECK(status == OCLTUNE_INVALID_ARGUMENT && strlen(ocltune_last_error()) > 0, "unknown kind: %s",
          ocltune_status_name(status));
    clReleaseMemObject(a.input.buffer);
    clReleaseMemObject(a.output.buffer);
  }

  /* The same reduction with a prologue: sum over axis 1 of relu(0.5 * (x - y)) (reversed mul). */
  {
    const int64_t dims[3] = {3, 37, 5};
    const int axes[1] = {1};
    float x[OFFSET + 555], y[OFFSET + 555], out[OFFSET + 15];
    double want[15] = {0};
    ocltune_reduce_args a;
    ocltune_reduce_args_init(&a, "sum", 3, dims, 1, axes, make_buffer(context, x, 555, 1, 3),
                             make_buffer(context, out, 15, 0, 0));
    CHECK(a.prologue.num_steps == 0, "prologue steps after init: %d", a.prologue.num_steps);
    a.input.offset = a.output.offset = OFFSET;
    a.prologue.num_steps = 3;
    a.prologue.steps[0].op = "sub";
    a.prologue.steps[0].has_tensor = 1;
    const cl_mem y_buffer = make_buffer(context, y, 555, 1, 4);
    a.prologue.steps[0].tensor.buffer = y_buffer;
    a.prologue.steps[0].tensor.offset = OFFSET;
    a.prologue.steps[1].op = "mul";
    a.prologue.steps[1].scalar = 0.5f;
    a.prologue.steps[1].reversed = 1;
    a.prologue.steps[2].op = "relu";
    status = ocltune_reduce(rt, queue, &a, 0, NULL, &event, &level);
    finish(event, status, level, "reduce with a prologue");
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 37; ++j)
        for (int k = 0; k < 5; ++k) {
          const int e = OFFSET + (i * 37 + j) * 5 + k;
          want[i * 5 + k] += fmax(0.0, 0.5 * ((double)x[e] - (double)y[e]));
        }
    read_back(queue, a.output.buffer, out, 15);
    expect_close("reduce with a prologue", out, want, 15);
    /* Refused before anything is enqueued, with messages that name what is wrong. */
    a.prologue.steps[2].op = "cube";
    status = ocltune_reduce(rt, queue, &a, 0, NULL, NULL, NULL);
    CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "cube") != NULL, "unknown prologue op: %s",
          ocltune_last_error());
    a.prologue.steps[2].op = "relu";
    a.prologue.steps[2].has_tensor = 1;
    a.prologue.steps[2].tensor = a.prologue.steps[0].tensor;
    status = ocltune_reduce(rt, queue, &a, 0, NULL, NULL, NULL);
    CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "unary") != NULL, "a tensor for relu: %s",
          ocltune_last_error());
    a.prologue.steps[2].has_tensor = 0;
    a.prologue.num_steps = 5;
    status = ocltune_reduce(rt, queue, &a, 0, NULL, NULL, NULL);
    CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "num_steps") != NULL, "5 steps: %s",
          ocltune_last_error());
    a.prologue.num_steps = 1;
    a.prologue.steps[0].tensor.buffer = NULL;
    status = ocltune_reduce(rt, queue, &a, 0, NULL, NULL, NULL);
    CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "prologue") != NULL, "a NULL operand: %s",
          ocltune_last_error());
    clReleaseMemObject(a.input.buffer);
    clReleaseMemObject(a.output.buffer);
    clReleaseMemObject(y_buffer);
  }

  /* softmax over axis 1 of [7, 100]. */
  {
    const int64_t dims[2] = {7, 100};
    float in[OFFSET + 700], out[OFFSET + 700];
    double want[700];
    ocltune_softmax_args a;
    ocltune_softmax_args_init(&a, 2, dims, 1, make_buffer(context, in, 700, 1, 2),
                              make_buffer(context, out, 700, 0, 0));
    a.input.offset = a.output.offset = OFFSET;
    status = ocltune_softmax(rt, queue, &a, 0, NULL, &event, &level);
    finish(event, status, level, "softmax");
    for (int r = 0; r < 7; ++r) {
      double m = -INFINITY, s = 0;
      for (int c = 0; c < 100; ++c) m = fmax(m, in[OFFSET + r * 100 + c]);
      for (int c = 0; c < 100; ++c) s += exp(in[OFFSET + r * 100 + c] - m);
      for (int c = 0; c < 100; ++c) want[r * 100 + c] = exp(in[OFFSET + r * 100 + c] - m) / s;
    }
    read_back(queue, a.output.buffer, out, 700);
    expect_close("softmax", out, want, 700);
    CHECK(a.dtype == OCLTUNE_DTYPE_FP32, "dtype after init: %d", a.dtype);
    a.dtype = 3; /* no ocltune_dtype: refused before anything is enqueued */
    CHECK(ocltune_softmax(rt, queue, &a, 0, NULL, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT &&
              strstr(ocltune_last_error(), "dtype") != NULL,
          "dtype 3: %s", ocltune_last_error());
    a.dtype = OCLTUNE_DTYPE_FP32;
    a.axis = 2;
    CHECK(ocltune_softmax(rt, queue, &a, 0, NULL, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT, "axis out of range");
    clReleaseMemObject(a.input.buffer);
    clReleaseMemObject(a.output.buffer);
  }

  /* layer_norm over the last dim of [5, 77]. */
  {
    const int64_t dims[2] = {5, 77};
    float x[OFFSET + 385], gamma[OFFSET + 77], beta[OFFSET + 77], y[OFFSET + 385], mean[OFFSET + 5], rstd[OFFSET + 5];
    double want[385];
    ocltune_norm_args a;
    ocltune_norm_args_init(&a, "layer_norm", 2, dims);
    a.x.buffer = make_buffer(context, x, 385, 1, 3);
    a.gamma.buffer = make_buffer(context, gamma, 77, 1, 4);
    a.beta.buffer = make_buffer(context, beta, 77, 1, 5);
    a.y.buffer = make_buffer(context, y, 385, 0, 0);
    a.mean.buffer = make_buffer(context, mean, 5, 0, 0);
    a.rstd.buffer = make_buffer(context, rstd, 5, 0, 0);
    a.x.offset = a.gamma.offset = a.beta.offset = a.y.offset = a.mean.offset = a.rstd.offset = OFFSET;
    status = ocltune_norm(rt, queue, &a, 0, NULL, &event, &level);
    finish(event, status, level, "layer_norm");
    for (int r = 0; r < 5; ++r) {
      double m = 0, v = 0;
      for (int c = 0; c < 77; ++c) m += x[OFFSET + r * 77 + c] / 77.0;
      for (int c = 0; c < 77; ++c) v += pow(x[OFFSET + r * 77 + c] - m, 2) / 77.0;
      for (int c = 0; c < 77; ++c) {
        want[r * 77 + c] = (x[OFFSET + r * 77 + c] - m) / sqrt(v + a.eps) * gamma[OFFSET + c] + beta[OFFSET + c];
      }
    }
    read_back(queue, a.y.buffer, y, 385);
    expect_close("layer_norm", y, want, 385);
    cl_mem beta_buffer = a.beta.buffer;
    a.beta.buffer = NULL;
    status = ocltune_norm(rt, queue, &a, 0, NULL, NULL, NULL);
    CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "beta"), "missing beta: %s",
          ocltune_last_error());
    cl_mem all[6] = {a.x.buffer, a.gamma.buffer, beta_buffer, a.y.buffer, a.mean.buffer, a.rstd.buffer};
    for (int i = 0; i < 6; ++i) clReleaseMemObject(all[i]);
  }

  /* [13, 33] + [33], broadcast; then relu of the result in place of a. */
  {
    const int64_t dims[2] = {13, 33}, row[1] = {33};
    float a_host[OFFSET + 429], b_host[OFFSET + 33], out[OFFSET + 429];
    double want[429];
    ocltune_elementwise_args a;
    ocltune_elementwise_args_init(&a, "add", 2, dims, make_buffer(context, a_host, 429, 1, 6),
                                  make_buffer(context, out, 429, 0, 0));
    ocltune_operand_init(&a.b, 1, row, make_buffer(context, b_host, 33, 1, 7));
    a.a.tensor.offset = a.b.tensor.offset = a.out.offset = OFFSET;
    status = ocltune_elementwise(rt, queue, &a, 0, NULL, &event, &level);
    finish(event, status, level, "add");
    for (int i = 0; i < 429; ++i) want[i] = (double)a_host[OFFSET + i] + b_host[OFFSET + i % 33];
    read_back(queue, a.out.buffer, out, 429);
    expect_close("add", out, want, 429);

    ocltune_elementwise_args r;
    ocltune_elementwise_args_init(&r, "relu", 2, dims, a.a.tensor.buffer, a.out.buffer);
    r.a.tensor.offset = r.out.offset = OFFSET;
    status = ocltune_elementwise(rt, queue, &r, 0, NULL, &event, &level);
    finish(event, status, level, "relu");
    for (int i = 0; i < 429; ++i) want[i] = a_host[OFFSET + i] > 0 ? a_host[OFFSET + i] : 0.0;
    read_back(queue, r.out.buffer, out, 429);
    expect_close("relu", out, want, 429);
    r.op = "frobnicate";
    CHECK(ocltune_elementwise(rt, queue, &r, 0, NULL, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT, "unknown op");

    /* A fused chain in one kernel: out = sigmoid(2 - relu(a + b[row]) * 0.5), the 2 - v reversed. */
    ocltune_elementwise_chain_args c;
    memset(&c, 0, sizeof c);
    c.dtype = OCLTUNE_DTYPE_FP32;
    c.input = a.a;
    c.out = a.out;
    c.nsteps = 4;
    c.steps[0].op = "add";
    c.steps[0].operand = a.b;
    c.steps[1].op = "relu";
    c.steps[2].op = "mul";
    c.steps[2].scalar = 0.5f;
    c.steps[3].op = "sub";
    c.steps[3].scalar = 2.0f;
    c.steps[3].reversed = 1;
    status = ocltune_elementwise_chain(rt, queue, &c, 0, NULL, &event, &level);
    finish(event, status, level, "chain");
    for (int i = 0; i < 429; ++i) {
      const double v = (double)a_host[OFFSET + i] + b_host[OFFSET + i % 33];
      want[i] = 2.0 - (v > 0 ? v : 0.0) * 0.5;
    }
    read_back(queue, c.out.buffer, out, 429);
    expect_close("chain", out, want, 429);
    c.nsteps = 5;
    CHECK(ocltune_elementwise_chain(rt, queue, &c, 0, NULL, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT &&
              strstr(ocltune_last_error(), "nsteps"),
          "five steps: %s", ocltune_last_error());
    c.nsteps = 2;
    c.steps[1].op = NULL;
    CHECK(ocltune_elementwise_chain(rt, queue, &c, 0, NULL, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT,
          "a step without an op: %s", ocltune_last_error());
    clReleaseMemObject(a.a.tensor.buffer);
    clReleaseMemObject(a.b.tensor.buffer);
    clReleaseMemObject(a.out.buffer);
  }

  ocltune_runtime_destroy(rt);
  if (failures) fprintf(stderr, "%d failures\n", failures);
  return failures ? 1 : 0;
}
