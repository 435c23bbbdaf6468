// Philox4x32-10 (Salmon et al., SC'11), the counter-based generator of the backend's random numbers:
// number j of counter c is a pure function of (seed, c), so a draw is reproducible for a seed and
// independent of the grid. Shared by plain_random.cl (uniform_, dropout, ...) and plain_attention.cl
// (the dropout of attention weights, drawn as native_dropout draws it); the host puts this file
// before theirs (plain_program with several files).

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

inline uint4 philox(const ulong seed, const ulong counter) {
  uint4 c = (uint4)((uint)counter, (uint)(counter >> 32), 0u, 0u);
  uint2 k = (uint2)((uint)seed, (uint)(seed >> 32));
  for (int r = 0; r < 10; ++r) {
    // The 64-bit products' halves, not mul_hi, which PoCL compiles to slower code (native_dropout of 1M
    // floats on the 2-core CI machine 13.1 -> 5.1 ms); the same bits, by definition.
    const ulong p0 = (ulong)PHILOX_M0 * c.x, p1 = (ulong)PHILOX_M1 * c.z;
    const uint hi0 = (uint)(p0 >> 32), lo0 = (uint)p0;
    const uint hi1 = (uint)(p1 >> 32), lo1 = (uint)p1;
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k.x += PHILOX_W0;
    k.y += PHILOX_W1;
  }
  return c;
}

// [0, 1) and (0, 1] with 24 random bits (every value exact in fp32).
inline float uniform01(uint x) { return (float)(x >> 8) * 0x1.0p-24f; }
inline float uniform01_open_low(uint x) { return (float)((x >> 8) + 1u) * 0x1.0p-24f; }
