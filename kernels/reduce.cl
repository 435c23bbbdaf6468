// Reductions (sum, max, min, argmax, argmin; mean and L2 norm through MAP/FINAL) of a tensor seen as
// (outer, length, inner): each output reduces `length` elements, contiguous (STRIDED 0: rows) or
// `inner` apart (STRIDED 1: columns). One launch is one stage: the reduced range may be split over
// SPLIT work-groups writing fp32 partials ([SPLIT][outer*inner]) that a later stage combines.
// The first stage may pass each input element through an elementwise prologue (prologue.cl).
// Files: storage.cl, reduce_vec.cl, elementwise_ops.cl, prologue.cl, reduce.cl. Launch: global
// (groups*WGS), local (WGS), with groups = SPLIT * ceil(outer/ROWS) (rows) or SPLIT * ceil(inner/(WGS*VW*UNROLL)) * ceil(outer/ROWS).

// ---- Problem (set by the host, not tuned) ----
#ifndef RED_OP
#define RED_OP 0  // combine: 0 sum, 1 max, 2 min, 3 argmax, 4 argmin (NaN wins max/min/arg*)
#endif
#ifndef SQUARE
#define SQUARE 0  // 1: reduce x*x instead of x (first stage of an L2 norm)
#endif
#ifndef FINAL
#define FINAL 0  // applied to the result of the last stage: 0 none, 1 times `scale` (mean), 2 sqrt (L2)
#endif
#ifndef IN_F32
#define IN_F32 0  // 1: the input is an fp32 partial buffer (with int indices for arg ops), not STORAGE
#endif
#ifndef OUT_F32
#define OUT_F32 0  // 1: write fp32 partials (and int indices); 0: STORAGE values or long indices
#endif
#ifndef STRIDED
#define STRIDED 0  // 0: reduced elements contiguous; 1: reduced elements `inner` apart
#endif

// ---- Tunables (and WGS, VW of reduce_vec.cl) ----
#ifndef UNROLL
#define UNROLL 2  // vectors per work-item per step: independent accumulators (rows) or columns (STRIDED)
#endif
#ifndef SPLIT
#define SPLIT 1  // work-groups sharing one reduced range; > 1 writes partials for a second pass
#endif
#ifndef ROWS
#define ROWS 1  // outer rows per work-group, processed in turn (fewer, longer work-groups for CPUs)
#endif

#define ARG (RED_OP >= 3)

#if IN_F32
#define IN_T float
#define IN_LOAD(p, e) ((p)[e])
#define IN_LOADV(p, e) LOADV_F32(p, e)
#else
#define IN_T STORAGE
#define IN_LOAD(p, e) LOAD(p, e)
#define IN_LOADV(p, e) LOADV(p, e)
#endif

#if OUT_F32
#define OUT_T float
#elif ARG
#define OUT_T long
#else
#define OUT_T STORAGE
#endif

#if SQUARE
#define MAP(x) ((x) * (x))
#else
#define MAP(x) (x)
#endif

#if RED_OP == 0
#define IDENT 0.0f
#define COMBINE(a, b) ((a) + (b))
#define FOLD_LANES(v) sum_lanes(v)
#elif RED_OP == 1 || RED_OP == 3
#define IDENT (-INFINITY)
#define COMBINE(a, b) MAX_NAN(a, b)
#define COMBINE_FAST(a, x) MAX_FAST(a, x)
#define FOLD_LANES(v) max_lanes(v)
#define BETTER(a, b) ((a) > (b))
#else
#define IDENT INFINITY
#define COMBINE(a, b) MIN_NAN(a, b)
#define COMBINE_FAST(a, x) MIN_FAST(a, x)
#define FOLD_LANES(v) min_lanes(v)
#define BETTER(a, b) ((a) < (b))
#endif
#define TRACK_NAN (RED_OP == 1 || RED_OP == 2)  // max/min: NaN masks beside the accumulators

#if ARG
// Whether candidate (v2, i2) beats (v1, i1): NaN beats everything, then the larger (argmax) or
// smaller (argmin) value, then the smaller index (PyTorch: the first occurrence).
#define TAKES(v1, i1, v2, i2)                                                  \
  ((isnan(v2) & (!isnan(v1) | ((i2) < (i1)))) |                                \
   (!isnan(v1) & !isnan(v2) & (BETTER(v2, v1) | (((v2) == (v1)) & ((i2) < (i1))))))
static inline void arg_merge(float* v1, int* i1, const float v2, const int i2) {
  if (TAKES(*v1, *i1, v2, i2)) {
    *v1 = v2;
    *i1 = i2;
  }
}
#endif

// Accumulator u of a work-item: acc (value), for max/min a NaN mask, for argmax/argmin the index
// of acc and the first NaN index. Elements reach an accumulator in increasing index order, so a
// strict comparison keeps the first occurrence; its first element is always taken (so that an
// all -Inf range still names an index).
#define ACC_DECLARE()                 \
  floatV acc[UNROLL];                 \
  ACC_DECLARE_MASKS()
