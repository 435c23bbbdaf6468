// Names of the evaluation vocabulary as the database stores them (core/status.h).
#include "core/status.h"

#include <array>
#include <utility>

namespace ocltune {
namespace {

constexpr std::array<std::pair<Status, const char*>, 8> kStatusNames = {{
    {Status::kOk, "ok"},
    {Status::kCompileError, "compile_error"},
    {Status::kLaunchError, "launch_error"},
    {Status::kWrongResult, "wrong_result"},
    {Status::kTimeout, "timeout"},
    {Status::kCrash, "crash"},
    {Status::kSkipped, "skipped"},
    {Status::kCut, "cut"},
}};

constexpr std::array<std::pair<Role, const char*>, 3> kRoleNames = {{
    {Role::kDefault, "default"},
    {Role::kSearch, "search"},
    {Role::kFinal, "final"},
}};

}  // namespace

const char* status_name(Status status) {
  for (const auto& [s, name] : kStatusNames) {
    if (s == status) return name;
  }
  return "unknown";
}

std::optional<Status> parse_status(const std::string& name) {
  for (const auto& [s, n] : kStatusNames) {
    if (name == n) return s;
  }
  return std::nullopt;
}

const char* role_name(Role role) {
  for (const auto& [r, name] : kRoleNames) {
    if (r == role) return name;
  }
  return "unknown";
}

std::optional<Role> parse_role(const std::string& name) {
  for (const auto& [r, n] : kRoleNames) {
    if (name == n) return r;
  }
  return std::nullopt;
}

}  // namespace ocltune
