// upsample_bilinear2d and upsample_nearest2d (csrc/ops/upsample_ops.cpp): what F.interpolate runs for
// 4-D inputs in "bilinear" and "nearest" modes (segmentation heads, feature pyramids).
//
// Slots: A (the input), O (the output), the same float dtype; values are computed in float, as
// PyTorch's CPU kernels do for 16-bit inputs. Tensors are contiguous [planes, H, W] (planes = N * C)
// with their element offsets (`_at`). One work item per output element (a gather: no atomics). The
// source coordinates follow ATen's UpSample.h step for step (area_pixel_compute_source_index,
// nearest_idx), with the scales the host computed as the CPU does (float).

#pragma OPENCL FP_CONTRACT OFF

typedef struct {
  long planes, h, w, oh, ow;
  float scale_h, scale_w;  // source pixels per output pixel (area_pixel_compute_scale)
  int align_corners;
} UpsampleGeometry;

// area_pixel_compute_source_index for the linear modes (never negative).
inline float linear_source(float scale, long dst, int align_corners) {
  if (align_corners) return scale * (float)dst;
  const float src = scale * ((float)dst + 0.5f) - 0.5f;
  return src < 0.0f ? 0.0f : src;
}

kernel void upsample_bilinear(const UpsampleGeometry g, global const A_S* in_base, const long in_at,
                              global O_S* out_base, const long out_at) {
  global const A_S* in = in_base + in_at;
  global O_S* out = out_base + out_at;
  FOR_EACH_INDEX(i, g.planes * g.oh * g.ow) {
    const long ox = i % g.ow, oy = (i / g.ow) % g.oh, plane = i / (g.ow * g.oh);
    const float sy = linear_source(g.scale_h, oy, g.align_corners);
    const float sx = linear_source(g.scale_w, ox, g.align_corners);
    const long y0 = (long)sy, x0 = (long)sx;
    const long y1 = y0 + (y0 < g.h - 1 ? 1 : 0), x1 = x0 + (x0 < g.w - 1 ? 1 : 0);
    const float ly1 = sy - (float)y0, lx1 = sx - (float)x0;
    const float ly0 = 1.0f - ly1, lx0 = 1.0f - lx1;
    global const A_S* p = in + plane * g.h * g.w;
    const float top = lx0 * A_LOAD(p, y0 * g.w + x0) + lx1 * A_LOAD(p, y0 * g.w + x1);
    const float bottom = lx0 * A_LOAD(p, y1 * g.w + x0) + lx1 * A_LOAD(p, y1 * g.w + x1);
    O_STORE(out, i, TO_O(ly0 * top + ly1 * bottom));
  }
}

// nearest_idx of UpSample.h: the identity at equal sizes, a shift at twice the size, else
// floor(dst * scale) clamped to the input.
inline long nearest_source(long dst, long in, long out, float scale) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  return min((long)floor((float)dst * scale), in - 1);
}

kernel void upsample_nearest(const UpsampleGeometry g, global const A_S* in_base, const long in_at,
                             global O_S* out_base, const long out_at) {
  global const A_S* in = in_base + in_at;
  global O_S* out = out_base + out_at;
  FOR_EACH_INDEX(i, g.planes * g.oh * g.ow) {
    const long ox = i % g.ow, oy = (i / g.ow) % g.oh, plane = i / (g.ow * g.oh);
    const long y = nearest_source(oy, g.h, g.oh, g.scale_h), x = nearest_source(ox, g.w, g.ow, g.scale_w);
    O_STORE(out, i, TO_O(A_LOAD(in + plane * g.h * g.w, y * g.w + x)));
  }
}

