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
#ifndef LDSM
#define LDSM 0  // 1: A fragments with one ldmatrix.x4 each instead of four 32-bit local loads
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
    As[(c + 0) * AS + s] = w.x;
    As[(c + 1) * AS + s] = w.y;
    As[(c + 2) * AS + s] = w.z;
    As[(c + 3) * AS + s] = w.w;
#else
    *(local uint4*)(As + s * AS + c) = w;  // AS and c are multiples of 4
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
    Bs[(c + 0) * BS + s] = w.x;
    Bs[(c + 1) * BS + s] = w.y;
    Bs[(c + 2) * BS + s] = w.z;
    Bs[(c + 3) * BS + s] = w.w;
#else
    *(local uint4*)(Bs + s * BS + c) = w;  // BS and c are multiples of 4
#endif
  }
}

#if LDSM
// Four 8x4 TF32 matrices (16-byte rows) from local memory in one instruction: lanes 8j..8j+7 give
// the row addresses of matrix j; each lane receives row lane/4, element lane%4 of every matrix,
// which is exactly the layout of a0..a3 when the matrices are (rows 0-7 | 8-15) x (k 0-3 | 4-7).
static inline void ldmatrix_x4(uint* d, const local uint* row) {
  const uint address = (uint)(size_t)row;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(address));
}
#endif

// All BK/8 k-steps of one staged tile: fragments from local memory, FM x FN mma per step.
static inline void mma_tile(float* acc, const local uint* As, const local uint* Bs, const int warp_m, const int warp_n,
                            const int g, const int t) {
#pragma unroll
  for (int kk = 0; kk < BK; kk += 8) {
    uint a[FM][4], b[FN][2];
#pragma unroll
    for (int fm = 0; fm < FM; ++fm) {
#if LDSM
      const int lane = 4 * g + t, j = lane / 8;
      ldmatrix_x4(a[fm], As + (warp_m * TM + fm * 16 + (j % 2) * 8 + lane % 8) * AS + kk + (j / 2) * 4);
#else
      const local uint* p = As + (warp_m * TM + fm * 16 + g) * AS + kk + t;
      a[fm][0] = p[0];
      a[fm][1] = p[8 * AS];
      a[fm][2] = p[4];
      a[fm][3] = p[8 * AS + 4];
#endif
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

  local uint As_all[(DBUF + 1) * A_TILE] __attribute__((aligned(16)));  // uint4 stores, ldmatrix rows
  local uint Bs_all[(DBUF + 1) * B_TILE] __attribute__((aligned(16)));
  float ra[LA], rb[LB];
  float acc[FM * FN * 4];
#pragma unroll
  for (int i = 0; i < FM * FN * 4; ++i) acc[i] = 0.0f;

  const bool a_aligned = lda % 4 == 0 && a_offset % 4 == 0 && stride_a % 4 == 0;
  const bool b_aligned = ldb % 4 == 0 && b_offset % 4 == 0 && stride_b % 4 == 0;
  const int tiles = (K + BK - 1) / BK;
#if DBUF
  load_a(ra, Ab, lda, M, K, m0, 0, tid, a_aligned);
  load_b(rb, Bb, ldb, N, K, n0, 0, tid, b_aligned);
  store_a(As_all, ra, tid);
  store_b(Bs_all, rb, tid);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int tile = 0; tile < tiles; ++tile) {
    const int cur = tile & 1;
    if (tile + 1 < tiles) {  // global loads of the next tile overlap the mma loop
      load_a(ra, Ab, lda, M, K, m0, (tile + 1) * BK, tid, a_aligned);
      load_b(rb, Bb, ldb, N, K, n0, (tile + 1) * BK, tid, b_aligned);
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
    load_a(ra, Ab, lda, M, K, m0, tile * BK, tid, a_aligned);
    load_b(rb, Bb, ldb, N, K, n0, tile * BK, tid, b_aligned);
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
