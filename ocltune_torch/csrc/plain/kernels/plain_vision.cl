// torchvision's detection ops on the device (csrc/ops/vision_ops.cpp): roi_align, its backward and
// nms, as fasterrcnn's RoI heads and box post-processing run them.
//
// Slots: A (the feature map, the boxes, the output gradient), O (the output), one float dtype; the
// backward accumulates into a float buffer whatever the dtype. Values are computed in float
// as torchvision's CUDA kernels do (its CPU kernels take float32 and float64 only). The arithmetic
// follows torchvision's CPU kernels (torchvision/csrc/ops/cpu/{roi_align,nms}_kernel.cpp) step for
// step, without contraction, so fp32 results are the CPU's.

#pragma OPENCL FP_CONTRACT OFF

// ---- roi_align ----

typedef struct {
  long rois, channels, height, width, pooled_height, pooled_width;
  float spatial_scale;
  int sampling_ratio, aligned;
} RoiAlignGeometry;

// bilinear_interpolate_gradient of roi_align_kernel.cpp (and the first half of bilinear_interpolate):
// the four corners a sample at (y, x) reads
// and their weights; *y_low < 0 for a sample outside [-1, size], which contributes nothing.
inline void roi_bilinear_corners(long height, long width, float y, float x, long* y_low, long* y_high, long* x_low,
                                 long* x_high, float4* w) {
  if (y < -1.0f || y > (float)height || x < -1.0f || x > (float)width) {
    *y_low = *y_high = *x_low = *x_high = -1;
    *w = (float4)(0.0f);
    return;
  }
  if (y <= 0.0f) y = 0.0f;
  if (x <= 0.0f) x = 0.0f;
  *y_low = (long)y;
  *x_low = (long)x;
  if (*y_low >= height - 1) {
    *y_high = *y_low = height - 1;
    y = (float)*y_low;
  } else {
    *y_high = *y_low + 1;
  }
  if (*x_low >= width - 1) {
    *x_high = *x_low = width - 1;
    x = (float)*x_low;
  } else {
    *x_high = *x_low + 1;
  }
  const float ly = y - (float)*y_low, lx = x - (float)*x_low;
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  *w = (float4)(hy * hx, hy * lx, ly * hx, ly * lx);
}

// bilinear_interpolate of roi_align_kernel.cpp, on the corners above.
inline float roi_bilinear(global const A_S* plane, long height, long width, float y, float x) {
  long y_low, y_high, x_low, x_high;
  float4 w;
  roi_bilinear_corners(height, width, y, x, &y_low, &y_high, &x_low, &x_high, &w);
  if (y_low < 0) return 0.0f;
  return w.s0 * A_LOAD(plane, y_low * width + x_low) + w.s1 * A_LOAD(plane, y_low * width + x_high) +
         w.s2 * A_LOAD(plane, y_high * width + x_low) + w.s3 * A_LOAD(plane, y_high * width + x_high);
}

// A RoI's bins: where the first starts, their size, and the sampling grid of each (roi_align_kernel.cpp).
typedef struct {
  long batch, grid_h, grid_w;
  float start_h, start_w, bin_h, bin_w, count;
} RoiBins;

inline RoiBins roi_bins(const RoiAlignGeometry g, global const A_S* roi) {
  RoiBins b;
  b.batch = (long)A_LOAD(roi, 0);
  const float offset = g.aligned ? 0.5f : 0.0f;
  b.start_w = A_LOAD(roi, 1) * g.spatial_scale - offset;
  b.start_h = A_LOAD(roi, 2) * g.spatial_scale - offset;
  const float end_w = A_LOAD(roi, 3) * g.spatial_scale - offset;
  const float end_h = A_LOAD(roi, 4) * g.spatial_scale - offset;
  float roi_width = end_w - b.start_w, roi_height = end_h - b.start_h;
  if (!g.aligned) {  // malformed RoIs forced to 1x1, as torchvision does for the legacy mode
    roi_width = max(roi_width, 1.0f);
    roi_height = max(roi_height, 1.0f);
  }
  b.bin_h = roi_height / (float)g.pooled_height;
  b.bin_w = roi_width / (float)g.pooled_width;
  b.grid_h = g.sampling_ratio > 0 ? g.sampling_ratio : (long)ceil(roi_height / (float)g.pooled_height);
  b.grid_w = g.sampling_ratio > 0 ? g.sampling_ratio : (long)ceil(roi_width / (float)g.pooled_width);
  b.count = (float)max(b.grid_h * b.grid_w, 1L);
  return b;
}

