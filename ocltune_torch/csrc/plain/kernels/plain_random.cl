// Random numbers on the device: Philox4x32-10 (Salmon et al., SC'11), counter-based, so element e of
// a call is a pure function of (seed, counter): reproducible for a seed, independent of the grid.
//
// A call uses counters base .. base + ceil(n / PER_CALL) - 1 (the generator's offset / 4: it advances
// by 4 numbers per counter). Slots: O (the output), A (an input: bernoulli's p, dropout's x).

// philox() and uniform01() come from plain_philox.cl, which the host puts before this file.

// Four elements per counter: r[j] is element 4 g + j's number.
#define FOR_EACH_4(sh, seed, base)                                     \
  FOR_EACH_INDEX(g, ((sh).numel + 3) / 4) {                            \
    const uint4 r4 = philox(seed, (base) + (ulong)g);                  \
    const uint r[4] = {r4.x, r4.y, r4.z, r4.w};                        \
    for (int j = 0; j < 4; ++j) {                                      \
      const long e = 4 * g + j;                                        \
      if (e >= (sh).numel) break;                                      \
      long c[MAX_DIMS];                                                \
      coords_of(&(sh), e, c);                                          \
      const long o_at = offset_of(&os, c, (sh).ndim);
#define FOR_EACH_4_END \
  }                    \
  }

kernel void uniform(const Shape sh, global O_S* out, const Strides os, const ulong seed, const ulong base,
                    const float from, const float to) {
  FOR_EACH_4(sh, seed, base)
  const float v = from + (to - from) * uniform01(r[j]);
  O_STORE(out, o_at, TO_O(v));
  // Rounding to the output type may reach `to`, which [from, to) excludes.
  if ((float)O_LOAD(out, o_at) >= to && to > from) O_STORE(out, o_at, TO_O(from));
  FOR_EACH_4_END
}

// Box-Muller: numbers 0 and 1 give elements 4 g and 4 g + 1, numbers 2 and 3 the other two.
kernel void normal(const Shape sh, global O_S* out, const Strides os, const ulong seed, const ulong base,
                   const float mean, const float std) {
  FOR_EACH_4(sh, seed, base)
  const int pair = j & ~1;
  const float radius = sqrt(-2.0f * log(uniform01_open_low(r[pair])));
  const float angle = 6.28318530717958647692f * uniform01(r[pair + 1]);
  const float z = (j & 1) ? radius * sin(angle) : radius * cos(angle);
  O_STORE(out, o_at, TO_O(mean + std * z));
  FOR_EACH_4_END
}

kernel void bernoulli_scalar(const Shape sh, global O_S* out, const Strides os, const ulong seed, const ulong base,
                             const float p) {
  FOR_EACH_4(sh, seed, base)
  O_STORE(out, o_at, TO_O(uniform01(r[j]) < p ? 1 : 0));
  FOR_EACH_4_END
}

// p[c] per element (A, any float type), already checked to lie in [0, 1].
kernel void bernoulli_tensor(const Shape sh, global O_S* out, const Strides os, const ulong seed, const ulong base,
                             global const A_S* p, const Strides ps) {
  FOR_EACH_4(sh, seed, base)
  O_STORE(out, o_at, TO_O(uniform01(r[j]) < (float)A_LOAD(p, offset_of(&ps, c, sh.ndim)) ? 1 : 0));
  FOR_EACH_4_END
}

// from + (a 64-bit number mod range), range >= 1: numbers 2 j' and 2 j' + 1 per element, so two
// elements per counter; the host sizes the call for that (`sh` counts elements, `half` its counters).
kernel void random_range(const Shape sh, global O_S* out, const Strides os, const ulong seed, const ulong base,
                         const long from, const ulong range) {
  FOR_EACH_INDEX(g, (sh.numel + 1) / 2) {
    const uint4 r4 = philox(seed, base + (ulong)g);
    for (int j = 0; j < 2; ++j) {
      const long e = 2 * g + j;
      if (e >= sh.numel) break;
      long c[MAX_DIMS];
      coords_of(&sh, e, c);
      const ulong x = j == 0 ? (((ulong)r4.y << 32) | r4.x) : (((ulong)r4.w << 32) | r4.z);
      O_STORE(out, offset_of(&os, c, sh.ndim), TO_O(from + (long)(x % range)));
    }
  }
}

