// sort and topk along one dim: one work item per line, a bottom-up merge sort of (key, index) pairs
// in two scratch buffers. Merging takes the left run's element on ties, so the sort is stable (as
// PyTorch's stable=True, and a valid order for stable=False); NaN sorts above every number, as on
// CPU and CUDA (last ascending, first descending). Then the first `k` of each sorted line are
// written: all of them for sort, the k largest (or smallest) for topk.
// `sh` walks the lines (the sorted dim at size 1 there); `as`, `vs` and `is` place each line's first
// element of the input, the values and the indices, a_step, v_step and i_step are their strides
// along the dim. Keys are K values (float for the float types, long for the integers and bool);
// scratch_keys and scratch_index (from their element offsets keys_at and index_at) hold 2 * n
// entries per line.

inline bool key_before(const K_V a, const K_V b, const int descending) {
#if K_FLOAT
  if (descending) return (isnan(a) && !isnan(b)) || a > b;
  return (!isnan(a) && isnan(b)) || a < b;
#else
  return descending ? a > b : a < b;
#endif
}

kernel void sort_lines(const Shape sh, global const A_S* a, const Strides as, const long a_step, const long n,
                       const long k, global O_S* values, const Strides vs, const long v_step, global long* indices,
                       const Strides is, const long i_step, global K_V* scratch_keys, const long keys_at,
                       global long* scratch_index, const long index_at, const int descending) {
  FOR_EACH_INDEX(line, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, line, c);
    const long x = offset_of(&as, c, sh.ndim);
    global K_V* keys = scratch_keys + keys_at + line * 2 * n;
    global long* index = scratch_index + index_at + line * 2 * n;
    for (long j = 0; j < n; ++j) {
      keys[j] = TO_K(A_LOAD(a, x + j * a_step));
      index[j] = j;
    }
    long from = 0, to = n;  // the sorted runs are in [from, from + n), merged into [to, to + n)
    for (long width = 1; width < n; width *= 2) {
      for (long lo = 0; lo < n; lo += 2 * width) {
        const long mid = min(lo + width, n), hi = min(lo + 2 * width, n);
        long l = lo, r = mid;
        for (long out = lo; out < hi; ++out) {
          const bool right = r < hi && (l >= mid || key_before(keys[from + r], keys[from + l], descending));
          const long take = right ? r++ : l++;
          keys[to + out] = keys[from + take];
          index[to + out] = index[from + take];
        }
      }
      const long t = from;
      from = to;
      to = t;
    }
    const long v = offset_of(&vs, c, sh.ndim), i = offset_of(&is, c, sh.ndim);
    for (long j = 0; j < k; ++j) {
      O_STORE(values, v + j * v_step, TO_O(keys[from + j]));
      indices[i + j * i_step] = index[from + j];
    }
  }
}
