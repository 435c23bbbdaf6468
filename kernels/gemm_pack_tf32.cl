// Packs one GEMM operand for the wgmma kernel on packed operands (gemm_wgmma_packed.cl): rounded
// to TF32, K-major, in wgmma's core matrices, zero-padded, so that the GEMM kernel copies every tile
// with 16-byte cp.async straight into local memory, with no bounds checks, no transposition and no
// rounding in its main loop (CLBlast's "indirect" GEMM pre-processes its operands the same way).
//
// The operand is R x K as op() sees it (A: R = M; B: R = N, so op(B) is read transposed). Element
// (r, k) of the packed matrix, Rp x Kp (multiples of 64), is word PACKED_INDEX(Kp, r, k): core
// matrices of 8 rows x 4 k (16 bytes per row, 128 contiguous bytes), ordered along K first, so
// the BK words of K of one 8-row group are 32 * BK contiguous bytes for any BK dividing Kp.
//
// Launch: global (Kp / 2, Rp / 8, batch), local (32, 8, 1): one work-group per 64 x 64 block, each
// work-item with 16 loads in flight before the block is written out (32 x 32 blocks of 4 loads ran
// at about a third of the memory bandwidth on the H200: probe37).
// Portable OpenCL C (the rounding is integer arithmetic), so it runs and is tested on every device.

#define PACK_BLOCK 64  // rows and k per work-group

#define PACKED_INDEX(Kp, r, k) ((((long)(r) / 8) * ((Kp) / 4) + (k) / 4) * 32 + ((r) % 8) * 4 + (k) % 4)

// Round to the nearest TF32 value (10 mantissa bits), ties away from zero: cvt.rna.tf32.f32, as
// cuBLAS rounds its TF32 operands. Adding half a unit of the 13 dropped bits to the magnitude and
// clearing them carries into the exponent where needed (to infinity at the top); NaN and infinity
// pass unchanged.
static inline uint round_tf32(const float x) {
  const uint u = as_uint(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return u;
  return (u + 0x1000u) & 0xFFFFE000u;
}

// Writes a block ([r][k], gathered into local memory by the 256 work-items of a (32, 8) work-group)
// at rows r0, k k0 of a packed matrix, 16 bytes per store: the block is 8 groups of 8 rows, each
// 16 core matrices (2 KiB) contiguous in the packed matrix.
static inline void store_packed_block(local float (*block)[PACK_BLOCK + 1], global uint* dst, const int Kp,
                                      const int r0, const int k0) {
  const int tid = get_local_id(1) * 32 + get_local_id(0);
#pragma unroll
  for (int j = 0; j < PACK_BLOCK * PACK_BLOCK / 4 / 256; ++j) {
    const int q = tid + 256 * j;
    const int group = q / (2 * PACK_BLOCK), kc = (q % (2 * PACK_BLOCK)) / 8, row = q % 8;
    const int r = group * 8 + row, k = kc * 4;
    const uint4 w = (uint4)(round_tf32(block[r][k]), round_tf32(block[r][k + 1]), round_tf32(block[r][k + 2]),
                            round_tf32(block[r][k + 3]));
    *(global uint4*)(dst + PACKED_INDEX(Kp, r0 + r, k0 + k)) = w;
  }
}

__attribute__((reqd_work_group_size(32, 8, 1)))
kernel void pack_tf32(const global float* restrict src, const long offset, const int ld, const long stride,
                      const int k_contiguous, const int R, const int K, const int Kp, const long packed_stride,
                      global uint* restrict dst) {
  local float block[PACK_BLOCK][PACK_BLOCK + 1];  // [r][k], padded against bank conflicts on transposed reads
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int k0 = get_group_id(0) * PACK_BLOCK, r0 = get_group_id(1) * PACK_BLOCK;
  const long batch = get_group_id(2);
  const global float* s = src + offset + batch * stride;

  // Read along whichever index is contiguous in memory, 32 work-items on 32 consecutive floats.
#pragma unroll
  for (int i = 0; i < PACK_BLOCK / 8; ++i) {
#pragma unroll
    for (int h = 0; h < PACK_BLOCK / 32; ++h) {
      const int a = ly + 8 * i, b = lx + 32 * h;  // a along the strided index, b along the contiguous one
      const int r = k_contiguous ? r0 + a : r0 + b;
      const int k = k_contiguous ? k0 + b : k0 + a;
      const float v = (r < R && k < K) ? s[k_contiguous ? (long)r * ld + k : (long)k * ld + r] : 0.0f;
      block[r - r0][k - k0] = v;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  store_packed_block(block, dst + batch * packed_stride, Kp, r0, k0);
}
