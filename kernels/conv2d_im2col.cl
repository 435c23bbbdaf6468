// The im2col algorithm of conv2d in fp32 (ops/conv2d/conv2d_im2col.cpp): the gather and scatter
// passes around its GEMMs. The im2col matrix has one row per filter tap,
// row = (c * R + r) * S + s (the order of the filter's OIHW rows, so a group's rows are contiguous),
// and one column per output pixel, col = oh * Q + ow: element x[c][oh * stride_h - pad_h + r * dil_h]
// [ow * stride_w - pad_w + s * dil_w], or 0 in the padding. The images of a chunk go in blocks of
// `wide` images side by side (one GEMM per block: block b's matrix has C * R * S rows of wide * P * Q
// columns, image j of the block in columns j * P * Q ...), blocks one after another; wide = 1 is one
// matrix per image. The tensors and the im2col matrices are STORAGE (storage.cl: for 16-bit storage
// the GEMMs read 16-bit matrices); col2im sums in fp32 and rounds once. Appended to
// conv2d_common.cl (shape arguments, fastdiv).

#ifndef IM2COL_WG
#define IM2COL_WG 64  // work-items per work-group along the pixels (not tuned: a copy)
#endif

// Where row `row` (of `rows`), pixel pq of image i of a chunk is in its blocks of `wide` images:
// blocks[b][row][j * P * Q + pq] for image i = b * wide + j.
inline long block_index(const int i, const int wide, const int rows, const int row, const int PQ, const int pq) {
  return (((long)(i / wide) * rows + row) * wide + i % wide) * PQ + pq;
}

// cols = the im2col matrices of images first, first + 1, ... of the launch, in blocks of `wide`.
// One work-item per output pixel and input channel writes that channel's R * S taps of the pixel:
// the pixel's division once, the taps by increments. (One work-item per element paid four integer
// divisions each, which GPUs emulate: on the H200 the gather of a 64-image 64@56 3x3 weight gradient
// took 0.9 ms, more than its GEMMs.) A warp's stores of one tap are contiguous pixels.
// Launch: global (ceil(P*Q / IM2COL_WG) * IM2COL_WG, C, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_im2col(CONV_SHAPE_PARAMS, const global STORAGE* restrict x, const long x_offset, const int first,
                          const int wide, global STORAGE* restrict cols) {
  const int pq = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q, RS = R * S;
  if (pq >= PQ) return;
  const int oh = pq / Q, ow = pq - oh * Q;
  const int ih0 = oh * stride_h - pad_h, iw0 = ow * stride_w - pad_w;
  const global STORAGE* plane = x + x_offset + ((long)(first + i) * C + c) * H * W;
  global STORAGE* out = cols + block_index(i, wide, C * RS, c * RS, PQ, pq);  // tap (c, 0, 0)
  const long tap_stride = (long)wide * PQ;                                     // the next tap's row
  for (int r = 0; r < R; ++r) {
    const int ih = ih0 + r * dil_h;
    const bool row_inside = ih >= 0 && ih < H;
    const global STORAGE* in = plane + (long)ih * W;
    for (int s = 0; s < S; ++s, out += tap_stride) {
      const int iw = iw0 + s * dil_w;
      STORE(row_inside && iw >= 0 && iw < W ? LOAD(in, iw) : 0.0f, out, 0);
    }
  }
}

