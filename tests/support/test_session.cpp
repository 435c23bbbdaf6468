// Helpers shared by the suites.
#include "tests/support/test_session.h"

#include <unistd.h>

#include <filesystem>

namespace ocltune::testing {

DeviceInfo described_h200() {
  DeviceInfo d;
  d.platform_name = "NVIDIA CUDA";
  d.name = "NVIDIA H200";
  d.vendor = "NVIDIA Corporation";
  d.type = DeviceType::kGpu;
  d.compute_units = 132;
  d.local_mem_bytes = 48 * 1024;
  d.global_mem_bytes = std::uint64_t{140} << 30;
  d.max_alloc_bytes = std::uint64_t{35} << 30;
  d.max_work_group_size = 1024;
  d.max_work_item_sizes = {1024, 1024, 64};
  d.nv_compute_capability = 90;
  return d;
}

std::string temp_path(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ocltune-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  fs::remove(p);
  fs::remove(p.string() + "-wal");
  fs::remove(p.string() + "-shm");
  return p.string();
}

}  // namespace ocltune::testing
