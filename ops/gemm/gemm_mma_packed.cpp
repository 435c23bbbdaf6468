// mma.sync on packed operands ("mma_packed_tf32", "mma_packed_fp16", "mma_packed_bf16"): the
// operands packed as for the wgmma variant (ops/gemm/gemm_wgmma_packed.cpp), then
// kernels/gemm_mma_packed.cl with warp tiles of m16n8 fragments read by ldmatrix. The 16-bit
// tensor-core path of compute capability 8.x (m16n8k16), where wgmma does not exist, and a TF32
// path whose tiles need no conversion or bounds checks. Offered where tensor cores are allowed
// (tf32 math or 16-bit storage) on NVIDIA devices of compute capability >= 8.0.
#include <algorithm>

#include "ops/gemm/gemm_variants.h"

namespace ocltune {

// 128 x 128 of 2 x 2 warps with 64 x 64 tiles each, three stages of BK = 16 words: the shape of
// the mma.sync variant's best tile (ops/gemm/gemm_seeds.cpp), whose three stages fill 48 KiB.
Config gemm_mma_packed_default_config() {
  return {{"MMA_PACKED", 1}, {"BM", 128}, {"BN", 128}, {"BK", 16}, {"WM", 2}, {"WN", 2}, {"STAGES", 3}, {"GROUP_M", 1}};
}

bool is_mma_packed_config(const Config& config) { return config.count("MMA_PACKED") != 0; }

namespace gemm_detail {

SearchSpace mma_packed_space(const GemmShape& shape, const DeviceInfo& device) {
  SearchSpace space(shape.dtype == DType::kFp32 ? "mma_packed_tf32"
                                                : std::string("mma_packed_") + dtype_name(shape.dtype));
  space.add("MMA_PACKED", {1}, "mma.sync kernel on packed operands (kernels/gemm_mma_packed.cl)")
      .add("BM", {64, 128, 256}, "rows of C per work-group")
      .add("BN", {64, 128, 256}, "columns of C per work-group")
      .add("BK", {8, 16, 32}, "depth of the K tile per pipeline stage, in 32-bit words")
      .add("WM", {1, 2, 4}, "warps along M")
      .add("WN", {1, 2, 4}, "warps along N")
      .add("STAGES", {2, 3, 4}, "local buffers in the cp.async pipeline")
      .add("GROUP_M", {1, 8}, "tile rows that work-groups launched together cover before moving along N (L2 reuse)");
  const std::int64_t max_bm = std::max<std::int64_t>(64, next_pow2(shape.m));
  const std::int64_t max_bn = std::max<std::int64_t>(64, next_pow2(shape.n));
  space.constrain("tiles no larger than the problem's next powers of two", {"BM", "BN"},
                  [=](const Config& c) { return at(c, "BM") <= max_bm && at(c, "BN") <= max_bn; });
  space.constrain("warp tiles of 16 to 64 rows and 16 to 64 columns (pairs of n8 fragments)", {"BM", "BN", "WM", "WN"},
                  [](const Config& c) {
                    const std::int64_t tm = at(c, "BM") / at(c, "WM"), tn = at(c, "BN") / at(c, "WN");
                    return tm >= 16 && tm <= 64 && tn >= 16 && tn <= 64;
                  });
  space.constrain("at most 128 accumulators per work-item", {"BM", "BN", "WM", "WN"}, [](const Config& c) {
    return (at(c, "BM") / at(c, "WM")) * (at(c, "BN") / at(c, "WN")) / 32 <= 128;
  });
  const auto max_wg = std::min<std::int64_t>(static_cast<std::int64_t>(device.max_work_group_size), 512);
  space.constrain("64 to 512 work-items, within device limits", {"WM", "WN"}, [=](const Config& c) {
    const std::int64_t threads = 32 * at(c, "WM") * at(c, "WN");
    return threads >= 64 && threads <= max_wg;
  });
  space.constrain(
      "tiles split evenly into 16-byte chunks per work-item", {"BM", "BN", "BK", "WM", "WN"}, [](const Config& c) {
        const std::int64_t threads = 32 * at(c, "WM") * at(c, "WN");
        return (at(c, "BM") * at(c, "BK") / 4) % threads == 0 && (at(c, "BN") * at(c, "BK") / 4) % threads == 0;
      });
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("the pipeline's local buffers fit the device", {"BM", "BN", "BK", "STAGES"}, [=](const Config& c) {
    return at(c, "STAGES") * (at(c, "BM") + at(c, "BN")) * at(c, "BK") * 4 <= local_bytes;
  });
  return space;
}

LaunchPlan mma_packed_plan(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace) {
  return packed_operands_plan(
      s, o, config, workspace,
      [&](const cl::Buffer& a, std::int64_t stride_a, const cl::Buffer& b, std::int64_t stride_b) {
        const PackedGemmSizes p = packed_gemm_sizes(s, config);
        const std::int64_t threads = 32 * config.at("WM") * config.at("WN");
        KernelLaunch launch;
        launch.program.files = {"storage.cl",    "tile_order.cl",      "activation.cl",     "gemm_epilogue.cl",
                                "mma_packed.cl", "packed_pipeline.cl", "gemm_mma_packed.cl"};
        launch.program.defines.push_back(dtype_define(s.dtype));
        for (const char* name : {"BM", "BN", "BK", "WM", "WN", "STAGES", "GROUP_M"}) {
          launch.program.defines.emplace_back(name, std::to_string(config.at(name)));
        }
        launch.kernel = "gemm_mma_packed";
        launch.global =
            cl::NDRange(static_cast<std::size_t>(p.rows_b / config.at("BN") * threads),
                        static_cast<std::size_t>(p.rows_a / config.at("BM")), static_cast<std::size_t>(s.batch));
        launch.local = cl::NDRange(static_cast<std::size_t>(threads), 1, 1);
        launch.args = packed_gemm_args(s, p, a, stride_a, b, stride_b, o);
        return launch;
      });
}

}  // namespace gemm_detail
}  // namespace ocltune
