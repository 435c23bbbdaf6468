// The CPU fallback of ops without an ocl kernel: counted per op, warned once, refused in strict mode.
#include "ocltune_torch/csrc/device/fallback.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

namespace ocltune_torch {
namespace {

struct Stats {
  std::mutex mutex;
  std::map<std::string, std::int64_t> calls;
  std::set<std::string> warned;  // not cleared by a reset: the warning is once per op and process
};

Stats& stats() {
  static Stats* s = new Stats();
  return *s;
}

bool strict_mode() {
  const char* v = std::getenv("OCLTUNE_TORCH_STRICT");
  return v && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

std::string name_of(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

}  // namespace

void note_fallback(const std::string& name) {
  TORCH_CHECK(!strict_mode(), "ocltune_torch: ", name,
              " has no ocl kernel for these arguments, and OCLTUNE_TORCH_STRICT=1 forbids running it on the CPU");
  bool first = false;
  {
    Stats& s = stats();
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.calls[name];
    first = s.warned.insert(name).second;
  }
  if (first) {
    TORCH_WARN("ocltune_torch: ", name,
               " runs on the CPU (no ocl kernel for these arguments); its tensors are copied to the host and back. "
               "ocltune_torch.fallback_stats() counts these calls, OCLTUNE_TORCH_STRICT=1 makes them errors.");
  }
}

void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  note_fallback(name_of(op));
  at::native::cpu_fallback(op, stack);
}

std::map<std::string, std::int64_t> fallback_stats() {
  Stats& s = stats();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.calls;
}

void reset_fallback_stats() {
  Stats& s = stats();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.calls.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_cpu_fallback>()); }

}  // namespace ocltune_torch
