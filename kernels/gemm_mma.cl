// SGEMM on NVIDIA tensor cores in TF32 (math mode "tf32"): C = alpha * op(A) * op(B) + beta * C,
// row-major, strided batches, any M, N, K >= 1. Appended to mma_tf32.cl (warp tiles, fragment
// loads, mma.sync.m16n8k8; compute capability >= 8.0, checked by the host before either file is
// built). Operands are rounded to TF32 (cvt.rna) once, when staged (STAGES = 0) or when fragments
// are read (STAGES >= 2); accumulation is fp32.
// Launch: global (ceil(N/BN)*32*WN, ceil(M/BM)*WM, batch), local (32*WN, WM, 1).

// ---- Problem layout (set by the host) ----
#ifndef TRANS_A
#define TRANS_A 0  // 1: A is stored K x M
#endif
#ifndef TRANS_B
#define TRANS_B 0  // 1: B is stored N x K
#endif

// ---- Tunables (besides mma_tf32.cl's) ----
#ifndef STAGES
#define STAGES 0  // 0: stage through registers (see DBUF); 2-4: that many local buffers filled by
                  // cp.async straight from global memory, STAGES - 1 tiles ahead of the mma loop
#endif
#ifndef DBUF
#define DBUF 1  // STAGES = 0 only. 1: two local buffers, next tile prefetched into registers during the mma loop
#endif
// Timing studies only, never set by the host (results are wrong with it): which step of the
// register-staged loop (STAGES = 0, DBUF = 1) limits it. Bit 1 skips the global loads after the
// first tile, bit 2 the local stores and the barrier, bit 4 half of the fragment reads (each k-step
// pair reuses the first step's fragments). bench/mma_ablation_bench.cpp times them.
#ifndef ABLATE
#define ABLATE 0
#endif
#ifndef FRAG_DBUF
#define FRAG_DBUF 0  // STAGES >= 2 only (BK a multiple of 16): read the next k-step's fragments into a second
                     // register set during each step's mma, across tile boundaries too
#endif
#ifndef GROUP_M
#define GROUP_M 1  // work-groups launched in turn cover GROUP_M tile rows before the next columns (L2 reuse of B)
#endif
// With STAGES >= 2 the host also sets mma_tf32.cl's layout: A_KM = TRANS_A, B_NK = TRANS_B (tiles
// keep the global layout, so each 16-byte copy is contiguous at both ends) and CVT_AT_LOAD = 1.

#define LA (BM * BK / THREADS)  // A elements each thread stages per tile (a multiple of 4)
#define LB (BK * BN / THREADS)

#if TRANS_A
#define A_AT(Ab, m, k, ld) Ab[(long)(k) * (ld) + (m)]
#else
#define A_AT(Ab, m, k, ld) Ab[(long)(m) * (ld) + (k)]
#endif
#if TRANS_B
#define B_AT(Bb, k, n, ld) Bb[(long)(n) * (ld) + (k)]
#else
#define B_AT(Bb, k, n, ld) Bb[(long)(k) * (ld) + (n)]
#endif

#if STAGES == 0
// Staging: each thread moves LA (LB) elements of the tile of op(A) (op(B)) per step, as float4s
// along the storage's contiguous direction; consecutive threads take consecutive float4s. Interior,
// aligned tiles use 16-byte loads; edge tiles load element by element with zeros outside.
#if TRANS_A
#define A_CONTIG BM
#else
#define A_CONTIG BK
#endif
#if TRANS_B
#define B_CONTIG BK
#else
#define B_CONTIG BN
#endif

static inline void load_a(float* ra, const global float* Ab, const int lda, const int M, const int K, const int m0,
                          const int k0, const int tid, const bool aligned) {
  const bool full = aligned && m0 + BM <= M && k0 + BK <= K;
#pragma unroll
  for (int r = 0; r < LA / 4; ++r) {
    const int v = tid + r * THREADS;
    const int c = (v % (A_CONTIG / 4)) * 4, s = v / (A_CONTIG / 4);
#if TRANS_A
    const int m = m0 + c, k = k0 + s;
#else
    const int m = m0 + s, k = k0 + c;
#endif
    if (full) {
      vstore4(*(const global float4*)&A_AT(Ab, m, k, lda), 0, ra + 4 * r);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
#if TRANS_A
        ra[4 * r + e] = (m + e < M && k < K) ? A_AT(Ab, m + e, k, lda) : 0.0f;
#else
        ra[4 * r + e] = (m < M && k + e < K) ? A_AT(Ab, m, k + e, lda) : 0.0f;
#endif
      }
    }
  }
}