// The input gradient of the images of the launch from their im2col-shaped gradients: dx[first + i]
// [c][h][w] = the sum, over the taps (r, s) and output pixels (oh, ow) that read (h, w), of
// cols[i][(c * R + r) * S + s][oh * Q + ow] (in its block). A gather per input element in a fixed tap order (no
// atomics: the result does not depend on the launch geometry); the element is overwritten.
// Launch: global (ceil(H*W / IM2COL_WG) * IM2COL_WG, C, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_col2im(CONV_SHAPE_PARAMS, const global STORAGE* restrict cols, const int wide,
                          global STORAGE* restrict dx, const long dx_offset, const int first) {
  const int hw = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  if (hw >= H * W) return;
  const int h = hw / W, w = hw - h * W;
  const int PQ = P * Q;
  const global STORAGE* rows = cols + block_index(i, wide, C * R * S, c * R * S, PQ, 0);  // tap (c, 0, 0)
  const long tap_stride = (long)wide * PQ;
  float sum = 0.0f;
  if (stride_h == 1 && stride_w == 1) {  // the common case, without the divisions GPUs emulate
    for (int r = 0; r < R; ++r) {
      const int oh = h + pad_h - r * dil_h;
      if (oh < 0 || oh >= P) continue;
      for (int s = 0; s < S; ++s) {
        const int ow = w + pad_w - s * dil_w;
        if (ow < 0 || ow >= Q) continue;
        sum += LOAD(rows, (r * S + s) * tap_stride + oh * Q + ow);
      }
    }
  } else {
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
        sum += LOAD(rows, (r * S + s) * tap_stride + oh * Q + ow);
      }
    }
  }
  STORE(sum, dx, dx_offset + ((long)(first + i) * C + c) * H * W + hw);
}

// The outputs (or output gradients) of the images of a chunk as the blocks' GEMMs see them, K rows of
// wide * P * Q columns per block: blocks[b][k][j * P * Q + pq] is images[first + b * wide + j][k][pq].
// Launch: global (ceil(P*Q / IM2COL_WG) * IM2COL_WG, K, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_images_to_blocks(CONV_SHAPE_PARAMS, const global STORAGE* restrict images, const long images_offset,
                                    const int first, const int wide, global STORAGE* restrict blocks) {
  const int pq = get_global_id(0), k = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  if (pq >= PQ) return;
  // Copies through fp32 (half values cannot be moved directly without cl_khr_fp16): exact.
  STORE(LOAD(images, images_offset + ((long)(first + i) * K + k) * PQ + pq), blocks, block_index(i, wide, K, k, PQ, pq));
}

__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_blocks_to_images(CONV_SHAPE_PARAMS, const global STORAGE* restrict blocks, const int wide,
                                    global STORAGE* restrict images, const long images_offset, const int first) {
  const int pq = get_global_id(0), k = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  if (pq >= PQ) return;
  STORE(LOAD(blocks, block_index(i, wide, K, k, PQ, pq)), images, images_offset + ((long)(first + i) * K + k) * PQ + pq);
}

// CPU versions of the gather and scatter (the plans of the CPU GEMM variant, CPU=1, use them): a
// CPU runs a work-group's work-items one after another, so the per-element kernels above paid four
// integer divisions per element, which a CPU cannot vectorise (PoCL: 148 us for one 3 x 19 x 19
// image with 5x5 taps, 5 ns an element). Here one work-item walks whole rows: the divisions once
// per row, the row's padding as two runs of zeros around a strided copy.

// The first and one past the last output column ow in [0, Q) whose input column
// ow * stride_w - pad_w + s * dil_w lies in [0, W).
inline int2 inside_columns(const int s, const int W, const int Q, const int stride_w, const int pad_w,
                           const int dil_w) {
  const int offset = s * dil_w - pad_w;  // input column of ow = 0
  const int lo = offset >= 0 ? 0 : (-offset + stride_w - 1) / stride_w;
  const int hi = W - 1 - offset < 0 ? 0 : min(Q, (W - 1 - offset) / stride_w + 1);
  return (int2)(min(lo, hi), hi);
}

