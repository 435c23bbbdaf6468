// Implicit-GEMM convolution in all three directions: the tiled, register-blocked GEMM of gemm.cl
// (same tiling parameters) whose operand loads gather the im2col matrix straight from the NCHW
// tensors, so no im2col buffer exists. Per group g (grid dimension 2) it computes C = A * B with
//   fwd:        C[k][n,p,q] = w[k][c,r,s]  * x(c,r,s ; n,p,q)      GM=Kg GN=N*P*Q GK=Cg*R*S
//   bwd_data:   C[c][n,h,w] = w[k,r,s][c]  * dy(k,r,s ; n,h,w)     GM=Cg GN=N*H*W GK=Kg*R*S
//   bwd_weight: C[k][c,r,s] = dy[k][n,p,q] * x(n,p,q ; c,r,s)      GM=Kg GN=Cg*R*S GK=N*P*Q
// where x(...) is zero in the padding and dy(...) is zero where no output position maps to (h, w).
// Launch: global (ceil(GN/NWG)*NDIMC, ceil(GM/MWG)*MDIMC, groups), local (NDIMC, MDIMC, 1).

// ---- Problem layout (set by the host, not tuned) ----
#ifndef DIR
#define DIR 0  // 0 forward, 1 backward-data, 2 backward-weight
#endif

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

// Which GEMM index the work-items of a tile load run along, for contiguous global reads.
#if DIR == 2
#define B_K_FAST 1  // x(n,p,q ; c,r,s) is contiguous along q
#else
#define B_K_FAST 0  // x(c,r,s ; n,p,q) and dy(k,r,s ; n,h,w) are contiguous along q / w
#endif

typedef struct {
  int N, C, H, W, K, P, Q, R, S, sh, sw, ph, pw, dh, dw, Cg, Kg, RS, GM, GN, GK;
} Dims;

// A(m, kk) of group g; zero past GK (m is clamped by the caller).
static inline float a_elem(const Dims* d, const global float* A, const int g, const int m, const int kk) {
  if (kk >= d->GK) return 0.0f;
#if DIR == 0
  return A[((long)(g * d->Kg + m)) * d->GK + kk];  // w[k][c,r,s]
#elif DIR == 1
  const int k = kk / d->RS, rs = kk - (kk / d->RS) * d->RS;
  return A[((long)(g * d->Kg + k) * d->Cg + m) * d->RS + rs];  // w[k][c][r,s]
#else
  const int pq_count = d->P * d->Q;
  const int n = kk / pq_count, pq = kk - (kk / pq_count) * pq_count;
  return A[((long)n * d->K + g * d->Kg + m) * pq_count + pq];  // dy[n][k][p,q]
#endif
}

// B(kk, nn) of group g; zero past GK and in the padding (nn is clamped by the caller).
static inline float b_elem(const Dims* d, const global float* B, const int g, const int kk, const int nn) {
  if (kk >= d->GK) return 0.0f;
#if DIR == 0
  const int c = kk / d->RS, rs = kk - c * d->RS;
  const int r = rs / d->S, s = rs - r * d->S;
  const int pq_count = d->P * d->Q;
  const int n = nn / pq_count, pq = nn - n * pq_count;
  const int p = pq / d->Q, q = pq - p * d->Q;
  const int ih = p * d->sh - d->ph + r * d->dh, iw = q * d->sw - d->pw + s * d->dw;
  if (ih < 0 || ih >= d->H || iw < 0 || iw >= d->W) return 0.0f;
  return B[(((long)n * d->C + g * d->Cg + c) * d->H + ih) * d->W + iw];
#elif DIR == 1
  const int k = kk / d->RS, rs = kk - k * d->RS;
  const int r = rs / d->S, s = rs - r * d->S;
  const int hw = d->H * d->W;
  const int n = nn / hw, rem = nn - n * hw;
  const int h = rem / d->W, w = rem - h * d->W;
  const int th = h + d->ph - r * d->dh, tw = w + d->pw - s * d->dw;
  if (th < 0 || tw < 0) return 0.0f;
  const int p = th / d->sh, q = tw / d->sw;
  if (p * d->sh != th || q * d->sw != tw || p >= d->P || q >= d->Q) return 0.0f;
  return B[(((long)n * d->K + g * d->Kg + k) * d->P + p) * d->Q + q];
#else
  const int pq_count = d->P * d->Q;
  const int n = kk / pq_count, pq = kk - n * pq_count;
  const int p = pq / d->Q, q = pq - p * d->Q;
  const int c = nn / d->RS, rs = nn - c * d->RS;
  const int r = rs / d->S, s = rs - r * d->S;
  const int ih = p * d->sh - d->ph + r * d->dh, iw = q * d->sw - d->pw + s * d->dw;
  if (ih < 0 || ih >= d->H || iw < 0 || iw >= d->W) return 0.0f;
  return B[(((long)n * d->C + g * d->Cg + c) * d->H + ih) * d->W + iw];
#endif
}

