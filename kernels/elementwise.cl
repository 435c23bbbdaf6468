// Fused elementwise chains and strided copies: y = step4(step3(step2(step1(x, b1), b2), b3), b4) over
// inputs of up to 4 dimensions with any strides (0 = broadcast), y contiguous; no steps = a copy.
// Storage type from storage.cl (DTYPE), arithmetic in fp32. Any size: a vector chunk that runs past
// the end, or across a row of an input that is not flat, takes an element-wise path. y may be
// exactly one of the inputs (in place), never a partial overlap. Launch: 1-D, local WG, global WG *
// units (GRID_STRIDE: at most GRID_STRIDE groups loop over them); a unit is WG * ITEMS vectors of
// the flat output (ROWS 0: ceil(ceil(n / VW) / (WG * ITEMS)) units) or of one row of d3 elements
// (ROWS 1: n / d3 * ceil(ceil(d3 / VW) / (WG * ITEMS)) units).

// ---- Problem (set by the host, not tuned) ----
#ifndef NDIM
#define NDIM 1  // dimensions after merging contiguous ones (1..4), sizes (d0,) d1, d2, d3; d3 innermost
#endif
#ifndef STEPS
#define STEPS 0  // steps of the chain (0..4); 0 is a copy of in0
#endif
// Step k: STEPk_OP names the op (RELU, ADD, ...: the OP_* macros below); STEPk_ARG is 0 (unary),
// 1 (tensor input in<k>) or 2 (scalar argument sc<k>); STEPk_REV 1 computes op(operand, v).
// Input k (0: x, 1..4: operand of step k): INk_MODE 0 flat (same layout as y), 1 innermost stride 1,
// 2 innermost stride 0 (one value per row), 3 any other innermost stride (gathered).
#ifndef IN0_MODE
#define IN0_MODE 0
#endif

// ---- Tunables ----
#ifndef VW
#define VW 4  // elements per vector load and store (1, 2, 4, 8, 16)
#endif
#ifndef ITEMS
#define ITEMS 4  // vectors per work-item per pass
#endif
#ifndef WG
#define WG 64  // work-group size
#endif
#ifndef GRID_STRIDE
#define GRID_STRIDE 0  // 0: one pass, one work-item per ITEMS vectors; G > 0: G work-groups loop (grid-stride)
#endif
#ifndef CONTIG
#define CONTIG 0  // 1: a work-item's ITEMS vectors are adjacent; 0: WG vectors apart (coalesced across the group)
#endif
#ifndef ROWS
#define ROWS 0  // 1: work-groups take tiles of one innermost row (addresses per group, not per vector)
#endif

// ---- Ops: elementwise_ops.cl (OP_RELU, ..., STEP_FN) ----

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// Vectors of VW elements in the storage type: LOADV(p) -> floatV, STOREV(v, p); private arrays.
#if VW == 1
#define floatV float
#define LOADV(p) LOAD((p), 0)
#define STOREV(v, p) STORE((v), (p), 0)
#define PRIV_TO_V(t) ((t)[0])
#define V_TO_PRIV(v, t) ((t)[0] = (v))
#else
#define floatV CAT(float, VW)
#define PRIV_TO_V(t) CAT(vload, VW)(0, (t))
#define V_TO_PRIV(v, t) CAT(vstore, VW)((v), 0, (t))
#if DTYPE == 0
#define LOADV(p) CAT(vload, VW)(0, (p))
#define STOREV(v, p) CAT(vstore, VW)((v), 0, (p))
#elif DTYPE == 1
#define LOADV(p) CAT(vload_half, VW)(0, (p))
#define STOREV(v, p) CAT(CAT(vstore_half, VW), _rte)((v), 0, (p))
#else
#define uintV CAT(uint, VW)
#define LOADV(p) CAT(as_float, VW)(CAT(convert_uint, VW)(CAT(vload, VW)(0, (p))) << 16)
// Vector form of storage.cl's bf16_round: nearest even, NaN stays a quiet NaN.
static inline CAT(ushort, VW) bf16_round_v(const floatV f) {
  const uintV x = CAT(as_uint, VW)(f);
  const uintV rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return CAT(convert_ushort, VW)(select(rounded, (x >> 16) | 0x40u, f != f));
}
#define STOREV(v, p) CAT(vstore, VW)(bf16_round_v(v), 0, (p))
#endif
#endif

// e / d for 0 <= e < 2^31 and d >= 2, given m = ceil(2^64 / d) from the host: a 64-bit multiply
// rather than an integer division (tens of cycles on CPUs, emulated on GPUs).
static inline int div_magic(const int e, const ulong m) { return (int)mul_hi((ulong)e, m); }

