// The tile a work-group of the tensor-core GEMM kernels computes (gemm_mma.cl and
// gemm_wgmma_packed.cl, each appended after this file). Work-groups start roughly in launch order
// (x fastest); with group_m > 1 the ones resident together cover a group_m-row band of tiles column
// by column, so each B panel is read from DRAM once per band instead of once per tile row.
// Returns (m0, n0), the first row and column of C of this work-group's bm x bn tile.
static inline int2 tile_origin(const int group_m, const int bm, const int bn) {
  if (group_m <= 1) return (int2)(get_group_id(1) * bm, get_group_id(0) * bn);
  const int tiles_n = get_num_groups(0), tiles_m = get_num_groups(1);
  const int launched = get_group_id(1) * tiles_n + get_group_id(0);
  const int band = launched / (group_m * tiles_n), in_band = launched % (group_m * tiles_n);
  const int band_rows = min(group_m, tiles_m - band * group_m);
  return (int2)((band * group_m + in_band % band_rows) * bm, (in_band / band_rows) * bn);
}
