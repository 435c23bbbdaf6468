// The row-wise steps of scaled_dot_product_attention between its GEMMs (csrc/ops/attention_ops.cpp),
// each one pass over the [rows, n] scores instead of a chain of ops over them:
//   forward:  S -> P~ = dropout(softmax(S)) in place, and lse = logsumexp(S) per row
//   backward: S, dP~ -> P~ (into S) and dS = P (dP~ * mask * scale - D) (into dP~), where
//             P = exp(S - lse) and D = rowsum(dP~ * P~), the softmax backward's rowsum
//
// S is dense, row r at r * n; slot A is its storage type, the arithmetic is float. The dropout mask
// is native_dropout's for a dense [rows, n] tensor: element e = r * n + c is kept when number e % 4
// of counter base + e / 4 is below `keep` (plain_philox.cl), so the backward draws the forward's
// mask again and SDPA's math path, given the same generator state, draws the same one. A row whose
// scores are all -inf (a mask that excludes every key) has weights 0 and lse -inf, as PyTorch's math
// path gives them. `dropout` 0: no mask (keep and scale unused).
//
// The host launches 64-item work-groups (one per row on a GPU; PlainLaunch::run's group size).

// The quads of counters that cover elements [first, first + n): quad q holds elements 4q .. 4q + 3.
inline long first_quad(long first) { return first / 4; }
inline long quad_count(long first, long n) { return (first + n + 3) / 4 - first / 4; }

// A row is walked by `items` work items, item `lid` taking every items-th column (or quad), so that a
// GPU's warp reads consecutive elements; on a CPU (PLAIN_CPU) one item walks a whole row, with no
// group and no barrier, and its loops stream (see FOR_EACH_INDEX in plain_common.cl).
#ifdef PLAIN_CPU
#define ROW_ITEMS 1
#define FOR_EACH_ROW(row, rows) FOR_EACH_INDEX(row, rows)
#define ROW_KERNEL kernel
#else
#define ROW_ITEMS 64
#define FOR_EACH_ROW(row, rows) for (long row = get_group_id(0); row < (rows); row += get_num_groups(0))
#define ROW_KERNEL kernel __attribute__((reqd_work_group_size(ROW_ITEMS, 1, 1)))
#endif

// The running max and sum of exp(v - max) of this item's columns (the online softmax).
inline float2 partial_max_sum(global const A_S* r, long n, int lid) {
  float m = -INFINITY, sum = 0.0f;
  for (long c = lid; c < n; c += ROW_ITEMS) {
    const float v = (float)A_LOAD(r, c);
    if (v > m) {
      sum = sum * exp(m - v) + 1.0f;  // exp(-inf) = 0 for the first finite value
      m = v;
    } else if (v > -INFINITY) {
      sum += exp(v - m);
    }
  }
  return (float2)(m, sum);
}

