// batch_norm in training mode over x[batch][channels][plane] (NCHW with plane = H*W), forward and
// backward, with affine gamma/beta. Statistics of channel c run over `batch` planes of `plane`
// contiguous elements; SPLIT > 1 splits the planes over work-groups that write fp32 partials
// ([channels][SPLIT][3] Welford, [channels][SPLIT][2] sums) for a combine kernel. FUSED = 1 lets
// the statistics work-group normalise its channel too (a second, likely cached read); otherwise
// an apply kernel does it, ROWS planes per work-group. Files: storage.cl, reduce_vec.cl,
// elementwise_ops.cl, prologue.cl (unused here), norm_batch.cl. Launch: stats global (channels*SPLIT*WGS); combine global (ceil(channels/WGS)*WGS);
// apply global (ceil(batch*channels/ROWS)*WGS); local (WGS) throughout.
//
// Forward: mean, biased var -> save_mean, save_invstd = 1/sqrt(var + eps); running_mean and
// running_var (unbiased) move by `momentum`; y = (x - mean) * invstd * gamma + beta.
// Backward: dbeta = sum(dy), dgamma = sum(dy * xhat), dx = gamma * invstd * (dy - dbeta/M - xhat * dgamma/M)
// with M = batch * plane; the fp32 sums also go to sums[channels][2] for the apply kernel.

// ---- Problem (set by the host, not tuned) ----
#ifndef BACKWARD
#define BACKWARD 0  // 0: forward kernels; 1: backward kernels
#endif

// ---- Tunables (and WGS, VW of reduce_vec.cl) ----
#ifndef SPLIT
#define SPLIT 1  // work-groups per channel for the statistics (> 1: partials and a combine kernel)
#endif
#ifndef FUSED
#define FUSED 0  // 1: the statistics work-group also writes the channel's output (needs SPLIT 1)
#endif
#ifndef ROWS
#define ROWS 1  // planes per work-group of the apply kernel
#endif
#ifndef WELFORD
#define WELFORD 1  // forward statistics: 1 Welford in one read; 0 two reads (needs SPLIT 1)
#endif

// The planes [n0, n1) of channel c that statistics work-group `split` covers.
#define CHANNEL_SPLIT(batch, split, n0, n1)         \
  const int chunk_ = ((batch) + SPLIT - 1) / SPLIT;  \
  const int n0 = min((batch), (split) * chunk_);     \
  const int n1 = min((batch), n0 + chunk_);

// Runs VEC (statements on the VW elements from offset k) or ONE (on element k) over a plane of
// `plane` elements, work-items striding by WGS vectors; the ragged last vector goes element-wise
// (one loop per sweep: see softmax.cl on PoCL).
#define FOR_PLANE(plane, lid, VEC, ONE)                    \
  for (int v_ = (lid); v_ * VW < (plane); v_ += WGS) {     \
    if (v_ < (plane) / VW) {                               \
      const int k = v_ * VW;                               \
      VEC;                                                 \
    } else {                                               \
      for (int k = v_ * VW; k < (plane); ++k) {            \
        ONE;                                               \
      }                                                    \
    }                                                      \
  }

#if !BACKWARD
// Writes save_mean/save_invstd and moves the running statistics of channel c.
static inline void finalize_stats(const int c, const float count, const float mean, const float m2, const float eps,
                                  const float momentum, global float* save_mean, global float* save_invstd,
                                  global float* running_mean, global float* running_var) {
  save_mean[c] = mean;
  save_invstd[c] = 1.0f / sqrt(m2 / count + eps);
  running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * mean;
  running_var[c] = (1.0f - momentum) * running_var[c] + momentum * (m2 / (count - 1.0f));
}