// One work item per output element [roi, channel, ph, pw]: the average of the bin's sampling grid.
// rois are [K, 5] rows (batch index, x1, y1, x2, y2) in the input's dtype.
kernel void roi_align(const RoiAlignGeometry g, global const A_S* in_base, const long in_at,
                      global const A_S* rois_base, const long rois_at, global O_S* out_base, const long out_at) {
  global const A_S* in = in_base + in_at;
  global const A_S* rois = rois_base + rois_at;
  global O_S* out = out_base + out_at;
  FOR_EACH_INDEX(i, g.rois * g.channels * g.pooled_height * g.pooled_width) {
    const long pw = i % g.pooled_width, ph = (i / g.pooled_width) % g.pooled_height;
    const long c = (i / (g.pooled_width * g.pooled_height)) % g.channels;
    const long n = i / (g.pooled_width * g.pooled_height * g.channels);
    const RoiBins b = roi_bins(g, rois + n * 5);
    global const A_S* plane = in + (b.batch * g.channels + c) * g.height * g.width;
    float sum = 0.0f;
    for (long iy = 0; iy < b.grid_h; ++iy) {
      const float y = b.start_h + (float)ph * b.bin_h + ((float)iy + 0.5f) * b.bin_h / (float)b.grid_h;
      for (long ix = 0; ix < b.grid_w; ++ix) {
        const float x = b.start_w + (float)pw * b.bin_w + ((float)ix + 0.5f) * b.bin_w / (float)b.grid_w;
        sum += roi_bilinear(plane, g.height, g.width, y, x);
      }
    }
    O_STORE(out, i, TO_O(sum / b.count));
  }
}

// grad_in[i] += v with a compare-and-swap loop: RoIs overlap, so bins of different work items share
// input pixels (as torchvision's CUDA kernel, which uses atomicAdd; the order of the sums varies).
inline void roi_atomic_add(global float* grad_in, long i, float v) {
  volatile global uint* a = (volatile global uint*)(grad_in + i);
  uint old = *a, assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg(a, assumed, as_uint(as_float(assumed) + v));
  } while (old != assumed);
}

// roi_align's backward: one work item per output gradient element [roi, channel, ph, pw], which
// spreads its value over the four corners of each sample of its bin, as the forward read them.
// grad_out is packed [K, C, PH, PW] in A; grad_in is a zeroed float [N, C, H, W].
kernel void roi_align_backward(const RoiAlignGeometry g, global const A_S* grad_out_base, const long grad_out_at,
                               global const A_S* rois_base, const long rois_at, global float* grad_in_base,
                               const long grad_in_at) {
  global const A_S* grad_out = grad_out_base + grad_out_at;
  global const A_S* rois = rois_base + rois_at;
  global float* grad_in = grad_in_base + grad_in_at;
  FOR_EACH_INDEX(i, g.rois * g.channels * g.pooled_height * g.pooled_width) {
    const long pw = i % g.pooled_width, ph = (i / g.pooled_width) % g.pooled_height;
    const long c = (i / (g.pooled_width * g.pooled_height)) % g.channels;
    const long n = i / (g.pooled_width * g.pooled_height * g.channels);
    const RoiBins b = roi_bins(g, rois + n * 5);
    const long plane = (b.batch * g.channels + c) * g.height * g.width;
    const float grad = A_LOAD(grad_out, i);
    for (long iy = 0; iy < b.grid_h; ++iy) {
      const float y = b.start_h + (float)ph * b.bin_h + ((float)iy + 0.5f) * b.bin_h / (float)b.grid_h;
      for (long ix = 0; ix < b.grid_w; ++ix) {
        const float x = b.start_w + (float)pw * b.bin_w + ((float)ix + 0.5f) * b.bin_w / (float)b.grid_w;
        long y_low, y_high, x_low, x_high;
        float4 w;
        roi_bilinear_corners(g.height, g.width, y, x, &y_low, &y_high, &x_low, &x_high, &w);
        if (y_low < 0) continue;
        roi_atomic_add(grad_in, plane + y_low * g.width + x_low, grad * w.s0 / b.count);
        roi_atomic_add(grad_in, plane + y_low * g.width + x_high, grad * w.s1 / b.count);
        roi_atomic_add(grad_in, plane + y_high * g.width + x_low, grad * w.s2 / b.count);
        roi_atomic_add(grad_in, plane + y_high * g.width + x_high, grad * w.s3 / b.count);
      }
    }
  }
}