// As[m][k], rounded to TF32.
static inline void store_a(local uint* As, const float* ra, const int tid) {
#pragma unroll
  for (int r = 0; r < LA / 4; ++r) {
    const int v = tid + r * THREADS;
    const int c = (v % (A_CONTIG / 4)) * 4, s = v / (A_CONTIG / 4);
    const uint4 w = (uint4)(to_tf32(ra[4 * r]), to_tf32(ra[4 * r + 1]), to_tf32(ra[4 * r + 2]), to_tf32(ra[4 * r + 3]));
#if TRANS_A
    As[A_LOC(c + 0, s)] = w.x;
    As[A_LOC(c + 1, s)] = w.y;
    As[A_LOC(c + 2, s)] = w.z;
    As[A_LOC(c + 3, s)] = w.w;
#else
    *(local uint4*)(As + A_LOC(s, c)) = w;  // c is a multiple of 4, and AS and the swizzles keep groups of 4
#endif
  }
}

static inline void load_b(float* rb, const global float* Bb, const int ldb, const int N, const int K, const int n0,
                          const int k0, const int tid, const bool aligned) {
  const bool full = aligned && n0 + BN <= N && k0 + BK <= K;
#pragma unroll
  for (int r = 0; r < LB / 4; ++r) {
    const int v = tid + r * THREADS;
    const int c = (v % (B_CONTIG / 4)) * 4, s = v / (B_CONTIG / 4);
#if TRANS_B
    const int n = n0 + s, k = k0 + c;
#else
    const int n = n0 + c, k = k0 + s;
#endif
    if (full) {
      vstore4(*(const global float4*)&B_AT(Bb, k, n, ldb), 0, rb + 4 * r);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
#if TRANS_B
        rb[4 * r + e] = (n < N && k + e < K) ? B_AT(Bb, k + e, n, ldb) : 0.0f;
#else
        rb[4 * r + e] = (n + e < N && k < K) ? B_AT(Bb, k, n + e, ldb) : 0.0f;
#endif
      }
    }
  }
}

// Bs[k][n], rounded to TF32.
static inline void store_b(local uint* Bs, const float* rb, const int tid) {
#pragma unroll
  for (int r = 0; r < LB / 4; ++r) {
    const int v = tid + r * THREADS;
    const int c = (v % (B_CONTIG / 4)) * 4, s = v / (B_CONTIG / 4);
    const uint4 w = (uint4)(to_tf32(rb[4 * r]), to_tf32(rb[4 * r + 1]), to_tf32(rb[4 * r + 2]), to_tf32(rb[4 * r + 3]));
#if TRANS_B
    Bs[B_LOC(c + 0, s)] = w.x;
    Bs[B_LOC(c + 1, s)] = w.y;
    Bs[B_LOC(c + 2, s)] = w.z;
    Bs[B_LOC(c + 3, s)] = w.w;
#else
    *(local uint4*)(Bs + B_LOC(s, c)) = w;  // c is a multiple of 4, and BS and the swizzles keep groups of 4
#endif
  }
}

#endif  // STAGES == 0

#if STAGES >= 2
// Wait until at most STAGES - 1 (first) or STAGES - 2 (ahead) groups of this thread are in flight.
static inline void cp_async_wait_first(void) { cp_async_wait(STAGES - 1); }
static inline void cp_async_wait_ahead(void) { cp_async_wait(STAGES - 2); }

// One operand tile as stored in global memory: `strided` rows (from s0, valid below s_limit) of
// `contig` elements (from c0, valid below c_limit), row r at base + r * ld, into the local tile of
// A (is_b = false; at A_STORED) or B (at B_STORED). Threads take consecutive 16-byte pieces; where
// the rows are not 16-byte aligned each piece is four 4-byte copies.
static inline void async_tile(local uint* dst, const bool is_b, const int contig, const int strided,
                              const global float* base, const int ld, const int s0, const int s_limit, const int c0,
                              const int c_limit, const int tid, const bool aligned) {
#pragma unroll
  for (int r = 0; r < strided * contig / 4 / THREADS; ++r) {
    const int v = tid + r * THREADS;
    const int s = v / (contig / 4), c = (v % (contig / 4)) * 4;
    local uint* d = dst + (is_b ? B_STORED(s, c) : A_STORED(s, c));  // 4 contiguous words
    const bool row_ok = s0 + s < s_limit;
    const int left = c_limit - (c0 + c);
    const global float* src = base + (long)(s0 + s) * ld + c0 + c;
    if (aligned) {
      const int bytes = row_ok ? 4 * clamp(left, 0, 4) : 0;
      cp_async16(d, bytes > 0 ? src : base, bytes);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = row_ok && e < left;
        cp_async4(d + e, ok ? src + e : base, ok ? 4 : 0);
      }
    }
  }
}

