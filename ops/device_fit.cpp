// Whether a problem's buffers can exist on a device at all.
#include "ops/device_fit.h"

#include <fmt/format.h>

#include "harness/device.h"

namespace ocltune {
namespace {

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

std::string device_fit_problem(const Problem& problem, const DeviceInfo& device) {
  const double max_alloc = static_cast<double>(device.max_alloc_bytes);
  const double global = static_cast<double>(device.global_mem_bytes);
  double total = 0;
  for (const Problem::DeviceBuffer& b : problem.device_buffers()) {
    total += b.bytes;
    if (max_alloc > 0 && b.bytes > max_alloc) {
      return fmt::format(
          "its {} buffer needs {}, more than the largest allocation {} allows ({}, "
          "CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
          b.name, gib(b.bytes), device.name, gib(max_alloc));
    }
  }
  if (global > 0 && total > global) {
    return fmt::format("its buffers need {} together, more than the global memory of {} ({})", gib(total), device.name,
                       gib(global));
  }
  return "";
}

}  // namespace ocltune
