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
  int N, C, H, W, K, P, Q, R, S, sh, sw, ph, pw, dh, dw, Cg, Kg, RS, PQ, HW, GM, GN, GK, g;
  FastDiv div_rs, div_s, div_pq, div_q, div_hw, div_w, div_sh, div_sw;
} Dims;

// B(kk, nn) is gathered in two halves: what depends on the column nn (fixed per work-item across
// all K tiles, so computed once where the load mapping allows) and what depends on the row kk.
// Both are (offset, row term, column term); the element sits at offset sum + row * W + column
// (fwd, bwd_weight: input coordinates) or at the output position the terms divide to (bwd_data).
typedef struct {
  int offset, a, b;
} Part;

static inline Part b_column(const Dims* d, const int nn) {
  Part c;
#if DIR == 0
  const int n = fastdiv(nn, d->div_pq), pq = nn - n * d->PQ;
  const int p = fastdiv(pq, d->div_q), q = pq - p * d->Q;
  c.offset = (n * d->C + d->g * d->Cg) * d->HW;  // tensors hold < 2^31 elements
  c.a = p * d->sh - d->ph;
  c.b = q * d->sw - d->pw;
#elif DIR == 1
  const int n = fastdiv(nn, d->div_hw), hw = nn - n * d->HW;
  const int h = fastdiv(hw, d->div_w), w = hw - h * d->W;
  c.offset = (n * d->K + d->g * d->Kg) * d->PQ;
  c.a = h + d->ph;
  c.b = w + d->pw;
#else
  const int ch = fastdiv(nn, d->div_rs), rs = nn - ch * d->RS;
  const int r = fastdiv(rs, d->div_s), s = rs - r * d->S;
  c.offset = (d->g * d->Cg + ch) * d->HW;
  c.a = r * d->dh - d->ph;
  c.b = s * d->dw - d->pw;
#endif
  return c;
}

// The row half; offset -1 past GK (the zero-filled end of the last K tile).
static inline Part b_row(const Dims* d, const int kk_in) {
  Part r;
  const int kk = min(kk_in, d->GK - 1);
#if DIR == 0 || DIR == 1
  const int ch = fastdiv(kk, d->div_rs), rs = kk - ch * d->RS;
  const int fr = fastdiv(rs, d->div_s), fs = rs - fr * d->S;
#if DIR == 0
  r.offset = ch * d->HW;
  r.a = fr * d->dh;
  r.b = fs * d->dw;
#else
  r.offset = ch * d->PQ;
  r.a = -fr * d->dh;
  r.b = -fs * d->dw;
#endif
#else
  const int n = fastdiv(kk, d->div_pq), pq = kk - n * d->PQ;
  const int p = fastdiv(pq, d->div_q), q = pq - p * d->Q;
  r.offset = n * d->C * d->HW;
  r.a = p * d->sh;
  r.b = q * d->sw;
#endif
  if (kk_in >= d->GK) r.offset = -1;
  return r;
}

// Branch-free (a select on an always-valid address), so that CPU compilers can vectorise the
// loads across work-items and GPUs do not diverge in the padding.
static inline float b_elem(const Dims* d, const global float* B, const Part col, const Part row) {
  const int y = col.a + row.a, x = col.b + row.b;
#if DIR == 1
  // dy(p, q) contributes where y = p * stride exactly.
  const int p = fastdiv(max(y, 0), d->div_sh), q = fastdiv(max(x, 0), d->div_sw);
  const bool ok = row.offset >= 0 && y >= 0 && x >= 0 && p * d->sh == y && q * d->sw == x && p < d->P && q < d->Q;
  const float v = B[ok ? col.offset + row.offset + p * d->Q + q : 0];
#else
  const bool ok = row.offset >= 0 && y >= 0 && y < d->H && x >= 0 && x < d->W;
  const float v = B[ok ? col.offset + row.offset + y * d->W + x : 0];
#endif
  return ok ? v : 0.0f;
}

