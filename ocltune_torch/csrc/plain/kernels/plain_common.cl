// What every plain kernel of ocltune_torch shares: the layout structs, element offsets, bf16.
//
// The host prepends, per type slot X (A, B, C: inputs, O: output, K: the type values are computed
// in, I: indices), X_S (storage type), X_V (value type), X_LOAD(p, i), X_STORE(p, i, v), TO_X(v),
// X_ROUND(v) (a value of type K rounded to X's precision, still of type K), X_FLOAT and X_BOOL
// (csrc/plain/plain_kernels.cpp).

#define MAX_DIMS 8

// The shape a kernel walks, in row-major element order, and an operand's strides against it (in
// elements, any sign) with the element offset of its first element. Mirrors csrc/plain/plain_kernels.h.
typedef struct {
  long ndim;
  long numel;
  long sizes[MAX_DIMS];
} Shape;

typedef struct {
  long offset;
  long strides[MAX_DIMS];
} Strides;

// Coordinates of element i of shape s (row-major).
inline void coords_of(const Shape* s, long i, long* c) {
  for (int d = (int)s->ndim - 1; d > 0; --d) {
    const long q = i / s->sizes[d];
    c[d] = i - q * s->sizes[d];
    i = q;
  }
  c[0] = i;
}

inline long offset_of(const Strides* st, const long* c, long ndim) {
  long o = st->offset;
  for (int d = 0; d < (int)ndim; ++d) o += c[d] * st->strides[d];
  return o;
}

// Every element index once, whatever the grid (the host caps the number of work items). On a GPU
// every global-size-th index from the work item's id, so that a warp reads consecutive elements; on a
// CPU (PLAIN_CPU, set by the host) one contiguous block per work item. PoCL runs a work-group's items
// one after another around each item's whole loop, so a strided loop is scalar code jumping through
// memory (AdamW's _foreach_addcdiv_ over 14M floats took 135 ms, a tenth of the copy bandwidth),
// while a unit-stride loop streams and the compiler vectorises it.
#ifdef PLAIN_CPU
#define FOR_EACH_INDEX(i, n)                                                                              \
  for (long i = get_global_id(0) * (((long)(n) + (long)get_global_size(0) - 1) / (long)get_global_size(0)), \
            i##_end_ = min((long)(n), i + (((long)(n) + (long)get_global_size(0) - 1) / (long)get_global_size(0))); \
       i < i##_end_; ++i)
#else
#define FOR_EACH_INDEX(i, n) for (long i = get_global_id(0); i < (n); i += get_global_size(0))
#endif

inline float bf16_to_float(ushort b) { return as_float(((uint)b) << 16); }

// Round to nearest even, as c10::BFloat16 does; NaN stays a (quiet) NaN.
inline ushort float_to_bf16(float f) {
  const uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)0x7fc0;
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// f rounded to fp16 (nearest even) and back, and to bf16 and back: X_ROUND of the 16-bit types.
inline float round_to_half(float f) {
  ushort h;
  vstore_half_rte(f, 0, (private half*)&h);
  return vload_half(0, (const private half*)&h);
}
inline float round_to_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }
