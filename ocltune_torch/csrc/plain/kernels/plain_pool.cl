// Pooling windows ocltune's pool family has no kind for (csrc/ops/pool_ops.cpp): max pooling with
// dilation, average pooling with divisor_override, and adaptive average and max pooling to sizes whose
// windows differ (start = floor(i * in / out), end = ceil((i + 1) * in / out), as PyTorch).
//
// Slots: A (the input), O (the output), both the pool's float dtype; values are computed in float, as
// PyTorch's CPU kernels do for 16-bit inputs. Tensors are contiguous [planes, H, W] (planes = N * C)
// and come with their element offsets (`_at`). One work item per element of what is written; the
// windows follow PyTorch's CPU kernels (aten/src/ATen/native/cpu/*Pool*Kernel.cpp) step for step, so
// ties, NaN and the index of the maximum are the CPU's. Max pooling's backward ops are a scatter_add
// of the indices on the host, not a kernel here.

// The geometry of one pool: input and output planes, window, stride, padding, dilation.
typedef struct {
  long planes, h, w, oh, ow;
  long kh, kw, sh, sw, ph, pw, dh, dw;
} PoolGeometry;

// Every kernel takes the same arguments (the host launches them alike); the averages read
// count_include_pad and divisor (!= 0: divisor_override), the maxima write indices, the rest ignore
// them. `in` is the forward input or the output's gradient, `out` the output or the input's gradient.
#define POOL_ARGS                                                                                           \
  const PoolGeometry g, const int count_include_pad, const long divisor, global const A_S *in_base,          \
      const long in_at, global O_S *out_base, const long out_at, global long *indices_base, const long indices_at
#define POOL_POINTERS                     \
  global const A_S* in = in_base + in_at; \
  global O_S* out = out_base + out_at;    \
  global long* indices = indices_base + indices_at

// The first maximum (NaN wins) of rows y0..y1 and columns x0..x1 (exclusive, in steps dy, dx) of a
// plane of width w, and its index within the plane: max_pool's and adaptive_max_pool's window.
inline float window_max(global const A_S* p, long w, long y0, long y1, long dy, long x0, long x1, long dx,
                        long* best) {
  *best = y0 * w + x0;
  float m = -INFINITY;
  for (long y = y0; y < y1; y += dy) {
    for (long x = x0; x < x1; x += dx) {
      const float v = A_LOAD(p, y * w + x);
      if (v > m || isnan(v)) {
        m = v;
        *best = y * w + x;
      }
    }
  }
  return m;
}

// max_pool2d_with_indices: the first maximum of the window (NaN wins), its index within the plane.
kernel void max_pool(POOL_ARGS) {
  POOL_POINTERS;
  FOR_EACH_INDEX(i, g.planes * g.oh * g.ow) {
    const long ox = i % g.ow, oy = (i / g.ow) % g.oh, plane = i / (g.ow * g.oh);
    long y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const long y1 = min(y0 + (g.kh - 1) * g.dh + 1, g.h), x1 = min(x0 + (g.kw - 1) * g.dw + 1, g.w);
    while (y0 < 0) y0 += g.dh;
    while (x0 < 0) x0 += g.dw;
    long best;
    O_STORE(out, i, TO_O(window_max(in + plane * g.h * g.w, g.w, y0, y1, g.dh, x0, x1, g.dw, &best)));
    indices[i] = best;
  }
}

// avg_pool2d's window at output (oy, ox): the clipped bounds and what the sum is divided by
// (divisor != 0: divisor_override, which PyTorch takes of any sign but 0; else the window with or
// without padding).
inline float avg_window(const PoolGeometry* g, long oy, long ox, int count_include_pad, long divisor, long* y0,
                        long* y1, long* x0, long* x1) {
  long ys = oy * g->sh - g->ph, xs = ox * g->sw - g->pw;
  long ye = min(ys + g->kh, g->h + g->ph), xe = min(xs + g->kw, g->w + g->pw);
  const long padded = (ye - ys) * (xe - xs);
  ys = max(ys, 0L);
  xs = max(xs, 0L);
  ye = min(ye, g->h);
  xe = min(xe, g->w);
  *y0 = ys;
  *y1 = ye;
  *x0 = xs;
  *x1 = xe;
  if (divisor != 0) return (float)divisor;
  return (float)(count_include_pad ? padded : (ye - ys) * (xe - xs));
}

kernel void avg_pool(POOL_ARGS) {
  POOL_POINTERS;
  FOR_EACH_INDEX(i, g.planes * g.oh * g.ow) {
    const long ox = i % g.ow, oy = (i / g.ow) % g.oh, plane = i / (g.ow * g.oh);
    long y0, y1, x0, x1;
    const float d = avg_window(&g, oy, ox, count_include_pad, divisor, &y0, &y1, &x0, &x1);
    global const A_S* p = in + plane * g.h * g.w;
    float s = 0.0f;
    for (long y = y0; y < y1; ++y) {
      for (long x = x0; x < x1; ++x) s += A_LOAD(p, y * g.w + x);
    }
    O_STORE(out, i, TO_O(y0 >= y1 || x0 >= x1 ? 0.0f : s / d));
  }
}

