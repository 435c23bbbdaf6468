// The warpgroup tensor-core variant of GEMM ("wgmma_tf32", kernels/gemm_wgmma.cl): its space,
// offered only where tensor cores are allowed (tf32 math mode or 16-bit storage) on NVIDIA devices
// of compute capability 9.x (Hopper), its default and its launch.
#include <algorithm>

#include "ops/gemm/gemm_variants.h"

namespace ocltune {

Config gemm_wgmma_default_config() { return {{"WGMMA", 1}, {"BM", 128}, {"BN", 128}, {"BK", 16}, {"WGS", 1}}; }

bool is_wgmma_config(const Config& config) { return config.count("WGMMA") != 0; }

namespace gemm_detail {

void constrain_warpgroup_tiles(SearchSpace& space, const GemmShape& shape, const DeviceInfo& device) {
  const std::int64_t max_bm = std::max<std::int64_t>(64, next_pow2(shape.m));
  const std::int64_t max_bn = std::max<std::int64_t>(64, next_pow2(shape.n));
  space.constrain("BM <= next_pow2(M), BN <= next_pow2(N)", {"BM", "BN"},
                  [=](const Config& c) { return at(c, "BM") <= max_bm && at(c, "BN") <= max_bn; });
  space.constrain("each warpgroup owns whole m64 blocks", {"BM", "WGS"},
                  [](const Config& c) { return at(c, "BM") % (64 * at(c, "WGS")) == 0; });
  space.constrain("at most 128 accumulators per work-item", {"BM", "BN", "WGS"},
                  [](const Config& c) { return at(c, "BM") / (64 * at(c, "WGS")) * at(c, "BN") / 2 <= 128; });
  space.constrain(
      "tiles split evenly into 16-byte chunks per work-item", {"BM", "BN", "BK", "WGS"}, [](const Config& c) {
        const std::int64_t threads = 128 * at(c, "WGS");
        return (at(c, "BM") * at(c, "BK") / 4) % threads == 0 && (at(c, "BN") * at(c, "BK") / 4) % threads == 0;
      });
  const auto max_wg = static_cast<std::int64_t>(device.max_work_group_size);
  space.constrain("work-group size within device limits", {"WGS"},
                  [=](const Config& c) { return 128 * at(c, "WGS") <= max_wg; });
}

SearchSpace wgmma_space(const GemmShape& shape, const DeviceInfo& device) {
  SearchSpace space("wgmma_tf32");
  space.add("WGMMA", {1}, "warpgroup tensor-core kernel (kernels/gemm_wgmma.cl)")
      .add("BM", {64, 128, 256}, "rows of C per work-group, in m64 blocks")
      .add("BN", {64, 128, 256}, "columns of C per work-group: the N of each wgmma")
      .add("BK", {16, 32}, "depth of the K tile staged per step")
      .add("WGS", {1, 2}, "warpgroups of 128 work-items per work-group, stacked along M");
  constrain_warpgroup_tiles(space, shape, device);
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("two local buffers fit the device", {"BM", "BN", "BK"},
                  [=](const Config& c) { return 2 * (at(c, "BM") + at(c, "BN")) * at(c, "BK") * 4 <= local_bytes; });
  return space;
}

LaunchPlan wgmma_plan(const GemmShape& s, const GemmOperands& o, const Config& config) {
  KernelLaunch launch;
  launch.program.files = {"gemm_layout.cl",   "storage.cl", "activation.cl",
                          "gemm_epilogue.cl", "wgmma.cl",   "gemm_wgmma.cl"};
  launch.program.ptx_target = "sm_90a";  // wgmma (see harness/program.h)
  launch.program.defines = {{"TRANS_A", s.trans_a ? "1" : "0"}, {"TRANS_B", s.trans_b ? "1" : "0"}};
  for (const auto& [name, value] : config) launch.program.defines.emplace_back(name, std::to_string(value));
  launch.kernel = "gemm_wgmma";
  const std::int64_t bm = at(config, "BM"), bn = at(config, "BN"), threads = 128 * at(config, "WGS");
  const std::int64_t groups_m = (s.m + bm - 1) / bm, groups_n = (s.n + bn - 1) / bn;
  launch.global = cl::NDRange(static_cast<std::size_t>(groups_n * threads), static_cast<std::size_t>(groups_m),
                              static_cast<std::size_t>(s.batch));
  launch.local = cl::NDRange(static_cast<std::size_t>(threads), 1, 1);
  launch.args = gemm_args(s, o);
  return {{std::move(launch)}};
}

}  // namespace gemm_detail
}  // namespace ocltune
