/* The C API from C: runtimes by index and on a caller's context, GEMMs, a conv2d, a pooling and a
 * caller's own program checked, error paths. */
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

/* One forward conv2d (odd sizes, stride 2, padding, bias) through ocltune_conv2d, checked in double. */
/* bf16 storage (dtype 2): each value is the top half of an fp32 bit pattern, so the reference uses
 * the truncated values the buffers hold; results carry bf16's rounding (2^-8) on top. */
static uint16_t to_bf16(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  return (uint16_t)(bits >> 16);
}
static float from_bf16(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float x;
  memcpy(&x, &bits, 4);
  return x;
}
/* nn.Linear through the C ABI (version 4): C = relu(A * B^T + bias) with the bias behind an offset;
 * a bias flag without its buffer and an unknown activation are refused. */
static void gemm_epilogue_case(ocltune_runtime rt) {
  enum { M = 9, N = 7, K = 13, BIAS_OFFSET = 3 };
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  float a[M * K], b[N * K], bias[BIAS_OFFSET + N], c[M * N];
  unsigned state = 4242u;
  for (int i = 0; i < M * K; ++i) a[i] = next_value(&state);
  for (int i = 0; i < N * K; ++i) b[i] = next_value(&state);
  for (int i = 0; i < BIAS_OFFSET + N; ++i) bias[i] = next_value(&state);
  cl_int err = CL_SUCCESS;
  ocltune_gemm_args args;
  ocltune_gemm_args_init(&args, 0, 1, M, N, K, 1, NULL, NULL, NULL);
  CHECK(args.has_bias == 0 && args.bias == NULL && args.activation == OCLTUNE_ACTIVATION_NONE,
        "epilogue after init: %d %d", args.has_bias, args.activation);
  args.a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  args.b = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
  args.c = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof c, NULL, &err);
  cl_mem bias_buffer = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof bias, bias, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);
  args.has_bias = 1;
  args.activation = OCLTUNE_ACTIVATION_RELU;
  ocltune_status status = ocltune_gemm(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "bias flag without a buffer: %s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "bias") != NULL, "message: %s", ocltune_last_error());
  args.bias = bias_buffer;
  args.bias_offset = BIAS_OFFSET;
  args.activation = 9;
  status = ocltune_gemm(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "activation 9: %s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "activation") != NULL, "message: %s", ocltune_last_error());
  args.activation = OCLTUNE_ACTIVATION_RELU;
  status = ocltune_gemm(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_SUCCESS, "epilogue: %s: %s", ocltune_status_name(status), ocltune_last_error());
  clEnqueueReadBuffer(queue, args.c, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
  int wrong = 0, positive = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double dot = bias[BIAS_OFFSET + j], scale = fabs(bias[BIAS_OFFSET + j]);
      for (int p = 0; p < K; ++p) {
        dot += (double)a[i * K + p] * b[j * K + p];
        scale += fabs((double)a[i * K + p] * b[j * K + p]);
      }
      const double expected = dot > 0 ? dot : 0;
      positive += dot > 0;
      if (!(fabs(c[i * N + j] - expected) <= 1e-5 * scale + 1e-6)) ++wrong;
    }
  }
  CHECK(wrong == 0, "gemm epilogue: %d wrong elements", wrong);
  CHECK(positive > 0 && positive < M * N, "the data should put results on both sides of relu (%d)", positive);
  clReleaseMemObject(args.a);
  clReleaseMemObject(args.b);
  clReleaseMemObject(args.c);
  clReleaseMemObject(bias_buffer);
}

