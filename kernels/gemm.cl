// Tiled, register-blocked SGEMM: C = alpha * op(A) * op(B) + beta * C, row-major, strided batches.
// Any M, N, K >= 1: rows and columns past the edge are clamped on load and never stored; the last
// K tile is zero-filled. Launch: global (ceil(N/NWG)*NDIMC, ceil(M/MWG)*MDIMC, batch * KSPLIT),
// local (NDIMC, MDIMC, 1).

// Problem layout (TRANS_A, TRANS_B) and operand indexing (A_INDEX, B_INDEX): gemm_layout.cl, prepended.

// ---- Tunables ----
#ifndef MWG
#define MWG 32  // rows of C per work-group tile
#endif
#ifndef NWG
#define NWG 32  // columns of C per work-group tile
#endif
#ifndef KWG
#define KWG 16  // depth of the K tile loaded per step
#endif
#ifndef WPTM
#define WPTM 4  // rows of C per work-item (register block)
#endif
#ifndef WPTN
#define WPTN 4  // columns of C per work-item (register block)
#endif
#ifndef VWM
#define VWM 1  // a work-item's rows come in runs of VWM adjacent rows, read as one vector
#endif
#ifndef VWN
#define VWN 1  // a work-item's columns come in runs of VWN adjacent columns; width of C stores
#endif
#ifndef VWL
#define VWL 1  // vector width of global loads into local memory
#endif
#ifndef SA
#define SA 1  // 1: stage A tiles through local memory; 0: read A from global in the inner loop
#endif
#ifndef SB
#define SB 1  // 1: stage B tiles through local memory; 0: read B from global in the inner loop
#endif
#ifndef KWI
#define KWI 1  // unroll factor of the inner k loop
#endif
#ifndef DB
#define DB 0  // 1: two local buffers; the next tile is loaded into registers during compute
#endif
#ifndef WTN
#define WTN 0  // work-items along N inside each warp of 32 (0: plain order of local ids); 2-D warp
               // blocks make more of a warp's local-memory reads coincide
#endif
#ifndef KSPLIT
#define KSPLIT 1  // parts of K multiplied by separate work-groups (split K): each part writes its own
                  // partial product (alpha * op(A) * op(B) over its K range) to entry
                  // batch * KSPLIT + part of C, and kernels/gemm_ksplit_sum.cl adds them up with
                  // beta * C. For problems whose tiles do not fill the device: few, long dot products
#endif

// ---- Derived ----
#define MDIMC (MWG / WPTM)  // work-items along M
#define NDIMC (NWG / WPTN)  // work-items along N
#define NTHREADS (MDIMC * NDIMC)
#define STAGED (SA || SB)
#define NBUF (DB + 1)
#define LA (MWG * KWG / NTHREADS)  // A elements each work-item loads per tile (SA=1)
#define LB (NWG * KWG / NTHREADS)  // B elements each work-item loads per tile (SB=1)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VWL == 1
#define floatL float
#define STORE_PRIV_L(v, p) (*(p) = (v))
#define LOAD_PRIV_L(p) (*(p))
#else
#define floatL CAT(float, VWL)
#define STORE_PRIV_L(v, p) CAT(vstore, VWL)((v), 0, (p))
#define LOAD_PRIV_L(p) CAT(vload, VWL)(0, (p))
#endif
#if VWM == 1
#define floatM float
#define STORE_PRIV_M(v, p) (*(p) = (v))
#else
#define floatM CAT(float, VWM)
#define STORE_PRIV_M(v, p) CAT(vstore, VWM)((v), 0, (p))
#endif
#if VWN == 1
#define floatN float
#define STORE_PRIV_N(v, p) (*(p) = (v))
#define LOAD_PRIV_N(p) (*(p))
#else
#define floatN CAT(float, VWN)
#define STORE_PRIV_N(v, p) CAT(vstore, VWN)((v), 0, (p))
#define LOAD_PRIV_N(p) CAT(vload, VWN)(0, (p))
#endif

