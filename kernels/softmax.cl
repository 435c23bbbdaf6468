// softmax and log_softmax of a tensor seen as (outer, length, inner), along `length`: contiguous
// rows (STRIDED 0) or columns `inner` apart (STRIDED 1). Numerically stable: y = exp(x - max) / sum
// (log: x - max - log(sum)), NaN anywhere in a row makes the row NaN as in PyTorch.
// Files: storage.cl, reduce_vec.cl, softmax.cl. Launch: global (groups*WGS), local (WGS), groups =
// ceil(outer/ROWS) (rows) or ceil(outer/ROWS) * ceil(inner/(WGS*VW)) (columns).

// ---- Problem (set by the host, not tuned) ----
#ifndef LOG
#define LOG 0  // 1: log_softmax
#endif
#ifndef STRIDED
#define STRIDED 0  // 0: rows are contiguous; 1: row elements are `inner` apart
#endif

// ---- Tunables (and WGS, VW of reduce_vec.cl) ----
#ifndef ROWS
#define ROWS 1  // outer rows per work-group, in turn
#endif
#ifndef ONLINE
#define ONLINE 0  // 1: max and sum in one read (rescaling the sum when the max grows); 0: two reads
#endif
#ifndef CACHE
#define CACHE 0  // rows, ONLINE 0: 1 keeps exp(x - max) (log: x - max) of a row in local memory for the write
#endif

// Online update of (max m, sum s of exp(x - m)) with x, lane-wise. An all -Inf prefix keeps s = 0
// instead of exp(-Inf - -Inf) = NaN, so -Inf elements count as 0 as in the two-read form.
// A NaN x is not selected as the max but makes s NaN through exp(x - m); `bad` records it.
#define ONLINE_ADD(m, s, bad, x)                                             \
  {                                                                          \
    const floatV mn_ = MAX_FAST(m, x);                                       \
    s = (mn_ == -INFINITY) ? (floatV)(0.0f) : s * exp(m - mn_) + exp(x - mn_); \
    m = mn_;                                                                 \
    bad |= NAN_MASK(x);                                                      \
  }

// Merge of two scalar (max, sum) pairs.
static inline void merge_stats(float* m, float* s, const float m2, const float s2) {
  const float mn = MAX_NAN(*m, m2);
  *s = mn == -INFINITY ? 0.0f : *s * exp(*m - mn) + s2 * exp(m2 - mn);
  *m = mn;
}

static inline float softmax_of(const float x, const float m, const float log_s, const float inv_s) {
#if LOG
  return (x - m) - log_s;
#else
  return exp(x - m) * inv_s;
#endif
}
#if VW > 1
static inline floatV softmax_ofv(const floatV x, const float m, const float log_s, const float inv_s) {
#if LOG
  return (x - m) - log_s;
#else
  return exp(x - m) * inv_s;
#endif
}
#else
#define softmax_ofv softmax_of
#endif

