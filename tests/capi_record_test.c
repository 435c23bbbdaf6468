/* The C API of what a runtime dispatched: counts per level and family, the statistics as JSON, reset,
 * and the shapes file of two runtimes; every op's result checked against a double reference. */
#include <math.h>
#include <stdint.h>
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

static float next_value(unsigned* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static cl_mem upload(ocltune_runtime rt, const float* values, size_t count) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ocltune_runtime_context(rt), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            count * sizeof(float), (void*)values, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);
  return m;
}

/* C = A B of packed fp32 m x k and k x n matrices, `times` times, each result checked; allow_tf32 as
 * given (the check stays exact's: only a device without TF32 units is given allow_tf32 here). */
static void gemm_case(ocltune_runtime rt, int64_t m, int64_t n, int64_t k, int times, int allow_tf32) {
  float* a = malloc((size_t)(m * k) * sizeof(float));
  float* b = malloc((size_t)(k * n) * sizeof(float));
  float* c = malloc((size_t)(m * n) * sizeof(float));
  unsigned state = (unsigned)(m * 131 + n * 7 + k);
  for (int64_t i = 0; i < m * k; ++i) a[i] = next_value(&state);
  for (int64_t i = 0; i < k * n; ++i) b[i] = next_value(&state);
  for (int64_t i = 0; i < m * n; ++i) c[i] = 0.0f;
  cl_mem ma = upload(rt, a, (size_t)(m * k)), mb = upload(rt, b, (size_t)(k * n)), mc = upload(rt, c, (size_t)(m * n));
  ocltune_gemm_args args;
  ocltune_gemm_args_init(&args, 0, 0, m, n, k, 1, ma, mb, mc);
  args.allow_tf32 = allow_tf32;
  for (int t = 0; t < times; ++t) {
    ocltune_level level = OCLTUNE_LEVEL_EXACT;
    const ocltune_status s = ocltune_gemm(rt, ocltune_runtime_queue(rt), &args, 0, NULL, NULL, &level);
    CHECK(s == OCLTUNE_SUCCESS, "gemm: %s", ocltune_last_error());
    CHECK(level == OCLTUNE_LEVEL_BUILTIN, "level %s", ocltune_level_name(level));
    clEnqueueReadBuffer(ocltune_runtime_queue(rt), mc, CL_TRUE, 0, (size_t)(m * n) * sizeof(float), c, 0, NULL, NULL);
    int wrong = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0, scale = 0;
        for (int64_t p = 0; p < k; ++p) {
          dot += (double)a[i * k + p] * b[p * n + j];
          scale += fabs((double)a[i * k + p] * b[p * n + j]);
        }
        if (fabs(c[i * n + j] - dot) > 1e-5 * (scale + 1.0)) ++wrong;
      }
    }
    CHECK(wrong == 0, "%d wrong elements of the %lld x %lld x %lld GEMM", wrong, (long long)m, (long long)n,
          (long long)k);
  }
  clReleaseMemObject(ma);
  clReleaseMemObject(mb);
  clReleaseMemObject(mc);
  free(a);
  free(b);
  free(c);
}

/* The sum over the last axis of a rows x cols tensor, checked. */
static void reduce_case(ocltune_runtime rt, int64_t rows, int64_t cols) {
  float* x = malloc((size_t)(rows * cols) * sizeof(float));
  float* y = calloc((size_t)rows, sizeof(float));
  unsigned state = 99u;
  for (int64_t i = 0; i < rows * cols; ++i) x[i] = next_value(&state);
  cl_mem mx = upload(rt, x, (size_t)(rows * cols)), my = upload(rt, y, (size_t)rows);
  const int64_t dims[2] = {rows, cols};
  const int axes[1] = {1};
  ocltune_reduce_args args;
  ocltune_reduce_args_init(&args, "sum", 2, dims, 1, axes, mx, my);
  const ocltune_status s = ocltune_reduce(rt, ocltune_runtime_queue(rt), &args, 0, NULL, NULL, NULL);
  CHECK(s == OCLTUNE_SUCCESS, "reduce: %s", ocltune_last_error());
  clEnqueueReadBuffer(ocltune_runtime_queue(rt), my, CL_TRUE, 0, (size_t)rows * sizeof(float), y, 0, NULL, NULL);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, scale = 0;
    for (int64_t j = 0; j < cols; ++j) {
      sum += x[r * cols + j];
      scale += fabs(x[r * cols + j]);
    }
    CHECK(fabs(y[r] - sum) <= 1e-5 * (scale + 1.0), "row %lld: %g, expected %g", (long long)r, y[r], sum);
  }
  clReleaseMemObject(mx);
  clReleaseMemObject(my);
  free(x);
  free(y);
}

