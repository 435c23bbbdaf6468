// Direct backward-weight convolution (gradient of the weight): each work-item accumulates a
// register tile of KPT output channels x CPT input channels at one filter tap (r, s) over a share
// of the N*P*Q output positions; the RED work-items of a tile combine their sums in local memory.
// With SPLIT > 1 the images are split into SPLIT chunks, one work-group each, and chunk j writes its
// partial sums to plane j of dw (a workspace of SPLIT weight planes, summed in order by
// conv2d_sum_images; fp32 partials, whatever the storage type): a first layer has a few hundred
// weights and millions of positions.
// Launch: global (ceil(Cg/(WGC*CPT))*WGC, ceil(Kg/(WGK*KPT))*WGK, groups*R*S*SPLIT*RED),
// local (WGC, WGK, RED).

// ---- Tunables ----
#ifndef KPT
#define KPT 2  // output channels per work-item (register tile)
#endif
#ifndef CPT
#define CPT 2  // input channels per work-item
#endif
#ifndef WGC
#define WGC 8  // work-items along the input channels
#endif
#ifndef WGK
#define WGK 8  // work-items along the output channels
#endif
#ifndef RED
#define RED 1  // work-items splitting the reduction over output positions (a power of two)
#endif
#ifndef SPLIT
#define SPLIT 1  // work-groups splitting the images
#endif

__attribute__((reqd_work_group_size(WGC, WGK, RED)))
#if SPLIT > 1
#define DW_TYPE float  // the fp32 partial planes
#define STORE_DW(v, p, i) ((p)[i] = (v))
#else
#define DW_TYPE STORAGE
#define STORE_DW(v, p, i) STORE(v, p, i)
#endif

kernel void conv2d_direct_bwd_weight(CONV_SHAPE_PARAMS, const global STORAGE* restrict x, const long x_offset,
                                     global DW_TYPE* dw, const long dw_offset, const global STORAGE* restrict dy,
                                     const long dy_offset) {
  const int Cg = C / groups, Kg = K / groups;
  const int lc = get_local_id(0), lk = get_local_id(1), lr = get_local_id(2);
  const int c0 = get_group_id(0) * (WGC * CPT);
  const int k0 = get_group_id(1) * (WGK * KPT);
  int z = get_group_id(2);
  const int chunk = z % SPLIT;
  z /= SPLIT;
  const int rs = z % (R * S);
  const int g = z / (R * S);
  const int r = rs / S, s = rs - (rs / S) * S;

  int cidx[CPT], kidx[KPT];
#pragma unroll
  for (int b = 0; b < CPT; ++b) cidx[b] = g * Cg + min(c0 + lc + b * WGC, Cg - 1);
#pragma unroll
  for (int a = 0; a < KPT; ++a) kidx[a] = g * Kg + min(k0 + lk + a * WGK, Kg - 1);

  float acc[KPT][CPT];
#pragma unroll
  for (int a = 0; a < KPT; ++a)
#pragma unroll
    for (int b = 0; b < CPT; ++b) acc[a][b] = 0.0f;

  const int plane = P * Q;
  const FastDiv div_q = fastdiv_for(Q);
  const int per_chunk = (N + SPLIT - 1) / SPLIT;
  const int n_end = min(N, (chunk + 1) * per_chunk);
  for (int n = chunk * per_chunk; n < n_end; ++n) {
    const global STORAGE* xn = x + x_offset + (long)n * C * H * W;
    const global STORAGE* dyn = dy + dy_offset + (long)n * K * plane;
    for (int pq = lr; pq < plane; pq += RED) {
      const int p = fastdiv(pq, div_q), q = pq - p * Q;
      const int ih = p * stride_h - pad_h + r * dil_h;
      const int iw = q * stride_w - pad_w + s * dil_w;
      if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
      float xv[CPT];
#pragma unroll
      for (int b = 0; b < CPT; ++b) xv[b] = LOAD(xn, ((long)cidx[b] * H + ih) * W + iw);
#pragma unroll
      for (int a = 0; a < KPT; ++a) {
        const float gv = LOAD(dyn, (long)kidx[a] * plane + pq);
#pragma unroll
        for (int b = 0; b < CPT; ++b) acc[a][b] = fma(gv, xv[b], acc[a][b]);
      }
    }
  }

#if RED > 1
  // Tree reduction over the RED work-items of each (c, k) tile, one accumulator at a time.
  local float partial[WGC * WGK * RED];
  const int slot = (lk * WGC + lc) * RED;
#pragma unroll
  for (int a = 0; a < KPT; ++a) {
#pragma unroll
    for (int b = 0; b < CPT; ++b) {
      partial[slot + lr] = acc[a][b];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int span = RED / 2; span > 0; span /= 2) {
        if (lr < span) partial[slot + lr] += partial[slot + lr + span];
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      acc[a][b] = partial[slot];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
#endif
  if (lr != 0) return;
#pragma unroll
  for (int a = 0; a < KPT; ++a) {
    const int kk = k0 + lk + a * WGK;
#pragma unroll
    for (int b = 0; b < CPT; ++b) {
      const int cc = c0 + lc + b * WGC;
      if (kk < Kg && cc < Cg)
        STORE_DW(acc[a][b], dw, dw_offset + (long)chunk * K * Cg * R * S + (((long)(g * Kg + kk) * Cg + cc) * R + r) * S + s);
    }
  }
}
