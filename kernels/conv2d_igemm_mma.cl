// Implicit-GEMM convolution on NVIDIA tensor cores, all three directions: the per-group GEMM of
// conv2d_igemm_gather.cl, its tiles gathered through registers into local memory and multiplied
// with mma_tf32.cl's warp tiles. fp32 tensors (DTYPE 0) in math mode "tf32": each word of a tile
// one value rounded to TF32. fp16 / bf16 tensors (DTYPE 1, 2; the host sets MMA_INPUT = DTYPE): each
// word two values adjacent along K, as they are stored (products exact, sums in fp32), for
// m16n8k16. Appended after storage.cl, conv2d_common.cl, conv2d_igemm_gather.cl and mma_tf32.cl.
// Launch: global (ceil(GN/BN)*32*WN, ceil(GM/BM)*WM, groups * KSPLIT * phases), local (32*WN, WM, 1)
// (phases: PHASED in conv2d_igemm_gather.cl; 1 without).

// ---- Tunables (besides mma_tf32.cl's) ----
#ifndef DBUF
#define DBUF 1  // 1: two local buffers, the next tile gathered into registers during the mma loop
#endif
#ifndef STAGES
#define STAGES 0  // 0: tiles through registers (DBUF); 2-4: that many local buffers filled by cp.async
                  // STAGES - 1 tiles ahead of the mma loop (KMAJOR 16-bit operands only, see async_a)
#endif

#if MMA_INPUT != DTYPE
#error "MMA_INPUT must be the storage type: the mma reads the tensors' 16-bit values as they are"
#endif
#define KPW (MMA_INPUT ? 2 : 1)  // values of K per word of a tile
#define TILE_K (BK * KPW)        // values of K per staged tile
#ifndef TAP_OUTER
#define TAP_OUTER 0  // set by the host, see below
#endif
#ifndef KSPLIT
#define KSPLIT 1  // set by the host: the weight gradient's K tiles split over KSPLIT work-groups
#endif
// A weight gradient's GEMM is few tiles over a long K (resnet50's 64-channel 3x3 layer at batch 32:
// 9 tiles of 64 x 64 over K = 100352; 3.7 ms on an H100 unsplit). With KSPLIT > 1 grid dimension 2
// runs groups x KSPLIT work-groups, each summing its share of the K tiles into an fp32 partial plane
// (Cout is the host's partial planes, one weight tensor each, summed and rounded once after).
#if KSPLIT > 1 && DIR != 2
#error "KSPLIT splits the weight gradient's K only"
#endif
#if KSPLIT > 1
#define OUT_T float
#define STORE_OUT(v, p, i) ((p)[i] = (v))
#else
#define OUT_T STORAGE
#define STORE_OUT(v, p, i) STORE(v, p, i)
#endif
#define LA (BM * BK / THREADS)  // A words each thread gathers per tile
#define LB (BN * BK / THREADS)  // B words each thread gathers per tile
// KMAJOR (set by the host with TAP_OUTER): A is the filter in tap-major order and B the gathered
// tensor in channels-last order (the host's conv2d_transpose copies), so that a tile's K values of one
// tap are contiguous: each thread reads whole 32-bit words of A and LB adjacent words of B in 16-byte
// vectors, as stored (16-bit pairs need no packing), where the NCHW gathers read one 2-byte or 4-byte
// value at a time, channels HW apart (every gathered value a load of its own bound the kernel at
// 68 TFLOP/s in bf16 on an H100). Registers then hold words, converted (TF32) or not on the store.
#if KMAJOR && !TAP_OUTER
#error "KMAJOR needs TAP_OUTER"
#endif
#if STAGES >= 2 && !(KMAJOR && MMA_INPUT && B_NK && !DBUF)
#error "cp.async stages need KMAJOR 16-bit operands, the B tile as Bs[n][k] (B_NK) and DBUF = 0"
#endif
#if STAGES >= 2 && (LA % 4 || LB % 4 || BK % 4)
#error "cp.async stages copy whole 16-byte pieces: LA, LB and BK multiples of four words"
#endif
#if KMAJOR
#define REG uint
#define REGS_A LA
#define REGS_B LB
#else
#define REG float
#define REGS_A (LA * KPW)
#define REGS_B (LB * KPW)
#endif
// With a whole number of work-group rows per B column, every B element a thread gathers is in one
// column of the tile (B runs along the GEMM column except in bwd_weight, see B_K_FAST).
#define B_FIXED_COLUMN (!B_K_FAST && THREADS % BN == 0)

