// SGEMM on Hopper's warpgroup tensor cores in TF32 (math mode "tf32"): C = alpha * op(A) * op(B) +
// beta * C, row-major, strided batches, any M, N, K >= 1. wgmma.mma_async (PTX, sm_90a only; the
// host builds this file only on compute capability 9.x) multiplies a 64 x BN x 8 step with both
// operands read straight from local memory through matrix descriptors, so no fragment passes
// through registers; mma.sync (gemm_mma.cl) spends most of its time doing exactly that.
// Operands are rounded to TF32 (cvt.rna) as they are staged; accumulation is fp32.
// Launch: global (ceil(N/BN) * 128 * WGS, ceil(M/BM), batch), local (128 * WGS, 1, 1).
// Appended to gemm_layout.cl (TRANS_A, TRANS_B, A_INDEX, B_INDEX) and wgmma.cl (tile tunables,
// wgmma and its fences).

// ---- Tunables ----
#ifndef BK
#define BK 16  // depth of the K tile staged per step (a multiple of 8)
#endif
// Timing studies only, never set by the host (results are wrong with it): which step of the loop
// limits it. Bit 1 skips the global loads after the first tile, bit 2 the local stores, bit 4 the
// wgmma, bit 8 the barrier. bench/mma_ablation_bench.cpp times them.
#ifndef ABLATE
#define ABLATE 0
#endif

// ---- Derived ----
#define KC (BK / 4)  // 16-byte chunks of K per row
#define A_CHUNKS (BM * KC / THREADS)
#define B_CHUNKS (BN * KC / THREADS)

#define A_AT(Ab, m, k, ld) Ab[A_INDEX((long)(m), (long)(k), (ld))]  // 64-bit offsets: matrices beyond 2^31 elements
#define B_AT(Bb, k, n, ld) Bb[B_INDEX((long)(k), (long)(n), (ld))]

// Local tiles in wgmma's K-major layout without swizzling: "core matrices" of 8 rows x 4 k
// (16 bytes per row, 128 contiguous bytes), ordered k-chunk by k-chunk, 8-row group by 8-row
// group. Element (row, k) of a tile of R rows is word CORE(R, row, k / 4) * 4 + k % 4. In a
// descriptor the leading byte offset (next 4 k) is R * 16 and the stride byte offset (next 8 rows)
// is 128.
#define CORE(R, row, kc) (((kc) * ((R) / 8) + (row) / 8) * 8 + (row) % 8)

// Chunk v of a tile (R rows of KC chunks) is row v % 32 + 32 * (v / (32 * KC)), chunk (v / 32) % KC:
// the 8 work-items of each quarter-warp store 8 consecutive rows of one k-chunk, 128 contiguous
// bytes, and the 32 of a warp read 32 consecutive rows: coalesced where the operand is stored
// K-strided, 16 bytes per row where it is K-contiguous. (Whole 32-byte sectors per warp, 8 rows x
// 4 chunks, ran the 4096^3 NN GEMM 10-20% slower: probe28.)
#define CHUNK_ROW(v) ((v) % 32 + 32 * ((v) / (32 * KC)))
#define CHUNK_KC(v) (((v) / 32) % KC)

// This work-item's chunks of the A tile at k0 (four consecutive k of one row each) into ra, zeros
// outside the matrix; load_b likewise for B.
static inline void load_a(float* ra, const global float* Ab, const int lda, const int M, const int K, const int m0,
                          const int k0, const int tid, const bool aligned) {
  const bool full = m0 + BM <= M && k0 + BK <= K;
#pragma unroll
  for (int c = 0; c < A_CHUNKS; ++c) {
    const int v = tid + c * THREADS;
    const int m = m0 + CHUNK_ROW(v), k = k0 + 4 * CHUNK_KC(v);
    float* r = ra + 4 * c;
#if !TRANS_A
    if (full && aligned) {
      vstore4(*(const global float4*)&A_AT(Ab, m, k, lda), 0, r);
      continue;
    }
#endif
#pragma unroll
    for (int e = 0; e < 4; ++e) r[e] = (full || (m < M && k + e < K)) ? A_AT(Ab, m, k + e, lda) : 0.0f;
  }
}

static inline void load_b(float* rb, const global float* Bb, const int ldb, const int N, const int K, const int n0,
                          const int k0, const int tid, const bool aligned) {
  const bool full = n0 + BN <= N && k0 + BK <= K;
#pragma unroll
  for (int c = 0; c < B_CHUNKS; ++c) {
    const int v = tid + c * THREADS;
    const int n = n0 + CHUNK_ROW(v), k = k0 + 4 * CHUNK_KC(v);
    float* r = rb + 4 * c;
#if TRANS_B
    if (full && aligned) {
      vstore4(*(const global float4*)&B_AT(Bb, k, n, ldb), 0, r);
      continue;
    }
#endif
#pragma unroll
    for (int e = 0; e < 4; ++e) r[e] = (full || (n < N && k + e < K)) ? B_AT(Bb, k + e, n, ldb) : 0.0f;
  }
}

