// The ocltune:: custom ops of the tune-what-you-run loop: which devices have a runtime, what each
// dispatched (per level and family, as the runtime's JSON; the plain kernels' launches beside), the
// shapes file of all of them, reload.
//
// Only devices whose runtime exists are visited: asking a device that was never used would create
// its runtime (a context, the databases read) just to report that it did nothing.
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

std::vector<int> used_devices() {
  std::vector<int> out;
  for (int i = 0; i < device_count(); ++i) {
    if (device_runtime_created(i)) out.push_back(i);
  }
  return out;
}

std::vector<std::int64_t> op_used_devices() {
  const std::vector<int> used = used_devices();
  return {used.begin(), used.end()};
}

std::string op_dispatch_stats_json(std::int64_t device) {
  check_device_index(static_cast<int>(device));
  TORCH_CHECK(device_runtime_created(static_cast<int>(device)), "ocltune_torch: ocl:", device,
              " has not been used (it has no runtime yet)");
  return call_ocltune("dispatch_stats", [&] { return device_runtime(static_cast<int>(device)).dispatch_stats_json(); });
}

void op_reset_dispatch_stats() {
  for (const int i : used_devices())
    call_ocltune("reset_dispatch_stats", [&] { device_runtime(i).reset_dispatch_stats(); });
  reset_plain_launches();
}

std::int64_t op_plain_launches() { return plain_launches(); }

// [programs, seconds] of the plain programs built since the start (ocltune_torch.startup_stats()).
std::vector<double> op_plain_builds() {
  const PlainBuilds b = plain_builds();
  return {static_cast<double>(b.programs), b.seconds};
}

// Every used device's runtime reads its databases again (the user layer from $OCLTUNE_DB as it is now).
void op_reload() {
  for (const int i : used_devices()) call_ocltune("reload", [&] { device_runtime(i).reload(); });
}

std::int64_t op_write_shapes_file(const std::string& path) {
  std::vector<ocltune_runtime> runtimes;
  for (const int i : used_devices()) runtimes.push_back(device_runtime(i).handle());
  return static_cast<std::int64_t>(
      call_ocltune("write_shapes_file", [&] { return ocltune::api::write_shapes_file(path, runtimes); }));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocltune, m) {
  m.def("used_devices() -> int[]", &op_used_devices);
  m.def("dispatch_stats_json(int device) -> str", &op_dispatch_stats_json);
  m.def("reset_dispatch_stats() -> ()", &op_reset_dispatch_stats);
  m.def("plain_launches() -> int", &op_plain_launches);
  m.def("plain_builds() -> float[]", &op_plain_builds);
  m.def("reload() -> ()", &op_reload);
  m.def("write_shapes_file(str path) -> int", &op_write_shapes_file);
}

}  // namespace ocltune_torch