// The gradient of upsample_nearest2d: each input pixel sums the output pixels that read it. Those
// form one run of rows and one of columns (nearest_source is monotonic), found by scanning the
// output indices whose source can be this pixel; a gather, so the sums are deterministic.
kernel void upsample_nearest_backward(const UpsampleGeometry g, global const A_S* grad_out_base, const long grad_out_at,
                                      global O_S* grad_in_base, const long grad_in_at) {
  global const A_S* grad_out = grad_out_base + grad_out_at;
  global O_S* grad_in = grad_in_base + grad_in_at;
  FOR_EACH_INDEX(i, g.planes * g.h * g.w) {
    const long x = i % g.w, y = (i / g.w) % g.h, plane = i / (g.w * g.h);
    // The first output row/column reading y/x: sources are floor(dst * scale) <= y, so dst starts at
    // or after floor(y / scale) - 1; scan from there.
    long oy0 = g.oh * y / g.h, ox0 = g.ow * x / g.w;
    while (oy0 > 0 && nearest_source(oy0 - 1, g.h, g.oh, g.scale_h) >= y) --oy0;
    while (ox0 > 0 && nearest_source(ox0 - 1, g.w, g.ow, g.scale_w) >= x) --ox0;
    while (oy0 < g.oh && nearest_source(oy0, g.h, g.oh, g.scale_h) < y) ++oy0;
    while (ox0 < g.ow && nearest_source(ox0, g.w, g.ow, g.scale_w) < x) ++ox0;
    float s = 0.0f;
    global const A_S* p = grad_out + plane * g.oh * g.ow;
    for (long oy = oy0; oy < g.oh && nearest_source(oy, g.h, g.oh, g.scale_h) == y; ++oy) {
      for (long ox = ox0; ox < g.ow && nearest_source(ox, g.w, g.ow, g.scale_w) == x; ++ox) {
        s += A_LOAD(p, oy * g.ow + ox);
      }
    }
    O_STORE(grad_in, i, TO_O(s));
  }
}

// The two source rows (or columns) of output index dst in bilinear interpolation and their weights,
// as upsample_bilinear computes them.
inline void bilinear_taps(float scale, long dst, long in, int align_corners, long* i0, long* i1, float* l0,
                          float* l1) {
  const float s = linear_source(scale, dst, align_corners);
  *i0 = (long)s;
  *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
  *l1 = s - (float)*i0;
  *l0 = 1.0f - *l1;
}

// The weight with which output index dst reads source index src (both taps when they coincide, at
// the last row, as the CPU's scatter adds both).
inline float bilinear_weight(float scale, long dst, long in, int align_corners, long src) {
  long i0, i1;
  float l0, l1;
  bilinear_taps(scale, dst, in, align_corners, &i0, &i1, &l0, &l1);
  return (i0 == src ? l0 : 0.0f) + (i1 == src ? l1 : 0.0f);
}

// The first output index whose taps can reach source index src (taps only grow with dst).
inline long bilinear_first(float scale, long src, long in, long out, int align_corners) {
  long dst = max(0L, out * (src - 1) / in - 1);
  long i0, i1;
  float l0, l1;
  bilinear_taps(scale, dst, in, align_corners, &i0, &i1, &l0, &l1);
  while (dst > 0 && i1 >= src) {
    --dst;
    bilinear_taps(scale, dst, in, align_corners, &i0, &i1, &l0, &l1);
  }
  while (dst < out && i1 < src) {
    ++dst;
    if (dst < out) bilinear_taps(scale, dst, in, align_corners, &i0, &i1, &l0, &l1);
  }
  return dst;
}

inline long bilinear_first_row_tap(float scale, long dst, long in, int align_corners) {
  long i0, i1;
  float l0, l1;
  bilinear_taps(scale, dst, in, align_corners, &i0, &i1, &l0, &l1);
  return i0;
}

// The gradient of upsample_bilinear2d as a gather: each input pixel sums, over the output pixels
// whose taps reach it (one run of rows, one of columns), the output gradient times the product of
// the two weights. Deterministic, unlike a scatter with atomics.
kernel void upsample_bilinear_backward(const UpsampleGeometry g, global const A_S* grad_out_base,
                                       const long grad_out_at, global O_S* grad_in_base, const long grad_in_at) {
  global const A_S* grad_out = grad_out_base + grad_out_at;
  global O_S* grad_in = grad_in_base + grad_in_at;
  FOR_EACH_INDEX(i, g.planes * g.h * g.w) {
    const long x = i % g.w, y = (i / g.w) % g.h, plane = i / (g.w * g.h);
    const long oy0 = bilinear_first(g.scale_h, y, g.h, g.oh, g.align_corners);
    const long ox0 = bilinear_first(g.scale_w, x, g.w, g.ow, g.align_corners);
    global const A_S* p = grad_out + plane * g.oh * g.ow;
    float s = 0.0f;
    for (long oy = oy0; oy < g.oh && bilinear_first_row_tap(g.scale_h, oy, g.h, g.align_corners) <= y; ++oy) {
      const float wy = bilinear_weight(g.scale_h, oy, g.h, g.align_corners, y);
      for (long ox = ox0; ox < g.ow && bilinear_first_row_tap(g.scale_w, ox, g.w, g.align_corners) <= x; ++ox) {
        s += wy * bilinear_weight(g.scale_w, ox, g.w, g.align_corners, x) * A_LOAD(p, oy * g.ow + ox);
      }
    }
    O_STORE(grad_in, i, TO_O(s));
  }
}
