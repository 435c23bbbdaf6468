// Indexing kernels: gather (index_select, embedding, gather), scatter (scatter, scatter_add,
// scatter_reduce, index_add, embedding_dense_backward), and advanced indexing (index, index_put with
// accumulate).
//
// Slots: A (the source of values), O (the output), I (indices: long or int). The indexed tensor's
// strides come with 0 along the indexed dim and its own stride there separately, so the host may merge
// dims freely. An index out of range sets error[0] = 1 and error[1] = the index; nothing is written
// for it, and the host raises after the kernel. A buffer without Strides comes with its element offset
// (`_at`): tensors live inside the allocator's segments.
//
// ACCUMULATE (defined by the host, with O float, int or long) selects the atomic update of O:
// 1 float (a compare-and-swap loop: the order of updates varies), 2 int, 3 long. REDUCE (default 0)
// is what it does to the old value v0 with the new one v: 0 sum (int and long: atomic_add), 1
// product, 2 amax, 3 amin (scatter_reduce; compare-and-swap loops in every type). amax and amin keep
// a NaN of either side, as PyTorch's CPU kernels do (isnan(v) ? v : std::max(v0, v)).

#ifndef REDUCE
#define REDUCE 0
#endif

#if ACCUMULATE == 3
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#ifdef ACCUMULATE
inline O_V combine(O_V v0, O_V v) {
#if REDUCE == 0
  return v0 + v;
#elif REDUCE == 1
  return v0 * v;
#elif REDUCE == 2 && O_FLOAT
  return isnan(v) ? v : (v0 < v ? v : v0);
#elif REDUCE == 3 && O_FLOAT
  return isnan(v) ? v : (v < v0 ? v : v0);
#elif REDUCE == 2
  return v0 < v ? v : v0;
#else
  return v < v0 ? v : v0;
#endif
}

inline void accumulate(global O_S* p, long i, O_V v) {
#if ACCUMULATE == 1
  volatile global uint* a = (volatile global uint*)(p + i);
  uint old = *a, assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg(a, assumed, as_uint(combine(as_float(assumed), v)));
  } while (old != assumed);
#elif ACCUMULATE == 2 && REDUCE == 0
  atomic_add((volatile global int*)(p + i), v);
#elif ACCUMULATE == 2
  volatile global int* a = (volatile global int*)(p + i);
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomic_cmpxchg(a, assumed, combine(assumed, v));
  } while (old != assumed);
#elif REDUCE == 0
  atom_add((volatile global long*)(p + i), v);
#else
  volatile global long* a = (volatile global long*)(p + i);
  long old = *a, assumed;
  do {
    assumed = old;
    old = atom_cmpxchg(a, assumed, combine(assumed, v));
  } while (old != assumed);
#endif
}
#endif

inline void report(global long* error, long k) {
  error[1] = k;
  error[0] = 1;
}

// out[c] = a[c with c[dim] = index[c]]: `as` has stride 0 along dim, dim_stride is a's stride there.
kernel void gather(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as,
                   global const I_S* index, const Strides is, const long dim_stride, const long dim_size,
                   global long* error_base, const long error_at) {
  global long* error = error_base + error_at;
  FOR_EACH_INDEX(i, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, i, c);
    const long k = (long)index[offset_of(&is, c, sh.ndim)];
    if (k < 0 || k >= dim_size) {
      report(error, k);
      continue;
    }
    O_STORE(out, offset_of(&os, c, sh.ndim), TO_O(A_LOAD(a, offset_of(&as, c, sh.ndim) + k * dim_stride)));
  }
}

// out[c with c[dim] = index[c]] = a[c] (or value): `os` has stride 0 along dim. Rows whose index is
// `skip` are left out (embedding's padding_idx; -1 never matches).
kernel void scatter(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as,
                    global const I_S* index, const Strides is, const long dim_stride, const long dim_size,
                    global long* error_base, const long error_at, const long skip, const O_V value,
                    const int from_value) {
  global long* error = error_base + error_at;
  FOR_EACH_INDEX(i, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, i, c);
    const long k = (long)index[offset_of(&is, c, sh.ndim)];
    if (k < 0 || k >= dim_size) {
      report(error, k);
      continue;
    }
    if (k == skip) continue;
    const O_V v = from_value ? value : TO_O(A_LOAD(a, offset_of(&as, c, sh.ndim)));
    const long at = offset_of(&os, c, sh.ndim) + k * dim_stride;
#ifdef ACCUMULATE
    accumulate(out, at, v);
#else
    O_STORE(out, at, v);
#endif
  }
}

// Advanced indexing over the result's shape: the indexed tensor at `ss` (stride 0 along the index
// dims) plus, for each of n index tensors (I0..I3, expanded to the shape), its value (negative counts
// from the end) times the stride of the dim it indexes. index: out[c] = self[...]; index_put:
// self[...] = a[c] (accumulated with ACCUMULATE).
#define ADVANCED_INDEX_ARGS                                                                                       \
  global const I_S *i0, const Strides s0, global const I_S *i1, const Strides s1, global const I_S *i2,          \
      const Strides s2, global const I_S *i3, const Strides s3, const int n, const Strides indexed_strides,      \
      const Strides indexed_sizes, global long *error_base, const long error_at

inline long advanced_offset(const Shape* sh, const long* c, const Strides* ss, global const I_S* i0,
                            const Strides* s0, global const I_S* i1, const Strides* s1, global const I_S* i2,
                            const Strides* s2, global const I_S* i3, const Strides* s3, const int n,
                            const Strides* indexed_strides, const Strides* indexed_sizes, global long* error,
                            int* bad) {
  long at = offset_of(ss, c, sh->ndim);
  for (int k = 0; k < n; ++k) {
    global const I_S* p = k == 0 ? i0 : k == 1 ? i1 : k == 2 ? i2 : i3;
    const Strides* st = k == 0 ? s0 : k == 1 ? s1 : k == 2 ? s2 : s3;
    long v = (long)p[offset_of(st, c, sh->ndim)];
    const long size = indexed_sizes->strides[k];
    if (v < -size || v >= size) {
      report(error, v);
      *bad = 1;
      return 0;
    }
    if (v < 0) v += size;
    at += v * indexed_strides->strides[k];
  }
  return at;
}

kernel void index(const Shape sh, global O_S* out, const Strides os, global const A_S* self, const Strides ss,
                  ADVANCED_INDEX_ARGS) {
  global long* error = error_base + error_at;
  FOR_EACH_INDEX(i, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, i, c);
    int bad = 0;
    const long at = advanced_offset(&sh, c, &ss, i0, &s0, i1, &s1, i2, &s2, i3, &s3, n, &indexed_strides,
                                    &indexed_sizes, error, &bad);
    if (!bad) O_STORE(out, offset_of(&os, c, sh.ndim), TO_O(A_LOAD(self, at)));
  }
}

kernel void index_put(const Shape sh, global O_S* self, const Strides ss, global const A_S* values,
                      const Strides vs, ADVANCED_INDEX_ARGS) {
  global long* error = error_base + error_at;
  FOR_EACH_INDEX(i, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, i, c);
    int bad = 0;
    const long at = advanced_offset(&sh, c, &ss, i0, &s0, i1, &s1, i2, &s2, i3, &s3, n, &indexed_strides,
                                    &indexed_sizes, error, &bad);
    if (bad) continue;
    const O_V v = TO_O(A_LOAD(values, offset_of(&vs, c, sh.ndim)));
#ifdef ACCUMULATE
    accumulate(self, at, v);
#else
    O_STORE(self, at, v);
#endif
  }
}
