// Winograd F(MxM, 3x3) convolution (3x3, stride 1, dilation 1, groups 1), forward and backward-data
// (the latter is the forward convolution of dy with the flipped, transposed filter). Three kernels
// around a batched GEMM (gemm.cl) over the ALPHA*ALPHA transform points xi:
//   conv2d_wino_weight: U[xi][ko][ci] = (G g G^T)[xi]                  one work-item per (ko, ci)
//   conv2d_wino_input:  V[xi][ci][t]  = (B^T d B)[xi]                  one work-item per (ci, TPI tiles)
//   gemm:               Mt[xi][ko][t] = sum_ci U[xi][ko][ci] V[xi][ci][t]
//   conv2d_wino_output: y[ko][tile]   = act(A^T Mt A + bias)           one work-item per (ko, TPI tiles)
// Tiles t run over (n, tile row, tile column); edge tiles read zeros past the input and store only
// the outputs inside the image. The tensors are STORAGE (storage.cl); U, V and Mt are fp32
// workspaces, so 16-bit storage rounds each output once, in conv2d_wino_output.
// Launch of each transform: 1-D, local (WINO_WG).

// ---- Problem layout (set by the host, not tuned) ----
#ifndef FLIP
#define FLIP 0  // 1: backward-data, the filter is g'[c][k] = w[k][c] rotated by 180 degrees
#endif

// ---- Tunables ----
#ifndef WINO_M
#define WINO_M 2  // output tile size M of F(MxM, 3x3): 2 or 4
#endif
#ifndef WINO_WG
#define WINO_WG 64  // work-group size of the three transform kernels
#endif
#ifndef WINO_TPI
#define WINO_TPI 1  // adjacent tiles along a row per work-item of the input/output transforms
#endif

#define ALPHA (WINO_M + 2)
#define XI (ALPHA * ALPHA)
#define SPAN (WINO_M * WINO_TPI + 2)  // input columns covering TPI adjacent tiles

#if WINO_M == 2
// out[i] = sum_j B^T[i][j] in[j*st]
#define BT_ROW(o, in, st)                                            \
  o[0] = in[0] - in[2 * (st)];                                       \
  o[1] = in[1 * (st)] + in[2 * (st)];                                \
  o[2] = in[2 * (st)] - in[1 * (st)];                                \
  o[3] = in[1 * (st)] - in[3 * (st)];
#define G_ROW(o, in, st)                                             \
  o[0] = in[0];                                                      \
  o[1] = 0.5f * (in[0] + in[1 * (st)] + in[2 * (st)]);               \
  o[2] = 0.5f * (in[0] - in[1 * (st)] + in[2 * (st)]);               \
  o[3] = in[2 * (st)];
#define AT_ROW(o, in, st)                                            \
  o[0] = in[0] + in[1 * (st)] + in[2 * (st)];                        \
  o[1] = in[1 * (st)] - in[2 * (st)] - in[3 * (st)];
#else
#define BT_ROW(o, in, st)                                                          \
  o[0] = 4.0f * in[0] - 5.0f * in[2 * (st)] + in[4 * (st)];                        \
  o[1] = -4.0f * in[1 * (st)] - 4.0f * in[2 * (st)] + in[3 * (st)] + in[4 * (st)]; \
  o[2] = 4.0f * in[1 * (st)] - 4.0f * in[2 * (st)] - in[3 * (st)] + in[4 * (st)];  \
  o[3] = -2.0f * in[1 * (st)] - in[2 * (st)] + 2.0f * in[3 * (st)] + in[4 * (st)]; \
  o[4] = 2.0f * in[1 * (st)] - in[2 * (st)] - 2.0f * in[3 * (st)] + in[4 * (st)];  \
  o[5] = 4.0f * in[1 * (st)] - 5.0f * in[3 * (st)] + in[5 * (st)];
#define G_ROW(o, in, st)                                                                          \
  o[0] = 0.25f * in[0];                                                                           \
  o[1] = (-1.0f / 6.0f) * (in[0] + in[1 * (st)] + in[2 * (st)]);                                  \
  o[2] = (-1.0f / 6.0f) * (in[0] - in[1 * (st)] + in[2 * (st)]);                                  \
  o[3] = (1.0f / 24.0f) * in[0] + (1.0f / 12.0f) * in[1 * (st)] + (1.0f / 6.0f) * in[2 * (st)];   \
  o[4] = (1.0f / 24.0f) * in[0] - (1.0f / 12.0f) * in[1 * (st)] + (1.0f / 6.0f) * in[2 * (st)];   \
  o[5] = in[2 * (st)];
#define AT_ROW(o, in, st)                                                                          \
  o[0] = in[0] + in[1 * (st)] + in[2 * (st)] + in[3 * (st)] + in[4 * (st)];                        \
  o[1] = in[1 * (st)] - in[2 * (st)] + 2.0f * (in[3 * (st)] - in[4 * (st)]);                       \
  o[2] = in[1 * (st)] + in[2 * (st)] + 4.0f * (in[3 * (st)] + in[4 * (st)]);                       \
  o[3] = in[1 * (st)] - in[2 * (st)] + 8.0f * (in[3 * (st)] - in[4 * (st)]) + in[5 * (st)];
#endif

// U[xi][ko][ci] for ko < k_out, ci < c_in; the filter is w[ko][ci] (FLIP=0) or rot180(w[ci][ko]).
__attribute__((reqd_work_group_size(WINO_WG, 1, 1)))
kernel void conv2d_wino_weight(const int k_out, const int c_in, const global STORAGE* restrict w, const long w_offset,
                               global float* U) {
  const int id = get_global_id(0);
  if (id >= k_out * c_in) return;
  const int ko = id / c_in, ci = id - (id / c_in) * c_in;
  float g[9];
#if FLIP
  const global STORAGE* src = w + w_offset + ((long)ci * k_out + ko) * 9;
#pragma unroll
  for (int e = 0; e < 9; ++e) g[e] = LOAD(src, 8 - e);
#else
  const global STORAGE* src = w + w_offset + (long)id * 9;
#pragma unroll
  for (int e = 0; e < 9; ++e) g[e] = LOAD(src, e);
#endif
  float tmp[ALPHA * 3];  // G g: ALPHA rows x 3 columns
#pragma unroll
  for (int col = 0; col < 3; ++col) {
    float o[ALPHA];
    G_ROW(o, (g + col), 3)
#pragma unroll
    for (int i = 0; i < ALPHA; ++i) tmp[i * 3 + col] = o[i];
  }
  const long plane = (long)k_out * c_in;
#pragma unroll
  for (int i = 0; i < ALPHA; ++i) {
    float o[ALPHA];
    G_ROW(o, (tmp + i * 3), 1)
#pragma unroll
    for (int j = 0; j < ALPHA; ++j) U[(i * ALPHA + j) * plane + id] = o[j];
  }
}