#if !STRIDED
// ---- Rows: WGS work-items stride over a row with VW-vectors; statistics meet in local memory. ----
// Each sweep is one loop whose last, ragged vector is done element-wise: PoCL 3.1 crashed on a
// second (tail) loop after the last barrier of the row loop.
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void softmax(const int outer, const int length, const int inner, const global STORAGE* restrict in,
                    const long in_offset, global STORAGE* restrict out, const long out_offset, local float* cache) {
  const int lid = get_local_id(0);
  const int row0 = get_group_id(0) * ROWS;
  const int nvec = length / VW;
#if WGS > 1
  local float lm[WGS];
  local float ls[WGS];
#endif
  // A trip count the same for every work-item (no break): PoCL needs barriers in uniform loops.
  const int rows = min(ROWS, outer - row0);
  for (int r = 0; r < rows; ++r) {
    const int row = row0 + r;
    const global STORAGE* src = in + in_offset + (long)row * length;
    global STORAGE* dst = out + out_offset + (long)row * length;
#if ONLINE
    floatV mv = (floatV)(-INFINITY), sv = (floatV)(0.0f);
    intV bad = (intV)(0);
    float m = -INFINITY, s = 0.0f;
    for (int v = lid; v * VW < length; v += WGS) {
      if (v < nvec) {
        const floatV x = LOADV(src, v * VW);
        ONLINE_ADD(mv, sv, bad, x);
      } else {
        for (int k = v * VW; k < length; ++k) merge_stats(&m, &s, LOAD(src, k), 1.0f);
      }
    }
    {
      float lmv[VW], lsv[VW];
      SPILL_LANES(mv, lmv);
      SPILL_LANES(sv, lsv);
#pragma unroll
      for (int l = 0; l < VW; ++l) merge_stats(&m, &s, lmv[l], lsv[l]);
      if (ANY_LANE(bad)) m = NAN;
    }
#if WGS > 1
    lm[lid] = m;
    ls[lid] = s;
    for (int h = WGS / 2; h > 0; h >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < h) {
        float a = lm[lid], b = ls[lid];
        merge_stats(&a, &b, lm[lid + h], ls[lid + h]);
        lm[lid] = a;
        ls[lid] = b;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    m = lm[0];
    s = ls[0];
    barrier(CLK_LOCAL_MEM_FENCE);  // lm/ls are rewritten for the next row
#endif
#else
    // Read 1: the maximum.
    floatV mv = (floatV)(-INFINITY);
    intV bad = (intV)(0);
    float m = -INFINITY;
    for (int v = lid; v * VW < length; v += WGS) {
      if (v < nvec) {
        const floatV x = LOADV(src, v * VW);
        mv = MAX_FAST(mv, x);
        bad |= NAN_MASK(x);
      } else {
        for (int k = v * VW; k < length; ++k) m = MAX_NAN(m, LOAD(src, k));
      }
    }
    m = MAX_NAN(m, ANY_LANE(bad) ? NAN : max_lanes(mv));
#if WGS > 1
    lm[lid] = m;
    for (int h = WGS / 2; h > 0; h >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < h) lm[lid] = MAX_NAN(lm[lid], lm[lid + h]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    m = lm[0];
#endif
    // Read 2: the sum of exp(x - max); CACHE keeps what the write needs in local memory (each
    // work-item reads back only the entries it wrote: no barrier).
    floatV sv = (floatV)(0.0f);
    float s = 0.0f;
    for (int v = lid; v * VW < length; v += WGS) {
      if (v < nvec) {
        const floatV d = LOADV(src, v * VW) - m;
        const floatV e = exp(d);
#if CACHE
        STOREV_F32(LOG ? d : e, cache, v * VW);
#endif
        sv += e;
      } else {
        for (int k = v * VW; k < length; ++k) {
          const float d = LOAD(src, k) - m;
          const float e = exp(d);
#if CACHE
          cache[k] = LOG ? d : e;
#endif
          s += e;
        }
      }
    }
    s += sum_lanes(sv);
#if WGS > 1
    ls[lid] = s;
    for (int h = WGS / 2; h > 0; h >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < h) ls[lid] += ls[lid + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    s = ls[0];
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#endif
    const float log_s = log(s), inv_s = 1.0f / s;
#if CACHE
    for (int v = lid; v * VW < length; v += WGS) {
      if (v < nvec) {
        const floatV c = LOADV_F32(cache, v * VW);
        STOREV(LOG ? c - log_s : c * inv_s, dst, v * VW);
      } else {
        for (int k = v * VW; k < length; ++k) STORE(LOG ? cache[k] - log_s : cache[k] * inv_s, dst, k);
      }
    }
#else
    for (int v = lid; v * VW < length; v += WGS) {
      if (v < nvec) {
        STOREV(softmax_ofv(LOADV(src, v * VW), m, log_s, inv_s), dst, v * VW);
      } else {
        for (int k = v * VW; k < length; ++k) STORE(softmax_of(LOAD(src, k), m, log_s, inv_s), dst, k);
      }
    }
#endif
  }
}

#else
// ---- Columns: each work-item owns VW adjacent columns and walks down them. ----
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void softmax(const int outer, const int length, const int inner, const global STORAGE* restrict in,
                    const long in_offset, global STORAGE* restrict out, const long out_offset, local float* cache) {
  const int lid = get_local_id(0);
  const int col_groups = (inner + WGS * VW - 1) / (WGS * VW);
  const int c = ((get_group_id(0) % col_groups) * WGS + lid) * VW;
  const int row0 = (get_group_id(0) / col_groups) * ROWS;
  const int rows = min(ROWS, outer - row0);
  for (int r = 0; r < rows; ++r) {
    const int row = row0 + r;
    const long base = (long)row * length * inner;
    const global STORAGE* src = in + in_offset + base;
    global STORAGE* dst = out + out_offset + base;
    if (c + VW <= inner) {
      floatV m = (floatV)(-INFINITY), s = (floatV)(0.0f);
      intV bad = (intV)(0);
#if ONLINE
      for (int k = 0; k < length; ++k) {
        const floatV x = LOADV(src, (long)k * inner + c);
        ONLINE_ADD(m, s, bad, x);
      }
      m = bad ? (floatV)(NAN) : m;
#else
      for (int k = 0; k < length; ++k) {
        const floatV x = LOADV(src, (long)k * inner + c);
        m = MAX_FAST(m, x);
        bad |= NAN_MASK(x);
      }
      m = bad ? (floatV)(NAN) : m;
      for (int k = 0; k < length; ++k) s += exp(LOADV(src, (long)k * inner + c) - m);
#endif
#if LOG
      const floatV log_s = log(s);
      for (int k = 0; k < length; ++k) {
        const long e = (long)k * inner + c;
        STOREV((LOADV(src, e) - m) - log_s, dst, e);
      }
#else
      const floatV inv_s = 1.0f / s;
      for (int k = 0; k < length; ++k) {
        const long e = (long)k * inner + c;
        STOREV(exp(LOADV(src, e) - m) * inv_s, dst, e);
      }
#endif
    } else {
      // The ragged right edge: one column at a time.
      for (int cc = c; cc < min(inner, c + VW); ++cc) {
        float m = -INFINITY, s = 0.0f;
        for (int k = 0; k < length; ++k) m = MAX_NAN(m, LOAD(src, (long)k * inner + cc));
        for (int k = 0; k < length; ++k) s += exp(LOAD(src, (long)k * inner + cc) - m);
        const float log_s = log(s), inv_s = 1.0f / s;
        for (int k = 0; k < length; ++k) {
          const long e = (long)k * inner + cc;
          STORE(softmax_of(LOAD(src, e), m, log_s, inv_s), dst, e);
        }
      }
    }
  }
}
#endif
