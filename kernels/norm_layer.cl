// layer_norm over the last n elements of each of `rows` rows, forward and backward, with affine
// gamma/beta. Forward: y = (x - mean) * rstd * gamma + beta, mean and rstd = 1/sqrt(var + eps)
// saved in fp32; the statistics are of x - x0, x0 the row's first element, so a row whose mean is
// far from 0 next to its spread (near 1000 with unit noise) loses no digits of y to the mean, which
// y takes from the same shifted values (x0 + mean is only saved). Backward: dx per row, and
// dgamma/dbeta as per-work-group partial sums (fp32, [2][groups][n]) that layer_norm_param_grads
// adds up. The forward pass may read x through an elementwise prologue (prologue.cl). Files:
// storage.cl, reduce_vec.cl, elementwise_ops.cl, prologue.cl, norm_layer.cl. Launch: global
// (ceil(rows/ROWS)*WGS), local (WGS); param grads: global (ceil(n/WGS)*WGS). Every sweep over a row
// is one loop whose ragged last vector goes element-wise.
// WPR > 0 (forward) instead holds each row in registers, WGS / WPR rows per work-group at a time:
// global (ceil(rows / (ROWS * WGS / WPR)) * WGS).

// ---- Problem (set by the host, not tuned) ----
#ifndef BACKWARD
#define BACKWARD 0  // 0: layer_norm; 1: layer_norm_backward and layer_norm_param_grads
#endif

// ---- Tunables (and WGS, VW of reduce_vec.cl) ----
#ifndef ROWS
#define ROWS 1  // rows per work-group, in turn (backward: rows per partial sum of dgamma/dbeta)
#endif
#ifndef WELFORD
#define WELFORD 0  // forward statistics: 1 Welford in one read; 0 two reads (mean, then squared deviations)
#endif
#ifndef WPR
#define WPR 0  // forward: > 0 WPR work-items hold a row in registers, WGS / WPR rows at a time; 0: WGS sweep one row
#endif

// ---- Set by the host for WPR > 0 ----
#ifndef NV
#define NV 1  // VW-vectors per work-item: ceil(n / (WPR * VW))
#endif
#ifndef ALIGNED
#define ALIGNED 0  // 1: n and every offset are multiples of VW, so whole vectors may be loaded as such
#endif

// LOADA / STOREA: VW elements at element e of a row when ALIGNED: one 8-32 byte access where
// LOADV's vloadn may only assume element alignment (a GPU then issues VW narrow loads).
#if ALIGNED && VW > 1 && DTYPE == 0
#define LOADA(p, e) (*(const global floatV*)((p) + (e)))
#define STOREA(v, p, e) (*(global floatV*)((p) + (e)) = (v))
#elif ALIGNED && VW > 1 && DTYPE == 1
#define LOADA(p, e) CAT(vloada_half, VW)(0, (p) + (e))
#define STOREA(v, p, e) CAT(CAT(vstorea_half, VW), _rte)((v), 0, (p) + (e))
#elif ALIGNED && VW > 1 && DTYPE == 2
#define LOADA(p, e) AS_FLOATV(CONVERT_UINTV(*(const global ushortV*)((p) + (e))) << 16)
#define STOREA(v, p, e) (*(global ushortV*)((p) + (e)) = bf16_roundv(v))
#else
#define LOADA(p, e) LOADV(p, e)
#define STOREA(v, p, e) STOREV(v, p, e)
#endif

// x's element k of the current row (X_LOAD), or the VW elements from k (X_LOADV, and X_LOADA where
// whole-vector accesses are allowed), through the forward pass's elementwise prologue (prologue.cl):
// layer_norm(x + residual) reads both and never stores the sum. row_base: the row's first element.
#define X_LOAD(k) PROLOGUE_S(LOAD(src, k), row_base + (k))
#define X_LOADV(k) PROLOGUE_V(LOADV(src, k), row_base + (k))
#define X_LOADA(k) PROLOGUE_V(LOADA(src, k), row_base + (k))