// As conv2d_im2col, one work-item per tap row of an image: tap (c, r, s) of image i, all P * Q pixels.
// Launch: global (C*R*S, images), local chosen by the driver.
kernel void conv2d_im2col_cpu(CONV_SHAPE_PARAMS, const global STORAGE* restrict x, const long x_offset,
                              const int first, const int wide, global STORAGE* restrict cols) {
  const int tap = get_global_id(0), i = get_global_id(1);
  const int RS = R * S, PQ = P * Q;
  const int c = tap / RS, rs = tap - c * RS;
  const int r = rs / S, s = rs - r * S;
  const int2 inside = inside_columns(s, W, Q, stride_w, pad_w, dil_w);
  const global STORAGE* plane = x + x_offset + ((long)(first + i) * C + c) * H * W;
  global STORAGE* row = cols + block_index(i, wide, C * RS, tap, PQ, 0);
  for (int oh = 0; oh < P; ++oh, row += Q) {
    const int ih = oh * stride_h - pad_h + r * dil_h;
    if (ih < 0 || ih >= H) {
      for (int ow = 0; ow < Q; ++ow) STORE(0.0f, row, ow);
      continue;
    }
    const global STORAGE* in = plane + (long)ih * W + s * dil_w - pad_w;  // in[ow * stride_w]
    // Copies through fp32: exact in every storage type.
    for (int ow = 0; ow < inside.x; ++ow) STORE(0.0f, row, ow);
    if (stride_w == 1) {
      for (int ow = inside.x; ow < inside.y; ++ow) STORE(LOAD(in, ow), row, ow);
    } else {
      for (int ow = inside.x; ow < inside.y; ++ow) STORE(LOAD(in, ow * stride_w), row, ow);
    }
    for (int ow = inside.y; ow < Q; ++ow) STORE(0.0f, row, ow);
  }
}

// As conv2d_col2im, one work-item per input row (c, h) of an image, accumulating the taps in the
// same order (r, then s) as conv2d_col2im does per element, so both give the same sums.
// Launch: global (H, C, images), local chosen by the driver.
kernel void conv2d_col2im_cpu(CONV_SHAPE_PARAMS, const global STORAGE* restrict cols, const int wide,
                              global STORAGE* restrict dx, const long dx_offset, const int first) {
  const int h = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  const global STORAGE* rows = cols + block_index(i, wide, C * R * S, c * R * S, PQ, 0);  // tap (c, 0, 0)
  const long tap_stride = (long)wide * PQ;
  global STORAGE* out = dx + dx_offset + (((long)(first + i) * C + c) * H + h) * W;
#if DTYPE != 0
  // 16-bit storage: the sums stay in fp32 and are rounded once, so one element at a time (the
  // in-place row accumulation below would round after every tap).
  for (int w = 0; w < W; ++w) {
    float sum = 0.0f;
    for (int r = 0; r < R; ++r) {
      const int th = h + pad_h - r * dil_h;
      if (th < 0 || th % stride_h != 0) continue;
      const int oh = th / stride_h;
      if (oh >= P) continue;
      for (int s = 0; s < S; ++s) {
        const int tw = w + pad_w - s * dil_w;
        if (tw < 0 || tw % stride_w != 0) continue;
        const int ow = tw / stride_w;
        if (ow < Q) sum += LOAD(rows, (r * S + s) * tap_stride + oh * Q + ow);
      }
    }
    STORE(sum, out, w);
  }
#else
  for (int w = 0; w < W; ++w) out[w] = 0.0f;
  for (int r = 0; r < R; ++r) {
    const int th = h + pad_h - r * dil_h;  // oh * stride_h
    if (th < 0 || th % stride_h != 0) continue;
    const int oh = th / stride_h;
    if (oh >= P) continue;
    for (int s = 0; s < S; ++s) {
      const int2 inside = inside_columns(s, W, Q, stride_w, pad_w, dil_w);
      const global STORAGE* in = rows + (r * S + s) * tap_stride + oh * Q;
      global STORAGE* o = out + s * dil_w - pad_w;  // o[ow * stride_w] is dx[.., w]
      if (stride_w == 1) {
        for (int ow = inside.x; ow < inside.y; ++ow) o[ow] += in[ow];
      } else {
        for (int ow = inside.x; ow < inside.y; ++ow) o[ow * stride_w] += in[ow];
      }
    }
  }
#endif
}
