// The im2col view of the implicit-GEMM convolution, shared by conv2d_igemm.cl (FMA) and
// conv2d_igemm_mma.cl (tensor cores), which are appended after it. Per group g (grid dimension 2)
// the convolution is C = A * B with
//   fwd:        C[k][n,p,q] = w[k][c,r,s]  * x(c,r,s ; n,p,q)      GM=Kg GN=N*P*Q GK=Cg*R*S
//   bwd_data:   C[c][n,h,w] = w[k,r,s][c]  * dy(k,r,s ; n,h,w)     GM=Cg GN=N*H*W GK=Kg*R*S
//   bwd_weight: C[k][c,r,s] = dy[k][n,p,q] * x(n,p,q ; c,r,s)      GM=Kg GN=Cg*R*S GK=N*P*Q
// where x(...) is zero in the padding and dy(...) is zero where no output position maps to (h, w).
// This file gathers elements of A and B from the NCHW tensors (STORAGE, read as fp32) and says
// where C(m, nn) lives.

// ---- Problem layout (set by the host, not tuned) ----
#ifndef DIR
#define DIR 0  // 0 forward, 1 backward-data, 2 backward-weight
#endif

// A strided input gradient gathers dy only where h + ph - r = p * sh exactly: at stride 2, three of
// four (tap, position) pairs are zeros the GEMM multiplies anyway (resnet50's strided layers ran at
// 0.09-0.17 of cuDNN's speed in bf16). PHASED (set by the host: input gradient, a stride > 1,
// dilation 1) runs one dense stride-1 GEMM per stride phase (a_h, a_w) = (h mod sh, w mod sw), grid
// dimension 2 running groups x sh x sw. In phase a_h only the taps r = r0 + j sh with
// r0 = (a_h + ph) mod sh reach an output, at p = i + e_h - j for h = a_h + i sh, e_h = (a_h + ph - r0) / sh:
//   C[c][n,i,i2] = w[k,j,jj][c] * dy(k,j,jj ; n,i,i2)              GM=Cg GN=N*Hp*Wp GK=Kg*Rp*Sp
// with Hp = ceil((H - a_h) / sh) positions and Rp = ceil((R - r0) / sh) taps (likewise along w). A
// phase without taps (a 1x1 filter at stride 2 reaches phase (0, 0) only, with pad 0) has GK = 0 and
// stores zeros; one without positions (Hp = 0) returns at once.
#ifndef PHASED
#define PHASED 0
#endif
#if PHASED && DIR != 1
#error "PHASED splits the input gradient only"
#endif

// KMAJOR (conv2d_igemm_mma.cl's tap-outer gathers only): the host has copied the gathered tensor to
// channels-last order (NHWC) and the filters to tap-major order, so that the channels a tile sums per
// tap are contiguous. b_column's offset is then the column's image position base (n H W or n P Q),
// not an NCHW offset.
#ifndef KMAJOR
#define KMAJOR 0
#endif

// Which GEMM index the work-items of a tile load run along, for contiguous global reads.
#if DIR == 2
#define B_K_FAST 1  // x(n,p,q ; c,r,s) is contiguous along q
#else
#define B_K_FAST 0  // x(c,r,s ; n,p,q) and dy(k,r,s ; n,h,w) are contiguous along q / w
#endif

