// The storage layout of GEMM operands, shared by gemm.cl, gemm_cpu.cl and gemm_wgmma.cl (appended
// after it).

// ---- Problem layout (set by the host, not tuned) ----
#ifndef TRANS_A
#define TRANS_A 0  // 1: A is stored K x M and op(A) = A^T
#endif
#ifndef TRANS_B
#define TRANS_B 0  // 1: B is stored N x K and op(B) = B^T
#endif

// Element (m, k) of op(A) and (k, n) of op(B) in storage, relative to the matrix base.
#if TRANS_A
#define A_INDEX(m, k, ld) ((k) * (ld) + (m))
#else
#define A_INDEX(m, k, ld) ((m) * (ld) + (k))
#endif
#if TRANS_B
#define B_INDEX(k, n, ld) ((n) * (ld) + (k))
#else
#define B_INDEX(k, n, ld) ((k) * (ld) + (n))
#endif
