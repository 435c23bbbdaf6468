// The second pass of a split-K GEMM (gemm.cl with KSPLIT > 1): C = sum of the KSPLIT partial
// products + beta * C, then the epilogue (gemm_epilogue.cl). The partials are packed (M x N per entry, entry batch * KSPLIT + part) and
// already scaled by alpha. Parts are added in order, so the result does not depend on the launch
// geometry; C is not read when beta == 0 (BLAS semantics). One work-item per element of C
// (row-major over M x N, so reads and writes are contiguous): global (ceil(M*N/256)*256, batch),
// local (256, 1).
kernel void gemm_ksplit_sum(const int M, const int N, const int parts, const float beta,
                            const global float* restrict partials, global float* C, const long c_offset,
                            const int ldc, const long stride_c GEMM_EPILOGUE_PARAMS) {
  const long plane = (long)M * N;
  const long i = get_global_id(0);
  const long batch = get_global_id(1);
  if (i >= plane) return;
  const global float* p = partials + batch * parts * plane + i;
  float sum = 0.0f;
  for (int part = 0; part < parts; ++part) sum += p[part * plane];
  const int n = i % N;
  global float* dst = C + c_offset + batch * stride_c + (i / N) * ldc + n;
  if (beta != 0.0f) sum += beta * *dst;
  *dst = GEMM_EPILOGUE(sum, n);
}