// Offset of flat output index e in an input with strides s0..s3 over the merged dims.
static inline int offset_of(const int e, const int d1, const int d2, const int d3, const ulong m1, const ulong m2,
                            const ulong m3, const int s0, const int s1, const int s2, const int s3) {
#if NDIM == 1
  return e * s3;
#else
  const int q3 = div_magic(e, m3);
  const int o3 = (e - q3 * d3) * s3;
#if NDIM == 2
  return o3 + q3 * s2;
#else
  const int q2 = div_magic(q3, m2);
  const int o2 = o3 + (q3 - q2 * d2) * s2;
#if NDIM == 3
  return o2 + q2 * s1;
#else
  const int q1 = div_magic(q2, m1);
  return o2 + (q2 - q1 * d1) * s1 + q1 * s0;
#endif
#endif
#endif
}

// The VW elements of an input at flat output index e. `mode` is a compile-time constant, so only
// one branch survives. Off the fast path every lane is gathered (lanes past n repeat element n-1).
static inline floatV fetch(const global STORAGE* p, const int mode, const bool fast, const int e, const int n,
                           const int d1, const int d2, const int d3, const ulong m1, const ulong m2, const ulong m3,
                           const int s0, const int s1, const int s2, const int s3) {
  if (fast) {
    if (mode == 0) return LOADV(p + e);
    const int at = offset_of(e, d1, d2, d3, m1, m2, m3, s0, s1, s2, s3);
    if (mode == 1) return LOADV(p + at);
    if (mode == 2) return (floatV)(LOAD(p, at));
    float t[VW];
#pragma unroll
    for (int l = 0; l < VW; ++l) t[l] = LOAD(p, at + l * s3);
    return PRIV_TO_V(t);
  }
  float t[VW];
#pragma unroll
  for (int l = 0; l < VW; ++l) {
    const int el = min(e + l, n - 1);
    t[l] = LOAD(p, mode == 0 ? el : offset_of(el, d1, d2, d3, m1, m2, m3, s0, s1, s2, s3));
  }
  return PRIV_TO_V(t);
}

// The VW elements of an input from element offset `at` on (stride s), of which `valid` exist (the
// rest repeat the last): the row-tiled form, whose addresses are affine in the work-item id.
static inline floatV fetch_row(const global STORAGE* p, const int mode, const int at, const int s, const int valid) {
  if (valid == VW && mode <= 1) return LOADV(p + at);
  if (mode == 2) return (floatV)(LOAD(p, at));
  float t[VW];
#pragma unroll
  for (int l = 0; l < VW; ++l) t[l] = LOAD(p, at + min(l, valid - 1) * s);
  return PRIV_TO_V(t);
}

#define IN_PARAMS(k) \
  , const global STORAGE* in##k, const int off##k, const int st##k##_0, const int st##k##_1, const int st##k##_2, const int st##k##_3
