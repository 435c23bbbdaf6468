// The run's context in the JSON output: device, driver, tool versions and measured ceilings.
#include "bench/run_context.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "db/database.h"

namespace ocltune::bench {

void add_run_context(const DeviceInfo& d, const Ceiling& copy, const Ceiling& peak, const MmaCeilings& mma,
                     const RunInfo& info) {
  const auto add = [](const char* key, const std::string& value) { benchmark::AddCustomContext(key, value); };
  add("ocltune_version", OCLTUNE_VERSION);
  add("ocltune_clblast_version", OCLTUNE_CLBLAST_VERSION);
  add("ocltune_started_at", utc_now());
  add("ocltune_device_index", std::to_string(d.index));
  add("ocltune_device_key", d.key());
  add("ocltune_device_name", d.name);
  add("ocltune_device_vendor", d.vendor);
  add("ocltune_device_type", device_type_name(d.type));
  add("ocltune_platform_name", d.platform_name);
  add("ocltune_platform_version", d.platform_version);
  add("ocltune_driver_version", d.driver_version);
  add("ocltune_device_version", d.device_version);
  add("ocltune_compute_units", std::to_string(d.compute_units));
  add("ocltune_clock_mhz", std::to_string(d.clock_mhz));
  add("ocltune_global_mem_bytes", std::to_string(d.global_mem_bytes));
  add("ocltune_copy_gbs", fmt::format("{:.6g}", copy.value));
  add("ocltune_copy_spread", fmt::format("{:.4f}", copy.stats.spread));
  add("ocltune_peak_gflops", fmt::format("{:.6g}", peak.value));
  add("ocltune_peak_spread", fmt::format("{:.4f}", peak.stats.spread));
  for (const auto& [inputs, ceiling] :
       {std::pair{"tf32", &mma.tf32}, std::pair{"fp16", &mma.fp16}, std::pair{"bf16", &mma.bf16}}) {
    if (ceiling->value <= 0) continue;
    add(fmt::format("ocltune_{}_peak_gflops", inputs).c_str(), fmt::format("{:.6g}", ceiling->value));
    add(fmt::format("ocltune_{}_peak_spread", inputs).c_str(), fmt::format("{:.4f}", ceiling->stats.spread));
  }
  add("ocltune_shapes", info.shapes);
  add("ocltune_database", info.database);
}

}  // namespace ocltune::bench