// Row (within the tile) of a work-item's i-th row: runs of VWM rows, MDIMC*VWM apart.
#define ROW_OF(i, tm) (((i) / VWM) * (MDIMC * VWM) + (tm) * VWM + ((i) % VWM))
#define COL_OF(j, tn) (((j) / VWN) * (NDIMC * VWN) + (tn) * VWN + ((j) % VWN))

#if SA
// Loads this work-item's share of the MWG x KWG tile of op(A) at (m0, k0) into ra. Storage is
// contiguous along k (no transpose) or m (transpose); vectors of VWL run along that direction.
static inline void load_a(float* ra, const global float* A, const int lda, const int M, const int K, const int m0,
                   const int k0, const bool vector_ok, const int tid) {
#if TRANS_A
#define A_CONTIG MWG
#else
#define A_CONTIG KWG
#endif
  const bool full = vector_ok && (k0 + KWG <= K) && (TRANS_A == 0 || m0 + MWG <= M);
#pragma unroll
  for (int r = 0; r < LA / VWL; ++r) {
    const int v = tid + r * NTHREADS;
    const int c = (v % (A_CONTIG / VWL)) * VWL;  // offset along the contiguous direction
    const int s = v / (A_CONTIG / VWL);          // offset along the strided direction
#if TRANS_A
    const int k = k0 + s, m = m0 + c;
#else
    const int m = min(m0 + s, M - 1), k = k0 + c;
#endif
    if (full) {
      STORE_PRIV_L(*(const global floatL*)(A + A_INDEX(m, k, lda)), ra + r * VWL);
    } else {
#pragma unroll
      for (int e = 0; e < VWL; ++e) {
#if TRANS_A
        ra[r * VWL + e] = k < K ? A[A_INDEX(min(m + e, M - 1), k, lda)] : 0.0f;
#else
        ra[r * VWL + e] = k + e < K ? A[A_INDEX(m, k + e, lda)] : 0.0f;
#endif
      }
    }
  }
}

// Stores ra into the local tile As[k][m] (k-major, so a k step reads contiguous rows).
static inline void store_a(local float* As, const float* ra, const int tid) {
#pragma unroll
  for (int r = 0; r < LA / VWL; ++r) {
    const int v = tid + r * NTHREADS;
    const int c = (v % (A_CONTIG / VWL)) * VWL;
    const int s = v / (A_CONTIG / VWL);
#if TRANS_A
    // Contiguous in m on both sides: one aligned vector store (c and MWG are multiples of VWL).
    *(local floatL*)(As + s * MWG + c) = LOAD_PRIV_L(ra + r * VWL);
#else
#pragma unroll
    for (int e = 0; e < VWL; ++e) As[(c + e) * MWG + s] = ra[r * VWL + e];
#endif
  }
}
#endif  // SA

#if SB
// Loads this work-item's share of the KWG x NWG tile of op(B) at (k0, n0) into rb.
static inline void load_b(float* rb, const global float* B, const int ldb, const int N, const int K, const int n0,
                   const int k0, const bool vector_ok, const int tid) {
#if TRANS_B
#define B_CONTIG KWG
#else
#define B_CONTIG NWG
#endif
  const bool full = vector_ok && (k0 + KWG <= K) && (TRANS_B == 1 || n0 + NWG <= N);
#pragma unroll
  for (int r = 0; r < LB / VWL; ++r) {
    const int v = tid + r * NTHREADS;
    const int c = (v % (B_CONTIG / VWL)) * VWL;
    const int s = v / (B_CONTIG / VWL);
#if TRANS_B
    const int n = min(n0 + s, N - 1), k = k0 + c;
#else
    const int k = k0 + s, n = n0 + c;
#endif
    if (full) {
      STORE_PRIV_L(*(const global floatL*)(B + B_INDEX(k, n, ldb)), rb + r * VWL);
    } else {
#pragma unroll
      for (int e = 0; e < VWL; ++e) {
#if TRANS_B
        rb[r * VWL + e] = k + e < K ? B[B_INDEX(k + e, n, ldb)] : 0.0f;
#else
        rb[r * VWL + e] = k < K ? B[B_INDEX(k, min(n + e, N - 1), ldb)] : 0.0f;
#endif
      }
    }
  }
}

