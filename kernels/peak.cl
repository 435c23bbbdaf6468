// Device ceilings: peak fp32 FMA rate from independent FMA chains (no memory traffic).

#ifndef CHAINS
#define CHAINS 8  // independent accumulators per work-item: enough to hide FMA latency
#endif
#ifndef VW
#define VW 4  // vector width of each chain: CPUs reach their peak only with their SIMD width
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatV CAT(float, VW)

kernel void fma_peak(global float* out, const float a, const float b, const int iterations) {
  const floatV va = (floatV)(a), vb = (floatV)(b);
  floatV acc[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) acc[c] = (floatV)((float)get_global_id(0) + (float)c) * 1e-3f;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) acc[c] = fma(acc[c], va, vb);
  }
  floatV sum = (floatV)(0.0f);
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) sum += acc[c];
  // Stored so the chains cannot be optimised away.
  float total = 0.0f;
#pragma unroll
  for (int i = 0; i < VW; ++i) total += ((float*)&sum)[i];
  out[get_global_id(0)] = total;
}
