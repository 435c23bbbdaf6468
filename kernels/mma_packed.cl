// Warp-level tensor-core tiles on packed operands (NVIDIA, compute capability >= 8.0; the host
// builds this file only there), appended to storage.cl and followed by packed_pipeline.cl and
// gemm_mma_packed.cl: the tile tunables, fragment loads with ldmatrix from a stage in the packed
// layout, and mma.sync in the input type of the storage type (storage.cl's DTYPE).
//
// One mma consumes 32 bytes of K per row in every type: m16n8k8 on TF32 (fp32 storage, rounded by
// gemm_pack_tf32.cl), m16n8k16 on fp16 or bf16. In 32-bit words of K the fragments of both are the
// same (a0 = word (g, t), a1 = (g + 8, t), a2 = (g, t + 4), a3 = (g + 8, t + 4); b0 = word (n g,
// t), b1 = (n g, t + 4), with g = lane / 4, t = lane % 4), and they are what ldmatrix returns for
// the packed core matrices (8 rows x 16 bytes): lane l receives word l % 4 of row l / 4.

// ---- Tunables ----
#ifndef BM
#define BM 128  // rows of C per work-group (a multiple of 64: whole blocks of the pack kernels)
#endif
#ifndef BN
#define BN 128  // columns of C per work-group
#endif
#ifndef WM
#define WM 2  // warps along M; each computes (BM / WM) x (BN / WN) with m16n8 fragments
#endif
#ifndef WN
#define WN 2  // warps along N
#endif

// ---- Derived ----
#define THREADS (32 * WM * WN)
#define TM (BM / WM)  // warp tile rows
#define TN (BN / WN)  // warp tile columns
#define FM (TM / 16)  // m16 fragments per warp
#define FN (TN / 8)   // n8 fragments per warp (even: B fragments are loaded in pairs)

#if DTYPE == 0
#define MMA_SHAPE_TYPES "m16n8k8.row.col.f32.tf32.tf32.f32"
#elif DTYPE == 1
#define MMA_SHAPE_TYPES "m16n8k16.row.col.f32.f16.f16.f32"
#else
#define MMA_SHAPE_TYPES "m16n8k16.row.col.f32.bf16.bf16.f32"
#endif

// d = a * b + d for one m16n8 tile and 32 bytes of K. Not volatile: a pure function of its
// operands, so the compiler may schedule it among the fragment loads of the next k-step.
static inline void mma_packed(float* d, const uint* a, const uint b0, const uint b1) {
  asm("mma.sync.aligned." MMA_SHAPE_TYPES " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four 8 x 16-byte matrices from local memory: lanes 8j..8j+7 give the row addresses of matrix j.
static inline void ldmatrix_x4(uint* d, const local uint* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"((uint)(size_t)row));
}

// Row `row` (any row of the tile), words kw..kw+3 (kw a multiple of 4) of a stage in the packed
// layout: 8-row groups of BK words, core matrices of 32 words along K, 4 words per row.
#define STAGE_ROW(stage, row, kw) ((stage) + ((row) / 8) * 8 * BK + ((kw) / 4) * 32 + ((row) % 8) * 4)

// The fragments of k-step ks (words 8 ks .. 8 ks + 7 of the stage) for the warp whose tile starts
// at row m_base of the A stage and row n_base of the B stage (B is packed N x K).
static inline void load_fragments(uint a[FM][4], uint b[FN][2], const local uint* As, const local uint* Bs,
                                  const int ks, const int m_base, const int n_base, const int lane) {
  const int j = lane / 8, r = lane % 8;
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
    // Matrices: rows 0-7 | 8-15 (j % 2) x words 0-3 | 4-7 (j / 2): a0..a3 in order.
    ldmatrix_x4(a[fm], STAGE_ROW(As, m_base + fm * 16 + (j % 2) * 8 + r, 8 * ks + (j / 2) * 4));
  }
#pragma unroll
  for (int fp = 0; fp < FN / 2; ++fp) {
    // Matrices: words 0-3 | 4-7 (j % 2) of n8 block 2 fp + j / 2: b0, b1 of one, then of the next.
    uint d[4];
    ldmatrix_x4(d, STAGE_ROW(Bs, n_base + (2 * fp + j / 2) * 8 + r, 8 * ks + (j % 2) * 4));
    b[2 * fp][0] = d[0];
    b[2 * fp][1] = d[1];
    b[2 * fp + 1][0] = d[2];
    b[2 * fp + 1][1] = d[3];
  }
}
