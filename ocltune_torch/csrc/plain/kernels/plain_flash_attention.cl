// Fused (flash-style) scaled_dot_product_attention: the [B, H, L, S] scores never reach memory
// (csrc/ops/flash_attention.cpp launches these; decision 0064).
//   forward:  per (batch*head, block of FA_BM query rows) a loop over blocks of FA_BN keys held in
//             local memory, the online softmax (running max m and sum l per row), O = acc / l and
//             lse = m + log(l) (fp32) written once;
//   backward (FlashAttention-2): D = rowsum(dO * O) per row, then per key block dK and dV over the
//             query blocks, and per query block dQ over the key blocks, each recomputing P from q, k
//             and lse. No atomics: every element of a gradient is summed by one work item in a fixed
//             order, so results are the same run to run.
//   S = scale Q K^T + bias (causal: col > row masked, top-left as PyTorch)   P = exp(S - lse)
//   P~ = dropout(P)   O = P~ V   dV = P~^T dO   dP~ = dO V^T   dS = P (dP~ k - D)
//   dQ = scale dS K   dK = scale dS^T Q
//
// Types: slot A is q, k, v, dO and the gradients (fp32, fp16 or bf16 storage), slot O the output
// (A's type, or float where the backward of a 16-bit call recomputes O for D: see rowsum below),
// slot M the mask (bool: true = may attend, or A's type: added to S); arithmetic and accumulation
// are fp32.
// Tensors are read through their strides (Layout4, [B, H, rows, cols] in elements), so transposed
// [B, L, H, E] views and a mask broadcast to [B, H, L, S] (stride 0) are never copied.
//
// The dropout mask is native_dropout's for a dense [B*H, L, S] tensor, as plain_attention.cl draws
// it: element e = (bh * L + row) * S + col is kept when number e % 4 of Philox counter base + e / 4
// is below `keep`; forward and backward draw the same mask, and so does the GEMM path.
//
// Compile-time: FA_BM, FA_BN (block sizes, multiples of 8, at most 64), FA_EP and FA_EVP (the head
// dims E and Ev padded with zeros to a multiple of FA_VEC), FA_VEC (4 or 8, the float vector of the
// dot products and accumulators: explicit vectors are what a CPU compiler (PoCL) turns into SIMD; on a
// GPU they are a wide local load). The host chooses them (flash_attention.cpp, flash_blocks).
//
// Work-groups of 64 items (PlainLaunch's size), looping over tiles when the grid is capped. Inside a
// tile the items form an 8 x 8 grid: (ir, ic) computes scores of rows ir + i*8 and of the FA_BN / 8
// consecutive keys from ic * FA_BN / 8 (consecutive, so one Philox draw serves four), and owns the
// accumulator vectors ic + c*8 of its rows. A tensor-core variant (mma/wgmma, cl_intel_subgroup_matrix,
// cl_arm_matrix_multiply) would replace TILE_DOTS and the accumulations of step C with matrix
// instructions on the same tiles.

#define FA_ITEMS 64
#define FA_TR 8  // item rows of a tile
#define FA_TC 8  // item columns of a tile
#define FA_MR (FA_BM / FA_TR)  // query rows per item
#define FA_KR (FA_BN / FA_TR)  // key rows per item (dK and dV)
#define FA_NR (FA_BN / FA_TC)  // keys per item in a score tile
#define FA_NV_E (FA_EP / FA_VEC)   // vectors per row of q, k
#define FA_NV_EV (FA_EVP / FA_VEC)  // vectors per row of v, o
#define FA_CV_E ((FA_NV_E + FA_TC - 1) / FA_TC)  // accumulator vectors per row and item
#define FA_CV_EV ((FA_NV_EV + FA_TC - 1) / FA_TC)

#define FA_CAT_(a, b) a##b
#define FA_CAT(a, b) FA_CAT_(a, b)
#define VF FA_CAT(float, FA_VEC)
#define VLOAD(i, p) FA_CAT(vload, FA_VEC)(i, p)
#define VSTORE(v, i, p) FA_CAT(vstore, FA_VEC)(v, i, p)