static void gemm_bf16_case(ocltune_runtime rt) {
  enum { M = 13, N = 11, K = 17 };
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  uint16_t a[M * K], b[K * N], c[M * N];
  unsigned state = 777u;
  for (int i = 0; i < M * K; ++i) a[i] = to_bf16(next_value(&state));
  for (int i = 0; i < K * N; ++i) b[i] = to_bf16(next_value(&state));
  cl_int err = CL_SUCCESS;
  ocltune_gemm_args args;
  ocltune_gemm_args_init(&args, 0, 0, M, N, K, 1, NULL, NULL, NULL);
  CHECK(args.dtype == OCLTUNE_DTYPE_FP32, "dtype after init: %d", args.dtype);
  args.dtype = OCLTUNE_DTYPE_BF16;
  args.a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
  args.b = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
  args.c = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof c, NULL, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);
  ocltune_status status = ocltune_gemm(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_SUCCESS, "bf16: %s: %s", ocltune_status_name(status), ocltune_last_error());
  clEnqueueReadBuffer(queue, args.c, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
  int wrong = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double dot = 0, scale = 0;
      for (int p = 0; p < K; ++p) {
        const double t = (double)from_bf16(a[i * K + p]) * from_bf16(b[p * N + j]);
        dot += t;
        scale += fabs(t);
      }
      if (!(fabs(from_bf16(c[i * N + j]) - dot) <= 0x1.0p-8 * scale + 1e-6)) ++wrong;
    }
  }
  CHECK(wrong == 0, "bf16 gemm: %d wrong elements", wrong);
  args.dtype = 3;
  status = ocltune_gemm(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "dtype 3: %s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "dtype") != NULL, "message: %s", ocltune_last_error());
  clReleaseMemObject(args.a);
  clReleaseMemObject(args.b);
  clReleaseMemObject(args.c);
}

/* A bf16 forward conv2d (dtype 2: all four tensors bf16) through ocltune_conv2d, checked in double on
 * the values the buffers hold: within two bf16 roundings (2^-7) of the sum of |terms| (the GEMM-based
 * algorithms round their GEMM's result before the bias), an unknown dtype refused. */
static void conv2d_bf16_case(ocltune_runtime rt) {
  enum { NI = 2, C = 3, H = 9, W = 10, K = 4, R = 3 };
  const int P = H - R + 1 + 2, Q = W - R + 1 + 2; /* padding 1 */
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  uint16_t x[NI * C * H * W], wt[K * C * R * R], bias[K], y[NI * K * (H + 2 - R + 1) * (W + 2 - R + 1)];
  unsigned state = 4242u;
  for (size_t i = 0; i < sizeof x / 2; ++i) x[i] = to_bf16(next_value(&state));
  for (size_t i = 0; i < sizeof wt / 2; ++i) wt[i] = to_bf16(next_value(&state));
  for (size_t i = 0; i < sizeof bias / 2; ++i) bias[i] = to_bf16(next_value(&state));
  ocltune_conv2d_args args;
  ocltune_conv2d_args_init(&args, OCLTUNE_CONV_FORWARD, NI, C, H, W, K, R, R, NULL, NULL, NULL);
  CHECK(args.dtype == OCLTUNE_DTYPE_FP32, "conv2d dtype after init: %d", args.dtype);
  args.dtype = OCLTUNE_DTYPE_BF16;
  args.pad_h = args.pad_w = 1;
  args.has_bias = 1;
  cl_int err = CL_SUCCESS;
  args.input = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
  args.weight = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof wt, wt, &err);
  args.bias = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof bias, bias, &err);
  args.output = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof y, NULL, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);
  ocltune_status status = ocltune_conv2d(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_SUCCESS, "bf16 conv2d: %s: %s", ocltune_status_name(status), ocltune_last_error());
  clEnqueueReadBuffer(queue, args.output, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL);
  int wrong = 0;
  for (int n = 0; n < NI; ++n) {
    for (int k = 0; k < K; ++k) {
      for (int i = 0; i < P; ++i) {
        for (int j = 0; j < Q; ++j) {
          double sum = from_bf16(bias[k]), scale = fabs(sum);
          for (int c = 0; c < C; ++c) {
            for (int r = 0; r < R; ++r) {
              for (int s = 0; s < R; ++s) {
                const int h = i - 1 + r, w = j - 1 + s;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                const double term =
                    (double)from_bf16(x[((n * C + c) * H + h) * W + w]) * from_bf16(wt[((k * C + c) * R + r) * R + s]);
                sum += term;
                scale += fabs(term);
              }
            }
          }
          const double got = from_bf16(y[((n * K + k) * P + i) * Q + j]);
          if (!(fabs(got - sum) <= 0x1.0p-7 * scale + 1e-6)) ++wrong;
        }
      }
    }
  }
  CHECK(wrong == 0, "bf16 conv2d: %d wrong elements", wrong);
  args.dtype = 3;
  status = ocltune_conv2d(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "conv2d dtype 3: %s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "dtype") != NULL, "message: %s", ocltune_last_error());
  clReleaseMemObject(args.input);
  clReleaseMemObject(args.weight);
  clReleaseMemObject(args.bias);
  clReleaseMemObject(args.output);
}

