// `ocltune devices`: every OpenCL device with the index --device takes.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "harness/device.h"

namespace ocltune {

int run_devices(const CliOptions& options) {
  const std::vector<DeviceInfo> devices = discover_devices();
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const DeviceInfo& d : devices) list.push_back(to_json(d));
    fmt::print("{}\n", list.dump(2));
    return 0;
  }
  for (const DeviceInfo& d : devices) {
    fmt::print("[{}] {}\n", d.index, d.name);
    fmt::print("    platform        {} ({})\n", d.platform_name, d.platform_version);
    fmt::print("    type            {}\n", device_type_name(d.type));
    fmt::print("    vendor          {}\n", d.vendor);
    fmt::print("    driver          {}\n", d.driver_version);
    fmt::print("    compute units   {}\n", d.compute_units);
    fmt::print("    clock           {} MHz\n", d.clock_mhz);
    fmt::print("    global memory   {:.1f} GiB\n", static_cast<double>(d.global_mem_bytes) / (1 << 30));
    fmt::print("    local memory    {} KiB\n", d.local_mem_bytes / 1024);
    fmt::print("    max work-group  {}\n", d.max_work_group_size);
    fmt::print("    device key      {}\n", d.key());
  }
  return 0;
}

}  // namespace ocltune
