// Direct forward convolution: each work-item computes a register tile of KPT output channels x
// PPT rows x QPT columns; a work-group steps through the input channels CPS at a time, optionally
// staging the input patch and the weights it needs in local memory. Any shape, groups included.
// Launch: global (ceil(Q/(WGQ*QPT))*WGQ, ceil(P/(WGP*PPT))*WGP, N*groups*ceil(Kg/(WGK*KPT))*WGK),
// local (WGQ, WGP, WGK); local buffers sized by the host (patch, weights) or 4 bytes when unused.

// ---- Tunables ----
#ifndef KPT
#define KPT 2  // output channels per work-item (register tile)
#endif
#ifndef PPT
#define PPT 1  // output rows per work-item
#endif
#ifndef QPT
#define QPT 2  // output columns per work-item
#endif
#ifndef WGQ
#define WGQ 16  // work-items along the output columns
#endif
#ifndef WGP
#define WGP 4  // work-items along the output rows
#endif
#ifndef WGK
#define WGK 1  // work-items along the output channels
#endif
#ifndef CPS
#define CPS 4  // input channels per step (one local-memory fill when staging)
#endif
#ifndef LDS_IN
#define LDS_IN 0  // 1: stage the input patch of a step in local memory
#endif
#ifndef LDS_W
#define LDS_W 0  // 1: stage the weights of a step in local memory
#endif

#define NT (WGQ * WGP * WGK)
#define TILE_K (WGK * KPT)