static void conv2d_case(ocltune_runtime rt) {
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  ocltune_conv2d_args args;
  ocltune_conv2d_args_init(&args, OCLTUNE_CONV_FORWARD, 2, 3, 11, 13, 5, 3, 3, NULL, NULL, NULL);
  args.stride_h = args.stride_w = 2;
  args.pad_h = args.pad_w = 1;
  args.has_bias = 1;
  const int64_t p = (11 + 2 - 3) / 2 + 1, q = (13 + 2 - 3) / 2 + 1;
  const size_t nx = 2 * 3 * 11 * 13, nw = 5 * 3 * 3 * 3, nb = 5, ny = (size_t)(2 * 5 * p * q);
  float* x = malloc(nx * sizeof(float));
  float* wt = malloc(nw * sizeof(float));
  float* bias = malloc(nb * sizeof(float));
  float* y = malloc(ny * sizeof(float));
  unsigned state = 777u;
  for (size_t i = 0; i < nx; ++i) x[i] = next_value(&state);
  for (size_t i = 0; i < nw; ++i) wt[i] = next_value(&state);
  for (size_t i = 0; i < nb; ++i) bias[i] = next_value(&state);
  cl_int err = CL_SUCCESS;
  args.input = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nx * sizeof(float), x, &err);
  args.weight = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nw * sizeof(float), wt, &err);
  args.bias = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nb * sizeof(float), bias, &err);
  args.output = clCreateBuffer(context, CL_MEM_READ_WRITE, ny * sizeof(float), NULL, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);

  cl_event event = NULL;
  ocltune_level level = OCLTUNE_LEVEL_EXACT;
  ocltune_status status = ocltune_conv2d(rt, queue, &args, 0, NULL, &event, &level);
  CHECK(status == OCLTUNE_SUCCESS, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  CHECK(level == OCLTUNE_LEVEL_BUILTIN, "level %s", ocltune_level_name(level));
  CHECK(event != NULL, "no event");
  if (event) {
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
  }
  clEnqueueReadBuffer(queue, args.output, CL_TRUE, 0, ny * sizeof(float), y, 0, NULL, NULL);
  int wrong = 0;
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t k = 0; k < 5; ++k) {
      for (int64_t i = 0; i < p; ++i) {
        for (int64_t j = 0; j < q; ++j) {
          double sum = bias[k], scale = fabs(bias[k]);
          for (int64_t c = 0; c < 3; ++c) {
            for (int64_t r = 0; r < 3; ++r) {
              for (int64_t s = 0; s < 3; ++s) {
                const int64_t h = i * 2 - 1 + r, w = j * 2 - 1 + s;
                if (h < 0 || h >= 11 || w < 0 || w >= 13) continue;
                const double term = (double)x[((n * 3 + c) * 11 + h) * 13 + w] * wt[((k * 3 + c) * 3 + r) * 3 + s];
                sum += term;
                scale += fabs(term);
              }
            }
          }
          const double got = y[((n * 5 + k) * p + i) * q + j];
          if (!(fabs(got - sum) <= (8.0 * sqrt(28.0) + 4.0) * 0x1.0p-24 * (scale + 1e-30))) ++wrong;
        }
      }
    }
  }
  CHECK(wrong == 0, "conv2d: %d wrong elements", wrong);

  /* allow_tf32 (0 after init): its own math mode; results within TF32's error of the exact ones
   * (exactly them on a device without tensor cores). */
  CHECK(args.allow_tf32 == 0, "allow_tf32 after init: %d", args.allow_tf32);
  float* y_exact = malloc(ny * sizeof(float));
  memcpy(y_exact, y, ny * sizeof(float));
  args.allow_tf32 = 1;
  status = ocltune_conv2d(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_SUCCESS, "tf32: %s: %s", ocltune_status_name(status), ocltune_last_error());
  clEnqueueReadBuffer(queue, args.output, CL_TRUE, 0, ny * sizeof(float), y, 0, NULL, NULL);
  wrong = 0;
  for (size_t i = 0; i < ny; ++i) {
    if (!(fabs((double)y[i] - y_exact[i]) <= 1e-2 * (fabs(y_exact[i]) + 1.0))) ++wrong;
  }
  CHECK(wrong == 0, "conv2d tf32: %d elements far from the exact result", wrong);
  free(y_exact);
  args.allow_tf32 = 0;

  /* A call no kernel can serve is an argument error. */
  args.groups = 2;
  status = ocltune_conv2d(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "conv2d groups: %s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "groups") != NULL, "message: %s", ocltune_last_error());
  clReleaseMemObject(args.input);
  clReleaseMemObject(args.weight);
  clReleaseMemObject(args.bias);
  clReleaseMemObject(args.output);
  free(x);
  free(wt);
  free(bias);
  free(y);
}

