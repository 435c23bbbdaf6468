// SGEMM for CPU devices: C = alpha * op(A) * op(B) + beta * C, row-major, strided batches.
// One work-item per work-group owns an MWG x NWG block of C (no work-item loop for the driver to
// vectorise: the vectors are explicit). Per K block it packs op(A) into MR-row micro-panels and
// op(B) into NR-column micro-panels in local memory (contiguous whatever the layout; rows and
// columns past the edges are zero or repeat the last one, and are never stored), then runs an
// MR x NR register tile per micro-panel pair: MR * NV floatVW accumulators, per k MR broadcasts of
// A and NV vector loads of B. Partial sums of K blocks go through C.
// Launch: global (ceil(N/NWG), ceil(M/MWG), batch), local (1, 1, 1).

// Problem layout (TRANS_A, TRANS_B) and operand indexing (A_INDEX, B_INDEX): gemm_layout.cl, prepended.

// ---- Tunables ----
#ifndef MR
#define MR 6  // rows of the register tile (broadcasts of A per k)
#endif
#ifndef VW
#define VW 16  // vector width of the register tile: 4, 8 or 16 floats
#endif
#ifndef NV
#define NV 2  // vectors per row of the register tile (columns NR = NV * VW)
#endif
#ifndef MB
#define MB 8  // register tiles along M per work-group
#endif
#ifndef NB
#define NB 4  // register tiles along N per work-group
#endif
#ifndef KC
#define KC 256  // depth of the packed K block (a KC x NR panel of B should stay in L1)
#endif

// ---- Derived ----
#define NR (NV * VW)   // columns of the register tile
#define MWG (MB * MR)  // rows of C per work-group
#define NWG (NB * NR)  // columns of C per work-group

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VW)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)

// Packs op(A)[m0 .. m0+MWG, k0 .. k0+kc] as Ap[(ip * KC + k) * MR + r] (row ip * MR + r). Rows past
// M repeat row M - 1 (valid memory; their results are never stored). The stores run contiguously:
// a loop that stores with a stride of MR becomes a scatter, which cost a quarter of the time.
static void pack_a(local float* Ap, const global float* A, const int lda, const int M, const int m0, const int k0,
                   const int kc) {
  for (int ip = 0; ip < MB; ++ip) {
    local float* dst = Ap + ip * KC * MR;
#if TRANS_A
    // Storage is contiguous along m: each k reads MR adjacent floats of one row of A^T.
    const int m = m0 + ip * MR;
    const global float* src = A + A_INDEX(m, k0, lda);
    if (m + MR <= M) {
      for (int k = 0; k < kc; ++k) {
#pragma unroll
        for (int r = 0; r < MR; ++r) dst[k * MR + r] = src[k * lda + r];
      }
    } else {
      for (int k = 0; k < kc; ++k) {
#pragma unroll
        for (int r = 0; r < MR; ++r) dst[k * MR + r] = src[k * lda + min(r, M - 1 - m)];
      }
    }
#else
    // Storage is contiguous along k: MR row streams, interleaved into the panel.
    const global float* rows[MR];
#pragma unroll
    for (int r = 0; r < MR; ++r) rows[r] = A + A_INDEX(min(m0 + ip * MR + r, M - 1), k0, lda);
    for (int k = 0; k < kc; ++k) {
#pragma unroll
      for (int r = 0; r < MR; ++r) dst[k * MR + r] = rows[r][k];
    }
#endif
  }
}

// Packs op(B)[k0 .. k0+kc, n0 .. n0+NWG] as Bp[(jp * KC + k) * NR + c] (column jp * NR + c);
// columns past N are zero (no transpose) or repeat column N - 1 (transpose); they are never stored.
static void pack_b(local float* Bp, const global float* B, const int ldb, const int N, const int n0, const int k0,
                   const int kc) {
#if TRANS_B
  // Storage is contiguous along k: 4 columns x 4 k are read as float4s and transposed in registers,
  // so that the stores run along n (the strided-store loop became a scatter, as in pack_a).
  for (int col = 0; col < NWG; col += 4) {
    local float* dst = Bp + (col / NR) * KC * NR + col % NR;  // 16-byte aligned: NR and col are multiples of 4
    const global float* s0 = B + B_INDEX(k0, min(n0 + col, N - 1), ldb);
    const global float* s1 = B + B_INDEX(k0, min(n0 + col + 1, N - 1), ldb);
    const global float* s2 = B + B_INDEX(k0, min(n0 + col + 2, N - 1), ldb);
    const global float* s3 = B + B_INDEX(k0, min(n0 + col + 3, N - 1), ldb);
    int k = 0;
    for (; k + 4 <= kc; k += 4) {
      const float4 c0 = vload4(0, s0 + k), c1 = vload4(0, s1 + k), c2 = vload4(0, s2 + k), c3 = vload4(0, s3 + k);
      *(local float4*)(dst + (k + 0) * NR) = (float4)(c0.s0, c1.s0, c2.s0, c3.s0);
      *(local float4*)(dst + (k + 1) * NR) = (float4)(c0.s1, c1.s1, c2.s1, c3.s1);
      *(local float4*)(dst + (k + 2) * NR) = (float4)(c0.s2, c1.s2, c2.s2, c3.s2);
      *(local float4*)(dst + (k + 3) * NR) = (float4)(c0.s3, c1.s3, c2.s3, c3.s3);
    }
    for (; k < kc; ++k) *(local float4*)(dst + k * NR) = (float4)(s0[k], s1[k], s2[k], s3[k]);
  }
#else
  for (int k = 0; k < kc; ++k) {
    const global float* src = B + B_INDEX(k0 + k, 0, ldb);
    for (int jp = 0; jp < NB; ++jp) {
      local float* dst = Bp + (jp * KC + k) * NR;
      const int n = n0 + jp * NR;
      if (n + NR <= N) {
        // Unaligned vector loads (any ldb and offset), aligned local stores.
#pragma unroll
        for (int v = 0; v < NV; ++v) *(local floatV*)(dst + v * VW) = VLOAD(0, src + n + v * VW);
      } else {
        for (int c = 0; c < NR; ++c) dst[c] = n + c < N ? src[n + c] : 0.0f;
      }
    }
  }
#endif
}