__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void batch_norm_stats(const int batch, const int channels, const int plane, const float eps,
                             const float momentum,
                             const global STORAGE* restrict x, const long x_off, const global STORAGE* restrict gamma,
                             const long g_off, const global STORAGE* restrict beta, const long b_off,
                             global STORAGE* restrict y, const long y_off, global float* restrict save_mean,
                             const long sm_off, global float* restrict save_invstd, const long si_off,
                             global float* restrict running_mean, const long rm_off, global float* restrict running_var,
                             const long rv_off, global float* restrict partial) {
  const int lid = get_local_id(0);
  const int c = get_group_id(0) / SPLIT;
  const int split = get_group_id(0) % SPLIT;
  CHANNEL_SPLIT(batch, split, n0, n1)
  local float s1[WGS], s2[WGS], s3[WGS];
#if WELFORD
  float cnt = 0.0f;
  floatV mv = (floatV)(0.0f), m2v = (floatV)(0.0f);
  float tn = 0.0f, tm = 0.0f, tm2 = 0.0f;
  for (int n = n0; n < n1; ++n) {
    const global STORAGE* src = x + x_off + ((long)n * channels + c) * plane;
    FOR_PLANE(plane, lid,
              const floatV xv = LOADV(src, k); cnt += 1.0f; const floatV delta = xv - mv;
              mv += delta * (1.0f / cnt); m2v += delta * (xv - mv),
              welford_merge(&tn, &tm, &tm2, 1.0f, LOAD(src, k), 0.0f))
  }
  {
    float lm[VW], lm2[VW];
    SPILL_LANES(mv, lm);
    SPILL_LANES(m2v, lm2);
#pragma unroll
    for (int l = 0; l < VW; ++l) welford_merge(&tn, &tm, &tm2, cnt, lm[l], lm2[l]);
  }
  group_welford(&tn, &tm, &tm2, s1, s2, s3, lid);
  const float count = tn, mean = tm, m2 = tm2;
#else
  // Two reads of the channel: the mean, then the squared deviations (SPLIT is 1).
  floatV sv = (floatV)(0.0f);
  float sum = 0.0f;
  for (int n = n0; n < n1; ++n) {
    const global STORAGE* src = x + x_off + ((long)n * channels + c) * plane;
    FOR_PLANE(plane, lid, sv += LOADV(src, k), sum += LOAD(src, k))
  }
  const float count = (float)(n1 - n0) * plane;
  const float mean = group_sum(sum + sum_lanes(sv), s1, lid) / count;
  floatV qv = (floatV)(0.0f);
  float sq = 0.0f;
  for (int n = n0; n < n1; ++n) {
    const global STORAGE* src = x + x_off + ((long)n * channels + c) * plane;
    FOR_PLANE(plane, lid, const floatV d = LOADV(src, k) - mean; qv += d * d,
              const float d = LOAD(src, k) - mean; sq += d * d)
  }
  const float m2 = group_sum(sq + sum_lanes(qv), s2, lid);
#endif
#if SPLIT > 1
  if (lid == 0) {
    global float* p = partial + ((long)c * SPLIT + split) * 3;
    p[0] = count;
    p[1] = mean;
    p[2] = m2;
  }
#else
  if (lid == 0) {
    finalize_stats(c, count, mean, m2, eps, momentum, save_mean + sm_off, save_invstd + si_off, running_mean + rm_off,
                   running_var + rv_off);
  }
#if FUSED
  const float scale = LOAD(gamma + g_off, c) / sqrt(m2 / count + eps);
  const float shift = LOAD(beta + b_off, c);
  for (int n = 0; n < batch; ++n) {
    const long base = ((long)n * channels + c) * plane;
    const global STORAGE* src = x + x_off + base;
    global STORAGE* dst = y + y_off + base;
    FOR_PLANE(plane, lid, STOREV((LOADV(src, k) - mean) * scale + shift, dst, k),
              STORE((LOAD(src, k) - mean) * scale + shift, dst, k))
  }
#endif
#endif
}

