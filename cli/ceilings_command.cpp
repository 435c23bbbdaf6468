// `ocltune ceilings`: what the device can do at most, measured by microbenchmarks (copy bandwidth,
// fp32 FMA rate, TF32 mma.sync rate where the device has tensor cores), to set results against.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/usage_error.h"
#include "harness/ceilings.h"
#include "harness/device.h"
#include "harness/device_errors.h"
#include "harness/session.h"

namespace ocltune {

int run_ceilings(const CliOptions& options) {
  DeviceInfo device;
  try {
    device = find_device(options.device);
  } catch (const DeviceIndexError& e) {
    throw UsageError(e.what());
  }
  Session session(device);
  const Ceiling copy = measure_copy_bandwidth(session);
  const Ceiling fma = measure_peak_gflops(session);
  const Ceiling mma = measure_mma_tf32_peak_gflops(session);  // value 0 without tensor cores
  const Ceiling fp16 = measure_mma_peak_gflops(session, MmaInputs::kFp16);
  const Ceiling bf16 = measure_mma_peak_gflops(session, MmaInputs::kBf16);
  const auto or_null = [](const Ceiling& c) { return c.value > 0 ? nlohmann::json(c.value) : nlohmann::json(nullptr); };
  if (options.json) {
    nlohmann::json j = {{"device", device.name},           {"device_key", device.key()},
                        {"copy_gbs", copy.value},          {"fp32_fma_gflops", fma.value},
                        {"tf32_mma_gflops", or_null(mma)}, {"fp16_mma_gflops", or_null(fp16)},
                        {"bf16_mma_gflops", or_null(bf16)}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("[{}] {}\n", device.index, device.name);
  fmt::print("    copy bandwidth       {:10.1f} GB/s      (clEnqueueCopyBuffer, read + write)\n", copy.value);
  fmt::print("    fp32 FMA peak        {:10.1f} GFLOP/s   (kernels/peak.cl)\n", fma.value);
  if (mma.value > 0) {
    fmt::print("    TF32 mma.sync peak   {:10.1f} GFLOP/s   (kernels/peak_mma.cl, m16n8k8)\n", mma.value);
    fmt::print("    fp16 mma.sync peak   {:10.1f} GFLOP/s   (kernels/peak_mma.cl, m16n8k16)\n", fp16.value);
    fmt::print("    bf16 mma.sync peak   {:10.1f} GFLOP/s   (kernels/peak_mma.cl, m16n8k16)\n", bf16.value);
  } else {
    fmt::print("    TF32 mma.sync peak   not available (needs NVIDIA, compute capability >= 8.0)\n");
  }
  return 0;
}

}  // namespace ocltune
