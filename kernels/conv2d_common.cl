// Shared by every conv2d kernel: problem-level switches, the shape argument list, and the small
// elementwise kernels of the GEMM-based algorithms (bias + activation epilogue, bias gradient).
// Prepended to each conv2d_*.cl program, after storage.cl and activation.cl (the fused activation):
// tensors are STORAGE (fp32, fp16 or bf16), read with LOAD and written with STORE, arithmetic is fp32.

// ---- Problem layout (set by the host, not tuned) ----
#ifndef HAS_BIAS
#define HAS_BIAS 0  // 1: forward adds bias[k]; backward-weight also writes the bias gradient
#endif
#ifndef EPI_WG
#define EPI_WG 64  // work-group size of the epilogue and bias-gradient kernels
#endif

// The shape of the convolution, passed at run time so one program serves every shape.
#define CONV_SHAPE_PARAMS                                                                              \
  const int N, const int C, const int H, const int W, const int K, const int P, const int Q, const int R, \
      const int S, const int stride_h, const int stride_w, const int pad_h, const int pad_w, const int dil_h, \
      const int dil_w, const int groups

// Division by a run-time divisor d >= 1 without a hardware divide (which CPUs cannot vectorise and
// GPUs emulate): for 0 <= x < 2^31, x / d == (mul_hi(x, m) + x) >> l with l = ceil(log2 d) and
// m = floor(2^32 (2^l - d) / d) + 1 (Granlund & Montgomery, 1994). The sum fits 32 bits as x < 2^31.
typedef uint2 FastDiv;  // (m, l)
static inline FastDiv fastdiv_for(const int d) {
  uint l = 0;
  while ((1u << l) < (uint)d) ++l;
  const ulong m = (((ulong)1 << 32) * (((ulong)1 << l) - (ulong)d)) / (ulong)d + 1;
  return (FastDiv)((uint)m, l);
}
static inline int fastdiv(const int x, const FastDiv f) { return (int)((mul_hi((uint)x, f.x) + (uint)x) >> f.y); }


// Forward epilogue of the algorithms whose last step is a plain GEMM: y = act(y + bias[k]) in
// place. A work-group covers `chunk` elements of `rows` consecutive (n, k) planes, so that small
// planes do not make one tiny work-group each (PoCL pays about 0.1 us per work-group: 768 groups of a
// 16x16 layer took 93 us for 49 K elements). Launch: global (ceil(P*Q/chunk)*EPI_WG,
// ceil(N*K/rows)), local (EPI_WG, 1).
__attribute__((reqd_work_group_size(EPI_WG, 1, 1)))
kernel void conv2d_bias_act(const int plane, const int K, const int NK, const int chunk, const int rows,
                            global STORAGE* y, const long y_offset, const global STORAGE* bias,
                            const long b_offset) {
  const int t = get_local_id(0);
  const int start = get_group_id(0) * chunk;
  const int end = min(start + chunk, plane);
  const int first = get_group_id(1) * rows;
  const int last = min(first + rows, NK);
  for (int nk = first; nk < last; ++nk) {
    const long row = y_offset + (long)nk * plane;
#if HAS_BIAS
    const float b = LOAD(bias, b_offset + nk % K);
#else
    const float b = 0.0f;
#endif
    for (int i = start + t; i < end; i += EPI_WG) STORE(activate(LOAD(y, row + i) + b), y, row + i);
  }
}

// Bias gradient: db[k] = sum over n, p, q of dy[n][k][p][q]. One work-group per k, a tree
// reduction in local memory. Launch: global (EPI_WG, K), local (EPI_WG, 1).
__attribute__((reqd_work_group_size(EPI_WG, 1, 1)))
kernel void conv2d_bias_grad(const int N, const int K, const int plane, const global STORAGE* dy,
                             const long dy_offset, global STORAGE* db, const long db_offset) {
  local float partial[EPI_WG];
  const int t = get_local_id(0);
  const int k = get_group_id(1);
  float sum = 0.0f;
  for (int n = 0; n < N; ++n) {
    const global STORAGE* row = dy + dy_offset + ((long)n * K + k) * plane;
    for (int i = t; i < plane; i += EPI_WG) sum += LOAD(row, i);
  }
  partial[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int span = EPI_WG / 2; span > 0; span /= 2) {
    if (t < span) partial[t] += partial[t + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) STORE(partial[0], db, db_offset + k);
}
