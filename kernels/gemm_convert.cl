// Conversions between a matrix of the storage type (storage.cl's STORAGE, included before this
// file) and an fp32 scratch copy, for GEMMs of 16-bit storage run by the fp32 kernels
// (ops/gemm_widen.cpp): widen A, B (and C when beta != 0) before, narrow C after, applying the GEMM's
// epilogue (gemm_epilogue.cl, after storage.cl: a bias of the storage type) on the way. Each matrix is
// rows x cols of `batches` entries, element (r, c) of entry b at offset + b * stride + r * ld + c
// on either side; only those elements are read or written (the caller's gaps stay untouched).
// Launch: global (cols rounded up to 64, rows, batches), local (64, 1, 1).

kernel void widen_matrix(const int rows, const int cols, const global STORAGE* restrict src, const long src_offset,
                         const int src_ld, const long src_stride, global float* restrict dst, const long dst_offset,
                         const int dst_ld, const long dst_stride) {
  const int c = get_global_id(0), r = get_global_id(1);
  const long b = get_global_id(2);
  if (c >= cols || r >= rows) return;
  dst[dst_offset + b * dst_stride + (long)r * dst_ld + c] = LOAD(src, src_offset + b * src_stride + (long)r * src_ld + c);
}

kernel void narrow_matrix(const int rows, const int cols, const global float* restrict src, const long src_offset,
                          const int src_ld, const long src_stride, global STORAGE* restrict dst, const long dst_offset,
                          const int dst_ld, const long dst_stride GEMM_EPILOGUE_PARAMS) {
  const int c = get_global_id(0), r = get_global_id(1);
  const long b = get_global_id(2);
  if (c >= cols || r >= rows) return;
  const float value = src[src_offset + b * src_stride + (long)r * src_ld + c];
  STORE(GEMM_EPILOGUE(value, c), dst, dst_offset + b * dst_stride + (long)r * dst_ld + c);
}