// One word of a tile from its KPW values (lowest K first): rounded to TF32, or two 16-bit values
// (exact: they were read from 16-bit storage) packed with the lower K in the low half, as the
// m16n8k16 fragments hold them.
static inline uint to_word(const float* v) {
#if MMA_INPUT == 0
  return to_tf32(v[0]);
#else
  uint r;
#if MMA_INPUT == 1
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(v[1]), "f"(v[0]));
#else
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(v[1]), "f"(v[0]));
#endif
  return r;
#endif
}

// A word read whole from a KMAJOR operand, as the mma takes it: 16-bit pairs as stored, fp32 to TF32.
static inline uint word_of(const uint w) {
#if MMA_INPUT == 0
  return to_tf32(as_float(w));
#else
  return w;
#endif
}

#if !TAP_OUTER
// A(m, kk) for the tile at (m0, k0): consecutive threads take consecutive words (contiguous in A).
// Values stay fp32 in registers until store_a, so that the gathers of the next tile overlap the mma
// loop instead of stalling it on a conversion.
static inline void gather_a(float* ra, const Dims* d, const global STORAGE* A, const int m0, const int k0,
                            const int tid) {
#pragma unroll
  for (int e = 0; e < LA; ++e) {
    const int v = tid + e * THREADS;
    const int m = min(m0 + v / BK, d->GM - 1), kk = k0 + (v % BK) * KPW;
#pragma unroll
    for (int h = 0; h < KPW; ++h) ra[e * KPW + h] = a_elem(d, A, m, kk + h);
  }
}

#endif

static inline void store_a(local uint* As, const REG* ra, const int tid) {
#pragma unroll
  for (int e = 0; e < LA; ++e) {
    const int v = tid + e * THREADS;
#if KMAJOR
    As[A_LOC(v / BK, v % BK)] = word_of(ra[e]);
#else
    As[A_LOC(v / BK, v % BK)] = to_word(ra + e * KPW);
#endif
  }
}

#if !TAP_OUTER
// B(kk, nn): consecutive threads take consecutive nn (contiguous along q or w), except in
// bwd_weight, where B is contiguous along kk.
static inline void gather_b(float* rb, const Dims* d, const global STORAGE* B, const Part fixed_column, const int n0,
                            const int k0, const int tid) {
#pragma unroll
  for (int e = 0; e < LB; ++e) {
    const int v = tid + e * THREADS;
#if B_K_FAST
    const int kw = v % BK, nn = v / BK;
    const Part col = b_column(d, min(n0 + nn, d->GN - 1));
#elif B_FIXED_COLUMN
    const int kw = v / BN;
    const Part col = fixed_column;
#else
    const int kw = v / BN, nn = v % BN;
    const Part col = b_column(d, min(n0 + nn, d->GN - 1));
#endif
#pragma unroll
    for (int h = 0; h < KPW; ++h) rb[e * KPW + h] = b_elem(d, B, col, b_row(d, k0 + kw * KPW + h));
  }
}
#endif

#if TAP_OUTER
// The forward and input-gradient GEMMs with K ordered by filter tap outside and channel inside
// (kk = tap * CH + ch, CH = Cg forward, Kg input gradient) instead of channel outside, where CH is
// a multiple of TILE_K and every B value a thread gathers is in one column (the host sets TAP_OUTER
// only then): a tile's K values share one tap, so a thread works out that tap's row offset, image
// position and bounds once per tile, and each value is a multiply-add from them. The gathers of the
// channel-outside order spend two divisions, an image position and four comparisons per value,
// which bound the tensor-core kernel (probe13: 32 TFLOP/s against Winograd's 50 in TF32).
#if DIR == 2 || !B_FIXED_COLUMN
#error "TAP_OUTER needs the forward or input-gradient GEMM and a fixed B column per thread"
#endif
#if DIR == 0
#define TAP_CH Cg
#else
#define TAP_CH Kg
#endif