__attribute__((reqd_work_group_size(WGQ, WGP, WGK)))
kernel void conv2d_direct_fwd(CONV_SHAPE_PARAMS, const global STORAGE* restrict x, const long x_offset,
                              const global STORAGE* restrict w, const long w_offset, const global STORAGE* bias,
                              const long b_offset, global STORAGE* y, const long y_offset, local float* patch,
                              local float* wtile) {
  const int Cg = C / groups, Kg = K / groups;
  const int lq = get_local_id(0), lp = get_local_id(1), lk = get_local_id(2);
  const int tid = (lk * WGP + lp) * WGQ + lq;
  const int q0 = get_group_id(0) * (WGQ * QPT);
  const int p0 = get_group_id(1) * (WGP * PPT);
  const int k_blocks = (Kg + TILE_K - 1) / TILE_K;
  int z = get_group_id(2);
  const int k0 = (z % k_blocks) * TILE_K;
  z /= k_blocks;
  const int g = z % groups;
  const int n = z / groups;
  const global STORAGE* xg = x + x_offset + ((long)n * C + (long)g * Cg) * H * W;
  const global STORAGE* wg = w + w_offset + (long)g * Kg * Cg * R * S;
  (void)patch;
  (void)wtile;

  float acc[KPT][PPT][QPT];
#pragma unroll
  for (int a = 0; a < KPT; ++a)
#pragma unroll
    for (int i = 0; i < PPT; ++i)
#pragma unroll
      for (int j = 0; j < QPT; ++j) acc[a][i][j] = 0.0f;

  // This work-item's output channels (clamped: computed, never stored past Kg).
  int kidx[KPT];
#pragma unroll
  for (int a = 0; a < KPT; ++a) kidx[a] = min(k0 + lk + a * WGK, Kg - 1);

#if LDS_IN
  // The patch of input rows/columns that the work-group's outputs read, zero outside the image.
  const int patch_h = (WGP * PPT - 1) * stride_h + (R - 1) * dil_h + 1;
  const int patch_w = (WGQ * QPT - 1) * stride_w + (S - 1) * dil_w + 1;
  const int ih0 = p0 * stride_h - pad_h, iw0 = q0 * stride_w - pad_w;
  const FastDiv div_plane = fastdiv_for(patch_h * patch_w), div_pw = fastdiv_for(patch_w);
#endif
#if LDS_W
  const FastDiv div_crs = fastdiv_for(CPS * R * S), div_rs = fastdiv_for(R * S);
#endif

  for (int c0 = 0; c0 < Cg; c0 += CPS) {
#if LDS_IN || LDS_W
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous step's reads are done
#endif
#if LDS_IN
    for (int e = tid; e < CPS * patch_h * patch_w; e += NT) {
      const int cc = fastdiv(e, div_plane);
      const int rem = e - cc * (patch_h * patch_w);
      const int row = fastdiv(rem, div_pw), col = rem - row * patch_w;
      const int ih = ih0 + row, iw = iw0 + col;
      const bool inside = c0 + cc < Cg && ih >= 0 && ih < H && iw >= 0 && iw < W;
      patch[e] = inside ? LOAD(xg, ((long)(c0 + cc) * H + ih) * W + iw) : 0.0f;
    }
#endif
#if LDS_W
    for (int e = tid; e < TILE_K * CPS * R * S; e += NT) {
      const int kl = fastdiv(e, div_crs);
      const int rest = e - kl * (CPS * R * S);  // cc * R * S + rs
      const int cc = fastdiv(rest, div_rs);
      const int kk = min(k0 + kl, Kg - 1);
      wtile[e] = c0 + cc < Cg ? LOAD(wg, ((long)kk * Cg + c0) * R * S + rest) : 0.0f;
    }
#endif
#if LDS_IN || LDS_W
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const int csteps = min(CPS, Cg - c0);
    for (int cc = 0; cc < csteps; ++cc) {
      for (int r = 0; r < R; ++r) {
        for (int s = 0; s < S; ++s) {
          float wv[KPT];
#pragma unroll
          for (int a = 0; a < KPT; ++a) {
#if LDS_W
            wv[a] = wtile[((lk + a * WGK) * CPS + cc) * R * S + r * S + s];
#else
            wv[a] = LOAD(wg, (((long)kidx[a] * Cg + c0 + cc) * R + r) * S + s);
#endif
          }
#pragma unroll
          for (int i = 0; i < PPT; ++i) {
            const int pl = lp + i * WGP;  // output row within the tile
#if !LDS_IN
            const int ih = (p0 + pl) * stride_h - pad_h + r * dil_h;
            const bool row_ok = ih >= 0 && ih < H;
#endif
#pragma unroll
            for (int j = 0; j < QPT; ++j) {
              const int ql = lq + j * WGQ;
#if LDS_IN
              const float xv = patch[(cc * patch_h + pl * stride_h + r * dil_h) * patch_w + ql * stride_w + s * dil_w];
#else
              const int iw = (q0 + ql) * stride_w - pad_w + s * dil_w;
              const float xv = row_ok && iw >= 0 && iw < W ? LOAD(xg, ((long)(c0 + cc) * H + ih) * W + iw) : 0.0f;
#endif
#pragma unroll
              for (int a = 0; a < KPT; ++a) acc[a][i][j] = fma(wv[a], xv, acc[a][i][j]);
            }
          }
        }
      }
    }
  }

#pragma unroll
  for (int a = 0; a < KPT; ++a) {
    const int kk = k0 + lk + a * WGK;
    if (kk >= Kg) continue;
    const int kout = g * Kg + kk;
#if HAS_BIAS
    const float b = LOAD(bias, b_offset + kout);
#endif
    global STORAGE* yk = y + y_offset + ((long)n * K + kout) * P * Q;
#pragma unroll
    for (int i = 0; i < PPT; ++i) {
      const int p = p0 + lp + i * WGP;
#pragma unroll
      for (int j = 0; j < QPT; ++j) {
        const int q = q0 + lq + j * WGQ;
        if (p < P && q < Q) {
#if HAS_BIAS
          STORE(activate(acc[a][i][j] + b), yk, p * Q + q);
#else
          STORE(activate(acc[a][i][j]), yk, p * Q + q);
#endif
        }
      }
    }
  }
}
