/* The C API from C: runtimes by index and on a caller's context, GEMMs checked in double, error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ocltune_c.h"

static int failures = 0;

#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "%s:%d: failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                           \
      fprintf(stderr, "\n");                                  \
      ++failures;                                             \
    }                                                         \
  } while (0)

static int log_lines = 0;
static void count_log(void* user, const char* message) {
  (void)message;
  ++*(int*)user;
}

static float next_value(unsigned* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Runs one GEMM through `rt` on its own queue and compares every element with a double reference. */
static void gemm_case(ocltune_runtime rt, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, int64_t batch,
                      int64_t pad, int64_t offset, float alpha, float beta, ocltune_level expected_level) {
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  ocltune_gemm_args args;
  ocltune_gemm_args_init(&args, trans_a, trans_b, m, n, k, batch, NULL, NULL, NULL);
  args.alpha = alpha;
  args.beta = beta;
  args.lda += pad;
  args.ldc += pad;
  args.stride_a = (trans_a ? k : m) * args.lda;
  args.stride_c = m * args.ldc;
  args.a_offset = offset;
  args.c_offset = offset;
  const size_t size_a = (size_t)(offset + batch * args.stride_a), size_b = (size_t)(batch * args.stride_b);
  const size_t size_c = (size_t)(offset + batch * args.stride_c);
  float* a = malloc(size_a * sizeof(float));
  float* b = malloc(size_b * sizeof(float));
  float* c = malloc(size_c * sizeof(float));
  float* out = malloc(size_c * sizeof(float));
  unsigned state = 12345u;
  for (size_t i = 0; i < size_a; ++i) a[i] = next_value(&state);
  for (size_t i = 0; i < size_b; ++i) b[i] = next_value(&state);
  for (size_t i = 0; i < size_c; ++i) c[i] = next_value(&state);
  cl_int err = CL_SUCCESS;
  args.a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, size_a * sizeof(float), a, &err);
  args.b = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, size_b * sizeof(float), b, &err);
  args.c = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size_c * sizeof(float), c, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);

  cl_event event = NULL;
  ocltune_level level = OCLTUNE_LEVEL_EXACT;
  const ocltune_status status = ocltune_gemm(rt, queue, &args, 0, NULL, &event, &level);
  CHECK(status == OCLTUNE_SUCCESS, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  CHECK(level == expected_level, "level %s", ocltune_level_name(level));
  CHECK(event != NULL, "no event");
  if (event) {
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
  }
  clEnqueueReadBuffer(queue, args.c, CL_TRUE, 0, size_c * sizeof(float), out, 0, NULL, NULL);
  int wrong = 0;
  for (int64_t bt = 0; bt < batch; ++bt) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0, scale = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = a[offset + bt * args.stride_a + (trans_a ? p * args.lda + i : i * args.lda + p)];
          const double y = b[bt * args.stride_b + (trans_b ? j * args.ldb + p : p * args.ldb + j)];
          dot += x * y;
          scale += fabs(x * y);
        }
        const size_t at = (size_t)(offset + bt * args.stride_c + i * args.ldc + j);
        const double expected = alpha * dot + beta * (double)c[at];
        scale = fabs(alpha) * scale + fabs(beta * (double)c[at]) + 1e-30;
        if (!(fabs(out[at] - expected) <= (8.0 * sqrt((double)k) + 4.0) * 0x1.0p-24 * scale)) ++wrong;
      }
    }
  }
  CHECK(wrong == 0, "%d wrong elements (%c%c m=%ld n=%ld k=%ld batch=%ld)", wrong, trans_a ? 'T' : 'N',
        trans_b ? 'T' : 'N', (long)m, (long)n, (long)k, (long)batch);
  clReleaseMemObject(args.a);
  clReleaseMemObject(args.b);
  clReleaseMemObject(args.c);
  free(a);
  free(b);
  free(c);
  free(out);
}

