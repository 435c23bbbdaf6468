// Implicit-GEMM convolution on NVIDIA tensor cores in TF32 (math mode "tf32"), all three
// directions: the per-group GEMM of conv2d_igemm_gather.cl, its tiles gathered through registers
// (rounded to TF32 there) into local memory and multiplied with mma_tf32.cl's warp tiles.
// Appended after conv2d_common.cl, conv2d_igemm_gather.cl and mma_tf32.cl.
// Launch: global (ceil(GN/BN)*32*WN, ceil(GM/BM)*WM, groups), local (32*WN, WM, 1).

// ---- Tunables (besides mma_tf32.cl's) ----
#ifndef DBUF
#define DBUF 1  // 1: two local buffers, the next tile gathered into registers during the mma loop
#endif

#define LA (BM * BK / THREADS)  // A elements each thread gathers per tile
#define LB (BN * BK / THREADS)  // B elements each thread gathers per tile
// With a whole number of work-group rows per B column, every B element a thread gathers is in one
// column of the tile (B runs along the GEMM column except in bwd_weight, see B_K_FAST).
#define B_FIXED_COLUMN (!B_K_FAST && THREADS % BN == 0)

// A(m, kk) for the tile at (m0, k0): consecutive threads take consecutive kk (contiguous in A).
static inline void gather_a(float* ra, const Dims* d, const global float* A, const int m0, const int k0,
                            const int tid) {
#pragma unroll
  for (int e = 0; e < LA; ++e) {
    const int v = tid + e * THREADS;
    ra[e] = a_elem(d, A, min(m0 + v / BK, d->GM - 1), k0 + v % BK);
  }
}

static inline void store_a(local uint* As, const float* ra, const int tid) {
#pragma unroll
  for (int e = 0; e < LA; ++e) {
    const int v = tid + e * THREADS;
    As[A_LOC(v / BK, v % BK)] = to_tf32(ra[e]);
  }
}

// B(kk, nn): consecutive threads take consecutive nn (contiguous along q or w), except in
// bwd_weight, where B is contiguous along kk.
static inline void gather_b(float* rb, const Dims* d, const global float* B, const Part fixed_column, const int n0,
                            const int k0, const int tid) {
#pragma unroll
  for (int e = 0; e < LB; ++e) {
    const int v = tid + e * THREADS;
#if B_K_FAST
    const int kk = v % BK, nn = v / BK;
    const Part col = b_column(d, min(n0 + nn, d->GN - 1));
#elif B_FIXED_COLUMN
    const int kk = v / BN;
    const Part col = fixed_column;
#else
    const int kk = v / BN, nn = v % BN;
    const Part col = b_column(d, min(n0 + nn, d->GN - 1));
#endif
    rb[e] = b_elem(d, B, col, b_row(d, k0 + kk));
  }
}

static inline void store_b(local uint* Bs, const float* rb, const int tid) {
#pragma unroll
  for (int e = 0; e < LB; ++e) {
    const int v = tid + e * THREADS;
#if B_K_FAST
    Bs[B_LOC(v % BK, v / BK)] = to_tf32(rb[e]);
#else
    Bs[B_LOC(v / BN, v % BN)] = to_tf32(rb[e]);
#endif
  }
}

__attribute__((reqd_work_group_size(32 * WN, WM, 1)))
kernel void conv2d_igemm_mma(CONV_SHAPE_PARAMS, const global float* restrict A, const long a_offset,
                             const global float* restrict B, const long b_offset, global float* Cout,
                             const long c_offset, const global float* bias, const long bias_offset) {
  const Dims d = conv_dims(CONV_SHAPE_ARGS, get_group_id(2));
  A += a_offset;
  B += b_offset;
  Cout += c_offset;
  const int lane = get_local_id(0) % 32;
  const int warp_n = get_local_id(0) / 32;
  const int warp_m = get_local_id(1);
  const int tid = get_local_id(1) * (32 * WN) + get_local_id(0);
  const int g = lane >> 2, t = lane & 3;
  const int n0 = get_group_id(0) * BN;
  const int m0 = get_group_id(1) * BM;

  local uint As_all[(DBUF + 1) * A_TILE] __attribute__((aligned(16)));  // ldmatrix rows, BVEC uint4 reads
  local uint Bs_all[(DBUF + 1) * B_TILE] __attribute__((aligned(16)));
  float ra[LA], rb[LB];
  float acc[FM * FN * 4];
#pragma unroll
  for (int i = 0; i < FM * FN * 4; ++i) acc[i] = 0.0f;
#if B_FIXED_COLUMN
  const Part column = b_column(&d, min(n0 + tid % BN, d.GN - 1));  // decomposed once
#else
  const Part column = {0, 0, 0};  // unused
#endif

  const int tiles = (d.GK + BK - 1) / BK;
#if DBUF
  gather_a(ra, &d, A, m0, 0, tid);
  gather_b(rb, &d, B, column, n0, 0, tid);
  store_a(As_all, ra, tid);
  store_b(Bs_all, rb, tid);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int tile = 0; tile < tiles; ++tile) {
    const int cur = tile & 1;
    if (tile + 1 < tiles) {  // the next tile's gathers overlap the mma loop
      gather_a(ra, &d, A, m0, (tile + 1) * BK, tid);
      gather_b(rb, &d, B, column, n0, (tile + 1) * BK, tid);
    }
    mma_tile(acc, As_all + cur * A_TILE, Bs_all + cur * B_TILE, warp_m, warp_n, g, t);
    if (tile + 1 < tiles) {
      store_a(As_all + (cur ^ 1) * A_TILE, ra, tid);
      store_b(Bs_all + (cur ^ 1) * B_TILE, rb, tid);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#else
  for (int tile = 0; tile < tiles; ++tile) {
    gather_a(ra, &d, A, m0, tile * BK, tid);
    gather_b(rb, &d, B, column, n0, tile * BK, tid);
    store_a(As_all, ra, tid);
    store_b(Bs_all, rb, tid);
    barrier(CLK_LOCAL_MEM_FENCE);
    mma_tile(acc, As_all, Bs_all, warp_m, warp_n, g, t);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

  // Accumulator fragment (fm, fn): c0, c1 at row g, columns FRAG_COL(fn, 2t), FRAG_COL(fn, 2t + 1);
  // c2, c3 eight rows below.
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + warp_m * TM + fm * 16 + g + 8 * h;
      if (m >= d.GM) continue;
#if DIR == 0 && HAS_BIAS
      const float b = bias[bias_offset + d.g * d.Kg + m];
#endif
#pragma unroll
      for (int fn = 0; fn < FN; ++fn) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int nn = n0 + warp_n * TN + FRAG_COL(fn, 2 * t + j);
          if (nn >= d.GN) continue;
          const float value = acc[(fm * FN + fn) * 4 + 2 * h + j];
#if DIR == 0 && HAS_BIAS
          Cout[c_index(&d, m, nn)] = activate(value + b);
#elif DIR == 0
          Cout[c_index(&d, m, nn)] = activate(value);
#else
          Cout[c_index(&d, m, nn)] = value;
#endif
        }
      }
    }
  }
}