#if ARG
#define ACC_DECLARE_MASKS() intV idx[UNROLL], nidx[UNROLL];
#define ACC_INIT(u)              \
  acc[u] = (floatV)(IDENT);      \
  idx[u] = (intV)(INT_MAX);      \
  nidx[u] = (intV)(INT_MAX);
#define ACC_ADD(u, x, ix)                                                    \
  {                                                                          \
    const intV t_ = BETTER(x, acc[u]) | (idx[u] == INT_MAX);                 \
    acc[u] = t_ ? (x) : acc[u];                                              \
    idx[u] = t_ ? (ix) : idx[u];                                             \
    nidx[u] = min(nidx[u], NAN_MASK(x) ? (ix) : (intV)(INT_MAX));            \
  }
#elif TRACK_NAN
#define ACC_DECLARE_MASKS() intV bad[UNROLL];
#define ACC_INIT(u)         \
  acc[u] = (floatV)(IDENT); \
  bad[u] = (intV)(0);
#define ACC_ADD(u, x, ix)                  \
  {                                        \
    acc[u] = COMBINE_FAST(acc[u], x);      \
    bad[u] |= NAN_MASK(x);                 \
  }
#else
#define ACC_DECLARE_MASKS()
#define ACC_INIT(u) acc[u] = (floatV)(IDENT);
#define ACC_ADD(u, x, ix) acc[u] += (x);
#endif

// Lane l of a value or index vector.
static inline float lane_value(const floatV acc, const int l) {
  float lv[VW];
  SPILL_LANES(acc, lv);
  return lv[l];
}
static inline int lane_index(const intV idx, const int l) {
  int li[VW];
#if VW == 1
  li[0] = idx;
#else
  CAT(vstore, VW)(idx, 0, li);
#endif
  return li[l];
}

// The result of one reduced range, on its way out: finalised and stored in the output type.
static inline void write_result(global OUT_T* out, const long out_offset, global int* out_idx, const long o,
                                const float v, const int i, const float scale) {
#if OUT_F32
  out[out_offset + o] = v;
#if ARG
  out_idx[o] = i;
#endif
#elif ARG
  out[out_offset + o] = (long)i;
#else
#if FINAL == 1
  const float r = v * scale;
#elif FINAL == 2
  const float r = sqrt(v);
#else
  const float r = v;
#endif
  STORE(r, out, out_offset + o);
#endif
}

// Index (within the reduced range) of element `k` of the range at relative position `pos`.
#if ARG && IN_F32
#define INDEX_OF(pos, k) (in_idx[pos])
#else
#define INDEX_OF(pos, k) (k)
#endif

#if ARG && IN_F32 && VW > 1
#error "partial (value, index) inputs are read with VW == 1"
#endif

// Folds lane l of accumulator u into the scalar (best, best_i).
static inline void fold_lane(float* best, int* best_i, const float v, const int i, const int nan_i, const int bad) {
#if ARG
  arg_merge(best, best_i, v, i);
  if (nan_i != INT_MAX) arg_merge(best, best_i, NAN, nan_i);
#else
  *best = COMBINE(*best, bad ? NAN : v);
#endif
}
#if ARG
#define FOLD_LANE(u, l, best, best_i) \
  fold_lane(&best, &best_i, lane_value(acc[u], l), lane_index(idx[u], l), lane_index(nidx[u], l), 0)
#elif TRACK_NAN
#define FOLD_LANE(u, l, best, best_i) \
  fold_lane(&best, &best_i, lane_value(acc[u], l), 0, 0, lane_index(bad[u], l))
#else
#define FOLD_LANE(u, l, best, best_i) fold_lane(&best, &best_i, lane_value(acc[u], l), 0, 0, 0)
#endif