#if !BACKWARD && WPR > 0
// ---- Short rows (a GPU's layer_norm over 768-4096): a row in registers. ----
// Work-item `lane` of a row's WPR holds vectors lane, lane + WPR, ... (adjacent work-items read
// adjacent vectors: coalesced), so the row is read once and written once. Each row sum is one
// barrier: every work-item adds its row's WPR partials from local memory itself (broadcast reads)
// instead of a log2(WGS)-barrier tree. Two arrays, so that the second sum's writes cannot race
// the first sum's reads; the next row's writes come after this row's second barrier.
// The sum of a row's WPR partials, 16 bytes at a time where WPR allows (p is then 16-byte aligned:
// a multiple of WPR floats into a 16-byte aligned array). Every work-item of the row adds in the
// same order, so all of them get the same mean and rstd.
static inline float row_sum(const local float* p) {
#if WPR % 4 == 0
  float4 a = (float4)(0.0f);
#pragma unroll
  for (int i = 0; i < WPR; i += 4) a += *(const local float4*)(p + i);
  return (a.x + a.y) + (a.z + a.w);
#else
  float a = 0.0f;
#pragma unroll
  for (int i = 0; i < WPR; ++i) a += p[i];
  return a;
#endif
}

__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void layer_norm(const int rows, const int n, const float eps, const global STORAGE* restrict x, const long x_off,
                       const global STORAGE* restrict gamma, const long g_off, const global STORAGE* restrict beta,
                       const long b_off, global STORAGE* restrict y, const long y_off, global float* restrict mean_out,
                       const long m_off, global float* restrict rstd_out, const long r_off PROLOGUE_PARAMS) {
  const int lid = get_local_id(0);
  const int lane = lid % WPR;
  const int first = lid - lane;  // this row's partials: part[first .. first + WPR)
  local float part1[WGS] __attribute__((aligned(16)));
  local float part2[WGS] __attribute__((aligned(16)));
  const global STORAGE* g = gamma + g_off;
  const global STORAGE* b = beta + b_off;
  for (int r = 0; r < ROWS; ++r) {  // the same trip count for the whole group: barriers inside
    const int row = (get_group_id(0) * ROWS + r) * (WGS / WPR) + lid / WPR;
    const bool live = row < rows;
    const global STORAGE* src = x + x_off + (long)row * n;
    const long row_base = (long)row * n;
    const float x0 = live ? X_LOAD(0) : 0.0f;  // xv holds x - x0
    floatV xv[NV];
    floatV sv = (floatV)(0.0f);
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int k = (lane + j * WPR) * VW;
      if (live && k + VW <= n) {
        xv[j] = X_LOADA(k) - x0;
      } else {  // the ragged last vector, or past the row: zeros
        float t[VW];
#pragma unroll
        for (int l = 0; l < VW; ++l) t[l] = live && k + l < n ? X_LOAD(k + l) - x0 : 0.0f;
        xv[j] = LOADV_F32(t, 0);
      }
      sv += xv[j];
    }
    part1[lid] = sum_lanes(sv);
    barrier(CLK_LOCAL_MEM_FENCE);
    const float mean = row_sum(part1 + first) / n;
    floatV qv = (floatV)(0.0f);
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int k = (lane + j * WPR) * VW;
      // Padding lanes hold 0, not the mean: they must not add mean^2.
      const floatV d = k + VW <= n ? xv[j] - mean : select((floatV)(0.0f), xv[j] - mean, (k + LANE_IDS) < n);
      qv += d * d;
    }
    part2[lid] = sum_lanes(qv);
    barrier(CLK_LOCAL_MEM_FENCE);
    const float rstd = 1.0f / sqrt(row_sum(part2 + first) / n + eps);
    if (live) {
      global STORAGE* dst = y + y_off + (long)row * n;
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const int k = (lane + j * WPR) * VW;
        if (k + VW <= n) {
          STOREA((xv[j] - mean) * rstd * LOADA(g, k) + LOADA(b, k), dst, k);
        } else {
          float t[VW];
          STOREV_F32(xv[j], t, 0);
          for (int l = 0; l < VW && k + l < n; ++l)
            STORE((t[l] - mean) * rstd * LOAD(g, k + l) + LOAD(b, k + l), dst, k + l);
        }
      }
      if (lane == 0) {
        mean_out[m_off + row] = x0 + mean;
        rstd_out[r_off + row] = rstd;
      }
    }
  }
}

