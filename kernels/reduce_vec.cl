// Vector and work-group helpers shared by the reduction, softmax and normalisation kernels:
// VW-wide loads and stores of any storage type at any element offset, NaN-propagating max/min,
// lane folds, work-group sums and Welford merges through local memory.
// Include after storage.cl: files = {"storage.cl", "reduce_vec.cl", "<op>.cl"}.

#ifndef VW
#define VW 4  // vector width of global loads and stores (1, 2, 4, 8 or 16 elements)
#endif
#ifndef WGS
#define WGS 64  // work-items per work-group (a power of two)
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// floatV / intV / uintV: VW-wide types (plain scalars when VW == 1).
#if VW == 1
#define floatV float
#define intV int
#define uintV uint
#define ushortV ushort
#define AS_FLOATV(x) as_float(x)
#define AS_UINTV(x) as_uint(x)
#define CONVERT_UINTV(x) convert_uint(x)
#define CONVERT_USHORTV(x) convert_ushort(x)
#else
#define floatV CAT(float, VW)
#define intV CAT(int, VW)
#define uintV CAT(uint, VW)
#define ushortV CAT(ushort, VW)
#define AS_FLOATV(x) CAT(as_float, VW)(x)
#define AS_UINTV(x) CAT(as_uint, VW)(x)
#define CONVERT_UINTV(x) CAT(convert_uint, VW)(x)
#define CONVERT_USHORTV(x) CAT(convert_ushort, VW)(x)
#endif

// LOADV(p, e) -> floatV from the VW elements starting at element offset e (any alignment: vloadn
// only needs element alignment); STOREV(v, p, e) the reverse, rounding to the storage type.
#if VW == 1
#define LOADV(p, e) LOAD(p, e)
#define STOREV(v, p, e) STORE(v, p, e)
#elif DTYPE == 0
#define LOADV(p, e) CAT(vload, VW)(0, (p) + (e))
#define STOREV(v, p, e) CAT(vstore, VW)((v), 0, (p) + (e))
#elif DTYPE == 1 && VW <= 4
#define LOADV(p, e) CAT(vload_half, VW)(0, (p) + (e))
#define STOREV(v, p, e) CAT(CAT(vstore_half, VW), _rte)((v), 0, (p) + (e))
// Wider fp16 vectors as 4-wide pieces: PoCL 3.1 compiled some vload_half8 to an aligned 16-byte
// load (vmovdqa) that faults on addresses only 2-byte aligned, as the standard allows.
#elif DTYPE == 1 && VW == 8
#define LOADV(p, e) ((float8)(vload_half4(0, (p) + (e)), vload_half4(0, (p) + (e) + 4)))
#define STOREV(v, p, e) (vstore_half4_rte((v).lo, 0, (p) + (e)), vstore_half4_rte((v).hi, 0, (p) + (e) + 4))
#elif DTYPE == 1
#define LOADV(p, e)                                                                                  \
  ((float16)(vload_half4(0, (p) + (e)), vload_half4(0, (p) + (e) + 4), vload_half4(0, (p) + (e) + 8), \
             vload_half4(0, (p) + (e) + 12)))
#define STOREV(v, p, e)                                                                                 \
  (vstore_half4_rte((v).lo.lo, 0, (p) + (e)), vstore_half4_rte((v).lo.hi, 0, (p) + (e) + 4),           \
   vstore_half4_rte((v).hi.lo, 0, (p) + (e) + 8), vstore_half4_rte((v).hi.hi, 0, (p) + (e) + 12))
#else
#define LOADV(p, e) AS_FLOATV(CONVERT_UINTV(CAT(vload, VW)(0, (p) + (e))) << 16)
// Round to nearest even as bf16_round does, lane-wise; NaN stays a quiet NaN.
static inline ushortV bf16_roundv(const floatV v) {
  const uintV x = AS_UINTV(v);
  const uintV rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return CONVERT_USHORTV(select(rounded, (x >> 16) | 0x40u, CAT(convert_uint, VW)(isnan(v))));
}
#define STOREV(v, p, e) CAT(vstore, VW)(bf16_roundv(v), 0, (p) + (e))
#endif

// The same on fp32 buffers (workspaces, saved statistics).
#if VW == 1
#define LOADV_F32(p, e) ((p)[e])
#define STOREV_F32(v, p, e) ((p)[e] = (v))
#else
#define LOADV_F32(p, e) CAT(vload, VW)(0, (p) + (e))
#define STOREV_F32(v, p, e) CAT(vstore, VW)((v), 0, (p) + (e))
#endif

