// The im2col algorithm of conv2d in fp32 (ops/conv2d/conv2d_im2col.cpp): the gather and scatter
// passes around its GEMMs. The im2col matrix has one row per filter tap,
// row = (c * R + r) * S + s (the order of the filter's OIHW rows, so a group's rows are contiguous),
// and one column per output pixel, col = oh * Q + ow: element x[c][oh * stride_h - pad_h + r * dil_h]
// [ow * stride_w - pad_w + s * dil_w], or 0 in the padding. The images of a chunk go in blocks of
// `wide` images side by side (one GEMM per block: block b's matrix has C * R * S rows of wide * P * Q
// columns, image j of the block in columns j * P * Q ...), blocks one after another; wide = 1 is one
// matrix per image. The tensors are STORAGE (storage.cl); the im2col matrices and blocks are WORK:
// STORAGE where the GEMMs read 16-bit matrices themselves (tensor cores), fp32 (WORK_FP32=1) where
// they would widen a 16-bit matrix into an fp32 copy anyway. col2im sums in fp32 and rounds once.
// Appended to conv2d_common.cl (shape arguments, fastdiv).

#ifndef WORK_FP32
#define WORK_FP32 0
#endif
#if WORK_FP32
#define WORK float
#define LOAD_WORK(p, i) ((p)[i])
#define STORE_WORK(v, p, i) ((p)[i] = (v))
#else
#define WORK STORAGE
#define LOAD_WORK(p, i) LOAD(p, i)
#define STORE_WORK(v, p, i) STORE(v, p, i)
#endif

#ifndef IM2COL_WG
#define IM2COL_WG 64  // work-items per work-group along the pixels (not tuned: a copy)
#endif
#ifndef COL2IM_CPU_CHUNK
#define COL2IM_CPU_CHUNK 64  // columns of a row conv2d_col2im_cpu sums in private memory (16-bit dx)
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
                          const int wide, global WORK* restrict cols) {
  const int pq = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q, RS = R * S;
  if (pq >= PQ) return;
  const int oh = pq / Q, ow = pq - oh * Q;
  const int ih0 = oh * stride_h - pad_h, iw0 = ow * stride_w - pad_w;
  const global STORAGE* plane = x + x_offset + ((long)(first + i) * C + c) * H * W;
  global WORK* out = cols + block_index(i, wide, C * RS, c * RS, PQ, pq);  // tap (c, 0, 0)
  const long tap_stride = (long)wide * PQ;                                     // the next tap's row
  for (int r = 0; r < R; ++r) {
    const int ih = ih0 + r * dil_h;
    const bool row_inside = ih >= 0 && ih < H;
    const global STORAGE* in = plane + (long)ih * W;
    for (int s = 0; s < S; ++s, out += tap_stride) {
      const int iw = iw0 + s * dil_w;
      STORE_WORK(row_inside && iw >= 0 && iw < W ? LOAD(in, iw) : 0.0f, out, 0);
    }
  }
}

