// Warp-level TF32 tensor-core tiles through inline PTX (NVIDIA, compute capability >= 8.0; the host
// builds this file only there). Shared by gemm_mma.cl and conv2d_igemm_mma.cl, which are appended
// after it: each stages a BM x BK tile of A and a BK x BN tile of B into local memory per step, and
// mma_tile() lets every warp multiply its (BM/WM) x (BN/WN) part of them with mma.sync.m16n8k8.
// With MMA_INPUT 1 or 2 (conv2d_igemm_mma.cl's 16-bit tensors) each 32-bit word of a tile holds two
// fp16 or bf16 values adjacent along K, and the same fragments feed mma.sync.m16n8k16: in words of
// K the fragment layouts of both instructions are the same (a0 = word (g, t), a1 = (g + 8, t),
// a2 = (g, t + 4), a3 = (g + 8, t + 4); b0 = (t, n g), b1 = (t + 4, n g)). BK counts words.

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
#ifndef LDSM
#define LDSM 0  // 1: A fragments with one ldmatrix.x4 each instead of four 32-bit local loads
#endif
#ifndef BVEC
#define BVEC 0  // 1: B fragments of four n8 blocks with two 16-byte local loads (interleaved columns)
#endif
#ifndef SWIZZLE
#define SWIZZLE 0  // 1: unpadded tiles, XOR-swizzled instead (3 cp.async stages of 128x128x16 fit 48 KiB)
#endif

// ---- Local layouts (set by the kernel that includes this file) ----
#ifndef A_KM
#define A_KM 0  // 1: the A tile is stored As[k][m] (contiguous along M) instead of As[m][k]
#endif
#ifndef B_NK
#define B_NK 0  // 1: the B tile is stored Bs[n][k] (contiguous along K) instead of Bs[k][n]
#endif
#ifndef CVT_AT_LOAD
#define CVT_AT_LOAD 0  // 1: tiles hold fp32 values, rounded to TF32 when fragments are read
#endif
#ifndef MMA_INPUT
#define MMA_INPUT 0  // what a word of a tile holds: 0 one TF32 value, 1 two fp16 values, 2 two bf16 values
#endif

// Combinations whose reads would be misaligned (ldmatrix and 16-byte reads fault on NVIDIA and
// take the context with them): refuse to build rather than run. The host's space excludes them.
#if LDSM && A_KM
#error "LDSM needs the A tile as As[m][k] (A_KM = 0)"
#endif
#if BVEC && B_NK
#error "BVEC needs the B tile as Bs[k][n] (B_NK = 0)"
#endif
#if MMA_INPUT && CVT_AT_LOAD
#error "CVT_AT_LOAD rounds fp32 words to TF32: 16-bit tiles hold their values as they are"
#endif

// ---- Derived ----
#define THREADS (32 * WM * WN)
#define TM (BM / WM)  // warp tile rows
#define TN (BN / WN)  // warp tile columns
#define FM (TM / 16)  // m16 fragments per warp
#define FN (TN / 8)   // n8 fragments per warp
#if SWIZZLE
// Unpadded tiles whose fragment reads are conflict-free through XOR swizzles that keep aligned
// groups of four words together (16-byte copies, ldmatrix rows and BVEC reads stay whole). Along
// K-contiguous rows (lanes read row r0 + g, k = kk + t) the group of k is XORed with the row's
// index among the rows that share the 32 banks; across K-strided rows (lanes read k = kk + t,
// column c0 + g) columns are XORed with k % 4 in bits 3-4.
#define K_SWIZZLE(row, k) ((k) ^ ((((row) / (32 / BK)) % (BK / 4)) << 2))
#define C_SWIZZLE(k, c) ((c) ^ (((k) & 3) << 3))
#if A_KM
#define AS BM
#define A_TILE (BK * AS)
#define A_LOC(m, k) ((k) * AS + C_SWIZZLE(k, m))
#else
#define AS BK
#define A_TILE (BM * AS)
#define A_LOC(m, k) ((m) * AS + K_SWIZZLE(m, k))
#endif
#if B_NK
#define BS BK
#define B_TILE (BN * BS)
#define B_LOC(k, n) ((n) * BS + K_SWIZZLE(n, k))
#else
#define BS BN
#define B_TILE (BK * BS)
#define B_LOC(k, n) ((k) * BS + C_SWIZZLE(k, n))
#endif
#else
// Row strides of the local tiles, padded so that the fragment reads of a warp hit 32 different
// banks: a stride of 4 (mod 32) words for tiles read along their rows (lanes g*stride + t), 8
// (mod 32) for tiles read across them (lanes t*stride + g, or t*stride + 4g with BVEC).
#if A_KM
#define AS (BM + 8)
#define A_TILE (BK * AS)
#define A_LOC(m, k) ((k) * AS + (m))
#else
#define AS (BK + 4)
#define A_TILE (BM * AS)
#define A_LOC(m, k) ((m) * AS + (k))
#endif
#if B_NK
#define BS (BK + 4)
#define B_TILE (BN * BS)
#define B_LOC(k, n) ((n) * BS + (k))
#else
#define BS (BN + 8)
#define B_TILE (BK * BS)
#define B_LOC(k, n) ((k) * BS + (n))
#endif
#endif
// The same locations by storage row s and position c along the tile's contiguous direction.
#if A_KM
#define A_STORED(s, c) A_LOC(c, s)
#else
#define A_STORED(s, c) A_LOC(s, c)
#endif
#if B_NK
#define B_STORED(s, c) B_LOC(c, s)
#else
#define B_STORED(s, c) B_LOC(s, c)
#endif