// The staged chunks into a tile of R rows, rounded to TF32.
static inline void store_tile(local uint* tile, const int R, const int chunks, const float* r, const int tid) {
#pragma unroll
  for (int c = 0; c < chunks; ++c) {
    const int v = tid + c * THREADS;
    const uint4 w = (uint4)(to_tf32(r[4 * c]), to_tf32(r[4 * c + 1]), to_tf32(r[4 * c + 2]), to_tf32(r[4 * c + 3]));
    *(local uint4*)(tile + 4 * CORE(R, CHUNK_ROW(v), CHUNK_KC(v))) = w;
  }
}

// This warpgroup's wgmma of one staged tile (BK / 8 steps of FMW m64 x BN x 8 blocks), committed
// as one group.
static inline void issue_wgmma(float* acc, const local uint* As, const local uint* Bs, const int warpgroup) {
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < BK / 8; ++ks) {
    const ulong desc_b = wgmma_desc(Bs + 4 * CORE(BN, 0, 2 * ks), BN * 16, 128);
#pragma unroll
    for (int fm = 0; fm < FMW; ++fm) {
      const int row = (warpgroup * FMW + fm) * 64;
      wgmma_mma(acc + fm * ACC, wgmma_desc(As + 4 * CORE(BM, row, 2 * ks), BM * 16, 128), desc_b);
    }
  }
  wgmma_commit();
}

// One k-tile: the wgmma of tile `tile` (in buffer tile % 2) start; meanwhile tile + 1, whose global
// loads were issued first, is stored into the other buffer, which every warpgroup's wgmma finished
// reading before the previous step's barrier. (Studied on the H200, probe25-33, all slower or no
// faster: a second register set loading two tiles ahead; leaving this tile's wgmma in flight
// across the barrier, which with two warpgroups would also let one overwrite a buffer the other
// still reads; cp.async staging with the rounding done in local memory.)
static inline void step(float* acc, local uint* As_all, local uint* Bs_all, float* ra, float* rb, const int tile,
                        const int tiles, const global float* Ab, const int lda, const global float* Bb, const int ldb,
                        const int M, const int N, const int K, const int m0, const int n0, const int tid,
                        const int warpgroup, const bool a_aligned, const bool b_aligned) {
  const int cur = tile & 1;
  if (!(ABLATE & 1) && tile + 1 < tiles) {
    load_a(ra, Ab, lda, M, K, m0, (tile + 1) * BK, tid, a_aligned);
    load_b(rb, Bb, ldb, N, K, n0, (tile + 1) * BK, tid, b_aligned);
  }
#if !(ABLATE & 4)
  issue_wgmma(acc, As_all + cur * BM * BK, Bs_all + cur * BN * BK, warpgroup);
#endif
  if (!(ABLATE & 2) && tile + 1 < tiles) {
    store_tile(As_all + (cur ^ 1) * BM * BK, BM, A_CHUNKS, ra, tid);
    store_tile(Bs_all + (cur ^ 1) * BN * BK, BN, B_CHUNKS, rb, tid);
    fence_async_local();
  }
  wgmma_wait_all();
#if !(ABLATE & 8)
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
}

__attribute__((reqd_work_group_size(THREADS, 1, 1)))
kernel void gemm_wgmma(const int M, const int N, const int K, const float alpha, const float beta,
                       const global float* restrict A, const long a_offset, const int lda, const long stride_a,
                       const global float* restrict B, const long b_offset, const int ldb, const long stride_b,
                       global float* C, const long c_offset, const int ldc, const long stride_c GEMM_EPILOGUE_PARAMS) {
  const int tid = get_local_id(0);
  const int warpgroup = tid / 128;
  const int n0 = get_group_id(0) * BN;
  const int m0 = get_group_id(1) * BM;
  const long batch = get_group_id(2);
  const global float* Ab = A + a_offset + batch * stride_a;
  const global float* Bb = B + b_offset + batch * stride_b;
  global float* Cb = C + c_offset + batch * stride_c;
  const bool a_aligned = lda % 4 == 0 && a_offset % 4 == 0 && stride_a % 4 == 0;
  const bool b_aligned = ldb % 4 == 0 && b_offset % 4 == 0 && stride_b % 4 == 0;

  float acc[FMW * ACC];
#pragma unroll
  for (int i = 0; i < FMW * ACC; ++i) acc[i] = 0.0f;

  // Two local buffers: while the wgmma of one tile run, the next tile goes into the other.
  local uint As_all[2 * BM * BK] __attribute__((aligned(128)));
  local uint Bs_all[2 * BN * BK] __attribute__((aligned(128)));
  const int tiles = (K + BK - 1) / BK;
  float ra[4 * A_CHUNKS], rb[4 * B_CHUNKS];
  load_a(ra, Ab, lda, M, K, m0, 0, tid, a_aligned);
  load_b(rb, Bb, ldb, N, K, n0, 0, tid, b_aligned);
  store_tile(As_all, BM, A_CHUNKS, ra, tid);
  store_tile(Bs_all, BN, B_CHUNKS, rb, tid);
  fence_async_local();
  barrier(CLK_LOCAL_MEM_FENCE);
  fence_accumulators(acc);
  for (int tile = 0; tile < tiles; ++tile) {
    step(acc, As_all, Bs_all, ra, rb, tile, tiles, Ab, lda, Bb, ldb, M, N, K, m0, n0, tid, warpgroup, a_aligned, b_aligned);
  }
  wgmma_wait_all();
  fence_accumulators(acc);

  store_accumulators(acc, Cb, ldc, M, N, m0, n0, alpha, beta GEMM_EPILOGUE_ARGS);
}
