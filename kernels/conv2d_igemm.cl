// Implicit-GEMM convolution in all three directions: the tiled, register-blocked GEMM of gemm.cl
// (same tiling parameters) whose operand loads gather the im2col matrix straight from the NCHW
// tensors (conv2d_igemm_gather.cl, prepended), so no im2col buffer exists.
// Launch: global (ceil(GN/NWG)*NDIMC, ceil(GM/MWG)*MDIMC, groups * phases), local (NDIMC, MDIMC, 1)
// (phases: PHASED in conv2d_igemm_gather.cl; 1 without).

// ---- Tunables (names and meanings as in gemm.cl) ----
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
#define VWM 1  // a work-item's rows come in runs of VWM adjacent rows, read from local memory as one vector
#endif
#ifndef VWN
#define VWN 1  // a work-item's columns come in runs of VWN adjacent columns
#endif
#ifndef SA
#define SA 1  // 1: stage A tiles through local memory; 0: gather A from global in the inner loop
#endif
#ifndef SB
#define SB 1  // 1: stage B tiles through local memory; 0: gather B from global in the inner loop
#endif
#ifndef KWI
#define KWI 1  // unroll factor of the inner k loop
#endif

// ---- Derived ----
#define MDIMC (MWG / WPTM)
#define NDIMC (NWG / WPTN)
#define NTHREADS (MDIMC * NDIMC)
#define LA (MWG * KWG / NTHREADS)
#define LB (NWG * KWG / NTHREADS)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
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
#else
#define floatN CAT(float, VWN)
#define STORE_PRIV_N(v, p) CAT(vstore, VWN)((v), 0, (p))
#endif
#define ROW_OF(i, tm) (((i) / VWM) * (MDIMC * VWM) + (tm) * VWM + ((i) % VWM))
#define COL_OF(j, tn) (((j) / VWN) * (NDIMC * VWN) + (tn) * VWN + ((j) % VWN))

#define K_STEP(kk)                                                                                  \
  {                                                                                                 \
    float a[WPTM], b[WPTN];                                                                         \
    K_STEP_LOAD_A(kk)                                                                               \
    K_STEP_LOAD_B(kk)                                                                               \
    _Pragma("unroll") for (int i = 0; i < WPTM; ++i) {                                              \
      _Pragma("unroll") for (int j = 0; j < WPTN; ++j) acc[i * WPTN + j] = fma(a[i], b[j], acc[i * WPTN + j]); \
    }                                                                                               \
  }
#if SA
#define K_STEP_LOAD_A(kk)                                                                        \
  _Pragma("unroll") for (int iv = 0; iv < WPTM / VWM; ++iv) {                                    \
    STORE_PRIV_M(*(local const floatM*)(As + (kk) * MWG + iv * (MDIMC * VWM) + tm * VWM), a + iv * VWM); \
  }
#else
#define K_STEP_LOAD_A(kk) \
  _Pragma("unroll") for (int i = 0; i < WPTM; ++i) a[i] = a_elem(&d, A, min(m0 + ROW_OF(i, tm), d.GM - 1), k0 + (kk));
#endif
#if SB
#define K_STEP_LOAD_B(kk)                                                                        \
  _Pragma("unroll") for (int jv = 0; jv < WPTN / VWN; ++jv) {                                    \
    STORE_PRIV_N(*(local const floatN*)(Bs + (kk) * NWG + jv * (NDIMC * VWN) + tn * VWN), b + jv * VWN); \
  }
#else
#define K_STEP_LOAD_B(kk)                                                        \
  {                                                                              \
    const Part row = b_row(&d, k0 + (kk));                                       \
    _Pragma("unroll") for (int j = 0; j < WPTN; ++j) b[j] = b_elem(&d, B, cols[j], row); \
  }
#endif

__attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
kernel void conv2d_igemm(CONV_SHAPE_PARAMS, const global STORAGE* restrict A, const long a_offset,
                         const global STORAGE* restrict B, const long b_offset, global STORAGE* Cout,
                         const long c_offset, const global STORAGE* bias, const long bias_offset) {
  Dims d = conv_dims(CONV_SHAPE_ARGS, get_group_id(2) % groups, get_group_id(2) / groups);
  const int n0 = get_group_id(0) * NWG, m0 = get_group_id(1) * MWG;
  if (n0 >= d.GN) return;  // a phase with fewer positions than the grid's widest (the whole work-group)
  A += a_offset;
  B += b_offset;
  Cout += c_offset;
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int tid = tm * NDIMC + tn;

  float acc[WPTM * WPTN];
#pragma unroll
  for (int i = 0; i < WPTM * WPTN; ++i) acc[i] = 0.0f;
#if SA
  local float As[KWG * MWG] __attribute__((aligned(64)));  // read as floatM vectors
#endif
#if SB
  local float Bs[KWG * NWG] __attribute__((aligned(64)));  // read as floatN vectors
#if !B_K_FAST && NTHREADS % NWG == 0
  // Every B element this work-item loads is in column tid % NWG: decompose it once.
  const Part col = b_column(&d, min(n0 + tid % NWG, d.GN - 1));
#endif
#else
  Part cols[WPTN];
#pragma unroll
  for (int j = 0; j < WPTN; ++j) cols[j] = b_column(&d, min(n0 + COL_OF(j, tn), d.GN - 1));
#endif

  for (int k0 = 0; k0 < d.GK; k0 += KWG) {
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if SA
    // A is contiguous along k in every direction: consecutive work-items take consecutive k.
#pragma unroll
    for (int e = 0; e < LA; ++e) {
      const int v = tid + e * NTHREADS;
      const int kk = v % KWG, m = v / KWG;
      As[kk * MWG + m] = a_elem(&d, A, min(m0 + m, d.GM - 1), k0 + kk);
    }
#endif
#if SB
#pragma unroll
    for (int e = 0; e < LB; ++e) {
      const int v = tid + e * NTHREADS;
#if B_K_FAST
      const int kk = v % KWG, nn = v / KWG;
      const Part col = b_column(&d, min(n0 + nn, d.GN - 1));
#elif NTHREADS % NWG == 0
      const int nn = tid % NWG, kk = v / NWG;
#else
      const int nn = v % NWG, kk = v / NWG;
      const Part col = b_column(&d, min(n0 + nn, d.GN - 1));
#endif
      Bs[kk * NWG + nn] = b_elem(&d, B, col, b_row(&d, k0 + kk));
    }
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    if (k0 + KWG <= d.GK) {
      for (int kk = 0; kk < KWG; kk += KWI) {
#pragma unroll
        for (int ki = 0; ki < KWI; ++ki) K_STEP(kk + ki)
      }
    } else {
      for (int kk = 0; kk < d.GK - k0; ++kk) K_STEP(kk)
    }
  }

#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    const int m = m0 + ROW_OF(i, tm);
    if (m >= d.GM) continue;
#if DIR == 0 && HAS_BIAS
    const float b = LOAD(bias, bias_offset + d.g * d.Kg + m);
#endif
#pragma unroll
    for (int j = 0; j < WPTN; ++j) {
      const int nn = n0 + COL_OF(j, tn);
      if (nn >= d.GN) continue;
#if DIR == 0 && HAS_BIAS
      STORE(activate(acc[i * WPTN + j] + b), Cout, c_index(&d, m, nn));
#elif DIR == 0
      STORE(activate(acc[i * WPTN + j]), Cout, c_index(&d, m, nn));
#else
      STORE(acc[i * WPTN + j], Cout, c_index(&d, m, nn));
#endif
    }
  }
}
