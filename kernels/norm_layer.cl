// layer_norm over the last n elements of each of `rows` rows, forward and backward, with affine
// gamma/beta. Forward: y = (x - mean) * rstd * gamma + beta, mean and rstd = 1/sqrt(var + eps)
// saved in fp32. Backward: dx per row, and dgamma/dbeta as per-work-group partial sums (fp32,
// [2][groups][n]) that layer_norm_param_grads adds up. Files: storage.cl, reduce_vec.cl,
// norm_layer.cl. Launch: global (ceil(rows/ROWS)*WGS), local (WGS); param grads: global
// (ceil(n/WGS)*WGS). Every sweep over a row is one loop whose ragged last vector goes element-wise.

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

#if !BACKWARD
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void layer_norm(const int rows, const int n, const float eps, const global STORAGE* restrict x, const long x_off,
                       const global STORAGE* restrict gamma, const long g_off, const global STORAGE* restrict beta,
                       const long b_off, global STORAGE* restrict y, const long y_off, global float* restrict mean_out,
                       const long m_off, global float* restrict rstd_out, const long r_off) {
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
#if WELFORD
    float cnt = 0.0f;
    floatV mv = (floatV)(0.0f), m2v = (floatV)(0.0f);
    float tn = 0.0f, tm = 0.0f, tm2 = 0.0f;  // the ragged tail, then everything
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        const floatV xv = LOADV(src, v * VW);
        cnt += 1.0f;
        const floatV delta = xv - mv;
        mv += delta * (1.0f / cnt);
        m2v += delta * (xv - mv);
      } else {
        for (int k = v * VW; k < n; ++k) welford_merge(&tn, &tm, &tm2, 1.0f, LOAD(src, k), 0.0f);
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
        sv += LOADV(src, v * VW);
      } else {
        for (int k = v * VW; k < n; ++k) sum += LOAD(src, k);
      }
    }
    const float mean = group_sum(sum + sum_lanes(sv), s1, lid) / n;
    floatV qv = (floatV)(0.0f);
    float sq = 0.0f;
    for (int v = lid; v * VW < n; v += WGS) {
      if (v < nvec) {
        const floatV d = LOADV(src, v * VW) - mean;
        qv += d * d;
      } else {
        for (int k = v * VW; k < n; ++k) {
          const float d = LOAD(src, k) - mean;
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
        STOREV((LOADV(src, k) - mean) * rstd * LOADV(g, k) + LOADV(b, k), dst, k);
      } else {
        for (int k = v * VW; k < n; ++k) STORE((LOAD(src, k) - mean) * rstd * LOAD(g, k) + LOAD(b, k), dst, k);
      }
    }
    if (lid == 0) {
      mean_out[m_off + row] = mean;
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