#define FA_KERNEL kernel __attribute__((reqd_work_group_size(FA_ITEMS, 1, 1)))

// The problem's sizes: batch, heads, query rows, keys, head dims of q/k and of v.
typedef struct {
  long b, h, l, s, e, ev;
} Dims;

// A [B, H, rows, cols] tensor: the element offset of its first element and its strides (elements;
// 0 for a broadcast dim).
typedef struct {
  long offset;
  long stride[4];
} Layout4;

inline long at_of(const Layout4 t, long b, long h, long row, long col) {
  return t.offset + b * t.stride[0] + h * t.stride[1] + row * t.stride[2] + col * t.stride[3];
}

inline float hsum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }
#if FA_VEC == 8
inline float hsum(float8 v) { return hsum4(v.lo + v.hi); }
#else
inline float hsum(float4 v) { return hsum4(v); }
#endif

// Rows [row0, row0 + tile_rows) of head (b, h) of x ([.., rows, cols]) as fp32 into tile
// [tile_rows][width]; rows past `rows` and columns past `cols` are 0, so padded lanes add nothing.
inline void load_tile(local float* tile, const int tile_rows, const int width, global const A_S* x,
                      const Layout4 t, long b, long h, long row0, long rows, long cols, int lid) {
  for (int i = lid; i < tile_rows * width; i += FA_ITEMS) {
    const int r = i / width, c = i - r * width;
    tile[i] = (row0 + r < rows && c < cols) ? (float)A_LOAD(x, at_of(t, b, h, row0 + r, c)) : 0.0f;
  }
}

// The dropout factor of element e (drop_scale or 0) from the draw that covers it; `draws` keeps the
// last counter's four numbers, so a walk over consecutive elements draws once per four.
typedef struct {
  long quad;
  uint4 r;
} Draws;

inline float drop_factor(Draws* draws, ulong seed, ulong base, long e, float keep, float drop_scale) {
  const long quad = e >> 2;
  if (quad != draws->quad) {
    draws->quad = quad;
    draws->r = philox(seed, base + (ulong)quad);
  }
  const int j = (int)(e & 3);
  const uint x = j == 0 ? draws->r.x : j == 1 ? draws->r.y : j == 2 ? draws->r.z : draws->r.w;
  return uniform01(x) < keep ? drop_scale : 0.0f;
}

// out[i][j] = dot(a row ir + i*FA_TR, b row ic*FA_NR + j) over `nvec` vectors of rows `width` wide:
// the item's micro-tile of A B^T, its operands loaded once per vector step.
#define TILE_DOTS(out, a, b, nvec, width)                                                  \
  {                                                                                        \
    VF acc_[FA_MR][FA_NR];                                                                 \
    for (int i_ = 0; i_ < FA_MR; ++i_)                                                     \
      for (int j_ = 0; j_ < FA_NR; ++j_) acc_[i_][j_] = (VF)(0.0f);                        \
    for (int x_ = 0; x_ < (nvec); ++x_) {                                                  \
      VF a_[FA_MR], b_[FA_NR];                                                             \
      for (int i_ = 0; i_ < FA_MR; ++i_) a_[i_] = VLOAD(x_, (a) + (ir + i_ * FA_TR) * (width)); \
      for (int j_ = 0; j_ < FA_NR; ++j_) b_[j_] = VLOAD(x_, (b) + (ic * FA_NR + j_) * (width)); \
      for (int i_ = 0; i_ < FA_MR; ++i_)                                                   \
        for (int j_ = 0; j_ < FA_NR; ++j_) acc_[i_][j_] = fma(a_[i_], b_[j_], acc_[i_][j_]); \
    }                                                                                      \
    for (int i_ = 0; i_ < FA_MR; ++i_)                                                     \
      for (int j_ = 0; j_ < FA_NR; ++j_) out[i_][j_] = hsum(acc_[i_][j_]);                 \
  }

