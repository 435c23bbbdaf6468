// The cp.async pipeline of the GEMM kernels on packed operands (gemm_wgmma_packed.cl,
// gemm_mma_packed.cl), appended after the file that defines their tile (BM, BN, THREADS): tiles of
// operands packed by gemm_pack_tf32.cl or gemm_pack_16bit.cl copied with 16-byte cp.async into a
// ring of STAGES local buffers. Packed tiles need no bounds checks, transposition or conversion,
// and the local copy keeps the packed layout: per 8-row group, BK words of K in core matrices of
// 8 rows x 16 bytes (128 contiguous bytes each, ordered along K), which both wgmma descriptors and
// ldmatrix read directly. cp.async is sm_80 and later.

// ---- Tunables ----
#ifndef BK
#define BK 8  // depth of the K tile per stage (8, 16 or 32; divides the packed K, a multiple of 64)
#endif
#ifndef STAGES
#define STAGES 4  // local buffers of BM x BK and BN x BK words in the pipeline
#endif
#ifndef GROUP_M
#define GROUP_M 1  // work-groups launched in turn cover GROUP_M tile rows before the next columns (L2 reuse of B)
#endif
#ifndef LAG
#define LAG 0  // wgmma groups left in flight across a barrier (0 or 1; mma.sync: 0); the buffer a
               // tile frees is refilled LAG steps later, so STAGES - 1 - LAG tiles are loading
#endif

// ---- Derived ----
#define AHEAD (STAGES - 1 - LAG)  // tiles whose copies are in flight ahead of the current one
#define A_CHUNKS (BM * BK / 4 / THREADS)  // 16-byte copies per work-item and tile
#define B_CHUNKS (BN * BK / 4 / THREADS)

static inline void cp_async16(local uint* dst, const global uint* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((uint)(size_t)dst), "l"((ulong)src) : "memory");
}
static inline void cp_async_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Wait until this work-item's copies of the current tile have landed: at most AHEAD - 1 newer
// groups may stay in flight (an immediate operand).
static inline void cp_async_wait_current(void) {
#if AHEAD == 1
  asm volatile("cp.async.wait_group 0;" ::: "memory");
#elif AHEAD == 2
  asm volatile("cp.async.wait_group 1;" ::: "memory");
#elif AHEAD == 3
  asm volatile("cp.async.wait_group 2;" ::: "memory");
#else
#error "STAGES - 1 - LAG must be 1, 2 or 3"
#endif
}

// The tile of R rows at k-tile kt of a packed operand (base: its first row) into a stage: R / 8
// spans of 32 * BK contiguous bytes, one per 8-row group, copied to the same layout in local
// memory, where the next 4 k is 128 bytes on (the descriptor's leading offset) and the next 8 rows
// 32 * BK bytes (its stride offset). Consecutive work-items copy consecutive 16 bytes.
static inline void copy_tile(local uint* stage, const global uint* base, const int Kp, const int kt, const int chunks,
                             const int tid) {
#pragma unroll
  for (int c = 0; c < chunks; ++c) {
    const int v = tid + c * THREADS;
    const int group = v / (2 * BK), offset = 4 * (v % (2 * BK));
    cp_async16(stage + group * 8 * BK + offset, base + ((long)group * (Kp / 4) + kt * (BK / 4)) * 32 + offset);
  }
}

// Issues the copies of tile kt (none past the last, but always a group, so that the group count
// stays in step with the tiles).
static inline void load_stage(local uint* As_all, local uint* Bs_all, const global uint* Ap, const global uint* Bp,
                              const int Kp, const int kt, const int tiles, const int tid) {
  if (kt < tiles) {
    const int s = kt % STAGES;
    copy_tile(As_all + s * BM * BK, Ap, Kp, kt, A_CHUNKS, tid);
    copy_tile(Bs_all + s * BN * BK, Bp, Kp, kt, B_CHUNKS, tid);
  }
  cp_async_commit();
}