// avg_pool2d_backward, one work item per input element: the outputs whose windows hold it, each
// gradient divided by its window's divisor.
kernel void avg_pool_backward(POOL_ARGS) {
  POOL_POINTERS;
  FOR_EACH_INDEX(i, g.planes * g.h * g.w) {
    const long x = i % g.w, y = (i / g.w) % g.h, plane = i / (g.w * g.h);
    const long oy0 = y + g.ph < g.kh ? 0 : (y + g.ph - g.kh) / g.sh + 1, oy1 = min((y + g.ph) / g.sh, g.oh - 1);
    const long ox0 = x + g.pw < g.kw ? 0 : (x + g.pw - g.kw) / g.sw + 1, ox1 = min((x + g.pw) / g.sw, g.ow - 1);
    global const A_S* p = in + plane * g.oh * g.ow;
    float s = 0.0f;
    for (long oy = oy0; oy <= oy1; ++oy) {
      for (long ox = ox0; ox <= ox1; ++ox) {
        long y0, y1, x0, x1;
        const float d = avg_window(&g, oy, ox, count_include_pad, divisor, &y0, &y1, &x0, &x1);
        if (y >= y0 && y < y1 && x >= x0 && x < x1) s += A_LOAD(p, oy * g.ow + ox) / d;
      }
    }
    O_STORE(out, i, TO_O(s));
  }
}

// Adaptive windows: output o of `out` covers [start, end) of `in`.
inline long adaptive_start(long o, long out, long in) { return (o * in) / out; }
inline long adaptive_end(long o, long out, long in) { return ((o + 1) * in + out - 1) / out; }

kernel void adaptive_avg_pool(POOL_ARGS) {
  POOL_POINTERS;
  FOR_EACH_INDEX(i, g.planes * g.oh * g.ow) {
    const long ox = i % g.ow, oy = (i / g.ow) % g.oh, plane = i / (g.ow * g.oh);
    const long y0 = adaptive_start(oy, g.oh, g.h), y1 = adaptive_end(oy, g.oh, g.h);
    const long x0 = adaptive_start(ox, g.ow, g.w), x1 = adaptive_end(ox, g.ow, g.w);
    global const A_S* p = in + plane * g.h * g.w;
    float s = 0.0f;
    for (long y = y0; y < y1; ++y) {
      for (long x = x0; x < x1; ++x) s += A_LOAD(p, y * g.w + x);
    }
    O_STORE(out, i, TO_O(s / (float)((y1 - y0) * (x1 - x0))));
  }
}

// One work item per input element: the outputs whose windows hold row y are exactly
// [floor(y * oh / h), ceil((y + 1) * oh / h)), the same for columns; each gradient is divided by its
// window's height and width, as the CPU divides them.
kernel void adaptive_avg_pool_backward(POOL_ARGS) {
  POOL_POINTERS;
  FOR_EACH_INDEX(i, g.planes * g.h * g.w) {
    const long x = i % g.w, y = (i / g.w) % g.h, plane = i / (g.w * g.h);
    const long oy0 = adaptive_start(y, g.h, g.oh), oy1 = adaptive_end(y, g.h, g.oh);
    const long ox0 = adaptive_start(x, g.w, g.ow), ox1 = adaptive_end(x, g.w, g.ow);
    global const A_S* p = in + plane * g.oh * g.ow;
    float s = 0.0f;
    for (long oy = oy0; oy < oy1; ++oy) {
      const float kh = (float)(adaptive_end(oy, g.oh, g.h) - adaptive_start(oy, g.oh, g.h));
      for (long ox = ox0; ox < ox1; ++ox) {
        const float kw = (float)(adaptive_end(ox, g.ow, g.w) - adaptive_start(ox, g.ow, g.w));
        s += A_LOAD(p, oy * g.ow + ox) / kh / kw;
      }
    }
    O_STORE(out, i, TO_O(s));
  }
}

// adaptive_max_pool2d: the first maximum of the window (NaN wins), its index within the plane.
kernel void adaptive_max_pool(POOL_ARGS) {
  POOL_POINTERS;
  FOR_EACH_INDEX(i, g.planes * g.oh * g.ow) {
    const long ox = i % g.ow, oy = (i / g.ow) % g.oh, plane = i / (g.ow * g.oh);
    const long y0 = adaptive_start(oy, g.oh, g.h), y1 = adaptive_end(oy, g.oh, g.h);
    const long x0 = adaptive_start(ox, g.ow, g.w), x1 = adaptive_end(ox, g.ow, g.w);
    long best;
    O_STORE(out, i, TO_O(window_max(in + plane * g.h * g.w, g.w, y0, y1, 1, x0, x1, 1, &best)));
    indices[i] = best;
  }
}