#if !STRIDED
// ---- Rows: WGS work-items stride over a contiguous range with VW-vectors, then combine. ----
// Each sweep is one loop whose last, ragged vector goes element-wise (see softmax.cl: PoCL).
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void reduce(const int outer, const int length, const int inner, const int chunk, const float scale,
                   const global IN_T* restrict in, const long in_offset, const global int* restrict in_idx,
                   global OUT_T* restrict out, const long out_offset, global int* restrict out_idx PROLOGUE_PARAMS) {
  const int lid = get_local_id(0);
  const int split = get_group_id(0) % SPLIT;
  const int row0 = (get_group_id(0) / SPLIT) * ROWS;
  const int begin = min(length, split * chunk);  // chunk is a multiple of VW
  const int end = min(length, begin + chunk);
  const int nvec = (end - begin) / VW;
#if WGS > 1
  local float lval[WGS];
#if ARG
  local int lidx[WGS];
#endif
#endif
  // A trip count the same for every work-item (no break): PoCL needs barriers in uniform loops.
  const int rows = min(ROWS, outer - row0);
  for (int r = 0; r < rows; ++r) {
    const int row = row0 + r;
    const long rel = (long)row * length;
    const global IN_T* src = in + in_offset + rel;
    ACC_DECLARE()
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      ACC_INIT(u)
    }
    float best = IDENT;  // the ragged last vector, element-wise
    int best_i = INT_MAX;
    int v = lid;
    for (; v + (UNROLL - 1) * WGS < nvec; v += UNROLL * WGS) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int k = begin + (v + u * WGS) * VW;
        const floatV x = MAP(PROLOGUE_V(IN_LOADV(src, k), rel + k));
        ACC_ADD(u, x, (intV)(INDEX_OF(rel + k, k)) + LANE_IDS)
      }
    }
    for (; v * VW < end - begin; v += WGS) {
      const int k = begin + v * VW;
      if (v < nvec) {
        const floatV x = MAP(PROLOGUE_V(IN_LOADV(src, k), rel + k));
        ACC_ADD(0, x, (intV)(INDEX_OF(rel + k, k)) + LANE_IDS)
      } else {
        for (int e = k; e < end; ++e) {
#if ARG
          arg_merge(&best, &best_i, MAP(PROLOGUE_S(IN_LOAD(src, e), rel + e)), INDEX_OF(rel + e, e));
#else
          best = COMBINE(best, MAP(PROLOGUE_S(IN_LOAD(src, e), rel + e)));
#endif
        }
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int l = 0; l < VW; ++l) FOLD_LANE(u, l, best, best_i);
    }
#if WGS > 1
    lval[lid] = best;
#if ARG
    lidx[lid] = best_i;
#endif
    for (int h = WGS / 2; h > 0; h >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < h) {
#if ARG
        float bv = lval[lid];
        int bi = lidx[lid];
        arg_merge(&bv, &bi, lval[lid + h], lidx[lid + h]);
        lval[lid] = bv;
        lidx[lid] = bi;
#else
        lval[lid] = COMBINE(lval[lid], lval[lid + h]);
#endif
      }
    }
    if (lid == 0) {
      best = lval[0];
#if ARG
      best_i = lidx[0];
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // lval is rewritten for the next row
#endif
    if (lid == 0) write_result(out, out_offset, out_idx, (long)split * outer + row, best, best_i, scale);
  }
}

#else
// ---- Columns: each work-item owns UNROLL VW-vectors of adjacent columns and walks the range. ----
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void reduce(const int outer, const int length, const int inner, const int chunk, const float scale,
                   const global IN_T* restrict in, const long in_offset, const global int* restrict in_idx,
                   global OUT_T* restrict out, const long out_offset, global int* restrict out_idx PROLOGUE_PARAMS) {
  const int lid = get_local_id(0);
  const int cols_per_group = WGS * VW * UNROLL;
  const int col_groups = (inner + cols_per_group - 1) / cols_per_group;
  const int split = get_group_id(0) % SPLIT;
  const int rest = get_group_id(0) / SPLIT;
  const int col_block = rest % col_groups;
  const int row0 = (rest / col_groups) * ROWS;
  const int begin = min(length, split * chunk);
  const int end = min(length, begin + chunk);
  // Column of vector u: consecutive work-items read consecutive vectors (coalesced on GPUs).
  const int c0 = (col_block * WGS * UNROLL + lid) * VW;
  const int c_last = c0 + (UNROLL - 1) * WGS * VW;
  const int rows = min(ROWS, outer - row0);
  for (int r = 0; r < rows; ++r) {
    const int row = row0 + r;
    const long rel_row = (long)row * length * inner;
    const global IN_T* src = in + in_offset + rel_row;
    const long o_row = ((long)split * outer + row) * inner;
    if (c_last + VW <= inner) {
      ACC_DECLARE()
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        ACC_INIT(u)
      }
      for (int k = begin; k < end; ++k) {
        const long e = (long)k * inner;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const int c = c0 + u * WGS * VW;
          const floatV x = MAP(PROLOGUE_V(IN_LOADV(src, e + c), rel_row + e + c));
          ACC_ADD(u, x, (intV)(INDEX_OF(rel_row + e + c, k)))
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
        for (int l = 0; l < VW; ++l) {
          float best = IDENT;
          int best_i = INT_MAX;
          FOLD_LANE(u, l, best, best_i);
          write_result(out, out_offset, out_idx, o_row + c0 + u * WGS * VW + l, best, best_i, scale);
        }
      }
    } else {
      // The ragged right edge: one column at a time.
      for (int u = 0; u < UNROLL; ++u) {
        const int cu = c0 + u * WGS * VW;
        for (int c = cu; c < min(inner, cu + VW); ++c) {
          float best = IDENT;
          int best_i = INT_MAX;
          for (int k = begin; k < end; ++k) {
            const long e = (long)k * inner + c;
            const float x = MAP(PROLOGUE_S(IN_LOAD(src, e), rel_row + e));
#if ARG
            arg_merge(&best, &best_i, x, INDEX_OF(rel_row + e, k));
#else
            best = COMBINE(best, x);
#endif
          }
          write_result(out, out_offset, out_idx, o_row + c, best, best_i, scale);
        }
      }
    }
  }
}
#endif
