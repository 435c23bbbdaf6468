// Device ceilings: peak fp32 FMA rate from independent FMA chains (no memory traffic).

#ifndef CHAINS
#define CHAINS 8  // independent float4 accumulators per work-item: enough to hide FMA latency
#endif

kernel void fma_peak(global float* out, const float a, const float b, const int iterations) {
  const float4 va = (float4)(a), vb = (float4)(b);
  float4 acc[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) acc[c] = (float4)((float)get_global_id(0), (float)c, 1.0f, 2.0f) * 1e-3f;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) acc[c] = fma(acc[c], va, vb);
  }
  float4 sum = (float4)(0.0f);
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) sum += acc[c];
  // Stored so the chains cannot be optimised away.
  out[get_global_id(0)] = sum.x + sum.y + sum.z + sum.w;
}