#if KMAJOR
// A(m, kk) of the tile starting at K value k0 from the tap-major filter: row m of the group is RS taps
// of TAP_CH values each (forward [K][RS][Cg]; input gradient [groups][Cg][RS][Kg], w^T per group).
// Consecutive threads take consecutive words of a row.
static inline void gather_a(REG* ra, const Dims* d, const global STORAGE* A, const int m0, const int k0,
                            const int tid) {
  const int tap = k0 / d->TAP_CH, ch0 = k0 - tap * d->TAP_CH;
  const global uint* words = (const global uint*)A;
#pragma unroll
  for (int e = 0; e < LA; ++e) {
    const int v = tid + e * THREADS;
    const int m = min(m0 + v / BK, d->GM - 1), ch = ch0 + (v % BK) * KPW;
#if DIR == 0
    const int row = d->g * d->Kg + m;
#else
    const int row = d->g * d->Cg + m;
#endif
    ra[e] = words[((row * d->RS + filter_tap(d, tap)) * d->TAP_CH + ch) / KPW];
  }
}

// The word of the channels-last tensor where `column`'s K values of the tile at k0 start (the tile's
// tap at the column's position, its first channel), and whether that position is inside the tensor
// (ok; the word is then the first image's, which is read and discarded or not read).
static inline int kmajor_column_word(const Dims* d, const Part column, const int k0, bool* ok_out) {
  const int tap = k0 / d->TAP_CH, ch0 = k0 - tap * d->TAP_CH;
#if PHASED
  const int j = fastdiv(tap, d->div_sp), jj = tap - j * d->Sp;
  const int y = column.a - j, x = column.b - jj;
  const bool ok = y >= 0 && y < d->P && x >= 0 && x < d->Q;
  const int pos = column.offset + y * d->Q + x, channels = d->K, first_channel = d->g * d->Kg;
#elif DIR == 0
  const int fr = fastdiv(tap, d->div_s), fs = tap - fr * d->S;
  const int y = column.a + fr * d->dh, x = column.b + fs * d->dw;
  const bool ok = y >= 0 && y < d->H && x >= 0 && x < d->W;
  const int pos = column.offset + y * d->W + x, channels = d->C, first_channel = d->g * d->Cg;
#else
  const int fr = fastdiv(tap, d->div_s), fs = tap - fr * d->S;
  const int y = column.a - fr * d->dh, x = column.b - fs * d->dw;
  const int p = fastdiv(max(y, 0), d->div_sh), q = fastdiv(max(x, 0), d->div_sw);
  const bool ok = y >= 0 && x >= 0 && p * d->sh == y && q * d->sw == x && p < d->P && q < d->Q;
  const int pos = column.offset + p * d->Q + q, channels = d->K, first_channel = d->g * d->Kg;
#endif
  *ok_out = ok;
  return ((ok ? pos : 0) * channels + first_channel + ch0) / KPW;
}

// B(kk, column) from the channels-last tensor: the thread's LB words are adjacent (words
// (tid / BN) LB onwards of the tile, see store_b), read as 16-byte vectors where LB allows (the host
// sets KMAJOR where every channel offset is a multiple of 4 words: CH a multiple of TILE_K).
static inline void gather_b(REG* rb, const Dims* d, const global STORAGE* B, const Part column, const int n0,
                            const int k0, const int tid) {
  bool ok;
  const int at = kmajor_column_word(d, column, k0, &ok) + (tid / BN) * LB;
  const global uint* words = (const global uint*)B + at;
#if LB % 4 == 0
#pragma unroll
  for (int e = 0; e < LB / 4; ++e) {
    const uint4 w = ((const global uint4*)words)[e];
    rb[4 * e] = ok ? w.x : 0u;
    rb[4 * e + 1] = ok ? w.y : 0u;
    rb[4 * e + 2] = ok ? w.z : 0u;
    rb[4 * e + 3] = ok ? w.w : 0u;
  }
#elif LB % 2 == 0
#pragma unroll
  for (int e = 0; e < LB / 2; ++e) {
    const uint2 w = ((const global uint2*)words)[e];
    rb[2 * e] = ok ? w.x : 0u;
    rb[2 * e + 1] = ok ? w.y : 0u;
  }
#else
#pragma unroll
  for (int e = 0; e < LB; ++e) rb[e] = ok ? words[e] : 0u;
#endif
}