typedef struct {
  int N, C, H, W, K, P, Q, R, S, sh, sw, ph, pw, dh, dw, Cg, Kg, RS, PQ, HW, GM, GN, GK, g;
  FastDiv div_rs, div_s, div_pq, div_q, div_hw, div_w, div_sh, div_sw;
#if PHASED
  int ah, aw, r0, s0, eh, ew, Hp, Wp, Rp, Sp;  // the phase, see PHASED
  FastDiv div_rsp, div_sp, div_hwp, div_wp;
#endif
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
  c.offset = KMAJOR ? n * d->HW : (n * d->C + d->g * d->Cg) * d->HW;  // tensors hold < 2^31 elements
  c.a = p * d->sh - d->ph;
  c.b = q * d->sw - d->pw;
#elif DIR == 1 && PHASED
  // Position (i, i2) of the phase: the output row and column its taps count back from.
  const int n = fastdiv(nn, d->div_hwp), hw = nn - n * d->Hp * d->Wp;
  const int i = fastdiv(hw, d->div_wp), i2 = hw - i * d->Wp;
  c.offset = KMAJOR ? n * d->PQ : (n * d->K + d->g * d->Kg) * d->PQ;
  c.a = i + d->eh;
  c.b = i2 + d->ew;
#elif DIR == 1
  const int n = fastdiv(nn, d->div_hw), hw = nn - n * d->HW;
  const int h = fastdiv(hw, d->div_w), w = hw - h * d->W;
  c.offset = KMAJOR ? n * d->PQ : (n * d->K + d->g * d->Kg) * d->PQ;
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
#if PHASED
  const int ch = fastdiv(kk, d->div_rsp), rs = kk - ch * d->Rp * d->Sp;
  const int j = fastdiv(rs, d->div_sp), jj = rs - j * d->Sp;
  r.offset = ch * d->PQ;
  r.a = -j;
  r.b = -jj;
#elif DIR == 0 || DIR == 1
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
static inline float b_elem(const Dims* d, const global STORAGE* B, const Part col, const Part row) {
  const int y = col.a + row.a, x = col.b + row.b;
#if PHASED
  // (y, x) is the output position itself.
  const bool ok = row.offset >= 0 && y >= 0 && y < d->P && x >= 0 && x < d->Q;
  const float v = LOAD(B, ok ? col.offset + row.offset + y * d->Q + x : 0);
#elif DIR == 1
  // dy(p, q) contributes where y = p * stride exactly.
  const int p = fastdiv(max(y, 0), d->div_sh), q = fastdiv(max(x, 0), d->div_sw);
  const bool ok = row.offset >= 0 && y >= 0 && x >= 0 && p * d->sh == y && q * d->sw == x && p < d->P && q < d->Q;
  const float v = LOAD(B, ok ? col.offset + row.offset + p * d->Q + q : 0);
#else
  const bool ok = row.offset >= 0 && y >= 0 && y < d->H && x >= 0 && x < d->W;
  const float v = LOAD(B, ok ? col.offset + row.offset + y * d->W + x : 0);
#endif
  return ok ? v : 0.0f;
}

// The filter tap (r S + s) of the GEMM's tap `tap` (r S + s itself, or with PHASED the phase's tap
// (j, jj): r = r0 + j stride_h, s = s0 + jj stride_w).
static inline int filter_tap(const Dims* d, const int tap) {
#if PHASED
  const int j = fastdiv(tap, d->div_sp), jj = tap - j * d->Sp;
  return (d->r0 + j * d->sh) * d->S + d->s0 + jj * d->sw;
#else
  return tap;
#endif
}

// A(m, kk); zero past GK (m is clamped by the caller).
static inline float a_elem(const Dims* d, const global STORAGE* A, const int m, const int kk) {
  const bool ok = kk < d->GK;
  const int k = min(kk, d->GK - 1);
#if DIR == 0
  const float v = LOAD(A, (d->g * d->Kg + m) * d->GK + k);  // w[k][c,r,s]
#elif DIR == 1 && PHASED
  const int ko = fastdiv(k, d->div_rsp), tap = k - ko * d->Rp * d->Sp;
  const float v = LOAD(A, ((d->g * d->Kg + ko) * d->Cg + m) * d->RS + filter_tap(d, tap));  // w[k][c][r,s]
#elif DIR == 1
  const int ko = fastdiv(k, d->div_rs), rs = k - ko * d->RS;
  const float v = LOAD(A, ((d->g * d->Kg + ko) * d->Cg + m) * d->RS + rs);  // w[k][c][r,s]
#else
  const int n = fastdiv(k, d->div_pq), pq = k - n * d->PQ;
  const float v = LOAD(A, (n * d->K + d->g * d->Kg + m) * d->PQ + pq);  // dy[n][k][p,q]
#endif
  return ok ? v : 0.0f;
}

// Where C(m, nn) lives in the output tensor.
static inline int c_index(const Dims* d, const int m, const int nn) {
#if DIR == 0
  const int n = fastdiv(nn, d->div_pq), pq = nn - n * d->PQ;
  return (n * d->K + d->g * d->Kg + m) * d->PQ + pq;
#elif DIR == 1 && PHASED
  const int n = fastdiv(nn, d->div_hwp), hw = nn - n * d->Hp * d->Wp;
  const int i = fastdiv(hw, d->div_wp), i2 = hw - i * d->Wp;
  return (n * d->C + d->g * d->Cg + m) * d->HW + (d->ah + i * d->sh) * d->W + d->aw + i2 * d->sw;
#elif DIR == 1
  const int n = fastdiv(nn, d->div_hw), hw = nn - n * d->HW;
  return (n * d->C + d->g * d->Cg + m) * d->HW + hw;
#else
  return (d->g * d->Kg + m) * d->GN + nn;
#endif
}

// The argument names of CONV_SHAPE_PARAMS, to pass them on.
#define CONV_SHAPE_ARGS N, C, H, W, K, P, Q, R, S, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups

// The GEMM view of group `g` of the convolution (with PHASED: of stride phase `phase` of it,
// phases numbered along w fastest).
static inline Dims conv_dims(CONV_SHAPE_PARAMS, const int g, const int phase) {
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
  d.g = g;
#if PHASED
  d.ah = phase / stride_w;
  d.aw = phase - d.ah * stride_w;
  d.r0 = (d.ah + pad_h) % stride_h;
  d.s0 = (d.aw + pad_w) % stride_w;
  d.eh = (d.ah + pad_h - d.r0) / stride_h;
  d.ew = (d.aw + pad_w - d.s0) / stride_w;
  d.Hp = max(H - d.ah + stride_h - 1, 0) / stride_h;
  d.Wp = max(W - d.aw + stride_w - 1, 0) / stride_w;
  d.Rp = max(R - d.r0 + stride_h - 1, 0) / stride_h;
  d.Sp = max(S - d.s0 + stride_w - 1, 0) / stride_w;
  d.GN = N * d.Hp * d.Wp;
  d.GK = d.Kg * d.Rp * d.Sp;
  // Divisors of at least 1: an empty phase divides nothing, and a CPU would trap on 0.
  d.div_rsp = fastdiv_for(max(d.Rp * d.Sp, 1));
  d.div_sp = fastdiv_for(max(d.Sp, 1));
  d.div_hwp = fastdiv_for(max(d.Hp * d.Wp, 1));
  d.div_wp = fastdiv_for(max(d.Wp, 1));
#endif
  return d;
}
