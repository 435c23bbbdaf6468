// How the TF32 mma.sync rate depends on occupancy and on independent work per warp: the
// peak_mma.cl chains launched with 1-16 four-warp work-groups per compute unit and 2-32 chains per
// warp. A GEMM's warps hold one accumulator chain per fragment and few warps per SM (registers), so
// this says whether mma issue itself limits it there. Prints TFLOP/s per point (NVIDIA only).
//   build/bench/mma_peak_bench   (device: $OCLTUNE_BENCH_DEVICE, default 0)

#include <fmt/format.h>

#include "bench/study_device.h"
#include "harness/capability.h"
#include "harness/device.h"
#include "harness/launch.h"
#include "harness/session.h"
#include "harness/timing.h"

int main() {
  using namespace ocltune;
  const std::optional<DeviceInfo> found = study_device(nvidia_mma_tf32());
  if (!found) return 0;
  const DeviceInfo& device = *found;
  Session session(device);
  constexpr int kWarpsPerGroup = 4, kIterations = 2048;
  fmt::print(
      "{}: TF32 mma.sync m16n8k8 TFLOP/s (rows: work-groups of 4 warps per compute unit; "
      "columns: independent chains per warp)\n",
      device.name);
  fmt::print("{:>14}", "groups/CU");
  for (const int chains : {2, 4, 8, 16, 32}) fmt::print("{:>10}", chains);
  fmt::print("\n");
  for (const int per_cu : {1, 2, 4, 16}) {
    fmt::print("{:>14}", per_cu);
    for (const int chains : {2, 4, 8, 16, 32}) {
      const std::size_t groups = static_cast<std::size_t>(device.compute_units) * per_cu;
      const std::size_t items = groups * kWarpsPerGroup * 32;
      KernelLaunch launch;
      launch.program.files = {"storage.cl", "mma_packed.cl", "peak_mma.cl"};  // DTYPE 0: TF32 inputs
      launch.program.defines = {{"MMA_CHAINS", std::to_string(chains)}};
      launch.kernel = "mma_peak";
      cl::Buffer out(session.context(), CL_MEM_WRITE_ONLY, items * sizeof(float));
      launch.args = {out, cl_float(1.5f), cl_int(kIterations)};
      launch.global = cl::NDRange(items);
      launch.local = cl::NDRange(kWarpsPerGroup * 32);
      const PreparedPlan prepared = prepare(session, LaunchPlan{{launch}});
      const TimingStats stats = time_plan(session.queue(), prepared, {.warmup = 2, .min_runs = 5, .max_runs = 9});
      const double flops = static_cast<double>(items / 32) * kIterations * chains * 2048.0;
      fmt::print("{:>10.1f}", flops / stats.median_ns / 1000.0);
    }
    fmt::print("\n");
  }
  return 0;
}
