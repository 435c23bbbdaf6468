/* Every family refuses, from C, a buffer one element too small for the call (INVALID_ARGUMENT,
 * before anything is enqueued) and accepts the same call with a buffer of the right size: a short
 * output used to be written past its end (issue 19, defect 4). Softmax in place is refused. */
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

static cl_context context;
static cl_command_queue queue;

/* A zero-filled buffer of `elements` elements of `bytes` bytes. */
static cl_mem buffer(size_t elements, size_t bytes) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, elements * bytes, NULL, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer %d", err);
  const float zero = 0;
  clEnqueueFillBuffer(queue, m, &zero, sizeof zero, 0, elements * bytes, 0, NULL, NULL);
  return m;
}

/* The status of the short call must be INVALID_ARGUMENT with a message naming the size. */
static void expect_short(const char* what, ocltune_status status) {
  CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "buffer holds") != NULL,
        "%s, short buffer: %s: %s", what, ocltune_status_name(status), ocltune_last_error());
}
static void expect_right(const char* what, ocltune_status status) {
  CHECK(status == OCLTUNE_SUCCESS, "%s, right buffer: %s: %s", what, ocltune_status_name(status), ocltune_last_error());
}

int main(void) {
  const char* index_text = getenv("OCLTUNE_TEST_DEVICE");
  ocltune_options options;
  ocltune_options_init(&options);
  options.use_system_db = 0;
  options.use_user_db = 0;
  ocltune_runtime rt = NULL;
  ocltune_status status = ocltune_runtime_create_for_index(index_text ? atoi(index_text) : 0, &options, &rt);
  CHECK(status == OCLTUNE_SUCCESS, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  if (!rt) return 1;
  context = ocltune_runtime_context(rt);
  queue = ocltune_runtime_queue(rt);
  const size_t f = sizeof(float);

  { /* GEMM 2 x [13 x 7] * [7 x 5]: C needs 2 * 13 * 5 elements. */
    ocltune_gemm_args g;
    cl_mem a = buffer(2 * 13 * 7, f), b = buffer(2 * 7 * 5, f), c_short = buffer(2 * 13 * 5 - 1, f),
           c = buffer(2 * 13 * 5, f);
    ocltune_gemm_args_init(&g, 0, 0, 13, 5, 7, 2, a, b, c_short);
    expect_short("gemm", ocltune_gemm(rt, queue, &g, 0, NULL, NULL, NULL));
    g.c = c;
    expect_right("gemm", ocltune_gemm(rt, queue, &g, 0, NULL, NULL, NULL));
    g.a = b; /* A too small as an input, too */
    CHECK(ocltune_gemm(rt, queue, &g, 0, NULL, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT, "gemm short A");
    cl_mem all[4] = {a, b, c_short, c};
    for (int i = 0; i < 4; ++i) clReleaseMemObject(all[i]);
  }
  { /* conv2d 1 x 3 x 9 x 9, 4 filters 3 x 3: output 1 x 4 x 7 x 7. */
    ocltune_conv2d_args v;
    cl_mem in = buffer(3 * 81, f), w = buffer(4 * 3 * 9, f), out_short = buffer(4 * 49 - 1, f), out = buffer(4 * 49, f);
    ocltune_conv2d_args_init(&v, OCLTUNE_CONV_FORWARD, 1, 3, 9, 9, 4, 3, 3, in, w, out_short);
    expect_short("conv2d", ocltune_conv2d(rt, queue, &v, 0, NULL, NULL, NULL));
    v.output = out;
    expect_right("conv2d", ocltune_conv2d(rt, queue, &v, 0, NULL, NULL, NULL));
    cl_mem all[4] = {in, w, out_short, out};
    for (int i = 0; i < 4; ++i) clReleaseMemObject(all[i]);
  }
  { /* max pooling 2 x 3 x 8 x 8, 2 x 2: output and indices 2 x 3 x 4 x 4. */
    ocltune_pool_args p;
    cl_mem in = buffer(2 * 3 * 64, f), out = buffer(2 * 3 * 16, f), idx_short = buffer(2 * 3 * 16 - 1, 8),
           idx = buffer(2 * 3 * 16, 8);
    ocltune_pool_args_init(&p, OCLTUNE_POOL_MAX, 0, 2, 3, 8, 8, 2, 2, in, out, idx_short);
    expect_short("pool", ocltune_pool(rt, queue, &p, 0, NULL, NULL, NULL));
    p.indices = idx;
    expect_right("pool", ocltune_pool(rt, queue, &p, 0, NULL, NULL, NULL));
    cl_mem all[4] = {in, out, idx_short, idx};
    for (int i = 0; i < 4; ++i) clReleaseMemObject(all[i]);
  }
  { /* argmax over the last dim of [6, 11]: 6 int64 outputs. */
    const int64_t dims[2] = {6, 11};
    const int axes[1] = {1};
    ocltune_reduce_args r;
    cl_mem in = buffer(66, f), out_short = buffer(5, 8), out = buffer(6, 8);
    ocltune_reduce_args_init(&r, "argmax", 2, dims, 1, axes, in, out_short);
    expect_short("reduce", ocltune_reduce(rt, queue, &r, 0, NULL, NULL, NULL));
    r.output.buffer = out;
    expect_right("reduce", ocltune_reduce(rt, queue, &r, 0, NULL, NULL, NULL));
    cl_mem all[3] = {in, out_short, out};
    for (int i = 0; i < 3; ++i) clReleaseMemObject(all[i]);
  }
  { /* softmax over [4, 25]; the output at an offset that runs past a short buffer; in place refused. */
    const int64_t dims[2] = {4, 25};
    ocltune_softmax_args s;
    cl_mem in = buffer(100, f), out_short = buffer(100, f), out = buffer(101, f);
    ocltune_softmax_args_init(&s, 2, dims, 1, in, out_short);
    s.output.offset = 1;
    expect_short("softmax", ocltune_softmax(rt, queue, &s, 0, NULL, NULL, NULL));
    s.output.buffer = out;
    expect_right("softmax", ocltune_softmax(rt, queue, &s, 0, NULL, NULL, NULL));
    s.output.buffer = in;
    s.output.offset = 0;
    CHECK(ocltune_softmax(rt, queue, &s, 0, NULL, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT &&
              strstr(ocltune_last_error(), "overlap") != NULL,
          "softmax in place: %s", ocltune_last_error());
    cl_mem all[3] = {in, out_short, out};
    for (int i = 0; i < 3; ++i) clReleaseMemObject(all[i]);
  }
  { /* layer_norm over the last dim of [3, 10]: mean and rstd hold 3 fp32 values. */
    const int64_t dims[2] = {3, 10};
    ocltune_norm_args n;
    ocltune_norm_args_init(&n, "layer_norm", 2, dims);
    cl_mem rstd_short = buffer(2, f);
    n.x.buffer = buffer(30, f);
    n.gamma.buffer = buffer(10, f);
    n.beta.buffer = buffer(10, f);
    n.y.buffer = buffer(30, f);
    n.mean.buffer = buffer(3, f);
    n.rstd.buffer = rstd_short;
    expect_short("norm", ocltune_norm(rt, queue, &n, 0, NULL, NULL, NULL));
    n.rstd.buffer = buffer(3, f);
    expect_right("norm", ocltune_norm(rt, queue, &n, 0, NULL, NULL, NULL));
    cl_mem all[7] = {n.x.buffer, n.gamma.buffer, n.beta.buffer, n.y.buffer, n.mean.buffer, n.rstd.buffer, rstd_short};
    for (int i = 0; i < 7; ++i) clReleaseMemObject(all[i]);
  }
  { /* [9, 4] + [4] broadcast: the output needs 36 elements. */
    const int64_t dims[2] = {9, 4}, row[1] = {4};
    ocltune_elementwise_args e;
    cl_mem a = buffer(36, f), b = buffer(4, f), out_short = buffer(35, f), out = buffer(36, f);
    ocltune_elementwise_args_init(&e, "add", 2, dims, a, out_short);
    ocltune_operand_init(&e.b, 1, row, b);
    expect_short("elementwise", ocltune_elementwise(rt, queue, &e, 0, NULL, NULL, NULL));
    e.out.buffer = out;
    expect_right("elementwise", ocltune_elementwise(rt, queue, &e, 0, NULL, NULL, NULL));
    cl_mem all[4] = {a, b, out_short, out};
    for (int i = 0; i < 4; ++i) clReleaseMemObject(all[i]);
  }
  clFinish(queue);
  ocltune_runtime_destroy(rt);
  printf("capi_extent_test: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
