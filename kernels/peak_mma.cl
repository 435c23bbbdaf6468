// Device ceilings: peak rate of mma.sync.m16n8k8 in TF32 (appended to mma_tf32.cl; NVIDIA,
// compute capability >= 8.0 only). Independent accumulator chains per warp, operands in registers,
// no memory traffic: the most the tensor-core kernels could reach through mma.sync.

#ifndef MMA_CHAINS
#define MMA_CHAINS 8  // independent m16n8 accumulators per warp: enough to hide the mma latency
#endif

kernel void mma_tf32_peak(global float* out, const float seed, const int iterations) {
  const uint lane = get_local_id(0) % 32;
  const uint a0 = to_tf32(seed + lane), a1 = to_tf32(seed - lane), a2 = to_tf32(seed * 0.5f), a3 = to_tf32(seed * 0.25f);
  const uint b0 = to_tf32(1e-3f * seed), b1 = to_tf32(-1e-3f * seed);
  float acc[MMA_CHAINS][4];
#pragma unroll
  for (int c = 0; c < MMA_CHAINS; ++c) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[c][i] = (float)(c + i) * 1e-3f;
  }
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < MMA_CHAINS; ++c) mma_tf32(acc[c], a0, a1, a2, a3, b0, b1);
  }
  float total = 0.0f;
#pragma unroll
  for (int c = 0; c < MMA_CHAINS; ++c) total += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[get_global_id(0)] = total;  // stored so the chains cannot be optimised away
}
