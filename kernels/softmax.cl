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
#ifndef EXP
#define EXP 0  // 0: the built-in exp; 1: exp_nonpos below (range reduction + polynomial, all lanes at once)
#endif
#ifndef PREFETCH
#define PREFETCH 0  // rows, ONLINE 0: > 0 prefetches, in the exp sweep, the input PREFETCH rows ahead and the output row
#endif

// exp(d) for d <= 0 or NaN, which is all softmax needs (d = x - max). d = n ln2 + f with
// |f| <= ln2/2 (n by the 1.5 * 2^23 rounding trick, ln2 in two parts so n ln2 is exact), e^f by a
// degree-6 minimax polynomial (relative error 2e-9 before rounding; about 1 ulp in fp32), times 2^n
// built in the exponent field. Why: PoCL inlines its exp vectorised already, but as a general
// routine (overflow and wide-range handling, two scalings); this one costs about 13 vector
// operations per VW elements. Below -87.34 (n < -126) the result is 0, as exp(-Inf) must be; a NaN
// d stays NaN (the scale is a multiplication, not an exponent-field addition).
#define EXP_NONPOS_BODY(T, AS_INT, AS_FLOAT)                                      \
  const T t = fma(d, (T)(1.44269504088896341f), (T)(12582912.0f));                \
  const T n = t - 12582912.0f;                                                   \
  T f = fma(n, (T)(-0.693145751953125f), d);                                     \
  f = fma(n, (T)(-1.428606765330187045e-06f), f);                                \
  T p = fma((T)(0.0013836846f), f, (T)(0.0083748158f));                          \
  p = fma(p, f, (T)(0.041668226f));                                              \
  p = fma(p, f, (T)(0.16666420f));                                               \
  p = fma(p, f, (T)(0.49999992f));                                               \
  p = fma(p, f, (T)(1.0f));                                                      \
  p = fma(p, f, (T)(1.0f));                                                      \
  const T r = p * AS_FLOAT((AS_INT(t) << 23) + 0x3f800000);                      \
  return d < -87.33654f ? (T)(0.0f) : r;
static inline float exp_nonpos(const float d) { EXP_NONPOS_BODY(float, as_int, as_float) }
#if VW > 1
static inline floatV exp_nonposv(const floatV d) { EXP_NONPOS_BODY(floatV, CAT(as_int, VW), AS_FLOATV) }
#else
#define exp_nonposv exp_nonpos
#endif
#if EXP
#define EXP_S(d) exp_nonpos(d)
#define EXP_V(d) exp_nonposv(d)
#else
#define EXP_S(d) exp(d)
#define EXP_V(d) exp(d)
#endif

// A hint that `p` is read (rw 0) or written (rw 1) soon. PoCL's prefetch() is empty, so Clang's
// builtin where there is one (it becomes prefetcht0 / prefetchw on x86).
#if defined(__has_builtin)
#if __has_builtin(__builtin_prefetch)
#define PREFETCH_LINE(p, rw) __builtin_prefetch((const global void*)(p), (rw), 3)
#endif
#endif
#ifndef PREFETCH_LINE
#define PREFETCH_LINE(p, rw) prefetch((p), 1)
#endif

// The largest lane of v, NaN lanes aside (the sweeps record NaN in a mask): halving the vector
// keeps it in registers; reduce_vec.cl's NaN-aware max_lanes goes through a private array, which
// PoCL compiled to a call that cost 10% of a 2048-long row.
static inline float max_lanes_fast(const floatV v) {
#if VW == 16
  const float8 v8 = MAX_FAST(v.lo, v.hi);
#elif VW == 8
  const float8 v8 = v;
#endif
#if VW >= 8
  const float4 v4 = MAX_FAST(v8.lo, v8.hi);
#elif VW == 4
  const float4 v4 = v;
#endif
#if VW >= 4
  const float2 v2 = MAX_FAST(v4.lo, v4.hi);
#elif VW == 2
  const float2 v2 = v;
#endif
#if VW >= 2
  return MAX_FAST(v2.lo, v2.hi);
#else
  return v;
#endif
}