// The row's logsumexp from every item's partial (GPU: through local memory; every item gets it).
inline float row_logsumexp(float2 partial, local float* group_max, local float* group_sum, int lid) {
#if ROW_ITEMS > 1
  group_max[lid] = partial.x;
  group_sum[lid] = partial.y;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = ROW_ITEMS / 2; step > 0; step /= 2) {
    if (lid < step) {
      const float ma = group_max[lid], mb = group_max[lid + step];
      const float mx = fmax(ma, mb);
      if (mx > -INFINITY) {
        group_sum[lid] = group_sum[lid] * exp(ma - mx) + group_sum[lid + step] * exp(mb - mx);
        group_max[lid] = mx;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  partial = (float2)(group_max[0], group_sum[0]);
  barrier(CLK_LOCAL_MEM_FENCE);  // every item has read [0] before the next row writes its partial
#endif
  return partial.x > -INFINITY ? partial.x + log(partial.y) : -INFINITY;
}

// The sum over the row of every item's `partial` (GPU: through local memory; every item gets it).
inline float row_sum(float partial, local float* group_sum, int lid) {
#if ROW_ITEMS > 1
  group_sum[lid] = partial;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = ROW_ITEMS / 2; step > 0; step /= 2) {
    if (lid < step) group_sum[lid] += group_sum[lid + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  partial = group_sum[0];
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  return partial;
}

// Walks this item's quads of the row that starts at element `first`: for each of its columns c,
// p = exp(S[c] - lse) (0 on a row that is all -inf) and k, the dropout factor (scale or 0; 1
// without dropout), from one Philox draw per quad.
#define FOR_EACH_WEIGHT(r, first, n, lid, row_lse, c, p, k)                                          \
  for (long q_ = first_quad(first) + (lid), q_end_ = first_quad(first) + quad_count(first, n); q_ < q_end_; \
       q_ += ROW_ITEMS) {                                                                              \
    const uint4 r4_ = dropout ? philox(seed, base + (ulong)q_) : (uint4)(0u);                          \
    const uint draws_[4] = {r4_.x, r4_.y, r4_.z, r4_.w};                                               \
    for (int j_ = 0; j_ < 4; ++j_) {                                                                   \
      const long c = 4 * q_ + j_ - (first);                                                            \
      if (c < 0 || c >= (n)) continue;                                                                 \
      const float p = (row_lse) > -INFINITY ? exp((float)A_LOAD(r, c) - (row_lse)) : 0.0f;             \
      const float k = !dropout ? 1.0f : (uniform01(draws_[j_]) < keep ? scale : 0.0f);
#define FOR_EACH_WEIGHT_END \
  }                         \
  }

// One row per work-group (GPU) or work item (CPU): lse, then the dropped weights in place of S.
ROW_KERNEL void attention_softmax_dropout(const long rows, const long n, global A_S* s_base, const long s_at,
                                          global float* lse_base, const long lse_at, const ulong seed,
                                          const ulong base, const float keep, const float scale, const int dropout) {
  global A_S* s = s_base + s_at;
  global float* lse = lse_base + lse_at;
  local float group_max[ROW_ITEMS];
  local float group_sum[ROW_ITEMS];
  const int lid = ROW_ITEMS > 1 ? (int)get_local_id(0) : 0;
  FOR_EACH_ROW(row, rows) {
    global A_S* r = s + row * n;
    const float row_lse = row_logsumexp(partial_max_sum(r, n, lid), group_max, group_sum, lid);
    if (lid == 0) lse[row] = row_lse;
    FOR_EACH_WEIGHT(r, row * n, n, lid, row_lse, c, p, k)
    A_STORE(r, c, TO_A(p * k));
    FOR_EACH_WEIGHT_END
  }
}

// The same rows: pass 1 D = rowsum(dP~ * P~) (the softmax backward's rowsum, exact in fp32; from the
// rounded 16-bit output it would lose digits); pass 2 P~ into S and dS into dP~ (the draws and
// exp(S - lse) recomputed, not stored).
ROW_KERNEL void attention_softmax_dropout_backward(const long rows, const long n, global A_S* s_base,
                                                   const long s_at, global A_S* dp_base, const long dp_at,
                                                   global const float* lse_base, const long lse_at,
                                                   const ulong seed, const ulong base, const float keep,
                                                   const float scale, const int dropout) {
  global A_S* s = s_base + s_at;
  global A_S* dp = dp_base + dp_at;
  global const float* lse = lse_base + lse_at;
  local float group_sum[ROW_ITEMS];
  const int lid = ROW_ITEMS > 1 ? (int)get_local_id(0) : 0;
  FOR_EACH_ROW(row, rows) {
    global A_S* sr = s + row * n;
    global A_S* dr = dp + row * n;
    const float row_lse = lse[row];
    float partial = 0.0f;
    FOR_EACH_WEIGHT(sr, row * n, n, lid, row_lse, c, p, k)
    partial += (float)A_LOAD(dr, c) * p * k;
    FOR_EACH_WEIGHT_END
    const float d = row_sum(partial, group_sum, lid);
    FOR_EACH_WEIGHT(sr, row * n, n, lid, row_lse, c, p, k)
    const float grad_dropped = (float)A_LOAD(dr, c);
    A_STORE(sr, c, TO_A(p * k));
    A_STORE(dr, c, TO_A(p * (grad_dropped * k - d)));
    FOR_EACH_WEIGHT_END
  }
}
