// The second pass of the 1x1 algorithm's weight gradient: the batched GEMM wrote one K x C partial
// gradient per image into a workspace; this sums them into dw (overwriting, or adding to what an
// earlier chunk of images wrote). One work-item per weight, images in order, so the result does not
// depend on the launch geometry. Its own program: conv2d_common.cl is hashed into every conv2d row.
kernel void conv2d_sum_images(const int images, const long plane, const global float* partial, global float* dw,
                              const long dw_offset, const int accumulate) {
  const long i = get_global_id(0);
  if (i >= plane) return;
  float sum = accumulate ? dw[dw_offset + i] : 0.0f;
  for (int n = 0; n < images; ++n) sum += partial[(long)n * plane + i];
  dw[dw_offset + i] = sum;
}
