// The tensor-core variant of GEMM ("mma_tf32", kernels/gemm_mma.cl): its space, offered only in
// the tf32 math mode (or for 16-bit storage) on NVIDIA devices of compute capability >= 8.0, its
// default and its launch.
#include <algorithm>

#include "ops/gemm/gemm_variants.h"

namespace ocltune {

Config gemm_mma_default_config() {
  return {{"MMA", 1},  {"BM", 64},  {"BN", 64},  {"BK", 16},     {"WM", 2},      {"WN", 2},       {"STAGES", 0},
          {"DBUF", 1}, {"LDSM", 0}, {"BVEC", 0}, {"GROUP_M", 1}, {"SWIZZLE", 0}, {"FRAG_DBUF", 0}};
}

bool is_mma_config(const Config& config) { return config.count("MMA") != 0; }

namespace gemm_detail {

SearchSpace mma_space(const GemmShape& shape, const DeviceInfo& device) {
  SearchSpace space("mma_tf32");
  space.add("MMA", {1}, "tensor-core kernel (kernels/mma_tf32.cl + gemm_mma.cl)")
      .add("BM", {32, 64, 128, 256}, "rows of C per work-group")
      .add("BN", {32, 64, 128, 256}, "columns of C per work-group")
      .add("BK", {8, 16, 32}, "depth of the K tile staged per step")
      .add("WM", {1, 2, 4, 8}, "warps along M")
      .add("WN", {1, 2, 4, 8}, "warps along N")
      .add("STAGES", {0, 2, 3, 4}, "0: stage tiles through registers; 2-4: local buffers filled by cp.async")
      .add("DBUF", {0, 1}, "with STAGES = 0: double-buffer local memory, prefetching the next tile into registers")
      .add("LDSM", {0, 1}, "load A fragments with ldmatrix.x4")
      .add("BVEC", {0, 1}, "load B fragments of four n8 blocks with two 16-byte local loads")
      .add("GROUP_M", {1, 8}, "tile rows that work-groups launched together cover before moving along N (L2 reuse)")
      .add("SWIZZLE", {0, 1}, "unpadded local tiles, XOR-swizzled so that fragment reads stay conflict-free")
      .add("FRAG_DBUF", {0, 1}, "with cp.async stages: read the next k-step's fragments during each step's mma");
  const std::int64_t max_bm = std::max<std::int64_t>(32, next_pow2(shape.m));
  const std::int64_t max_bn = std::max<std::int64_t>(32, next_pow2(shape.n));
  space.constrain("BM <= next_pow2(M), BN <= next_pow2(N)", {"BM", "BN"},
                  [=](const Config& c) { return at(c, "BM") <= max_bm && at(c, "BN") <= max_bn; });
  space.constrain("warp tiles are whole m16n8 fragments", {"BM", "BN", "WM", "WN"}, [](const Config& c) {
    return at(c, "BM") % (16 * at(c, "WM")) == 0 && at(c, "BN") % (8 * at(c, "WN")) == 0;
  });
  space.constrain("at most 128 accumulators per thread", {"BM", "BN", "WM", "WN"}, [](const Config& c) {
    return (at(c, "BM") / at(c, "WM")) * (at(c, "BN") / at(c, "WN")) / 32 <= 128;
  });
  const auto max_wg = static_cast<std::int64_t>(device.max_work_group_size);
  space.constrain("work-group size within device limits", {"WM", "WN"},
                  [=](const Config& c) { return 32 * at(c, "WM") * at(c, "WN") <= max_wg; });
  space.constrain("staged tiles split evenly into float4s per thread", {"BM", "BN", "BK", "WM", "WN"},
                  [](const Config& c) {
                    const std::int64_t unit = 4 * 32 * at(c, "WM") * at(c, "WN");
                    return (at(c, "BM") * at(c, "BK")) % unit == 0 && (at(c, "BN") * at(c, "BK")) % unit == 0;
                  });
  space.constrain("GROUP_M > 1 only with at least two tile rows", {"BM", "GROUP_M"},
                  [=](const Config& c) { return at(c, "GROUP_M") == 1 || shape.m > at(c, "BM"); });
  space.constrain("DBUF = 0 with cp.async stages (it applies to register staging)", {"STAGES", "DBUF"},
                  [](const Config& c) { return at(c, "STAGES") == 0 || at(c, "DBUF") == 0; });
  // cp.async keeps the global layout in local memory: a transposed A is stored As[k][m], which
  // ldmatrix cannot read; a transposed B is stored Bs[n][k], where B fragments are not adjacent.
  const bool trans_a = shape.trans_a, trans_b = shape.trans_b;
  space.constrain("LDSM needs As[m][k] (not A^T with cp.async)", {"STAGES", "LDSM"},
                  [=](const Config& c) { return !at(c, "LDSM") || !(trans_a && at(c, "STAGES") >= 2); });
  space.constrain("BVEC needs Bs[k][n] (not B^T with cp.async) and whole groups of four n8 fragments per warp",
                  {"BN", "WN", "STAGES", "BVEC"}, [=](const Config& c) {
                    if (!at(c, "BVEC")) return true;
                    return (at(c, "BN") / at(c, "WN")) % 32 == 0 && !(trans_b && at(c, "STAGES") >= 2);
                  });
  space.constrain("FRAG_DBUF with cp.async stages and an even number of k-steps (BK a multiple of 16)",
                  {"BK", "STAGES", "FRAG_DBUF"}, [](const Config& c) {
                    return !at(c, "FRAG_DBUF") || (at(c, "STAGES") >= 2 && at(c, "BK") % 16 == 0);
                  });
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain(
      "local memory fits the device", {"BM", "BN", "BK", "STAGES", "DBUF", "SWIZZLE"}, [=](const Config& c) {
        const std::int64_t bm = at(c, "BM"), bn = at(c, "BN"), bk = at(c, "BK"), stages = at(c, "STAGES");
        const bool async = stages >= 2;  // layouts as in kernels/mma_tf32.cl (A_KM, B_NK; SWIZZLE: unpadded)
        const std::int64_t pad = at(c, "SWIZZLE") ? 0 : 1;
        const std::int64_t a_words = async && trans_a ? bk * (bm + 8 * pad) : bm * (bk + 4 * pad);
        const std::int64_t b_words = async && trans_b ? bn * (bk + 4 * pad) : bk * (bn + 8 * pad);
        const std::int64_t buffers = async ? stages : 1 + at(c, "DBUF");
        return (a_words + b_words) * buffers * 4 <= local_bytes;
      });
  return space;
}

LaunchPlan mma_plan(const GemmShape& s, const GemmOperands& o, const Config& config) {
  KernelLaunch launch;
  launch.program.files = {"tile_order.cl", "mma_tf32.cl", "activation.cl", "gemm_epilogue.cl", "gemm_mma.cl"};
  launch.program.defines = {{"TRANS_A", s.trans_a ? "1" : "0"}, {"TRANS_B", s.trans_b ? "1" : "0"}};
  if (at(config, "STAGES") >= 2) {  // tiles in their global layout, rounded to TF32 when read
    launch.program.defines.insert(
        launch.program.defines.end(),
        {{"A_KM", s.trans_a ? "1" : "0"}, {"B_NK", s.trans_b ? "1" : "0"}, {"CVT_AT_LOAD", "1"}});
  }
  for (const auto& [name, value] : config) launch.program.defines.emplace_back(name, std::to_string(value));
  launch.kernel = "gemm_mma";
  const std::int64_t bm = at(config, "BM"), bn = at(config, "BN"), wm = at(config, "WM"), wn = at(config, "WN");
  const std::int64_t groups_m = (s.m + bm - 1) / bm, groups_n = (s.n + bn - 1) / bn;
  launch.global = cl::NDRange(static_cast<std::size_t>(groups_n * 32 * wn), static_cast<std::size_t>(groups_m * wm),
                              static_cast<std::size_t>(s.batch));
  launch.local = cl::NDRange(static_cast<std::size_t>(32 * wn), static_cast<std::size_t>(wm), 1);
  launch.args = gemm_args(s, o);
  return {{std::move(launch)}};
}

}  // namespace gemm_detail
}  // namespace ocltune