#if ROWS
#define TENSOR(k) fetch_row(in##k + off##k, IN##k##_MODE, at##k + col * st##k##_3, st##k##_3, valid)
#define ROW_START(k) offset_of(r0, d1, d2, d3, m1, m2, m3, st##k##_0, st##k##_1, st##k##_2, st##k##_3)
#else
#define TENSOR(k) \
  fetch(in##k + off##k, IN##k##_MODE, fast, e, n, d1, d2, d3, m1, m2, m3, st##k##_0, st##k##_1, st##k##_2, st##k##_3)
#endif

// Operand of step k: a tensor input, a scalar argument, or nothing (unary).
#if STEPS >= 1 && STEP1_ARG == 1
#define OPERAND1 TENSOR(1)
#elif STEPS >= 1 && STEP1_ARG == 2
#define OPERAND1 ((floatV)(sc1))
#else
#define OPERAND1 v
#endif
#if STEPS >= 2 && STEP2_ARG == 1
#define OPERAND2 TENSOR(2)
#elif STEPS >= 2 && STEP2_ARG == 2
#define OPERAND2 ((floatV)(sc2))
#else
#define OPERAND2 v
#endif
#if STEPS >= 3 && STEP3_ARG == 1
#define OPERAND3 TENSOR(3)
#elif STEPS >= 3 && STEP3_ARG == 2
#define OPERAND3 ((floatV)(sc3))
#else
#define OPERAND3 v
#endif
#if STEPS >= 4 && STEP4_ARG == 1
#define OPERAND4 TENSOR(4)
#elif STEPS >= 4 && STEP4_ARG == 2
#define OPERAND4 ((floatV)(sc4))
#else
#define OPERAND4 v
#endif

// A chunk needs the row test when some input is addressed by coordinates.
#define ADDRESSED(k) (STEPS >= (k) && STEP##k##_ARG == 1 && IN##k##_MODE != 0)
#if VW > 1 && NDIM > 1 && (IN0_MODE != 0 || ADDRESSED(1) || ADDRESSED(2) || ADDRESSED(3) || ADDRESSED(4))
#define ROW_TEST 1
#else
#define ROW_TEST 0
#endif

__attribute__((reqd_work_group_size(WG, 1, 1)))
kernel void elementwise(const int n, const int d1, const int d2, const int d3, const ulong m1, const ulong m2,
                        const ulong m3, global STORAGE* y, const int y_off
                        IN_PARAMS(0)
#if STEPS >= 1 && STEP1_ARG == 1
                        IN_PARAMS(1)
#elif STEPS >= 1 && STEP1_ARG == 2
                        , const float sc1
#endif
#if STEPS >= 2 && STEP2_ARG == 1
                        IN_PARAMS(2)
#elif STEPS >= 2 && STEP2_ARG == 2
                        , const float sc2
#endif
#if STEPS >= 3 && STEP3_ARG == 1
                        IN_PARAMS(3)
#elif STEPS >= 3 && STEP3_ARG == 2
                        , const float sc3
#endif
#if STEPS >= 4 && STEP4_ARG == 1
                        IN_PARAMS(4)
#elif STEPS >= 4 && STEP4_ARG == 2
                        , const float sc4
#endif
) {
  const int lid = get_local_id(0);
#if ROWS
  const int tiles = ((d3 + VW - 1) / VW + WG * ITEMS - 1) / (WG * ITEMS);  // per row
  const int units = n / d3 * tiles;
#else
  const int chunks = (n + VW - 1) / VW;
  const int units = (chunks + WG * ITEMS - 1) / (WG * ITEMS);
#endif
#if GRID_STRIDE
  for (int g = get_group_id(0); g < units; g += get_num_groups(0)) {
#else
  {
    const int g = get_group_id(0);
#endif
#if ROWS
    // Row r of the output and where each input's row starts: once per group, not per vector.
    const int r = g / tiles;
    const int base = (g - r * tiles) * (WG * ITEMS);
    const int r0 = r * d3;
    const int at0 = ROW_START(0);
#if STEPS >= 1 && STEP1_ARG == 1
    const int at1 = ROW_START(1);
#endif
#if STEPS >= 2 && STEP2_ARG == 1
    const int at2 = ROW_START(2);
#endif
#if STEPS >= 3 && STEP3_ARG == 1
    const int at3 = ROW_START(3);
#endif
#if STEPS >= 4 && STEP4_ARG == 1
    const int at4 = ROW_START(4);
#endif
#else
    const int base = g * (WG * ITEMS);
#endif
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
#if CONTIG
      const int c = base + lid * ITEMS + j;
#else
      const int c = base + j * WG + lid;
#endif
#if ROWS
      const int col = c * VW;
      if (col >= d3) continue;
      const int e = r0 + col;
      const int valid = min(VW, d3 - col);
#else
      if (c >= chunks) continue;
      const int e = c * VW;
      const int valid = min(VW, n - e);
#if ROW_TEST
      const bool fast = valid == VW && (e - div_magic(e, m3) * d3) + VW <= d3;
#else
      const bool fast = valid == VW;
#endif
#endif
      floatV v = TENSOR(0);
#if STEPS >= 1
      const floatV b1 = OPERAND1;
      v = STEP_FN(STEP1_OP, STEP1_REV, v, b1);
#endif
#if STEPS >= 2
      const floatV b2 = OPERAND2;
      v = STEP_FN(STEP2_OP, STEP2_REV, v, b2);
#endif
#if STEPS >= 3
      const floatV b3 = OPERAND3;
      v = STEP_FN(STEP3_OP, STEP3_REV, v, b3);
#endif
#if STEPS >= 4
      const floatV b4 = OPERAND4;
      v = STEP_FN(STEP4_OP, STEP4_REV, v, b4);
#endif
      if (valid == VW) {
        STOREV(v, y + y_off + e);
      } else {
        float out[VW];
        V_TO_PRIV(v, out);
        for (int l = 0; l < valid; ++l) STORE(out[l], y + y_off, e + l);
      }
    }
  }
}
