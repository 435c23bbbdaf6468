// Warp-level tensor-core tiles on packed operands (NVIDIA, compute capability >= 8.0; the host
// builds this file only there), appended to storage.cl and followed by packed_pipeline.cl and
// gemm_mma_packed.cl (or by peak_mma.cl): the tile tunables, ldmatrix, and mma.sync in the input
// type of the storage type (storage.cl's DTYPE).
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
