// Packs one GEMM operand of 16-bit storage (fp16 or bf16: the bits are copied, nothing is rounded)
// for the wgmma kernel on packed operands (gemm_wgmma_packed.cl): K-major, in wgmma's core
// matrices, zero-padded. The byte layout is gemm_pack_tf32.cl's with two K elements per 32-bit
// word: core matrices of 8 rows x 8 k (16 bytes per row, 128 contiguous bytes), ordered along K
// first, element (r, k) of the Rp x Kp packed matrix (Rp a multiple of 64, Kp of 128) at
// ushort PACKED16_INDEX(Kp, r, k).
//
// Launch: global (Kp / 2, Rp / 8, batch), local (32, 8, 1): one work-group per block of 64 rows x
// 64 k, the grid of gemm_pack_tf32.cl. Portable OpenCL C, so it runs and is tested on every device.

#define PACK_BLOCK 64  // rows and k per work-group

#define PACKED16_INDEX(Kp, r, k) ((((long)(r) / 8) * ((Kp) / 8) + (k) / 8) * 64 + ((r) % 8) * 8 + (k) % 8)

__attribute__((reqd_work_group_size(32, 8, 1)))
kernel void pack_16bit(const global ushort* restrict src, const long offset, const int ld, const long stride,
                       const int k_contiguous, const int R, const int K, const int Kp, const long packed_stride,
                       global ushort* restrict dst) {
  // [r][k], each row two halves longer than the block: 33 words, so the transposed reads of a
  // column by consecutive work-items fall in different banks.
  local ushort block[PACK_BLOCK][PACK_BLOCK + 2];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int k0 = get_group_id(0) * PACK_BLOCK, r0 = get_group_id(1) * PACK_BLOCK;
  const long batch = get_group_id(2);
  const global ushort* s = src + offset + batch * stride;

  // Read along whichever index is contiguous in memory, 32 work-items on 32 consecutive elements.
#pragma unroll
  for (int i = 0; i < PACK_BLOCK / 8; ++i) {
#pragma unroll
    for (int h = 0; h < PACK_BLOCK / 32; ++h) {
      const int a = ly + 8 * i, b = lx + 32 * h;  // a along the strided index, b along the contiguous one
      const int r = k_contiguous ? r0 + a : r0 + b;
      const int k = k_contiguous ? k0 + b : k0 + a;
      const ushort v = (r < R && k < K) ? s[k_contiguous ? (long)r * ld + k : (long)k * ld + r] : (ushort)0;
      block[r - r0][k - k0] = v;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // The block is 8 groups of 8 rows, each 8 core matrices (1 KiB) contiguous in the packed matrix:
  // 16 bytes per store, consecutive work-items on consecutive 16 bytes.
  global ushort* d = dst + batch * packed_stride;
  const int tid = ly * 32 + lx;
#pragma unroll
  for (int j = 0; j < PACK_BLOCK * PACK_BLOCK / 8 / 256; ++j) {
    const int q = tid + 256 * j;
    const int group = q / PACK_BLOCK, kc = (q % PACK_BLOCK) / 8, row = q % 8;
    const int r = group * 8 + row, k = kc * 8;
    const ushort8 v = (ushort8)(block[r][k], block[r][k + 1], block[r][k + 2], block[r][k + 3], block[r][k + 4],
                                block[r][k + 5], block[r][k + 6], block[r][k + 7]);
    *(global ushort8*)(d + PACKED16_INDEX(Kp, r0 + r, k0 + k)) = v;  // 16-byte aligned: whole core-matrix rows
  }
}
