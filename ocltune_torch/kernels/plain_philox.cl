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
    const uint hi0 = mul_hi(PHILOX_M0, c.x), lo0 = PHILOX_M0 * c.x;
    const uint hi1 = mul_hi(PHILOX_M1, c.z), lo1 = PHILOX_M1 * c.z;
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k.x += PHILOX_W0;
    k.y += PHILOX_W1;
  }
  return c;
}

// [0, 1) and (0, 1] with 24 random bits (every value exact in fp32).
inline float uniform01(uint x) { return (float)(x >> 8) * 0x1.0p-24f; }
inline float uniform01_open_low(uint x) { return (float)((x >> 8) + 1u) * 0x1.0p-24f; }
