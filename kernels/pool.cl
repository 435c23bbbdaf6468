// 2-D pooling of NCHW planes with PyTorch semantics: max (a NaN in a window wins; indices are flat
// h*W+w within the plane, for backward) and average (count_include_pad; ceil_mode through the
// output size), forward and backward (a gather over the windows that hold each input, so
// overlapping windows need no atomics), and the adaptive average to 1x1. Any plane, window, stride
// and padding. Storage type from storage.cl (DTYPE), fp32 arithmetic. Launch: 1-D, local WG; global
// WG * ceil(items / WG) with the items of each kernel below.

// ---- Problem (set by the host, not tuned) ----
#ifndef POOL_MAX
#define POOL_MAX 1  // 1: max pooling; 0: average pooling
#endif
#ifndef KH
#define KH 3  // window height
#endif
#ifndef KW
#define KW 3  // window width
#endif
#ifndef SH
#define SH 2  // vertical stride
#endif
#ifndef SW
#define SW 2  // horizontal stride
#endif
#ifndef PH
#define PH 1  // padding above and below
#endif
#ifndef PW
#define PW 1  // padding left and right
#endif
#ifndef COUNT_INCLUDE_PAD
#define COUNT_INCLUDE_PAD 1  // average: padded positions count in the divisor
#endif
#ifndef WITH_INDICES
#define WITH_INDICES 1  // max forward: write the index of each maximum
#endif

// ---- Tunables ----
#ifndef WG
#define WG 64  // work-group size
#endif
#ifndef WPT
#define WPT 1  // outputs (forward) or inputs (backward) along W per work-item
#endif
#ifndef CACHE
#define CACHE 0  // forward: 1 loads each window row span of a work-item's WPT outputs once into registers
#endif
#ifndef SPLIT
#define SPLIT 1  // adaptive average: work-items that share a plane (a power of two, reduced in local memory)
#endif
#ifndef VW
#define VW 1  // adaptive average: 1 or 4, the width of its loads
#endif

#define SPAN ((WPT - 1) * SW + KW)  // input columns under WPT adjacent windows

// Averaging divisor of the window starting at (hs, ws) in padded coordinates; 0 when it holds no
// input (PyTorch then writes 0).
static inline int avg_divisor(const int hs, const int ws, const int H, const int W) {
  const int he = min(hs + KH, H + PH), we = min(ws + KW, W + PW);
  const int h0 = max(hs, 0), w0 = max(ws, 0), h1 = min(he, H), w1 = min(we, W);
  if (h0 >= h1 || w0 >= w1) return 0;
  return COUNT_INCLUDE_PAD ? (he - hs) * (we - ws) : (h1 - h0) * (w1 - w0);
}

// Items: planes * OH * ceil(OW / WPT); each computes WPT adjacent outputs of one output row.
__attribute__((reqd_work_group_size(WG, 1, 1)))
kernel void pool_forward(const int planes, const int H, const int W, const int OH, const int OW,
                         const global STORAGE* x, const int x_off, global STORAGE* y, const int y_off
#if POOL_MAX && WITH_INDICES
                         , global long* indices, const int i_off
#endif
) {
  const int tiles = (OW + WPT - 1) / WPT;
  const int item = get_global_id(0);
  if (item >= planes * OH * tiles) return;
  const int ow0 = (item % tiles) * WPT;
  const int row = item / tiles;  // p * OH + oh
  const int oh = row % OH;
  const global STORAGE* xp = x + x_off + (row / OH) * H * W;
  const int hs = oh * SH - PH;
  const int ws0 = ow0 * SW - PW;
#if POOL_MAX
  float best[WPT];
  int at[WPT];
  for (int j = 0; j < WPT; ++j) {
    best[j] = -INFINITY;
    at[j] = max(hs, 0) * W + max(ws0 + j * SW, 0);  // PyTorch: the first position inside the input
  }
#else
  float sum[WPT];
  for (int j = 0; j < WPT; ++j) sum[j] = 0.0f;
#endif
  for (int kh = 0; kh < KH; ++kh) {
    const int h = hs + kh;
    if (h < 0 || h >= H) continue;
#if CACHE
    // Positions outside the input read as -Inf (max) or 0 (average): never chosen, never counted.
    float span[SPAN];
    for (int c = 0; c < SPAN; ++c) {
      const int w = ws0 + c;
      span[c] = (w >= 0 && w < W) ? LOAD(xp, h * W + w) : (POOL_MAX ? -INFINITY : 0.0f);
    }
#endif
    for (int j = 0; j < WPT; ++j) {
      for (int kw = 0; kw < KW; ++kw) {
        const int w = ws0 + j * SW + kw;
#if CACHE
        const float v = span[j * SW + kw];
#else
        if (w < 0 || w >= W) continue;
        const float v = LOAD(xp, h * W + w);
#endif
#if POOL_MAX
        if (v > best[j] || isnan(v)) {
          best[j] = v;
          at[j] = h * W + w;
        }
#else
        sum[j] += v;
#endif
      }
    }
  }
  for (int j = 0; j < WPT && ow0 + j < OW; ++j) {
    const int o = row * OW + ow0 + j;
#if POOL_MAX
    STORE(best[j], y + y_off, o);
#if WITH_INDICES
    indices[i_off + o] = at[j];
#endif
#else
    const int d = avg_divisor(hs, ws0 + j * SW, H, W);
    STORE(d > 0 ? sum[j] / (float)d : 0.0f, y + y_off, o);
#endif
  }
}

