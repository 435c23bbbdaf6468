// nonzero and masked_select: results whose size depends on the values, in two passes over blocks of
// `block` elements (row-major order): count the set elements of each block, then, from each block's
// offset (the host's prefix sum of the counts), write them in order.
//
// Buffers without Strides come with their element offset (`_at`).
// Slots: A (the tested tensor, or the mask for masked_select), B (masked_select's values), O (output).

kernel void count_blocks(const Shape sh, global const A_S* a, const Strides as, const long block,
                         const long blocks, global long* counts_base, const long counts_at) {
  global long* counts = counts_base + counts_at;
  FOR_EACH_INDEX(w, blocks) {
    const long end = min(sh.numel, (w + 1) * block);
    long n = 0;
    long c[MAX_DIMS];
    for (long i = w * block; i < end; ++i) {
      coords_of(&sh, i, c);
      n += A_LOAD(a, offset_of(&as, c, sh.ndim)) != 0;
    }
    counts[w] = n;
  }
}

// out[d * rows + k] = coordinate d of the k-th set element (the [rows, ndim] result column-major); `dims`
// is a's shape unmerged (for the coordinates).
kernel void nonzero_write(const Shape sh, global const A_S* a, const Strides as, const long block, const long blocks,
                          global const long* offsets_base, const long offsets_at, const Shape dims,
                          global long* out_base, const long out_at, const long rows) {
  global const long* offsets = offsets_base + offsets_at;
  global long* out = out_base + out_at;
  FOR_EACH_INDEX(w, blocks) {
    const long end = min(sh.numel, (w + 1) * block);
    long k = offsets[w];
    long c[MAX_DIMS], d[MAX_DIMS];
    for (long i = w * block; i < end; ++i) {
      coords_of(&sh, i, c);
      if (A_LOAD(a, offset_of(&as, c, sh.ndim)) == 0) continue;
      coords_of(&dims, i, d);
      for (int j = 0; j < (int)dims.ndim; ++j) out[j * rows + k] = d[j];  // column-major [rows, ndim]
      ++k;
    }
  }
}

kernel void masked_select_write(const Shape sh, global const A_S* mask, const Strides ms, global const B_S* values,
                                const Strides vs, const long block, const long blocks, global const long* offsets_base,
                                const long offsets_at, global O_S* out, const long out_at) {
  global const long* offsets = offsets_base + offsets_at;
  FOR_EACH_INDEX(w, blocks) {
    const long end = min(sh.numel, (w + 1) * block);
    long k = offsets[w];
    long c[MAX_DIMS];
    for (long i = w * block; i < end; ++i) {
      coords_of(&sh, i, c);
      if (A_LOAD(mask, offset_of(&ms, c, sh.ndim)) == 0) continue;
      O_STORE(out, out_at + k, TO_O(B_LOAD(values, offset_of(&vs, c, sh.ndim))));
      ++k;
    }
  }
}

// out[i] = start + i * step (K is long for integer outputs, float otherwise).
kernel void arange(const long n, global O_S* out, const long offset, const K_V start, const K_V step) {
  FOR_EACH_INDEX(i, n) {
#if K_FLOAT
    O_STORE(out, offset + i, TO_O(fma(step, (float)i, start)));
#else
    O_STORE(out, offset + i, TO_O(start + step * (K_V)i));
#endif
  }
}
