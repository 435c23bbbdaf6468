// Device discovery across all OpenCL platforms, device description and the stable device key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "harness/cl.h"

namespace ocltune {

// The OpenCL device type; "GPU", "CPU", "ACCELERATOR" or "OTHER" as text (databases, JSON, output).
enum class DeviceType { kGpu, kCpu, kAccelerator, kOther };
const char* device_type_name(DeviceType type);
DeviceType parse_device_type(const std::string& name);  // anything unknown is kOther

struct DeviceInfo {
  int index = -1;  // position across all platforms (platform order, then device order)
  std::string platform_name;
  std::string platform_version;
  std::string name;
  std::string vendor;
  std::string driver_version;
  std::string device_version;    // e.g. "OpenCL 3.0 CUDA"
  std::string opencl_c_version;  // e.g. "OpenCL C 1.2 PoCL"
  DeviceType type = DeviceType::kOther;
  std::string extensions;  // space-separated, as reported
  std::uint32_t compute_units = 0;
  std::uint32_t clock_mhz = 0;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t local_mem_bytes = 0;
  std::uint64_t max_alloc_bytes = 0;
  std::size_t max_work_group_size = 0;
  std::vector<std::size_t> max_work_item_sizes;
  bool local_mem_is_global = false;  // CL_GLOBAL local memory (CPUs): staging buys nothing
  int nv_compute_capability = 0;     // 90 for sm_90 through cl_nv_device_attribute_query, else 0
  // False for a device described by a database row (no extensions or compute capability stored):
  // offline checks then take the vendor's variants as possible; on the device itself all is known.
  bool capabilities_known = true;
  cl::Platform platform;
  cl::Device device;

  // Stable hash of platform name+version, device name, vendor, driver version and compute units.
  std::string key() const;
  // Coarse class for defaults shared by similar devices: "<vendor>/<type>", lower case.
  std::string device_class() const;
  bool has_extension(const std::string& name) const;
};

// Thrown when the ICD loader finds no OpenCL platform at all.
class NoPlatformError;

// Every device of every platform, indexed as --device counts them. Throws NoPlatformError when
// there is no platform, with an explanation of the ICD loader and /etc/OpenCL/vendors.
std::vector<DeviceInfo> discover_devices();

// The device with that index; throws DeviceIndexError (listing what exists) when out of range.
DeviceInfo find_device(int index);

nlohmann::json to_json(const DeviceInfo& d);

// One line per device, "  [0] PoCL / cpu-name (CPU)", for error messages.
std::string describe_devices(const std::vector<DeviceInfo>& devices);

}  // namespace ocltune