// Online update of (max m, sum s of exp(x - m)) with x, lane-wise. An all -Inf prefix keeps s = 0
// instead of exp(-Inf - -Inf) = NaN, so -Inf elements count as 0 as in the two-read form.
// A NaN x is not selected as the max but makes s NaN through exp(x - m); `bad` records it.
#define ONLINE_ADD(m, s, bad, x)                                             \
  {                                                                          \
    const floatV mn_ = MAX_FAST(m, x);                                       \
    s = (mn_ == -INFINITY) ? (floatV)(0.0f) : s * EXP_V(m - mn_) + EXP_V(x - mn_); \
    m = mn_;                                                                 \
    bad |= NAN_MASK(x);                                                      \
  }

// Merge of two scalar (max, sum) pairs.
static inline void merge_stats(float* m, float* s, const float m2, const float s2) {
  const float mn = MAX_NAN(*m, m2);
  *s = mn == -INFINITY ? 0.0f : *s * EXP_S(*m - mn) + s2 * EXP_S(m2 - mn);
  *m = mn;
}

static inline float softmax_of(const float x, const float m, const float log_s, const float inv_s) {
#if LOG
  return (x - m) - log_s;
#else
  return EXP_S(x - m) * inv_s;
#endif
}
#if VW > 1
static inline floatV softmax_ofv(const floatV x, const float m, const float log_s, const float inv_s) {
#if LOG
  return (x - m) - log_s;
#else
  return EXP_V(x - m) * inv_s;
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
#if CACHE
  // PoCL splits a vstoreN to a merely float-aligned pointer into 3 narrower stores, 10% of a
  // 2048-long row; the local buffer is normally aligned to the largest vector type, but that is
  // checked, not assumed.
  const bool cache_aligned = ((ulong)cache % (VW * sizeof(float))) == 0;
#endif
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
    // Read 1: the maximum, NaN aside: a NaN x makes exp(x - m) and so the sum NaN below, which
    // makes the whole row NaN (log_softmax too: x - m - log(NaN)); no NaN mask in this sweep.
    floatV mv = (floatV)(-INFINITY);
    float m = -INFINITY;
    for (int v = lid; v * VW < length; v += WGS) {
      if (v < nvec) {
        mv = MAX_FAST(mv, LOADV(src, v * VW));
      } else {
        for (int k = v * VW; k < length; ++k) m = MAX_NAN(m, LOAD(src, k));
      }
    }
    m = MAX_NAN(m, max_lanes_fast(mv));
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
#if PREFETCH
        // This sweep computes from cache while memory idles: bring in the row the next max sweep
        // reads, and own the lines the write sweep stores to (no read-for-ownership stall there).
        if (r + PREFETCH < rows) PREFETCH_LINE(src + (long)PREFETCH * length + v * VW, 0);
        PREFETCH_LINE(dst + v * VW, 1);
#endif
        const floatV d = LOADV(src, v * VW) - m;
        const floatV e = EXP_V(d);
#if CACHE
        if (cache_aligned) {
          ((local floatV*)cache)[v] = LOG ? d : e;
        } else {
          STOREV_F32(LOG ? d : e, cache, v * VW);
        }
#endif
        sv += e;
      } else {
        for (int k = v * VW; k < length; ++k) {
          const float d = LOAD(src, k) - m;
          const float e = EXP_S(d);
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
        const floatV c = cache_aligned ? ((local floatV*)cache)[v] : LOADV_F32(cache, v * VW);
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
      for (int k = 0; k < length; ++k) s += EXP_V(LOADV(src, (long)k * inner + c) - m);
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
        STOREV(EXP_V(LOADV(src, e) - m) * inv_s, dst, e);
      }
#endif
    } else {
      // The ragged right edge: one column at a time.
      for (int cc = c; cc < min(inner, c + VW); ++cc) {
        float m = -INFINITY, s = 0.0f;
        for (int k = 0; k < length; ++k) m = MAX_NAN(m, LOAD(src, (long)k * inner + cc));
        for (int k = 0; k < length; ++k) s += EXP_S(LOAD(src, (long)k * inner + cc) - m);
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