#if STAGES >= 2
// The tiles of K value k0 straight into local memory (cp.async), in the words gather_a and gather_b
// read: A as 16-byte pieces of a row's words (threads take consecutive pieces), B as the thread's LB
// adjacent words of its column, which Bs[n][k] (B_NK) keeps adjacent; a column outside the image
// (padding, a tap of no output position) is zero-filled by copying no bytes. Every piece is 16-byte
// aligned: rows and channel offsets are multiples of TILE_K values (the host's KMAJOR condition).
static inline void async_a(local uint* As, const Dims* d, const global STORAGE* A, const int m0, const int k0,
                           const int tid) {
  const int tap = k0 / d->TAP_CH, ch0 = k0 - tap * d->TAP_CH;
  const global uint* words = (const global uint*)A;
#pragma unroll
  for (int e = 0; e < LA / 4; ++e) {
    const int v = tid + e * THREADS;
    const int mm = v / (BK / 4), kw = (v % (BK / 4)) * 4;
    const int m = min(m0 + mm, d->GM - 1);
#if DIR == 0
    const int row = d->g * d->Kg + m;
#else
    const int row = d->g * d->Cg + m;
#endif
    cp_async16(As + A_LOC(mm, kw), words + ((row * d->RS + filter_tap(d, tap)) * d->TAP_CH + ch0) / KPW + kw, 16);
  }
}

static inline void async_b(local uint* Bs, const Dims* d, const global STORAGE* B, const Part column, const int k0,
                           const int tid) {
  bool ok;
  const int first_word = (tid / BN) * LB;
  const global uint* words = (const global uint*)B + kmajor_column_word(d, column, k0, &ok) + first_word;
#pragma unroll
  for (int e = 0; e < LB / 4; ++e) {
    cp_async16(Bs + B_LOC(first_word + 4 * e, tid % BN), words + 4 * e, ok ? 16 : 0);
  }
}
#endif  // STAGES >= 2
#else
// A(m, kk) of the tile starting at K value k0 (a multiple of TILE_K, so the tile's tap is k0's).
static inline void gather_a(float* ra, const Dims* d, const global STORAGE* A, const int m0, const int k0,
                            const int tid) {
  const int tap = k0 / d->TAP_CH, ch0 = k0 - tap * d->TAP_CH;
#pragma unroll
  for (int e = 0; e < LA; ++e) {
    const int v = tid + e * THREADS;
    const int m = min(m0 + v / BK, d->GM - 1), ch = ch0 + (v % BK) * KPW;
#if DIR == 0
    const int at = ((d->g * d->Kg + m) * d->Cg + ch) * d->RS + tap;  // w[k][c][r,s]
    const int step = d->RS;                                          // to the next channel c
#else
    const int at = ((d->g * d->Kg + ch) * d->Cg + m) * d->RS + filter_tap(d, tap);  // w[k][c][r,s] read as w^T
    const int step = d->Cg * d->RS;                                                 // to the next filter k
#endif
#pragma unroll
    for (int h = 0; h < KPW; ++h) ra[e * KPW + h] = LOAD(A, at + h * step);
  }
}