// Merges the SPLIT partial statistics of each channel and finalises them.
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void batch_norm_combine(const int channels, const float eps, const float momentum,
                               const global float* restrict partial, global float* restrict save_mean,
                               const long sm_off, global float* restrict save_invstd, const long si_off,
                               global float* restrict running_mean, const long rm_off,
                               global float* restrict running_var, const long rv_off) {
  const int c = get_global_id(0);
  if (c >= channels) return;
  float n = 0.0f, mean = 0.0f, m2 = 0.0f;
  for (int s = 0; s < SPLIT; ++s) {
    const global float* p = partial + ((long)c * SPLIT + s) * 3;
    welford_merge(&n, &mean, &m2, p[0], p[1], p[2]);
  }
  finalize_stats(c, n, mean, m2, eps, momentum, save_mean + sm_off, save_invstd + si_off, running_mean + rm_off,
                 running_var + rv_off);
}

// y = (x - mean) * invstd * gamma + beta, ROWS planes per work-group.
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void batch_norm_apply(const int batch, const int channels, const int plane, const global STORAGE* restrict x,
                             const long x_off, const global STORAGE* restrict gamma, const long g_off,
                             const global STORAGE* restrict beta, const long b_off, global STORAGE* restrict y,
                             const long y_off, const global float* restrict save_mean, const long sm_off,
                             const global float* restrict save_invstd, const long si_off) {
  const int lid = get_local_id(0);
  const int p0 = get_group_id(0) * ROWS;
  const int p1 = min(batch * channels, p0 + ROWS);
  for (int p = p0; p < p1; ++p) {
    const int c = p % channels;
    const float mean = save_mean[sm_off + c];
    const float scale = save_invstd[si_off + c] * LOAD(gamma + g_off, c);
    const float shift = LOAD(beta + b_off, c);
    const global STORAGE* src = x + x_off + (long)p * plane;
    global STORAGE* dst = y + y_off + (long)p * plane;
    FOR_PLANE(plane, lid, STOREV((LOADV(src, k) - mean) * scale + shift, dst, k),
              STORE((LOAD(src, k) - mean) * scale + shift, dst, k))
  }
}

#else
// Writes the fp32 sums of channel c and dgamma, dbeta in the storage type.
static inline void finish_sums(const int c, const float sum_dy, const float sum_dy_xhat, global float* sums,
                               global STORAGE* dgamma, global STORAGE* dbeta) {
  sums[2 * c] = sum_dy;
  sums[2 * c + 1] = sum_dy_xhat;
  STORE(sum_dy_xhat, dgamma, c);
  STORE(sum_dy, dbeta, c);
}