// Where C(m, nn) of group g lives in the output tensor.
static inline long c_index(const Dims* d, const int g, const int m, const int nn) {
#if DIR == 0
  const int pq_count = d->P * d->Q;
  const int n = nn / pq_count, pq = nn - n * pq_count;
  return ((long)n * d->K + g * d->Kg + m) * pq_count + pq;
#elif DIR == 1
  const int hw = d->H * d->W;
  const int n = nn / hw, rem = nn - n * hw;
  return ((long)n * d->C + g * d->Cg + m) * hw + rem;
#else
  return (long)(g * d->Kg + m) * d->GN + nn;
#endif
}

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
  _Pragma("unroll") for (int i = 0; i < WPTM; ++i) a[i] = a_elem(&d, A, g, min(m0 + ROW_OF(i, tm), d.GM - 1), k0 + (kk));
#endif
#if SB
#define K_STEP_LOAD_B(kk)                                                                        \
  _Pragma("unroll") for (int jv = 0; jv < WPTN / VWN; ++jv) {                                    \
    STORE_PRIV_N(*(local const floatN*)(Bs + (kk) * NWG + jv * (NDIMC * VWN) + tn * VWN), b + jv * VWN); \
  }
#else
#define K_STEP_LOAD_B(kk) \
  _Pragma("unroll") for (int j = 0; j < WPTN; ++j) b[j] = b_elem(&d, B, g, k0 + (kk), min(n0 + COL_OF(j, tn), d.GN - 1));
#endif

__attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
kernel void conv2d_igemm(CONV_SHAPE_PARAMS, const global float* restrict A, const long a_offset,
                         const global float* restrict B, const long b_offset, global float* Cout, const long c_offset,
                         const global float* bias, const long bias_offset) {
  Dims d;
  d.N = N; d.C = C; d.H = H; d.W = W; d.K = K; d.P = P; d.Q = Q; d.R = R; d.S = S;
  d.sh = stride_h; d.sw = stride_w; d.ph = pad_h; d.pw = pad_w; d.dh = dil_h; d.dw = dil_w;
  d.Cg = C / groups; d.Kg = K / groups; d.RS = R * S;
#if DIR == 0
  d.GM = d.Kg; d.GN = N * P * Q; d.GK = d.Cg * d.RS;
#elif DIR == 1
  d.GM = d.Cg; d.GN = N * H * W; d.GK = d.Kg * d.RS;
#else
  d.GM = d.Kg; d.GN = d.Cg * d.RS; d.GK = N * P * Q;
#endif
  A += a_offset;
  B += b_offset;
  Cout += c_offset;
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int tid = tm * NDIMC + tn;
  const int n0 = get_group_id(0) * NWG, m0 = get_group_id(1) * MWG;
  const int g = get_group_id(2);

  float acc[WPTM * WPTN];
#pragma unroll
  for (int i = 0; i < WPTM * WPTN; ++i) acc[i] = 0.0f;
#if SA
  local float As[KWG * MWG];
#endif
#if SB
  local float Bs[KWG * NWG];
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
      As[kk * MWG + m] = a_elem(&d, A, g, min(m0 + m, d.GM - 1), k0 + kk);
    }
#endif
#if SB
#pragma unroll
    for (int e = 0; e < LB; ++e) {
      const int v = tid + e * NTHREADS;
#if B_K_FAST
      const int kk = v % KWG, nn = v / KWG;
#else
      const int nn = v % NWG, kk = v / NWG;
#endif
      Bs[kk * NWG + nn] = b_elem(&d, B, g, k0 + kk, min(n0 + nn, d.GN - 1));
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
    const float b = bias[bias_offset + g * d.Kg + m];
#endif
#pragma unroll
    for (int j = 0; j < WPTN; ++j) {
      const int nn = n0 + COL_OF(j, tn);
      if (nn >= d.GN) continue;
#if DIR == 0 && HAS_BIAS
      Cout[c_index(&d, g, m, nn)] = activate(acc[i * WPTN + j] + b);
#elif DIR == 0
      Cout[c_index(&d, g, m, nn)] = activate(acc[i * WPTN + j]);
#else
      Cout[c_index(&d, g, m, nn)] = acc[i * WPTN + j];
#endif
    }
  }
}