// B(kk, column) for the thread's column (decomposed once per kernel) and the tile's tap.
static inline void gather_b(float* rb, const Dims* d, const global STORAGE* B, const Part column, const int n0,
                            const int k0, const int tid) {
  const int tap = k0 / d->TAP_CH, ch0 = k0 - tap * d->TAP_CH;
#if PHASED
  // The phase's tap (j, jj) reads dy at (i + e_h - j, i2 + e_w - jj), an output position or outside.
  const int j = fastdiv(tap, d->div_sp), jj = tap - j * d->Sp;
  const int p = column.a - j, q = column.b - jj;
  const bool ok = p >= 0 && p < d->P && q >= 0 && q < d->Q;
  const int base = column.offset + p * d->Q + q, step = d->PQ;
#elif DIR == 0
  const int fr = fastdiv(tap, d->div_s), fs = tap - fr * d->S;
  const int y = column.a + fr * d->dh, x = column.b + fs * d->dw;
  const bool ok = y >= 0 && y < d->H && x >= 0 && x < d->W;
  const int base = column.offset + y * d->W + x, step = d->HW;  // x(c, y, x): channels HW apart
#else
  // dy(p, q) contributes to (h, w) where h + ph - r dh = p sh exactly.
  const int fr = fastdiv(tap, d->div_s), fs = tap - fr * d->S;
  const int y = column.a - fr * d->dh, x = column.b - fs * d->dw;
  const int p = fastdiv(max(y, 0), d->div_sh), q = fastdiv(max(x, 0), d->div_sw);
  const bool ok = y >= 0 && x >= 0 && p * d->sh == y && q * d->sw == x && p < d->P && q < d->Q;
  const int base = column.offset + p * d->Q + q, step = d->PQ;  // dy(k, p, q): filters PQ apart
#endif
#pragma unroll
  for (int e = 0; e < LB; ++e) {
    const int ch = ch0 + ((tid + e * THREADS) / BN) * KPW;
#pragma unroll
    for (int h = 0; h < KPW; ++h) {
      const float value = LOAD(B, ok ? base + (ch + h) * step : 0);
      rb[e * KPW + h] = ok ? value : 0.0f;
    }
  }
}
#endif  // KMAJOR
#endif  // TAP_OUTER

static inline void store_b(local uint* Bs, const REG* rb, const int tid) {
#pragma unroll
  for (int e = 0; e < LB; ++e) {
    const int v = tid + e * THREADS;
#if KMAJOR
    Bs[B_LOC((tid / BN) * LB + e, tid % BN)] = word_of(rb[e]);
#elif B_K_FAST
    Bs[B_LOC(v % BK, v / BK)] = to_word(rb + e * KPW);
#else
    Bs[B_LOC(v / BN, v % BN)] = to_word(rb + e * KPW);
#endif
  }
}

__attribute__((reqd_work_group_size(32 * WN, WM, 1)))
kernel void conv2d_igemm_mma(CONV_SHAPE_PARAMS, const global STORAGE* restrict A, const long a_offset,
                             const global STORAGE* restrict B, const long b_offset, global OUT_T* Cout,
                             const long c_offset, const global STORAGE* bias, const long bias_offset) {
  const Dims d = conv_dims(CONV_SHAPE_ARGS, get_group_id(2) % groups, get_group_id(2) / groups);
  const int n0 = get_group_id(0) * BN;
  const int m0 = get_group_id(1) * BM;
  if (n0 >= d.GN) return;  // a phase with fewer positions than the grid's widest (the whole work-group)
  A += a_offset;
  B += b_offset;
  Cout += c_offset;
  const int lane = get_local_id(0) % 32;
  const int warp_n = get_local_id(0) / 32;
  const int warp_m = get_local_id(1);
  const int tid = get_local_id(1) * (32 * WN) + get_local_id(0);
  const int g = lane >> 2, t = lane & 3;

#if STAGES >= 2
  local uint As_all[STAGES * A_TILE] __attribute__((aligned(16)));  // 16-byte copies, ldmatrix rows
  local uint Bs_all[STAGES * B_TILE] __attribute__((aligned(16)));
#else
  local uint As_all[(DBUF + 1) * A_TILE] __attribute__((aligned(16)));  // ldmatrix rows, BVEC uint4 reads
  local uint Bs_all[(DBUF + 1) * B_TILE] __attribute__((aligned(16)));
  REG ra[REGS_A], rb[REGS_B];
#endif
  float acc[FM * FN * 4];
#pragma unroll
  for (int i = 0; i < FM * FN * 4; ++i) acc[i] = 0.0f;
#if B_FIXED_COLUMN
  const Part column = b_column(&d, min(n0 + tid % BN, d.GN - 1));  // decomposed once
#else
  const Part column = {0, 0, 0};  // unused
#endif

  // This work-group's K tiles [first, tiles): all of them, or its part's share with KSPLIT.
  const int all_tiles = (d.GK + TILE_K - 1) / TILE_K;
#if KSPLIT > 1
  const int part = get_group_id(2) / groups, share = (all_tiles + KSPLIT - 1) / KSPLIT;
  const int first = min(part * share, all_tiles), tiles = min(first + share, all_tiles);
  Cout += (long)part * d.K * d.GN;  // its partial plane (the weights of every group)
#else
  const int first = 0, tiles = all_tiles;
#endif
#if STAGES >= 2
  // As gemm_mma.cl's cp.async pipeline: tiles first .. first + STAGES - 2 in flight before the loop;
  // every iteration commits one group (empty past the last tile), so "at most STAGES - 2 pending"
  // always means "tile `tile` has landed". No tiles (a phase without taps) leave acc at zero.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (first + s < tiles) {
      async_a(As_all + s * A_TILE, &d, A, m0, (first + s) * TILE_K, tid);
      async_b(Bs_all + s * B_TILE, &d, B, column, (first + s) * TILE_K, tid);
    }
    cp_async_commit();
  }
  for (int tile = first; tile < tiles; ++tile) {
    cp_async_wait(STAGES - 2);
    // Everyone's copies of this tile are visible, and everyone is done with the slot of tile - 1,
    // which the copies issued next refill.
    barrier(CLK_LOCAL_MEM_FENCE);
    const int ahead = tile + STAGES - 1;
    if (ahead < tiles) {
      const int slot = (ahead - first) % STAGES;
      async_a(As_all + slot * A_TILE, &d, A, m0, ahead * TILE_K, tid);
      async_b(Bs_all + slot * B_TILE, &d, B, column, ahead * TILE_K, tid);
    }
    cp_async_commit();
    const int slot = (tile - first) % STAGES;
    mma_tile(acc, As_all + slot * A_TILE, Bs_all + slot * B_TILE, warp_m, warp_n, g, t);
  }
