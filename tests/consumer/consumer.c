/* An installed ocltune from C: checks the API version, runs one GEMM on device argv[1], compares it
 * with a double reference on the host. Exit 0 on success. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <ocltune/ocltune.h>

#if !defined(OCLTUNE_API_VERSION) || OCLTUNE_API_VERSION < 2
#error "this consumer needs ocltune API version 2 or later"
#endif

enum { M = 37, N = 29, K = 53 };

int main(int argc, char** argv) {
  const int device = argc > 1 ? atoi(argv[1]) : 0;
  if (ocltune_api_version() != OCLTUNE_API_VERSION) {
    fprintf(stderr, "header API %d, library API %d\n", OCLTUNE_API_VERSION, ocltune_api_version());
    return 1;
  }
  ocltune_runtime rt = NULL;
  if (ocltune_runtime_create_for_index(device, NULL, &rt) != OCLTUNE_SUCCESS) {
    fprintf(stderr, "runtime: %s\n", ocltune_last_error());
    return 1;
  }
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  cl_int err = CL_SUCCESS;
  cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
  cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof c, NULL, &err);
  ocltune_gemm_args args;
  ocltune_gemm_args_init(&args, 0, 0, M, N, K, 1, da, db, dc);
  args.dtype = OCLTUNE_DTYPE_FP32;
  ocltune_level level = OCLTUNE_LEVEL_BUILTIN;
  int failures = 0;
  if (ocltune_gemm(rt, queue, &args, 0, NULL, NULL, &level) != OCLTUNE_SUCCESS) {
    fprintf(stderr, "gemm: %s\n", ocltune_last_error());
    ++failures;
  } else {
    clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double want = 0;
        for (int p = 0; p < K; ++p) want += (double)a[i * K + p] * b[p * N + j];
        if (fabs(c[i * N + j] - want) > 1e-4 * (1 + fabs(want))) ++failures;
      }
    }
  }
  printf("consumer_c: gemm %dx%dx%d at level %s, %d wrong elements\n", M, N, K, ocltune_level_name(level), failures);
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  ocltune_runtime_destroy(rt);
  return failures ? 1 : 0;
}