// Lane offsets 0..VW-1, for index arithmetic of argmax/argmin.
#if VW == 1
#define LANE_IDS 0
#elif VW == 2
#define LANE_IDS ((int2)(0, 1))
#elif VW == 4
#define LANE_IDS ((int4)(0, 1, 2, 3))
#elif VW == 8
#define LANE_IDS ((int8)(0, 1, 2, 3, 4, 5, 6, 7))
#else
#define LANE_IDS ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif

// max/min that return NaN when either operand is NaN (PyTorch semantics; fmax/fmin drop NaNs).
// Work lane-wise on vectors through the vector form of ?: .
#define MAX_NAN(a, b) ((((a) > (b)) | isnan(a)) ? (a) : (b))
#define MIN_NAN(a, b) ((((a) < (b)) | isnan(a)) ? (a) : (b))

// Hot-loop forms: a plain compare-select (a NaN operand x is never selected) with the NaN
// recorded in a mask folded in at the end. A chain of NaN-aware selects through the accumulator
// ran 4-5x slower on PoCL (AVX-512) than this.
#define MAX_FAST(a, x) (((x) > (a)) ? (x) : (a))
#define MIN_FAST(a, x) (((x) < (a)) ? (x) : (a))
#define NAN_MASK(x) ((x) != (x))
#if VW == 1
#define ANY_LANE(m) ((m) != 0)
#else
#define ANY_LANE(m) any(m)
#endif

// The lanes of a vector in a private array (register-allocated once unrolled).
#if VW == 1
#define SPILL_LANES(v, lanes) ((lanes)[0] = (v))
#else
#define SPILL_LANES(v, lanes) CAT(vstore, VW)((v), 0, (lanes))
#endif

// Folds of the lanes of a vector: sum (lane order), NaN-propagating max and min.
static inline float sum_lanes(const floatV v) {
  float lanes[VW];
  SPILL_LANES(v, lanes);
  float r = lanes[0];
#pragma unroll
  for (int i = 1; i < VW; ++i) r += lanes[i];
  return r;
}
static inline float max_lanes(const floatV v) {
  float lanes[VW];
  SPILL_LANES(v, lanes);
  float r = lanes[0];
#pragma unroll
  for (int i = 1; i < VW; ++i) r = MAX_NAN(r, lanes[i]);
  return r;
}
static inline float min_lanes(const floatV v) {
  float lanes[VW];
  SPILL_LANES(v, lanes);
  float r = lanes[0];
#pragma unroll
  for (int i = 1; i < VW; ++i) r = MIN_NAN(r, lanes[i]);
  return r;
}

// Chan's merge of Welford statistics (count n, mean, sum of squared deviations m2) with another
// set; an empty other set changes nothing (and cannot turn an infinite mean into NaN).
static inline void welford_merge(float* n, float* mean, float* m2, const float nb, const float mb, const float m2b) {
  if (nb == 0.0f) return;
  const float count = *n + nb;
  const float delta = mb - *mean;
  const float f = nb / count;
  *mean += delta * f;
  *m2 += m2b + delta * delta * *n * f;
  *n = count;
}

// Work-group combines through `WGS`-long local arrays, every work-item receiving the result.
// They start with a barrier (the arrays may still be read from the previous use) and are called
// by every work-item of the group.
static inline float group_sum(float v, local float* s, const int lid) {
#if WGS > 1
  barrier(CLK_LOCAL_MEM_FENCE);
  s[lid] = v;
  for (int h = WGS / 2; h > 0; h >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < h) s[lid] += s[lid + h];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  v = s[0];
#endif
  return v;
}

static inline void group_sum2(float* a, float* b, local float* sa, local float* sb, const int lid) {
#if WGS > 1
  barrier(CLK_LOCAL_MEM_FENCE);
  sa[lid] = *a;
  sb[lid] = *b;
  for (int h = WGS / 2; h > 0; h >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < h) {
      sa[lid] += sa[lid + h];
      sb[lid] += sb[lid + h];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  *a = sa[0];
  *b = sb[0];
#endif
}

static inline void group_welford(float* n, float* mean, float* m2, local float* sn, local float* smean,
                                 local float* sm2, const int lid) {
#if WGS > 1
  barrier(CLK_LOCAL_MEM_FENCE);
  sn[lid] = *n;
  smean[lid] = *mean;
  sm2[lid] = *m2;
  for (int h = WGS / 2; h > 0; h >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < h) {
      float cn = sn[lid], cm = smean[lid], cm2 = sm2[lid];
      welford_merge(&cn, &cm, &cm2, sn[lid + h], smean[lid + h], sm2[lid + h]);
      sn[lid] = cn;
      smean[lid] = cm;
      sm2[lid] = cm2;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  *n = sn[0];
  *mean = smean[0];
  *m2 = sm2[0];
#endif
}
