// Storage types for memory-bound kernels: fp32, or fp16/bf16 storage with fp32 arithmetic.
// Include before a kernel file (ProgramSource files = {"storage.cl", "<op>.cl"}). Core OpenCL
// only: vload_half/vstore_half need no cl_khr_fp16; bf16 is the top half of an fp32 bit pattern.

#ifndef DTYPE
#define DTYPE 0  // storage type: 0 fp32, 1 fp16, 2 bf16
#endif

#if DTYPE == 0
#define STORAGE float
#elif DTYPE == 1
#define STORAGE half
#else
#define STORAGE ushort
#endif

// bf16 -> fp32 is exact; fp32 -> bf16 rounds to nearest even and keeps NaN a (quiet) NaN.
static inline float bf16_load(const ushort b) { return as_float((uint)b << 16); }
static inline ushort bf16_round(const float f) {
  const uint x = as_uint(f);
  if (f != f) return (ushort)((x >> 16) | 0x40u);  // not isnan(f): 10x slower on PoCL
  return (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// LOAD(p, i) -> float and STORE(v, p, i) on element i of a STORAGE pointer.
#if DTYPE == 0
#define LOAD(p, i) ((p)[i])
#define STORE(v, p, i) ((p)[i] = (v))
#elif DTYPE == 1
#define LOAD(p, i) vload_half((i), (p))
#define STORE(v, p, i) vstore_half_rte((v), (i), (p))
#else
#define LOAD(p, i) bf16_load((p)[i])
#define STORE(v, p, i) ((p)[i] = bf16_round(v))
#endif

// Vector forms on element i*4 (i counts float4s): LOAD4 -> float4, STORE4(float4, p, i).
#if DTYPE == 0
#define LOAD4(p, i) vload4((i), (p))
#define STORE4(v, p, i) vstore4((v), (i), (p))
#elif DTYPE == 1
#define LOAD4(p, i) vload_half4((i), (p))
#define STORE4(v, p, i) vstore_half4_rte((v), (i), (p))
#else
static inline float4 bf16_load4(const global ushort* p, const size_t i) {
  const uint4 u = convert_uint4(vload4(i, p)) << 16;
  return as_float4(u);
}
static inline void bf16_store4(const float4 v, const size_t i, global ushort* p) {
  vstore4((ushort4)(bf16_round(v.x), bf16_round(v.y), bf16_round(v.z), bf16_round(v.w)), i, p);
}
#define LOAD4(p, i) bf16_load4((p), (i))
#define STORE4(v, p, i) bf16_store4((v), (i), (p))
#endif