// The tiles of step `tile` into local slot `slot`.
static inline void async_tiles(local uint* As_all, local uint* Bs_all, const int slot, const int tile,
                               const global float* Ab, const int lda, const global float* Bb, const int ldb,
                               const int M, const int N, const int K, const int m0, const int n0, const int tid,
                               const bool a_aligned, const bool b_aligned) {
  const int k0 = tile * BK;
#if TRANS_A
  async_tile(As_all + slot * A_TILE, false, BM, BK, Ab, lda, k0, K, m0, M, tid, a_aligned);
#else
  async_tile(As_all + slot * A_TILE, false, BK, BM, Ab, lda, m0, M, k0, K, tid, a_aligned);
#endif
#if TRANS_B
  async_tile(Bs_all + slot * B_TILE, true, BK, BN, Bb, ldb, n0, N, k0, K, tid, b_aligned);
#else
  async_tile(Bs_all + slot * B_TILE, true, BN, BK, Bb, ldb, k0, K, n0, N, tid, b_aligned);
#endif
}
#endif  // STAGES >= 2

__attribute__((reqd_work_group_size(32 * WN, WM, 1)))
kernel void gemm_mma(const int M, const int N, const int K, const float alpha, const float beta,
                     const global float* restrict A, const long a_offset, const int lda, const long stride_a,
                     const global float* restrict B, const long b_offset, const int ldb, const long stride_b,
                     global float* C, const long c_offset, const int ldc, const long stride_c GEMM_EPILOGUE_PARAMS) {
  const int lane = get_local_id(0) % 32;
  const int warp_n = get_local_id(0) / 32;
  const int warp_m = get_local_id(1);
  const int tid = get_local_id(1) * (32 * WN) + get_local_id(0);
  const int g = lane >> 2, t = lane & 3;
  const int2 origin = tile_origin(GROUP_M, BM, BN);  // tile_order.cl
  const int m0 = origin.x, n0 = origin.y;
  const long batch = get_group_id(2);
  const global float* Ab = A + a_offset + batch * stride_a;
  const global float* Bb = B + b_offset + batch * stride_b;
  global float* Cb = C + c_offset + batch * stride_c;

  float acc[FM * FN * 4];
#pragma unroll
  for (int i = 0; i < FM * FN * 4; ++i) acc[i] = 0.0f;

  const bool a_aligned = lda % 4 == 0 && a_offset % 4 == 0 && stride_a % 4 == 0;
  const bool b_aligned = ldb % 4 == 0 && b_offset % 4 == 0 && stride_b % 4 == 0;
  const int tiles = (K + BK - 1) / BK;
#if STAGES >= 2
  local uint As_all[STAGES * A_TILE] __attribute__((aligned(16)));  // 16-byte copies, ldmatrix rows
  local uint Bs_all[STAGES * B_TILE] __attribute__((aligned(16)));
#if FRAG_DBUF
  // Every slot is filled ahead. The mma of each k-step runs while the next step's fragments are
  // read into the other register set; at a tile's last step, once its fragments are read, the
  // barrier frees the tile's slot for tile + STAGES and makes tile + 1 visible, whose first
  // fragments are then read before the last step's mma, so the tensor cores wait neither for
  // fragment reads nor for the barrier's drain.
  const int m_base = warp_m * TM, n_base = warp_n * TN;
#pragma unroll
  for (int s = 0; s < STAGES; ++s) {
    if (s < tiles) async_tiles(As_all, Bs_all, s, s, Ab, lda, Bb, ldb, M, N, K, m0, n0, tid, a_aligned, b_aligned);
    cp_async_commit();
  }
  cp_async_wait_first();
  barrier(CLK_LOCAL_MEM_FENCE);
  uint a0[FM][4], b0[FN][2], a1[FM][4], b1[FN][2];
  load_fragments(a0, b0, As_all, Bs_all, 0, m_base, n_base, g, t);
  for (int tile = 0; tile < tiles; ++tile) {
    const int slot = tile % STAGES;
    const local uint* As = As_all + slot * A_TILE;
    const local uint* Bs = Bs_all + slot * B_TILE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      load_fragments(a1, b1, As, Bs, kk + 8, m_base, n_base, g, t);
      mma_fragments(acc, a0, b0);
      if (kk + 16 < BK) {
        load_fragments(a0, b0, As, Bs, kk + 16, m_base, n_base, g, t);
      } else {
        cp_async_wait_ahead();  // tile + 1 has landed (this thread's part)
        barrier(CLK_LOCAL_MEM_FENCE);
        if (tile + STAGES < tiles) {
          async_tiles(As_all, Bs_all, slot, tile + STAGES, Ab, lda, Bb, ldb, M, N, K, m0, n0, tid, a_aligned, b_aligned);
        }
        cp_async_commit();
        if (tile + 1 < tiles) {
          const int next = (tile + 1) % STAGES;
          load_fragments(a0, b0, As_all + next * A_TILE, Bs_all + next * B_TILE, 0, m_base, n_base, g, t);
        }
      }
      mma_fragments(acc, a1, b1);
    }
  }
