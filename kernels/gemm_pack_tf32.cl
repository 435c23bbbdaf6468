// Packs one GEMM operand for the wgmma kernel on packed operands (gemm_wgmma_packed.cl): rounded
// to TF32, K-major, in wgmma's core matrices, zero-padded, so that the GEMM kernel copies every tile
// with 16-byte cp.async straight into local memory, with no bounds checks, no transposition and no
// rounding in its main loop (CLBlast's "indirect" GEMM pre-processes its operands the same way).
//
// The operand is R x K as op() sees it (A: R = M; B: R = N, so op(B) is read transposed). Element
// (r, k) of the packed matrix, Rp x Kp (multiples of 32), is word PACKED_INDEX(Kp, r, k): core
// matrices of 8 rows x 4 k (16 bytes per row, 128 contiguous bytes), ordered along K first, so
// the BK words of K of one 8-row group are 32 * BK contiguous bytes for any BK dividing Kp.
//
// Launch: global (Kp, Rp / 4, batch), local (32, 8, 1): one work-group per 32 x 32 block.
// Portable OpenCL C (the rounding is integer arithmetic), so it runs and is tested on every device.

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

__attribute__((reqd_work_group_size(32, 8, 1)))
kernel void pack_tf32(const global float* restrict src, const long offset, const int ld, const long stride,
                      const int k_contiguous, const int R, const int K, const int Kp, const long packed_stride,
                      global uint* restrict dst) {
  local float block[32][33];  // [r][k], padded against bank conflicts on the transposed reads
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int k0 = get_group_id(0) * 32, r0 = get_group_id(1) * 32;
  const long batch = get_group_id(2);
  const global float* s = src + offset + batch * stride;

  // Read along whichever index is contiguous in memory, 32 work-items on 32 consecutive floats.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int a = ly + 8 * i;
    const int r = k_contiguous ? r0 + a : r0 + lx;
    const int k = k_contiguous ? k0 + lx : k0 + a;
    const float v = (r < R && k < K) ? s[k_contiguous ? (long)r * ld + k : (long)k * ld + r] : 0.0f;
    block[r - r0][k - k0] = v;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // Write 16 bytes per work-item: the block is 4 groups of 8 rows, each 8 core matrices (1 KiB)
  // contiguous in the packed matrix.
  const int q = ly * 32 + lx;
  const int group = q / 64, kc = (q % 64) / 8, row = q % 8;
  const int r = group * 8 + row, k = kc * 4;
  const uint4 w = (uint4)(round_tf32(block[r][k]), round_tf32(block[r][k + 1]), round_tf32(block[r][k + 2]),
                          round_tf32(block[r][k + 3]));
  *(global uint4*)(dst + batch * packed_stride + PACKED_INDEX(Kp, r0 + r, k0 + k)) = w;
}