// Stores rb into the local tile Bs[k][n].
static inline void store_b(local float* Bs, const float* rb, const int tid) {
#pragma unroll
  for (int r = 0; r < LB / VWL; ++r) {
    const int v = tid + r * NTHREADS;
    const int c = (v % (B_CONTIG / VWL)) * VWL;
    const int s = v / (B_CONTIG / VWL);
#if TRANS_B
#pragma unroll
    for (int e = 0; e < VWL; ++e) Bs[(c + e) * NWG + s] = rb[r * VWL + e];
#else
    *(local floatL*)(Bs + s * NWG + c) = LOAD_PRIV_L(rb + r * VWL);
#endif
  }
}
#endif  // SB

// One k step of the register-blocked outer product: acc += a(:, k) * b(k, :).
// Operands come from the local tiles (SA/SB) or straight from global memory (rows/columns clamped).
#define K_STEP(kk)                                                                                    \
  {                                                                                                   \
    float a[WPTM], b[WPTN];                                                                           \
    K_STEP_LOAD_A(kk)                                                                                 \
    K_STEP_LOAD_B(kk)                                                                                 \
    _Pragma("unroll") for (int i = 0; i < WPTM; ++i) {                                                \
      _Pragma("unroll") for (int j = 0; j < WPTN; ++j) { acc[i * WPTN + j] = fma(a[i], b[j], acc[i * WPTN + j]); } \
    }                                                                                                 \
  }

#if SA
#define K_STEP_LOAD_A(kk)                                                                       \
  _Pragma("unroll") for (int iv = 0; iv < WPTM / VWM; ++iv) {                                   \
    STORE_PRIV_M(*(local const floatM*)(As + (kk) * MWG + iv * (MDIMC * VWM) + tm * VWM), a + iv * VWM); \
  }
#else
// Straight from global memory. Where A is contiguous along m (TRANS_A) and this tile is interior
// and aligned, runs of VWM rows are one vector load; elsewhere rows are clamped one by one.
#define K_STEP_LOAD_A(kk)                                                                                  \
  if (a_direct_vector) {                                                                                   \
    _Pragma("unroll") for (int iv = 0; iv < WPTM / VWM; ++iv) {                                            \
      STORE_PRIV_M(*(const global floatM*)(Ab + A_INDEX(m0 + iv * (MDIMC * VWM) + tm * VWM, k0 + (kk), lda)), \
                   a + iv * VWM);                                                                          \
    }                                                                                                      \
  } else {                                                                                                 \
    _Pragma("unroll") for (int i = 0; i < WPTM; ++i) a[i] = Ab[A_INDEX(min(m0 + ROW_OF(i, tm), M - 1), k0 + (kk), lda)]; \
  }
#endif
#if SB
#define K_STEP_LOAD_B(kk)                                                                       \
  _Pragma("unroll") for (int jv = 0; jv < WPTN / VWN; ++jv) {                                   \
    STORE_PRIV_N(*(local const floatN*)(Bs + (kk) * NWG + jv * (NDIMC * VWN) + tn * VWN), b + jv * VWN); \
  }
#else
// Straight from global memory; vector loads of VWN columns where B is contiguous along n (no
// transpose) and the tile is interior and aligned (on CPUs this is what vectorises the FMAs).
#define K_STEP_LOAD_B(kk)                                                                                  \
  if (b_direct_vector) {                                                                                   \
    _Pragma("unroll") for (int jv = 0; jv < WPTN / VWN; ++jv) {                                            \
      STORE_PRIV_N(*(const global floatN*)(Bb + B_INDEX(k0 + (kk), n0 + jv * (NDIMC * VWN) + tn * VWN, ldb)), \
                   b + jv * VWN);                                                                          \
    }                                                                                                      \
  } else {                                                                                                 \
    _Pragma("unroll") for (int j = 0; j < WPTN; ++j) b[j] = Bb[B_INDEX(k0 + (kk), min(n0 + COL_OF(j, tn), N - 1), ldb)]; \
  }