#else
  // Prologue: tiles 0 .. STAGES-2 in flight. Every iteration commits one group (empty past the
  // last tile), so "at most STAGES - 2 pending" always means "tile `tile` has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) async_tiles(As_all, Bs_all, s, s, Ab, lda, Bb, ldb, M, N, K, m0, n0, tid, a_aligned, b_aligned);
    cp_async_commit();
  }
  for (int tile = 0; tile < tiles; ++tile) {
    cp_async_wait_ahead();
    // Everyone's copies of this tile are visible, and everyone is done with the slot of tile - 1,
    // which the copies issued next refill.
    barrier(CLK_LOCAL_MEM_FENCE);
    const int ahead = tile + STAGES - 1;
    if (ahead < tiles) {
      async_tiles(As_all, Bs_all, ahead % STAGES, ahead, Ab, lda, Bb, ldb, M, N, K, m0, n0, tid, a_aligned, b_aligned);
    }
    cp_async_commit();
    const int slot = tile % STAGES;
    mma_tile(acc, As_all + slot * A_TILE, Bs_all + slot * B_TILE, warp_m, warp_n, g, t);
  }
#endif  // FRAG_DBUF
#else
  local uint As_all[(DBUF + 1) * A_TILE] __attribute__((aligned(16)));  // uint4 stores, ldmatrix rows
  local uint Bs_all[(DBUF + 1) * B_TILE] __attribute__((aligned(16)));
  float ra[LA], rb[LB];
#if DBUF
  load_a(ra, Ab, lda, M, K, m0, 0, tid, a_aligned);
  load_b(rb, Bb, ldb, N, K, n0, 0, tid, b_aligned);
  store_a(As_all, ra, tid);
  store_b(Bs_all, rb, tid);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int tile = 0; tile < tiles; ++tile) {
    const int cur = tile & 1;
    if (!(ABLATE & 1) && tile + 1 < tiles) {  // global loads of the next tile overlap the mma loop
      load_a(ra, Ab, lda, M, K, m0, (tile + 1) * BK, tid, a_aligned);
      load_b(rb, Bb, ldb, N, K, n0, (tile + 1) * BK, tid, b_aligned);
    }
    mma_tile(acc, As_all + cur * A_TILE, Bs_all + cur * B_TILE, warp_m, warp_n, g, t);
#if !(ABLATE & 2)
    if (tile + 1 < tiles) {
      store_a(As_all + (cur ^ 1) * A_TILE, ra, tid);
      store_b(Bs_all + (cur ^ 1) * B_TILE, rb, tid);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
#else
  for (int tile = 0; tile < tiles; ++tile) {
    load_a(ra, Ab, lda, M, K, m0, tile * BK, tid, a_aligned);
    load_b(rb, Bb, ldb, N, K, n0, tile * BK, tid, b_aligned);
    store_a(As_all, ra, tid);
    store_b(Bs_all, rb, tid);
    barrier(CLK_LOCAL_MEM_FENCE);
    mma_tile(acc, As_all, Bs_all, warp_m, warp_n, g, t);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif
#endif

  // Accumulator fragment (fm, fn): c0, c1 at row g, columns FRAG_COL(fn, 2t), FRAG_COL(fn, 2t + 1);
  // c2, c3 eight rows below.
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
    for (int fn = 0; fn < FN; ++fn) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + warp_m * TM + fm * 16 + g + 8 * h;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int n = n0 + warp_n * TN + FRAG_COL(fn, 2 * t + j);
          if (n < N) {
            global float* dst = Cb + (long)m * ldc + n;
            float result = alpha * acc[(fm * FN + fn) * 4 + 2 * h + j];
            if (beta != 0.0f) result += beta * *dst;
            *dst = GEMM_EPILOGUE(result, n);
          }
        }
      }
    }
  }
}
