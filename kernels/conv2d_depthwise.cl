// Depthwise convolution (groups == C, K = C * multiplier): every output channel k filters input
// channel k / multiplier with its own R x S taps, so there is no channel reduction to tile.
//   conv2d_depthwise_fwd:        PPT x QPT outputs per work-item, the input patch optionally in local memory
//   conv2d_depthwise_bwd_data:   PPT x QPT input-gradient pixels per work-item, gathering dy
//   conv2d_depthwise_bwd_weight: one work-group per (k, TAPS filter taps), reducing over N*P*Q
// Launch (fwd, bwd_data): global (ceil(cols/(WGQ*QPT))*WGQ, ceil(rows/(WGP*PPT))*WGP, N*channels),
// local (WGQ, WGP, 1), where rows x cols is P x Q (fwd) or H x W (bwd_data).
// Launch (bwd_weight): global (DW_WG, ceil(R*S/TAPS), K), local (DW_WG, 1, 1).

// ---- Tunables ----
#ifndef PPT
#define PPT 1  // rows per work-item
#endif
#ifndef QPT
#define QPT 2  // columns per work-item
#endif
#ifndef WGQ
#define WGQ 16  // work-items along the columns
#endif
#ifndef WGP
#define WGP 4  // work-items along the rows
#endif
#ifndef LDS_IN
#define LDS_IN 0  // 1 (fwd): stage the input patch of the work-group in local memory
#endif
#ifndef DW_WG
#define DW_WG 64  // bwd_weight: work-items reducing one group of taps (a power of two)
#endif
#ifndef TAPS
#define TAPS 1  // bwd_weight: filter taps per work-group, sharing each dy load
#endif