#elif DBUF
  if (first < tiles) {  // none in a phase without taps (PHASED) or a part past K's end (KSPLIT)
    gather_a(ra, &d, A, m0, first * TILE_K, tid);
    gather_b(rb, &d, B, column, n0, first * TILE_K, tid);
    store_a(As_all, ra, tid);
    store_b(Bs_all, rb, tid);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int tile = first; tile < tiles; ++tile) {
      const int cur = (tile - first) & 1;
      if (tile + 1 < tiles) {  // the next tile's gathers overlap the mma loop
        gather_a(ra, &d, A, m0, (tile + 1) * TILE_K, tid);
        gather_b(rb, &d, B, column, n0, (tile + 1) * TILE_K, tid);
      }
      mma_tile(acc, As_all + cur * A_TILE, Bs_all + cur * B_TILE, warp_m, warp_n, g, t);
      if (tile + 1 < tiles) {
        store_a(As_all + (cur ^ 1) * A_TILE, ra, tid);
        store_b(Bs_all + (cur ^ 1) * B_TILE, rb, tid);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
#else
  for (int tile = first; tile < tiles; ++tile) {
    gather_a(ra, &d, A, m0, tile * TILE_K, tid);
    gather_b(rb, &d, B, column, n0, tile * TILE_K, tid);
    store_a(As_all, ra, tid);
    store_b(Bs_all, rb, tid);
    barrier(CLK_LOCAL_MEM_FENCE);
    mma_tile(acc, As_all, Bs_all, warp_m, warp_n, g, t);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

  // Accumulator fragment (fm, fn): c0, c1 at row g, columns FRAG_COL(fn, 2t), FRAG_COL(fn, 2t + 1);
  // c2, c3 eight rows below.
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + warp_m * TM + fm * 16 + g + 8 * h;
      if (m >= d.GM) continue;
#if DIR == 0 && HAS_BIAS
      const float b = LOAD(bias, bias_offset + d.g * d.Kg + m);
#endif
#pragma unroll
      for (int fn = 0; fn < FN; ++fn) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int nn = n0 + warp_n * TN + FRAG_COL(fn, 2 * t + j);
          if (nn >= d.GN) continue;
          const float value = acc[(fm * FN + fn) * 4 + 2 * h + j];
#if DIR == 0 && HAS_BIAS
          STORE(activate(value + b), Cout, c_index(&d, m, nn));
#elif DIR == 0
          STORE(activate(value), Cout, c_index(&d, m, nn));
#else
          STORE_OUT(value, Cout, c_index(&d, m, nn));
#endif
        }
      }
    }
  }
}