#elif !BACKWARD
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void layer_norm(const int rows, const int n, const float eps, const global STORAGE* restrict x, const long x_off,
                       const global STORAGE* restrict gamma, const long g_off, const global STORAGE* restrict beta,
                       const long b_off, global STORAGE* restrict y, const long y_off, global float* restrict mean_out,
                       const long m_off, global float* restrict rstd_out, const long r_off PROLOGUE_PARAMS) {
  const int lid = get_local_id(0);
  const int row0 = get_group_id(0) * ROWS;
  const int nvec = n / VW;
  local float s1[WGS], s2[WGS], s3[WGS];
  const global STORAGE* g = gamma + g_off;
  const global STORAGE* b = beta + b_off;
  const int count = min(ROWS, rows - row0);  // the same for the whole group: barriers inside
  for (int r = 0; r < count; ++r) {
    const int row = row0 + r;
    const global STORAGE* src = x + x_off + (long)row * n;
    global STORAGE* dst = y + y_off + (long)row * n;
    const long row_base = (long)row * n;
    const float x0 = X_LOAD(0);  // mean is of x - x0
#if WELFORD
    float cnt = 0.0f;
    floatV mv = (floatV)(0.0f), m2v = (floatV)(0.0f);
    float tn = 0.0f, tm = 0.0f, tm2 = 0.0f;  // the ragged tail, then everything
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        const floatV xv = X_LOADV(v * VW) - x0;
        cnt += 1.0f;
        const floatV delta = xv - mv;
        mv += delta * (1.0f / cnt);
        m2v += delta * (xv - mv);
      } else {
        for (int k = v * VW; k < n; ++k) welford_merge(&tn, &tm, &tm2, 1.0f, X_LOAD(k) - x0, 0.0f);
      }
    }
    {
      float lm[VW], lm2[VW];
      SPILL_LANES(mv, lm);
      SPILL_LANES(m2v, lm2);
#pragma unroll
      for (int l = 0; l < VW; ++l) welford_merge(&tn, &tm, &tm2, cnt, lm[l], lm2[l]);
    }
    group_welford(&tn, &tm, &tm2, s1, s2, s3, lid);
    const float mean = tm;
    const float var = tm2 / n;
#else
    floatV sv = (floatV)(0.0f);
    float sum = 0.0f;
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        sv += X_LOADV(v * VW) - x0;
      } else {
        for (int k = v * VW; k < n; ++k) sum += X_LOAD(k) - x0;
      }
    }
    const float mean = group_sum(sum + sum_lanes(sv), s1, lid) / n;
    floatV qv = (floatV)(0.0f);
    float sq = 0.0f;
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        const floatV d = (X_LOADV(v * VW) - x0) - mean;
        qv += d * d;
      } else {
        for (int k = v * VW; k < n; ++k) {
          const float d = (X_LOAD(k) - x0) - mean;
          sq += d * d;
        }
      }
    }
    const float var = group_sum(sq + sum_lanes(qv), s2, lid) / n;
#endif
    const float rstd = 1.0f / sqrt(var + eps);
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        const int k = v * VW;
        STOREV(((X_LOADV(k) - x0) - mean) * rstd * LOADV(g, k) + LOADV(b, k), dst, k);
      } else {
        for (int k = v * VW; k < n; ++k)
          STORE(((X_LOAD(k) - x0) - mean) * rstd * LOAD(g, k) + LOAD(b, k), dst, k);
      }
    }
    if (lid == 0) {
      mean_out[m_off + row] = x0 + mean;
      rstd_out[r_off + row] = rstd;
    }
  }
}

