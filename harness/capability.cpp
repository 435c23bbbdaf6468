// What a kernel variant needs from a device.
#include "harness/capability.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace ocltune {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string Capability::describe() const {
  std::string out = vendor.empty() ? "any vendor" : vendor;
  if (device_type) out += std::string(", ") + device_type_name(*device_type);
  if (!extension.empty()) out += ", " + extension;
  if (min_nv_compute_capability > 0) {
    out += fmt::format(", compute capability >= {}.{}", min_nv_compute_capability / 10, min_nv_compute_capability % 10);
  }
  if (max_nv_compute_capability > 0) {
    out += fmt::format(", compute capability <= {}.{}", max_nv_compute_capability / 10, max_nv_compute_capability % 10);
  }
  return out;
}

bool satisfies(const DeviceInfo& device, const Capability& needs) {
  if (!needs.vendor.empty() && lower(device.vendor).find(lower(needs.vendor)) == std::string::npos) return false;
  // A database row stores the device type, so this holds offline as well as on the device.
  if (needs.device_type && device.type != *needs.device_type) return false;
  if (!device.capabilities_known) return true;
  if (!needs.extension.empty() && !device.has_extension(needs.extension)) return false;
  if (needs.min_nv_compute_capability > 0 && device.nv_compute_capability < needs.min_nv_compute_capability)
    return false;
  if (needs.max_nv_compute_capability > 0 && device.nv_compute_capability / 10 > needs.max_nv_compute_capability / 10) {
    return false;  // a different architecture generation (9.x counts as 9.0's)
  }
  return true;
}

}  // namespace ocltune