// Items: planes * H * ceil(W / WPT). Each input gathers the gradients of the windows that hold it:
// max adds those whose index points at it, average adds each window's gradient over its divisor.
__attribute__((reqd_work_group_size(WG, 1, 1)))
kernel void pool_backward(const int planes, const int H, const int W, const int OH, const int OW,
                          const global STORAGE* gy, const int gy_off,
#if POOL_MAX
                          const global long* indices, const int i_off,
#endif
                          global STORAGE* gx, const int gx_off) {
  const int tiles = (W + WPT - 1) / WPT;
  const int item = get_global_id(0);
  if (item >= planes * H * tiles) return;
  const int w0 = (item % tiles) * WPT;
  const int row = item / tiles;  // p * H + h
  const int h = row % H;
  const int plane_out = (row / H) * OH * OW;
  // Windows oh cover rows [oh*SH - PH, oh*SH - PH + KH): those holding h.
  const int oh0 = h + PH < KH ? 0 : (h + PH - KH) / SH + 1;
  const int oh1 = min((h + PH) / SH, OH - 1);
  for (int j = 0; j < WPT && w0 + j < W; ++j) {
    const int w = w0 + j;
    const int ow0 = w + PW < KW ? 0 : (w + PW - KW) / SW + 1;
    const int ow1 = min((w + PW) / SW, OW - 1);
    float sum = 0.0f;
    for (int oh = oh0; oh <= oh1; ++oh) {
      for (int ow = ow0; ow <= ow1; ++ow) {
        const int o = plane_out + oh * OW + ow;
#if POOL_MAX
        if (indices[i_off + o] == h * W + w) sum += LOAD(gy + gy_off, o);
#else
        sum += LOAD(gy + gy_off, o) / (float)avg_divisor(oh * SH - PH, ow * SW - PW, H, W);
#endif
      }
    }
    STORE(sum, gx + gx_off, row * W + w);
  }
}

// Items: planes * SPLIT; SPLIT work-items sum a plane of HW elements, reduced in local memory.
__attribute__((reqd_work_group_size(WG, 1, 1)))
kernel void adaptive_avg_forward(const int planes, const int HW, const global STORAGE* x, const int x_off,
                                 global STORAGE* y, const int y_off) {
  const int lid = get_local_id(0);
  const int plane = get_group_id(0) * (WG / SPLIT) + lid / SPLIT;
  const int lane = lid % SPLIT;
  float sum = 0.0f;
  if (plane < planes) {
    const global STORAGE* xp = x + x_off + plane * HW;
#if VW == 4
    float4 acc = (float4)(0.0f);
    for (int i = lane; i < HW / 4; i += SPLIT) acc += LOAD4(xp, i);
    sum = (acc.x + acc.y) + (acc.z + acc.w);
    for (int i = (HW / 4) * 4 + lane; i < HW; i += SPLIT) sum += LOAD(xp, i);
#else
    for (int i = lane; i < HW; i += SPLIT) sum += LOAD(xp, i);
#endif
  }
#if SPLIT > 1
  local float partial[WG];
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int d = SPLIT / 2; d > 0; d >>= 1) {
    if (lane < d) partial[lid] += partial[lid + d];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  sum = partial[lid];
#endif
  if (lane == 0 && plane < planes) STORE(sum / (float)HW, y + y_off, plane);
}
