// The im2col algorithm of conv2d in fp32 (ops/conv2d/conv2d_im2col.cpp): the gather and scatter
// passes around its GEMMs. The im2col matrix has one row per filter tap,
// row = (c * R + r) * S + s (the order of the filter's OIHW rows, so a group's rows are contiguous),
// and one column per output pixel, col = oh * Q + ow: element x[c][oh * stride_h - pad_h + r * dil_h]
// [ow * stride_w - pad_w + s * dil_w], or 0 in the padding. The images of a chunk go in blocks of
// `wide` images side by side (one GEMM per block: block b's matrix has C * R * S rows of wide * P * Q
// columns, image j of the block in columns j * P * Q ...), blocks one after another; wide = 1 is one
// matrix per image. Appended to conv2d_common.cl (shape arguments, fastdiv).

#ifndef IM2COL_WG
#define IM2COL_WG 64  // work-items per work-group along the pixels (not tuned: a copy)
#endif

// Where row `row` (of `rows`), pixel pq of image i of a chunk is in its blocks of `wide` images:
// blocks[b][row][j * P * Q + pq] for image i = b * wide + j.
inline long block_index(const int i, const int wide, const int rows, const int row, const int PQ, const int pq) {
  return (((long)(i / wide) * rows + row) * wide + i % wide) * PQ + pq;
}

// cols = the im2col matrices of images first, first + 1, ... of the launch, in blocks of `wide`.
// Launch: global (ceil(P*Q / IM2COL_WG) * IM2COL_WG, C*R*S, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_im2col(CONV_SHAPE_PARAMS, const global float* restrict x, const long x_offset, const int first,
                          const int wide, global float* restrict cols) {
  const int pq = get_global_id(0), tap = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q, RS = R * S;
  if (pq >= PQ) return;
  const int c = tap / RS, rs = tap - c * RS;
  const int r = rs / S, s = rs - r * S;
  const int oh = pq / Q, ow = pq - oh * Q;
  const int ih = oh * stride_h - pad_h + r * dil_h, iw = ow * stride_w - pad_w + s * dil_w;
  const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
  const global float* image = x + x_offset + (long)(first + i) * C * H * W;
  cols[block_index(i, wide, C * RS, tap, PQ, pq)] = inside ? image[((long)c * H + ih) * W + iw] : 0.0f;
}

// The input gradient of the images of the launch from their im2col-shaped gradients: dx[first + i]
// [c][h][w] = the sum, over the taps (r, s) and output pixels (oh, ow) that read (h, w), of
// cols[i][(c * R + r) * S + s][oh * Q + ow] (in its block). A gather per input element in a fixed tap order (no
// atomics: the result does not depend on the launch geometry); the element is overwritten.
// Launch: global (ceil(H*W / IM2COL_WG) * IM2COL_WG, C, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_col2im(CONV_SHAPE_PARAMS, const global float* restrict cols, const int wide,
                          global float* restrict dx, const long dx_offset, const int first) {
  const int hw = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  if (hw >= H * W) return;
  const int h = hw / W, w = hw - h * W;
  const int PQ = P * Q;
  const global float* rows = cols + block_index(i, wide, C * R * S, c * R * S, PQ, 0);  // tap (c, 0, 0)
  const long tap_stride = (long)wide * PQ;
  float sum = 0.0f;
  for (int r = 0; r < R; ++r) {
    const int th = h + pad_h - r * dil_h;  // oh * stride_h
    if (th < 0 || th % stride_h != 0) continue;
    const int oh = th / stride_h;
    if (oh >= P) continue;
    for (int s = 0; s < S; ++s) {
      const int tw = w + pad_w - s * dil_w;
      if (tw < 0 || tw % stride_w != 0) continue;
      const int ow = tw / stride_w;
      if (ow >= Q) continue;
      sum += rows[(r * S + s) * tap_stride + oh * Q + ow];
    }
  }
  dx[dx_offset + ((long)(first + i) * C + c) * H * W + hw] = sum;
}

// The outputs (or output gradients) of the images of a chunk as the blocks' GEMMs see them, K rows of
// wide * P * Q columns per block: blocks[b][k][j * P * Q + pq] is images[first + b * wide + j][k][pq].
// Launch: global (ceil(P*Q / IM2COL_WG) * IM2COL_WG, K, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_images_to_blocks(CONV_SHAPE_PARAMS, const global float* restrict images, const long images_offset,
                                    const int first, const int wide, global float* restrict blocks) {
  const int pq = get_global_id(0), k = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  if (pq >= PQ) return;
  blocks[block_index(i, wide, K, k, PQ, pq)] = images[images_offset + ((long)(first + i) * K + k) * PQ + pq];
}

__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_blocks_to_images(CONV_SHAPE_PARAMS, const global float* restrict blocks, const int wide,
                                    global float* restrict images, const long images_offset, const int first) {
  const int pq = get_global_id(0), k = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  if (pq >= PQ) return;
  images[images_offset + ((long)(first + i) * K + k) * PQ + pq] = blocks[block_index(i, wide, K, k, PQ, pq)];
}