// The score of (row, col) from the scaled product `dot`: the mask added (a bool mask: -inf where
// false), causal positions and padding (row or col outside the problem) -inf.
inline float score_of(float dot, const Dims d, long b, long h, long row, long col, global const M_S* mask,
                      const Layout4 ml, int has_mask, int causal, float scale) {
  if (row >= d.l || col >= d.s || (causal && col > row)) return -INFINITY;
  float s = scale * dot;
  if (has_mask) {
#if M_BOOL
    if (!M_LOAD(mask, at_of(ml, b, h, row, col))) s = -INFINITY;
#else
    s += (float)M_LOAD(mask, at_of(ml, b, h, row, col));
#endif
  }
  return s;
}

// Output rows (the item's rows ir + i*FA_TR of acc, scaled by their factor) into x at [row0 + ...]
// through store(p, i, float value).
#define FA_STORE_A(p, i, v) A_STORE(p, i, TO_A(v))
#define FA_STORE_O(p, i, v) O_STORE(p, i, TO_O(v))
#define STORE_ROWS(x, t, acc, nrows_item, row_stride_items, factor_of, row0, rows, cols, cv, store) \
  for (int i_ = 0; i_ < (nrows_item); ++i_) {                                              \
    const int r_ = ir + i_ * (row_stride_items);                                           \
    const long row_ = (row0) + r_;                                                         \
    if (row_ >= (rows)) continue;                                                          \
    const float f_ = factor_of(r_);                                                        \
    for (int c_ = 0; c_ < (cv); ++c_) {                                                    \
      const int vi_ = ic + c_ * FA_TC;                                                     \
      float lanes_[FA_VEC];                                                                \
      VSTORE(acc[i_][c_] * f_, 0, lanes_);                                                 \
      for (int l_ = 0; l_ < FA_VEC; ++l_) {                                                \
        const long col_ = (long)vi_ * FA_VEC + l_;                                         \
        if (col_ < (cols)) store(x, at_of(t, b, h, row_, col_), lanes_[l_]);               \
      }                                                                                    \
    }                                                                                      \
  }

// ---- forward ----