#else
// dx = rstd * (g - (sum(g) + xhat * sum(g * xhat)) / n) with g = dy * gamma, xhat = (x - mean) * rstd.
// Work-group `grp` adds dy * xhat and dy of its rows into partial[grp][j] and partial[groups + grp][j]:
// every column has one owner work-item, so no two work-items touch the same partial.
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void layer_norm_backward(const int rows, const int n, const global STORAGE* restrict dy, const long dy_off,
                                const global STORAGE* restrict x, const long x_off, const global float* restrict mean,
                                const long m_off, const global float* restrict rstd, const long r_off,
                                const global STORAGE* restrict gamma, const long g_off, global STORAGE* restrict dx,
                                const long dx_off, global float* restrict partial) {
  const int lid = get_local_id(0);
  const int grp = get_group_id(0);
  const int groups = get_num_groups(0);
  const int row0 = grp * ROWS;
  const int nvec = n / VW;
  local float s1[WGS], s2[WGS];
  const global STORAGE* gm = gamma + g_off;
  global float* pg = partial + (long)grp * n;
  global float* pb = partial + (long)(groups + grp) * n;
  const int count = min(ROWS, rows - row0);
  for (int r = 0; r < count; ++r) {
    const int row = row0 + r;
    const global STORAGE* d = dy + dy_off + (long)row * n;
    const global STORAGE* xs = x + x_off + (long)row * n;
    global STORAGE* out = dx + dx_off + (long)row * n;
    const float mu = mean[m_off + row], rs = rstd[r_off + row];
    floatV av = (floatV)(0.0f), bv = (floatV)(0.0f);
    float a = 0.0f, b = 0.0f;  // sum(g * xhat), sum(g)
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        const int k = v * VW;
        const floatV gv = LOADV(d, k) * LOADV(gm, k);
        av += gv * ((LOADV(xs, k) - mu) * rs);
        bv += gv;
      } else {
        for (int k = v * VW; k < n; ++k) {
          const float gk = LOAD(d, k) * LOAD(gm, k);
          a += gk * ((LOAD(xs, k) - mu) * rs);
          b += gk;
        }
      }
    }
    a += sum_lanes(av);
    b += sum_lanes(bv);
    group_sum2(&a, &b, s1, s2, lid);
    const float inv_n = 1.0f / n;
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        const int k = v * VW;
        const floatV dv = LOADV(d, k);
        const floatV xhat = (LOADV(xs, k) - mu) * rs;
        STOREV(rs * (dv * LOADV(gm, k) - (b + xhat * a) * inv_n), out, k);
        STOREV_F32(r == 0 ? dv * xhat : LOADV_F32(pg, k) + dv * xhat, pg, k);
        STOREV_F32(r == 0 ? dv : LOADV_F32(pb, k) + dv, pb, k);
      } else {
        for (int k = v * VW; k < n; ++k) {
          const float dk = LOAD(d, k);
          const float xhat = (LOAD(xs, k) - mu) * rs;
          STORE(rs * (dk * LOAD(gm, k) - (b + xhat * a) * inv_n), out, k);
          pg[k] = (r == 0 ? 0.0f : pg[k]) + dk * xhat;
          pb[k] = (r == 0 ? 0.0f : pb[k]) + dk;
        }
      }
    }
  }
}

// dgamma[j] = sum over groups of partial[grp][j]; dbeta[j] likewise from partial[groups + grp][j].
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void layer_norm_param_grads(const int groups, const int n, const global float* restrict partial,
                                   global STORAGE* restrict dgamma, const long dg_off, global STORAGE* restrict dbeta,
                                   const long db_off) {
  const int j = get_global_id(0);
  if (j >= n) return;
  float sg = 0.0f, sb = 0.0f;
  for (int grp = 0; grp < groups; ++grp) {
    sg += partial[(long)grp * n + j];
    sb += partial[(long)(groups + grp) * n + j];
  }
  STORE(sg, dgamma, dg_off + j);
  STORE(sb, dbeta, db_off + j);
}
#endif