#endif

// Multiplies a whole KWG tile (constant trip count, unrolled by KWI) ...
#define COMPUTE_FULL_TILE()                         \
  for (int kk = 0; kk < KWG; kk += KWI) {           \
    _Pragma("unroll") for (int ki = 0; ki < KWI; ++ki) K_STEP(kk + ki) \
  }
// ... or the last, partial one (staged operands are zero-filled, global reads must stop at K).
#define COMPUTE_PARTIAL_TILE(kcount) \
  for (int kk = 0; kk < (kcount); ++kk) K_STEP(kk)

__attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
kernel void gemm(const int M, const int N, const int K_all, const float alpha, const float beta,
                 const global float* restrict A, const long a_offset, const int lda, const long stride_a,
                 const global float* restrict B, const long b_offset, const int ldb, const long stride_b,
                 global float* C, const long c_offset, const int ldc, const long stride_c GEMM_EPILOGUE_PARAMS) {
  const int tid = get_local_id(1) * NDIMC + get_local_id(0);  // linear id: staging loads
#if WTN == 0
  const int tn = get_local_id(0);
  const int tm = get_local_id(1);
#else
  // Warp w covers a WTN x (32/WTN) block of the work-item grid instead of a row of it.
  const int lane = tid % 32, warp = tid / 32;
  const int tn = (warp % (NDIMC / WTN)) * WTN + lane % WTN;
  const int tm = (warp / (NDIMC / WTN)) * (32 / WTN) + lane / WTN;
#endif
  const int n0 = get_group_id(0) * NWG;
  const int m0 = get_group_id(1) * MWG;
#if KSPLIT > 1
  // This work-group's part of K: parts of whole KWG tiles (so vector loads stay aligned), the last
  // one shorter or empty (an empty part writes zeros, which the sum needs).
  const long batch = get_group_id(2) / KSPLIT;
  const int part = get_group_id(2) % KSPLIT;
  const int part_k = (K_all + KSPLIT * KWG - 1) / (KSPLIT * KWG) * KWG;
  const int k_begin = min(part * part_k, K_all);
  const int K = min(part_k, K_all - k_begin);
  const global float* Ab = A + a_offset + batch * stride_a + A_INDEX(0, k_begin, lda);
  const global float* Bb = B + b_offset + batch * stride_b + B_INDEX(k_begin, 0, ldb);
  global float* Cb = C + c_offset + (batch * KSPLIT + part) * stride_c;
#else
  const int K = K_all;
  const long batch = get_group_id(2);
  const global float* Ab = A + a_offset + batch * stride_a;
  const global float* Bb = B + b_offset + batch * stride_b;
  global float* Cb = C + c_offset + batch * stride_c;
#endif

  float acc[WPTM * WPTN];
#pragma unroll
  for (int i = 0; i < WPTM * WPTN; ++i) acc[i] = 0.0f;

#if !SA
  const bool a_direct_vector = TRANS_A && VWM > 1 && (m0 + MWG <= M) && (lda % VWM == 0) && (a_offset % VWM == 0) &&
                               (stride_a % VWM == 0);
#endif
#if !SB
  const bool b_direct_vector = !TRANS_B && VWN > 1 && (n0 + NWG <= N) && (ldb % VWN == 0) && (b_offset % VWN == 0) &&
                               (stride_b % VWN == 0);
#endif
#if SA
  // 64-byte aligned: the inner loop reads these as vectors of up to 16 floats (a misaligned vector
  // access faults on GPUs).
  local float As_all[NBUF * KWG * MWG] __attribute__((aligned(64)));
  float ra[LA];
  const bool a_vector_ok = (lda % VWL == 0) && (a_offset % VWL == 0) && (stride_a % VWL == 0);
#endif
#if SB
  local float Bs_all[NBUF * KWG * NWG] __attribute__((aligned(64)));
  float rb[LB];
  const bool b_vector_ok = (ldb % VWL == 0) && (b_offset % VWL == 0) && (stride_b % VWL == 0);
#endif

  const int tiles = (K + KWG - 1) / KWG;
#if STAGED && DB
  // Prologue: tile 0 into buffer 0.
#if SA
  load_a(ra, Ab, lda, M, K, m0, 0, a_vector_ok, tid);
  store_a(As_all, ra, tid);
#endif
#if SB
  load_b(rb, Bb, ldb, N, K, n0, 0, b_vector_ok, tid);
  store_b(Bs_all, rb, tid);
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
#endif

  for (int t = 0; t < tiles; ++t) {
    const int k0 = t * KWG;
#if STAGED && DB
    const int cur = t & 1;
    // Issue the global loads of the next tile before computing on this one.
    if (t + 1 < tiles) {
#if SA
      load_a(ra, Ab, lda, M, K, m0, k0 + KWG, a_vector_ok, tid);
#endif
#if SB
      load_b(rb, Bb, ldb, N, K, n0, k0 + KWG, b_vector_ok, tid);
#endif
    }
#elif STAGED
    const int cur = 0;
#if SA
    load_a(ra, Ab, lda, M, K, m0, k0, a_vector_ok, tid);
    store_a(As_all, ra, tid);
#endif
#if SB
    load_b(rb, Bb, ldb, N, K, n0, k0, b_vector_ok, tid);
    store_b(Bs_all, rb, tid);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if SA
    const local float* As = As_all + cur * (KWG * MWG);
#endif
#if SB
    const local float* Bs = Bs_all + cur * (KWG * NWG);
#endif

    if (k0 + KWG <= K) {
      COMPUTE_FULL_TILE()
    } else {
      COMPUTE_PARTIAL_TILE(K - k0)
    }

#if STAGED && DB
    if (t + 1 < tiles) {
#if SA
      store_a(As_all + (cur ^ 1) * (KWG * MWG), ra, tid);
#endif
#if SB
      store_b(Bs_all + (cur ^ 1) * (KWG * NWG), rb, tid);
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#elif STAGED
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  // Epilogue: C = act(alpha * acc + beta * C + bias) (gemm_epilogue.cl); C is not read when beta == 0
  // (BLAS semantics).
  const bool c_vector_ok = (ldc % VWN == 0) && (c_offset % VWN == 0) && (stride_c % VWN == 0) &&
                           (m0 + MWG <= M) && (n0 + NWG <= N);
#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    const int m = m0 + ROW_OF(i, tm);
    if (c_vector_ok) {
#pragma unroll
      for (int jv = 0; jv < WPTN / VWN; ++jv) {
        global floatN* dst = (global floatN*)(Cb + m * ldc + n0 + jv * (NDIMC * VWN) + tn * VWN);
        floatN result = alpha * LOAD_PRIV_N(acc + i * WPTN + jv * VWN);
        if (beta != 0.0f) result += beta * *dst;
#if GEMM_HAS_EPILOGUE
        const int n = n0 + jv * (NDIMC * VWN) + tn * VWN;
        float lanes[VWN];
        STORE_PRIV_N(result, lanes);
#pragma unroll
        for (int e = 0; e < VWN; ++e) lanes[e] = GEMM_EPILOGUE(lanes[e], n + e);
        result = LOAD_PRIV_N(lanes);
#endif
        *dst = result;
      }
    } else if (m < M) {
#pragma unroll
      for (int j = 0; j < WPTN; ++j) {
        const int n = n0 + COL_OF(j, tn);
        if (n < N) {
          global float* dst = Cb + m * ldc + n;
          float result = alpha * acc[i * WPTN + j];
          if (beta != 0.0f) result += beta * *dst;
          *dst = GEMM_EPILOGUE(result, n);
        }
      }
    }
  }
}
