// GEMM on Hopper's warpgroup tensor cores from operands packed by gemm_pack_tf32.cl (fp32
// storage: rounded to TF32) or gemm_pack_16bit.cl (fp16, bf16: copied): K-major core matrices,
// zero-padded to whole tiles. C = alpha * A * B^T + beta * C with A M x K and B N x K as packed,
// any layout of the caller's matrices; C of the storage type. The kernel works in 32-bit words of
// K (one TF32 value or two 16-bit ones; Kp, BK and the strides count words), which keeps every
// copy, descriptor and pipeline step the same for all three types. Every tile is copied with
// 16-byte cp.async straight into local memory, STAGES - 1 - LAG tiles ahead of the wgmma, so the
// bytes in flight are not bounded by registers as in gemm_wgmma.cl (whose staging passes every
// element through registers to transpose and round it, and measured no overlap with the wgmma).
// Launch: global (ceil(N/BN) * 128 * WGS, ceil(M/BM), batch), local (128 * WGS, 1, 1).
// Appended to storage.cl (the DTYPE of C), tile_order.cl (launch order of tiles), wgmma.cl
// (tile tunables, wgmma and its fences) and packed_pipeline.cl (BK, STAGES, LAG and the cp.async
// copies of packed tiles).

// This warpgroup's wgmma of one stage (BK / 8 steps of FMW m64 x BN x 8 blocks), one group.
static inline void issue_wgmma(float* acc, const local uint* As, const local uint* Bs, const int warpgroup) {
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < BK / 8; ++ks) {
    const ulong desc_b = wgmma_desc(Bs + 64 * ks, 128, 32 * BK);
#pragma unroll
    for (int fm = 0; fm < FMW; ++fm) {
      const int group = (warpgroup * FMW + fm) * 8;  // first 8-row group of this m64 block
      wgmma_mma(acc + fm * ACC, wgmma_desc(As + group * 8 * BK + 64 * ks, 128, 32 * BK), desc_b);
    }
  }
  wgmma_commit();
}

__attribute__((reqd_work_group_size(THREADS, 1, 1)))
kernel void gemm_wgmma_packed(const int M, const int N, const int Kp, const float alpha, const float beta,
                              const global uint* restrict A, const long stride_a, const global uint* restrict B,
                              const long stride_b, global STORAGE* C, const long c_offset, const int ldc,
                              const long stride_c GEMM_EPILOGUE_PARAMS) {
  const int tid = get_local_id(0);
  const int warpgroup = tid / 128;
  const int2 origin = tile_origin(GROUP_M, BM, BN);  // tile_order.cl
  const int m0 = origin.x, n0 = origin.y;
  const long batch = get_group_id(2);
  // This work-group's rows of the packed operands: whole 8-row groups of Kp words each.
  const global uint* Ap = A + batch * stride_a + (long)m0 * Kp;
  const global uint* Bp = B + batch * stride_b + (long)n0 * Kp;
  global STORAGE* Cb = C + c_offset + batch * stride_c;

  float acc[FMW * ACC];
#pragma unroll
  for (int i = 0; i < FMW * ACC; ++i) acc[i] = 0.0f;

  local uint As_all[STAGES * BM * BK] __attribute__((aligned(128)));
  local uint Bs_all[STAGES * BN * BK] __attribute__((aligned(128)));
  const int tiles = Kp / BK;
  for (int kt = 0; kt < AHEAD; ++kt) load_stage(As_all, Bs_all, Ap, Bp, Kp, kt, tiles, tid);
  fence_accumulators(acc);
  for (int kt = 0; kt < tiles; ++kt) {
    // Tile kt has landed for every work-item, and every warpgroup's wgmma of tile kt - 1 - LAG has
    // finished (each waited for it before this barrier): its buffer is the one refilled next.
    cp_async_wait_current();
    fence_async_local();
    barrier(CLK_LOCAL_MEM_FENCE);
    load_stage(As_all, Bs_all, Ap, Bp, Kp, kt + AHEAD, tiles, tid);
    const int s = kt % STAGES;
    issue_wgmma(acc, As_all + s * BM * BK, Bs_all + s * BN * BK, warpgroup);
#if LAG
    wgmma_wait_newest();
#else
    wgmma_wait_all();
#endif
  }
  wgmma_wait_all();
  fence_accumulators(acc);
  store_accumulators(acc, Cb, ldc, M, N, m0, n0, alpha, beta GEMM_EPILOGUE_ARGS);
}