__attribute__((reqd_work_group_size(WGQ, WGP, 1)))
kernel void conv2d_depthwise_fwd(CONV_SHAPE_PARAMS, const global STORAGE* restrict x, const long x_offset,
                                 const global STORAGE* restrict w, const long w_offset, const global STORAGE* bias,
                                 const long b_offset, global STORAGE* y, const long y_offset, local float* patch) {
  const int mult = K / groups;
  const int lq = get_local_id(0), lp = get_local_id(1);
  const int q0 = get_group_id(0) * (WGQ * QPT), p0 = get_group_id(1) * (WGP * PPT);
  const int nk = get_group_id(2);
  const int k = nk % K, n = nk / K;
  const global STORAGE* xc = x + x_offset + ((long)n * C + k / mult) * H * W;
  const global STORAGE* wk = w + w_offset + (long)k * R * S;
  (void)patch;
  float acc[PPT][QPT];
#pragma unroll
  for (int i = 0; i < PPT; ++i)
#pragma unroll
    for (int j = 0; j < QPT; ++j) acc[i][j] = 0.0f;

#if LDS_IN
  const int patch_h = (WGP * PPT - 1) * stride_h + (R - 1) * dil_h + 1;
  const int patch_w = (WGQ * QPT - 1) * stride_w + (S - 1) * dil_w + 1;
  const int ih0 = p0 * stride_h - pad_h, iw0 = q0 * stride_w - pad_w;
  const FastDiv div_pw = fastdiv_for(patch_w);
  for (int e = lp * WGQ + lq; e < patch_h * patch_w; e += WGQ * WGP) {
    const int row = fastdiv(e, div_pw), col = e - row * patch_w;
    const int ih = ih0 + row, iw = iw0 + col;
    patch[e] = ih >= 0 && ih < H && iw >= 0 && iw < W ? LOAD(xc, ih * W + iw) : 0.0f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  for (int r = 0; r < R; ++r) {
    for (int s = 0; s < S; ++s) {
      const float wv = LOAD(wk, r * S + s);
#pragma unroll
      for (int i = 0; i < PPT; ++i) {
        const int pl = lp + i * WGP;
#if !LDS_IN
        const int ih = (p0 + pl) * stride_h - pad_h + r * dil_h;
#endif
#pragma unroll
        for (int j = 0; j < QPT; ++j) {
          const int ql = lq + j * WGQ;
#if LDS_IN
          const float xv = patch[(pl * stride_h + r * dil_h) * patch_w + ql * stride_w + s * dil_w];
#else
          const int iw = (q0 + ql) * stride_w - pad_w + s * dil_w;
          const float xv = ih >= 0 && ih < H && iw >= 0 && iw < W ? LOAD(xc, ih * W + iw) : 0.0f;
#endif
          acc[i][j] = fma(wv, xv, acc[i][j]);
        }
      }
    }
  }
#if HAS_BIAS
  const float b = LOAD(bias, b_offset + k);
#endif
  global STORAGE* yk = y + y_offset + ((long)n * K + k) * P * Q;
#pragma unroll
  for (int i = 0; i < PPT; ++i) {
    const int p = p0 + lp + i * WGP;
#pragma unroll
    for (int j = 0; j < QPT; ++j) {
      const int q = q0 + lq + j * WGQ;
#if HAS_BIAS
      if (p < P && q < Q) STORE(activate(acc[i][j] + b), yk, p * Q + q);
#else
      if (p < P && q < Q) STORE(activate(acc[i][j]), yk, p * Q + q);
#endif
    }
  }
}

__attribute__((reqd_work_group_size(WGQ, WGP, 1)))
kernel void conv2d_depthwise_bwd_data(CONV_SHAPE_PARAMS, global STORAGE* dx, const long dx_offset,
                                      const global STORAGE* restrict w, const long w_offset,
                                      const global STORAGE* restrict dy, const long dy_offset) {
  const int mult = K / groups;
  const int lw = get_local_id(0), lh = get_local_id(1);
  const int w0 = get_group_id(0) * (WGQ * QPT), h0 = get_group_id(1) * (WGP * PPT);
  const int nc = get_group_id(2);
  const int c = nc % C, n = nc / C;
  const FastDiv div_sh = fastdiv_for(stride_h), div_sw = fastdiv_for(stride_w);
  float acc[PPT][QPT];
#pragma unroll
  for (int i = 0; i < PPT; ++i)
#pragma unroll
    for (int j = 0; j < QPT; ++j) acc[i][j] = 0.0f;

  for (int m = 0; m < mult; ++m) {
    const int k = c * mult + m;
    const global STORAGE* dyk = dy + dy_offset + ((long)n * K + k) * P * Q;
    const global STORAGE* wk = w + w_offset + (long)k * R * S;
    for (int r = 0; r < R; ++r) {
      for (int s = 0; s < S; ++s) {
        const float wv = LOAD(wk, r * S + s);
#pragma unroll
        for (int i = 0; i < PPT; ++i) {
          const int th = h0 + lh + i * WGP + pad_h - r * dil_h;
          const int p = fastdiv(th, div_sh);
          const bool row_ok = th >= 0 && p * stride_h == th && p < P;
#pragma unroll
          for (int j = 0; j < QPT; ++j) {
            const int tw = w0 + lw + j * WGQ + pad_w - s * dil_w;
            const int q = fastdiv(tw, div_sw);
            const bool ok = row_ok && tw >= 0 && q * stride_w == tw && q < Q;
            acc[i][j] = fma(wv, ok ? LOAD(dyk, p * Q + q) : 0.0f, acc[i][j]);
          }
        }
      }
    }
  }
  global STORAGE* dxc = dx + dx_offset + ((long)n * C + c) * H * W;
#pragma unroll
  for (int i = 0; i < PPT; ++i) {
    const int hh = h0 + lh + i * WGP;
#pragma unroll
    for (int j = 0; j < QPT; ++j) {
      const int ww = w0 + lw + j * WGQ;
      if (hh < H && ww < W) STORE(acc[i][j], dxc, hh * W + ww);
    }
  }
}

__attribute__((reqd_work_group_size(DW_WG, 1, 1)))
kernel void conv2d_depthwise_bwd_weight(CONV_SHAPE_PARAMS, const global STORAGE* restrict x, const long x_offset,
                                        global STORAGE* dw, const long dw_offset, const global STORAGE* restrict dy,
                                        const long dy_offset) {
  local float partial[DW_WG];
  const int mult = K / groups;
  const int t = get_local_id(0);
  const int tap0 = get_group_id(1) * TAPS;
  const int k = get_group_id(2);
  const int c = k / mult;
  int ih_off[TAPS], iw_off[TAPS];  // r*dil - pad, s*dil - pad of each tap
#pragma unroll
  for (int a = 0; a < TAPS; ++a) {
    const int rs = min(tap0 + a, R * S - 1);
    ih_off[a] = (rs / S) * dil_h - pad_h;
    iw_off[a] = (rs - (rs / S) * S) * dil_w - pad_w;
  }
  float acc[TAPS];
#pragma unroll
  for (int a = 0; a < TAPS; ++a) acc[a] = 0.0f;
  const int plane = P * Q;
  const FastDiv div_q = fastdiv_for(Q);
  for (int n = 0; n < N; ++n) {
    const global STORAGE* dyk = dy + dy_offset + ((long)n * K + k) * plane;
    const global STORAGE* xc = x + x_offset + ((long)n * C + c) * H * W;
    for (int pq = t; pq < plane; pq += DW_WG) {
      const int p = fastdiv(pq, div_q), q = pq - p * Q;
      const float gv = LOAD(dyk, pq);
#pragma unroll
      for (int a = 0; a < TAPS; ++a) {
        const int ih = p * stride_h + ih_off[a], iw = q * stride_w + iw_off[a];
        if (ih >= 0 && ih < H && iw >= 0 && iw < W) acc[a] = fma(gv, LOAD(xc, ih * W + iw), acc[a]);
      }
    }
  }
#pragma unroll
  for (int a = 0; a < TAPS; ++a) {
    partial[t] = acc[a];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int span = DW_WG / 2; span > 0; span /= 2) {
      if (t < span) partial[t] += partial[t + span];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0 && tap0 + a < R * S) STORE(partial[0], dw, dw_offset + (long)k * R * S + tap0 + a);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