// Which column of the warp tile column j (0..7) of n8 fragment fn stands for. The mma does not care
// how columns are assigned as long as B and C agree; BVEC interleaves four fragments so that a
// lane's B values of fragments 4i..4i+3 are adjacent in local memory.
#if BVEC
#define FRAG_COL(fn, j) (((fn) / 4) * 32 + (j) * 4 + (fn) % 4)
#else
#define FRAG_COL(fn, j) ((fn) * 8 + (j))
#endif

// Round to the nearest TF32 value (10 mantissa bits), ties away from zero, as cuBLAS does.
static inline uint to_tf32(const float x) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

#if CVT_AT_LOAD
#define FRAG(word) to_tf32(as_float(word))
#else
#define FRAG(word) (word)
#endif

#if MMA_INPUT == 0
#define MMA_WORDS_TYPES "m16n8k8.row.col.f32.tf32.tf32.f32"
#elif MMA_INPUT == 1
#define MMA_WORDS_TYPES "m16n8k16.row.col.f32.f16.f16.f32"
#else
#define MMA_WORDS_TYPES "m16n8k16.row.col.f32.bf16.bf16.f32"
#endif

// d = a * b + d for one m16n8 tile and 8 words of K (m16n8k8 in TF32, m16n8k16 in 16 bits); fragment
// layouts as in the PTX ISA (groupID = lane >> 2, threadID_in_group = lane & 3). Not volatile: a
// pure function of its operands, so the compiler may schedule it among the (volatile) fragment reads
// of the next k-step.
static inline void mma_tf32(float* d, const uint a0, const uint a1, const uint a2, const uint a3, const uint b0,
                            const uint b1) {
  asm("mma.sync.aligned." MMA_WORDS_TYPES " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

#if LDSM
// Four 8x4 TF32 matrices (16-byte rows) from local memory in one instruction: lanes 8j..8j+7 give
// the row addresses of matrix j; each lane receives row lane/4, element lane%4 of every matrix,
// which is exactly the layout of a0..a3 when the matrices are (rows 0-7 | 8-15) x (k 0-3 | 4-7).
// Needs As[m][k] (A_KM = 0).
static inline void ldmatrix_x4(uint* d, const local uint* row) {
  const uint address = (uint)(size_t)row;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(address));
}
#endif

#if BVEC
// Four words from 16-byte aligned local memory in one instruction. A plain uint4 read is split into
// 32-bit reads by the compiler when each word is converted on its own (CVT_AT_LOAD).
static inline void lds128(uint* d, const local uint* p) {
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"((uint)(size_t)p));
}
#endif

// cp.async (compute capability >= 8.0): 16 bytes (or 4) from global to local memory without passing
// through registers; only the first `bytes` are read, the rest of the destination is zero-filled
// (edge tiles, padding). Used by the kernels' cp.async stages (STAGES >= 2).
static inline void cp_async16(local uint* dst, const global void* src, const int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((uint)(size_t)dst), "l"((ulong)src), "r"(bytes)
               : "memory");
}
static inline void cp_async4(local uint* dst, const global void* src, const int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"((uint)(size_t)dst), "l"((ulong)src), "r"(bytes)
               : "memory");
}
static inline void cp_async_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Wait until at most `pending` (0-3, a compile-time constant: wait_group takes an immediate) groups of
// this thread's copies are in flight.
static inline void cp_async_wait(const int pending) {
  if (pending <= 0) {
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  } else if (pending == 1) {
    asm volatile("cp.async.wait_group 1;" ::: "memory");
  } else if (pending == 2) {
    asm volatile("cp.async.wait_group 2;" ::: "memory");
  } else {
    asm volatile("cp.async.wait_group 3;" ::: "memory");
  }
}