// ---- nms ----
// As torchvision's CUDA nms: boxes sorted by score, a bit matrix of which later box each box
// suppresses (IoU > threshold), 64 boxes per word, then one greedy pass over it.

// The IoU test of nms_kernel.cpp for boxes a and b ([x1, y1, x2, y2]).
inline bool iou_above(global const A_S* a, global const A_S* b, float threshold) {
  const float ax1 = A_LOAD(a, 0), ay1 = A_LOAD(a, 1), ax2 = A_LOAD(a, 2), ay2 = A_LOAD(a, 3);
  const float bx1 = A_LOAD(b, 0), by1 = A_LOAD(b, 1), bx2 = A_LOAD(b, 2), by2 = A_LOAD(b, 3);
  const float area_a = (ax2 - ax1) * (ay2 - ay1), area_b = (bx2 - bx1) * (by2 - by1);
  const float w = max(0.0f, min(ax2, bx2) - max(ax1, bx1));
  const float h = max(0.0f, min(ay2, by2) - max(ay1, by1));
  const float inter = w * h;
  return inter / (area_a + area_b - inter) > threshold;
}

// mask[i * words + word] bit b: box i suppresses box j = word * 64 + b (j > i). boxes are [n, 4] rows
// in descending score order. One work item per (i, word).
kernel void nms_mask(const long n, const long words, const float threshold, global const A_S* boxes_base,
                     const long boxes_at, global ulong* mask_base, const long mask_at) {
  global const A_S* boxes = boxes_base + boxes_at;
  global ulong* mask = mask_base + mask_at;
  FOR_EACH_INDEX(t, n * words) {
    const long i = t / words, word = t % words;
    ulong bits = 0;
    for (long b = 0; b < 64; ++b) {
      const long j = word * 64 + b;
      if (j > i && j < n && iou_above(boxes + i * 4, boxes + j * 4, threshold)) bits |= (ulong)1 << b;
    }
    mask[t] = bits;
  }
}

// The greedy pass, in one work item: box i is kept unless a kept box before it suppressed it.
// `removed` (words ulongs) is scratch; keep[i] is 1 for a kept box, else 0.
kernel void nms_keep(const long n, const long words, global const ulong* mask_base, const long mask_at,
                     global ulong* removed_base, const long removed_at, global uchar* keep_base, const long keep_at) {
  if (get_global_id(0) != 0) return;
  global const ulong* mask = mask_base + mask_at;
  global ulong* removed = removed_base + removed_at;
  global uchar* keep = keep_base + keep_at;
  for (long w = 0; w < words; ++w) removed[w] = 0;
  for (long i = 0; i < n; ++i) {
    const bool suppressed = (removed[i / 64] >> (i % 64)) & 1;
    keep[i] = suppressed ? 0 : 1;
    if (suppressed) continue;
    for (long w = i / 64; w < words; ++w) removed[w] |= mask[i * words + w];
  }
}
