// The second pass of the GEMM-based weight gradients and of the direct one's split: the first
// wrote one partial gradient plane per image (or chunk) into a workspace; this sums them into dw.
// One work-item per weight, images in order, so the result does not depend on the launch geometry.
// The sum is fp32 throughout: `total` (fp32) carries it from one chunk of images to the next, and
// the last chunk rounds it to the storage type once (for fp32 storage total is dw itself).
// Appended to storage.cl (STORAGE, LOAD, STORE); its own program otherwise: conv2d_common.cl is
// hashed into every conv2d row.

#ifndef PARTIAL_DTYPE
#define PARTIAL_DTYPE 0  // the partials' type: 0 fp32 (a workspace of the direct kernel), else DTYPE's
#endif
#if PARTIAL_DTYPE == 0
#define PARTIAL float
#define LOAD_PARTIAL(p, i) ((p)[i])
#else
#define PARTIAL STORAGE  // a 16-bit GEMM's C
#define LOAD_PARTIAL(p, i) LOAD(p, i)
#endif

// accumulate: add to what an earlier chunk left in total; last: store into dw (else into total).
kernel void conv2d_sum_images(const int images, const long plane, const global PARTIAL* partial, global float* total,
                              const long total_offset, global STORAGE* dw, const long dw_offset, const int accumulate,
                              const int last) {
  const long i = get_global_id(0);
  if (i >= plane) return;
  float sum = accumulate ? total[total_offset + i] : 0.0f;
  for (int n = 0; n < images; ++n) sum += LOAD_PARTIAL(partial, (long)n * plane + i);
  if (last) {
    STORE(sum, dw, dw_offset + i);
  } else {
    total[total_offset + i] = sum;
  }
}
