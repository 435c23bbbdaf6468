// SGEMM on NVIDIA tensor cores in TF32 (math mode "tf32"): C = alpha * op(A) * op(B) + beta * C,
// row-major, strided batches, any M, N, K >= 1. Inline PTX mma.sync.m16n8k8 (compute capability
// >= 8.0, checked by the host before this file is ever built). Operands are rounded to TF32
// (cvt.rna) once, when staged into local memory; accumulation is fp32.
// Launch: global (ceil(N/BN)*32*WN, ceil(M/BM)*WM, batch), local (32*WN, WM, 1).

// ---- Problem layout (set by the host) ----
#ifndef TRANS_A
#define TRANS_A 0  // 1: A is stored K x M
#endif
#ifndef TRANS_B
#define TRANS_B 0  // 1: B is stored N x K
#endif

// ---- Tunables ----
#ifndef BM
#define BM 128  // rows of C per work-group
#endif
#ifndef BN
#define BN 128  // columns of C per work-group
#endif
#ifndef BK
#define BK 16  // depth of the K tile staged per step (a multiple of 8)
#endif
#ifndef WM
#define WM 2  // warps along M; each warp computes (BM/WM) x (BN/WN) with m16n8 fragments
#endif
#ifndef WN
#define WN 4  // warps along N
#endif
#ifndef DBUF
#define DBUF 1  // 1: two local buffers, next tile prefetched into registers during the mma loop
#endif

// ---- Derived ----
#define THREADS (32 * WM * WN)
#define TM (BM / WM)  // warp tile rows
#define TN (BN / WN)  // warp tile columns
#define FM (TM / 16)  // m16 fragments per warp
#define FN (TN / 8)   // n8 fragments per warp
// Row strides of the local tiles, padded so that fragment reads hit 32 different banks.
#define AS (BK + 4)  // As[m][k]
#define BS (BN + 8)  // Bs[k][n]
#define A_TILE (BM * AS)
#define B_TILE (BK * BS)
#define LA (BM * BK / THREADS)  // A elements each thread stages per tile
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

// Round to the nearest TF32 value (10 mantissa bits), ties away from zero, as cuBLAS does.
static inline uint to_tf32(const float x) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// d = a * b + d for one m16n8k8 tile; fragment layouts as in the PTX ISA (groupID = lane >> 2,
// threadID_in_group = lane & 3).
static inline void mma_tf32(float* d, const uint a0, const uint a1, const uint a2, const uint a3, const uint b0,
                            const uint b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// This thread's LA elements of the BM x BK tile of op(A) at (m0, k0), zero outside the matrix.
// Consecutive threads take consecutive elements along the storage's contiguous direction.
static inline void load_a(float* ra, const global float* Ab, const int lda, const int M, const int K, const int m0,
                          const int k0, const int tid) {
#pragma unroll
  for (int r = 0; r < LA; ++r) {
    const int e = tid + r * THREADS;
#if TRANS_A
    const int m = e % BM, k = e / BM;
#else
    const int k = e % BK, m = e / BK;
#endif
    ra[r] = (m0 + m < M && k0 + k < K) ? A_AT(Ab, m0 + m, k0 + k, lda) : 0.0f;
  }
}

static inline void store_a(local uint* As, const float* ra, const int tid) {
#pragma unroll
  for (int r = 0; r < LA; ++r) {
    const int e = tid + r * THREADS;
#if TRANS_A
    const int m = e % BM, k = e / BM;
#else
    const int k = e % BK, m = e / BK;
#endif
    As[m * AS + k] = to_tf32(ra[r]);
  }
}

static inline void load_b(float* rb, const global float* Bb, const int ldb, const int N, const int K, const int n0,
                          const int k0, const int tid) {
#pragma unroll
  for (int r = 0; r < LB; ++r) {
    const int e = tid + r * THREADS;
#if TRANS_B
    const int k = e % BK, n = e / BK;
#else
    const int n = e % BN, k = e / BN;
#endif
    rb[r] = (n0 + n < N && k0 + k < K) ? B_AT(Bb, k0 + k, n0 + n, ldb) : 0.0f;
  }
}

static inline void store_b(local uint* Bs, const float* rb, const int tid) {
#pragma unroll
  for (int r = 0; r < LB; ++r) {
    const int e = tid + r * THREADS;
#if TRANS_B
    const int k = e % BK, n = e / BK;
#else
    const int n = e % BN, k = e / BN;
#endif
    Bs[k * BS + n] = to_tf32(rb[r]);
  }
}

// All BK/8 k-steps of one staged tile: fragments from local memory, FM x FN mma per step.
static inline void mma_tile(float* acc, const local uint* As, const local uint* Bs, const int warp_m, const int warp_n,
                            const int g, const int t) {
#pragma unroll
  for (int kk = 0; kk < BK; kk += 8) {
    uint a[FM][4], b[FN][2];
#pragma unroll
    for (int fm = 0; fm < FM; ++fm) {
      const local uint* p = As + (warp_m * TM + fm * 16 + g) * AS + kk + t;
      a[fm][0] = p[0];
      a[fm][1] = p[8 * AS];
      a[fm][2] = p[4];
      a[fm][3] = p[8 * AS + 4];
    }
#pragma unroll
    for (int fn = 0; fn < FN; ++fn) {
      const local uint* p = Bs + (kk + t) * BS + warp_n * TN + fn * 8 + g;
      b[fn][0] = p[0];
      b[fn][1] = p[4 * BS];
    }
#pragma unroll
    for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
      for (int fn = 0; fn < FN; ++fn) {
        mma_tf32(acc + (fm * FN + fn) * 4, a[fm][0], a[fm][1], a[fm][2], a[fm][3], b[fn][0], b[fn][1]);
      }
    }
  }
}

