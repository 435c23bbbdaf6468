// Known-good GEMM configurations per device class: where the tuner starts (docs/PERFORMANCE.md and docs/decisions/ have
// the measurements behind each). Seeds outside a problem's space are skipped by the tuner.
#include "ops/gemm/gemm_problem.h"

namespace ocltune {
namespace {

Config fma(std::int64_t mwg, std::int64_t nwg, std::int64_t kwg, std::int64_t wptm, std::int64_t wptn, std::int64_t vwm,
           std::int64_t vwn, std::int64_t vwl, std::int64_t sa, std::int64_t sb, std::int64_t db, std::int64_t kwi) {
  return {{"MWG", mwg}, {"NWG", nwg}, {"KWG", kwg}, {"WPTM", wptm}, {"WPTN", wptn}, {"VWM", vwm}, {"VWN", vwn},
          {"VWL", vwl}, {"SA", sa},   {"SB", sb},   {"DB", db},     {"KWI", kwi},   {"WTN", 0}};
}

Config mma(std::int64_t bm, std::int64_t bn, std::int64_t bk, std::int64_t wm, std::int64_t wn, std::int64_t stages,
           std::int64_t dbuf, std::int64_t ldsm, std::int64_t bvec, std::int64_t group_m = 1, std::int64_t swizzle = 0,
           std::int64_t frag_dbuf = 0) {
  return {{"MMA", 1},
          {"BM", bm},
          {"BN", bn},
          {"BK", bk},
          {"WM", wm},
          {"WN", wn},
          {"STAGES", stages},
          {"DBUF", dbuf},
          {"LDSM", ldsm},
          {"BVEC", bvec},
          {"GROUP_M", group_m},
          {"SWIZZLE", swizzle},
          {"FRAG_DBUF", frag_dbuf}};
}

Config wgmma_packed(std::int64_t bm, std::int64_t bn, std::int64_t bk, std::int64_t wgs, std::int64_t stages,
                    std::int64_t lag, std::int64_t group_m = 1) {
  return {{"WGMMA_PACKED", 1}, {"BM", bm},         {"BN", bn},   {"BK", bk},
          {"WGS", wgs},        {"STAGES", stages}, {"LAG", lag}, {"GROUP_M", group_m}};
}

Config cpu(std::int64_t mr, std::int64_t vw, std::int64_t nv, std::int64_t mb, std::int64_t nb, std::int64_t kc) {
  return {{"CPU", 1}, {"MR", mr}, {"VW", vw}, {"NV", nv}, {"MB", mb}, {"NB", nb}, {"KC", kc}};
}

}  // namespace

std::vector<Config> GemmProblem::seed_configs(const DeviceInfo& device) const {
  std::vector<Config> seeds;
  if (shape_.tensor_cores_allowed()) {
    // mma.sync on packed operands, the tensor-core path of compute capability 8.x (on the H200,
    // probe47, 4096^3: fp16 442 us, tf32 789 us with the default; 460 / 820 us with BK = 8 in 4
    // stages and bands of 8 tile rows). After the wgmma seeds on Hopper, where those win.
    const std::vector<Config> mma_packed = {
        gemm_mma_packed_default_config(),
        {{"MMA_PACKED", 1}, {"BM", 128}, {"BN", 128}, {"BK", 8}, {"WM", 2}, {"WN", 2}, {"STAGES", 4}, {"GROUP_M", 8}}};
    // H200 (Hopper only), 4096^3 NN, wgmma on packed operands (probe35, packing included): 128x128
    // of one warpgroup, 3 stages of BK = 16, 589 us; 64x256 of one warpgroup, 4 stages of BK = 8,
    // 700 us; 128x256 of two, 749 us; 128x128 of two, 4 stages of BK = 8, 769 us. At 8192^3 128x128
    // of one warpgroup, 4 stages of BK = 8, in bands of 8 tile rows (GROUP_M) 3893 us (probe44).
    seeds = {wgmma_packed(128, 128, 16, 1, 3, 0), wgmma_packed(128, 128, 8, 1, 4, 0, 8),
             wgmma_packed(64, 256, 8, 1, 4, 0),   wgmma_packed(128, 256, 8, 2, 4, 0),
             wgmma_packed(128, 128, 8, 2, 4, 1),  wgmma_packed(64, 128, 16, 1, 4, 1),
             wgmma_packed(128, 128, 8, 1, 4, 0)};
    seeds.insert(seeds.end(), mma_packed.begin(), mma_packed.end());
    // H200, 4096^3 NN: 128x128 tiles of four 64x64 warp tiles, register-staged and double-buffered,
    // ran at 125 TFLOP/s (4.1x CLBlast fp32); then the same with 16-byte B fragment loads and with
    // cp.async pipelines (2 stages of BK = 16, 4 of BK = 8: 48 KiB of local memory allows no more
    // padded tiles). First, cp.async with fragments double-buffered in registers (2 padded stages,
    // 3 swizzled stages in 48 KiB).
    for (const Config& c :
         {mma(128, 128, 16, 2, 2, 2, 0, 0, 0, 1, 0, 1), mma(128, 128, 16, 2, 2, 3, 0, 0, 0, 1, 1, 1),
          mma(128, 128, 16, 2, 2, 0, 1, 0, 0), mma(128, 128, 16, 2, 2, 0, 1, 0, 0, 8),
          mma(128, 128, 16, 2, 2, 0, 1, 0, 1), mma(128, 128, 16, 2, 2, 2, 0, 0, 1), mma(128, 128, 8, 2, 2, 4, 0, 0, 1),
          mma(128, 128, 16, 2, 2, 2, 0, 1, 1), mma(128, 64, 16, 2, 2, 3, 0, 1, 0), mma(256, 128, 16, 8, 4, 0, 0, 1, 0),
          mma(64, 128, 16, 2, 2, 0, 1, 1, 0), mma(64, 64, 16, 2, 2, 0, 1, 1, 0)}) {
      seeds.push_back(c);
    }
  }
  if (device.type == DeviceType::kGpu) {
    // H200 (NVIDIA OpenCL): the GPU default tiles (gemm_gpu_tiles: 256x128 with 16x8 per work-item,
    // double-buffered, 45.8 TFLOP/s at 4096^3, 1.47x CLBlast; 128x128 8x8 best at 4096x2304x768;
    // smaller tiles for smaller M/N), then wide and narrow ones.
    seeds.insert(seeds.end(), gemm_gpu_tiles().begin(), gemm_gpu_tiles().end());
    for (const Config& c : {fma(128, 256, 8, 8, 16, 4, 4, 4, 1, 1, 1, 8), fma(64, 256, 16, 16, 8, 2, 2, 4, 1, 1, 1, 2),
                            fma(16, 128, 32, 1, 4, 1, 4, 4, 1, 1, 1, 8)}) {
      seeds.push_back(c);
    }
  } else {
    // CPUs, the cpu variant first. PoCL on a 2-core AVX-512 EPYC, 1024^3: 4 x 64 and 8 x 32
    // register tiles (16 float16 accumulators) with K blocks of 128 ran at 69% of the FMA peak per
    // core, 6 x 32 and 6 x 64 at 60-66% (docs/decisions/0026-cpu-gemm-variant.md); then tiles for
    // M <= 8 and for K <= 64 (batched attention products), and 6 x 16 in float8s for AVX2's 16
    // registers (not measured: this machine has AVX-512).
    for (const Config& c :
         {cpu(4, 16, 4, 16, 4, 128), cpu(8, 16, 2, 8, 8, 128), cpu(6, 16, 4, 8, 4, 128), cpu(8, 16, 2, 8, 4, 256),
          cpu(8, 16, 2, 1, 8, 256), cpu(8, 16, 2, 4, 2, 64), cpu(6, 8, 2, 8, 8, 256)}) {
      seeds.push_back(c);
    }
    // CPUs (PoCL): unstaged operands with wide vectors along N, so the FMAs vectorise.
    for (const Config& c : {fma(16, 64, 16, 4, 32, 1, 16, 1, 0, 0, 0, 2), fma(32, 64, 16, 4, 16, 1, 16, 1, 0, 0, 0, 2),
                            fma(16, 16, 32, 8, 4, 4, 4, 1, 0, 1, 0, 2), fma(16, 64, 16, 4, 32, 1, 8, 1, 0, 0, 0, 8)}) {
      seeds.push_back(c);
    }
  }
  return seeds;
}

}  // namespace ocltune