// native_dropout: an element is kept with probability keep (mask 1, x * scale), else 0.
kernel void dropout(const Shape sh, global O_S* out, const Strides os, const ulong seed, const ulong base,
                    global const A_S* x, const Strides xs, global uchar* mask, const Strides ms, const float keep,
                    const float scale) {
  FOR_EACH_4(sh, seed, base)
  const int kept = uniform01(r[j]) < keep;
  mask[offset_of(&ms, c, sh.ndim)] = (uchar)kept;
  O_STORE(out, o_at, TO_O(kept ? (float)A_LOAD(x, offset_of(&xs, c, sh.ndim)) * scale : 0.0f));
  FOR_EACH_4_END
}

// Quad g of dense operands: out = kept ? x * scale : 0 for elements 4g .. 4g + 3 (kept: non-zero
// lanes), as one vector load and store where DROPOUT_FLOAT4 (fp32 in and out).
inline void scale_kept_quad(global O_S* out, global const A_S* x, const long g, const int4 kept, const float scale) {
#ifdef DROPOUT_FLOAT4
  vstore4(select((float4)(0.0f), vload4(g, x) * scale, kept != 0), g, out);
#else
  const int k[4] = {kept.x, kept.y, kept.z, kept.w};
  for (int j = 0; j < 4; ++j) O_STORE(out, 4 * g + j, TO_O(k[j] ? (float)A_LOAD(x, 4 * g + j) * scale : 0.0f));
#endif
}

// The same where out, x and mask are dense in one order (the host merged them to one dim of stride
// 1): quad g is elements 4g .. 4g + 3 of each, loaded and stored as vectors where DROPOUT_FLOAT4
// (fp32 in and out), with no index arithmetic; the general kernel's strided offsets and byte-wise
// mask stores ran it at a third of the copy bandwidth on the H200 (112 us for 8x512x3072 floats).
kernel void dropout_dense(const long numel, global O_S* out_base, const long out_at, global const A_S* x_base,
                          const long x_at, global uchar* mask_base, const long mask_at, const ulong seed,
                          const ulong base, const float keep, const float scale) {
  global O_S* out = out_base + out_at;
  global const A_S* x = x_base + x_at;
  global uchar* mask = mask_base + mask_at;
  FOR_EACH_INDEX(g, (numel + 3) / 4) {
    const uint4 r4 = philox(seed, base + (ulong)g);
    const int4 kept = (int4)(uniform01(r4.x) < keep, uniform01(r4.y) < keep, uniform01(r4.z) < keep,
                             uniform01(r4.w) < keep);
    if (4 * g + 3 < numel) {
      vstore4(convert_uchar4(kept), g, mask);
      scale_kept_quad(out, x, g, kept, scale);
    } else {
      const int k[4] = {kept.x, kept.y, kept.z, kept.w};
      for (long e = 4 * g; e < numel; ++e) {
        mask[e] = (uchar)k[e - 4 * g];
        O_STORE(out, e, TO_O(k[e - 4 * g] ? (float)A_LOAD(x, e) * scale : 0.0f));
      }
    }
  }
}

// native_dropout_backward where grad, mask and out are dense in one order: out = mask ? grad * scale
// : 0, four elements per work item as in dropout_dense (the plain elementwise masked_scale's strided
// offsets took 17 us for 8x512x768 floats on the H200, CUDA 10).
kernel void dropout_backward_dense(const long numel, global O_S* out_base, const long out_at,
                                   global const A_S* grad_base, const long grad_at, global const uchar* mask_base,
                                   const long mask_at, const float scale) {
  global O_S* out = out_base + out_at;
  global const A_S* grad = grad_base + grad_at;
  global const uchar* mask = mask_base + mask_at;
  FOR_EACH_INDEX(g, (numel + 3) / 4) {
    if (4 * g + 3 < numel) {
      scale_kept_quad(out, grad, g, convert_int4(vload4(g, mask)), scale);
    } else {
      for (long e = 4 * g; e < numel; ++e) O_STORE(out, e, TO_O(mask[e] ? (float)A_LOAD(grad, e) * scale : 0.0f));
    }
  }
}