// The fragments of k-step kk (a multiple of 8 below BK) of a staged tile, for the warp whose tile
// starts at row m_base and column n_base.
static inline void load_fragments(uint a[FM][4], uint b[FN][2], const local uint* As, const local uint* Bs, const int kk,
                                  const int m_base, const int n_base, const int g, const int t) {
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
    const int m = m_base + fm * 16 + g;
#if LDSM
    const int lane = 4 * g + t, j = lane / 8;
    ldmatrix_x4(a[fm], As + A_LOC(m_base + fm * 16 + (j % 2) * 8 + lane % 8, kk + (j / 2) * 4));
#pragma unroll
    for (int i = 0; i < 4; ++i) a[fm][i] = FRAG(a[fm][i]);
#else
    a[fm][0] = FRAG(As[A_LOC(m, kk + t)]);
    a[fm][1] = FRAG(As[A_LOC(m + 8, kk + t)]);
    a[fm][2] = FRAG(As[A_LOC(m, kk + t + 4)]);
    a[fm][3] = FRAG(As[A_LOC(m + 8, kk + t + 4)]);
#endif
  }
#if BVEC
#pragma unroll
  for (int fq = 0; fq < FN / 4; ++fq) {
    uint lo[4], hi[4];
    lds128(lo, Bs + B_LOC(kk + t, n_base + fq * 32 + 4 * g));
    lds128(hi, Bs + B_LOC(kk + t + 4, n_base + fq * 32 + 4 * g));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      b[4 * fq + i][0] = FRAG(lo[i]);
      b[4 * fq + i][1] = FRAG(hi[i]);
    }
  }
#else
#pragma unroll
  for (int fn = 0; fn < FN; ++fn) {
    const int n = n_base + FRAG_COL(fn, g);
    b[fn][0] = FRAG(Bs[B_LOC(kk + t, n)]);
    b[fn][1] = FRAG(Bs[B_LOC(kk + t + 4, n)]);
  }
#endif
}

// The FM x FN mma of one k-step. acc[(fm * FN + fn) * 4 + i] is element i of the accumulator
// fragment (fm, fn): rows g, g, g+8, g+8 and columns FRAG_COL(fn, 2t), FRAG_COL(fn, 2t+1), the
// same two again.
static inline void mma_fragments(float* acc, const uint a[FM][4], const uint b[FN][2]) {
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
    for (int fn = 0; fn < FN; ++fn) {
      mma_tf32(acc + (fm * FN + fn) * 4, a[fm][0], a[fm][1], a[fm][2], a[fm][3], b[fn][0], b[fn][1]);
    }
  }
}

// All BK/8 k-steps of one staged tile: fragments from local memory, FM x FN mma per step.
static inline void mma_tile(float* acc, const local uint* As, const local uint* Bs, const int warp_m, const int warp_n,
                            const int g, const int t) {
  uint a[FM][4], b[FN][2];
#pragma unroll
  for (int kk = 0; kk < BK; kk += 8) {
#if defined(ABLATE) && (ABLATE & 4)
    if (kk % 16 == 0)  // timing study (gemm_mma.cl): every other k-step reuses the fragments
#endif
      load_fragments(a, b, As, Bs, kk, warp_m * TM, warp_n * TN, g, t);
    mma_fragments(acc, a, b);
  }
}
