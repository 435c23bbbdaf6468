// The im2col algorithm of conv2d in fp32 (ops/conv2d/conv2d_im2col.cpp): the gather and scatter
// passes around its GEMMs. The im2col matrix of an image has one row per filter tap,
// row = (c * R + r) * S + s (the order of the filter's OIHW rows, so a group's rows are contiguous),
// and one column per output pixel, col = oh * Q + ow: element x[c][oh * stride_h - pad_h + r * dil_h]
// [ow * stride_w - pad_w + s * dil_w], or 0 in the padding. Images of a chunk follow each other,
// C * R * S * P * Q elements apart. Appended to conv2d_common.cl (shape arguments, fastdiv).

#ifndef IM2COL_WG
#define IM2COL_WG 64  // work-items per work-group along the pixels (not tuned: a copy)
#endif

// cols[i] = the im2col matrix of image first + i, for the images of the launch.
// Launch: global (ceil(P*Q / IM2COL_WG) * IM2COL_WG, C*R*S, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_im2col(CONV_SHAPE_PARAMS, const global float* restrict x, const long x_offset, const int first,
                          global float* restrict cols) {
  const int pq = get_global_id(0), tap = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q, RS = R * S;
  if (pq >= PQ) return;
  const int c = tap / RS, rs = tap - c * RS;
  const int r = rs / S, s = rs - r * S;
  const int oh = pq / Q, ow = pq - oh * Q;
  const int ih = oh * stride_h - pad_h + r * dil_h, iw = ow * stride_w - pad_w + s * dil_w;
  const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
  const global float* image = x + x_offset + (long)(first + i) * C * H * W;
  cols[((long)i * C * RS + tap) * PQ + pq] = inside ? image[((long)c * H + ih) * W + iw] : 0.0f;
}

// The input gradient of the images of the launch from their im2col-shaped gradients: dx[first + i]
// [c][h][w] = the sum, over the taps (r, s) and output pixels (oh, ow) that read (h, w), of
// cols[i][(c * R + r) * S + s][oh * Q + ow]. A gather per input element in a fixed tap order (no
// atomics: the result does not depend on the launch geometry); the element is overwritten.
// Launch: global (ceil(H*W / IM2COL_WG) * IM2COL_WG, C, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_col2im(CONV_SHAPE_PARAMS, const global float* restrict cols, global float* restrict dx,
                          const long dx_offset, const int first) {
  const int hw = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  if (hw >= H * W) return;
  const int h = hw / W, w = hw - h * W;
  const int PQ = P * Q;
  const global float* rows = cols + ((long)i * C + c) * R * S * PQ;
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
      sum += rows[(long)(r * S + s) * PQ + oh * Q + ow];
    }
  }
  dx[dx_offset + ((long)(first + i) * C + c) * H * W + hw] = sum;
}
