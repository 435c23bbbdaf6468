// Cumulative sums and products along one dim (cumsum, cumprod): one work item per line, which walks
// the line in order, so the result does not depend on the launch and matches a sequential scan.
// `sh` walks the lines (the scanned dim has size 1 there), `os` and `as` place each line's first
// element; o_step and a_step are out's and a's strides along the dim, n its length. Values are
// accumulated in K (float for the float types, as CUDA does; long for the integers) and rounded to
// O at every store.
kernel void cumulative(const Shape sh, global O_S* out, const Strides os, const long o_step, global const A_S* a,
                       const Strides as, const long a_step, const long n, const int product) {
  FOR_EACH_INDEX(i, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, i, c);
    const long o = offset_of(&os, c, sh.ndim), x = offset_of(&as, c, sh.ndim);
    K_V acc = product ? TO_K(1) : TO_K(0);
    for (long j = 0; j < n; ++j) {
      const K_V v = TO_K(A_LOAD(a, x + j * a_step));
      acc = product ? acc * v : acc + v;
      O_STORE(out, o + j * o_step, TO_O(acc));
    }
  }
}