int main(void) {
  const char* index_text = getenv("OCLTUNE_TEST_DEVICE");
  const int index = index_text ? atoi(index_text) : 0;
  ocltune_options options;
  ocltune_options_init(&options);
  options.use_system_db = 0;
  options.use_user_db = 0;
  options.log = count_log;
  options.log_user = &log_lines;

  ocltune_runtime rt = NULL;
  ocltune_status status = ocltune_runtime_create_for_index(index, &options, &rt);
  CHECK(status == OCLTUNE_SUCCESS && rt != NULL, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  if (!rt) return 1;
  CHECK(strcmp(ocltune_last_error(), "") == 0, "success leaves no error: %s", ocltune_last_error());
  gemm_case(rt, 0, 0, 37, 29, 19, 1, 0, 0, 1.0f, 0.0f, OCLTUNE_LEVEL_BUILTIN);
  gemm_case(rt, 1, 1, 19, 23, 29, 3, 3, 5, -1.5f, 0.5f, OCLTUNE_LEVEL_BUILTIN);

  /* A second runtime on the first one's context and device. */
  ocltune_runtime shared = NULL;
  status = ocltune_runtime_create(ocltune_runtime_context(rt), ocltune_runtime_device(rt), &options, &shared);
  CHECK(status == OCLTUNE_SUCCESS, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  if (shared) {
    gemm_case(shared, 1, 0, 40, 24, 31, 2, 1, 7, 2.0f, 1.0f, OCLTUNE_LEVEL_BUILTIN);
    CHECK(ocltune_runtime_reload(shared) == OCLTUNE_SUCCESS, "reload: %s", ocltune_last_error());
    ocltune_runtime_destroy(shared);
  }

  /* Errors come back as statuses with a message; nothing crashes or throws. */
  ocltune_gemm_args args;
  ocltune_gemm_args_init(&args, 0, 0, 8, 8, 8, 1, NULL, NULL, NULL);
  status = ocltune_gemm(rt, ocltune_runtime_queue(rt), &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "null buffers: %s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "null") != NULL, "message: %s", ocltune_last_error());
  status = ocltune_gemm(NULL, NULL, NULL, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "null runtime: %s", ocltune_status_name(status));
  status = ocltune_gemm(rt, ocltune_runtime_queue(rt), &args, 2, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "wait list: %s", ocltune_status_name(status));

  ocltune_runtime none = NULL;
  status = ocltune_runtime_create_for_index(999, &options, &none);
  CHECK(status == OCLTUNE_DEVICE_NOT_FOUND && none == NULL, "%s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "999") != NULL, "message names the index: %s", ocltune_last_error());

  options.gemm_fallback = "mkl";
  status = ocltune_runtime_create_for_index(index, &options, &none);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT && none == NULL, "bad fallback: %s", ocltune_status_name(status));
  options.gemm_fallback = NULL;

  const char* garbage = "capi-garbage.db";
  FILE* f = fopen(garbage, "wb");
  if (f) {
    fputs("this is not a database, only some bytes that pretend to be one for a while", f);
    fclose(f);
  }
  options.use_user_db = 1;
  options.user_db = garbage;
  options.strict_databases = 1;
  status = ocltune_runtime_create_for_index(index, &options, &none);
  CHECK(status == OCLTUNE_DATABASE_ERROR && none == NULL, "strict: %s", ocltune_status_name(status));
  options.strict_databases = 0;
  const int lines_before = log_lines;
  status = ocltune_runtime_create_for_index(index, &options, &none);
  CHECK(status == OCLTUNE_SUCCESS, "lenient: %s", ocltune_status_name(status));
  CHECK(log_lines > lines_before, "the refused file was logged through the callback");
  ocltune_runtime_destroy(none);
  remove(garbage);

  CHECK(strcmp(ocltune_level_name(OCLTUNE_LEVEL_NEAREST), "nearest") == 0, "%s", ocltune_level_name(OCLTUNE_LEVEL_NEAREST));
  ocltune_runtime_destroy(rt);
  ocltune_runtime_destroy(NULL);
  if (failures == 0) printf("capi_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
