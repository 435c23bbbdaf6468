// Batched transpose of raw storage words: out[a][c][b] = in[a][b][c] for a < batches, b < rows,
// c < cols. The tensor-core implicit GEMM's operands with K contiguous (KMAJOR in
// conv2d_igemm_mma.cl): NCHW activations to NHWC ([n][C][HW] -> [n][HW][C]) and the filters to tap-
// major order ([k][C][RS] -> [k][RS][C] forward; per group [K][C RS] -> [C RS][K] input gradient).
// The values are copied bit for bit (no conversion). Appended to storage.cl (DTYPE); its own program.
// Launch: global (ceil(cols/32)*32, ceil(rows/32)*8, batches), local (32, 8, 1).

#if DTYPE == 0
#define RAW uint
#else
#define RAW ushort
#endif

__attribute__((reqd_work_group_size(32, 8, 1)))
kernel void conv2d_transpose(const int rows, const int cols, const global RAW* restrict in, const long in_offset,
                             global RAW* restrict out) {
  // A 32 x 32 tile through local memory, so that both the reads (along c) and the writes (along b)
  // are contiguous across work-items; one padding column keeps the transposed reads off one bank.
  local RAW tile[32][33];
  const long plane = (long)rows * cols;
  in += in_offset + get_group_id(2) * plane;
  out += get_group_id(2) * plane;
  const int c0 = get_group_id(0) * 32, b0 = get_group_id(1) * 32;
  const int tx = get_local_id(0), ty = get_local_id(1);
  for (int i = ty; i < 32; i += 8) {
    const int b = b0 + i, c = c0 + tx;
    if (b < rows && c < cols) tile[i][tx] = in[(long)b * cols + c];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = ty; i < 32; i += 8) {
    const int c = c0 + i, b = b0 + tx;
    if (b < rows && c < cols) out[(long)c * rows + b] = tile[tx][i];
  }
}