// V[xi][ci][t]: the input d is c_in planes of in_h x in_w per image, read from row
// th*M - pad_top and column tw*M - pad_left of each tile.
__attribute__((reqd_work_group_size(WINO_WG, 1, 1)))
kernel void conv2d_wino_input(const int n_images, const int c_in, const int in_h, const int in_w, const int pad_top,
                              const int pad_left, const int tiles_h, const int tiles_w,
                              const global STORAGE* restrict d, const long d_offset, global float* V) {
  const int groups_w = (tiles_w + WINO_TPI - 1) / WINO_TPI;
  const int id = get_global_id(0);
  if (id >= n_images * c_in * tiles_h * groups_w) return;
  // Consecutive work-items take consecutive tile groups of one plane: V stores are contiguous in t.
  const int tgw = id % groups_w;
  int rest = id / groups_w;
  const int th = rest % tiles_h;
  rest /= tiles_h;
  const int ci = rest % c_in;
  const int n = rest / c_in;
  const global STORAGE* plane_in = d + d_offset + ((long)n * c_in + ci) * in_h * in_w;
  const int row0 = th * WINO_M - pad_top;
  const int col0 = tgw * (WINO_TPI * WINO_M) - pad_left;
  float patch[ALPHA * SPAN];
#pragma unroll
  for (int i = 0; i < ALPHA; ++i) {
    const int row = row0 + i;
#pragma unroll
    for (int j = 0; j < SPAN; ++j) {
      const int col = col0 + j;
      patch[i * SPAN + j] = row >= 0 && row < in_h && col >= 0 && col < in_w ? LOAD(plane_in, row * in_w + col) : 0.0f;
    }
  }
  const long t_count = (long)n_images * tiles_h * tiles_w;
  const long plane = (long)c_in * t_count;
#pragma unroll
  for (int u = 0; u < WINO_TPI; ++u) {
    const int tw = tgw * WINO_TPI + u;
    if (tw >= tiles_w) break;
    float tmp[ALPHA * ALPHA];  // B^T d, column by column
#pragma unroll
    for (int col = 0; col < ALPHA; ++col) {
      float o[ALPHA];
      BT_ROW(o, (patch + u * WINO_M + col), SPAN)
#pragma unroll
      for (int i = 0; i < ALPHA; ++i) tmp[i * ALPHA + col] = o[i];
    }
    const long t = ((long)n * tiles_h + th) * tiles_w + tw;
    global float* dst = V + (long)ci * t_count + t;
#pragma unroll
    for (int i = 0; i < ALPHA; ++i) {
      float o[ALPHA];
      BT_ROW(o, (tmp + i * ALPHA), 1)
#pragma unroll
      for (int j = 0; j < ALPHA; ++j) dst[(i * ALPHA + j) * plane] = o[j];
    }
  }
}

// y[n][ko][tile] = act(A^T Mt A + bias[ko]), cropped to out_h x out_w.
__attribute__((reqd_work_group_size(WINO_WG, 1, 1)))
kernel void conv2d_wino_output(const int n_images, const int k_out, const int out_h, const int out_w,
                               const int tiles_h, const int tiles_w, const global float* restrict Mt,
                               global STORAGE* y, const long y_offset, const global STORAGE* bias, const long b_offset) {
  const int groups_w = (tiles_w + WINO_TPI - 1) / WINO_TPI;
  const int id = get_global_id(0);
  if (id >= n_images * k_out * tiles_h * groups_w) return;
  const int tgw = id % groups_w;
  int rest = id / groups_w;
  const int th = rest % tiles_h;
  rest /= tiles_h;
  const int ko = rest % k_out;
  const int n = rest / k_out;
  const long t_count = (long)n_images * tiles_h * tiles_w;
  const long plane = (long)k_out * t_count;
#if HAS_BIAS && !FLIP
  const float b = LOAD(bias, b_offset + ko);
#endif
  global STORAGE* out = y + y_offset + ((long)n * k_out + ko) * out_h * out_w;
#pragma unroll
  for (int u = 0; u < WINO_TPI; ++u) {
    const int tw = tgw * WINO_TPI + u;
    if (tw >= tiles_w) break;
    const long t = ((long)n * tiles_h + th) * tiles_w + tw;
    const global float* src = Mt + (long)ko * t_count + t;
    float m[XI];
#pragma unroll
    for (int e = 0; e < XI; ++e) m[e] = src[e * plane];
    float tmp[WINO_M * ALPHA];  // A^T m, column by column
#pragma unroll
    for (int col = 0; col < ALPHA; ++col) {
      float o[WINO_M];
      AT_ROW(o, (m + col), ALPHA)
#pragma unroll
      for (int i = 0; i < WINO_M; ++i) tmp[i * ALPHA + col] = o[i];
    }
#pragma unroll
    for (int i = 0; i < WINO_M; ++i) {
      float o[WINO_M];
      AT_ROW(o, (tmp + i * ALPHA), 1)
      const int row = th * WINO_M + i;
#pragma unroll
      for (int j = 0; j < WINO_M; ++j) {
        const int col = tw * WINO_M + j;
        if (row < out_h && col < out_w) {
#if FLIP
          STORE(o[j], out, row * out_w + col);
#elif HAS_BIAS
          STORE(activate(o[j] + b), out, row * out_w + col);
#else
          STORE(activate(o[j]), out, row * out_w + col);
#endif
        }
      }
    }
  }
}