/* One max pooling with indices through ocltune_pool (window 2x3, stride = window), checked exactly. */
static void pool_case(ocltune_runtime rt) {
  cl_context context = ocltune_runtime_context(rt);
  cl_command_queue queue = ocltune_runtime_queue(rt);
  enum { N = 2, C = 3, H = 11, W = 13, KH = 2, KW = 3, OH = H / KH, OW = W / KW };
  float x[N * C * H * W], y[N * C * OH * OW];
  int64_t idx[N * C * OH * OW];
  unsigned state = 99u;
  for (int i = 0; i < N * C * H * W; ++i) x[i] = next_value(&state);
  cl_int err = CL_SUCCESS;
  cl_mem in = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof y, NULL, &err);
  cl_mem indices = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof idx, NULL, &err);
  CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);
  ocltune_pool_args args;
  ocltune_pool_args_init(&args, OCLTUNE_POOL_MAX, 0, N, C, H, W, KH, KW, in, out, indices);
  ocltune_level level = OCLTUNE_LEVEL_EXACT;
  ocltune_status status = ocltune_pool(rt, queue, &args, 0, NULL, NULL, &level);
  CHECK(status == OCLTUNE_SUCCESS, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  CHECK(level == OCLTUNE_LEVEL_BUILTIN, "level %s", ocltune_level_name(level));
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, indices, CL_TRUE, 0, sizeof idx, idx, 0, NULL, NULL);
  int wrong = 0;
  for (int plane = 0; plane < N * C; ++plane) {
    for (int i = 0; i < OH; ++i) {
      for (int j = 0; j < OW; ++j) {
        int best = (i * KH) * W + j * KW;
        for (int r = 0; r < KH; ++r) {
          for (int s = 0; s < KW; ++s) {
            const int at = (i * KH + r) * W + j * KW + s;
            if (x[plane * H * W + at] > x[plane * H * W + best]) best = at;
          }
        }
        const int o = (plane * OH + i) * OW + j;
        if (y[o] != x[plane * H * W + best] || idx[o] != best) ++wrong;
      }
    }
  }
  CHECK(wrong == 0, "pool: %d wrong elements", wrong);
  args.indices = NULL;
  status = ocltune_pool(rt, queue, &args, 0, NULL, NULL, NULL);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "pool without indices buffer: %s", ocltune_status_name(status));
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseMemObject(indices);
}

/* The caller's own kernel source, built through the runtime's program cache: it runs; a source that
 * does not compile is OCLTUNE_BUILD_ERROR with the compiler's log; NULL arguments are refused. */