__attribute__((reqd_work_group_size(32 * WN, WM, 1)))
kernel void gemm_mma(const int M, const int N, const int K, const float alpha, const float beta,
                     const global float* restrict A, const long a_offset, const int lda, const long stride_a,
                     const global float* restrict B, const long b_offset, const int ldb, const long stride_b,
                     global float* C, const long c_offset, const int ldc, const long stride_c) {
  const int lane = get_local_id(0) % 32;
  const int warp_n = get_local_id(0) / 32;
  const int warp_m = get_local_id(1);
  const int tid = get_local_id(1) * (32 * WN) + get_local_id(0);
  const int g = lane >> 2, t = lane & 3;
  const int n0 = get_group_id(0) * BN;
  const int m0 = get_group_id(1) * BM;
  const long batch = get_group_id(2);
  const global float* Ab = A + a_offset + batch * stride_a;
  const global float* Bb = B + b_offset + batch * stride_b;
  global float* Cb = C + c_offset + batch * stride_c;

  local uint As_all[(DBUF + 1) * A_TILE] __attribute__((aligned(16)));
  local uint Bs_all[(DBUF + 1) * B_TILE] __attribute__((aligned(16)));
  float ra[LA], rb[LB];
  float acc[FM * FN * 4];
#pragma unroll
  for (int i = 0; i < FM * FN * 4; ++i) acc[i] = 0.0f;

  const int tiles = (K + BK - 1) / BK;
#if DBUF
  load_a(ra, Ab, lda, M, K, m0, 0, tid);
  load_b(rb, Bb, ldb, N, K, n0, 0, tid);
  store_a(As_all, ra, tid);
  store_b(Bs_all, rb, tid);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int tile = 0; tile < tiles; ++tile) {
    const int cur = tile & 1;
    if (tile + 1 < tiles) {  // global loads of the next tile overlap the mma loop
      load_a(ra, Ab, lda, M, K, m0, (tile + 1) * BK, tid);
      load_b(rb, Bb, ldb, N, K, n0, (tile + 1) * BK, tid);
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
    load_a(ra, Ab, lda, M, K, m0, tile * BK, tid);
    load_b(rb, Bb, ldb, N, K, n0, tile * BK, tid);
    store_a(As_all, ra, tid);
    store_b(Bs_all, rb, tid);
    barrier(CLK_LOCAL_MEM_FENCE);
    mma_tile(acc, As_all, Bs_all, warp_m, warp_n, g, t);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

  // Accumulator fragment: c0, c1 at (g, 2t), (g, 2t+1); c2, c3 eight rows below.
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
    for (int fn = 0; fn < FN; ++fn) {
      const int n = n0 + warp_n * TN + fn * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + warp_m * TM + fm * 16 + g + 8 * h;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          if (n + j < N) {
            global float* dst = Cb + (long)m * ldc + n + j;
            float result = alpha * acc[(fm * FN + fn) * 4 + 2 * h + j];
            if (beta != 0.0f) result += beta * *dst;
            *dst = result;
          }
        }
      }
    }
  }
}
