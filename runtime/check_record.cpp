#include "runtime/check_record.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/config.h"
#include "harness/append_line.h"
#include "harness/device.h"
#include "harness/hash.h"
#include "ops/problem.h"

namespace ocltune {
namespace {

constexpr std::string_view kKeyPrefix = "check1 ";  // a new meaning of the key gets a new prefix

bool well_formed(const std::string& line) {
  if (line.size() != kKeyPrefix.size() + 16 || line.compare(0, kKeyPrefix.size(), kKeyPrefix) != 0) return false;
  return std::all_of(line.begin() + static_cast<std::ptrdiff_t>(kKeyPrefix.size()), line.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string describe_arg(const KernelArg& arg) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, cl::Buffer>) {
          return "buffer";
        } else if constexpr (std::is_same_v<T, LocalMemory>) {
          return fmt::format("local {}", v.bytes);
        } else if constexpr (std::is_same_v<T, cl_float>) {
          return fmt::format("f {:a}", v);
        } else {
          return fmt::format("i {}", v);
        }
      },
      arg);
}

std::string describe_range(const cl::NDRange& range) {
  std::string out = "[";
  for (cl_uint d = 0; d < range.dimensions(); ++d) out += fmt::format("{} ", range.get()[d]);
  return out + "]";
}

}  // namespace

std::string check_key(const DeviceInfo& device, const Problem& problem, const Config& config, const LaunchPlan& plan) {
  std::string text =
      fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", device.key(), device.driver_version, problem.op(),
                  dtype_name(problem.dtype()), math_name(problem.math()), problem.shape_key(), to_string(config));
  for (const KernelLaunch& k : plan.kernels) {
    text += fmt::format("\x1e{}\x1f{}\x1f{}\x1f{}", k.program.key(), k.kernel, describe_range(k.global),
                        describe_range(k.local));
    for (const KernelArg& arg : k.args) text += "\x1f" + describe_arg(arg);
  }
  return std::string(kKeyPrefix) + hash_hex(text);
}

void CheckRecord::load() {
  if (loaded_) return;
  loaded_ = true;
  if (path_.empty()) return;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    if (well_formed(line)) keys_.insert(line);
  }
}

bool CheckRecord::contains(const std::string& key) {
  std::lock_guard lock(mutex_);
  load();
  return keys_.count(key) != 0;
}

void CheckRecord::add(const std::string& key) {
  std::lock_guard lock(mutex_);
  load();
  if (!keys_.insert(key).second || path_.empty()) return;
  append_line(path_, key);
}

}  // namespace ocltune