static void build_program_case(ocltune_runtime rt) {
  const char* source = "__kernel void scale(__global float* x, float s) { x[get_global_id(0)] *= s; }\n";
  cl_program program = NULL;
  ocltune_status status = ocltune_runtime_build_program(rt, source, strlen(source), "-cl-std=CL1.2", &program);
  CHECK(status == OCLTUNE_SUCCESS && program != NULL, "%s: %s", ocltune_status_name(status), ocltune_last_error());
  if (program) {
    cl_int err = CL_SUCCESS;
    float values[5] = {1.0f, 2.0f, -3.0f, 0.5f, 8.0f};
    cl_mem buffer = clCreateBuffer(ocltune_runtime_context(rt), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   sizeof(values), values, &err);
    cl_kernel kernel = clCreateKernel(program, "scale", &err);
    CHECK(err == CL_SUCCESS, "clCreateKernel: %d", err);
    const float s = -2.0f;
    const size_t global = 5;
    clSetKernelArg(kernel, 0, sizeof(cl_mem), &buffer);
    clSetKernelArg(kernel, 1, sizeof(float), &s);
    err = clEnqueueNDRangeKernel(ocltune_runtime_queue(rt), kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
    err |= clEnqueueReadBuffer(ocltune_runtime_queue(rt), buffer, CL_TRUE, 0, sizeof(values), values, 0, NULL, NULL);
    CHECK(err == CL_SUCCESS && values[0] == -2.0f && values[2] == 6.0f && values[4] == -16.0f, "scaled: %g %g %g",
          values[0], values[2], values[4]);
    clReleaseKernel(kernel);
    clReleaseMemObject(buffer);
    clReleaseProgram(program);
  }
  const char* broken = "__kernel void broken(__global float* x) { x[0] = undeclared_name; }\n";
  status = ocltune_runtime_build_program(rt, broken, strlen(broken), NULL, &program);
  CHECK(status == OCLTUNE_BUILD_ERROR && program == NULL, "broken source: %s", ocltune_status_name(status));
  CHECK(strstr(ocltune_last_error(), "undeclared_name") != NULL, "the log names the error: %s", ocltune_last_error());
  status = ocltune_runtime_build_program(rt, NULL, 0, NULL, &program);
  CHECK(status == OCLTUNE_INVALID_ARGUMENT, "NULL source: %s", ocltune_status_name(status));
}

/* The kernel observer (the profiler's hook): while set, each kernel of a dispatch is reported with its
 * family, name, configuration, level and an event with device times; cleared, nothing is. */
struct observed {
  int kernels;
  int gemm_kernels;
  int bad_events;
  char first_config[256];
};
static void observe_kernel(const ocltune_kernel_record* r, void* user) {
  struct observed* o = (struct observed*)user;
  ++o->kernels;
  if (strcmp(r->op, "gemm") == 0 && r->kernel[0] != '\0' && r->level == OCLTUNE_LEVEL_BUILTIN) ++o->gemm_kernels;
  if (o->kernels == 1) snprintf(o->first_config, sizeof o->first_config, "%s", r->config);
  cl_ulong start = 0, end = 0;
  if (clWaitForEvents(1, &r->event) != CL_SUCCESS ||
      clGetEventProfilingInfo(r->event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) != CL_SUCCESS ||
      clGetEventProfilingInfo(r->event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) != CL_SUCCESS || end < start)
    ++o->bad_events;
}

static void kernel_observer_case(ocltune_runtime rt) {
  struct observed o = {0, 0, 0, ""};
  CHECK(ocltune_set_kernel_observer(observe_kernel, &o) == OCLTUNE_SUCCESS, "set: %s", ocltune_last_error());
  gemm_case(rt, 0, 1, 21, 13, 17, 2, 0, 0, 1.0f, 0.0f, OCLTUNE_LEVEL_BUILTIN);
  CHECK(o.kernels >= 1 && o.gemm_kernels == o.kernels, "observed %d kernels, %d of gemm", o.kernels, o.gemm_kernels);
  CHECK(o.bad_events == 0, "%d events without device times", o.bad_events);
  CHECK(strchr(o.first_config, '=') != NULL, "configuration: '%s'", o.first_config);
  CHECK(ocltune_set_kernel_observer(NULL, NULL) == OCLTUNE_SUCCESS, "clear: %s", ocltune_last_error());
  const int seen = o.kernels;
  gemm_case(rt, 0, 1, 21, 13, 17, 2, 0, 0, 1.0f, 0.0f, OCLTUNE_LEVEL_BUILTIN);
  CHECK(o.kernels == seen, "cleared, yet %d more kernels were observed", o.kernels - seen);
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
  gemm_bf16_case(rt);
  gemm_epilogue_case(rt);
  conv2d_case(rt);
  conv2d_bf16_case(rt);
  pool_case(rt);
  build_program_case(rt);
  kernel_observer_case(rt);

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

  CHECK(strcmp(ocltune_level_name(OCLTUNE_LEVEL_NEAREST), "nearest") == 0, "%s",
        ocltune_level_name(OCLTUNE_LEVEL_NEAREST));
  ocltune_runtime_destroy(rt);
  ocltune_runtime_destroy(NULL);
  if (failures == 0) printf("capi_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