FA_KERNEL void flash_attention_forward(const Dims d, global const A_S* q, const Layout4 ql, global const A_S* k,
                                       const Layout4 kl, global const A_S* v, const Layout4 vl,
                                       global const M_S* mask, const Layout4 ml, const int has_mask,
                                       const int causal, const float scale, global O_S* o, const Layout4 ol,
                                       global float* lse, const long lse_at, const ulong seed, const ulong base,
                                       const float keep, const float drop_scale, const int dropout) {
  local float qt[FA_BM * FA_EP];
  local float kt[FA_BN * FA_EP];
  local float vt[FA_BN * FA_EVP];
  local float st[FA_BM * FA_BN];  // scores, then P~
  local float row_m[FA_BM], row_l[FA_BM], row_alpha[FA_BM];
  const int lid = (int)get_local_id(0);
  const int ir = lid / FA_TC, ic = lid % FA_TC;
  const long q_blocks = (d.l + FA_BM - 1) / FA_BM;
  for (long tile = get_group_id(0); tile < d.b * d.h * q_blocks; tile += get_num_groups(0)) {
    const long bh = tile / q_blocks, r0 = (tile - bh * q_blocks) * FA_BM;
    const long b = bh / d.h, h = bh - b * d.h;
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile's reads of qt and the row stats are done
    load_tile(qt, FA_BM, FA_EP, q, ql, b, h, r0, d.l, d.e, lid);
    if (lid < FA_BM) {
      row_m[lid] = -INFINITY;
      row_l[lid] = 0.0f;
    }
    VF acc[FA_MR][FA_CV_EV];
    for (int i = 0; i < FA_MR; ++i)
      for (int c = 0; c < FA_CV_EV; ++c) acc[i][c] = (VF)(0.0f);
    // Causal: keys after the block's last row are masked for all of its rows.
    const long s_end = causal ? min(d.s, r0 + FA_BM) : d.s;
    for (long k0 = 0; k0 < s_end; k0 += FA_BN) {
      barrier(CLK_LOCAL_MEM_FENCE);  // the previous block's kt, vt, st are read
      load_tile(kt, FA_BN, FA_EP, k, kl, b, h, k0, d.s, d.e, lid);
      load_tile(vt, FA_BN, FA_EVP, v, vl, b, h, k0, d.s, d.ev, lid);
      barrier(CLK_LOCAL_MEM_FENCE);
      // A: the block's scores.
      float dots[FA_MR][FA_NR];
      TILE_DOTS(dots, qt, kt, FA_NV_E, FA_EP);
      for (int i = 0; i < FA_MR; ++i) {
        for (int j = 0; j < FA_NR; ++j) {
          const int r = ir + i * FA_TR, c = ic * FA_NR + j;
          st[r * FA_BN + c] = score_of(dots[i][j], d, b, h, r0 + r, k0 + c, mask, ml, has_mask, causal, scale);
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      // B: one item per row: the new running max, the rescale factor of what is summed so far, and
      // the block's P~ = dropout(exp(S - m)) in place of S.
      if (lid < FA_BM) {
        const int r = lid;
        const float m_old = row_m[r];
        float m = m_old;
        for (int c = 0; c < FA_BN; ++c) m = fmax(m, st[r * FA_BN + c]);
        const float alpha = m > -INFINITY ? exp(m_old - m) : 1.0f;
        float sum = 0.0f;
        Draws draws = {-1, (uint4)(0u)};
        const long first = ((bh * d.l) + r0 + r) * d.s + k0;
        for (int c = 0; c < FA_BN; ++c) {
          float p = m > -INFINITY ? exp(st[r * FA_BN + c] - m) : 0.0f;
          sum += p;
          if (dropout && p > 0.0f) p *= drop_factor(&draws, seed, base, first + c, keep, drop_scale);
          st[r * FA_BN + c] = p;
        }
        row_m[r] = m;
        row_l[r] = row_l[r] * alpha + sum;
        row_alpha[r] = alpha;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      // C: acc = alpha acc + P~ V for the item's rows and vectors.
      for (int i = 0; i < FA_MR; ++i) {
        const float alpha = row_alpha[ir + i * FA_TR];
        for (int c = 0; c < FA_CV_EV; ++c) acc[i][c] *= alpha;
      }
      for (int j = 0; j < FA_BN; ++j) {
        for (int c = 0; c < FA_CV_EV; ++c) {
          const int vi = ic + c * FA_TC;
          if (vi >= FA_NV_EV) break;
          const VF vv = VLOAD(vi, vt + j * FA_EVP);
          for (int i = 0; i < FA_MR; ++i) acc[i][c] = fma((VF)(st[(ir + i * FA_TR) * FA_BN + j]), vv, acc[i][c]);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // O = acc / l (a row that saw no key it may attend: l = 0, output 0 and lse -inf, as the GEMM path).
#define FA_INV_L(r) (row_l[r] > 0.0f ? 1.0f / row_l[r] : 0.0f)
    STORE_ROWS(o, ol, acc, FA_MR, FA_TR, FA_INV_L, r0, d.l, d.ev, FA_CV_EV, FA_STORE_O)
#undef FA_INV_L
    if (lid < FA_BM && r0 + lid < d.l) {
      lse[lse_at + bh * d.l + r0 + lid] = row_l[lid] > 0.0f ? row_m[lid] + log(row_l[lid]) : -INFINITY;
    }
  }
}

// ---- backward ----

// D = rowsum(dO * O) per query row in fp32 (the softmax backward's rowsum: rowsum(dP~ P~) = dO . O).
// O is the forward's fp32 result: for 16-bit calls the host recomputes it (the output rounded to 16
// bits put D, and through it the gradients, past the CPU's error: decision 0064).
FA_KERNEL void flash_attention_backward_rowsum(const Dims d, global const A_S* dout, const Layout4 dl,
                                               global const O_S* o, const Layout4 ol, global float* dsum,
                                               const long dsum_at) {
  for (long row = get_global_id(0); row < d.b * d.h * d.l; row += get_global_size(0)) {
    const long bh = row / d.l, r = row - bh * d.l;
    const long b = bh / d.h, h = bh - b * d.h;
    float sum = 0.0f;
    for (long c = 0; c < d.ev; ++c) {
      sum += (float)A_LOAD(dout, at_of(dl, b, h, r, c)) * (float)O_LOAD(o, at_of(ol, b, h, r, c));
    }
    dsum[dsum_at + row] = sum;
  }
}

// Step A of both backward kernels: for the tile of query rows r0.. (qt, dot: q and dO; lse_t, d_t:
// their lse and D) and keys k0.. (kt, vt), P~ into pt (when want_p) and dS into dst,
// [FA_BM][FA_BN]. The caller puts a barrier before and after. (A flag, not a null local pointer:
// local address 0 may be a real array's on a GPU.)
inline void score_grads_tile(local const float* qt, local const float* dot, local const float* kt,
                             local const float* vt, local const float* lse_t, local const float* d_t,
                             local float* pt, const int want_p, local float* dst, const Dims d, long bh, long b, long h, long r0,
                             long k0, global const M_S* mask, const Layout4 ml, int has_mask, int causal,
                             float scale, ulong seed, ulong base, float keep, float drop_scale, int dropout,
                             int ir, int ic) {
  float dots[FA_MR][FA_NR], dps[FA_MR][FA_NR];
  TILE_DOTS(dots, qt, kt, FA_NV_E, FA_EP);
  TILE_DOTS(dps, dot, vt, FA_NV_EV, FA_EVP);
  for (int i = 0; i < FA_MR; ++i) {
    const int r = ir + i * FA_TR;
    const long row = r0 + r;
    const float row_lse = lse_t[r], row_d = d_t[r];
    Draws draws = {-1, (uint4)(0u)};
    for (int j = 0; j < FA_NR; ++j) {
      const int c = ic * FA_NR + j;
      const long col = k0 + c;
      const float s = score_of(dots[i][j], d, b, h, row, col, mask, ml, has_mask, causal, scale);
      const float p = row_lse > -INFINITY ? exp(s - row_lse) : 0.0f;
      const float f = (dropout && p > 0.0f) ? drop_factor(&draws, seed, base, (bh * d.l + row) * d.s + col, keep,
                                                          drop_scale)
                                            : 1.0f;
      if (want_p) pt[r * FA_BN + c] = p * f;
      dst[r * FA_BN + c] = p * (dps[i][j] * f - row_d);
    }
  }
}

// lse and D of rows r0.. into local memory (0 and -inf past the last row: P = 0 there).
inline void load_row_stats(local float* lse_t, local float* d_t, global const float* lse, long lse_at,
                           global const float* dsum, long dsum_at, long bh, long rows, long r0, int lid) {
  if (lid < FA_BM) {
    const long row = r0 + lid;
    lse_t[lid] = row < rows ? lse[lse_at + bh * rows + row] : -INFINITY;
    d_t[lid] = row < rows ? dsum[dsum_at + bh * rows + row] : 0.0f;
  }
}

// dK and dV of one block of FA_BN keys per tile, summed over the query blocks that may see them.
FA_KERNEL void flash_attention_backward_kv(const Dims d, global const A_S* q, const Layout4 ql, global const A_S* k,
                                           const Layout4 kl, global const A_S* v, const Layout4 vl,
                                           global const M_S* mask, const Layout4 ml, const int has_mask,
                                           const int causal, const float scale, global const A_S* dout,
                                           const Layout4 dl, global const float* lse, const long lse_at,
                                           global const float* dsum, const long dsum_at, global A_S* dk,
                                           const Layout4 dkl, global A_S* dv, const Layout4 dvl, const ulong seed,
                                           const ulong base, const float keep, const float drop_scale,
                                           const int dropout) {
  local float qt[FA_BM * FA_EP];
  local float dot[FA_BM * FA_EVP];
  local float kt[FA_BN * FA_EP];
  local float vt[FA_BN * FA_EVP];
  local float pt[FA_BM * FA_BN];
  local float dst[FA_BM * FA_BN];
  local float lse_t[FA_BM], d_t[FA_BM];
  const int lid = (int)get_local_id(0);
  const int ir = lid / FA_TC, ic = lid % FA_TC;
  const long k_blocks = (d.s + FA_BN - 1) / FA_BN;
  for (long tile = get_group_id(0); tile < d.b * d.h * k_blocks; tile += get_num_groups(0)) {
    const long bh = tile / k_blocks, k0 = (tile - bh * k_blocks) * FA_BN;
    const long b = bh / d.h, h = bh - b * d.h;
    barrier(CLK_LOCAL_MEM_FENCE);
    load_tile(kt, FA_BN, FA_EP, k, kl, b, h, k0, d.s, d.e, lid);
    load_tile(vt, FA_BN, FA_EVP, v, vl, b, h, k0, d.s, d.ev, lid);
    VF acc_k[FA_KR][FA_CV_E], acc_v[FA_KR][FA_CV_EV];  // keys ir + i*FA_TR, vectors ic + c*FA_TC
    for (int i = 0; i < FA_KR; ++i) {
      for (int c = 0; c < FA_CV_E; ++c) acc_k[i][c] = (VF)(0.0f);
      for (int c = 0; c < FA_CV_EV; ++c) acc_v[i][c] = (VF)(0.0f);
    }
    // Causal: rows before k0 see none of these keys.
    for (long r0 = causal ? k0 / FA_BM * FA_BM : 0; r0 < d.l; r0 += FA_BM) {
      barrier(CLK_LOCAL_MEM_FENCE);
      load_tile(qt, FA_BM, FA_EP, q, ql, b, h, r0, d.l, d.e, lid);
      load_tile(dot, FA_BM, FA_EVP, dout, dl, b, h, r0, d.l, d.ev, lid);
      load_row_stats(lse_t, d_t, lse, lse_at, dsum, dsum_at, bh, d.l, r0, lid);
      barrier(CLK_LOCAL_MEM_FENCE);
      score_grads_tile(qt, dot, kt, vt, lse_t, d_t, pt, 1, dst, d, bh, b, h, r0, k0, mask, ml, has_mask, causal, scale,
                       seed, base, keep, drop_scale, dropout, ir, ic);
      barrier(CLK_LOCAL_MEM_FENCE);
      // C: dV += P~^T dO, dK += dS^T Q for the item's keys and vectors.
      for (int r = 0; r < FA_BM; ++r) {
        for (int c = 0; c < FA_CV_EV; ++c) {
          const int vi = ic + c * FA_TC;
          if (vi >= FA_NV_EV) break;
          const VF g = VLOAD(vi, dot + r * FA_EVP);
          for (int i = 0; i < FA_KR; ++i) acc_v[i][c] = fma((VF)(pt[r * FA_BN + ir + i * FA_TR]), g, acc_v[i][c]);
        }
        for (int c = 0; c < FA_CV_E; ++c) {
          const int vi = ic + c * FA_TC;
          if (vi >= FA_NV_E) break;
          const VF x = VLOAD(vi, qt + r * FA_EP);
          for (int i = 0; i < FA_KR; ++i) acc_k[i][c] = fma((VF)(dst[r * FA_BN + ir + i * FA_TR]), x, acc_k[i][c]);
        }
      }
    }
#define FA_SCALE(r) scale
#define FA_ONE(r) 1.0f
    STORE_ROWS(dk, dkl, acc_k, FA_KR, FA_TR, FA_SCALE, k0, d.s, d.e, FA_CV_E, FA_STORE_A)
    STORE_ROWS(dv, dvl, acc_v, FA_KR, FA_TR, FA_ONE, k0, d.s, d.ev, FA_CV_EV, FA_STORE_A)
#undef FA_SCALE
#undef FA_ONE
  }
}

// dQ of one block of FA_BM query rows per tile, summed over the key blocks they may see.
FA_KERNEL void flash_attention_backward_q(const Dims d, global const A_S* q, const Layout4 ql, global const A_S* k,
                                          const Layout4 kl, global const A_S* v, const Layout4 vl,
                                          global const M_S* mask, const Layout4 ml, const int has_mask,
                                          const int causal, const float scale, global const A_S* dout,
                                          const Layout4 dl, global const float* lse, const long lse_at,
                                          global const float* dsum, const long dsum_at, global A_S* dq,
                                          const Layout4 dql, const ulong seed, const ulong base, const float keep,
                                          const float drop_scale, const int dropout) {
  local float qt[FA_BM * FA_EP];
  local float dot[FA_BM * FA_EVP];
  local float kt[FA_BN * FA_EP];
  local float vt[FA_BN * FA_EVP];
  local float dst[FA_BM * FA_BN];
  local float lse_t[FA_BM], d_t[FA_BM];
  const int lid = (int)get_local_id(0);
  const int ir = lid / FA_TC, ic = lid % FA_TC;
  const long q_blocks = (d.l + FA_BM - 1) / FA_BM;
  for (long tile = get_group_id(0); tile < d.b * d.h * q_blocks; tile += get_num_groups(0)) {
    const long bh = tile / q_blocks, r0 = (tile - bh * q_blocks) * FA_BM;
    const long b = bh / d.h, h = bh - b * d.h;
    barrier(CLK_LOCAL_MEM_FENCE);
    load_tile(qt, FA_BM, FA_EP, q, ql, b, h, r0, d.l, d.e, lid);
    load_tile(dot, FA_BM, FA_EVP, dout, dl, b, h, r0, d.l, d.ev, lid);
    load_row_stats(lse_t, d_t, lse, lse_at, dsum, dsum_at, bh, d.l, r0, lid);
    VF acc[FA_MR][FA_CV_E];
    for (int i = 0; i < FA_MR; ++i)
      for (int c = 0; c < FA_CV_E; ++c) acc[i][c] = (VF)(0.0f);
    const long s_end = causal ? min(d.s, r0 + FA_BM) : d.s;
    for (long k0 = 0; k0 < s_end; k0 += FA_BN) {
      barrier(CLK_LOCAL_MEM_FENCE);
      load_tile(kt, FA_BN, FA_EP, k, kl, b, h, k0, d.s, d.e, lid);
      load_tile(vt, FA_BN, FA_EVP, v, vl, b, h, k0, d.s, d.ev, lid);
      barrier(CLK_LOCAL_MEM_FENCE);
      score_grads_tile(qt, dot, kt, vt, lse_t, d_t, dst, 0, dst, d, bh, b, h, r0, k0, mask, ml, has_mask, causal, scale,
                       seed, base, keep, drop_scale, dropout, ir, ic);
      barrier(CLK_LOCAL_MEM_FENCE);
      // C: dQ += dS K for the item's rows and vectors.
      for (int j = 0; j < FA_BN; ++j) {
        for (int c = 0; c < FA_CV_E; ++c) {
          const int vi = ic + c * FA_TC;
          if (vi >= FA_NV_E) break;
          const VF x = VLOAD(vi, kt + j * FA_EP);
          for (int i = 0; i < FA_MR; ++i) acc[i][c] = fma((VF)(dst[(ir + i * FA_TR) * FA_BN + j]), x, acc[i][c]);
        }
      }
    }
#define FA_SCALE(r) scale
    STORE_ROWS(dq, dql, acc, FA_MR, FA_TR, FA_SCALE, r0, d.l, d.e, FA_CV_E, FA_STORE_A)
#undef FA_SCALE
  }
}