static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = malloc((size_t)size + 1);
  const size_t got = fread(text, 1, (size_t)size, f);
  text[got] = '\0';
  fclose(f);
  return text;
}

static int count_of(const char* text, const char* word) {
  int n = 0;
  for (const char* p = text; (p = strstr(p, word)) != NULL; p += strlen(word)) ++n;
  return n;
}

int main(void) {
  const char* index_text = getenv("OCLTUNE_TEST_DEVICE");
  const int index = index_text ? atoi(index_text) : 0;
  ocltune_options options;
  ocltune_options_init(&options);
  options.use_system_db = 0;
  options.use_user_db = 0;
  ocltune_runtime rt = NULL, other = NULL;
  ocltune_status status = ocltune_runtime_create_for_index(index, &options, &rt);
  CHECK(status == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  status = ocltune_runtime_create_for_index(index, &options, &other);
  CHECK(status == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  if (!rt || !other) return 1;

  uint64_t calls[OCLTUNE_LEVEL_COUNT];
  CHECK(ocltune_runtime_dispatch_counts(rt, NULL, calls) == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  CHECK(calls[OCLTUNE_LEVEL_BUILTIN] == 0, "a new runtime has dispatched nothing");

  gemm_case(rt, 37, 29, 19, 3, 0);
  gemm_case(rt, 5, 7, 3, 1, 0);
  reduce_case(rt, 13, 101);
  gemm_case(other, 37, 29, 19, 2, 0);

  CHECK(ocltune_runtime_dispatch_counts(rt, NULL, calls) == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  CHECK(calls[OCLTUNE_LEVEL_BUILTIN] == 5 && calls[OCLTUNE_LEVEL_EXACT] == 0, "all: %llu builtin",
        (unsigned long long)calls[OCLTUNE_LEVEL_BUILTIN]);
  CHECK(ocltune_runtime_dispatch_counts(rt, "gemm", calls) == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  CHECK(calls[OCLTUNE_LEVEL_BUILTIN] == 4, "gemm: %llu", (unsigned long long)calls[OCLTUNE_LEVEL_BUILTIN]);
  CHECK(ocltune_runtime_dispatch_counts(rt, "conv2d", calls) == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  CHECK(calls[OCLTUNE_LEVEL_BUILTIN] == 0, "conv2d dispatched nothing");
  status = ocltune_runtime_dispatch_counts(rt, "gemmm", calls);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "gemmm"), "unknown op: %s",
        ocltune_last_error());
  CHECK(ocltune_runtime_dispatch_counts(NULL, NULL, calls) == OCLTUNE_INVALID_ARGUMENT, "null runtime");

  /* The JSON: length first, then a buffer too small (truncated, terminated), then one large enough. */
  size_t length = 0;
  CHECK(ocltune_runtime_dispatch_stats_json(rt, NULL, 0, &length) == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  CHECK(length > 20, "length %zu", length);
  char small[8];
  memset(small, 'x', sizeof small);
  size_t small_length = 0;
  CHECK(ocltune_runtime_dispatch_stats_json(rt, small, sizeof small, &small_length) == OCLTUNE_SUCCESS, "%s",
        ocltune_last_error());
  CHECK(small_length == length && small[7] == '\0' && strlen(small) == 7, "truncated to the buffer");
  char* json = malloc(length + 1);
  CHECK(ocltune_runtime_dispatch_stats_json(rt, json, length + 1, &length) == OCLTUNE_SUCCESS, "%s",
        ocltune_last_error());
  CHECK(strncmp(json, small, 7) == 0, "the same text");
  CHECK(strstr(json, "\"calls\":5") != NULL, "%s", json);
  CHECK(strstr(json, "\"gemm\":{\"builtin\":4") != NULL, "%s", json);
  CHECK(strstr(json, "\"reduce\":{\"builtin\":1") != NULL, "%s", json);
  CHECK(count_of(json, "\"shape_key\"") == 3, "three problems: %s", json);
  CHECK(strstr(json, "\"databases\":[]") != NULL, "no database loaded (both layers off): %s", json);
  /* Where the new problems' time went: three problems resolved, none checked (built-in configurations). */
  CHECK(strstr(json, "\"cold_path\":{") != NULL && strstr(json, "\"checks\":0,") != NULL &&
            strstr(json, "\"resolve_s\":0,") == NULL && strstr(json, "\"compile_s\":") != NULL,
        "%s", json);
  free(json);
  CHECK(ocltune_runtime_dispatch_stats_json(rt, NULL, 4, &length) == OCLTUNE_INVALID_ARGUMENT, "size without buffer");
  CHECK(ocltune_runtime_dispatch_stats_json(rt, NULL, 0, NULL) == OCLTUNE_INVALID_ARGUMENT, "length is required");

  /* The shapes file of both runtimes: the shared GEMM once with the calls of both. */
  const char* path = "capi-record-shapes.json";
  remove(path);
  ocltune_runtime both[2] = {rt, other};
  size_t problems = 0;
  status = ocltune_write_shapes_file(both, 2, path, &problems);
  CHECK(status == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  CHECK(problems == 3, "%zu problems", problems);
  char* text = read_file(path);
  CHECK(text != NULL, "no %s", path);
  if (text) {
    CHECK(text[0] == '[', "a JSON list: %s", text);
    CHECK(count_of(text, "\"recorded\"") == 3, "%s", text);
    CHECK(count_of(text, "\"op\":\"gemm\"") == 2 && count_of(text, "\"op\":\"reduce\"") == 1, "%s", text);
    CHECK(strstr(text, "\"calls\":5") != NULL, "3 + 2 calls of the shared GEMM: %s", text);
    CHECK(strstr(text, "\"op\":\"gemm\"") < strstr(text, "\"op\":\"reduce\""), "gemm before reduce: %s", text);
    free(text);
  }
  status = ocltune_write_shapes_file(both, 2, "no-such-directory/shapes.json", &problems);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT && strstr(ocltune_last_error(), "no-such-directory"), "%s: %s",
        ocltune_status_name(status), ocltune_last_error());
  CHECK(ocltune_write_shapes_file(NULL, 1, path, NULL) == OCLTUNE_INVALID_ARGUMENT, "null runtimes");
  CHECK(ocltune_write_shapes_file(both, 2, NULL, NULL) == OCLTUNE_INVALID_ARGUMENT, "null path");

  /* A reset empties the record of that runtime only. */
  CHECK(ocltune_runtime_reset_dispatch_stats(rt) == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
  CHECK(ocltune_runtime_dispatch_counts(rt, NULL, calls) == OCLTUNE_SUCCESS && calls[OCLTUNE_LEVEL_BUILTIN] == 0,
        "reset");
  CHECK(ocltune_runtime_dispatch_counts(other, "gemm", calls) == OCLTUNE_SUCCESS && calls[OCLTUNE_LEVEL_BUILTIN] == 2,
        "the other runtime keeps its counts");
  gemm_case(rt, 5, 7, 3, 1, 0);
  CHECK(ocltune_write_shapes_file(&rt, 1, path, &problems) == OCLTUNE_SUCCESS && problems == 1, "%s",
        ocltune_last_error());
  CHECK(ocltune_runtime_reset_dispatch_stats(NULL) == OCLTUNE_INVALID_ARGUMENT, "null runtime");

  /* On a device without matrix units for TF32 (a CPU) a call that allows TF32 is the exact call: one
   * problem of exact math with both calls, so it takes the exact rows. */
  cl_device_type type = 0;
  clGetDeviceInfo(ocltune_runtime_device(rt), CL_DEVICE_TYPE, sizeof type, &type, NULL);
  if (type & CL_DEVICE_TYPE_CPU) {
    CHECK(ocltune_runtime_reset_dispatch_stats(rt) == OCLTUNE_SUCCESS, "%s", ocltune_last_error());
    gemm_case(rt, 5, 7, 3, 1, 0);
    gemm_case(rt, 5, 7, 3, 1, 1);
    CHECK(ocltune_write_shapes_file(&rt, 1, path, &problems) == OCLTUNE_SUCCESS && problems == 1, "%zu problems: %s",
          problems, ocltune_last_error());
    text = read_file(path);
    CHECK(text != NULL, "no %s", path);
    if (text) {
      CHECK(strstr(text, "\"calls\":2") != NULL && strstr(text, "tf32") == NULL, "%s", text);
      free(text);
    }
  }
  remove(path);

  ocltune_runtime_destroy(other);
  ocltune_runtime_destroy(rt);
  if (failures == 0) printf("capi_record_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
