// Reductions (sum, max, min, argmax, argmin; mean and L2 norm through MAP/FINAL) of a tensor seen as
// (outer, length, inner): each output reduces `length` elements, contiguous (STRIDED 0: rows) or
// `inner` apart (STRIDED 1: columns). One launch is one stage: the reduced range may be split over
// SPLIT work-groups writing fp32 partials ([SPLIT][outer*inner]) that a later stage combines.
// Files: storage.cl, reduce_vec.cl, reduce.cl. Launch: global (groups*WGS), local (WGS), with
// groups = SPLIT * ceil(outer/ROWS) (rows) or SPLIT * ceil(inner/(WGS*VW*UNROLL)) * ceil(outer/ROWS).

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
#define FOLD_LANES(v) max_lanes(v)
#define BETTER(a, b) ((a) > (b))
#else
#define IDENT INFINITY
#define COMBINE(a, b) MIN_NAN(a, b)
#define FOLD_LANES(v) min_lanes(v)
#define BETTER(a, b) ((a) < (b))
#endif

#if ARG
// Mask (lane-wise on vectors) of where candidate (v2, i2) beats (v1, i1): NaN beats everything,
// then the larger (argmax) or smaller (argmin) value, then the smaller index (PyTorch: the first).
#define TAKES(v1, i1, v2, i2)                                                  \
  ((isnan(v2) & (!isnan(v1) | ((i2) < (i1)))) |                                \
   (!isnan(v1) & !isnan(v2) & (BETTER(v2, v1) | (((v2) == (v1)) & ((i2) < (i1))))))
#define ARG_UPDATE(v1, i1, v2, i2)      \
  {                                     \
    const intV t_ = TAKES(v1, i1, v2, i2); \
    v1 = t_ ? (v2) : (v1);              \
    i1 = t_ ? (i2) : (i1);              \
  }
// Scalar form for folds and the work-group combine.
static inline void arg_merge(float* v1, int* i1, const float v2, const int i2) {
  if (TAKES(*v1, *i1, v2, i2)) {
    *v1 = v2;
    *i1 = i2;
  }
}
#endif

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

#if !STRIDED
// ---- Rows: WGS work-items stride over a contiguous range with VW-vectors, then combine. ----
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void reduce(const int outer, const int length, const int inner, const int chunk, const float scale,
                   const global IN_T* restrict in, const long in_offset, const global int* restrict in_idx,
                   global OUT_T* restrict out, const long out_offset, global int* restrict out_idx) {
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
    floatV acc[UNROLL];
#if ARG
    intV idx[UNROLL];
#endif
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      acc[u] = (floatV)(IDENT);
#if ARG
      idx[u] = (intV)(INT_MAX);
#endif
    }
    int v = lid;
    for (; v + (UNROLL - 1) * WGS < nvec; v += UNROLL * WGS) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int k = begin + (v + u * WGS) * VW;
        const floatV x = MAP(IN_LOADV(src, k));
#if ARG
#if IN_F32 && VW > 1
#error "partial inputs are read with VW == 1"
#endif
        const intV ix = (intV)(INDEX_OF(rel + k, k)) + LANE_IDS;
        ARG_UPDATE(acc[u], idx[u], x, ix);
#else
        acc[u] = COMBINE(acc[u], x);
#endif
      }
    }
    for (; v < nvec; v += WGS) {
      const int k = begin + v * VW;
      const floatV x = MAP(IN_LOADV(src, k));
#if ARG
      const intV ix = (intV)(INDEX_OF(rel + k, k)) + LANE_IDS;
      ARG_UPDATE(acc[0], idx[0], x, ix);
#else
      acc[0] = COMBINE(acc[0], x);
#endif
    }
    // Fold the accumulators, then their lanes, then the scalar tail (fewer than VW elements).
#pragma unroll
    for (int u = 1; u < UNROLL; ++u) {
#if ARG
      ARG_UPDATE(acc[0], idx[0], acc[u], idx[u]);
#else
      acc[0] = COMBINE(acc[0], acc[u]);
#endif
    }
#if ARG
    float best = IDENT;
    int best_i = INT_MAX;
    {
      float lv[VW];
      int li[VW];
      SPILL_LANES(acc[0], lv);
#if VW == 1
      li[0] = idx[0];
#else
      CAT(vstore, VW)(idx[0], 0, li);
#endif
#pragma unroll
      for (int l = 0; l < VW; ++l) arg_merge(&best, &best_i, lv[l], li[l]);
    }
    for (int k = begin + nvec * VW + lid; k < end; k += WGS) {
      arg_merge(&best, &best_i, MAP(IN_LOAD(src, k)), INDEX_OF(rel + k, k));
    }
#else
    float best = FOLD_LANES(acc[0]);
    for (int k = begin + nvec * VW + lid; k < end; k += WGS) best = COMBINE(best, MAP(IN_LOAD(src, k)));
#endif
#if WGS > 1
    lval[lid] = best;
#if ARG
    lidx[lid] = best_i;
#endif
    for (int s = WGS / 2; s > 0; s >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid < s) {
#if ARG
        float bv = lval[lid];
        int bi = lidx[lid];
        arg_merge(&bv, &bi, lval[lid + s], lidx[lid + s]);
        lval[lid] = bv;
        lidx[lid] = bi;
#else
        lval[lid] = COMBINE(lval[lid], lval[lid + s]);
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
#if !ARG
    const int best_i = 0;
#endif
    if (lid == 0) write_result(out, out_offset, out_idx, (long)split * outer + row, best, best_i, scale);
  }
}

#else
// ---- Columns: each work-item owns UNROLL VW-vectors of adjacent columns and walks the range. ----
__attribute__((reqd_work_group_size(WGS, 1, 1)))
kernel void reduce(const int outer, const int length, const int inner, const int chunk, const float scale,
                   const global IN_T* restrict in, const long in_offset, const global int* restrict in_idx,
                   global OUT_T* restrict out, const long out_offset, global int* restrict out_idx) {
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
      floatV acc[UNROLL];
#if ARG
      intV idx[UNROLL];
#endif
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        acc[u] = (floatV)(IDENT);
#if ARG
        idx[u] = (intV)(INT_MAX);
#endif
      }
      for (int k = begin; k < end; ++k) {
        const long e = (long)k * inner;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const int c = c0 + u * WGS * VW;
          const floatV x = MAP(IN_LOADV(src, e + c));
#if ARG
          ARG_UPDATE(acc[u], idx[u], x, (intV)(INDEX_OF(rel_row + e + c, k)));
#else
          acc[u] = COMBINE(acc[u], x);
#endif
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        float lv[VW];
        SPILL_LANES(acc[u], lv);
#if ARG
        int li[VW];
#if VW == 1
        li[0] = idx[u];
#else
        CAT(vstore, VW)(idx[u], 0, li);
#endif
#endif
#pragma unroll
        for (int l = 0; l < VW; ++l) {
#if ARG
          write_result(out, out_offset, out_idx, o_row + c0 + u * WGS * VW + l, lv[l], li[l], scale);
#else
          write_result(out, out_offset, out_idx, o_row + c0 + u * WGS * VW + l, lv[l], 0, scale);
#endif
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
            const float x = MAP(IN_LOAD(src, e));
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
