// 2-D pooling of NCHW planes with PyTorch semantics: max (a NaN in a window wins; indices are flat
// h*W+w within the plane, for backward) and average (count_include_pad; ceil_mode through the
// output size), forward and backward (a gather over the windows that hold each input, so
// overlapping windows need no atomics), and the adaptive average to 1x1. Any plane, window, stride
// and padding. Storage type from storage.cl (DTYPE), fp32 arithmetic. Launch: windowed kernels 3-D
// (column tiles, rows, planes), local (LX, LY, 1), each dim rounded up to the local size, so no
// work-item divides by a runtime value; the adaptive average 1-D, local WG.

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
#ifndef LX
#define LX 32  // windowed kernels: work-group extent along W (column tiles)
#endif
#ifndef LY
#define LY 2  // windowed kernels: work-group extent along rows
#endif
#ifndef WG
#define WG 64  // adaptive average: work-group size
#endif
#ifndef WPT
#define WPT 1  // outputs (forward) or inputs (backward) along W per work-item
#endif
#ifndef SPLIT
#define SPLIT 1  // adaptive average: work-items that share a plane (a power of two, reduced in local memory)
#endif
#ifndef VW
#define VW 1  // adaptive average: 1 or 4, the width of its loads
#endif

// Integer min/max as plain selects, which PoCL's work-item vectoriser handles at least as well as
// the builtins.
static inline int mini(const int a, const int b) { return a < b ? a : b; }
static inline int maxi(const int a, const int b) { return a > b ? a : b; }

// Averaging divisor of the window starting at (hs, ws) in padded coordinates; 0 when it holds no
// input (PyTorch then writes 0).
static inline int avg_divisor(const int hs, const int ws, const int H, const int W) {
  const int he = mini(hs + KH, H + PH), we = mini(ws + KW, W + PW);
  const int h0 = maxi(hs, 0), w0 = maxi(ws, 0), h1 = mini(he, H), w1 = mini(we, W);
  if (h0 >= h1 || w0 >= w1) return 0;
  return COUNT_INCLUDE_PAD ? (he - hs) * (we - ws) : (h1 - h0) * (w1 - w0);
}

// Work-item (tile, oh, plane) computes the WPT adjacent outputs of row oh from tile * WPT on. The
// running maximum's position is a float (window-relative, exact): with an int, PoCL's code is 2x
// slower; and x != x rather than isnan, 10x slower on PoCL.
__attribute__((reqd_work_group_size(LX, LY, 1)))
kernel void pool_forward(const int H, const int W, const int OH, const int OW,
                         const global STORAGE* x, const int x_off, global STORAGE* y, const int y_off
#if POOL_MAX && WITH_INDICES
                         , global long* indices, const int i_off
#endif
) {
  const int ow0 = get_global_id(0) * WPT;
  const int oh = get_global_id(1);
  if (ow0 >= OW || oh >= OH) return;
  const int p = get_global_id(2);
  const global STORAGE* xp = x + x_off + p * H * W;
  const int hs = oh * SH - PH;
  for (int j = 0; j < WPT; ++j) {
    const int ow = ow0 + j;
    if (ow >= OW) break;
    const int ws = ow * SW - PW;
#if POOL_MAX
    float best = -INFINITY;
    float at = (float)((maxi(hs, 0) - hs) * KW + (maxi(ws, 0) - ws));  // window position: the first inside the input
#else
    float sum = 0.0f;
#endif
    for (int kh = 0; kh < KH; ++kh) {
      const int h = hs + kh;
      if (h < 0 || h >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int w = ws + kw;
        if (w < 0 || w >= W) continue;
        const float v = LOAD(xp, h * W + w);
#if POOL_MAX
        const bool take = v > best || v != v;
        best = take ? v : best;
        at = take ? (float)(kh * KW + kw) : at;
#else
        sum += v;
#endif
      }
    }
    const int o = (p * OH + oh) * OW + ow;
#if POOL_MAX
    STORE(best, y + y_off, o);
#if WITH_INDICES
    const int r = (int)at;
    indices[i_off + o] = (hs + r / KW) * W + ws + r % KW;
#endif
#else
    const int d = avg_divisor(hs, ws, H, W);
    STORE(d > 0 ? sum / (float)d : 0.0f, y + y_off, o);
#endif
  }
}

// Work-item (tile, h, plane) computes the WPT adjacent input gradients of row h from tile * WPT on.
// Each gathers the gradients of the windows that hold it: max adds those whose index points at it,
// average adds each window's gradient over its divisor.
__attribute__((reqd_work_group_size(LX, LY, 1)))
kernel void pool_backward(const int H, const int W, const int OH, const int OW,
                          const global STORAGE* gy, const int gy_off,
#if POOL_MAX
                          const global long* indices, const int i_off,
#endif
                          global STORAGE* gx, const int gx_off) {
  const int w0 = get_global_id(0) * WPT;
  const int h = get_global_id(1);
  if (w0 >= W || h >= H) return;
  const int p = get_global_id(2);
  const global STORAGE* gyp = gy + gy_off + p * OH * OW;
#if POOL_MAX
  const global long* ip = indices + i_off + p * OH * OW;
#endif
  const int oh0 = h + PH < KH ? 0 : (h + PH - KH) / SH + 1;
  const int oh1 = mini((h + PH) / SH, OH - 1);
  for (int j = 0; j < WPT; ++j) {
    const int w = w0 + j;
    if (w >= W) break;
    const int ow0 = w + PW < KW ? 0 : (w + PW - KW) / SW + 1;
    const int ow1 = mini((w + PW) / SW, OW - 1);
    const int hw = h * W + w;
    float sum = 0.0f;
#if POOL_MAX
    for (int oh = oh0; oh <= oh1; ++oh) {
      for (int ow = ow0; ow <= ow1; ++ow) {
        const int o = oh * OW + ow;
        sum += ip[o] == hw ? LOAD(gyp, o) : 0.0f;
      }
    }
#else
    // The divisor is (window rows) x (window columns): reciprocals of each, not a division per window.
    for (int ow = ow0; ow <= ow1; ++ow) {
      const int ws = ow * SW - PW;
      const float inv_cols = 1.0f / (float)(COUNT_INCLUDE_PAD ? mini(ws + KW, W + PW) - ws : mini(ws + KW, W) - maxi(ws, 0));
      for (int oh = oh0; oh <= oh1; ++oh) {
        const int hs = oh * SH - PH;
        const float inv_rows = 1.0f / (float)(COUNT_INCLUDE_PAD ? mini(hs + KH, H + PH) - hs : mini(hs + KH, H) - maxi(hs, 0));
        sum += LOAD(gyp, oh * OW + ow) * (inv_rows * inv_cols);
      }
    }
#endif
    STORE(sum, gx + gx_off, (p * H + h) * W + w);
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
