// Device discovery across all OpenCL platforms, device description and the stable device key.
#include "harness/device.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/device_errors.h"
#include "harness/error.h"
#include "harness/hash.h"

namespace ocltune {
namespace {

constexpr cl_device_info kComputeCapabilityMajorNv = 0x4000;  // cl_nv_device_attribute_query
constexpr cl_device_info kComputeCapabilityMinorNv = 0x4001;

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c) && c != '\0'; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

DeviceType type_of(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return DeviceType::kGpu;
  if (type & CL_DEVICE_TYPE_CPU) return DeviceType::kCpu;
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return DeviceType::kAccelerator;
  return DeviceType::kOther;
}

cl_uint nv_attribute(const cl::Device& device, cl_device_info what) {
  cl_uint value = 0;
  if (clGetDeviceInfo(device(), what, sizeof(value), &value, nullptr) != CL_SUCCESS) return 0;
  return value;
}

DeviceInfo describe(const cl::Platform& platform, const cl::Device& device, int index) {
  DeviceInfo d;
  d.index = index;
  d.platform = platform;
  d.device = device;
  d.platform_name = trim(platform.getInfo<CL_PLATFORM_NAME>());
  d.platform_version = trim(platform.getInfo<CL_PLATFORM_VERSION>());
  d.name = trim(device.getInfo<CL_DEVICE_NAME>());
  d.vendor = trim(device.getInfo<CL_DEVICE_VENDOR>());
  d.driver_version = trim(device.getInfo<CL_DRIVER_VERSION>());
  d.device_version = trim(device.getInfo<CL_DEVICE_VERSION>());
  d.opencl_c_version = trim(device.getInfo<CL_DEVICE_OPENCL_C_VERSION>());
  d.type = type_of(device.getInfo<CL_DEVICE_TYPE>());
  d.extensions = trim(device.getInfo<CL_DEVICE_EXTENSIONS>());
  d.compute_units = device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  d.clock_mhz = device.getInfo<CL_DEVICE_MAX_CLOCK_FREQUENCY>();
  d.global_mem_bytes = device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  d.local_mem_bytes = device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  d.max_alloc_bytes = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  d.max_work_group_size = device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  d.max_work_item_sizes = device.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
  d.local_mem_is_global = device.getInfo<CL_DEVICE_LOCAL_MEM_TYPE>() == CL_GLOBAL;
  if (d.has_extension("cl_nv_device_attribute_query")) {
    d.nv_compute_capability = static_cast<int>(nv_attribute(device, kComputeCapabilityMajorNv) * 10 +
                                               nv_attribute(device, kComputeCapabilityMinorNv));
  }
  return d;
}

}  // namespace

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::kGpu: return "GPU";
    case DeviceType::kCpu: return "CPU";
    case DeviceType::kAccelerator: return "ACCELERATOR";
    case DeviceType::kOther: return "OTHER";
  }
  return "OTHER";
}

DeviceType parse_device_type(const std::string& name) {
  if (name == "GPU") return DeviceType::kGpu;
  if (name == "CPU") return DeviceType::kCpu;
  if (name == "ACCELERATOR") return DeviceType::kAccelerator;
  return DeviceType::kOther;
}

std::string DeviceInfo::key() const {
  // Field separator 0x1f cannot occur in the reported strings, so fields cannot run together.
  const std::string identity = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", platform_name, platform_version, name,
                                           vendor, driver_version, compute_units);
  return hash_hex(identity);
}

std::string DeviceInfo::device_class() const {
  std::string v = vendor;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string t = device_type_name(type);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  return v + "/" + t;
}

bool DeviceInfo::has_extension(const std::string& ext) const {
  std::size_t pos = 0;
  while ((pos = extensions.find(ext, pos)) != std::string::npos) {
    const bool starts = pos == 0 || extensions[pos - 1] == ' ';
    const std::size_t end = pos + ext.size();
    const bool ends = end == extensions.size() || extensions[end] == ' ';
    if (starts && ends) return true;
    pos = end;
  }
  return false;
}

std::vector<DeviceInfo> discover_devices() {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    if (e.err() != CL_PLATFORM_NOT_FOUND_KHR) throw ClError(e);
  }
  if (platforms.empty()) throw NoPlatformError();
  std::vector<DeviceInfo> devices;
  for (const cl::Platform& platform : platforms) {
    std::vector<cl::Device> platform_devices;
    try {
      platform.getDevices(CL_DEVICE_TYPE_ALL, &platform_devices);
    } catch (const cl::Error& e) {
      if (e.err() == CL_DEVICE_NOT_FOUND) continue;  // a platform with no device is not an error
      throw ClError(e);
    }
    for (const cl::Device& device : platform_devices) {
      devices.push_back(describe(platform, device, static_cast<int>(devices.size())));
    }
  }
  return devices;
}

DeviceInfo find_device(int index) {
  std::vector<DeviceInfo> devices = discover_devices();
  if (index < 0 || index >= static_cast<int>(devices.size())) throw DeviceIndexError(index, devices);
  return devices[static_cast<std::size_t>(index)];
}

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"key", d.key()},
          {"platform", d.platform_name},
          {"platform_version", d.platform_version},
          {"name", d.name},
          {"type", device_type_name(d.type)},
          {"vendor", d.vendor},
          {"driver_version", d.driver_version},
          {"device_version", d.device_version},
          {"opencl_c_version", d.opencl_c_version},
          {"compute_units", d.compute_units},
          {"clock_mhz", d.clock_mhz},
          {"global_mem_bytes", d.global_mem_bytes},
          {"local_mem_bytes", d.local_mem_bytes},
          {"max_alloc_bytes", d.max_alloc_bytes},
          {"max_work_group_size", d.max_work_group_size},
          {"nv_compute_capability", d.nv_compute_capability}};
}

std::string describe_devices(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const DeviceInfo& d : devices) {
    out += fmt::format("  [{}] {} / {} ({})\n", d.index, d.platform_name, d.name, device_type_name(d.type));
  }
  return out;
}

}  // namespace ocltune