// A(m, kk); zero past GK (m is clamped by the caller).
static inline float a_elem(const Dims* d, const global float* A, const int m, const int kk) {
  const bool ok = kk < d->GK;
  const int k = min(kk, d->GK - 1);
#if DIR == 0
  const float v = A[(d->g * d->Kg + m) * d->GK + k];  // w[k][c,r,s]
#elif DIR == 1
  const int ko = fastdiv(k, d->div_rs), rs = k - ko * d->RS;
  const float v = A[((d->g * d->Kg + ko) * d->Cg + m) * d->RS + rs];  // w[k][c][r,s]
#else
  const int n = fastdiv(k, d->div_pq), pq = k - n * d->PQ;
  const float v = A[(n * d->K + d->g * d->Kg + m) * d->PQ + pq];  // dy[n][k][p,q]
#endif
  return ok ? v : 0.0f;
}

// Where C(m, nn) lives in the output tensor.
static inline int c_index(const Dims* d, const int m, const int nn) {
#if DIR == 0
  const int n = fastdiv(nn, d->div_pq), pq = nn - n * d->PQ;
  return (n * d->K + d->g * d->Kg + m) * d->PQ + pq;
#elif DIR == 1
  const int n = fastdiv(nn, d->div_hw), hw = nn - n * d->HW;
  return (n * d->C + d->g * d->Cg + m) * d->HW + hw;
#else
  return (d->g * d->Kg + m) * d->GN + nn;
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
kernel void conv2d_igemm(CONV_SHAPE_PARAMS, const global float* restrict A, const long a_offset,
                         const global float* restrict B, const long b_offset, global float* Cout, const long c_offset,
                         const global float* bias, const long bias_offset) {
  Dims d;
  d.N = N; d.C = C; d.H = H; d.W = W; d.K = K; d.P = P; d.Q = Q; d.R = R; d.S = S;
  d.sh = stride_h; d.sw = stride_w; d.ph = pad_h; d.pw = pad_w; d.dh = dil_h; d.dw = dil_w;
  d.Cg = C / groups; d.Kg = K / groups; d.RS = R * S; d.PQ = P * Q; d.HW = H * W;
#if DIR == 0
  d.GM = d.Kg; d.GN = N * d.PQ; d.GK = d.Cg * d.RS;
#elif DIR == 1
  d.GM = d.Cg; d.GN = N * d.HW; d.GK = d.Kg * d.RS;
#else
  d.GM = d.Kg; d.GN = d.Cg * d.RS; d.GK = N * d.PQ;
#endif
  d.div_rs = fastdiv_for(d.RS); d.div_s = fastdiv_for(S); d.div_pq = fastdiv_for(d.PQ); d.div_q = fastdiv_for(Q);
  d.div_hw = fastdiv_for(d.HW); d.div_w = fastdiv_for(W); d.div_sh = fastdiv_for(stride_h); d.div_sw = fastdiv_for(stride_w);
  d.g = get_group_id(2);
  A += a_offset;
  B += b_offset;
  Cout += c_offset;
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int tid = tm * NDIMC + tn;
  const int n0 = get_group_id(0) * NWG, m0 = get_group_id(1) * MWG;

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
    const float b = bias[bias_offset + d.g * d.Kg + m];
#endif
#pragma unroll
    for (int j = 0; j < WPTN; ++j) {
      const int nn = n0 + COL_OF(j, tn);
      if (nn >= d.GN) continue;
#if DIR == 0 && HAS_BIAS
      Cout[c_index(&d, m, nn)] = activate(acc[i * WPTN + j] + b);
#elif DIR == 0
      Cout[c_index(&d, m, nn)] = activate(acc[i * WPTN + j]);
#else
      Cout[c_index(&d, m, nn)] = acc[i * WPTN + j];
#endif
    }
  }
}
