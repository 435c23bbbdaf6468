// Direct backward-data convolution (gradient of the input): each work-item computes a register tile
// of CPT input channels x HPT rows x WPT columns of dx. The pixels are split into stride_h x
// stride_w phases (h mod stride, w mod stride), one per work-group: within a phase the filter taps
// that reach an output position are the same for every pixel, so the others are skipped whole and
// p = h' + (phase + pad - r*dil) / stride needs no per-pixel division. Output channels are consumed
// KPS at a time, their weights optionally staged in local memory.
// Launch: global (ceil(ceil(W/sw)/(WGW*WPT))*WGW, ceil(ceil(H/sh)/(WGH*HPT))*WGH,
// N*groups*sh*sw*ceil(Cg/(WGC*CPT))*WGC), local (WGW, WGH, WGC); the local weight buffer is sized
// by the host (4 bytes when unused).

// ---- Tunables ----
#ifndef CPT
#define CPT 2  // input channels per work-item (register tile)
#endif
#ifndef HPT
#define HPT 1  // input rows per work-item
#endif
#ifndef WPT
#define WPT 2  // input columns per work-item
#endif
#ifndef WGW
#define WGW 16  // work-items along the input columns (of one phase)
#endif
#ifndef WGH
#define WGH 4  // work-items along the input rows (of one phase)
#endif
#ifndef WGC
#define WGC 1  // work-items along the input channels
#endif
#ifndef KPS
#define KPS 4  // output channels per step (one local-memory fill of weights when staging)
#endif
#ifndef LDS_W
#define LDS_W 0  // 1: stage the weights of a step in local memory
#endif

#define NT (WGW * WGH * WGC)
#define TILE_C (WGC * CPT)

__attribute__((reqd_work_group_size(WGW, WGH, WGC)))
kernel void conv2d_direct_bwd_data(CONV_SHAPE_PARAMS, global STORAGE* dx, const long dx_offset,
                                   const global STORAGE* restrict w, const long w_offset,
                                   const global STORAGE* restrict dy, const long dy_offset, local float* wtile) {
  const int Cg = C / groups, Kg = K / groups;
  const int lw = get_local_id(0), lh = get_local_id(1), lc = get_local_id(2);
  const int tid = (lc * WGH + lh) * WGW + lw;
  const int w0 = get_group_id(0) * (WGW * WPT);  // in phase coordinates: w = phase_w + stride_w * w'
  const int h0 = get_group_id(1) * (WGH * HPT);
  const int c_blocks = (Cg + TILE_C - 1) / TILE_C;
  int z = get_group_id(2);
  const int c0 = (z % c_blocks) * TILE_C;
  z /= c_blocks;
  const int phase = z % (stride_h * stride_w);
  z /= stride_h * stride_w;
  const int g = z % groups;
  const int n = z / groups;
  const int phase_h = phase / stride_w, phase_w = phase - (phase / stride_w) * stride_w;
  const global STORAGE* dyg = dy + dy_offset + ((long)n * K + (long)g * Kg) * P * Q;
  const global STORAGE* wg = w + w_offset + (long)g * Kg * Cg * R * S;
  (void)wtile;

  float acc[CPT][HPT][WPT];
#pragma unroll
  for (int a = 0; a < CPT; ++a)
#pragma unroll
    for (int i = 0; i < HPT; ++i)
#pragma unroll
      for (int j = 0; j < WPT; ++j) acc[a][i][j] = 0.0f;

  int cidx[CPT];
#pragma unroll
  for (int a = 0; a < CPT; ++a) cidx[a] = min(c0 + lc + a * WGC, Cg - 1);

  for (int k0 = 0; k0 < Kg; k0 += KPS) {
#if LDS_W
    barrier(CLK_LOCAL_MEM_FENCE);
    // wtile[cl][kk][rs] = w[k0 + kk][c0 + cl][rs]
    for (int e = tid; e < TILE_C * KPS * R * S; e += NT) {
      const int cl = e / (KPS * R * S);
      const int rest = e - cl * (KPS * R * S);
      const int kk = rest / (R * S);
      const int rs = rest - kk * (R * S);
      const int cc = min(c0 + cl, Cg - 1);
      wtile[e] = k0 + kk < Kg ? LOAD(wg, ((long)(k0 + kk) * Cg + cc) * R * S + rs) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const int ksteps = min(KPS, Kg - k0);
    for (int kk = 0; kk < ksteps; ++kk) {
      const global STORAGE* dyk = dyg + (long)(k0 + kk) * P * Q;
      for (int r = 0; r < R; ++r) {
        const int th = phase_h + pad_h - r * dil_h;
        if (th % stride_h != 0) continue;  // no output row reaches this phase through tap r
        const int off_p = th / stride_h;
        for (int s = 0; s < S; ++s) {
          const int tw = phase_w + pad_w - s * dil_w;
          if (tw % stride_w != 0) continue;
          const int off_q = tw / stride_w;
          float wv[CPT];
#pragma unroll
          for (int a = 0; a < CPT; ++a) {
#if LDS_W
            wv[a] = wtile[((lc + a * WGC) * KPS + kk) * R * S + r * S + s];
#else
            wv[a] = LOAD(wg, (((long)(k0 + kk) * Cg + cidx[a]) * R + r) * S + s);
#endif
          }
#pragma unroll
          for (int i = 0; i < HPT; ++i) {
            const int p = h0 + lh + i * WGH + off_p;
            const bool row_ok = p >= 0 && p < P;
#pragma unroll
            for (int j = 0; j < WPT; ++j) {
              const int q = w0 + lw + j * WGW + off_q;
              const bool ok = row_ok && q >= 0 && q < Q;
              const float grad = LOAD(dyk, ok ? p * Q + q : 0);
#pragma unroll
              for (int a = 0; a < CPT; ++a) acc[a][i][j] = fma(wv[a], ok ? grad : 0.0f, acc[a][i][j]);
            }
          }
        }
      }
    }
  }

#pragma unroll
  for (int a = 0; a < CPT; ++a) {
    const int cc = c0 + lc + a * WGC;
    if (cc >= Cg) continue;
    global STORAGE* dxc = dx + dx_offset + ((long)n * C + (long)g * Cg + cc) * H * W;
#pragma unroll
    for (int i = 0; i < HPT; ++i) {
      const int hh = phase_h + stride_h * (h0 + lh + i * WGH);
#pragma unroll
      for (int j = 0; j < WPT; ++j) {
        const int ww = phase_w + stride_w * (w0 + lw + j * WGW);
        if (hh < H && ww < W) STORE(acc[a][i][j], dxc, hh * W + ww);
      }
    }
  }
}