__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void batch_norm_backward_stats(const int batch, const int channels, const int plane,
                                      const global STORAGE* restrict dy, const long dy_off,
                                      const global STORAGE* restrict x, const long x_off,
                                      const global float* restrict save_mean, const long sm_off,
                                      const global float* restrict save_invstd, const long si_off,
                                      const global STORAGE* restrict gamma, const long g_off,
                                      global STORAGE* restrict dx, const long dx_off, global STORAGE* restrict dgamma,
                                      const long dg_off, global STORAGE* restrict dbeta, const long db_off,
                                      global float* restrict sums, global float* restrict partial) {
  const int lid = get_local_id(0);
  const int c = get_group_id(0) / SPLIT;
  const int split = get_group_id(0) % SPLIT;
  CHANNEL_SPLIT(batch, split, n0, n1)
  local float s1[WGS], s2[WGS];
  const float mean = save_mean[sm_off + c], invstd = save_invstd[si_off + c];
  floatV av = (floatV)(0.0f), bv = (floatV)(0.0f);
  float a = 0.0f, b = 0.0f;  // sum(dy), sum(dy * xhat)
  for (int n = n0; n < n1; ++n) {
    const long base = ((long)n * channels + c) * plane;
    const global STORAGE* d = dy + dy_off + base;
    const global STORAGE* xs = x + x_off + base;
    FOR_PLANE(plane, lid, const floatV dv = LOADV(d, k); av += dv; bv += dv * ((LOADV(xs, k) - mean) * invstd),
              const float dk = LOAD(d, k); a += dk; b += dk * ((LOAD(xs, k) - mean) * invstd))
  }
  a += sum_lanes(av);
  b += sum_lanes(bv);
  group_sum2(&a, &b, s1, s2, lid);
#if SPLIT > 1
  if (lid == 0) {
    partial[((long)c * SPLIT + split) * 2] = a;
    partial[((long)c * SPLIT + split) * 2 + 1] = b;
  }
#else
  if (lid == 0) finish_sums(c, a, b, sums, dgamma + dg_off, dbeta + db_off);
#if FUSED
  const float inv_m = 1.0f / ((float)batch * plane);
  const float scale = LOAD(gamma + g_off, c) * invstd;
  for (int n = 0; n < batch; ++n) {
    const long base = ((long)n * channels + c) * plane;
    const global STORAGE* d = dy + dy_off + base;
    const global STORAGE* xs = x + x_off + base;
    global STORAGE* out = dx + dx_off + base;
    FOR_PLANE(plane, lid,
              STOREV(scale * (LOADV(d, k) - a * inv_m - ((LOADV(xs, k) - mean) * invstd) * (b * inv_m)), out, k),
              STORE(scale * (LOAD(d, k) - a * inv_m - ((LOAD(xs, k) - mean) * invstd) * (b * inv_m)), out, k))
  }
#endif
#endif
}

// Adds up the SPLIT partial sums of each channel.
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void batch_norm_backward_combine(const int channels, const global float* restrict partial,
                                        global float* restrict sums, global STORAGE* restrict dgamma, const long dg_off,
                                        global STORAGE* restrict dbeta, const long db_off) {
  const int c = get_global_id(0);
  if (c >= channels) return;
  float a = 0.0f, b = 0.0f;
  for (int s = 0; s < SPLIT; ++s) {
    a += partial[((long)c * SPLIT + s) * 2];
    b += partial[((long)c * SPLIT + s) * 2 + 1];
  }
  finish_sums(c, a, b, sums, dgamma + dg_off, dbeta + db_off);
}

// dx for ROWS planes per work-group, from the channel sums.
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void batch_norm_backward_apply(const int batch, const int channels, const int plane,
                                      const global STORAGE* restrict dy, const long dy_off,
                                      const global STORAGE* restrict x, const long x_off,
                                      const global float* restrict save_mean, const long sm_off,
                                      const global float* restrict save_invstd, const long si_off,
                                      const global STORAGE* restrict gamma, const long g_off,
                                      const global float* restrict sums, global STORAGE* restrict dx,
                                      const long dx_off) {
  const int lid = get_local_id(0);
  const int p0 = get_group_id(0) * ROWS;
  const int p1 = min(batch * channels, p0 + ROWS);
  const float inv_m = 1.0f / ((float)batch * plane);
  for (int p = p0; p < p1; ++p) {
    const int c = p % channels;
    const float mean = save_mean[sm_off + c], invstd = save_invstd[si_off + c];
    const float scale = LOAD(gamma + g_off, c) * invstd;
    const float mdy = sums[2 * c] * inv_m, mdyx = sums[2 * c + 1] * inv_m;
    const global STORAGE* d = dy + dy_off + (long)p * plane;
    const global STORAGE* xs = x + x_off + (long)p * plane;
    global STORAGE* out = dx + dx_off + (long)p * plane;
    FOR_PLANE(plane, lid, STOREV(scale * (LOADV(d, k) - mdy - ((LOADV(xs, k) - mean) * invstd) * mdyx), out, k),
              STORE(scale * (LOAD(d, k) - mdy - ((LOAD(xs, k) - mean) * invstd) * mdyx), out, k))
  }
}
#endif
