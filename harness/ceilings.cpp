// Device ceilings measured by microbenchmarks: copy bandwidth and peak fp32 FMA rate.
#include "harness/ceilings.h"

#include <algorithm>

#include "harness/capability.h"
#include "harness/error.h"
#include "harness/session.h"

namespace ocltune {

Ceiling measure_copy_bandwidth(Session& session) {
  const DeviceInfo& d = session.device();
  const std::size_t target = d.type == DeviceType::kGpu ? (std::size_t{1} << 30) : (std::size_t{256} << 20);
  const std::size_t bytes =
      std::min<std::size_t>(target, std::min<std::uint64_t>(d.max_alloc_bytes, d.global_mem_bytes / 4));
  try {
    cl::Buffer src(session.context(), CL_MEM_READ_WRITE, bytes);
    cl::Buffer dst(session.context(), CL_MEM_READ_WRITE, bytes);
    cl::CommandQueue& q = session.queue();
    q.enqueueFillBuffer(src, 1.0f, 0, bytes);
    q.enqueueFillBuffer(dst, 0.0f, 0, bytes);
    std::vector<double> samples;
    for (int i = 0; i < 12; ++i) {
      cl::Event e;
      q.enqueueCopyBuffer(src, dst, 0, 0, bytes, nullptr, &e);
      q.finish();
      if (i >= 2) samples.push_back(event_span_ns({e}));  // first two are warm-up
    }
    Ceiling c;
    c.stats = summarize(samples);
    c.value = 2.0 * static_cast<double>(bytes) / c.stats.median_ns;
    return c;
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

Ceiling measure_peak_gflops(Session& session) {
  const DeviceInfo& d = session.device();
  constexpr int kChains = 8;
  const bool gpu = d.type == DeviceType::kGpu;
  const std::size_t items = static_cast<std::size_t>(std::max<std::uint32_t>(1, d.compute_units)) * (gpu ? 4096 : 256);
  const int iterations = gpu ? 4096 : 1024;
  // The best over vector widths: a GPU is indifferent, a CPU needs its SIMD width (8 or 16).
  Ceiling best;
  for (int vw : {4, 8, 16}) {
    KernelLaunch launch;
    launch.program.files = {"peak.cl"};
    launch.program.defines = {{"CHAINS", std::to_string(kChains)}, {"VW", std::to_string(vw)}};
    launch.kernel = "fma_peak";
    try {
      cl::Buffer out(session.context(), CL_MEM_WRITE_ONLY, items * sizeof(float));
      launch.args = {out, cl_float(0.999f), cl_float(0.001f), cl_int(iterations)};
      launch.global = cl::NDRange(items);
      launch.local = cl::NullRange;
      const PreparedPlan prepared = prepare(session, LaunchPlan{{launch}});
      Ceiling c;
      c.stats = time_plan(session.queue(), prepared, {.warmup = 2, .min_runs = 7, .max_runs = 15});
      const double flops = static_cast<double>(items) * iterations * kChains * vw * 2;
      c.value = flops / c.stats.median_ns;
      if (c.value > best.value) best = c;
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
  }
  return best;
}

Ceiling measure_mma_peak_gflops(Session& session, MmaInputs inputs) {
  const DeviceInfo& d = session.device();
  if (!satisfies(d, nvidia_mma_tf32())) return {};
  constexpr int kChains = 8, kWarpsPerGroup = 4, kIterations = 4096;
  // Enough warps to fill every SM several times over.
  const std::size_t groups = static_cast<std::size_t>(std::max<std::uint32_t>(1, d.compute_units)) * 16;
  const std::size_t items = groups * kWarpsPerGroup * 32;
  KernelLaunch launch;
  launch.program.files = {"storage.cl", "mma_packed.cl", "peak_mma.cl"};
  launch.program.defines = {{"MMA_CHAINS", std::to_string(kChains)},
                            {"DTYPE", std::to_string(static_cast<int>(inputs))}};
  launch.kernel = "mma_peak";
  try {
    cl::Buffer out(session.context(), CL_MEM_WRITE_ONLY, items * sizeof(float));
    launch.args = {out, cl_float(1.5f), cl_int(kIterations)};
    launch.global = cl::NDRange(items);
    launch.local = cl::NDRange(kWarpsPerGroup * 32);
    const PreparedPlan prepared = prepare(session, LaunchPlan{{launch}});
    Ceiling c;
    c.stats = time_plan(session.queue(), prepared, {.warmup = 2, .min_runs = 7, .max_runs = 15});
    const double warps = static_cast<double>(items / 32);
    const double flops_per_mma = 2.0 * 16 * 8 * (inputs == MmaInputs::kTf32 ? 8 : 16);
    c.value = warps * kIterations * kChains * flops_per_mma / c.stats.median_ns;
    return c;
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

}  // namespace ocltune
