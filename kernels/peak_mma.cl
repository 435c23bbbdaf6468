// Device ceilings: peak rate of mma.sync in the input type of storage.cl's DTYPE (m16n8k8 TF32,
// m16n8k16 fp16 or bf16; appended to storage.cl and mma_packed.cl, NVIDIA compute capability >= 8.0
// only). Independent accumulator chains per warp, operands in registers, no memory traffic: the
// most the tensor-core kernels could reach through mma.sync.

#ifndef MMA_CHAINS
#define MMA_CHAINS 8  // independent m16n8 accumulators per warp: enough to hide the mma latency
#endif

kernel void mma_peak(global float* out, const float seed, const int iterations) {
  const uint lane = get_local_id(0) % 32;
  // Finite operands in every type: TF32 bit patterns (low 13 bits clear), which read as two
  // finite 16-bit values of moderate size too. The values do not matter, only that they are data.
  const uint a[4] = {as_uint(seed + lane) & 0xFFFFE000u, as_uint(seed - lane) & 0xFFFFE000u,
                     as_uint(seed * 0.5f) & 0xFFFFE000u, as_uint(seed * 0.25f) & 0xFFFFE000u};
  const uint b0 = as_uint(1e-3f * seed) & 0xFFFFE000u, b1 = as_uint(-1e-3f * seed) & 0xFFFFE000u;
  float acc[MMA_CHAINS][4];
#pragma unroll
  for (int c = 0; c < MMA_CHAINS; ++c) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[c][i] = (float)(c + i) * 1e-3f;
  }
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < MMA_CHAINS; ++c) mma_packed(acc[c], a, b0, b1);
  }
  float total = 0.0f;
#pragma unroll
  for (int c = 0; c < MMA_CHAINS; ++c) total += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[get_global_id(0)] = total;  // stored so the chains cannot be optimised away
}
