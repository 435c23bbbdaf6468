// The im2col matrix of each image, packed for the wgmma GEMM on packed operands
// (gemm_wgmma_packed.cl): row p = oh * Q + ow (an output pixel), column k = (c * R + r) * S + s (a
// filter tap, the order of the filter's OIHW rows), element x[n][c][oh * stride_h - pad_h + r *
// dil_h][ow * stride_w - pad_w + s * dil_w] or 0 in the padding, rounded to TF32 and stored as
// gemm_pack_tf32.cl stores an operand (PACKED_INDEX; rows padded to the GEMM's tiles, K to 32).
// Forward, groups = 1. Launch: global (Kp / 2, PQp / 8, N), local (32, 8, 1): 64 x 64 blocks.
// Appended to conv2d_common.cl (shape arguments, fastdiv) and gemm_pack_tf32.cl.

__attribute__((reqd_work_group_size(32, 8, 1)))
kernel void pack_im2col_tf32(CONV_SHAPE_PARAMS, const global float* restrict x, const long x_offset, const int Kp,
                             const long packed_stride, global uint* restrict dst) {
  local float block[PACK_BLOCK][PACK_BLOCK + 1];  // [pixel][tap]
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int k0 = get_group_id(0) * PACK_BLOCK, r0 = get_group_id(1) * PACK_BLOCK;
  const int n = get_group_id(2);
  const int RS = R * S, CRS = C * RS, PQ = P * Q;
  const FastDiv by_q = fastdiv_for(Q), by_rs = fastdiv_for(RS), by_s = fastdiv_for(S);
  const global float* image = x + x_offset + (long)n * C * H * W;
  // 32 consecutive pixels per tap: consecutive input columns where stride_w is 1.
  int oh[PACK_BLOCK / 32], ow[PACK_BLOCK / 32];
#pragma unroll
  for (int h = 0; h < PACK_BLOCK / 32; ++h) {
    const int p = r0 + lx + 32 * h;
    oh[h] = fastdiv(p, by_q);
    ow[h] = p - oh[h] * Q;
  }
#pragma unroll
  for (int i = 0; i < PACK_BLOCK / 8; ++i) {
    const int k = k0 + ly + 8 * i;
    const int c = fastdiv(k, by_rs), rs = k - c * RS;
    const int r = fastdiv(rs, by_s), s = rs - r * S;
#pragma unroll
    for (int h = 0; h < PACK_BLOCK / 32; ++h) {
      const int ih = oh[h] * stride_h - pad_h + r * dil_h, iw = ow[h] * stride_w - pad_w + s * dil_w;
      const bool inside = r0 + lx + 32 * h < PQ && k < CRS && ih >= 0 && ih < H && iw >= 0 && iw < W;
      block[lx + 32 * h][ly + 8 * i] = inside ? image[((long)c * H + ih) * W + iw] : 0.0f;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  store_packed_block(block, dst + n * packed_stride, Kp, r0, k0);
}