// Writes one VW-wide run of a register tile row at (m, n): the first K block applies beta (C is
// not read when beta == 0, as in BLAS), later blocks add to what the earlier ones stored, and the
// last applies the epilogue (gemm_epilogue.cl) to the finished sum.
static inline void store_run(global float* Cb, const int ldc, const int N, const int m, const int n, const floatV acc,
                             const float alpha, const float beta, const bool first,
                             const bool last GEMM_EPILOGUE_PARAMS) {
  global float* dst = Cb + m * ldc + n;
  if (n + VW <= N) {
    floatV result = alpha * acc;
    if (!first) {
      result += VLOAD(0, dst);
    } else if (beta != 0.0f) {
      result += beta * VLOAD(0, dst);
    }
#if GEMM_HAS_EPILOGUE
    if (last) {
      float lanes[VW];
      VSTORE(result, 0, lanes);
      for (int e = 0; e < VW; ++e) lanes[e] = GEMM_EPILOGUE(lanes[e], n + e);
      result = VLOAD(0, lanes);
    }
#endif
    VSTORE(result, 0, dst);
  } else {
    float lanes[VW];
    VSTORE(acc, 0, lanes);
    for (int e = 0; e < VW && n + e < N; ++e) {
      float result = alpha * lanes[e];
      if (!first) {
        result += dst[e];
      } else if (beta != 0.0f) {
        result += beta * dst[e];
      }
#if GEMM_HAS_EPILOGUE
      if (last) result = GEMM_EPILOGUE(result, n + e);
#endif
      dst[e] = result;
    }
  }
}

__attribute__((reqd_work_group_size(1, 1, 1)))
kernel void gemm_cpu(const int M, const int N, const int K, const float alpha, const float beta,
                     const global float* restrict A, const long a_offset, const int lda, const long stride_a,
                     const global float* restrict B, const long b_offset, const int ldb, const long stride_b,
                     global float* C, const long c_offset, const int ldc, const long stride_c GEMM_EPILOGUE_PARAMS) {
  // 64-byte aligned: the register tile reads the B panel as aligned vectors of up to 16 floats.
  local float Ap[MB * KC * MR] __attribute__((aligned(64)));
  local float Bp[NB * KC * NR] __attribute__((aligned(64)));

  const int n0 = get_group_id(0) * NWG;
  const int m0 = get_group_id(1) * MWG;
  const long batch = get_group_id(2);
  const global float* Ab = A + a_offset + batch * stride_a;
  const global float* Bb = B + b_offset + batch * stride_b;
  global float* Cb = C + c_offset + batch * stride_c;

  for (int k0 = 0; k0 < K; k0 += KC) {
    const int kc = min(KC, K - k0);
    pack_a(Ap, Ab, lda, M, m0, k0, kc);
    pack_b(Bp, Bb, ldb, N, n0, k0, kc);
    // B's micro-panel outside (it stays in L1 while A's micro-panels stream past it).
    for (int jp = 0; jp < NB; ++jp) {
      const local float* bp = Bp + jp * KC * NR;
      for (int ip = 0; ip < MB; ++ip) {
        const local float* ap = Ap + ip * KC * MR;
        floatV acc[MR * NV];
#pragma unroll
        for (int i = 0; i < MR * NV; ++i) acc[i] = (floatV)(0.0f);
        for (int k = 0; k < kc; ++k) {
          floatV b[NV];
#pragma unroll
          for (int v = 0; v < NV; ++v) b[v] = *(const local floatV*)(bp + k * NR + v * VW);
#pragma unroll
          for (int i = 0; i < MR; ++i) {
            const floatV a = (floatV)(ap[k * MR + i]);
#pragma unroll
            for (int v = 0; v < NV; ++v) acc[i * NV + v] = fma(a, b[v], acc[i * NV + v]);
          }
        }
        const int mt = m0 + ip * MR, nt = n0 + jp * NR;
#pragma unroll
        for (int i = 0; i < MR; ++i) {
          if (mt + i >= M) break;
#pragma unroll
          for (int v = 0; v < NV; ++v) {
            if (nt + v * VW < N) store_run(Cb, ldc, N, mt + i, nt + v * VW, acc[i * NV + v], alpha, beta, k0 == 0, k0 + KC >= K GEMM_EPILOGUE_ARGS);
          }
        }
      }
    }
  }
}
