// The ocltune:: custom ops behind ocltune_torch's Python helpers (torch.ops.ocltune.device_count(), ...).
//
// The library has no Python C-API code, so it loads into any Python that has the torch it was built
// against; Python reaches these helpers through the dispatcher.
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/allocator.h"
#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/generator.h"

namespace ocltune_torch {
namespace {

int checked(std::int64_t device) {
  check_device_index(static_cast<int>(device));
  return static_cast<int>(device);
}

OclGenerator* generator_of(std::int64_t device) {
  return at::check_generator<OclGenerator>(default_generator(checked(device)));
}

std::int64_t op_device_count() { return device_count(); }
std::int64_t op_current_device() { return current_device(); }
void op_set_device(std::int64_t device) { set_current_device(checked(device)); }
void op_synchronize(std::int64_t device) { synchronize_device(checked(device)); }
std::string op_device_name(std::int64_t device) { return device_name(checked(device)); }

// allocated, max allocated, reserved, max reserved, segments (bytes, and a count).
std::vector<std::int64_t> op_memory_stats(std::int64_t device) {
  const MemoryStats s = memory_stats(checked(device));
  return {s.allocated, s.max_allocated, s.reserved, s.max_reserved, s.segments, s.device_allocs, s.device_frees};
}
void op_reset_peak_memory_stats(std::int64_t device) { reset_peak_memory_stats(checked(device)); }
void op_empty_cache(std::int64_t device) { empty_cache(checked(device)); }

// Seeds are uint64 passed as int64 (Python folds them into that range).
void op_manual_seed(std::int64_t device, std::int64_t seed) {
  OclGenerator* g = generator_of(device);
  std::lock_guard<std::mutex> lock(g->mutex_);
  g->set_current_seed(static_cast<std::uint64_t>(seed));
}
std::int64_t op_seed(std::int64_t device) {
  OclGenerator* g = generator_of(device);
  std::lock_guard<std::mutex> lock(g->mutex_);
  return static_cast<std::int64_t>(g->seed());
}
std::int64_t op_initial_seed(std::int64_t device) {
  OclGenerator* g = generator_of(device);
  std::lock_guard<std::mutex> lock(g->mutex_);
  return static_cast<std::int64_t>(g->current_seed());
}
at::Tensor op_get_rng_state(std::int64_t device) {
  OclGenerator* g = generator_of(device);
  std::lock_guard<std::mutex> lock(g->mutex_);
  return at::Tensor(g->get_state());
}
void op_set_rng_state(std::int64_t device, const at::Tensor& state) {
  OclGenerator* g = generator_of(device);
  std::lock_guard<std::mutex> lock(g->mutex_);
  g->set_state(*state.unsafeGetTensorImpl());
}

std::tuple<std::vector<std::string>, std::vector<std::int64_t>> op_fallback_stats() {
  std::tuple<std::vector<std::string>, std::vector<std::int64_t>> out;
  for (const auto& [name, count] : fallback_stats()) {
    std::get<0>(out).push_back(name);
    std::get<1>(out).push_back(count);
  }
  return out;
}
void op_reset_fallback_stats() { reset_fallback_stats(); }

}  // namespace

TORCH_LIBRARY(ocltune, m) {
  m.def("device_count() -> int", &op_device_count);
  m.def("current_device() -> int", &op_current_device);
  m.def("set_device(int device) -> ()", &op_set_device);
  m.def("synchronize(int device) -> ()", &op_synchronize);
  m.def("device_name(int device) -> str", &op_device_name);
  m.def("memory_stats(int device) -> int[]", &op_memory_stats);
  m.def("reset_peak_memory_stats(int device) -> ()", &op_reset_peak_memory_stats);
  m.def("empty_cache(int device) -> ()", &op_empty_cache);
  m.def("manual_seed(int device, int seed) -> ()", &op_manual_seed);
  m.def("seed(int device) -> int", &op_seed);
  m.def("initial_seed(int device) -> int", &op_initial_seed);
  m.def("get_rng_state(int device) -> Tensor", &op_get_rng_state);
  m.def("set_rng_state(int device, Tensor state) -> ()", &op_set_rng_state);
  m.def("fallback_stats() -> (str[], int[])", &op_fallback_stats);
  m.def("reset_fallback_stats() -> ()", &op_reset_fallback_stats);
}

}  // namespace ocltune_torch
