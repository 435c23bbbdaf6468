// Which step of the TF32 GEMM's loop limits it: the best H200 tiles of the mma.sync and wgmma
// kernels at 4096^3 timed as is and with steps removed (their ABLATE bits; the results are then
// wrong, only the time counts). Prints TFLOP/s per variant (NVIDIA only; wgmma on Hopper). On
// the three kernels of the variants on packed operands (mma.sync; wgmma on Hopper), TF32 and fp16,
// each timed alone: the two packing passes (GB/s: each reads and writes its operand once) and the
// GEMM.
//   build/bench/mma_ablation_bench [--packed-only]   (device: $OCLTUNE_BENCH_DEVICE, default 0)
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/study_device.h"
#include "harness/capability.h"
#include "harness/device.h"
#include "harness/launch.h"
#include "harness/session.h"
#include "harness/timing.h"
#include "ops/gemm/gemm.h"

int main(int argc, char** argv) {
  using namespace ocltune;
  const bool packed_only = argc > 1 && std::string(argv[1]) == "--packed-only";  // skip the ablation studies
  const std::optional<DeviceInfo> found = study_device(nvidia_mma_tf32());
  if (!found) return 0;
  const DeviceInfo& device = *found;
  Session session(device);
  const GemmShape shape{.m = 4096, .n = 4096, .k = 4096, .math = MathMode::kTf32};
  const Config mma = {{"MMA", 1},     {"BM", 128},    {"BN", 128},     {"BK", 16},  {"WM", 2},
                      {"WN", 2},      {"STAGES", 0},  {"DBUF", 1},     {"LDSM", 0}, {"BVEC", 0},
                      {"GROUP_M", 1}, {"SWIZZLE", 0}, {"FRAG_DBUF", 0}};
  const Config wgmma = {{"WGMMA", 1}, {"BM", 64}, {"BN", 256}, {"BK", 16}, {"WGS", 1}};
  const std::size_t bytes = static_cast<std::size_t>(shape.m * shape.k) * sizeof(float);
  cl::Buffer a(session.context(), CL_MEM_READ_WRITE, bytes), b(session.context(), CL_MEM_READ_WRITE, bytes),
      c(session.context(), CL_MEM_READ_WRITE, bytes);
  for (cl::Buffer* buffer : {&a, &b, &c}) session.queue().enqueueFillBuffer(*buffer, 0.5f, 0, bytes);
  session.queue().finish();
  // mma.sync: 1 loads, 2 stores and barrier, 4 half the fragment reads. wgmma (Hopper only): 1 loads,
  // 2 stores, 4 the wgmma, 8 the barrier; 14 leaves the loads alone, 11 the wgmma alone.
  std::vector<std::pair<Config, std::vector<int>>> studies = {{mma, {0, 1, 2, 4, 3, 7}}};
  if (satisfies(device, nvidia_wgmma_tf32())) {
    studies.push_back({wgmma, {0, 1, 2, 4, 8, 3, 6, 10, 11, 13, 14, 15}});
    Config wide = wgmma;  // two warpgroups: one work-group per SM by registers
    wide["BM"] = 128;
    wide["WGS"] = 2;
    studies.push_back({wide, {0, 1, 2, 4, 11, 13}});
  }
  Workspace workspace(session.context());
  if (packed_only) studies.clear();
  for (const auto& [config, bits] : studies) {
    fmt::print("{}: TF32 GEMM 4096^3, {}\n", device.name, to_string(config));
    for (const int ablate : bits) {
      LaunchPlan plan = gemm_plan(shape, packed_operands(shape, a, b, c), config, workspace);
      plan.kernels.front().program.defines.emplace_back("ABLATE", std::to_string(ablate));
      const PreparedPlan prepared = prepare(session, plan);
      const TimingStats stats = time_plan(session.queue(), prepared, {.warmup = 2, .min_runs = 7, .max_runs = 15});
      fmt::print("  ABLATE={:<2}  {:8.1f} us  {:6.1f} TFLOP/s\n", ablate, stats.median_ns / 1000.0,
                 shape.flops() / stats.median_ns / 1000.0);
    }
  }
  // The kernels of the variants on packed operands, TF32 and fp16: packing passes and the GEMM.
  for (const DType dtype : {DType::kFp32, DType::kFp16}) {
    GemmShape s = shape;
    s.dtype = dtype;
    const double pack_bytes = 2.0 * static_cast<double>(s.m * s.k * static_cast<std::int64_t>(dtype_bytes(dtype)));
    std::vector<Config> packed = {gemm_mma_packed_default_config()};
    if (satisfies(device, nvidia_wgmma_tf32())) packed.insert(packed.begin(), gemm_wgmma_packed_default_config());
    for (const Config& config : packed) {
      fmt::print("{}: {} GEMM 4096^3, {}, kernel by kernel\n", device.name, dtype == DType::kFp32 ? "TF32" : "fp16",
                 to_string(config));
      const PreparedPlan whole = prepare(session, gemm_plan(s, packed_operands(s, a, b, c), config, workspace));
      const char* names[] = {"pack A", "pack B", "GEMM"};
      for (std::size_t i = 0; i < whole.steps.size() && i < 3; ++i) {
        const PreparedPlan one{{whole.steps[i]}, whole.buffers};
        const TimingStats stats = time_plan(session.queue(), one, {.warmup = 2, .min_runs = 7, .max_runs = 15});
        const double us = stats.median_ns / 1000.0;
        if (i < 2) {
          fmt::print("  {:<7} {:8.1f} us  {:6.0f} GB/s\n", names[i], us, pack_bytes / stats.median_ns);
        } else {
          fmt::print("  {:<7} {:8.1f} us  {:6.1f} TFLOP/s\n", names[i], us, s.flops() / stats.median_ns / 1000.0);
        }
      }
      const TimingStats stats = time_plan(session.queue(), whole, {.warmup = 2, .min_runs = 7, .max_runs = 15});
      fmt::print("  all     {:8.1f} us  {:6.1f} TFLOP/s\n", stats.median_ns / 1000.0,
                 s.flops() / stats.median_ns / 1000.0);
    }
  }
  return 0;
}
