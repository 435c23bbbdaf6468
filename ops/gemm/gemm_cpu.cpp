// The CPU variant of GEMM ("cpu", kernels/gemm_cpu.cl): its space, offered only on CPU devices
// (cpu_device()), its default and its launch. On PoCL the generic kernel is limited by the driver's
// work-item loop vectoriser; this one runs one work-item per work-group with explicit vectors.
#include <algorithm>

#include "ops/gemm/gemm_variants.h"

namespace ocltune {
namespace {

// Largest power-of-two count <= `preferred` of tiles of `tile` that stays within the variant's
// "tiles no larger than next_pow2(extent)" rule (at least one tile).
std::int64_t tiles_within(std::int64_t preferred, std::int64_t tile, std::int64_t extent) {
  std::int64_t count = preferred;
  while (count > 1 && count * tile > gemm_detail::next_pow2(extent)) count /= 2;
  return count;
}

}  // namespace

Config gemm_cpu_default_config(const GemmShape& shape) {
  // A 4 x 64 register tile (16 float16 accumulators: AVX-512's 32 registers), 64 x 256 per
  // work-group, K blocks of 128: the steadiest of the measured tiles at 1024^3 on PoCL (docs/decisions/
  // 0026-cpu-gemm-variant.md). Shrunk along M, N and K for small problems.
  const std::int64_t mr = std::min<std::int64_t>(4, gemm_detail::next_pow2(shape.m));
  const std::int64_t kc = std::clamp<std::int64_t>(gemm_detail::next_pow2(shape.k), 64, 128);
  return {{"CPU", 1},
          {"MR", mr},
          {"VW", 16},
          {"NV", 4},
          {"MB", tiles_within(16, mr, shape.m)},
          {"NB", tiles_within(4, 64, shape.n)},
          {"KC", kc}};
}

bool is_cpu_config(const Config& config) { return config.count("CPU") != 0; }

namespace gemm_detail {

SearchSpace cpu_space(const GemmShape& shape, const DeviceInfo& device) {
  SearchSpace space("cpu");
  space.add("CPU", {1}, "CPU kernel (kernels/gemm_cpu.cl)")
      .add("MR", {1, 2, 4, 6, 8, 12, 16}, "rows of the register tile")
      .add("VW", {4, 8, 16}, "vector width of the register tile")
      .add("NV", {1, 2, 3, 4}, "vectors per row of the register tile")
      .add("MB", {1, 2, 4, 8, 16}, "register tiles along M per work-group")
      .add("NB", {1, 2, 4, 8}, "register tiles along N per work-group")
      .add("KC", {64, 128, 256, 512}, "depth of the packed K block");
  // Rows, columns or depth beyond the problem are wasted work or memory: a tile or block may exceed
  // the next power of two of its extent only when it is the smallest one.
  const std::int64_t max_m = next_pow2(shape.m), max_n = next_pow2(shape.n), max_k = next_pow2(shape.k);
  space.constrain("MR <= next_pow2(M)", {"MR"}, [=](const Config& c) { return at(c, "MR") <= max_m; });
  space.constrain("MB = 1 or MB * MR <= next_pow2(M)", {"MR", "MB"},
                  [=](const Config& c) { return at(c, "MB") == 1 || at(c, "MB") * at(c, "MR") <= max_m; });
  space.constrain("NB = 1 or NB * NV * VW <= next_pow2(N)", {"VW", "NV", "NB"}, [=](const Config& c) {
    return at(c, "NB") == 1 || at(c, "NB") * at(c, "NV") * at(c, "VW") <= max_n;
  });
  space.constrain("KC = 64 or KC <= next_pow2(K)", {"KC"},
                  [=](const Config& c) { return at(c, "KC") == 64 || at(c, "KC") <= max_k; });
  // The accumulators, the NV vectors of B and the broadcast of A must fit a 32-register file
  // (AVX-512); beyond that the tile spills.
  space.constrain("MR * NV <= 24 (accumulator registers)", {"MR", "NV"},
                  [](const Config& c) { return at(c, "MR") * at(c, "NV") <= 24; });
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("packed panels fit local memory", {"MR", "VW", "NV", "MB", "NB", "KC"}, [=](const Config& c) {
    const std::int64_t floats = (at(c, "MB") * at(c, "MR") + at(c, "NB") * at(c, "NV") * at(c, "VW")) * at(c, "KC");
    return floats * 4 <= local_bytes;
  });
  return space;
}

LaunchPlan cpu_plan(const GemmShape& s, const GemmOperands& o, const Config& config) {
  KernelLaunch launch;
  launch.program.files = {"gemm_layout.cl", "activation.cl", "gemm_epilogue.cl", "gemm_cpu.cl"};
  launch.program.defines = {{"TRANS_A", s.trans_a ? "1" : "0"}, {"TRANS_B", s.trans_b ? "1" : "0"}};
  for (const auto& [name, value] : config) launch.program.defines.emplace_back(name, std::to_string(value));
  launch.kernel = "gemm_cpu";
  const std::int64_t mwg = at(config, "MB") * at(config, "MR");
  const std::int64_t nwg = at(config, "NB") * at(config, "NV") * at(config, "VW");
  const std::int64_t groups_m = (s.m + mwg - 1) / mwg, groups_n = (s.n + nwg - 1) / nwg;
  launch.global = cl::NDRange(static_cast<std::size_t>(groups_n), static_cast<std::size_t>(groups_m),
                              static_cast<std::size_t>(s.batch));
  launch.local = cl::NDRange(1, 1, 1);
  launch.args = gemm_args(s, o);
  return {{std::move(launch)}};
}

}  // namespace gemm_detail
}  // namespace ocltune