// The input gradient of the images of the launch from their im2col-shaped gradients: dx[first + i]
// [c][h][w] = the sum, over the taps (r, s) and output pixels (oh, ow) that read (h, w), of
// cols[i][(c * R + r) * S + s][oh * Q + ow] (in its block). A gather per input element in a fixed tap order (no
// atomics: the result does not depend on the launch geometry); the element is overwritten.
// Launch: global (ceil(H*W / IM2COL_WG) * IM2COL_WG, C, images), local (IM2COL_WG, 1, 1).
__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_col2im(CONV_SHAPE_PARAMS, const global WORK* restrict cols, const int wide,
                          global STORAGE* restrict dx, const long dx_offset, const int first) {
  const int hw = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  if (hw >= H * W) return;
  const int h = hw / W, w = hw - h * W;
  const int PQ = P * Q;
  const global WORK* rows = cols + block_index(i, wide, C * R * S, c * R * S, PQ, 0);  // tap (c, 0, 0)
  const long tap_stride = (long)wide * PQ;
  float sum = 0.0f;
  if (stride_h == 1 && stride_w == 1) {  // the common case, without the divisions GPUs emulate
    for (int r = 0; r < R; ++r) {
      const int oh = h + pad_h - r * dil_h;
      if (oh < 0 || oh >= P) continue;
      for (int s = 0; s < S; ++s) {
        const int ow = w + pad_w - s * dil_w;
        if (ow < 0 || ow >= Q) continue;
        sum += LOAD_WORK(rows, (r * S + s) * tap_stride + oh * Q + ow);
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
        sum += LOAD_WORK(rows, (r * S + s) * tap_stride + oh * Q + ow);
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
                                    const int first, const int wide, global WORK* restrict blocks) {
  const int pq = get_global_id(0), k = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  if (pq >= PQ) return;
  // Copies through fp32 (half values cannot be moved directly without cl_khr_fp16): exact.
  STORE_WORK(LOAD(images, images_offset + ((long)(first + i) * K + k) * PQ + pq), blocks, block_index(i, wide, K, k, PQ, pq));
}

__attribute__((reqd_work_group_size(IM2COL_WG, 1, 1)))
kernel void conv2d_blocks_to_images(CONV_SHAPE_PARAMS, const global WORK* restrict blocks, const int wide,
                                    global STORAGE* restrict images, const long images_offset, const int first) {
  const int pq = get_global_id(0), k = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  if (pq >= PQ) return;
  STORE(LOAD_WORK(blocks, block_index(i, wide, K, k, PQ, pq)), images, images_offset + ((long)(first + i) * K + k) * PQ + pq);
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
                              const int first, const int wide, global WORK* restrict cols) {
  const int tap = get_global_id(0), i = get_global_id(1);
  const int RS = R * S, PQ = P * Q;
  const int c = tap / RS, rs = tap - c * RS;
  const int r = rs / S, s = rs - r * S;
  const int2 inside = inside_columns(s, W, Q, stride_w, pad_w, dil_w);
  const global STORAGE* plane = x + x_offset + ((long)(first + i) * C + c) * H * W;
  global WORK* row = cols + block_index(i, wide, C * RS, tap, PQ, 0);
  for (int oh = 0; oh < P; ++oh, row += Q) {
    const int ih = oh * stride_h - pad_h + r * dil_h;
    if (ih < 0 || ih >= H) {
      for (int ow = 0; ow < Q; ++ow) STORE_WORK(0.0f, row, ow);
      continue;
    }
    const global STORAGE* in = plane + (long)ih * W + s * dil_w - pad_w;  // in[ow * stride_w]
    // Copies through fp32: exact in every storage type.
    for (int ow = 0; ow < inside.x; ++ow) STORE_WORK(0.0f, row, ow);
    if (stride_w == 1) {
      for (int ow = inside.x; ow < inside.y; ++ow) STORE_WORK(LOAD(in, ow), row, ow);
    } else {
      for (int ow = inside.x; ow < inside.y; ++ow) STORE_WORK(LOAD(in, ow * stride_w), row, ow);
    }
    for (int ow = inside.y; ow < Q; ++ow) STORE_WORK(0.0f, row, ow);
  }
}

// As conv2d_col2im, one work-item per input row (c, h) of an image, accumulating the taps in the
// same order (r, then s) as conv2d_col2im does per element, so both give the same sums.
// Launch: global (H, C, images), local chosen by the driver.
kernel void conv2d_col2im_cpu(CONV_SHAPE_PARAMS, const global WORK* restrict cols, const int wide,
                              global STORAGE* restrict dx, const long dx_offset, const int first) {
  const int h = get_global_id(0), c = get_global_id(1), i = get_global_id(2);
  const int PQ = P * Q;
  const global WORK* rows = cols + block_index(i, wide, C * R * S, c * R * S, PQ, 0);  // tap (c, 0, 0)
  const long tap_stride = (long)wide * PQ;
  global STORAGE* out = dx + dx_offset + (((long)(first + i) * C + c) * H + h) * W;
#if DTYPE != 0
  // 16-bit storage: the sums stay in fp32 and are rounded once, so the row goes in chunks of
  // COL2IM_CPU_CHUNK columns summed in private memory (the in-place row accumulation below would
  // round after every tap), each tap a strided run as there: one element at a time with its
  // divisions took 2.3x the fp32 input gradient on PoCL. Each element's taps are summed in the same
  // order (r, then s) as below and as conv2d_col2im.
  for (int w0 = 0; w0 < W; w0 += COL2IM_CPU_CHUNK) {
    const int wn = min(COL2IM_CPU_CHUNK, W - w0);
    float acc[COL2IM_CPU_CHUNK];
    for (int j = 0; j < wn; ++j) acc[j] = 0.0f;
    for (int r = 0; r < R; ++r) {
      const int th = h + pad_h - r * dil_h;  // oh * stride_h
      if (th < 0 || th % stride_h != 0) continue;
      const int oh = th / stride_h;
      if (oh >= P) continue;
      for (int s = 0; s < S; ++s) {
        const int2 inside = inside_columns(s, W, Q, stride_w, pad_w, dil_w);
        const int offset = s * dil_w - pad_w;  // ow reads into column ow * stride_w + offset
        const int first_w = w0 - offset, last_w = w0 + wn - 1 - offset;  // as ow * stride_w
        if (last_w < 0) continue;
        const int lo = max(inside.x, first_w <= 0 ? 0 : (first_w + stride_w - 1) / stride_w);
        const int hi = min(inside.y, last_w / stride_w + 1);
        const global WORK* in = rows + (r * S + s) * tap_stride + oh * Q;
        for (int ow = lo; ow < hi; ++ow) acc[ow * stride_w + offset - w0] += LOAD_WORK(in, ow);
      }
    }
    for (int j = 0; j < wn; ++j) STORE(acc[j], out, w0 + j);
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
      const global WORK* in = rows + (r * S + s) * tap_stride + oh * Q;
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

// The weights widened to fp32 for GEMMs on fp32 matrices (WORK_FP32): w32[i] = w[w_offset + i].
// Launch: global (ceil(count / 256) * 256), local (256).
kernel void conv2d_widen_weights(const long count, const global STORAGE* restrict w, const long w_offset,
                                 global float* restrict w32) {
  const long i = get_global_id(0);
  if (i < count) w32[i] = LOAD(w, w_offset + i);
}
