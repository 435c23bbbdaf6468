// GEMM with mma.sync on operands packed by gemm_pack_tf32.cl (fp32 storage, TF32) or
// gemm_pack_16bit.cl (fp16, bf16): C = alpha * A * B^T + beta * C with A M x K and B N x K as
// packed (any layout of the caller's matrices), C of the storage type. The warp-level sibling of
// gemm_wgmma_packed.cl for every tensor-core generation from Ampere (compute capability 8.0) on:
// tiles arrive through the same cp.async ring, and each warp reads its fragments with ldmatrix.
// Launch: global (ceil(N/BN) * 32 * WN * WM, ceil(M/BM), batch), local (32 * WN * WM, 1, 1).
// Appended to storage.cl, tile_order.cl, mma_packed.cl and packed_pipeline.cl (LAG is 0:
// mma.sync has finished reading a stage when the warp reaches the next barrier).

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

// C = act(alpha * acc + beta * C + bias) for this warp's fragments (gemm_epilogue.cl), within M x N,
// rounded to the storage type.
// Accumulator i of fragment (fm, fn): row g + 8 * (i / 2), column 2t + i % 2.
static inline void store_fragments(const float acc[FM][FN][4], global STORAGE* Cb, const int ldc, const int M,
                                   const int N, const int m_base, const int n_base, const int lane,
                                   const float alpha, const float beta GEMM_EPILOGUE_PARAMS) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
    for (int fn = 0; fn < FN; ++fn) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int m = m_base + fm * 16 + g + 8 * (i / 2), n = n_base + fn * 8 + 2 * t + i % 2;
        if (m < M && n < N) {
          const long dst = (long)m * ldc + n;
          float result = alpha * acc[fm][fn][i];
          if (beta != 0.0f) result += beta * LOAD(Cb, dst);
          STORE(GEMM_EPILOGUE(result, n), Cb, dst);
        }
      }
    }
  }
}

__attribute__((reqd_work_group_size(THREADS, 1, 1)))
kernel void gemm_mma_packed(const int M, const int N, const int Kp, const float alpha, const float beta,
                            const global uint* restrict A, const long stride_a, const global uint* restrict B,
                            const long stride_b, global STORAGE* C, const long c_offset, const int ldc,
                            const long stride_c GEMM_EPILOGUE_PARAMS) {
  const int tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
  const int wm = warp / WN, wn = warp % WN;
  const int2 origin = tile_origin(GROUP_M, BM, BN);  // tile_order.cl
  const int m0 = origin.x, n0 = origin.y;
  const long batch = get_group_id(2);
  const global uint* Ap = A + batch * stride_a + (long)m0 * Kp;
  const global uint* Bp = B + batch * stride_b + (long)n0 * Kp;

  float acc[FM][FN][4];
#pragma unroll
  for (int fm = 0; fm < FM; ++fm)
#pragma unroll
    for (int fn = 0; fn < FN; ++fn)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[fm][fn][i] = 0.0f;

  local uint As_all[STAGES * BM * BK] __attribute__((aligned(128)));
  local uint Bs_all[STAGES * BN * BK] __attribute__((aligned(128)));
  const int tiles = Kp / BK;
  for (int kt = 0; kt < AHEAD; ++kt) load_stage(As_all, Bs_all, Ap, Bp, Kp, kt, tiles, tid);
  for (int kt = 0; kt < tiles; ++kt) {
    // Tile kt has landed for every work-item, and every warp has finished tile kt - 1, whose
    // buffer is the one refilled next.
    cp_async_wait_current();
    barrier(CLK_LOCAL_MEM_FENCE);
    load_stage(As_all, Bs_all, Ap, Bp, Kp, kt + AHEAD, tiles, tid);
    const int s = kt % STAGES;
    const local uint* As = As_all + s * BM * BK;
    const local uint* Bs = Bs_all + s * BN * BK;
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
      uint a[FM][4], b[FN][2];
      load_fragments(a, b, As, Bs, ks, wm * TM, wn * TN, lane);
#pragma unroll
      for (int fm = 0; fm < FM; ++fm)
#pragma unroll
        for (int fn = 0; fn < FN; ++fn) mma_packed(acc[fm][fn], a[fm], b[fn][0], b[fn][1]);
    }
  }
  store_fragments(acc, C + c_offset + batch * stride_c, ldc, M, N, m0 + wm * TM, n0 + wn * TN, lane, alpha,
                  beta GEMM_EPILOGUE_ARGS);
}
